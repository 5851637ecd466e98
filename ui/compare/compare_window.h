#pragma once
// Compare mode (50-gui.md): 2–4 policies on the same seeded workload, side by
// side. One SimController per policy (same scenario and seed, so the same
// arrivals); small multiples of the cluster view, overlaid charts with one
// colour per policy, and a summary table with deltas in % against the first
// (reference) policy.
//
// The runs advance in lockstep: the window sends every controller runTo(t)
// and starts the next round only when all have stopped, so the table always
// compares the policies at the same simulated time. Paced speeds set t from
// the wall clock; "max" grows the round so each takes ~0.1 s of wall time.
#include <QDialog>
#include <QElapsedTimer>
#include <QMainWindow>
#include <QRect>
#include <QStringList>

#include <memory>
#include <vector>

#include "ui/compare/compare_model.h"
#include "scenario/spec.h"

class QAction;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QTableWidget;
class QTimer;

namespace sl::ui {

class ClusterView;
class LiveChart;
class SimController;

/// Pick 2–4 policies; the first is the reference.
/// Where a metric cell of the summary table draws its value and its delta:
/// side by side when both fit with a gap, else stacked (value above, delta
/// below, in a row two lines high). Never overlapping.
struct CompareCellLayout {
  QRect cell, value, delta;  // delta empty for the reference row and fixed columns
  bool stacked = false;
};

class ComparePolicyDialog : public QDialog {
  Q_OBJECT
public:
  explicit ComparePolicyDialog(const QStringList& initial, QWidget* parent = nullptr);
  QStringList policies() const;
  /// Modal pick; false when cancelled.
  static bool pick(QWidget* parent, const QStringList& initial, QStringList& out);

private:
  void validate();
  std::vector<QComboBox*> combos_;
  std::vector<QLabel*> descriptions_;
  QLabel* error_ = nullptr;
  QPushButton* ok_ = nullptr;
};

class CompareWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit CompareWindow(QWidget* parent = nullptr);
  ~CompareWindow() override;

  /// One run per policy on `base` (see scenarioForPolicy), paused at t = 0.
  /// False + a message naming the policy when a list or a run is invalid.
  bool load(const Scenario& base, const QStringList& policies, const QString& name, QString* error = nullptr);

  int runCount() const { return static_cast<int>(runs_.size()); }
  QStringList policies() const;
  SimController* controller(int i) const;
  ClusterView* clusterView(int i) const;
  LiveChart* chart(const QString& id) const;
  QTableWidget* table() const { return table_; }
  /// How table cell (row, col) is drawn at the table's current size.
  CompareCellLayout cellLayout(int row, int col) const;

  void play();
  void pause();
  void togglePlay();
  /// Advance every run by one simulated second.
  void step();
  /// Every run back to t = 0 (same scenario and seed).
  void reset();
  /// Simulated seconds per wall second; <= 0 = as fast as possible.
  void setSpeed(double speed);
  /// Run every run unpaced to simulated time `t` (or its end), then stop.
  void runTo(double t);
  bool isPlaying() const { return playing_; }
  /// The toolbar's clock: the time all runs have reached (the table's "Sim
  /// time" of the runs still going), or the last end once all have ended.
  double shownClock() const;
  QString clockText() const;
  /// Block (running the event loop) until no run is busy, up to `timeoutMs`.
  bool waitIdle(int timeoutMs);
  /// Pull every run's latest frame and data now and redraw (tests, screenshots).
  void pullNow();

  /// Lecture mode, as the main window's (issue 50): text 1.3× larger, the
  /// charts given more of the height than the cluster tiles.
  void setLecture(bool on);
  bool lecture() const { return lecture_; }

  /// The table's rows (as of the last pull), reference first.
  std::vector<CompareRow> rows() const;
  bool exportCsv(const QString& path, QString* error = nullptr);
  /// Export ▸ table: exportCsv, then a confirmation naming the file in the
  /// status bar (notice()).
  bool exportTable(const QString& path, QString* error = nullptr);
  QString notice() const;
  /// The hint under the table ("" when none is shown).
  QString hint() const;

protected:
  void closeEvent(QCloseEvent* e) override;

private:
  struct Run;
  void buildUi();
  void clearRuns();
  void schedulePull();
  void pull(bool force);
  void drive();
  void issueRound(double target);
  bool anyBusy() const;
  bool allDone() const;
  void refreshCharts();
  static constexpr int kFixedCols = 3;  // policy, simulated time, finished
  void installTableDelegate();  // values with their deltas (compare_table.cpp)
  void refreshTable();
  /// Rows one line high, or two when some value and delta need stacking.
  void fitTableRows();
  void updateActions();
  double commonClock() const;

  std::vector<std::unique_ptr<Run>> runs_;
  Scenario base_;
  QString name_;
  QWidget* tilesHost_ = nullptr;
  std::vector<LiveChart*> charts_;
  QTableWidget* table_ = nullptr;
  QAction *play_ = nullptr, *step_ = nullptr, *reset_ = nullptr, *export_ = nullptr;
  QSlider* speedSlider_ = nullptr;
  QLabel* speedLabel_ = nullptr;
  QLabel* timeLabel_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* hint_ = nullptr;         // when the comparison cannot tell the policies apart
  QLabel* notice_ = nullptr;       // "Table written to …", cleared after a while
  QTimer* noticeTimer_ = nullptr;
  QTimer* pullTimer_ = nullptr;
  QTimer* driveTimer_ = nullptr;
  QElapsedTimer sincePull_, sinceRefresh_, anchorWall_, roundWall_;
  bool playing_ = false;
  bool lecture_ = false;
  double basePointSize_ = 0;  // the font's size outside lecture mode
  bool closing_ = false;
  double speed_ = 1.0;
  double target_ = 0;     // simulated time of the current lockstep round
  double anchorSim_ = 0;  // paced: simulated time at anchorWall_
  double chunk_ = 0.5;    // max speed: simulated seconds per round
  bool chartsDirty_ = false, tableDirty_ = false;
};

}  // namespace sl::ui
