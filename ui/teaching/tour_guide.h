#pragma once
// Guided tours (50-gui.md "Teaching mode"): per paper, a short sequence of
// steps, each = a sample scenario, a speed and a "what to watch" text. Only
// tours whose policies are all in the policy registry are offered.
#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

class QLabel;
class QPushButton;
class QTextBrowser;

namespace sl::ui {

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
  /// The badges the cards show now (distinct, in card order): they replace
  /// "{badges}" in the step's text, so that the text quotes the run.
  void setLiveBadges(const QStringList& badges);
  /// Figures of the run that replace "{NAME}" in the step's text
  /// ("{p95_ttft}", "{preemptions}", "{knob:batch_size}" …: see
  /// tourValues() in shell/teaching_mode.cpp); one not given yet reads
  /// "(none yet)".
  void setLiveValues(const QMap<QString, QString>& values);

protected:
  void changeEvent(QEvent* e) override;  // titles follow the window font (lecture mode)

signals:
  /// The user pressed Back or Next: load step `i`.
  void stepRequested(int i);
  void closeRequested();

private:
  Tour tour_;
  int step_ = 0;
  QStringList badges_;
  QMap<QString, QString> values_;
  void fillText();
  QLabel* header_ = nullptr;
  QLabel* title_ = nullptr;
  QLabel* scenario_ = nullptr;
  QTextBrowser* text_ = nullptr;
  QPushButton* back_ = nullptr;
  QPushButton* next_ = nullptr;
  QPushButton* close_ = nullptr;
};

}  // namespace sl::ui
