#include "ui/scenario/scenario_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "cost/presets.h"
#include "engine/sim_config.h"
#include "policy/registry.h"
#include "scenario/limits.h"
#include "ui/common/theme.h"
#include "util/error.h"
#include "workload/presets.h"
#include "workload/trace_formats.h"

namespace sl::ui {

static_assert(ScenarioPanel::kMaxLiveSpecK == kMaxSpeculativeK, "the control offers every k the engine takes");

namespace {
constexpr double kRateLo = 0.1, kRateHi = 200.0;
constexpr int kSliderSteps = 1000;

QString fmtNum(double v) { return QString::number(v, 'g', 7); }

QGroupBox* group(const QString& title, QFormLayout*& form) {
  auto* g = new QGroupBox(title);
  form = new QFormLayout(g);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  // A label too long for a narrow dock goes above its field instead of
  // widening the panel past the dock (which clipped it on both sides).
  form->setRowWrapPolicy(QFormLayout::WrapLongRows);
  form->setLabelAlignment(Qt::AlignLeft);
  form->setContentsMargins(8, 6, 8, 8);
  form->setVerticalSpacing(5);
  return g;
}

QLabel* errorLabel() {
  auto* l = new QLabel;
  l->setWordWrap(true);
  l->setStyleSheet(QString("color: %1;").arg(theme::kAlert.name()));
  l->hide();
  return l;
}
}  // namespace

double ScenarioPanel::sliderToRate(int v) {
  return kRateLo * std::pow(kRateHi / kRateLo, static_cast<double>(v) / kSliderSteps);
}
int ScenarioPanel::rateToSlider(double r) {
  r = std::clamp(r, kRateLo, kRateHi);
  return static_cast<int>(std::lround(std::log(r / kRateLo) / std::log(kRateHi / kRateLo) * kSliderSteps));
}

namespace {

// A knob editor that lets any number be typed (a minus sign, too many
// digits) instead of dropping keys or clamping: out-of-range text stays
// "intermediate", so it is never applied, and the panel says why inline.
class KnobSpinBox : public QDoubleSpinBox {
public:
  using QDoubleSpinBox::QDoubleSpinBox;
  QValidator::State validate(QString& text, int& pos) const override {
    QString t = text;
    if (!suffix().isEmpty() && t.endsWith(suffix())) t.chop(suffix().size());
    t = t.trimmed();
    if (t.isEmpty() || t == "-" || t == "+" || t == locale().decimalPoint()) return QValidator::Intermediate;
    bool ok = false;
    const double v = locale().toDouble(t, &ok);
    if (!ok) return QValidator::Invalid;
    if (v < minimum() || v > maximum() || (decimals() == 0 && v != std::floor(v))) return QValidator::Intermediate;
    return QDoubleSpinBox::validate(text, pos);
  }
  // Enter on refused text: back to the value the knob has (never clamped).
  void fixup(QString& input) const override { input = prefix() + textFromValue(value()) + suffix(); }
};

// A spin box re-sends its value when it corrects refused text back to it:
// true (and nothing to do) when `v` is the value it had.
bool unchanged(QDoubleSpinBox* sb, double v) {
  if (sb->property("applied").toDouble() == v) return true;
  sb->setProperty("applied", v);
  return false;
}

// "12.5 req/s", "850 req/s", "12.3 k req/s": short enough for its column
// whatever the scenario's rate.
QString rateText(double r) {
  if (r >= 1000) return QString::number(r / 1000.0, 'f', r >= 100000 ? 0 : 1) + QObject::tr(" k req/s");
  return QString::number(r, 'f', r >= 100 ? 0 : 1) + QObject::tr(" req/s");
}

}  // namespace

ScenarioPanel::ScenarioPanel(QWidget* parent) : QWidget(parent) {
  auto* root = new QVBoxLayout(this);
  root->setContentsMargins(6, 6, 6, 6);
  root->setSpacing(8);

  // ---- live
  QFormLayout* f = nullptr;
  auto* live = group(tr("Live"), f);
  rateSlider_ = new QSlider(Qt::Horizontal);
  rateSlider_->setRange(0, kSliderSteps);
  rateSlider_->setToolTip(tr("Arrival rate of the running simulation (log scale, %1–%2 req/s).\n"
                             "Applied at the next event and recorded in the run's change log,\n"
                             "so the run can be replayed exactly; marked on the time charts.")
                              .arg(kRateLo).arg(kRateHi));
  rateLabel_ = new QLabel;
  rateLabel_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance("99.9 k req/s "));
  rateLabel_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  auto* rateRow = new QHBoxLayout;
  rateRow->addWidget(rateSlider_, 1);
  rateRow->addWidget(rateLabel_);
  f->addRow(tr("Arrival rate"), rateRow);
  connect(rateSlider_, &QSlider::valueChanged, this, [this](int v) {
    rateLabel_->setText(rateText(sliderToRate(v)));
    if (!filling_ && !rateSlider_->isSliderDown()) emit liveRateChanged(sliderToRate(v));
  });
  // A click on the handle that does not move it is no change (it logged one,
  // at the slider's rounding of the rate).
  connect(rateSlider_, &QSlider::sliderPressed, this, [this] { pressedAt_ = rateSlider_->value(); });
  connect(rateSlider_, &QSlider::sliderReleased, this, [this] {
    if (rateSlider_->value() != pressedAt_) emit liveRateChanged(sliderToRate(rateSlider_->value()));
  });
  // Closed loop: the number of clients instead of a rate (docs/user-guide.md).
  clientsSlider_ = new QSlider(Qt::Horizontal);
  clientsSlider_->setRange(1, 256);
  clientsSlider_->setToolTip(tr("Closed-loop clients of the running simulation (1–256). More clients start at\n"
                                "once; fewer retire as their current request finishes. Recorded in the\n"
                                "run's change log, so the run can be replayed exactly."));
  clientsLabel_ = new QLabel;
  clientsLabel_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  clientsLabel_->setMinimumWidth(rateLabel_->minimumWidth());
  clientsRow_ = new QWidget;
  auto* clientsRow = new QHBoxLayout(clientsRow_);
  clientsRow->setContentsMargins(0, 0, 0, 0);
  clientsRow->addWidget(clientsSlider_, 1);
  clientsRow->addWidget(clientsLabel_);
  clientsRowLabel_ = new QLabel(tr("Clients"));
  f->addRow(clientsRowLabel_, clientsRow_);
  clientsRow_->hide();
  clientsRowLabel_->hide();
  connect(clientsSlider_, &QSlider::valueChanged, this, [this](int v) {
    clientsLabel_->setText(QString::number(v));
    if (!filling_ && !clientsSlider_->isSliderDown()) emit liveClientsChanged(v);
  });
  connect(clientsSlider_, &QSlider::sliderPressed, this, [this] { pressedAt_ = clientsSlider_->value(); });
  connect(clientsSlider_, &QSlider::sliderReleased, this, [this] {
    if (clientsSlider_->value() != pressedAt_) emit liveClientsChanged(clientsSlider_->value());
  });
  // Speculative decoding (cluster.speculative): on/off and the draft length
  // k, applied to the running simulation from its next step (0 = off).
  specOn_ = new QCheckBox(tr("on"));
  specK_ = new QSpinBox;
  specK_->setRange(1, kMaxLiveSpecK);
  specK_->setPrefix(tr("k = "));
  specK_->setValue(3);
  specK_->setKeyboardTracking(false);  // typing "12" is one change, not 1 then 12
  auto* specRow = new QHBoxLayout;
  specRow->addWidget(specOn_);
  specRow->addWidget(specK_, 1);
  specRowLabel_ = new QLabel(tr("Speculation"));
  f->addRow(specRowLabel_, specRow);
  auto sendK = [this](int k) {
    pendingSpecK_ = k;
    pendingSince_.start();
    emit liveSpeculativeKChanged(k);
  };
  connect(specOn_, &QCheckBox::toggled, this, [this, sendK](bool on) {
    if (!filling_) sendK(on ? specK_->value() : 0);
  });
  connect(specK_, &QSpinBox::valueChanged, this, [this, sendK](int k) {
    if (!filling_ && specOn_->isChecked()) sendK(k);
  });
  setLiveSpeculation(-1, false);
  root->addWidget(live);

