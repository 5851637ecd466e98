#pragma once
// Guided tours (50-gui.md "Teaching mode"): per paper, a short sequence of
// steps, each = a sample scenario, a speed and a "what to watch" text. Only
// tours whose policies are all in the policy registry are offered.
#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "scenario/spec.h"

class QLabel;
class QPushButton;
class QTextBrowser;

namespace sl::ui {

/// What a step's text says the run shows, checked against the run by
/// tests/ui/test_tour_claims.cpp at the simulated time the step reaches in
/// 30 s of wall time (and again at 90 s: it must stay on screen). `a` and
/// `b` name figures as the text's placeholders do ("p95_ttft",
/// "base:p95_ttft": the baseline run at the same simulated time; a number
/// stands for itself); the claim holds when a > factor · b (Greater),
/// a · factor < b (Less) or a <= factor · b (AtMost).
struct TourClaim {
  enum class Kind { Greater, Less, AtMost };
  Kind kind = Kind::Greater;
  QString a, b;
  double factor = 1;
};

struct TourStep {
  QString title;
  QString scenario;  // file name under the samples folder
  double speed = 1;  // simulated seconds per wall second
  QString watch;     // rich text: what to look at; "{badges}" is replaced
                     // by the badges the cards show in this run
  /// `--set` overrides applied to the sample for this step (rate, request
  /// count): chosen so that the step shows its mechanism within ~30 s of
  /// wall time at its speed.
  QStringList set = {};
  /// Another step of the same tour (0-based) whose scenario runs alongside,
  /// headless, to the same simulated time: "{base:NAME}" quotes its figure
  /// and "{vs:NAME}" both figures with the word their order gives ("lower",
  /// "higher", "about the same"): such words are never typed. -1: none.
  int baseline = -1;
  std::vector<TourClaim> claims = {};
  /// How a comparison names this step's run when it is another step's
  /// baseline ("no cache"); empty: its policy id.
  QString label = {};
  /// The step names a control of the scenario panel (the Clients slider):
  /// the panel stays in view during this step, however narrow the window.
  bool showsPanel = false;
};

struct Tour {
  QString id;     // "pascal"
  QString title;  // menu text
  QString paper;  // one line: which paper it follows
  QStringList policies;  // policy ids its scenarios use (all must exist)
  std::vector<TourStep> steps;
};

/// Every tour written so far.
const std::vector<Tour>& allTours();
/// Whether `t` can run: all its policies are registered and all its step
/// scenarios exist in `samplesDir` (`why` names what is missing).
bool tourAvailable(const Tour& t, const QString& samplesDir, QString* why = nullptr);
/// The tours that can run, in menu order.
std::vector<Tour> availableTours(const QString& samplesDir);
/// A tour by id (case-insensitive), available or not.
std::optional<Tour> findTour(const QString& id);
/// The step's sample under `samplesDir` with the step's `--set` overrides
/// applied. Throws what the scenario loader throws.
Scenario loadTourScenario(const TourStep& s, const QString& samplesDir);
/// A duration as tour texts quote it: "4.8 ms", "540 ms", "1.6 s", "237 s"; empty
/// when not finite or negative.
QString tourSeconds(double s);
/// A fraction as a percentage: "59 %", "1.4 %"; empty when negative.
QString tourPercent(double f);
/// A comparison word for a figure `a` against `b`: "lower", "higher" or,
/// within 5 %, "about the same".
QString compareWord(double a, double b);

/// Figures of finished requests up to a simulated time, computed as the
/// charts compute them (nearest-rank quantiles, means).
struct RunFigures {
  double p50Ttft = -1, p95Ttft = -1, meanTtft = -1, meanTpot = -1, slo = -1;
  double hitRate = -1;  // prefix cache, cluster-wide: cached / prompt tokens (-1: off)
  std::int64_t finished = 0, preemptions = 0, migrations = 0, waiting = 0;
};

class BaselineRun;

/// The "what to watch" panel: step title, text, Back / Next / Close.
class TourPanel : public QWidget {
  Q_OBJECT
public:
  explicit TourPanel(QWidget* parent = nullptr);
  void setTour(const Tour& t);
  /// Show step `i` (0-based) of the current tour; emits nothing.
  void showStep(int i);
  int step() const { return step_; }
  int stepCount() const { return static_cast<int>(tour_.steps.size()); }
  const Tour& tour() const { return tour_; }
  QString stepTitle() const;
  QString watchText() const;
  /// What of the panel is not shown whole at its size: the step's text
  /// scrolling, a label or a button cut (empty when nothing is).
  QStringList layoutProblems() const;
  /// The badges the cards show now (distinct, in card order): they replace
  /// "{badges}" in the step's text, so that the text quotes the run.
  void setLiveBadges(const QStringList& badges);
  /// Figures of the run that replace "{NAME}" in the step's text
  /// ("{p95_ttft}", "{preemptions}", "{knob:batch_size}" …: see
  /// tourValues() in shell/teaching_mode.cpp); one not given yet reads
  /// "(none yet)".
  void setLiveValues(const QMap<QString, QString>& values);
  /// Where the main run is: the baseline (TourStep::baseline) is run to
  /// `clockS`; when `wait`, before this returns (a paused run, a
  /// screenshot), else in the background.
  void setRunClock(double clockS, bool wait);
  /// Whether lecture mode is on: the text's <lecture-off>…</lecture-off>
  /// parts are shown only when it is off, <lecture-on>…</lecture-on> only
  /// when it is on.
  void setLecture(bool on);
  /// Where the samples are (the baseline's scenario is read from there).
  void setSamplesDir(const QString& dir) { samplesDir_ = dir; }
  /// The figures the text quotes now, baseline ones as "base:NAME"
  /// (tests check the text's claims against them).
  QMap<QString, QString> shownValues() const;
  /// The baseline's figures at `clockS`; nullopt before it got there or
  /// when the step has none.
  std::optional<RunFigures> baselineFigures(double clockS) const;
  /// The baseline step's policy ("round-robin"), empty when none.
  QString baselineLabel() const;

protected:
  void changeEvent(QEvent* e) override;  // titles follow the window font (lecture mode)
  void resizeEvent(QResizeEvent* e) override;  // the text is fitted to the panel again

signals:
  /// The user pressed Back or Next: load step `i`.
  void stepRequested(int i);
  void closeRequested();

private:
  Tour tour_;
  int step_ = 0;
  QStringList badges_;
  QMap<QString, QString> values_;
  QMap<QString, QString> baseValues_;
  std::shared_ptr<BaselineRun> baseline_;
  QString samplesDir_;
  QString baseLabel_;
  bool lecture_ = false;
  double clockS_ = 0;
  void startBaseline();
  void fillText();
  /// The step's text at the largest font (the window's, down to 70 % of
  /// it) at which it fits the panel without a scroll bar.
  void fitText();
  QLabel* header_ = nullptr;
  QLabel* title_ = nullptr;
  QLabel* scenario_ = nullptr;
  QTextBrowser* text_ = nullptr;
  QPushButton* back_ = nullptr;
  QPushButton* next_ = nullptr;
  QPushButton* close_ = nullptr;
};

}  // namespace sl::ui
