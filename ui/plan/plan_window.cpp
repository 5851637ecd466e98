#include "ui/plan/plan_window.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "cost/presets.h"
#include "cost/pricing.h"
#include "ui/charts/chart_export_dialog.h"
#include "ui/common/theme.h"
#include "ui/plan/plan_chart.h"
#include "util/error.h"

namespace sl::ui {

struct PlanWindow::Job {
  plan::PlanOptions options;
  std::atomic<std::size_t> done{0}, total{0};
  std::atomic<bool> cancel{false}, ended{false};
  plan::PlanResult result;  // set before `ended`
  std::string error;        // set before `ended`
  QElapsedTimer clock;
};

namespace {

constexpr int kCandidateRole = Qt::UserRole;
constexpr int kSortRole = Qt::UserRole + 1;
constexpr double kPickRadiusPx = 12;

QString usd(double v) {
  return QStringLiteral("$") + QString::number(v, 'f', 2) + QStringLiteral("/h");
}
QString ms(double s) {
  return std::isfinite(s) ? QString::number(1000 * s, 'f', 0) + QStringLiteral(" ms") : "–";
}
QString pct(double f) {
  return QString::number(100 * f, 'f', 1) + QStringLiteral(" %");
}
// "90 %", "92.5 %": the target as typed.
QString targetText(double f) {
  return QString::number(100 * f, 'g', 4) + QStringLiteral(" %");
}

// A table cell sorted by a number (missing values last), shown as `text`.
class NumItem : public QTableWidgetItem {
 public:
  NumItem(const QString& text, double key) : QTableWidgetItem(text) {
    setData(kSortRole, std::isfinite(key) ? key : std::numeric_limits<double>::infinity());
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& o) const override {
    const QVariant a = data(kSortRole), b = o.data(kSortRole);
    if (a.isValid() && b.isValid()) return a.toDouble() < b.toDouble();
    return QTableWidgetItem::operator<(o);
  }
};

QString fixed(double v, int decimals) {
  return std::isfinite(v) ? QString::number(v, 'f', decimals) : "–";
}

// The winner's and the misses' line: deployment, cost and how it does.
QString describe(const plan::Candidate& c, const plan::Outcome& o) {
  return QObject::tr("%1, %2 (%3 within the SLO, TTFT p99 %4, TPOT p99 %5)")
      .arg(QString::fromStdString(c.deployment()), usd(c.usdPerHour), pct(o.attainment), ms(o.ttftP99), ms(o.tpotP99));
}

}  // namespace

QString planAnswer(const plan::PlanResult& r, const plan::PlanOptions& o) {
  if (o.budget) {
    if (!r.winner) return QObject::tr("No deployment simulated within the budget of %1").arg(usd(*o.budget));
    const auto& w = r.outcomes[*r.winner];
    QString s =
        QObject::tr("Most goodput per dollar within %1: %2").arg(usd(*o.budget), describe(r.candidates[*r.winner], w));
    if (!w.meets) s += QObject::tr(" — below the %1 target").arg(targetText(o.target));
    return s;
  }
  if (r.winner)
    return QObject::tr("Cheapest meeting %1: %2")
        .arg(targetText(o.target), describe(r.candidates[*r.winner], r.outcomes[*r.winner]));
  QString s = QObject::tr("No feasible deployment: none of the %1 simulated reaches %2")
                  .arg(r.simulated)
                  .arg(targetText(o.target));
  if (!r.closestMisses.empty()) {
    const std::size_t i = r.closestMisses.front();
    s += QObject::tr("; closest: %1").arg(describe(r.candidates[i], r.outcomes[i]));
  }
  return s;
}

QString planFieldMessage(const QString& message) {
  static const std::pair<const char*, const char*> fields[] = {
      {"--rate", QT_TR_NOOP("Rate")},         {"--target", QT_TR_NOOP("Target")},
      {"--slo-ttft", QT_TR_NOOP("SLO TTFT")}, {"--slo-tpot", QT_TR_NOOP("SLO TPOT")},
      {"--budget", QT_TR_NOOP("Budget")},     {"--max-gpus", QT_TR_NOOP("Max GPUs")},
      {"--tp", QT_TR_NOOP("TP set")},         {"--kinds", QT_TR_NOOP("Kinds")},
      {"--gpus", QT_TR_NOOP("GPU types")},    {"--policies", QT_TR_NOOP("Policies")},
  };
  for (const auto& [flag, field] : fields) {
    const QString prefix = QString::fromLatin1(flag) + ":";
    if (message.startsWith(prefix)) return QObject::tr(field) + message.mid(static_cast<int>(std::strlen(flag)));
  }
  return message;
}

PlanWindow::PlanWindow(const Scenario& base, QWidget* parent) : QDialog(parent), base_(base) {
  setWindowTitle(tr("Plan deployment"));
  // A workload without a single rate (closed loop, rate schedule) cannot be planned.
  try {
    plan::PlanOptions probe;
    probe.rate = base.workload.arrival.rate > 0 ? base.workload.arrival.rate : 1.0;
    (void)plan::scenarioAtRate(base, probe);
  } catch (const std::exception& e) {
    workloadError_ = QString::fromStdString(e.what());
  }

  auto* split = new QSplitter(Qt::Horizontal);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(buildForm());
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  split->addWidget(scroll);
  split->addWidget(buildResults());
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setChildrenCollapsible(false);
  // The form as narrow as its fields allow; the results get the rest.
  const int formW = scroll->widget()->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 8;
  scroll->setMinimumWidth(formW);
  split->setSizes({formW, 4 * formW});
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(8, 8, 8, 8);
  lay->addWidget(split);

  // Fit the screen: up to 1600×960, never more than 92 % of what is available.
  QSize size(1600, 960);
  if (const QScreen* sc = parent ? parent->screen() : screen()) {
    const QRect av = sc->availableGeometry();
    size = size.boundedTo(QSize(av.width() * 92 / 100, av.height() * 92 / 100));
  }
  resize(size);

  timer_ = new QTimer(this);
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &PlanWindow::poll);
  validate();
  rate_->setFocus();  // type a rate, Enter runs
}

