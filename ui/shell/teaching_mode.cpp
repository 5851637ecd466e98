// MainWindow's teaching side (50-gui.md "Teaching mode" and "Cluster view"):
// the inspector dock fed by clicks on the cluster view, lecture mode and the
// guided tours. Kept apart from main_window.cpp so the run controls and the
// teaching features can change independently.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSlider>
#include <QStatusBar>
#include <QToolBar>
#include <QToolButton>
#include <QRegularExpression>
#include <QScreen>
#include <QGuiApplication>

#include <algorithm>
#include <cmath>

#include "policy/registry.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/policy_view.h"
#include "ui/common/speed_scale.h"
#include "ui/compare/compare_window.h"
#include "ui/controller/sim_controller.h"
#include "ui/inspector/inspector_panel.h"
#include "ui/shell/main_window.h"
#include "ui/teaching/tour_guide.h"

namespace sl::ui {

namespace {
constexpr double kLectureFontScale = 1.3;
constexpr double kLectureSpeed = 0.5;  // simulated seconds per wall second
constexpr const char* kFirstScreen = "pascal-baseline-fcfs.json";
constexpr int kTourWideWindow = 1500;  // narrower: the scenario dock steps aside during a tour
// Same mapping as the speed slider in main_window.cpp (0.1× · 10^(v/15)).

// The scenario's cost model, built once per model and deployment (the
// figures of a sparse model's decode step); null if it cannot be built.
const CostModel* tourCostModel(const Scenario& s) {
  static std::string key;
  static std::unique_ptr<CostModel> cost;
  const ClusterSpec& c = s.cluster;
  const std::string k = s.model + "|" + c.gpu + "|" + std::to_string(c.tp) + "|" + std::to_string(c.ep) + "|" +
                        std::to_string(c.attention_dp) + "|" + std::to_string(c.ep_redundant) + "|" +
                        c.moe_routing.kind + "|" + std::to_string(c.moe_routing.skew) + "|" + c.moe_routing.path + "|" +
                        c.ep_placement.value_or("") + "|" + c.model_dtype + "|" + c.kv_dtype + "|" +
                        c.expert_dtype.value_or("") + "|" + c.profile.value_or("") + "|" + c.engine.value_or("") + "|" +
                        c.cost.dump() + "|" + s.base_dir;
  if (k != key) {
    key = k;
    try {
      cost = makeCostModel(s);
    } catch (const std::exception&) {
      cost.reset();
    }
  }
  return cost.get();
}

// What a tour step's text quotes ("{NAME}", TourPanel::setLiveValues):
// figures of this run so far, and the running policy's knobs as loaded
// (the sample's value, else the knob's default), so the text says what the
// app shows whatever the sample or the engine gives.
QMap<QString, QString> tourValues(const LiveFrame& f, ChartPanel& charts, const Scenario& s) {
  QMap<QString, QString> v;
  v["finished"] = QString::number(f.snapshot.finished);
  // A figure and, as "raw:NAME", its value (a comparison's word is taken
  // from the values, not from their rounded text).
  auto put = [&v](const QString& name, double x, const QString& shown) {
    if (shown.isEmpty()) return;
    v[name] = shown;
    v["raw:" + name] = QString::number(x, 'g', 17);
  };
  put("preemptions", static_cast<double>(f.preemptions), QString::number(f.preemptions));
  put("migrations", static_cast<double>(f.migrations), QString::number(f.migrations));
  put("clock", f.clockS, tourSeconds(f.clockS));
  put("in_flight", static_cast<double>(f.snapshot.inFlight), QString::number(f.snapshot.inFlight));
  if (f.clockS > 0) {
    // Requests finished per simulated second so far (the baseline's is
    // counted the same way, over the same time).
    const double r = static_cast<double>(f.snapshot.finished) / f.clockS;
    put("req_rate", r, QString("%1 req/s").arg(r, 0, 'f', 1));
  }
  const double p95 = charts.ttftQuantile(0.95), p50 = charts.ttftQuantile(0.5);
  put("p95_ttft", p95, tourSeconds(p95));
  put("p50_ttft", p50, tourSeconds(p50));
  // How far the tail is from the median: "12×".
  if (std::isfinite(p95) && std::isfinite(p50) && p50 > 0)
    put("tail_ratio", p95 / p50, QString("%1×").arg(p95 / p50, 0, 'f', p95 / p50 < 10 ? 1 : 0));
  put("mean_ttft", charts.meanTtft(), tourSeconds(charts.meanTtft()));
  put("mean_tpot", charts.meanTpot(), tourSeconds(charts.meanTpot()));
  if (const double slo = charts.latestSloAttainment(); std::isfinite(slo)) put("slo", slo, tourPercent(slo));
  // Requests waiting now (queued, not in a batch), cluster-wide.
  std::int64_t waiting = 0, prompt = 0, cached = 0, cacheBlocks = 0, gpuBlocks = 0;
  bool cacheOn = false;
  for (const InstanceSnapshot& in : f.snapshot.instances) {
    for (const QueueSnapshot& q : in.queues)
      for (const RequestChip& c : q.requests) waiting += !c.inBatch && !c.synthetic;
    cacheOn = cacheOn || in.cache.on;
    prompt += in.cache.promptTokens;
    cached += in.cache.cachedTokens;
    cacheBlocks += in.cache.gpuBlocks;
    gpuBlocks += in.gpuBlocks;
  }
  put("waiting", static_cast<double>(waiting), QString::number(waiting));
  // What the policy publishes per instance, summed over the cluster:
  // "field:promoted", "field:won" … (self-scheduling's promotions,
  // CascadeInfer's bid-ask counts).
  // "fieldmax:interval": the largest value on any card.
  QMap<QString, double> fields;
  QMap<QString, bool> inSeconds;
  static const QRegularExpression notKey("[^a-z0-9_]");
  for (const InstanceSnapshot& in : f.snapshot.instances)
    for (const PolicyField& pf : in.policyFields) {
      QString key = QString::fromStdString(pf.label).toLower();
      key.replace(notKey, "_");
      fields["field:" + key] += pf.value;
      const QString mk = "fieldmax:" + key;
      fields[mk] = fields.contains(mk) ? std::max(fields[mk], pf.value) : pf.value;
      inSeconds[key] = pf.unit == "s";
    }
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    const bool secs = inSeconds.value(it.key().section(':', 1));
    put(it.key(), it.value(), secs ? tourSeconds(it.value()) : QString::number(it.value(), 'g', 6));
  }
  if (cacheOn && prompt > 0) {
    const double rate = static_cast<double>(cached) / static_cast<double>(prompt);
    put("hit_rate", rate, tourPercent(rate));
  }
  if (cacheOn && gpuBlocks > 0) {
    const double share = static_cast<double>(cacheBlocks) / static_cast<double>(gpuBlocks);
    put("cached_share", share, tourPercent(share));
  }
  if (f.clientsLive) put("clients", f.clients, QString::number(f.clients));
  if (f.rateLive) put("arrival_rate", f.arrivalRate, QString("%1 req/s").arg(f.arrivalRate, 0, 'g', 3));
  // Throughput so far, output tokens per second of simulated time.
  if (f.clockS > 0) {
    std::int64_t tokens = 0;
    for (const InstanceSnapshot& in : f.snapshot.instances) tokens += in.tokensProduced;
    const double tps = static_cast<double>(tokens) / f.clockS;
    put("throughput", tps, QString("%1 tok/s").arg(tps, 0, 'f', 0));
  }
  // Speculative decoding, cluster-wide so far: tokens per sequence-step
  // (1 + the drafts accepted) and the share of draft tokens accepted; the
  // draft length in force.
  {
    std::int64_t steps = 0, drafted = 0, accepted = 0;
    bool specOn = false;
    for (const InstanceSnapshot& in : f.snapshot.instances) {
      specOn = specOn || in.spec.on();
      steps += in.spec.steps;
      drafted += in.spec.drafted;
      accepted += in.spec.accepted;
    }
    if (specOn && f.specK >= 0) put("spec_k", f.specK, QString::number(f.specK));
    if (specOn && steps > 0) {
      const double tps = static_cast<double>(steps + accepted) / static_cast<double>(steps);
      put("tok_per_step", tps, QString::number(tps, 'f', 2));
    }
    if (specOn && drafted > 0) {
      const double acc = static_cast<double>(accepted) / static_cast<double>(drafted);
      put("acceptance", acc, tourPercent(acc));
    }
  }
  // A sparse model's decode step (the speculative tour's last step): what
  // the run's own cost model gives for batches of 1 and 8.
  if (const CostModel* cost = tourCostModel(s); cost && cost->model().isMoe()) {
    const ModelSpec& m = cost->model();
    v["moe_model"] = QString::fromStdString(m.name.empty() ? m.id : m.name);
    v["moe_layers"] = QString::number(m.moeLayers());
    v["moe_experts"] = QString::number(m.experts);
    v["moe_k"] = QString::number(m.experts_per_token);
    v["moe_routing"] = QString::fromStdString(s.cluster.moe_routing.kind);
    for (const int n : {1, 8}) {
      const QString b = QString::number(n);
      const double touched = cost->expertReplicasTouched(n), bytes = cost->expertWeightBytesRead(n);
      put("moe_touched_b" + b, touched, QString::number(touched, 'f', touched < 10 ? 1 : 0));
      put("moe_read_b" + b, bytes, QString("%1 GB").arg(bytes / 1e9, 0, 'f', 1));
      BatchShape shape;
      for (int i = 0; i < n; ++i) addDecodeSeq(shape, 1024);
      const double expert = cost->breakdown(shape).expert_s;
      put("moe_expert_b" + b, expert, tourSeconds(expert));
    }
  }
  if (s.workload.prefix) {
    v["system_prompts"] = QString::number(s.workload.prefix->system_prompts);
    v["system_prompt_tokens"] = QString::number(s.workload.prefix->system_prompt_tokens);
    v["turns"] = QString::number(s.workload.prefix->turns);
  }
  if (s.run.measure) {
    const double a = s.run.measure->warmup_s, b = s.run.measure->endS();
    put("window_start", a, tourSeconds(a));
    put("window_end", b, tourSeconds(b));
    const QString where = f.clockS < a ? QObject::tr("before the window (warm-up)")
                          : f.clockS < b ? QObject::tr("inside the window")
                                         : QObject::tr("at the window's end");
    v["window_state"] = where;
  }
  for (const PolicyInfo& p : policyCatalog()) {
    if (p.id != s.policy.id) continue;
    for (const KnobSpec& k : p.knobs) {
      double x = k.def;
      if (auto it = s.policy.knobs.find(k.name); it != s.policy.knobs.end() && it->is_number()) x = it->get<double>();
      v["knob:" + QString::fromStdString(k.name)] = QString::number(x, 'g', 4);
    }
  }
  return v;
}
// Lecture mode's chart (issue 50): the one the tour step's text points at,
// else the main TTFT chart.
QString lectureChart(const ChartPanel& charts, const TourStep* step) {
  const QString named = step ? charts.chartNamedIn(step->title + " " + step->watch) : QString();
  return named.isEmpty() ? ChartPanel::mainChartId() : named;
}
}  // namespace

