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
#include <QScreen>
#include <QGuiApplication>

#include <algorithm>
#include <cmath>

#include "ui/common/speed_scale.h"
#include "ui/cluster/cluster_view.h"
#include "ui/inspector/inspector_panel.h"
#include "ui/cluster/policy_view.h"
#include "scenario/scenario_io.h"
#include "ui/shell/main_window.h"
#include "ui/controller/sim_controller.h"
#include "ui/teaching/tour_guide.h"
#include "ui/charts/chart_panel.h"
#include "policy/registry.h"

namespace sl::ui {

namespace {
constexpr double kLectureFontScale = 1.3;
constexpr double kLectureSpeed = 0.5;  // simulated seconds per wall second
constexpr const char* kFirstScreen = "pascal-baseline-fcfs.json";
constexpr int kTourWideWindow = 1500;  // narrower: the scenario dock steps aside during a tour
// Same mapping as the speed slider in main_window.cpp (0.1× · 10^(v/15)).

QString seconds(double s) {
  if (!std::isfinite(s)) return {};
  return s < 1 ? QObject::tr("%1 ms").arg(std::lround(s * 1000)) : QObject::tr("%1 s").arg(s, 0, 'g', 3);
}

// What a tour step's text quotes ("{NAME}", TourPanel::setLiveValues):
// figures of this run so far, and the running policy's knobs as loaded
// (the sample's value, else the knob's default), so the text says what the
// app shows whatever the sample or the engine gives.
QMap<QString, QString> tourValues(const LiveFrame& f, ChartPanel& charts, const Scenario& s) {
  QMap<QString, QString> v;
  v["preemptions"] = QString::number(f.preemptions);
  v["migrations"] = QString::number(f.migrations);
  v["p95_ttft"] = seconds(charts.ttftQuantile(0.95));
  v["p50_ttft"] = seconds(charts.ttftQuantile(0.5));
  v["mean_ttft"] = seconds(charts.meanTtft());
  v["mean_tpot"] = seconds(charts.meanTpot());
  if (const double slo = charts.latestSloAttainment(); std::isfinite(slo))
    v["slo"] = QString("%1 %").arg(slo * 100, 0, 'f', slo < 0.1 ? 1 : 0);
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
  statusBar()->showMessage(tr("FCFS, memory full: press Play, then Guided tours"), 60000);
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
    resizeDocks({chartsDock_}, {std::max(220, height() * 32 / 100)}, Qt::Vertical);
  } else {
    if (scenarioWasVisible_) scenarioDock_->show();
    if (chartsHeightBeforeLecture_ > 0) resizeDocks({chartsDock_}, {chartsHeightBeforeLecture_}, Qt::Vertical);
    chartsHeightBeforeLecture_ = -1;
  }
  cluster_->setLecture(on);
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
  if (width() < kTourWideWindow && scenarioDock_->isVisible()) {
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
  tour_->showStep(step);
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
    nlohmann::json doc = loadJsonFile(path.toStdString());
    for (const QString& a : s.set) applySetOverride(doc, a.toStdString());
    sc = parseScenario(doc, path.toStdString());
    sc.base_dir = scenarioBaseDir(path.toStdString());
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
  }
  // The inspector re-reads the store a few times a second while shown.
  if (inspectorDock_->isVisible() && inspector_->mode() != InspectorPanel::Mode::Empty &&
      (!f.running || sinceInspectorRefresh_.elapsed() >= 250)) {
    inspector_->refresh();
    sinceInspectorRefresh_.restart();
  }
}

}  // namespace sl::ui
