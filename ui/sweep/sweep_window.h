#pragma once
// Run ▸ Sweep… (issue 14, docs/sweeps.md "GUI"): a sweep over the current
// scenario — policies × arrival rates × seeds, plus one optional axis over
// any scenario path — run by core/sweep on a worker thread (its own thread
// pool) with progress, ETA and cancel; the results as a table, a chart (a
// metric vs rate, one line per policy, mean over seeds and the extra axis)
// and a heatmap (policy × rate, or extra axis × rate), exportable as CSV,
// PNG and SVG; any row opens as a normal run.
#include <QDialog>
#include <QFontMetrics>
#include <QString>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/spec.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableWidget;
class QTemporaryDir;
class QTimer;

namespace sl::ui {

class LiveChart;
class SweepHeatmap;

/// The form's default policy list for a scenario whose policy is `loaded`,
/// from the policy registry (catalog order): with the first baseline loaded
/// ("fcfs"), the first two baselines and the first policy of each paper's
/// family; otherwise the first baseline and the loaded policy. At most 4.
std::string defaultSweepPolicies(const std::string& loaded);

/// A metric in the results table and heatmap: four significant digits,
/// never an exponent above 0.001 ("13.99", "0.4124", "3210"); integers whole.
QString formatSweepNumber(double v);

/// A sweep metric's key ("ttft_s.p99") in words and its unit ("TTFT p99",
/// "s"), for the chart's title and y axis; an unknown key as it is, no unit.
struct SweepMetricWords {
  QString name, unit;
};
SweepMetricWords sweepMetricWords(const QString& key);

class SweepWindow : public QDialog {
  Q_OBJECT
public:
  explicit SweepWindow(const Scenario& base, QWidget* parent = nullptr);
  ~SweepWindow() override;

  // ---- the form (also for tests)
  QLineEdit* policiesEdit() const { return policies_; }
  QDoubleSpinBox* rateFrom() const { return rateFrom_; }
  QDoubleSpinBox* rateTo() const { return rateTo_; }
  QDoubleSpinBox* rateStep() const { return rateStep_; }
  QSpinBox* seeds() const { return seeds_; }
  QLineEdit* extraPath() const { return extraPath_; }
  QLineEdit* extraValues() const { return extraValues_; }
  QComboBox* metric() const { return metric_; }
  QSpinBox* threads() const { return threads_; }

  /// The SWEEP.json the form describes (the base scenario inline).
  nlohmann::json specJson() const;
  /// Validate the form and start the sweep on the worker; false + a message
  /// (naming the field or point) when the sweep is invalid.
  bool start(QString* error = nullptr);
  void cancel();
  bool running() const;
  /// Block (running the event loop) until the sweep has ended, up to `timeoutMs`.
  bool waitDone(int timeoutMs);

  // ---- results
  QTableWidget* table() const { return table_; }
  LiveChart* chart() const { return chart_; }
  SweepHeatmap* heatmap() const { return heatmap_; }
  const nlohmann::ordered_json& results() const { return results_; }  // results.json
  QString resultsCsv() const { return csv_; }                          // results.csv
  /// The scenario of result row `row` (the point's axis values applied).
  Scenario pointScenario(int row) const;

  bool exportCsv(const QString& path) const;
  bool exportChart(const QString& path) const;    // .png or .svg (by suffix)
  bool exportHeatmap(const QString& path) const;  // .png or .svg

signals:
  /// "Open point": the main window loads it as a normal run.
  void openPoint(const sl::Scenario& scenario, const QString& name);
  void finished();

private:
  void poll();
  void showResults();
  void redraw();

  Scenario base_;
  QLineEdit *policies_, *extraPath_, *extraValues_;
  QDoubleSpinBox *rateFrom_, *rateTo_, *rateStep_;
  QSpinBox *seeds_, *threads_;
  QComboBox *metric_, *heatRows_;
  QPushButton *run_, *cancel_, *open_;
  QProgressBar* progress_;
  QLabel *status_, *chartCaption_;
  QTabWidget* tabs_;
  QTableWidget* table_;
  LiveChart* chart_;
  SweepHeatmap* heatmap_;
  QTimer* timer_;

  struct Job;
  std::shared_ptr<Job> job_;
  std::thread worker_;
  std::unique_ptr<QTemporaryDir> dir_;
  std::vector<Scenario> scenarios_;  // of the finished sweep, by point
  nlohmann::ordered_json results_;
  QString csv_;
};

/// A grid of coloured cells (value → colour from low to high) with row and
/// column labels; exported as PNG or SVG.
class SweepHeatmap : public QWidget {
  Q_OBJECT
public:
  explicit SweepHeatmap(QWidget* parent = nullptr);
  void setData(QStringList rows, QStringList cols, std::vector<std::vector<double>> values, QString title,
               QString colTitle = {});
  int rowCount() const { return rows_.size(); }
  int columnCount() const { return cols_.size(); }
  double value(int r, int c) const { return values_.at(static_cast<std::size_t>(r)).at(static_cast<std::size_t>(c)); }
  bool exportTo(const QString& path) const;
  /// Row labels as drawn at `size` (elided ones end in "…"), for layout tests.
  QStringList rowLabelsAsPainted(QSize size) const;
  /// Lowest and highest finite value (the colour scale's ends).
  std::pair<double, double> range() const;

protected:
  void paintEvent(QPaintEvent*) override;

private:
  void paintOn(QPainter& p, QSize size) const;
  struct Layout {
    int left = 0, top = 0, right = 0, bottom = 0;
    QRectF grid, bar;  // the cells; the colour scale
  };
  Layout layout(const QFontMetrics& fm, QSize size) const;
  QStringList rows_, cols_;
  QString colTitle_;
  std::vector<std::vector<double>> values_;
  QString title_;
};

}  // namespace sl::ui