PlanWindow::~PlanWindow() {
  if (job_) job_->cancel = true;
  if (worker_.joinable()) worker_.join();
}

QWidget* PlanWindow::buildForm() {
  auto* page = new QWidget;
  auto* v = new QVBoxLayout(page);
  v->setContentsMargins(0, 0, 4, 0);

  auto* load = new QGroupBox(tr("Load and SLO"));
  auto* form = new QFormLayout(load);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  auto spin = [](double value, double lo, double hi, int decimals, const QString& suffix) {
    auto* s = new QDoubleSpinBox;
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setValue(value);
    s->setSuffix(suffix);
    s->setAccelerated(true);
    return s;
  };
  const double rate = base_.workload.arrival.rate > 0 ? base_.workload.arrival.rate : 1.0;
  rate_ = spin(rate, 0, 1e6, 2, tr(" req/s"));
  rate_->setToolTip(tr("Arrival rate to serve (replaces workload.arrival.rate; a trace is time-scaled to it)"));
  form->addRow(tr("Rate"), rate_);
  sloTtft_ = spin(base_.slo.ttft_s ? 1000 * *base_.slo.ttft_s : 0, 0, 1e7, 0, tr(" ms"));
  sloTtft_->setSpecialValueText(tr("none"));
  sloTtft_->setToolTip(tr("Time to first token a request must meet (0: none); from the scenario's slo.ttft_s"));
  form->addRow(tr("SLO TTFT"), sloTtft_);
  sloTpot_ = spin(base_.slo.tpot_s ? 1000 * *base_.slo.tpot_s : 0, 0, 1e6, 1, tr(" ms"));
  sloTpot_->setSpecialValueText(tr("none"));
  sloTpot_->setToolTip(tr("Time per output token a request must meet (0: none); from the scenario's slo.tpot_s"));
  form->addRow(tr("SLO TPOT"), sloTpot_);
  target_ = spin(90, 0, 100, 1, tr(" %"));
  target_->setToolTip(tr("SLO attainment to reach: the share of requests meeting the SLO"));
  form->addRow(tr("Target"), target_);
  budget_ = spin(0, 0, 1e6, 2, tr(" $/h"));
  budget_->setSpecialValueText(tr("none"));
  budget_->setToolTip(
      tr("With a budget: the most goodput per dollar within it instead of the cheapest meeting "
         "the target (0: none)"));
  form->addRow(tr("Budget"), budget_);
  v->addWidget(load);

  auto* gpuGroup = new QGroupBox(tr("GPU types ($ per GPU-hour)"));
  auto* gl = new QVBoxLayout(gpuGroup);
  gpus_ = new QListWidget;
  gpus_->setToolTip(tr("GPU types to consider, at their list price per GPU-hour (resources/pricing/)"));
  const PresetRegistry& reg = PresetRegistry::builtin();
  for (const std::string& id : reg.gpus()) {
    const GpuPrice* price = gpuPrice(id);
    if (!price) continue;
    auto* item = new QListWidgetItem(
        QStringLiteral("%1  $%2").arg(QString::fromStdString(id)).arg(price->usdPerGpuHour, 0, 'f', 2));
    item->setData(kCandidateRole, QString::fromStdString(id));
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
    item->setToolTip(tr("%1: $%2 per GPU-hour (%3 %4, %5)")
                         .arg(QString::fromStdString(reg.gpu(id).name))
                         .arg(price->usdPerGpuHour, 0, 'f', 2)
                         .arg(QString::fromStdString(price->provider), QString::fromStdString(price->instance),
                              QString::fromStdString(price->date)));
    gpus_->addItem(item);
  }
  // Every row visible where there is room (the form scrolls otherwise).
  gpus_->setMinimumHeight(std::min(gpus_->count(), 5) * gpus_->sizeHintForRow(0) + 2 * gpus_->frameWidth());
  gpus_->setMaximumHeight(gpus_->count() * gpus_->sizeHintForRow(0) + 2 * gpus_->frameWidth() + 2);
  gl->addWidget(gpus_);
  auto* allNone = new QHBoxLayout;
  auto* all = new QPushButton(tr("All"));
  auto* none = new QPushButton(tr("None"));
  for (QPushButton* b : {all, none}) {
    b->setAutoDefault(false);
    allNone->addWidget(b);
  }
  allNone->addStretch();
  gl->addLayout(allNone);
  auto checkAll = [this](Qt::CheckState st) {
    for (int i = 0; i < gpus_->count(); ++i) gpus_->item(i)->setCheckState(st);
  };
  connect(all, &QPushButton::clicked, this, [checkAll] { checkAll(Qt::Checked); });
  connect(none, &QPushButton::clicked, this, [checkAll] { checkAll(Qt::Unchecked); });
  v->addWidget(gpuGroup);

  auto* space = new QGroupBox(tr("Deployments"));
  auto* sf = new QFormLayout(space);
  sf->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  tps_ = new QLineEdit(QStringLiteral("1,2,4,8"));
  tps_->setToolTip(tr("Tensor-parallel degrees, comma-separated powers of two"));
  sf->addRow(tr("TP set"), tps_);
  maxGpus_ = new QSpinBox;
  maxGpus_->setRange(1, 1024);
  maxGpus_->setValue(16);
  maxGpus_->setToolTip(tr("GPUs per deployment, at most"));
  sf->addRow(tr("Max GPUs"), maxGpus_);
  homogeneous_ = new QCheckBox(tr("homogeneous"));
  homogeneous_->setChecked(true);
  homogeneous_->setToolTip(tr("One GPU type, one TP, n instances"));
  mixed_ = new QCheckBox(tr("mixed (two types)"));
  mixed_->setChecked(true);
  mixed_->setToolTip(tr("Two GPU types side by side, the scenario's router spreading requests over both"));
  disaggregated_ = new QCheckBox(tr("disaggregated (P + D)"));
  disaggregated_->setToolTip(tr("A prefill pool and a decode pool on their own GPU types, policy static-pd"));
  auto* kinds = new QWidget;
  auto* kl = new QVBoxLayout(kinds);
  kl->setContentsMargins(0, 0, 0, 0);
  kl->setSpacing(2);
  for (QCheckBox* c : {homogeneous_, mixed_, disaggregated_}) kl->addWidget(c);
  sf->addRow(tr("Kinds"), kinds);
  prune_ = new QCheckBox(tr("prune (roofline, cost)"));
  prune_->setChecked(true);
  prune_->setToolTip(
      tr("Skip candidates whose roofline bound cannot carry the rate, and those costing more than "
         "the cheapest homogeneous one meeting the target"));
  sf->addRow(QString(), prune_);
  v->addWidget(space);

  formMessage_ = new QLabel;
  formMessage_->setWordWrap(true);
  formMessage_->setStyleSheet(QStringLiteral("color: %1;").arg(theme::kAlert.name()));
  formMessage_->setObjectName("PlanFormMessage");
  v->addWidget(formMessage_);

  run_ = new QPushButton(tr("Run plan"));
  run_->setDefault(true);
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  cancel_->setAutoDefault(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addStretch();
  v->addLayout(buttons);
  v->addStretch();

  for (QDoubleSpinBox* s : {rate_, sloTtft_, sloTpot_, target_, budget_})
    connect(s, &QDoubleSpinBox::valueChanged, this, &PlanWindow::validate);
  connect(maxGpus_, &QSpinBox::valueChanged, this, &PlanWindow::validate);
  connect(tps_, &QLineEdit::textChanged, this, &PlanWindow::validate);
  connect(gpus_, &QListWidget::itemChanged, this, &PlanWindow::validate);
  for (QCheckBox* c : {homogeneous_, mixed_, disaggregated_})
    connect(c, &QCheckBox::toggled, this, &PlanWindow::validate);
  connect(run_, &QPushButton::clicked, this, [this] {
    QString err;
    if (!start(&err) && !err.isEmpty()) formMessage_->setText(err);
  });
  connect(cancel_, &QPushButton::clicked, this, &PlanWindow::cancel);
  return page;
}

QWidget* PlanWindow::buildResults() {
  auto* page = new QWidget;
  auto* v = new QVBoxLayout(page);
  v->setContentsMargins(4, 0, 0, 0);
  answer_ = new QLabel(tr("Set the rate and the SLO, pick GPU types, and Run plan."));
  answer_->setWordWrap(true);
  answer_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont f = answer_->font();
  f.setPointSizeF(f.pointSizeF() * 1.15);
  f.setBold(true);
  answer_->setFont(f);
  answer_->setObjectName("PlanAnswer");
  v->addWidget(answer_);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setTextVisible(true);
  status_ = new QLabel;
  status_->setWordWrap(true);
  status_->setStyleSheet(QStringLiteral("color: %1;").arg(theme::kMuted.name()));
  v->addWidget(progress_);
  v->addWidget(status_);

  chart_ = new PlanChart;
  chart_->setMinimumHeight(220);
  chart_->viewport()->installEventFilter(this);
  auto* chartPage = new QWidget;
  auto* cl = new QVBoxLayout(chartPage);
  cl->setContentsMargins(0, 0, 0, 0);
  cl->setSpacing(2);
  cl->addWidget(chart_, 1);
  auto* chartBar = new QHBoxLayout;
  zoom_ = new QCheckBox(tr("Zoom to the front"));
  zoom_->setChecked(true);
  zoom_->setEnabled(false);
  zoom_->setToolTip(tr("Start the cost axis at the Pareto front (unchecked: up to the dearest deployment simulated)"));
  chartHelp_ = new QLabel(tr("Hover a point for its deployment; click finds it in the table, double-click opens it."));
  chartHelp_->setStyleSheet(QStringLiteral("color: %1;").arg(theme::kMuted.name()));
  chartHelp_->setMinimumWidth(0);
  chartHelp_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  chartBar->addWidget(zoom_);
  chartBar->addWidget(chartHelp_, 1);
  cl->addLayout(chartBar);

  auto* tablePage = new QWidget;
  auto* tl = new QVBoxLayout(tablePage);
  tl->setContentsMargins(0, 0, 0, 0);
  auto* tableBar = new QHBoxLayout;
  filter_ = new QComboBox;
  filter_->addItems({tr("Simulated"), tr("All candidates"), tr("Not simulated")});
  filter_->setToolTip(tr("Which candidates the table lists"));
  filter_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tableBar->addWidget(new QLabel(tr("Show")));
  tableBar->addWidget(filter_);
  tableBar->addStretch();
  open_ = new QPushButton(tr("Open as scenario"));
  open_->setEnabled(false);
  open_->setAutoDefault(false);
  open_->setToolTip(tr("Load the selected deployment into the main window (also: double-click a row or a point)"));
  tableBar->addWidget(open_);
  tl->addLayout(tableBar);
  table_ = new QTableWidget;
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->setVisible(false);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  const QStringList header = {tr("#"),      tr("Deployment"),  tr("$/hour"),        tr("Attainment %"),
                              tr("Status"), tr("TTFT p99 ms"), tr("TPOT p99 ms"),   tr("GPUs"),
                              tr("Kind"),   tr("$/M tok"),     tr("Goodput req/$"), tr("Why not simulated")};
  table_->setColumnCount(header.size());
  table_->setHorizontalHeaderLabels(header);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  tl->addWidget(table_, 1);

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(chartPage);
  split->addWidget(tablePage);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setChildrenCollapsible(false);
  split->setSizes({600, 400});
  v->addWidget(split, 1);

  auto* exports = new QHBoxLayout;
  exportChart_ = new QPushButton(tr("Export chart…"));
  exportCandidates_ = new QPushButton(tr("Export candidates.csv…"));
  exportPareto_ = new QPushButton(tr("Export pareto.csv…"));
  for (QPushButton* b : {exportChart_, exportCandidates_, exportPareto_}) {
    b->setEnabled(false);
    b->setAutoDefault(false);
    exports->addWidget(b);
  }
  exports->addStretch();
  v->addLayout(exports);

  connect(zoom_, &QCheckBox::toggled, this, [this](bool on) { chart_->setZoomToFront(on); });
  connect(filter_, &QComboBox::currentIndexChanged, this, [this] { applyFilter(); });
  connect(table_, &QTableWidget::itemSelectionChanged, this,
          [this] { open_->setEnabled(selectedCandidate().has_value()); });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (QTableWidgetItem* it = table_->item(row, 0)) openCandidate(it->data(kCandidateRole).toULongLong());
  });
  connect(open_, &QPushButton::clicked, this, [this] {
    if (const auto i = selectedCandidate()) openCandidate(*i);
  });
  connect(exportChart_, &QPushButton::clicked, this, [this] { exportFile(0); });
  connect(exportCandidates_, &QPushButton::clicked, this, [this] { exportFile(1); });
  connect(exportPareto_, &QPushButton::clicked, this, [this] { exportFile(2); });
  return page;
}