void MainWindow::buildTeaching() {
  inspector_ = new InspectorPanel(ctl_);
  inspectorDock_ = new QDockWidget(tr("Inspector"), this);
  inspectorDock_->setObjectName("InspectorDock");
  inspectorDock_->setWidget(inspector_);
  addDockWidget(Qt::RightDockWidgetArea, inspectorDock_);
  inspectorDock_->hide();
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);  // inspector and tour: full height

  tour_ = new TourPanel;
  tourDock_ = new QDockWidget(tr("Guided tour"), this);
  tourDock_->setObjectName("TourDock");
  tourDock_->setWidget(tour_);
  addDockWidget(Qt::RightDockWidgetArea, tourDock_);
  tabifyDockWidget(inspectorDock_, tourDock_);  // one full-height panel, two tabs
  tourDock_->hide();
  connect(tour_, &TourPanel::stepRequested, this, [this](int i) {
    QString err;
    if (!showTourStep(i, true, &err)) showStatus(err, 8000);
  });
  connect(tour_, &TourPanel::closeRequested, this, &MainWindow::closeTour);

  auto showDock = [this](QDockWidget* d) {
    if (!d->isVisible()) {
      d->show();
      resizeDocks({d}, {std::clamp(width() * 26 / 100, 300, 420)}, Qt::Horizontal);
    }
    d->raise();
  };
  connect(cluster_, &ClusterView::requestClicked, this, [this, showDock](qint64 id) {
    showDock(inspectorDock_);
    cluster_->setSelectedInstance(-1);
    inspector_->showRequest(id);
    sinceInspectorRefresh_.restart();
  });
  connect(cluster_, &ClusterView::instanceClicked, this, [this, showDock](int i) {
    showDock(inspectorDock_);
    cluster_->setSelectedRequest(-1);
    inspector_->showInstance(i);
    sinceInspectorRefresh_.restart();
  });
  sinceInspectorRefresh_.start();

  lecture_ = new QAction(tr("&Lecture mode"), this);
  lecture_->setIconText(tr("Lecture"));  // short toolbar label; the menu keeps "Lecture mode"
  lecture_->setCheckable(true);
  lecture_->setShortcuts({QKeySequence(Qt::Key_F11), QKeySequence(Qt::CTRL | Qt::Key_L)});
  lecture_->setToolTip(tr("Lecture mode: larger fonts, slower speed, callouts on preemptions, migrations "
                          "and role changes (F11, Ctrl+L)"));
  lecture_->setShortcutContext(Qt::WindowShortcut);
  connect(lecture_, &QAction::toggled, this, [this](bool on) { setLecture(on); });
}

