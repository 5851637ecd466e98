#include "ui/shell/main_window.h"
#include "ui/common/ui_info.h"
#include "ui/common/speed_scale.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QImage>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/moe_strip.h"
#include "ui/compare/compare_window.h"
#include "ui/sweep/sweep_window.h"
#include "ui/controller/export_run.h"
#include "run/execute.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "ui/scenario/scenario_panel.h"
#include "ui/controller/sim_controller.h"

namespace sl::ui {

namespace {
// CPU seconds this thread (the GUI's) has used; 0 where unknown.
double threadCpuS() {
#ifdef CLOCK_THREAD_CPUTIME_ID
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
#endif
  return 0;
}

QString fmtCount(double v) {
  if (v >= 1e6) return QString::number(v / 1e6, 'f', 2) + " M";
  if (v >= 1e3) return QString::number(v / 1e3, 'f', 1) + " k";
  return QString::number(v, 'f', 0);
}
QString fmtDuration(double s) {
  if (s < 0) return QStringLiteral("–");
  if (s < 60) return QString::number(s, 'f', s < 10 ? 1 : 0) + " s";
  const int m = static_cast<int>(s / 60);
  if (m < 60) return QString("%1 min %2 s").arg(m).arg(static_cast<int>(s) % 60);
  return QString("%1 h %2 min").arg(m / 60).arg(m % 60);
}
}  // namespace

QString MainWindow::samplesDir() {
#ifdef SERVELAB_SAMPLES_DIR
  return findDataDir(QStringLiteral(SERVELAB_SAMPLES_DIR), "samples", "*.json");
#else
  return findDataDir({}, "samples", "*.json");
#endif
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("ServeLab");
  setWindowIcon(QIcon(":/servelab/icons/servelab.svg"));
  setObjectName("ServeLabMainWindow");
  ctl_ = new SimController(this);

  cluster_ = new ClusterView;
  charts_ = new ChartPanel;
  panel_ = new ScenarioPanel;
  setCentralWidget(cluster_);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks);
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);

  auto* scroll = new QScrollArea;
  scroll->setWidget(panel_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(240);
  scenarioDock_ = new QDockWidget(tr("Scenario"), this);
  scenarioDock_->setObjectName("ScenarioDock");
  scenarioDock_->setWidget(scroll);
  addDockWidget(Qt::LeftDockWidgetArea, scenarioDock_);
  chartsDock_ = new QDockWidget(tr("Charts"), this);
  chartsDock_->setObjectName("ChartsDock");
  chartsDock_->setWidget(charts_);
  addDockWidget(Qt::BottomDockWidgetArea, chartsDock_);

  pullTimer_ = new QTimer(this);
  pullTimer_->setSingleShot(true);
  pullTimer_->setTimerType(Qt::PreciseTimer);  // a coarse timer's slack costs whole frames at 60 Hz
  connect(pullTimer_, &QTimer::timeout, this, [this] { pull(false); });
  connect(ctl_, &SimController::frameReady, this, &MainWindow::onFrameReady);
  connect(ctl_, &SimController::paused, this, [this] {
    pull(true);
    updateRunActions();
  });
  connect(panel_, &ScenarioPanel::applyRequested, this, &MainWindow::applyPanel);
  connect(panel_, &ScenarioPanel::liveRateChanged, this, [this](double r) { ctl_->setArrivalRate(r); });
  connect(panel_, &ScenarioPanel::liveClientsChanged, this, [this](int n) { ctl_->setClients(n); });
  connect(panel_, &ScenarioPanel::liveSpeculativeKChanged, this, [this](int k) { ctl_->setSpeculativeK(k); });
  connect(panel_, &ScenarioPanel::liveKnobChanged, this,
          [this](const QString& k, double v) { ctl_->setPolicyKnob(k, v); });

  buildActions();
  buildTeaching();
  buildToolBar();
  buildMenus();
  buildStatusBar();
  sincePull_.start();
  sinceChartRefresh_.start();
  resize(1280, 800);
  fitDocksToSize();
  restoreSettings();
  updateRunActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::fitDocksToSize() {
  resizeDocks({scenarioDock_}, {std::clamp(width() * 25 / 100, 320, 380)}, Qt::Horizontal);
  resizeDocks({chartsDock_}, {std::max(300, height() * 45 / 100)}, Qt::Vertical);
}

void MainWindow::resizeEvent(QResizeEvent* e) {
  QMainWindow::resizeEvent(e);
  fitToolBars();
}

QRect adaptSavedGeometry(const QRect& saved, const QSize& savedScreen, const QRect& avail) {
  QSize size = saved.size();
  if (savedScreen.isValid() && !savedScreen.isEmpty())
    size = QSize(static_cast<int>(std::lround(1.0 * saved.width() * avail.width() / savedScreen.width())),
                 static_cast<int>(std::lround(1.0 * saved.height() * avail.height() / savedScreen.height())));
  size = size.boundedTo(avail.size());
  QRect r(QPoint(0, 0), size);
  r.moveCenter(avail.center());
  return r;
}

void MainWindow::restoreSettings() {
  QSettings s;
  // A layout saved on another screen (a 1024-px projector, then a 1920-px
  // monitor) is adapted to the screen the window opens on: the window takes
  // the same share of it and the docks their default share of the window.
  const QScreen* sc = screen() ? screen() : QGuiApplication::primaryScreen();
  const QRect avail = sc ? sc->availableGeometry() : QRect();
  const QSize savedScreen = s.value("geometryScreen").toSize();
  const bool otherScreen = avail.isValid() && savedScreen != avail.size();
  if (s.contains("geometry") && restoreGeometry(s.value("geometry").toByteArray()) && otherScreen &&
      !isMaximized() && !isFullScreen())
    setGeometry(adaptSavedGeometry(geometry(), savedScreen, avail));
  if (s.contains("windowState")) restoreState(s.value("windowState").toByteArray());
  if (otherScreen && s.contains("geometry")) fitDocksToSize();
  if (s.contains("speed")) speed_->setValue(s.value("speed").toInt());
}

bool MainWindow::confirmDiscard(const QString& action, bool panelEdits) {
  QStringList what;
  if (panelEdits && panel_->dirty()) what << tr("the scenario panel's edits that were not applied");
  std::size_t changes = 0;
  if (ctl_->loaded()) {
    const std::shared_ptr<const LiveFrame> f = ctl_->latest();
    // Live changes kept in a saved run file (written by File ▸ Save run as…,
    // or the one being replayed) are not lost: the run's log is, so far, that
    // file's log.
    const bool saved = f->changes.size() <= savedRunLog_.size() &&
                       std::equal(f->changes.begin(), f->changes.end(), savedRunLog_.begin(),
                                  [](const KnobChange& a, const KnobChange& b) {
                                    return a.events == b.events && a.knob == b.knob && a.value == b.value;
                                  });
    changes = saved ? 0 : f->changes.size();
  }
  if (changes > 0)
    what << (changes == 1 ? tr("this run's live change") : tr("this run's %1 live changes").arg(changes));
  if (what.isEmpty()) return true;
  QMessageBox box(QMessageBox::Question, action, tr("%1 discards %2.").arg(action, what.join(tr(" and "))),
                  QMessageBox::Discard | QMessageBox::Cancel, this);
  box.setObjectName("DiscardBox");
  if (changes > 0)
    box.setInformativeText(tr("File ▸ Save run as… keeps the scenario with its live changes (servelab-cli run "
                              "replays it); File ▸ Export ▸ Charts… keeps the change log (run.json) with the charts."));
  box.setDefaultButton(QMessageBox::Cancel);
  return box.exec() == QMessageBox::Discard;
}

void MainWindow::closeEvent(QCloseEvent* e) {
  // The window manager's close button asks as Quit does (a programmatic
  // close, e.g. from a test or after Quit confirmed, does not).
  if (e->spontaneous() && !discardConfirmed_ && !confirmDiscard(tr("Quit"))) {
    e->ignore();
    return;
  }
  QSettings s;
  s.setValue("geometry", saveGeometry());
  if (const QScreen* sc = screen()) s.setValue("geometryScreen", sc->availableGeometry().size());
  s.setValue("windowState", saveState());
  s.setValue("speed", speed_->value());
  ctl_->pause();
  QMainWindow::closeEvent(e);
}

void MainWindow::applyPanel() {
  Scenario s;
  QString err;
  if (!panel_->buildScenario(s, &err)) {
    panel_->setError(err);
    return;
  }
  try {
    validateScenario(s, "scenario");
  } catch (const std::exception& e) {
    panel_->setError(QString::fromStdString(e.what()));
    return;
  }
  if (!confirmDiscard(tr("Apply"), false)) return;
  // The run restarts from t = 0: a rate moved live is kept as the new
  // scenario's rate (unless the initial rate itself was edited), instead of
  // silently going back to the old one.
  QString kept;
  if (ctl_->loaded() && !panel_->rateEdited()) {
    const std::shared_ptr<const LiveFrame> f = ctl_->latest();
    const bool rateMoved = std::any_of(f->changes.begin(), f->changes.end(),
                                       [](const KnobChange& c) { return c.knob == kKnobArrivalRate; });
    if (rateMoved && f->rateLive && f->arrivalRate != s.workload.arrival.rate) {
      s.workload.arrival.rate = f->arrivalRate;
      kept = tr("Applied with the live arrival rate, %1 req/s, as the initial rate").arg(f->arrivalRate, 0, 'g', 4);
    }
  }
  const bool wasRunning = ctl_->isRunning();
  if (loadScenario(s, QFileInfo(currentPath_).fileName() + tr(" (edited)")) && wasRunning) ctl_->play();
  if (!kept.isEmpty()) showStatus(kept, 8000);
  updateRunActions();
}

void MainWindow::reseed(bool random) {
  if (!ctl_->loaded()) return;
  Scenario s = ctl_->scenario();
  if (!confirmDiscard(tr("A new seed"), false)) {
    const QSignalBlocker block(seed_);
    seed_->setValue(static_cast<int>(s.run.seed));  // the spin box goes back to the run's seed
    return;
  }
  if (random) {
    const QSignalBlocker block(seed_);
    seed_->setValue(static_cast<int>(QRandomGenerator::global()->bounded(1, 1'000'000)));
  }
  s.run.seed = static_cast<std::uint64_t>(seed_->value());
  const bool wasRunning = ctl_->isRunning();
  if (loadScenario(s, windowTitle().section(QString::fromUtf8(" — "), 1)) && wasRunning) ctl_->play();
}

void MainWindow::setSpeedFromSlider(int v) {
  const double s = sliderToSpeed(v);
  speedLabel_->setText(speedText(s));
  ctl_->setSpeed(s);
}

void MainWindow::startInRunMode() {
  // Another scenario starts animated: Fast or Express left on from the last
  // one would run it to its end at once on Play (issue 29).
  ctl_->setMode(RunMode::Run);
  runMode_->setChecked(true);
}

void MainWindow::setMode(RunMode m) {
  // The mode only: Play alone starts and pauses (issue 50), so a run that
  // was paused stays paused and one that was playing goes on in the new mode.
  ctl_->setMode(m);
  (m == RunMode::Run ? runMode_ : m == RunMode::Fast ? fastMode_ : expressMode_)->setChecked(true);
  updateRunActions();
}

void MainWindow::updateRunActions() {
  const bool running = ctl_->isRunning();
  play_->setText(running ? tr("Pause") : tr("Play"));
  play_->setIcon(style()->standardIcon(running ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  for (QAction* a : {play_, step_, reset_, stop_, compare_}) a->setEnabled(ctl_->loaded());
}

void MainWindow::onFrameReady() {
  if (pullTimer_->isActive()) return;
  int interval = 16;  // ~60 Hz
  if (ctl_->isRunning() && ctl_->mode() == RunMode::Fast) interval = 250;
  // Express: twice a second, for the cluster view (the charts keep their
  // own, slower pace below).
  if (ctl_->isRunning() && ctl_->mode() == RunMode::Express) interval = static_cast<int>(kExpressClusterMs);
  pullTimer_->start(static_cast<int>(std::max<qint64>(0, interval - sincePull_.elapsed())));
}

void MainWindow::pullNow() { pull(true); }

void MainWindow::pull(bool force) {
  sincePull_.restart();
  const std::shared_ptr<const LiveFrame> f = ctl_->takeFrame();
  if (f->generation != generation_) {
    generation_ = f->generation;
    charts_->clear(static_cast<int>(f->snapshot.instances.size()));
  }
  charts_->addProbes(ctl_->takeProbes());
  std::vector<FinishedPoint> finished = ctl_->takeFinished();
  for (const FinishedPoint& p : finished)
    if (p.sloMet) cost_.recordMet(f->generation, p.finishS);  // the readout's goodput per dollar
  charts_->addFinished(std::move(finished));
  charts_->addPolicySamples(ctl_->takePolicySamples());
  charts_->setChanges(f->changes);
  const bool express = f->running && f->mode == RunMode::Express;
  if (!express || force) {
    moestrip::record(cluster_, *f, ctl_->scenario());  // MoE cards' per-rank history (ui/cluster/moe_strip.h)
    cluster_->setFrame(f);
  } else if (!sinceClusterFrame_.isValid() ||
             sinceClusterFrame_.elapsed() >=
                 std::max<qint64>(kExpressClusterMs,
                                  static_cast<qint64>(static_cast<double>(clusterFrameMs_) / kExpressClusterShare))) {
    // Express: the cards or tiles at a low rate, painted now so that the
    // cost is known (and the interval grows with it).
    QElapsedTimer cost;
    cost.start();
    cluster_->setFrame(f);
    cluster_->repaint();
    clusterFrameMs_ = cost.elapsed();
    sinceClusterFrame_.restart();
  }
  pullTeaching(*f);
  // Charts cost a few ms each (tens with long series): while a run animates
  // they get new data at ~5 Hz and are redrawn one per frame, so no frame
  // pays for all six; otherwise all at once.
  const bool animating = f->running && f->mode == RunMode::Run && !force;
  bool prepared = false;
  bool chartsDue = force || !f->running || sinceChartRefresh_.elapsed() >= 200;
  // Express: a chart refresh waits until the GUI thread's CPU since the last
  // one is within kExpressGuiShare of the wall time (docs/user-guide.md
  // "Charts of a long run"; issue 27: at 10^7 requests the charts took 0.4 CPU s per wall
  // s next to the worker on two cores).
  if (chartsDue && express && !force && sinceChartRefresh_.isValid()) {
    const double wallS = static_cast<double>(sinceChartRefresh_.elapsed()) / 1000.0;
    chartsDue = threadCpuS() - chartCpuMark_ <= kExpressGuiShare * wallS || wallS >= kExpressChartMaxS;
  }
  if (chartsDue) {
    prepared = true;
    chartCpuMark_ = threadCpuS();
    if (animating)
      charts_->prepareAnimated();
    else if (f->running && !force)
      charts_->refreshLive();  // Fast, Express
    else
      charts_->refresh();
    sinceChartRefresh_.restart();
  }
  // A frame that prepared new chart data (up to ~10 ms with a long run)
  // redraws no chart: the two never share a frame's 16.7 ms (B4).
  if (animating && !prepared) charts_->refreshOne();
  applyFrame(*f);
  if (wasRunning_ != f->running) {
    wasRunning_ = f->running;
    updateRunActions();
  }
  // While a run animates, pull on a steady 60 Hz beat instead of waiting for
  // the next "ready" signal to arm the timer (that round trip cost a frame in
  // three). The beat is kept on a drift-free schedule: a timer armed for
  // "16 ms from now" fires after 17, which alone loses 3 frames a second.
  // A frame that ran past its successor's beat by less than half a frame
  // (a heavy chart's redraw once a second) lets that one come at once,
  // a few ms late, rather than dropping it; further behind, the schedule
  // starts afresh.
  if (f->running && f->mode == RunMode::Run && !pullTimer_->isActive()) {
    constexpr double kFrameMs = 1000.0 / 60.0;
    if (!beat_.isValid()) beat_.start();
    const double now = static_cast<double>(beat_.nsecsElapsed()) / 1e6;
    const double due = nextBeatMs_ + kFrameMs;
    nextBeatMs_ = due < now - kFrameMs / 2 ? now + kFrameMs : due;
    pullTimer_->start(static_cast<int>(std::max(0.0, std::floor(nextBeatMs_ - now))));
  }
}

void MainWindow::applyFrame(const LiveFrame& f) {
  const Snapshot& s = f.snapshot;
  simTime_->setText(tr("t = %1 s").arg(f.clockS, 0, 'f', 1));
  eventsRate_->setText(f.running ? fmtCount(f.eventsPerSec) + tr(" ev/s") : QString());
  stTime_->setText(tr("sim %1 · wall %2").arg(fmtDuration(f.clockS), fmtDuration(f.elapsedS)));
  stTime_->setToolTip(tr("Simulated time · wall-clock time elapsed while playing (pauses excluded); the engine "
                         "computed for %1 of it")
                          .arg(fmtDuration(f.wallS)));
  stSpeed_->setText(f.running ? tr("speed %1").arg(speedText(std::max(f.speedAchieved, 1e-3)))
                              : (f.done ? tr("done") : tr("paused")));
  stEvents_->setText(tr("%1 events").arg(fmtCount(static_cast<double>(s.events))));
  stRequests_->setText(tr("in flight %1 · finished %2").arg(s.inFlight).arg(s.finished));
  if (f.progress >= 0) {
    progress_->show();
    progress_->setValue(static_cast<int>(f.progress * 1000));
    stEta_->setText(f.done ? tr("complete") : f.etaS >= 0 ? tr("ETA %1").arg(fmtDuration(f.etaS)) : QString());
  } else {
    progress_->hide();
    stEta_->clear();
  }
  updateCostReadout(f);
  if (f.stalled) showStatus(tr("The run stalled: requests are stuck (policy deadlock)"));
  panel_->setLiveRate(f.arrivalRate, f.rateLive);
  panel_->setLiveClients(f.clients, f.clientsLive);
  panel_->setLiveSpeculation(f.specK, f.specLive);
}

void MainWindow::updateCostReadout(const LiveFrame& f) {
  std::int64_t tokens = 0;
  for (const InstanceSnapshot& in : f.snapshot.instances) tokens += in.tokensProduced;
  cost_.record(f.generation, f.clockS, tokens, f.snapshot.inputPrefilled);
  // The longest form that fits beside the other readouts (the status bar
  // never grows past the window: at 1024 px it shows $/hour alone).
  QStatusBar* sb = statusBar();
  int used = 0, shown = 0;
  for (QWidget* w : std::initializer_list<QWidget*>{stTime_, stSpeed_, stEvents_, stRequests_, progress_, stEta_})
    if (!w->isHidden()) {
      used += w->sizeHint().width();
      ++shown;
    }
  const int room = sb->width() - used - 12 * (shown + 1) - 24;
  const QStringList forms = cost_.forms();
  const QFontMetrics fm(stCost_->font());
  QString text = forms.back();
  for (const QString& form : forms)
    if (fm.horizontalAdvance(form) <= room) {
      text = form;
      break;
    }
  if (text != stCost_->text()) stCost_->setText(text);
  if (const QString tip = cost_.toolTip(); tip != stCost_->toolTip()) stCost_->setToolTip(tip);
}

CompareWindow* MainWindow::openCompare(const QStringList& policies, QString* error) {
  if (!ctl_->loaded()) {
    if (error) *error = tr("open a scenario first");
    return nullptr;
  }
  auto* w = new CompareWindow(this);
  w->setAttribute(Qt::WA_DeleteOnClose);
  w->setLecture(lecture());  // and setLecture() passes a change on (teaching_mode.cpp)
  const QString name = currentPath_.isEmpty() ? tr("scenario") : QFileInfo(currentPath_).fileName();
  if (!w->load(ctl_->scenario(), policies, name, error)) {
    delete w;
    return nullptr;
  }
  w->resize(size());
  w->show();
  return w;
}

}  // namespace sl::ui