  // ---- cluster
  auto* cluster = group(tr("Cluster"), f);
  instances_ = new QSpinBox;
  instances_->setRange(1, kMaxInstances);  // what a scenario file may hold
  instances_->setToolTip(tr("Number of serving instances (each one model replica on tp GPUs)"));
  f->addRow(tr("Instances"), instances_);
  gpu_ = new QComboBox;
  for (const GpuSpec& g : PresetRegistry::builtin().allGpus())
    gpu_->addItem(QString::fromStdString(g.name), QString::fromStdString(g.id));
  gpu_->setToolTip(tr("GPU preset (resources/hardware)"));
  f->addRow(tr("GPU"), gpu_);
  tp_ = new QComboBox;
  for (int t : {1, 2, 4, 8}) tp_->addItem(QString::number(t), t);
  tp_->setToolTip(tr("Tensor parallelism: GPUs per instance"));
  f->addRow(tr("TP"), tp_);
  // Precision (docs/cost-model.md, "Precision") of the weights and the KV cache.
  modelDtype_ = new QComboBox;
  kvDtype_ = new QComboBox;
  for (QComboBox* c : {modelDtype_, kvDtype_})
    for (const char* d : {"bf16", "fp16", "fp8"}) c->addItem(QString(d), QString(d));
  modelDtype_->setToolTip(tr("Weights: fp8 halves the layers' weight bytes and runs them at the GPU's FP8 peak"));
  kvDtype_->setToolTip(tr("KV cache: fp8 halves the bytes per token (twice the KV capacity)"));
  f->addRow(tr("Weights"), modelDtype_);
  f->addRow(tr("KV cache"), kvDtype_);
  kvFraction_ = new QDoubleSpinBox;
  kvFraction_->setRange(0.01, 1.0);
  kvFraction_->setDecimals(2);
  kvFraction_->setSingleStep(0.05);
  kvFraction_->setToolTip(tr("Fraction of the free GPU memory given to the KV cache (0.01–1)"));
  f->addRow(tr("KV cap fraction"), kvFraction_);
  nicGbps_ = new QDoubleSpinBox;
  nicGbps_->setRange(1, 3200);
  nicGbps_->setDecimals(0);
  nicGbps_->setSuffix(tr(" Gbps"));
  nicGbps_->setToolTip(tr("Fabric: each node's NIC bandwidth (KV transfers between nodes share it)"));
  f->addRow(tr("NIC"), nicGbps_);
  gpusPerNode_ = new QSpinBox;
  gpusPerNode_->setRange(1, 16);
  gpusPerNode_->setToolTip(tr("Fabric: GPUs per node (instances on one node copy KV over NVLink)"));
  f->addRow(tr("GPUs per node"), gpusPerNode_);
  root->addWidget(cluster);