void MainWindow::buildTourMenu(QMenu* help) {
  QMenu* tours = help->addMenu(tr("&Guided tour"));
  const std::vector<Tour> list = availableTours(samplesDir());
  for (const Tour& t : list)
    tours->addAction(t.title, this, [this, id = t.id, title = t.title] {
      if (!confirmDiscard(tr("The tour \u201c%1\u201d").arg(title))) return;
      QString err;
      if (!startTour(id, 0, true, &err)) showStatus(err, 8000);
    });
  if (list.empty()) tours->addAction(tr("(no tour: sample scenarios not found)"))->setEnabled(false);
  help->addSeparator();
  // The way into the tours from the first screen: a "Guided tours" button
  // at the menu bar's right end opens the same menu (the menu bar has room
  // to spare; the run toolbar has none at 1280 px).
  auto* b = new QToolButton(menuBar());
  b->setObjectName("ToursButton");
  b->setText(tr("Guided tours"));
  b->setToolTip(tr("Guided tours: one per paper, step by step (also Help ▸ Guided tour)"));
  b->setMenu(tours);
  b->setPopupMode(QToolButton::InstantPopup);
  b->setToolButtonStyle(Qt::ToolButtonTextOnly);
  b->setAutoRaise(true);
  b->setStyleSheet("QToolButton { font-weight: bold; color: #7C3AED; padding: 0 6px; }");
  menuBar()->setCornerWidget(b, Qt::TopRightCorner);
}