std::optional<plan::PlanOptions> PlanWindow::options(QString* error) const {
  auto fail = [&](const QString& m) -> std::optional<plan::PlanOptions> {
    if (error) *error = m;
    return std::nullopt;
  };
  if (!workloadError_.isEmpty()) return fail(tr("The scenario cannot be planned: %1").arg(workloadError_));
  plan::PlanOptions o;
  o.rate = rate_->value();
  if (sloTtft_->value() > 0) o.sloTtftS = sloTtft_->value() / 1000;
  if (sloTpot_->value() > 0) o.sloTpotS = sloTpot_->value() / 1000;
  o.target = target_->value() / 100;
  if (budget_->value() > 0) o.budget = budget_->value();
  o.maxGpus = maxGpus_->value();
  o.tps.clear();
  for (const QString& t : tps_->text().split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    const int tp = t.trimmed().toInt(&ok);
    if (!ok) return fail(tr("TP set: '%1' is not a whole number").arg(t.trimmed()));
    o.tps.push_back(tp);
  }
  for (int i = 0; i < gpus_->count(); ++i)
    if (gpus_->item(i)->checkState() == Qt::Checked)
      o.gpus.push_back(gpus_->item(i)->data(kCandidateRole).toString().toStdString());
  o.homogeneous = homogeneous_->isChecked();
  o.mixed = mixed_->isChecked();
  o.disaggregated = disaggregated_->isChecked();
  o.prune = prune_->isChecked();
  try {
    plan::validatePlanOptions(o);
  } catch (const InputError& e) {
    return fail(planFieldMessage(QString::fromStdString(e.what())));
  }
  // Core reads no GPU list as "every priced GPU"; here an empty list is a mistake.
  if (o.gpus.empty()) return fail(tr("GPU types: check at least one"));
  return o;
}

