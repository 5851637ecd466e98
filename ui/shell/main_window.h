#pragma once
// The ServeLab main window: run controls, scenario dock, cluster view and
// charts around one SimController (50-gui.md "Layout").
#include <QMainWindow>

#include <QElapsedTimer>
#include <memory>
#include <vector>

#include "run/execute.h"
#include "run/live_run.h"
#include "scenario/spec.h"
#include "ui/common/pool_cost.h"

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QProgressBar;
class QSlider;
class QSpinBox;
class QTimer;
class QToolBar;
class QDockWidget;

namespace sl::ui {

class ChartPanel;
struct ChartExportOptions;
class ClusterView;
class CompareWindow;
class InspectorPanel;
class TourPanel;
struct TourStep;
class ScenarioPanel;
class SimController;
struct LiveFrame;
enum class RunMode;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Open a scenario file; false + message (also shown in the window) on error.
  bool openScenario(const QString& path, QString* error = nullptr);
  bool loadScenario(const Scenario& s, const QString& name, QString* error = nullptr,
                    const ChangeLog& replay = {});
  bool saveScenario(const QString& path, QString* error = nullptr);
  /// File ▸ Save run as…: the running scenario (seed included) with the
  /// run's live change log and where the run stands (events, fingerprint),
  /// as a saved run (core/run/saved_run.h) that `servelab-cli run` replays.
  /// False + message when nothing is loaded or the file cannot be written.
  bool saveRun(const QString& path, QString* error = nullptr);
  /// The status bar's message as shown (tests).
  QString statusText() const;
  /// Pull the latest frame and samples now and repaint (tests, screenshots).
  void pullNow();
  /// Export every chart to <dir>/<id>.{png,svg,csv} laid out at `size`
  /// (PNG × `scale`); returns the files written.
  int exportCharts(const QString& dir, QSize size = QSize(960, 600), qreal scale = 2.0);
  int exportCharts(const QString& dir, const ChartExportOptions& options);
  /// Open a scenario from the menus: a file that cannot be opened is
  /// reported in a message box with the whole message.
  bool openScenarioInteractive(const QString& path);
  /// Before discarding unapplied panel edits or the run's live changes
  /// (Open, a preset, a guided tour, Quit): ask; true to go on. Actions that
  /// restart the run but keep the panel (Reset, Apply, a new seed) pass
  /// `panelEdits` = false: only the live changes are at stake.
  bool confirmDiscard(const QString& action, bool panelEdits = true);
  /// File → Export: the current run's results (summary.json, requests.csv,
  /// timeseries.csv, …) into `dir`, or its trace to `path`, replayed headless
  /// (ui/controller/export_run.h) up to the events shown; the worker is not touched.
  /// The replay runs on its own thread behind a progress dialog (shown after
  /// 0.4 s) whose Cancel stops it: nothing is written, false with an empty
  /// error, and the status bar says so.
  bool exportRunResults(const QString& dir, QString* error = nullptr);
  /// The same with a choice of files (`--outputs`' groups; File ▸ Export ▸
  /// Run results… asks with ResultsExportDialog). The one-argument form
  /// writes all but the trace.
  bool exportRunResults(const QString& dir, const OutputSet& outputs, QString* error = nullptr);
  bool exportRunTrace(const QString& path, QString* error = nullptr);
  /// A PNG of the cluster view as shown.
  bool exportClusterPng(const QString& path, QString* error = nullptr);
  /// Compare mode: the loaded scenario under 2–4 policies (the first is the
  /// reference) in a new window; nullptr + message when nothing is loaded or
  /// the list is invalid.
  CompareWindow* openCompare(const QStringList& policies, QString* error = nullptr);

  /// Lecture mode (View ▸ Lecture mode, F11 / Ctrl+L): larger fonts, a
  /// slower speed and callouts on engine events (ui/shell/teaching_mode.cpp).
  void setLecture(bool on);
  bool lecture() const;
  /// Guided tour `id` (tour_guide.cpp) from step `step` (0-based): loads the step's
  /// scenario, sets its speed and shows the "what to watch" panel; plays it
  /// when `play`. False + message for an unknown or unavailable tour.
  bool startTour(const QString& id, int step = 0, bool play = false, QString* error = nullptr);
  bool showTourStep(int step, bool play = false, QString* error = nullptr);
  /// The first screen of a fresh start: a sample with contention, at 4×,
  /// and a pointer to the tours.
  bool openFirstScreen(QString* error = nullptr);
  /// No larger than the screen's available area, title bar included.
  void fitToScreen();
  void closeTour();
  /// Open the inspector on a request id ("123"), an instance ("gpu3") or
  /// "auto" (a request in view that was preempted or migrated).
  bool inspect(const QString& what, QString* error = nullptr);
  InspectorPanel* inspector() const { return inspector_; }
  TourPanel* tourPanel() const { return tour_; }
  QDockWidget* inspectorDock() const { return inspectorDock_; }
  QDockWidget* tourDock() const { return tourDock_; }

  /// Give the docks their default share of the window (scenario ~22% of
  /// the width, charts ~45% of the height); used when no layout was saved.
  void fitDocksToSize();

  SimController* controller() const { return ctl_; }
  ScenarioPanel* scenarioPanel() const { return panel_; }
  ChartPanel* chartPanel() const { return charts_; }
  ClusterView* clusterView() const { return cluster_; }
  /// The folder holding the sample scenarios ("" if none was found).
  static QString samplesDir();