void MainWindow::fitToScreen() {
  // The whole window, title bar and status bar included, on the screen it
  // opens on (a 1280×800 screen used to hide the status bar).
  const QScreen* sc = screen() ? screen() : QGuiApplication::primaryScreen();
  if (!sc) return;
  const QRect avail = sc->availableGeometry();
  const int frameH = std::max(0, frameGeometry().height() - geometry().height());
  const int titleH = frameH > 0 ? frameH : 40;  // not yet shown: a typical title bar and border
  const QSize want(std::min(width(), avail.width() - 8), std::min(height(), avail.height() - titleH));
  if (want != size()) resize(want);
  fitDocksToSize();
}

bool MainWindow::openFirstScreen(QString* error) {
  // A first screen that teaches: eight GPUs under FCFS with the KV cache
  // capped at half the GPU, at 4×: within ~25 s of wall time the KV bars
  // reach 100 %, waiting chips pile up and TTFT climbs with the reasoning
  // length (head-of-line blocking); the "Tours" button and the status bar
  // point to the tour that shows how PASCAL's scheduling answers it.
  if (!openScenario(samplesDir() + "/" + kFirstScreen, error)) return false;
  speed_->setValue(speedToSlider(4));
  // One line: what to press, where the arrival-rate slider is (the Live
  // group of the Scenario panel, on the left), where the tours are.
  showStatus(tr("Press Play: FCFS fills the memory · arrival rate: the Live slider on the left · then Guided tours"),
             60000);
  return true;
}