void PlanWindow::validate() {
  QString err;
  const bool ok = options(&err).has_value();
  formMessage_->setText(ok ? QString() : err);
  run_->setEnabled(ok && !running());
}

bool PlanWindow::start(QString* error) {
  if (running()) {
    if (error) *error = tr("A plan is running");
    return false;
  }
  const auto o = options(error);
  if (!o) return false;
  if (worker_.joinable()) worker_.join();
  auto job = std::make_shared<Job>();
  job->options = *o;
  job->clock.start();
  job_ = job;
  worker_ = std::thread([job, base = base_] {
    try {
      job->result = plan::runPlan(
          base, job->options,
          [job](std::size_t d, std::size_t t) {
            job->total = t;
            job->done = d;
          },
          &job->cancel);
    } catch (const std::exception& e) {
      if (!job->cancel) job->error = e.what();
    }
    job->ended = true;
  });
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setRange(0, 0);  // busy until the runs are counted
  status_->setText(tr("Enumerating and pruning deployments…"));
  timer_->start();
  return true;
}

void PlanWindow::cancel() {
  if (job_) job_->cancel = true;
}

bool PlanWindow::running() const {
  return job_ && !job_->ended;
}

bool PlanWindow::waitDone(int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (running() || timer_->isActive()) {
    if (t.elapsed() > timeoutMs) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    poll();
  }
  return true;
}