  /// Toolbar widgets a user must always see (play/step/reset, the clock,
  /// speed, seed): never pushed into the toolbar's overflow menu.
  std::vector<QWidget*> toolbarEssentials() const;

protected:
  void closeEvent(QCloseEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

private:
  void buildActions();
  void buildToolBar();
  void buildMenus();
  void buildExportMenu(QMenu* file);
  void buildTeaching();                // inspector, tour panel, lecture action (ui/shell/teaching_mode.cpp)
  void buildTourMenu(QMenu* help);
  void pullTeaching(const LiveFrame& f);
  void buildStatusBar();
  /// A newly opened scenario starts in Run mode (animated).
  void startInRunMode();
  /// A status-bar message (timeout 0: until replaced) that is never cut off.
  void showStatus(const QString& message, int timeoutMs = 0);
  void fitToolBars();
  void onFrameReady();
  void pull(bool force);
  void applyFrame(const LiveFrame& f);
  void updateRunActions();
  void setMode(RunMode m);
  void setSpeedFromSlider(int v);
  void applyPanel();
  void reseed(bool random);
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void rebuildPresetsMenu();
  void restoreSettings();

  SimController* ctl_ = nullptr;
  ClusterView* cluster_ = nullptr;
  ChartPanel* charts_ = nullptr;
  ScenarioPanel* panel_ = nullptr;
  QDockWidget* scenarioDock_ = nullptr;
  QDockWidget* chartsDock_ = nullptr;

  QAction *open_ = nullptr, *save_ = nullptr, *saveAs_ = nullptr, *play_ = nullptr, *step_ = nullptr,
          *reset_ = nullptr, *runMode_ = nullptr, *fastMode_ = nullptr, *expressMode_ = nullptr, *stop_ = nullptr,
          *exportCharts_ = nullptr, *quit_ = nullptr, *runUntil_ = nullptr;
  QAction* compare_ = nullptr;
  QAction* lecture_ = nullptr;
  QAction* saveRun_ = nullptr;
  // The change log a saved run file holds for the loaded scenario and seed
  // (File ▸ Save run as…, or the saved run being replayed): while the run's
  // own log is a prefix of it, confirmDiscard has nothing to ask about.
  ChangeLog savedRunLog_;
  InspectorPanel* inspector_ = nullptr;
  QDockWidget* inspectorDock_ = nullptr;
  TourPanel* tour_ = nullptr;
  QDockWidget* tourDock_ = nullptr;
  int teachGeneration_ = -1;
  double basePointSize_ = 0;
  int speedBeforeLecture_ = -1;
  bool scenarioWasVisible_ = false;
  bool scenarioHiddenForTour_ = false;
  bool openTourScenario(const TourStep& s, QString* error);  // a tour on a narrow window hid the scenario dock
  int chartsHeightBeforeLecture_ = -1;
  QElapsedTimer sinceInspectorRefresh_;
  QActionGroup* modes_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* presetsMenu_ = nullptr;
  QSlider* speed_ = nullptr;
  QLabel* speedLabel_ = nullptr;
  QLabel* simTime_ = nullptr;
  QLabel* eventsRate_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QLabel* stTime_ = nullptr;
  QLabel* stSpeed_ = nullptr;
  QLabel* stEvents_ = nullptr;
  QLabel* stRequests_ = nullptr;
  QLabel* stEta_ = nullptr;
  // Throughput and cost (issue 49): output tok/s over the last 10 simulated
  // s, the cluster's $/hour and $ per million output tokens (ui/common/pool_cost.h).
  QLabel* stCost_ = nullptr;
  CostReadout cost_;
  void updateCostReadout(const LiveFrame& f);
  QProgressBar* progress_ = nullptr;

  QTimer* pullTimer_ = nullptr;
  QElapsedTimer sinceChartRefresh_;
  double chartCpuMark_ = 0;  // the GUI thread's CPU seconds when the charts were last refreshed
  /// Express: the charts are refreshed (at the ~1 Hz pull) only while the
  /// GUI thread has used at most this fraction of the wall time since the
  /// last refresh (a refresh plus its paint can cost hundreds of ms with
  /// 512 instances' KV lines: the interval grows with it, so the GUI thread
  /// never takes more than ~this share of a core from the worker), and at
  /// least every kExpressChartMaxS seconds.
  static constexpr double kExpressGuiShare = 0.15;
  static constexpr double kExpressChartMaxS = 10.0;
  /// Express: the cluster view gets the newest frame every
  /// kExpressClusterMs of wall time (issue 50: 512 tiles stayed empty and
  /// frozen while ~42 k requests were in flight), or less often when a
  /// frame costs the GUI thread more than kExpressClusterShare of the wall
  /// time (its set + paint is timed).
  static constexpr qint64 kExpressClusterMs = 500;
  static constexpr double kExpressClusterShare = 0.10;
  QElapsedTimer sinceClusterFrame_;
  qint64 clusterFrameMs_ = 0;  // what the last Express cluster frame cost
  QElapsedTimer sincePull_;
  QElapsedTimer beat_;      // the 60 Hz pull schedule while a run animates
  double nextBeatMs_ = 0;   // next pull on that schedule (ms of beat_)
  QString currentPath_;
  int generation_ = -1;
  bool wasRunning_ = false;
  bool discardConfirmed_ = false;
  QToolBar* clockBar_ = nullptr;
  bool toolBarsSplit_ = false;  // Quit asked already: the close event does not ask again
};

/// A window rectangle saved on a screen whose available area was
/// `savedScreen`, adapted to the available area `avail` of the screen it
/// opens on: the same share of the screen (a 1024-px window saved on a
/// 1024-px screen opens as wide on a 1920-px one), no larger than `avail`,
/// centred in it. Unknown `savedScreen` (settings older than the record):
/// the saved size, no larger than `avail`.
QRect adaptSavedGeometry(const QRect& saved, const QSize& savedScreen, const QRect& avail);

}  // namespace sl::ui