  // ---- model + workload
  auto* work = group(tr("Model and workload"), f);
  model_ = new QComboBox;
  for (const ModelSpec& m : PresetRegistry::builtin().allModels())
    model_->addItem(QString::fromStdString(m.name), QString::fromStdString(m.id));
  f->addRow(tr("Model"), model_);
  workload_ = new QComboBox;
  workload_->addItem(tr("(scenario's own lengths)"), QString());
  for (const auto& [id, desc] : workloadPresets()) {
    workload_->addItem(QString::fromStdString(id), QString::fromStdString(id));
    workload_->setItemData(workload_->count() - 1, QString::fromStdString(desc), Qt::ToolTipRole);
  }
  f->addRow(tr("Workload"), workload_);
  // Length distributions: constant, uniform [min, max] or lognormal by
  // median and p90; other kinds (empirical, mixture) are kept from the file.
  const char* lengthNames[3] = {QT_TR_NOOP("Input"), QT_TR_NOOP("Reasoning"), QT_TR_NOOP("Answer")};
  for (int i = 0; i < 3; ++i) {
    LengthEditor& e = lengths_[i];
    auto* row = new QWidget;
    auto* rl = new QHBoxLayout(row);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->setSpacing(4);
    e.kind = new QComboBox;
    e.kind->addItem(tr("constant"), QString("constant"));
    e.kind->addItem(tr("uniform"), QString("uniform"));
    e.kind->addItem(tr("lognormal"), QString("lognormal"));
    e.kind->addItem(tr("from the file"), QString("file"));
    e.kind->setToolTip(tr("%1 tokens: constant (value), uniform (min, max) or lognormal (median, p90); "
                          "empirical and mixture distributions are kept from the scenario file")
                           .arg(tr(lengthNames[i])));
    e.a = new QDoubleSpinBox;
    e.b = new QDoubleSpinBox;
    for (QDoubleSpinBox* sb : {e.a, e.b}) {
      sb->setRange(0, 1e7);
      sb->setDecimals(0);
      sb->setMinimumWidth(44);  // the row must fit a narrow dock (the range alone would ask ~70 px)
      sb->setButtonSymbols(QAbstractSpinBox::NoButtons);
      connect(sb, &QDoubleSpinBox::valueChanged, this, [this](double) { markDirty(); });
    }
    rl->addWidget(e.kind, 1);
    rl->addWidget(e.a, 1);
    rl->addWidget(e.b, 1);
    f->addRow(tr("%1 tokens").arg(tr(lengthNames[i])), row);
    connect(e.kind, &QComboBox::currentIndexChanged, this, [this, i](int) {
      LengthEditor& le = lengths_[i];
      const QString k = le.kind->currentData().toString();
      le.a->setToolTip(k == "constant" ? tr("value") : k == "uniform" ? tr("min") : k == "lognormal" ? tr("median") : QString());
      le.b->setToolTip(k == "uniform" ? tr("max") : k == "lognormal" ? tr("p90") : QString());
      updateLengthRows();
      markDirty();
    });
  }
  requests_ = new QSpinBox;
  requests_->setRange(0, 10'000'000);
  requests_->setSingleStep(100);
  requests_->setToolTip(tr("Number of requests the workload generates"));
  f->addRow(tr("Requests"), requests_);
  rate_ = new QDoubleSpinBox;
  rate_->setRange(0.01, 10000);
  rate_->setDecimals(2);
  rate_->setSuffix(tr(" req/s"));
  rate_->setToolTip(tr("Initial arrival rate (Poisson/Gamma); the Live slider changes it mid-run"));
  f->addRow(tr("Initial rate"), rate_);
  arrivals_ = new QComboBox;
  arrivals_->addItem(tr("Poisson"), QString("poisson"));
  arrivals_->addItem(tr("Gamma (bursty)"), QString("gamma"));
  arrivals_->addItem(tr("Rate schedule (from the file)"), QString("schedule"));
  arrivals_->addItem(tr("Closed loop (from the file)"), QString("closed"));
  arrivals_->addItem(tr("Trace file"), QString("trace"));
  arrivals_->setToolTip(tr("Arrival process: Poisson, Gamma with a coefficient of variation, the scenario's "
                           "rate schedule, or the timestamps of a trace file"));
  f->addRow(tr("Arrivals"), arrivals_);
  cv_ = new QDoubleSpinBox;
  cv_->setRange(0.1, 20);
  cv_->setDecimals(2);
  cv_->setSingleStep(0.1);
  cv_->setToolTip(tr("Gamma arrivals: coefficient of variation of the gaps (1 = Poisson, > 1 burstier)"));
  f->addRow(tr("CV"), cv_);
  auto* traceRow = new QWidget;
  auto* tl = new QHBoxLayout(traceRow);
  tl->setContentsMargins(0, 0, 0, 0);
  tracePath_ = new QLineEdit;
  tracePath_->setReadOnly(true);
  tracePath_->setPlaceholderText(tr("no trace"));
  traceBrowse_ = new QPushButton(tr("Browse…"));
  tl->addWidget(tracePath_, 1);
  tl->addWidget(traceBrowse_);
  f->addRow(tr("Trace"), traceRow);
  traceFormat_ = new QLabel;
  traceFormat_->setStyleSheet(QString("color: %1;").arg(theme::kMuted.name()));
  f->addRow(traceFormat_);
  timeScale_ = new QDoubleSpinBox;
  timeScale_->setRange(0.001, 1000);
  timeScale_->setDecimals(3);
  timeScale_->setSingleStep(0.1);
  timeScale_->setToolTip(tr("Trace: multiply the timestamps (0.5 = twice as fast, as Arrow does)"));
  f->addRow(tr("Time scale"), timeScale_);
  auto* winRow = new QWidget;
  auto* wl = new QHBoxLayout(winRow);
  wl->setContentsMargins(0, 0, 0, 0);
  wl->setSpacing(4);
  windowStart_ = new QDoubleSpinBox;
  windowEnd_ = new QDoubleSpinBox;
  for (QDoubleSpinBox* sb : {windowStart_, windowEnd_}) {
    sb->setRange(0, 1e9);
    sb->setDecimals(1);
    sb->setSuffix(tr(" s"));
    sb->setMinimumWidth(50);  // not the width of "1000000000.0 s": the row must fit a narrow dock
    sb->setButtonSymbols(QAbstractSpinBox::NoButtons);
    wl->addWidget(sb, 1);
    connect(sb, &QDoubleSpinBox::valueChanged, this, [this](double) { markDirty(); });
  }
  windowStart_->setSpecialValueText(tr("start"));
  windowEnd_->setSpecialValueText(tr("end"));
  winRow->setToolTip(tr("Trace: keep the arrivals in [from, to) seconds of the trace (start / end: no bound)"));
  f->addRow(tr("Window"), winRow);
  connect(timeScale_, &QDoubleSpinBox::valueChanged, this, [this](double) { markDirty(); });
  root->addWidget(work);