void PlanWindow::poll() {
  if (!job_) return;
  const std::size_t done = job_->done, total = job_->total;
  if (total > 0) {
    progress_->setRange(0, static_cast<int>(total));
    progress_->setValue(static_cast<int>(done));
    status_->setText(tr("%1 / %2 runs, %3 s").arg(done).arg(total).arg(job_->clock.elapsed() / 1000.0, 0, 'f', 1));
  }
  if (!job_->ended) return;
  timer_->stop();
  if (worker_.joinable()) worker_.join();
  cancel_->setEnabled(false);
  progress_->setRange(0, 1);
  if (!job_->error.empty()) {
    progress_->setValue(0);
    status_->setText(tr("Plan failed: %1").arg(QString::fromStdString(job_->error)));
  } else if (job_->cancel) {
    progress_->setValue(0);
    status_->setText(tr("Cancelled after %1 of %2 runs").arg(done).arg(total));
  } else {
    progress_->setValue(1);
    result_ = std::make_unique<plan::PlanResult>(std::move(job_->result));
    resultOptions_ = job_->options;
    showResults();
  }
  validate();
  emit finished();
}

void PlanWindow::showResults() {
  const plan::PlanResult& r = *result_;
  answer_->setText(planAnswer(r, resultOptions_));
  std::size_t roofline = 0, costBound = 0, overBudget = 0;
  for (const plan::Outcome& o : r.outcomes) {
    roofline += o.status == plan::Status::Pruned;
    costBound += o.status == plan::Status::CostBound;
    overBudget += o.status == plan::Status::OverBudget;
  }
  QString pruned = tr("roofline %1, cost bound %2").arg(roofline).arg(costBound);
  if (resultOptions_.budget) pruned += tr(", over budget %1").arg(overBudget);
  status_->setText(tr("%1 candidates: unfit %2, pruned %3 (%4), simulated %5, meeting the target %6; %7 s. "
                      "%8 requests over %9 s.")
                       .arg(r.candidates.size())
                       .arg(r.unfit)
                       .arg(r.pruned)
                       .arg(pruned)
                       .arg(r.simulated)
                       .arg(r.met)
                       .arg(r.wallS, 0, 'f', 1)
                       .arg(r.demand.requests)
                       .arg(r.demand.spanS, 0, 'f', 0));
  drawChart();
  fillTable();
  for (QPushButton* b : {exportChart_, exportCandidates_, exportPareto_}) b->setEnabled(true);
  if (r.winner) selectCandidate(*r.winner);
}

