#include "ui/sweep/sweep_window.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSvgGenerator>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/chart_panel.h"
#include "ui/compare/compare_model.h"
#include "policy/registry.h"
#include "scenario/scenario_io.h"
#include "sweep/parallel.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"
#include "ui/common/theme.h"
#include "util/error.h"

namespace sl::ui {

using nlohmann::json;
using nlohmann::ordered_json;

struct SweepWindow::Job {
  sweep::SweepSpec spec;
  std::atomic<std::size_t> done{0}, total{0};
  std::atomic<bool> cancel{false}, ended{false};
  std::string error;  // set before `ended`
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
};

namespace {

const char* kPolicy = "policy.id";
const char* kPolicyObject = "policy";  // the axis when knobs apply to some policies only
const char* kRate = "workload.arrival.rate";
const char* kSeed = "run.seed";

QString text(const ordered_json& v) {
  if (v.is_null()) return {};
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  return QString::fromStdString(v.dump());
}

// The policy id of a point's values (a policy.id axis, or a whole-policy one).
std::string policyOf(const ordered_json& values) {
  if (values.contains(kPolicy)) return values[kPolicy].get<std::string>();
  return values.at(kPolicyObject).at("id").get<std::string>();
}

}  // namespace

SweepMetricWords sweepMetricWords(const QString& key) {
  // "ttft_s.p99": a latency's quantile, in seconds.
  static const QRegularExpression latency("^([a-z0-9]+)_s\\.(p[0-9.]+|mean|max|min)$");
  if (const QRegularExpressionMatch m = latency.match(key); m.hasMatch())
    return {m.captured(1).toUpper() + " " + m.captured(2), QObject::tr("s")};
  struct Known {
    const char* key;
    const char* name;
    const char* unit;
  };
  static const Known known[] = {
      {"requests.finished", QT_TR_NOOP("finished requests"), QT_TR_NOOP("requests")},
      {"qoe.violation_rate", QT_TR_NOOP("QoE violation rate"), QT_TR_NOOP("fraction")},
      {"slo_attainment", QT_TR_NOOP("SLO attainment"), QT_TR_NOOP("fraction")},
      {"throughput.tokens_per_s", QT_TR_NOOP("throughput"), QT_TR_NOOP("tok/s")},
      {"throughput.requests_per_s", QT_TR_NOOP("throughput"), QT_TR_NOOP("req/s")},
      {"goodput_rps", QT_TR_NOOP("goodput"), QT_TR_NOOP("req/s")},
      {"preemptions", QT_TR_NOOP("preemptions"), QT_TR_NOOP("count")},
      {"migrations", QT_TR_NOOP("migrations"), QT_TR_NOOP("count")},
  };
  for (const Known& k : known)
    if (key == QLatin1String(k.key)) return {QObject::tr(k.name), QObject::tr(k.unit)};
  return {key, QString()};
}

QString formatSweepNumber(double v) {
  if (!std::isfinite(v)) return QStringLiteral("–");
  const double a = std::fabs(v);
  if (v == std::trunc(v) && a < 1e15) return QString::number(v, 'f', 0);
  if (a < 1e-3) return QString::number(v, 'g', 3);
  // Four significant digits, never an exponent: 13.99, 0.4124, 3210.
  return QString::number(v, 'f', std::clamp(3 - static_cast<int>(std::floor(std::log10(a))), 0, 6));
}

namespace {

// A table cell: metrics as formatNumber, a whole-policy value as its id,
// everything else as written in results.json.
QTableWidgetItem* cell(const ordered_json& v, bool metric) {
  auto* item = new QTableWidgetItem;
  if (metric && v.is_number()) {
    item->setText(formatSweepNumber(v.get<double>()));
    item->setToolTip(QString::fromStdString(v.dump()));
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  } else if (v.is_object() && v.contains("id")) {
    item->setText(text(v["id"]));
    item->setToolTip(QObject::tr("knobs: %1").arg(text(v.value("knobs", ordered_json::object()))));
  } else {
    item->setText(text(v));
    if (v.is_number()) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  return item;
}

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

QColor seriesColor(int i) {
  static const QColor c[] = {theme::kSeriesA, theme::kSeriesB, theme::kAnswering, theme::kReasoning,
                             theme::kSwapped, theme::kMarker};
  return c[i % 6];
}

}  // namespace

std::string defaultSweepPolicies(const std::string& loaded) {
  // From the registry, in catalog order: the baselines' first policy, and
  // either the loaded policy or, when that first baseline is loaded, the
  // next baseline and the first policy of each paper's family (at most 4).
  const auto& catalog = policyCatalog();
  std::vector<std::string> baselines, papers;
  std::vector<std::string> familiesSeen;
  for (const PolicyInfo& p : catalog) {
    if (p.family == "Baselines") baselines.push_back(p.id);
    else if (p.family != "Examples" &&
             std::find(familiesSeen.begin(), familiesSeen.end(), p.family) == familiesSeen.end()) {
      familiesSeen.push_back(p.family);
      papers.push_back(p.id);
    }
  }
  std::vector<std::string> ids;
  auto add = [&](const std::string& id) {
    if (ids.size() < 4 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  if (!baselines.empty()) add(baselines.front());
  if (!baselines.empty() && loaded == baselines.front()) {
    if (baselines.size() > 1) add(baselines[1]);
    for (const std::string& id : papers) add(id);
  } else {
    add(loaded);
  }
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

SweepWindow::SweepWindow(const Scenario& base, QWidget* parent) : QDialog(parent), base_(base) {
  setWindowTitle(tr("Sweep"));
  resize(980, 720);
  auto* form = new QFormLayout;
  policies_ = new QLineEdit(QString::fromStdString(defaultSweepPolicies(base.policy.id)));
  policies_->setToolTip(tr("Comma-separated policy ids (servelab-cli presets policies)"));
  form->addRow(tr("Policies"), policies_);
  const double r = base.workload.arrival.rate;
  auto spin = [](double v, double lo, double hi, double step) {
    auto* s = new QDoubleSpinBox;
    s->setRange(lo, hi);
    s->setDecimals(2);
    s->setSingleStep(step);
    s->setValue(v);
    return s;
  };
  rateFrom_ = spin(std::max(0.25, std::round(r * 0.5 * 4) / 4), 0.01, 1e6, 0.5);
  rateTo_ = spin(std::max(0.5, std::round(r * 1.5 * 4) / 4), 0.01, 1e6, 0.5);
  rateStep_ = spin(std::max(0.25, std::round(r * 0.25 * 4) / 4), 0.01, 1e6, 0.25);
  auto* rates = new QHBoxLayout;
  rates->addWidget(new QLabel(tr("from")));
  rates->addWidget(rateFrom_);
  rates->addWidget(new QLabel(tr("to")));
  rates->addWidget(rateTo_);
  rates->addWidget(new QLabel(tr("step")));
  rates->addWidget(rateStep_);
  form->addRow(tr("Arrival rate (req/s)"), rates);
  seeds_ = new QSpinBox;
  seeds_->setRange(1, 100);
  seeds_->setValue(2);
  seeds_->setToolTip(tr("Seeds 1..N for every point (results are averaged over seeds in the charts)"));
  form->addRow(tr("Seeds"), seeds_);
  extraPath_ = new QLineEdit;
  extraPath_->setPlaceholderText(tr("optional scenario path, e.g. cluster.instances"));
  extraValues_ = new QLineEdit;
  extraValues_->setPlaceholderText(tr("values, e.g. 2,4,8"));
  auto* extra = new QHBoxLayout;
  extra->addWidget(extraPath_, 2);
  extra->addWidget(extraValues_, 1);
  form->addRow(tr("Extra axis"), extra);
  metric_ = new QComboBox;
  for (const std::string& m : sweep::defaultSweepMetrics()) metric_->addItem(QString::fromStdString(m));
  for (const char* m : {"ttfat_s.p99", "e2e_s.p99", "goodput_rps", "preemptions", "migrations"}) metric_->addItem(m);
  metric_->setCurrentText("ttft_s.p99");
  form->addRow(tr("Metric (chart, heatmap)"), metric_);
  threads_ = new QSpinBox;
  threads_->setRange(1, 256);
  threads_->setValue(sweep::resolveJobs(0));
  form->addRow(tr("Threads"), threads_);

  run_ = new QPushButton(tr("Run sweep"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  open_ = new QPushButton(tr("Open point as a run"));
  open_->setEnabled(false);
  auto* exportCsvB = new QPushButton(tr("Export CSV…"));
  auto* exportPngB = new QPushButton(tr("Export chart…"));
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {run_, cancel_, open_, exportCsvB, exportPngB}) buttons->addWidget(b);
  buttons->addStretch();
  progress_ = new QProgressBar;
  status_ = new QLabel;

  table_ = new QTableWidget;
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  chart_ = new LiveChart("sweep", tr("Metric vs arrival rate"), tr("arrival rate (req/s)"), metric_->currentText());
  chart_->setPointsVisible(true);
  chart_->setFitToData(true);  // a few rates over a range: not from 0
  heatmap_ = new SweepHeatmap;
  heatRows_ = new QComboBox;
  heatRows_->addItems({tr("rows: policy"), tr("rows: extra axis")});
  auto* heatPage = new QWidget;
  auto* hl = new QVBoxLayout(heatPage);
  hl->addWidget(heatRows_);
  hl->addWidget(heatmap_, 1);
  tabs_ = new QTabWidget;
  tabs_->addTab(table_, tr("Table"));
  chartCaption_ = new QLabel;
  auto* chartPage = new QWidget;
  auto* cl = new QVBoxLayout(chartPage);
  cl->addWidget(chartCaption_);
  cl->addWidget(chart_, 1);
  tabs_->addTab(chartPage, tr("Chart"));
  tabs_->addTab(heatPage, tr("Heatmap"));

  auto* lay = new QVBoxLayout(this);
  lay->addLayout(form);
  lay->addLayout(buttons);
  lay->addWidget(progress_);
  lay->addWidget(status_);
  lay->addWidget(tabs_, 1);

  timer_ = new QTimer(this);
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &SweepWindow::poll);
  connect(run_, &QPushButton::clicked, this, [this] {
    QString err;
    if (!start(&err)) QMessageBox::warning(this, tr("Sweep"), err);
  });
  connect(cancel_, &QPushButton::clicked, this, &SweepWindow::cancel);
  connect(metric_, &QComboBox::currentTextChanged, this, [this] { redraw(); });
  connect(heatRows_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(table_, &QTableWidget::itemSelectionChanged, this,
          [this] { open_->setEnabled(!table_->selectedItems().isEmpty() && !running()); });
  connect(open_, &QPushButton::clicked, this, [this] {
    const auto sel = table_->selectedItems();
    if (sel.isEmpty()) return;
    const int row = sel.front()->row();
    emit openPoint(pointScenario(row), tr("sweep point %1").arg(row));
  });
  connect(exportCsvB, &QPushButton::clicked, this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export results"),
                                                   ChartExportDialog::defaultParentFolder() + "/results.csv",
                                                   tr("CSV (*.csv)"));
    if (!p.isEmpty() && !exportCsv(p)) QMessageBox::warning(this, tr("Sweep"), tr("Could not write %1").arg(p));
  });
  connect(exportPngB, &QPushButton::clicked, this, [this] {
    const bool heat = tabs_->currentIndex() == 2;
    const QString p = QFileDialog::getSaveFileName(this, tr("Export chart"),
                                                   ChartExportDialog::defaultParentFolder() +
                                                       (heat ? "/heatmap.png" : "/chart.png"),
                                                   tr("PNG image (*.png);;SVG image (*.svg)"));
    if (p.isEmpty()) return;
    if (!(heat ? exportHeatmap(p) : exportChart(p)))
      QMessageBox::warning(this, tr("Sweep"), tr("Could not write %1").arg(p));
  });
}

SweepWindow::~SweepWindow() {
  if (job_) job_->cancel = true;
  if (worker_.joinable()) worker_.join();
}

json SweepWindow::specJson() const {
  json j;
  j["base"] = json::parse(dumpScenario(base_));
  std::vector<std::string> ids;
  for (const QString& p : policies_->text().split(',', Qt::SkipEmptyParts)) ids.push_back(p.trimmed().toStdString());
  // Knobs name one policy's parameters: as compare mode, the scenario's own
  // policy keeps its knobs and every other policy runs with its defaults
  // (scenarioForPolicy). A grid cannot tie knobs to one policy id, so then
  // the axis sets the whole policy object per point.
  const bool knobsForSome = !base_.policy.knobs.empty() &&
                            std::any_of(ids.begin(), ids.end(), [&](const std::string& id) { return id != base_.policy.id; });
  json pol = json::array();
  for (const std::string& id : ids)
    pol.push_back(knobsForSome ? json::parse(dumpScenario(scenarioForPolicy(base_, id))).at("policy") : json(id));
  j["axes"] = json::array();
  j["axes"].push_back({{"path", knobsForSome ? kPolicyObject : kPolicy}, {"values", pol}});
  j["axes"].push_back({{"path", kRate},
                       {"range", {{"from", rateFrom_->value()}, {"to", rateTo_->value()}, {"step", rateStep_->value()}}}});
  j["axes"].push_back({{"path", kSeed}, {"range", {{"from", 1}, {"to", seeds_->value()}, {"step", 1}}}});
  const QString path = extraPath_->text().trimmed();
  if (!path.isEmpty()) {
    json vals = json::array();
    for (const QString& v : extraValues_->text().split(',', Qt::SkipEmptyParts)) {
      json x = json::parse(v.trimmed().toStdString(), nullptr, false);
      vals.push_back(x.is_discarded() ? json(v.trimmed().toStdString()) : x);
    }
    j["axes"].push_back({{"path", path.toStdString()}, {"values", vals}});
  }
  json metrics = json::array();
  for (int i = 0; i < metric_->count(); ++i) metrics.push_back(metric_->itemText(i).toStdString());
  j["metrics"] = metrics;
  return j;
}

bool SweepWindow::start(QString* error) {
  if (running()) return false;
  auto job = std::make_shared<Job>();
  try {
    job->spec = sweep::parseSweep(specJson(), "sweep", base_.base_dir);
  } catch (const InputError& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  dir_ = std::make_unique<QTemporaryDir>();
  if (!dir_->isValid()) {
    if (error) *error = tr("Cannot create a temporary folder for the sweep");
    return false;
  }
  if (worker_.joinable()) worker_.join();
  job->total = job->spec.points.size();
  job_ = job;
  scenarios_ = job->spec.scenarios;
  results_ = ordered_json();
  csv_.clear();
  const std::string out = dir_->path().toStdString();
  const int threads = threads_->value();
  worker_ = std::thread([job, out, threads] {
    try {
      sweep::SweepRunOptions o;
      o.outDir = out;
      o.jobs = threads;
      o.cancel = &job->cancel;
      o.progress = [job](std::size_t d, std::size_t) { job->done = d; };
      (void)sweep::runSweep(job->spec, o);
    } catch (const std::exception& e) {
      job->error = e.what();
    }
    job->ended = true;
  });
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  open_->setEnabled(false);
  progress_->setRange(0, static_cast<int>(job->total));
  progress_->setValue(0);
  status_->setText(tr("%1 points on %2 threads…").arg(job->total.load()).arg(threads));
  timer_->start();
  return true;
}

void SweepWindow::cancel() {
  if (job_) job_->cancel = true;
}

bool SweepWindow::running() const { return job_ && !job_->ended; }

bool SweepWindow::waitDone(int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (running() || timer_->isActive()) {
    if (t.elapsed() > timeoutMs) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    poll();
  }
  return true;
}

void SweepWindow::poll() {
  if (!job_) return;
  const std::size_t done = job_->done, total = job_->total;
  progress_->setValue(static_cast<int>(done));
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - job_->t0).count();
  if (done > 0 && done < total)
    status_->setText(tr("%1 / %2 points, ETA %3 s").arg(done).arg(total).arg(el * (total - done) / done, 0, 'f', 0));
  if (!job_->ended) return;
  timer_->stop();
  if (worker_.joinable()) worker_.join();
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  if (!job_->error.empty()) {
    status_->setText(tr("Sweep failed: %1").arg(QString::fromStdString(job_->error)));
  } else if (job_->cancel) {
    status_->setText(tr("Cancelled after %1 of %2 points").arg(done).arg(total));
  } else {
    status_->setText(tr("%1 points in %2 s (spec hash %3)").arg(total).arg(el, 0, 'f', 1)
                         .arg(QString::fromStdString(job_->spec.hash)));
    showResults();
  }
  emit finished();
}

void SweepWindow::showResults() {
  const QString dir = dir_->path();
  results_ = ordered_json::parse(slurp(dir + "/results.json"), nullptr, false);
  csv_ = QString::fromStdString(slurp(dir + "/results.csv"));
  if (results_.is_discarded()) results_ = ordered_json();
  QStringList header = {"point"};
  for (const auto& a : results_["axes"]) header << text(a);
  for (const auto& m : results_["metrics"]) header << text(m);
  header << "fingerprint";
  table_->clear();
  table_->setColumnCount(header.size());
  table_->setHorizontalHeaderLabels(header);
  const auto& pts = results_["points"];
  table_->setRowCount(static_cast<int>(pts.size()));
  int r = 0;
  for (const auto& p : pts) {
    int c = 0;
    table_->setItem(r, c++, new QTableWidgetItem(text(p["point"])));
    for (auto it = p["values"].begin(); it != p["values"].end(); ++it) table_->setItem(r, c++, cell(*it, false));
    for (auto it = p["metrics"].begin(); it != p["metrics"].end(); ++it) table_->setItem(r, c++, cell(*it, true));
    table_->setItem(r, c, new QTableWidgetItem(text(p["fingerprint"])));
    ++r;
  }
  table_->resizeColumnsToContents();
  redraw();
}

void SweepWindow::redraw() {
  if (!results_.contains("points")) return;
  const std::string metric = metric_->currentText().toStdString();
  const bool byExtra = heatRows_->currentIndex() == 1 && results_["axes"].size() > 3;
  // Mean of the metric per (row key, rate): over seeds (and the extra axis
  // unless it is the heatmap's rows).
  std::map<std::string, std::map<double, std::pair<double, int>>> line, heat;
  std::vector<std::string> lineKeys, heatKeys;
  auto note = [](std::vector<std::string>& keys, const std::string& k) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  };
  std::vector<double> rates;
  for (const auto& p : results_["points"]) {
    const auto& v = p["values"];
    const auto& m = p["metrics"];
    if (!m.contains(metric) || !m[metric].is_number()) continue;
    const double rate = v[kRate].get<double>(), y = m[metric].get<double>();
    const std::string pol = policyOf(v);
    std::string rowKey = pol;
    if (byExtra) {
      auto it = v.begin();
      std::advance(it, 3);
      rowKey = text(*it).toStdString();
    }
    note(lineKeys, pol);
    note(heatKeys, rowKey);
    if (std::find(rates.begin(), rates.end(), rate) == rates.end()) rates.push_back(rate);
    auto& a = line[pol][rate];
    a.first += y;
    ++a.second;
    auto& b = heat[rowKey][rate];
    b.first += y;
    ++b.second;
  }
  std::sort(rates.begin(), rates.end());
  chart_->removeAllSeries();
  int i = 0;
  for (const std::string& k : lineKeys) {
    const int s = chart_->addSeries(QString::fromStdString(k), seriesColor(i++));
    std::vector<QPointF> pts;
    for (const auto& [rate, acc] : line[k]) pts.emplace_back(rate, acc.first / acc.second);
    chart_->setSeriesData(s, std::move(pts));
  }
  // The metric in words with its unit, in the title and on the y axis.
  const SweepMetricWords words = sweepMetricWords(QString::fromStdString(metric));
  const QString yTitle = words.unit.isEmpty() ? words.name : tr("%1 (%2)").arg(words.name, words.unit);
  chart_->setPointsVisible(true);  // each rate's point (the series are new)
  chart_->setTitle(tr("%1 vs arrival rate").arg(words.name));
  chart_->setYLabel(yTitle);
  chart_->refresh();
  chartCaption_->setText(tr("y: %1, mean over seeds%2; one line per policy")
                             .arg(QString::fromStdString(metric))
                             .arg(results_["axes"].size() > 3 ? tr(" and the extra axis") : QString()));
  QStringList rows, cols;
  for (const std::string& k : heatKeys) rows << QString::fromStdString(k);
  for (double x : rates) cols << QString::number(x, 'g', 6);
  std::vector<std::vector<double>> vals;
  for (const std::string& k : heatKeys) {
    std::vector<double> row;
    for (double x : rates) {
      auto it = heat[k].find(x);
      row.push_back(it == heat[k].end() ? std::nan("") : it->second.first / it->second.second);
    }
    vals.push_back(std::move(row));
  }
  heatmap_->setData(rows, cols, std::move(vals), yTitle + tr(", mean over seeds"),
                    tr("arrival rate (req/s)"));
}

Scenario SweepWindow::pointScenario(int row) const { return scenarios_.at(static_cast<std::size_t>(row)); }

bool SweepWindow::exportCsv(const QString& path) const {
  if (csv_.isEmpty()) return false;
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  const QByteArray b = csv_.toUtf8();
  return f.write(b) == b.size();
}

bool SweepWindow::exportChart(const QString& path) const {
  return path.endsWith(".svg", Qt::CaseInsensitive) ? chart_->exportSvg(path) : chart_->exportPng(path);
}

bool SweepWindow::exportHeatmap(const QString& path) const { return heatmap_->exportTo(path); }

}  // namespace sl::ui