bool MainWindow::lecture() const { return lecture_->isChecked(); }

void MainWindow::setLecture(bool on) {
  if (lecture_->isChecked() != on) {
    lecture_->setChecked(on);  // re-enters through toggled()
    return;
  }
  if (on == cluster_->lecture()) return;
  if (basePointSize_ <= 0) basePointSize_ = QApplication::font().pointSizeF();
  QFont f = font();
  f.setPointSizeF(basePointSize_ * (on ? kLectureFontScale : 1.0));
  setFont(f);
  // Labels sized from the font at build time.
  const QFontMetrics fm(f);
  simTime_->setMinimumWidth(fm.horizontalAdvance("t = 00000.0 s "));
  speedLabel_->setMinimumWidth(fm.horizontalAdvance("1000× "));
  eventsRate_->setMinimumWidth(fm.horizontalAdvance("000.0 k ev/s "));
  fitToolBars();  // larger text: the clock row may have to go below
  // A tour's step keeps its own speed: it was chosen to show the step's
  // mechanism within half a minute.
  const bool touring = tourDock_->isVisible() && tour_->stepCount() > 0;
  if (touring) {
    speedBeforeLecture_ = -1;
  } else if (on) {
    speedBeforeLecture_ = speed_->value();
    speed_->setValue(speedToSlider(kLectureSpeed));
  } else if (speedBeforeLecture_ >= 0) {
    speed_->setValue(speedBeforeLecture_);
    speedBeforeLecture_ = -1;
  }
  // The projected picture is the cluster: the scenario dock steps aside.
  // The charts dock gives up height too, so that the cards keep room for
  // their queues above the callout lane (a projector has 720-800 rows).
  if (on) {
    scenarioWasVisible_ = scenarioDock_->isVisible();
    scenarioDock_->hide();
    chartsHeightBeforeLecture_ = chartsDock_->height();
    // One chart, large (issue 50): a third of the window at least, so its
    // ticks, units and legend read from the back of a room.
    resizeDocks({chartsDock_}, {std::max(260, height() * 45 / 100)}, Qt::Vertical);
  } else {
    if (scenarioWasVisible_) scenarioDock_->show();
    if (chartsHeightBeforeLecture_ > 0) resizeDocks({chartsDock_}, {chartsHeightBeforeLecture_}, Qt::Vertical);
    chartsHeightBeforeLecture_ = -1;
  }
  cluster_->setLecture(on);
  for (CompareWindow* cw : findChildren<CompareWindow*>()) cw->setLecture(on);
  charts_->setFocusChart(
      on ? lectureChart(*charts_, touring ? &tour_->tour().steps[static_cast<std::size_t>(std::max(0, tour_->step()))] : nullptr)
         : QString());
  tour_->setLecture(on);  // the tour's text says how to see the callouts only when they are off
  showStatus(on ? tr("Lecture mode: callouts under the cards")
                              : tr("Lecture mode off"), 4000);
}