void PlanWindow::drawChart() {
  const plan::PlanResult& r = *result_;
  points_.clear();
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.outcomes[i].status == plan::Status::Simulated)
      points_.push_back({QPointF(r.candidates[i].usdPerHour, 100 * r.outcomes[i].attainment), i});
  front_ = r.pareto;
  if (points_.empty()) {
    chart_->clearData(tr("no candidate simulated"));
    zoom_->setEnabled(false);
    return;
  }
  PlanChart::Data d;
  d.title = tr("Cost vs SLO attainment at %1 req/s").arg(resultOptions_.rate, 0, 'g', 6);
  for (const ChartPoint& p : points_) d.simulated.push_back(p.value);
  for (std::size_t i : front_) d.front.emplace_back(r.candidates[i].usdPerHour, 100 * r.outcomes[i].attainment);
  d.target = 100 * resultOptions_.target;
  d.targetName = tr("target %1").arg(targetText(resultOptions_.target));
  if (r.winner) {
    d.winner = QPointF(r.candidates[*r.winner].usdPerHour, 100 * r.outcomes[*r.winner].attainment);
    d.winnerLabel =
        QString::fromStdString(r.candidates[*r.winner].deployment()) + ", " + usd(r.candidates[*r.winner].usdPerHour);
  }
  chart_->setData(std::move(d));
  zoom_->setEnabled(chart_->zoomUseful());
}

