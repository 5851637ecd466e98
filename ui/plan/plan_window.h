#pragma once
// Run ▸ Plan deployment… (issue 49 item 5; docs/user-guide.md "Plan
// dialog"): core/plan's deployment search on the current scenario — GPU
// types × TP × count, mixed and disaggregated pools — at a rate and SLO,
// run on a worker thread with progress and cancel. The answer as one line,
// every simulated candidate on a cost ($/hour) vs SLO attainment chart with
// the Pareto front as a step line, the target and the winner, and every
// candidate in a sortable table (pruned and unfit ones with their reason);
// any point or row opens as a scenario in the main window.
#include <QDialog>
#include <QPointF>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "plan/plan.h"
#include "scenario/spec.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace sl::ui {

class PlanChart;

/// The plan's answer in one line: "Cheapest meeting 90 %: 3x
/// h100-pcie-80g/tp1, $8.67/h (99.5 % within the SLO, TTFT p99 267 ms, TPOT
/// p99 47 ms)", the budget's winner, or "No feasible deployment …; closest:
/// …".
QString planAnswer(const plan::PlanResult& r, const plan::PlanOptions& o);

/// A validatePlanOptions message with its CLI flag worded as the dialog's
/// field ("--tp: 3 is not …" → "TP set: 3 is not …").
QString planFieldMessage(const QString& message);

class PlanWindow : public QDialog {
  Q_OBJECT
 public:
  explicit PlanWindow(const Scenario& base, QWidget* parent = nullptr);
  ~PlanWindow() override;

  // ---- the form (also for tests)
  QDoubleSpinBox* rateBox() const { return rate_; }
  QDoubleSpinBox* sloTtftBox() const { return sloTtft_; }  ///< ms; 0: none
  QDoubleSpinBox* sloTpotBox() const { return sloTpot_; }  ///< ms; 0: none
  QDoubleSpinBox* targetBox() const { return target_; }    ///< %
  QListWidget* gpuList() const { return gpus_; }           ///< checkable, id in Qt::UserRole
  QLineEdit* tpEdit() const { return tps_; }
  QSpinBox* maxGpusBox() const { return maxGpus_; }
  QCheckBox* homogeneousBox() const { return homogeneous_; }
  QCheckBox* mixedBox() const { return mixed_; }
  QCheckBox* disaggregatedBox() const { return disaggregated_; }
  QDoubleSpinBox* budgetBox() const { return budget_; }  ///< $/hour; 0: none
  QPushButton* runButton() const { return run_; }
  QPushButton* cancelButton() const { return cancel_; }
  /// The form's problem, in red under it ("" when the form is valid).
  QLabel* formMessage() const { return formMessage_; }

  /// The options the form describes; nullopt + the message naming the field
  /// when they are invalid (validatePlanOptions, worded as the form).
  std::optional<plan::PlanOptions> options(QString* error = nullptr) const;
  /// Start the search on the worker; false + a message when the form is
  /// invalid or a search runs.
  bool start(QString* error = nullptr);
  void cancel();
  bool running() const;
  /// Block (running the event loop) until the search has ended, up to `timeoutMs`.
  bool waitDone(int timeoutMs);

  // ---- results
  const plan::PlanResult* result() const { return result_.get(); }
  PlanChart* chart() const { return chart_; }
  /// Start the chart's x axis on the Pareto front (on where it matters).
  QCheckBox* zoomBox() const { return zoom_; }
  QTableWidget* table() const { return table_; }
  /// Which candidates the table lists: 0 simulated (default), 1 all, 2 not simulated.
  QComboBox* filterBox() const { return filter_; }
  QLabel* answerLabel() const { return answer_; }
  QLabel* statusLabel() const { return status_; }
  /// Every simulated candidate as drawn: (cost $/hour, attainment %) and its index.
  struct ChartPoint {
    QPointF value;
    std::size_t candidate = 0;
  };
  const std::vector<ChartPoint>& chartPoints() const { return points_; }
  /// The Pareto front's candidates as drawn, by cost.
  const std::vector<std::size_t>& frontCandidates() const { return front_; }
  /// The simulated candidate drawn nearest `viewPos` in the chart's
  /// viewport (within 12 px), if any.
  std::optional<std::size_t> candidateAt(QPoint viewPos) const;
  /// The table row of candidate `i` (-1 when hidden or absent).
  int rowOf(std::size_t i) const;
  /// The scenario of candidate `i` (candidateScenario on the plan's base).
  Scenario candidateScenarioOf(std::size_t i) const;
  /// Emit openPoint for candidate `i`.
  void openCandidate(std::size_t i);

  bool exportChart(const QString& path) const;  // .png or .svg (by suffix)
  bool exportCandidatesCsv(const QString& path) const;
  bool exportParetoCsv(const QString& path) const;

 signals:
  /// "Open as scenario": the main window loads it as a normal run.
  void openPoint(const sl::Scenario& scenario, const QString& name);
  void finished();

 protected:
  bool eventFilter(QObject* o, QEvent* e) override;

 private:
  QWidget* buildForm();
  QWidget* buildResults();
  void validate();
  void poll();
  void showResults();
  void fillTable();
  void drawChart();
  void applyFilter();
  void selectCandidate(std::size_t i);
  std::optional<std::size_t> selectedCandidate() const;
  void exportFile(int what);

  Scenario base_;
  QString workloadError_;  // the scenario has no single rate to set (closed loop, schedule)
  QDoubleSpinBox *rate_, *sloTtft_, *sloTpot_, *target_, *budget_;
  QListWidget* gpus_;
  QLineEdit* tps_;
  QSpinBox* maxGpus_;
  QCheckBox *homogeneous_, *mixed_, *disaggregated_, *prune_;
  QPushButton *run_, *cancel_, *open_, *exportChart_, *exportCandidates_, *exportPareto_;
  QLabel *formMessage_, *answer_, *status_;
  QProgressBar* progress_;
  QComboBox* filter_;
  QTableWidget* table_;
  PlanChart* chart_;
  QCheckBox* zoom_;
  QLabel* chartHelp_;
  QTimer* timer_;

  struct Job;
  std::shared_ptr<Job> job_;
  std::thread worker_;
  std::unique_ptr<plan::PlanResult> result_;
  plan::PlanOptions resultOptions_;
  std::vector<ChartPoint> points_;
  std::vector<std::size_t> front_;
  QPoint pressPos_;
};

}  // namespace sl::ui