  // ---- policy
  auto* pol = group(tr("Policy"), f);
  policy_ = new QComboBox;
  auto* model = new QStandardItemModel(policy_);
  std::string family;
  for (const PolicyInfo& p : policyCatalog()) {
    if (p.family != family) {
      family = p.family;
      auto* h = new QStandardItem(QString::fromStdString(family));
      h->setFlags(Qt::NoItemFlags);
      QFont bf = font();
      bf.setBold(true);
      h->setFont(bf);
      model->appendRow(h);
    }
    auto* it = new QStandardItem("   " + QString::fromStdString(p.id));
    it->setData(QString::fromStdString(p.id), Qt::UserRole);
    it->setToolTip(QString::fromStdString(p.description));
    model->appendRow(it);
  }
  policy_->setModel(model);
  f->addRow(tr("&Policy"), policy_);
  policyDesc_ = new QLabel;
  policyDesc_->setWordWrap(true);
  policyDesc_->setStyleSheet(QString("color: %1;").arg(theme::kMuted.name()));
  f->addRow(policyDesc_);
  router_ = new QComboBox;
  for (const char* r : {"round-robin", "least-loaded", "least-kv", "random", "power-of-two"}) router_->addItem(r, QString(r));
  router_->setToolTip(tr("How the global scheduler picks an instance for each arrival"));
  f->addRow(tr("Router"), router_);
  knobBox_ = new QWidget;
  knobForm_ = new QFormLayout(knobBox_);
  knobForm_->setContentsMargins(0, 0, 0, 0);
  knobForm_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  knobForm_->setRowWrapPolicy(QFormLayout::WrapLongRows);
  f->addRow(knobBox_);
  root->addWidget(pol);