void PlanWindow::fillTable() {
  const plan::PlanResult& r = *result_;
  std::vector<bool> onFront(r.candidates.size(), false);
  for (std::size_t i : r.pareto) onFront[i] = true;
  table_->setSortingEnabled(false);
  table_->clearContents();
  table_->setRowCount(static_cast<int>(r.candidates.size()));
  QFont bold = table_->font();
  bold.setBold(true);
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const plan::Candidate& c = r.candidates[i];
    const plan::Outcome& o = r.outcomes[i];
    const int row = static_cast<int>(i);
    const bool sim = o.status == plan::Status::Simulated;
    auto* idx = new NumItem(QString::number(i), static_cast<double>(i));
    idx->setData(kCandidateRole, static_cast<qulonglong>(i));
    table_->setItem(row, 0, idx);
    auto* dep = new QTableWidgetItem(QString::fromStdString(c.deployment()));
    dep->setToolTip(tr("%1, policy %2").arg(QString::fromStdString(c.deployment()), QString::fromStdString(c.policy)));
    table_->setItem(row, 1, dep);
    table_->setItem(row, 8, new QTableWidgetItem(QString::fromLatin1(plan::kindName(c.kind))));
    table_->setItem(row, 7, new NumItem(QString::number(c.gpus), c.gpus));
    table_->setItem(row, 2, new NumItem(QString::number(c.usdPerHour, 'f', 2), c.usdPerHour));
    QString status = QString::fromLatin1(plan::statusName(o.status));
    if (sim) {
      status = o.meets ? tr("meets") : tr("misses");
      if (onFront[i]) status += tr(" · front");
      if (r.winner && *r.winner == i) status = tr("winner");
    }
    auto* st = new QTableWidgetItem(status);
    if (!sim) st->setForeground(theme::kMuted);
    table_->setItem(row, 4, st);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    table_->setItem(row, 3, new NumItem(sim ? fixed(100 * o.attainment, 1) : "–", sim ? 100 * o.attainment : nan));
    table_->setItem(row, 5, new NumItem(sim ? fixed(1000 * o.ttftP99, 0) : "–", sim ? 1000 * o.ttftP99 : nan));
    table_->setItem(row, 6, new NumItem(sim ? fixed(1000 * o.tpotP99, 1) : "–", sim ? 1000 * o.tpotP99 : nan));
    const double perM = sim && o.usdPerMillionTokens ? *o.usdPerMillionTokens : nan;
    table_->setItem(row, 9, new NumItem(fixed(perM, 2), perM));
    const double gpd = sim && o.goodputPerUsd ? *o.goodputPerUsd : nan;
    table_->setItem(row, 10, new NumItem(fixed(gpd, 0), gpd));
    auto* why = new QTableWidgetItem(QString::fromStdString(o.reason));
    why->setToolTip(QString::fromStdString(o.reason));
    table_->setItem(row, 11, why);
    if (r.winner && *r.winner == i)
      for (int col = 0; col < table_->columnCount(); ++col) table_->item(row, col)->setFont(bold);
  }
  table_->setSortingEnabled(true);
  table_->sortByColumn(2, Qt::AscendingOrder);
  table_->resizeColumnsToContents();
  // The reason column stretches; a long reason is in its tooltip.
  table_->setColumnWidth(1, std::min(table_->columnWidth(1), 360));
  filter_->setItemText(0, tr("Simulated (%1)").arg(r.simulated));
  filter_->setItemText(1, tr("All candidates (%1)").arg(r.candidates.size()));
  filter_->setItemText(2, tr("Not simulated (%1)").arg(r.candidates.size() - r.simulated));
  applyFilter();
}

void PlanWindow::applyFilter() {
  if (!result_) return;
  const int mode = filter_->currentIndex();
  for (int row = 0; row < table_->rowCount(); ++row) {
    const std::size_t i = table_->item(row, 0)->data(kCandidateRole).toULongLong();
    const bool sim = result_->outcomes.at(i).status == plan::Status::Simulated;
    table_->setRowHidden(row, mode == 0 ? !sim : mode == 2 ? sim : false);
  }
}

int PlanWindow::rowOf(std::size_t i) const {
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, 0) && table_->item(row, 0)->data(kCandidateRole).toULongLong() == i)
      return table_->isRowHidden(row) ? -1 : row;
  return -1;
}

void PlanWindow::selectCandidate(std::size_t i) {
  int row = rowOf(i);
  if (row < 0) {  // hidden by the filter: show everything
    filter_->setCurrentIndex(1);
    row = rowOf(i);
  }
  if (row < 0) return;
  table_->selectRow(row);
  table_->scrollToItem(table_->item(row, 0), QAbstractItemView::PositionAtCenter);
}

std::optional<std::size_t> PlanWindow::selectedCandidate() const {
  const auto sel = table_->selectedItems();
  if (sel.isEmpty()) return std::nullopt;
  if (QTableWidgetItem* it = table_->item(sel.front()->row(), 0)) return it->data(kCandidateRole).toULongLong();
  return std::nullopt;
}

