// ScenarioPanel: the form and the Scenario, both ways: setScenario fills the
// rows, buildScenario reads them back (strictly: a clear message naming the
// field), length and arrival rows shown for the chosen distribution, a trace
// file. The widgets, live sliders and knobs: scenario_panel.cpp.
#include "ui/scenario/scenario_panel.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QTimer>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cost/presets.h"
#include "policy/registry.h"
#include "ui/common/theme.h"
#include "util/error.h"
#include "workload/presets.h"
#include "workload/trace_formats.h"

namespace sl::ui {

namespace {

// setScenario shows a file's value (the box's range widened to hold it) and
// remembers what the box shows; buildScenario gives back the scenario's own
// value while the box still shows that, so a value the box rounds (a rate's
// decimals) or could not hold is never changed by Apply or Save.
template <class Box, class T>
void showFilled(Box* b, T v) {
  using V = decltype(b->value());
  const V shown = static_cast<V>(std::clamp<double>(static_cast<double>(v), static_cast<double>(std::numeric_limits<V>::lowest()),
                                                    static_cast<double>(std::numeric_limits<V>::max())));
  if (shown < b->minimum()) b->setMinimum(shown);
  if (shown > b->maximum()) b->setMaximum(shown);
  b->setValue(shown);
  b->setProperty("filled", QVariant::fromValue(b->value()));
}

template <class Box, class T>
T readBack(const Box* b, T fileValue) {
  using V = decltype(b->value());
  const QVariant f = b->property("filled");
  if (f.isValid() && b->value() == f.value<V>()) return fileValue;
  return static_cast<T>(b->value());
}

}  // namespace

void ScenarioPanel::setScenario(const Scenario& s) {
  filling_ = true;
  base_ = s;
  showFilled(instances_, s.cluster.instances);
  auto pick = [](QComboBox* c, const QVariant& v) {
    int i = c->findData(v);
    if (i < 0) {
      c->addItem(v.toString(), v);
      i = c->count() - 1;
    }
    c->setCurrentIndex(i);
  };
  pick(gpu_, QString::fromStdString(s.cluster.gpu));
  pick(tp_, s.cluster.tp);
  // Mixed pools (cluster.pools): the pools set the instances, GPUs and TP;
  // the boxes show the total and the first pool, read-only (the cluster
  // view's pool headers show each pool; edit them in the file).
  for (QWidget* w : std::initializer_list<QWidget*>{instances_, gpu_, tp_}) {
    if (!w->property("plainTip").isValid()) w->setProperty("plainTip", w->toolTip());
    w->setEnabled(s.cluster.pools.empty());
    w->setToolTip(s.cluster.pools.empty()
                      ? w->property("plainTip").toString()
                      : tr("Set by the scenario's cluster.pools (%1 pools; the cluster view's headers show each): "
                           "edit them in the file")
                            .arg(s.cluster.pools.size()));
  }
  pick(modelDtype_, QString::fromStdString(s.cluster.model_dtype));
  pick(kvDtype_, QString::fromStdString(s.cluster.kv_dtype));
  showFilled(kvFraction_, s.cluster.kv_capacity_fraction);
  showFilled(nicGbps_, s.cluster.fabric.nic_gbps);
  showFilled(gpusPerNode_, s.cluster.fabric.gpus_per_node);
  // Models may be named by alias in the file.
  QString modelId = QString::fromStdString(s.model);
  if (PresetRegistry::builtin().hasModel(s.model)) modelId = QString::fromStdString(PresetRegistry::builtin().model(s.model).id);
  pick(model_, modelId);
  pick(workload_, s.workload.preset ? QString::fromStdString(*s.workload.preset) : QString());
  fillLengths();
  showFilled(requests_, s.workload.requests);
  showFilled(rate_, s.workload.arrival.rate);
  rateEdited_ = false;
  showFilled(cv_, s.workload.arrival.cv);
  const char* arr = s.workload.trace                                                ? "trace"
                    : s.workload.arrival.process == ArrivalSpec::Process::Gamma    ? "gamma"
                    : s.workload.arrival.process == ArrivalSpec::Process::Schedule ? "schedule"
                    : s.workload.arrival.process == ArrivalSpec::Process::Closed   ? "closed"
                                                                                   : "poisson";
  arrivals_->setCurrentIndex(arrivals_->findData(QString(arr)));
  traceFile_.clear();
  traceFormat_->clear();
  tracePath_->clear();
  if (s.workload.trace) setTraceFile(QString::fromStdString(s.workload.trace->path), s.base_dir);
  const TraceSpec trace = s.workload.trace.value_or(TraceSpec{});
  timeScale_->setValue(trace.time_scale);
  windowStart_->setValue(trace.window_start_s.value_or(0));
  windowEnd_->setValue(trace.window_end_s.value_or(0));
  updateArrivalRows();
  const int pi = policy_->findData(QString::fromStdString(s.policy.id), Qt::UserRole);
  if (pi >= 0) policy_->setCurrentIndex(pi);
  pick(router_, QString::fromStdString(s.policy.router));
  rebuildKnobs(s.policy.id, s.policy.knobs);
  filling_ = false;
  dirty_ = false;
  apply_->setEnabled(false);
  setError({});
}

bool ScenarioPanel::buildScenario(Scenario& out, QString* error) const {
  Scenario s = base_;
  s.cluster.instances = readBack(instances_, base_.cluster.instances);
  s.cluster.gpu = gpu_->currentData().toString().toStdString();
  s.cluster.tp = tp_->currentData().toInt();
  s.cluster.model_dtype = modelDtype_->currentData().toString().toStdString();
  s.cluster.kv_dtype = kvDtype_->currentData().toString().toStdString();
  s.cluster.kv_capacity_fraction = readBack(kvFraction_, base_.cluster.kv_capacity_fraction);
  const std::string newModel = model_->currentData().toString().toStdString();
  if (!PresetRegistry::builtin().hasModel(s.model) || PresetRegistry::builtin().model(s.model).id != newModel)
    s.model = newModel;
  const QString preset = workload_->currentData().toString();
  if (preset.isEmpty()) {
    if (base_.workload.preset) s.workload.preset.reset();
  } else {
    s.workload.preset = preset.toStdString();
  }
  if (preset.isEmpty() && arrivals_->currentData().toString() != "trace") {  // else the preset or trace sets them
    LengthDist* dists[3] = {&s.workload.input_tokens, &s.workload.reasoning_tokens, &s.workload.answer_tokens};
    for (int i = 0; i < 3; ++i) {
      const LengthEditor& e = lengths_[i];
      const QString k = e.kind->currentData().toString();
      if (k == "file") continue;  // kept as the file has it
      LengthDist d;
      d.clipMin = dists[i]->clipMin;
      d.clipMax = dists[i]->clipMax;
      const double a = e.a->value(), b = e.b->value();
      const QString where = QString("workload.%1").arg(e.key);
      if (k == "constant") {
        d.kind = LengthDist::Kind::Constant;
        d.value = a;
      } else if (k == "uniform") {
        if (b < a) {
          if (error) *error = tr("%1: the maximum (%2) is below the minimum (%3)").arg(where).arg(b).arg(a);
          return false;
        }
        d.kind = LengthDist::Kind::Uniform;
        d.min = a;
        d.max = b;
      } else {
        if (!(a > 0) || !(b > a)) {
          if (error) *error = tr("%1: a lognormal needs 0 < median < p90 (got %2 and %3)").arg(where).arg(a).arg(b);
          return false;
        }
        d.kind = LengthDist::Kind::Lognormal;
        d.median = a;
        d.p90 = b;
      }
      *dists[i] = d;
    }
  }
  s.workload.requests = readBack(requests_, base_.workload.requests);
  s.workload.arrival.rate = readBack(rate_, base_.workload.arrival.rate);
  s.cluster.fabric.nic_gbps = readBack(nicGbps_, base_.cluster.fabric.nic_gbps);
  s.cluster.fabric.gpus_per_node = readBack(gpusPerNode_, base_.cluster.fabric.gpus_per_node);
  const QString arr = arrivals_->currentData().toString();
  if (arr == "trace") {
    if (traceFile_.isEmpty()) {
      if (error) *error = tr("workload.trace: pick a trace file (Browse…)");
      return false;
    }
    TraceSpec t = base_.workload.trace.value_or(TraceSpec{});
    if (!base_.workload.trace || QString::fromStdString(base_.workload.trace->path) != traceFile_) {
      t = TraceSpec{};
      t.path = traceFile_.toStdString();
    }
    t.time_scale = timeScale_->value();
    t.window_start_s = windowStart_->value() > 0 ? std::optional<double>(windowStart_->value()) : std::nullopt;
    t.window_end_s = windowEnd_->value() > 0 ? std::optional<double>(windowEnd_->value()) : std::nullopt;
    if (t.window_end_s && t.window_end_s <= t.window_start_s.value_or(0)) {
      if (error) *error = tr("workload.trace.window: the end must come after the start");
      return false;
    }
    s.workload.trace = t;
  } else {
    s.workload.trace.reset();
    if (arr == "gamma") {
      s.workload.arrival.process = ArrivalSpec::Process::Gamma;
      s.workload.arrival.cv = readBack(cv_, base_.workload.arrival.cv);
    } else if (arr == "schedule") {
      if (base_.workload.arrival.schedule.empty()) {
        if (error) *error = tr("workload.arrival: this scenario has no rate schedule (set one in the file)");
        return false;
      }
      s.workload.arrival.process = ArrivalSpec::Process::Schedule;
    } else if (arr == "closed") {
      if (base_.workload.arrival.process != ArrivalSpec::Process::Closed) {
        if (error) *error = tr("workload.arrival: this scenario is not a closed loop (set one in the file)");
        return false;
      }
      s.workload.arrival = base_.workload.arrival;
    } else {
      s.workload.arrival.process = ArrivalSpec::Process::Poisson;
    }
  }
  const std::string pid = policy_->currentData(Qt::UserRole).toString().toStdString();
  if (pid.empty()) {
    if (error) *error = tr("Pick a policy");
    return false;
  }
  s.policy.id = pid;
  s.policy.router = router_->currentData().toString().toStdString();
  nlohmann::json knobs = nlohmann::json::object();
  for (const auto& [name, sb] : knobs_) {
    if (!sb->hasAcceptableInput()) {
      if (error) *error = tr("policy.knobs.%1: %2 is not accepted").arg(QString::fromStdString(name), sb->text());
      return false;
    }
    const double v = sb->value();
    if (sb->decimals() == 0) knobs[name] = static_cast<std::int64_t>(std::llround(v));
    else knobs[name] = v;
  }
  s.policy.knobs = knobs;
  out = s;
  return true;
}

void ScenarioPanel::fillLengths() {
  const bool wasFilling = filling_;
  filling_ = true;
  WorkloadSpec w = base_.workload;
  const QString preset = workload_->currentData().toString();
  if (!preset.isEmpty()) {
    try {
      applyWorkloadPreset(preset.toStdString(), w);
    } catch (const std::exception&) {
    }
  }
  const LengthDist* dists[3] = {&w.input_tokens, &w.reasoning_tokens, &w.answer_tokens};
  for (int i = 0; i < 3; ++i) {
    const LengthDist& d = *dists[i];
    const LengthEditor& e = lengths_[i];
    QString kind = "file";
    double a = 0, b = 0;
    if (d.kind == LengthDist::Kind::Constant) kind = "constant", a = d.value;
    else if (d.kind == LengthDist::Kind::Uniform) kind = "uniform", a = d.min, b = d.max;
    else if (d.kind == LengthDist::Kind::Lognormal && d.median && d.p90) kind = "lognormal", a = *d.median, b = *d.p90;
    e.kind->setCurrentIndex(e.kind->findData(kind));
    e.a->setValue(a);
    e.b->setValue(b);
  }
  updateLengthRows();
  filling_ = wasFilling;
}

void ScenarioPanel::updateLengthRows() {
  // Editable without a preset (which sets them) and a trace (whose rows do).
  const bool own = workload_->currentData().toString().isEmpty() && arrivals_->currentData().toString() != "trace";
  for (const LengthEditor& e : lengths_) {
    const QString k = e.kind->currentData().toString();
    e.kind->setEnabled(own);
    e.a->setEnabled(own && k != "file");
    e.b->setEnabled(own && k != "file" && k != "constant");
  }
}

void ScenarioPanel::updateArrivalRows() {
  const QString arr = arrivals_->currentData().toString();
  for (QDoubleSpinBox* sb : {timeScale_, windowStart_, windowEnd_}) sb->setEnabled(arr == "trace");
  updateLengthRows();
  rate_->setEnabled(arr == "poisson" || arr == "gamma");
  // A closed loop has no arrival rate: its Clients slider is what matters
  // (issue 50), so the row is left out rather than shown greyed.
  if (auto* form = qobject_cast<QFormLayout*>(rate_->parentWidget()->layout())) form->setRowVisible(rate_, arr != "closed");
  cv_->setEnabled(arr == "gamma");
  tracePath_->setEnabled(arr == "trace");
  traceBrowse_->setEnabled(arr == "trace");
}

bool ScenarioPanel::setTraceFile(const QString& path, const std::string& baseDir) {
  QString full = path;
  if (QFileInfo(path).isRelative() && !baseDir.empty())
    full = QFileInfo(QString::fromStdString(baseDir) + "/" + path).absoluteFilePath();
  try {
    const std::string fmt = detectTraceFormat(full.toStdString());
    traceFile_ = path;
    tracePath_->setText(path);
    tracePath_->setToolTip(full);
    traceFormat_->setText(tr("format: %1 (detected)").arg(QString::fromStdString(fmt)));
    setError({});
  } catch (const InputError& e) {
    traceFormat_->setText(QString());
    setError(QString::fromStdString(e.what()));
    return false;
  }
  if (!filling_) {
    arrivals_->setCurrentIndex(arrivals_->findData(QString("trace")));
    markDirty();
  }
  return true;
}

}  // namespace sl::ui