  apply_ = new QPushButton(tr("Apply and reset"));
  apply_->setToolTip(tr("Restart the run with the edited scenario (Ctrl+Enter)"));
  apply_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
  apply_->setEnabled(false);
  root->addWidget(apply_);
  error_ = errorLabel();
  error_->setObjectName("ApplyError");
  root->addWidget(error_);
  root->addStretch(1);
  // Long preset names must not widen the dock: combos shrink and elide.
  for (QComboBox* c : findChildren<QComboBox*>()) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(10);
  }
  for (const LengthEditor& e : lengths_) e.kind->setMinimumContentsLength(5);

  connect(apply_, &QPushButton::clicked, this, &ScenarioPanel::applyRequested);
  connect(policy_, &QComboBox::currentIndexChanged, this, [this](int) {
    if (filling_) return;
    rebuildKnobs(policy_->currentData(Qt::UserRole).toString().toStdString(), nlohmann::json::object());
    markDirty();
  });
  for (QComboBox* c : {gpu_, tp_, modelDtype_, kvDtype_, model_, workload_, router_})
    connect(c, &QComboBox::currentIndexChanged, this, [this](int) { markDirty(); });
  // A preset sets the lengths: show them (read-only); none: the scenario's own, editable.
  connect(workload_, &QComboBox::currentIndexChanged, this, [this](int) {
    if (!filling_) fillLengths();
  });
  for (QSpinBox* s : {instances_, requests_, gpusPerNode_})
    connect(s, &QSpinBox::valueChanged, this, [this](int) { markDirty(); });
  connect(arrivals_, &QComboBox::currentIndexChanged, this, [this](int) {
    updateArrivalRows();
    markDirty();
  });
  connect(traceBrowse_, &QPushButton::clicked, this, [this] {
    const QString start = tracePath_->text().isEmpty() ? QString() : QFileInfo(tracePath_->text()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a request trace"), start,
                                                      tr("Traces (*.csv *.jsonl *.json *.txt);;All files (*)"));
    if (!path.isEmpty()) setTraceFile(path);
  });
  for (QDoubleSpinBox* s : {kvFraction_, rate_, nicGbps_, cv_})
    connect(s, &QDoubleSpinBox::valueChanged, this, [this](double) { markDirty(); });
  connect(rate_, &QDoubleSpinBox::valueChanged, this, [this](double) {
    if (!filling_) rateEdited_ = true;
  });
}