std::optional<std::size_t> PlanWindow::candidateAt(QPoint viewPos) const {
  std::optional<std::size_t> best;
  double bestD = kPickRadiusPx * kPickRadiusPx;
  const auto [xLo, xHi] = chart_->xRange();
  for (const ChartPoint& p : points_) {
    if (p.value.x() < xLo || p.value.x() > xHi) continue;  // off the axis (zoomed to the front)
    const QPoint q = chart_->viewPosOf(p.value);
    const double dx = q.x() - viewPos.x(), dy = q.y() - viewPos.y();
    if (dx * dx + dy * dy <= bestD) {
      bestD = dx * dx + dy * dy;
      best = p.candidate;
    }
  }
  return best;
}

Scenario PlanWindow::candidateScenarioOf(std::size_t i) const {
  return plan::candidateScenario(result_->base, result_->candidates.at(i));
}

void PlanWindow::openCandidate(std::size_t i) {
  if (!result_ || i >= result_->candidates.size()) return;
  emit openPoint(candidateScenarioOf(i),
                 tr("plan: %1").arg(QString::fromStdString(result_->candidates[i].deployment())));
}

bool PlanWindow::eventFilter(QObject* o, QEvent* e) {
  if (o != chart_->viewport() || !result_) return QDialog::eventFilter(o, e);
  switch (e->type()) {
    case QEvent::MouseMove: {
      auto* m = static_cast<QMouseEvent*>(e);
      const QPoint pos = m->position().toPoint();
      const auto i = candidateAt(pos);
      if (!i) {
        QToolTip::hideText();
        return false;
      }
      const plan::Candidate& c = result_->candidates[*i];
      const plan::Outcome& out = result_->outcomes[*i];
      QString tip = tr("#%1 %2 (%3)\n%4, %5 GPUs\nSLO attainment %6%7\nTTFT p99 %8, TPOT p99 %9\n"
                       "double-click: open as a scenario")
                        .arg(*i)
                        .arg(QString::fromStdString(c.deployment()), QString::fromLatin1(plan::kindName(c.kind)),
                             usd(c.usdPerHour))
                        .arg(c.gpus)
                        .arg(pct(out.attainment), out.meets ? tr(" (meets the target)") : tr(" (below the target)"),
                             ms(out.ttftP99), ms(out.tpotP99));
      QToolTip::showText(chart_->viewport()->mapToGlobal(pos), tip, chart_->viewport());
      return true;
    }
    case QEvent::MouseButtonPress:
      pressPos_ = static_cast<QMouseEvent*>(e)->position().toPoint();
      return false;
    case QEvent::MouseButtonRelease: {
      auto* m = static_cast<QMouseEvent*>(e);
      const QPoint pos = m->position().toPoint();
      if (m->button() == Qt::LeftButton && (pos - pressPos_).manhattanLength() <= 3)
        if (const auto i = candidateAt(pos)) selectCandidate(*i);
      return false;
    }
    case QEvent::MouseButtonDblClick: {
      auto* m = static_cast<QMouseEvent*>(e);
      if (m->button() != Qt::LeftButton) return false;
      if (const auto i = candidateAt(m->position().toPoint())) {
        openCandidate(*i);
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

bool PlanWindow::exportChart(const QString& path) const {
  if (!result_) return false;
  return path.endsWith(".svg", Qt::CaseInsensitive) ? chart_->exportSvg(path) : chart_->exportPng(path);
}

namespace {
bool writeText(const QString& path, const std::string& text) {
  QSaveFile f(path);  // atomic: a failed write leaves no half-written file
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  if (f.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())) {
    f.cancelWriting();
    return false;
  }
  return f.commit();
}
}  // namespace

bool PlanWindow::exportCandidatesCsv(const QString& path) const {
  return result_ && writeText(path, plan::candidatesCsv(*result_));
}

bool PlanWindow::exportParetoCsv(const QString& path) const {
  return result_ && writeText(path, plan::paretoCsv(*result_));
}

void PlanWindow::exportFile(int what) {
  static const char* names[] = {"/pareto.png", "/candidates.csv", "/pareto.csv"};
  const QString filter = what == 0 ? tr("PNG image (*.png);;SVG image (*.svg)") : tr("CSV (*.csv)");
  const QString p =
      QFileDialog::getSaveFileName(this, tr("Export"), ChartExportDialog::defaultParentFolder() + names[what], filter);
  if (p.isEmpty()) return;
  const bool ok = what == 0 ? exportChart(p) : what == 1 ? exportCandidatesCsv(p) : exportParetoCsv(p);
  if (!ok) {
    QMessageBox::warning(this, tr("Plan deployment"), tr("Could not write %1").arg(p));
    return;
  }
  ChartExportDialog::rememberFolder(p);  // remembers the file's folder
}

}  // namespace sl::ui