bool MainWindow::startTour(const QString& id, int step, bool play, QString* error) {
  const std::optional<Tour> t = findTour(id);
  QString why;
  if (!t || !tourAvailable(*t, samplesDir(), &why)) {
    if (error)
      *error = t ? tr("guided tour '%1' is not available: %2").arg(id, why)
                 : tr("no guided tour '%1' (available: %2)")
                       .arg(id, [&] {
                         QStringList ids;
                         for (const Tour& a : availableTours(samplesDir())) ids << a.id;
                         return ids.join(", ");
                       }());
    return false;
  }
  tour_->setSamplesDir(samplesDir());
  tour_->setLecture(lecture());
  tour_->setTour(*t);
  if (!showTourStep(step, play, error)) return false;
  statusBar()->clearMessage();  // the first screen's hint is done
  if (!tourDock_->isVisible()) {
    tourDock_->show();
    resizeDocks({tourDock_}, {std::clamp(width() * 26 / 100, 300, 420)}, Qt::Horizontal);
  }
  tourDock_->raise();
  // On a narrow window the scenario panel steps aside while the tour is
  // open, so that the cards keep their badges and fields whole (the step's
  // text names them); closing the tour brings it back.
  const bool panelStep = tour_->tour().steps[static_cast<std::size_t>(tour_->step())].showsPanel;
  if (width() < kTourWideWindow && scenarioDock_->isVisible() && !panelStep) {
    scenarioDock_->hide();
    scenarioHiddenForTour_ = true;
  }
  return true;
}

bool MainWindow::showTourStep(int step, bool play, QString* error) {
  if (tour_->stepCount() == 0) {
    if (error) *error = tr("no guided tour is open");
    return false;
  }
  if (step < 0 || step >= tour_->stepCount()) {
    if (error) *error = tr("guided tour '%1' has steps 1 to %2 (asked for %3)").arg(tour_->tour().id)
                            .arg(tour_->stepCount()).arg(step + 1);
    return false;
  }
  const TourStep& s = tour_->tour().steps[static_cast<std::size_t>(step)];
  if (!openTourScenario(s, error)) return false;
  // A step that names a control of the scenario panel (the Clients slider)
  // keeps the panel in view; the others let it step aside on a narrow window.
  if (tourDock_->isVisible() && width() < kTourWideWindow) {
    if (s.showsPanel && scenarioHiddenForTour_ && !lecture()) {
      scenarioDock_->show();
      scenarioHiddenForTour_ = false;
    } else if (!s.showsPanel && scenarioDock_->isVisible()) {
      scenarioDock_->hide();
      scenarioHiddenForTour_ = true;
    }
  }
  tour_->showStep(step);
  if (lecture()) charts_->setFocusChart(lectureChart(*charts_, &s));
  // Lecture mode keeps the tour's speed too: the step's pace was chosen for it.
  speed_->setValue(speedToSlider(s.speed));
  if (lecture()) speedBeforeLecture_ = speed_->value();
  if (play) {
    ctl_->play();
    updateRunActions();
  }
  return true;
}