void ScenarioPanel::markDirty() {
  if (filling_) return;
  dirty_ = true;
  apply_->setEnabled(true);
}

void ScenarioPanel::rebuildKnobs(const std::string& policyId, const nlohmann::json& values) {
  while (knobForm_->rowCount() > 0) knobForm_->removeRow(0);
  knobs_.clear();
  knobErrors_.clear();
  const PolicyInfo* info = nullptr;
  for (const PolicyInfo& p : policyCatalog())
    if (p.id == policyId) info = &p;
  if (!info) {
    policyDesc_->setText(tr("Unknown policy"));
    return;
  }
  policyDesc_->setText(QString::fromStdString(info->description));
  router_->setEnabled(info->usesRouter);
  for (const KnobSpec& k : info->knobs) {
    auto* sb = new KnobSpinBox;
    sb->setRange(k.min, k.max);
    // Typed values apply on Enter or leaving the field, not per keystroke
    // (typing 1500 must not run the simulation at 1, 15 and 150 first).
    sb->setKeyboardTracking(false);
    sb->setDecimals(k.integer ? 0 : 3);
    if (!k.unit.empty()) sb->setSuffix(" " + QString::fromStdString(k.unit));
    double v = k.def;
    if (values.is_object() && values.contains(k.name) && values.at(k.name).is_number()) v = values.at(k.name).get<double>();
    sb->setValue(v);
    sb->setProperty("applied", v);
    sb->setToolTip(tr("%1\nrange [%2, %3] %4 · default %5%6")
                       .arg(QString::fromStdString(k.description), fmtNum(k.min), fmtNum(k.max),
                            QString::fromStdString(k.unit), fmtNum(k.def),
                            k.liveSafe ? tr(" · safe to change mid-run") : QString()));
    auto* err = errorLabel();
    knobForm_->addRow(QString::fromStdString(k.name) + (k.liveSafe ? tr(" (live)") : QString()), sb);
    knobForm_->addRow(err);
    knobs_[k.name] = sb;
    knobErrors_[k.name] = err;
    const KnobSpec spec = k;
    // Refuse out-of-range input inline, with the reason, while it is typed.
    connect(sb->findChild<QLineEdit*>(), &QLineEdit::textEdited, this, [sb, err, spec](const QString& text) {
      QString t = text;
      if (!sb->suffix().isEmpty() && t.endsWith(sb->suffix())) t.chop(sb->suffix().size());
      bool ok = false;
      const double v = sb->locale().toDouble(t.trimmed(), &ok);
      QString why;
      if (!ok) why = QObject::tr("%1: not a number").arg(QString::fromStdString(spec.name));
      else if (v < spec.min || v > spec.max)
        why = QObject::tr("%1 must be in [%2, %3] %4").arg(QString::fromStdString(spec.name), fmtNum(spec.min),
                                                             fmtNum(spec.max), QString::fromStdString(spec.unit));
      else if (spec.integer && v != std::floor(v))
        why = QObject::tr("%1 must be a whole number").arg(QString::fromStdString(spec.name));
      err->setText(why);
      err->setVisible(!why.isEmpty());
      err->setProperty("refused", !why.isEmpty());
    });
    // Enter or leaving the field with a refused value: the knob keeps its
    // value, and the message stays to say so.
    connect(sb, &QDoubleSpinBox::editingFinished, err, [sb, err] {
      if (!err->property("refused").toBool()) {
        err->hide();
        return;
      }
      err->setProperty("refused", false);
      err->setText(err->text() + QObject::tr(" — kept %1").arg(sb->text()));
      err->show();
    });
    if (k.liveSafe) {
      // Safe mid-run: applied to the running policy at once (and logged, so a
      // replay reproduces the run); otherwise it waits for Apply.
      connect(sb, &QDoubleSpinBox::valueChanged, this, [this, sb, policyId, name = k.name](double v) {
        if (filling_ || unchanged(sb, v)) return;
        if (policyId == runningPolicy_)
          emit liveKnobChanged(QString::fromStdString(name), v);
        else
          markDirty();
      });
    } else {
      connect(sb, &QDoubleSpinBox::valueChanged, this, [this, sb](double v) {
        if (!unchanged(sb, v)) markDirty();
      });
    }
  }
  if (info->knobs.empty()) {
    auto* none = new QLabel(tr("This policy has no knobs."));
    none->setStyleSheet(QString("color: %1;").arg(theme::kMuted.name()));
    knobForm_->addRow(none);
  }
}

void ScenarioPanel::setError(const QString& message) {
  error_->setText(message);
  error_->setVisible(!message.isEmpty());
  // The message sits under "Apply and reset", at the panel's foot: scroll it
  // into view once laid out (it appeared below the fold, issue 29).
  if (!message.isEmpty())
    QTimer::singleShot(0, this, [this] {
      for (QWidget* p = parentWidget(); p; p = p->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(p)) {
          QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);  // the label's place, then the panel's size
          area->ensureWidgetVisible(error_, 0, 12);
          break;
        }
    });
}

void ScenarioPanel::setLiveRate(double rate, bool enabled) {
  if (rateSlider_->isSliderDown()) return;
  filling_ = true;
  rateSlider_->setValue(rateToSlider(rate));
  rateLabel_->setText(rateText(rate));
  filling_ = false;
  rateSlider_->setEnabled(enabled);
  if (!enabled) rateLabel_->setText(tr("n/a"));
}

double ScenarioPanel::liveRate() const { return sliderToRate(rateSlider_->value()); }

void ScenarioPanel::setLiveClients(int clients, bool shown) {
  clientsRow_->setVisible(shown);
  clientsRowLabel_->setVisible(shown);
  if (!shown || clientsSlider_->isSliderDown()) return;
  filling_ = true;
  clientsSlider_->setMaximum(std::max(256, clients));
  clientsSlider_->setValue(clients);
  clientsLabel_->setText(QString::number(clients));
  filling_ = false;
}

void ScenarioPanel::setLiveSpeculation(int k, bool available) {
  if (specAvailable_ != static_cast<int>(available)) {  // (frames come at 60 Hz: only on a change)
    specAvailable_ = available;
    // Tooltips say what the control does, or why it is off.
    const QString why =
        tr("Speculative decoding needs a scenario with it: add cluster.speculative to the scenario\n"
           "(docs/scenario-format.md; e.g. samples/speculative-crossover.json)");
    const QString onTip =
        tr("Speculative decoding in the running simulation: each decode step drafts k tokens per\n"
           "sequence and the model verifies them in one pass; off is k = 0. Applied from the next\n"
           "engine step and recorded in the run's change log (speculative_k), so the run can be\n"
           "replayed exactly; marked on the time charts.");
    const QString kTip = tr("Draft tokens per decode step (1–%1), applied from the next step while speculation is on")
                             .arg(kMaxLiveSpecK);
    for (QWidget* w : std::initializer_list<QWidget*>{specOn_, specK_, specRowLabel_}) {
      w->setToolTip(available ? (w == specK_ ? kTip : onTip) : why);
      w->setEnabled(available);
    }
  }
  if (!available) {
    filling_ = true;
    specOn_->setChecked(false);
    filling_ = false;
    pendingSpecK_ = -1;
    return;
  }
  // A change sent and not yet in the frames: the control keeps what the
  // user set (a frame from before it would flip it back for a moment).
  if (pendingSpecK_ >= 0 && k != pendingSpecK_ && pendingSince_.elapsed() < 2000) return;
  pendingSpecK_ = -1;
  filling_ = true;
  specOn_->setChecked(k > 0);
  // (Not while the k box is being typed in: that would undo the typing.)
  if (k > 0 && !specK_->hasFocus()) specK_->setValue(std::min(k, kMaxLiveSpecK));
  filling_ = false;
}

QString ScenarioPanel::knobError(const std::string& knob) const {
  const auto it = knobErrors_.find(knob);
  return it != knobErrors_.end() && !it->second->isHidden() ? it->second->text() : QString();
}

}  // namespace sl::ui