bool MainWindow::openTourScenario(const TourStep& s, QString* error) {
  const QString path = samplesDir() + "/" + s.scenario;
  if (s.set.isEmpty()) return openScenario(path, error);
  // The sample with the step's overrides (a rate, a request count), named
  // so in the title: "selfsched-math-length-only.json (tour: workload.rate=3)".
  Scenario sc;
  try {
    sc = loadTourScenario(s, samplesDir());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  QString err;
  if (!loadScenario(sc, tr("%1 (tour: %2)").arg(s.scenario, s.set.join(", ")), &err)) {
    if (error) *error = s.scenario + ": " + err;
    return false;
  }
  return true;
}

void MainWindow::closeTour() {
  tourDock_->hide();
  if (scenarioHiddenForTour_ && !lecture()) scenarioDock_->show();
  scenarioHiddenForTour_ = false;
}

bool MainWindow::inspect(const QString& what, QString* error) {
  auto showDock = [this] {
    if (!inspectorDock_->isVisible()) {
      inspectorDock_->show();
      resizeDocks({inspectorDock_}, {std::clamp(width() * 26 / 100, 300, 420)}, Qt::Horizontal);
    }
    inspectorDock_->raise();
  };
  const QString w = what.trimmed().toLower();
  if (w.startsWith("gpu")) {
    bool ok = false;
    const int i = w.mid(3).toInt(&ok);
    const int n = static_cast<int>(ctl_->latest()->snapshot.instances.size());
    if (!ok || i < 0 || (n > 0 && i >= n)) {
      if (error) *error = tr("expected gpuN with N from 0 to %1 (got '%2')").arg(std::max(0, n - 1)).arg(what);
      return false;
    }
    showDock();
    cluster_->setSelectedRequest(-1);
    cluster_->setSelectedInstance(i);
    inspector_->showInstance(i);
    return true;
  }
  std::int64_t id = -1;
  if (w == "auto") {
    // The chip in view whose timeline has the most to show.
    int best = -1;
    for (const InstanceSnapshot& in : ctl_->latest()->snapshot.instances)
      for (const QueueSnapshot& q : in.queues)
        for (const RequestChip& c : q.requests) {
          const auto t = ctl_->timelines().request(c.id);
          if (!t) continue;
          int score = 0;
          for (const TimelineEvent& e : t->events)
            score += e.kind == RequestEvent::Preempted || e.kind == RequestEvent::MigrationEnd ? 3
                     : e.kind == RequestEvent::ReasoningEnd                                     ? 2
                                                                                                : 0;
          if (score > best) {
            best = score;
            id = c.id;
          }
        }
    if (id < 0) {
      if (error) *error = tr("'auto' needs requests in flight (run the scenario first)");
      return false;
    }
  } else {
    bool ok = false;
    id = w.toLongLong(&ok);
    if (!ok || id < 0) {
      if (error) *error = tr("expected a request id, gpuN or auto (got '%1')").arg(what);
      return false;
    }
  }
  showDock();
  cluster_->setSelectedInstance(-1);
  cluster_->setSelectedRequest(id);
  inspector_->showRequest(id);
  return true;
}

void MainWindow::pullTeaching(const LiveFrame& f) {
  if (f.generation != teachGeneration_) {
    teachGeneration_ = f.generation;
    inspector_->clear();
  }
  cluster_->setAnimationsEnabled(!(f.running && f.mode == RunMode::Express));
  cluster_->addNotes(ctl_->takeNotes());  // drained always; callouts only in lecture mode
  if (tourDock_->isVisible()) {  // the step's text quotes the badges of this run
    QStringList badges;
    for (const InstanceSnapshot& in : f.snapshot.instances) {
      const QString b = policyview::badgeText(in);
      if (!b.isEmpty() && !badges.contains(b)) badges << b;
    }
    tour_->setLiveBadges(badges);
    tour_->setLiveValues(tourValues(f, *charts_, ctl_->scenario()));
    // A step compared with another runs that one to the same simulated
    // time: in the background while this run goes on, at once when it is
    // paused (a screenshot, a test).
    tour_->setRunClock(f.clockS, !f.running);
  }
  // The inspector re-reads the store a few times a second while shown.
  if (inspectorDock_->isVisible() && inspector_->mode() != InspectorPanel::Mode::Empty &&
      (!f.running || sinceInspectorRefresh_.elapsed() >= 250)) {
    inspector_->refresh();
    sinceInspectorRefresh_.restart();
  }
}

}  // namespace sl::ui
