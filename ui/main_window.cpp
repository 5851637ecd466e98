#include "main_window.h"
#include "speed_scale.h"

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

#include "chart_export_dialog.h"
#include "chart_panel.h"
#include "cluster_view.h"
#include "compare_window.h"
#include "sweep_window.h"
#include "export_run.h"
#include "run/execute.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "scenario_panel.h"
#include "sim_controller.h"

namespace sl::ui {

namespace {
constexpr int kMaxRecent = 8;

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
  QStringList candidates;
#ifdef SERVELAB_SAMPLES_DIR
  candidates << QStringLiteral(SERVELAB_SAMPLES_DIR);
#endif
  const QString app = QCoreApplication::applicationDirPath();
  candidates << app + "/../share/servelab/samples" << app + "/samples" << app + "/../samples";
  for (const QString& c : candidates)
    if (QDir(c).exists() && !QDir(c).entryList({"*.json"}, QDir::Files).isEmpty()) return QDir(c).absolutePath();
  return {};
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

void MainWindow::buildActions() {
  QStyle* st = style();
  open_ = new QAction(st->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open…"), this);
  open_->setShortcut(QKeySequence::Open);
  connect(open_, &QAction::triggered, this, [this] {
    const QString start = currentPath_.isEmpty() ? samplesDir() : QFileInfo(currentPath_).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), start, tr("Scenario (*.json)"));
    if (!path.isEmpty()) openScenarioInteractive(path);
  });
  save_ = new QAction(st->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save"), this);
  save_->setShortcut(QKeySequence::Save);
  saveAs_ = new QAction(tr("Save &As…"), this);
  saveAs_->setShortcut(QKeySequence::SaveAs);
  auto saveTo = [this](bool ask) {
    QString path = currentPath_;
    if (ask || path.isEmpty() || (!samplesDir().isEmpty() && path.startsWith(samplesDir())))
      path = QFileDialog::getSaveFileName(this, tr("Save scenario"), QFileInfo(currentPath_).fileName(),
                                          tr("Scenario (*.json)"));
    if (path.isEmpty()) return;
    QString err;
    if (!saveScenario(path, &err)) QMessageBox::warning(this, tr("Save scenario"), err);
  };
  connect(save_, &QAction::triggered, this, [saveTo] { saveTo(false); });
  connect(saveAs_, &QAction::triggered, this, [saveTo] { saveTo(true); });
  // The running scenario with its live change log: `servelab-cli run FILE`
  // reproduces the run (docs/scenario-format.md "Saved runs").
  saveRun_ = new QAction(tr("Save &run as…"), this);
  saveRun_->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
  saveRun_->setToolTip(tr("Save the running scenario, its seed and its live changes; servelab-cli run replays it"));
  connect(saveRun_, &QAction::triggered, this, [this] {
    if (!ctl_->loaded()) return;
    const QString base = currentPath_.isEmpty() ? QStringLiteral("run") : QFileInfo(currentPath_).completeBaseName();
    const QString start = (currentPath_.isEmpty() || (!samplesDir().isEmpty() && currentPath_.startsWith(samplesDir()))
                               ? QDir::homePath()
                               : QFileInfo(currentPath_).absolutePath()) +
                          "/" + base + "-run.json";
    const QString path = QFileDialog::getSaveFileName(this, tr("Save run"), start, tr("Saved run (*.json)"));
    if (path.isEmpty()) return;
    QString err;
    if (!saveRun(path, &err)) QMessageBox::warning(this, tr("Save run"), err);
  });

  play_ = new QAction(st->standardIcon(QStyle::SP_MediaPlay), tr("Play"), this);
  play_->setShortcuts({QKeySequence(Qt::Key_Space)});
  play_->setToolTip(tr("Play / pause (Space)"));
  connect(play_, &QAction::triggered, this, [this] {
    ctl_->togglePlay();
    updateRunActions();
  });
  step_ = new QAction(st->standardIcon(QStyle::SP_MediaSkipForward), tr("Step"), this);
  step_->setShortcuts({QKeySequence(Qt::Key_F4), QKeySequence(Qt::Key_Right)});
  step_->setToolTip(tr("Advance one simulated second (F4, →)"));
  connect(step_, &QAction::triggered, this, [this] {
    ctl_->step();
    updateRunActions();
  });
  reset_ = new QAction(st->standardIcon(QStyle::SP_BrowserReload), tr("Reset"), this);
  reset_->setShortcut(QKeySequence(Qt::Key_R));
  reset_->setToolTip(tr("Back to t = 0 with the same scenario and seed (R)"));
  connect(reset_, &QAction::triggered, this, [this] {
    if (!confirmDiscard(tr("Reset"), false)) return;
    ctl_->reset();
    updateRunActions();
  });

  modes_ = new QActionGroup(this);
  runMode_ = new QAction(tr("Run"), modes_);
  runMode_->setShortcut(QKeySequence(Qt::Key_F5));
  runMode_->setToolTip(tr("Run animated at the chosen speed (F5)"));
  fastMode_ = new QAction(tr("Fast"), modes_);
  fastMode_->setShortcut(QKeySequence(Qt::Key_F6));
  fastMode_->setToolTip(tr("Run as fast as possible, display refreshed a few times a second (F6)"));
  expressMode_ = new QAction(tr("Express"), modes_);
  expressMode_->setShortcut(QKeySequence(Qt::Key_F7));
  expressMode_->setToolTip(tr("Run as fast as possible, counters only (F7)"));
  for (QAction* a : {runMode_, fastMode_, expressMode_}) a->setCheckable(true);
  runMode_->setChecked(true);
  connect(runMode_, &QAction::triggered, this, [this] { setMode(RunMode::Run); });
  connect(fastMode_, &QAction::triggered, this, [this] { setMode(RunMode::Fast); });
  connect(expressMode_, &QAction::triggered, this, [this] { setMode(RunMode::Express); });
  stop_ = new QAction(st->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this);
  stop_->setShortcut(QKeySequence(Qt::Key_F8));
  stop_->setToolTip(tr("Stop (F8)"));
  connect(stop_, &QAction::triggered, this, [this] {
    ctl_->pause();
    updateRunActions();
  });
  runUntil_ = new QAction(tr("Run &until…"), this);
  runUntil_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_U));
  runUntil_->setToolTip(tr("Run as fast as possible to a simulated time, then pause (Ctrl+U)"));
  connect(runUntil_, &QAction::triggered, this, [this] {
    if (!ctl_->loaded()) return;
    const double now = ctl_->latest()->clockS;
    bool ok = false;
    const double t = QInputDialog::getDouble(this, tr("Run until"), tr("Simulated time (s):"), now + 60.0, now,
                                             1e9, 1, &ok);
    if (!ok) return;
    ctl_->runTo(t);
    updateRunActions();
  });

  exportCharts_ = new QAction(tr("&Export charts…"), this);
  exportCharts_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  connect(exportCharts_, &QAction::triggered, this, [this] {
    // Sizes for slides and papers (the chart is laid out at the size, the
    // PNG has size × scale pixels), text from the canvas, markers, folder.
    ChartExportDialog dlg(currentPath_.isEmpty() ? QString() : QFileInfo(currentPath_).completeBaseName(), this);
    if (dlg.exec() != QDialog::Accepted || dlg.folder().isEmpty()) return;
    const QString dir = dlg.folder();
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const int n = exportCharts(dir, dlg.options());
    QApplication::restoreOverrideCursor();
    const int want = 3 * static_cast<int>(charts_->charts().size()) + 1;  // + run.json
    if (n < want) {
      QMessageBox::warning(this, tr("Export charts"), tr("Only %1 of %2 files could be written to %3").arg(n).arg(want).arg(dir));
    } else {
      ChartExportDialog::rememberFolder(dir);
      showStatus(tr("%1 files written to %2").arg(n).arg(dir), 5000);
    }
  });
  compare_ = new QAction(tr("&Compare policies…"), this);
  compare_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  compare_->setIconText(tr("Compare"));  // short on the toolbar; the menu keeps the full text
  compare_->setToolTip(tr("Run 2–4 policies on this scenario and seed side by side (Ctrl+K)"));
  connect(compare_, &QAction::triggered, this, [this] {
    if (!ctl_->loaded()) return;
    QStringList policies;
    const QString current = QString::fromStdString(ctl_->scenario().policy.id);
    if (!ComparePolicyDialog::pick(this, defaultComparePolicies(current), policies)) return;
    QString err;
    if (!openCompare(policies, &err)) QMessageBox::warning(this, tr("Compare policies"), err);
  });
  quit_ = new QAction(tr("&Quit"), this);
  quit_->setShortcut(QKeySequence::Quit);
  connect(quit_, &QAction::triggered, this, [this] {
    if (confirmDiscard(tr("Quit"))) {
      discardConfirmed_ = true;
      close();
      discardConfirmed_ = false;
    }
  });
  for (QAction* a : {open_, save_, saveAs_, saveRun_, play_, step_, reset_, runMode_, fastMode_, expressMode_, stop_,
                     exportCharts_, compare_, quit_})
    a->setShortcutContext(Qt::WindowShortcut);
}

void MainWindow::buildToolBar() {
  QToolBar* tb = addToolBar(tr("Run"));
  tb->setObjectName("RunToolBar");
  tb->setMovable(false);
  tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  tb->setIconSize(QSize(18, 18));
  tb->addAction(open_);
  tb->addAction(save_);
  tb->addSeparator();
  tb->addAction(play_);
  tb->addAction(step_);
  tb->addAction(reset_);
  tb->addSeparator();
  for (QAction* a : {runMode_, fastMode_, expressMode_}) tb->addAction(a);
  tb->addAction(lecture_);
  tb->addAction(compare_);
  // The clock, speed and seed: a toolbar of their own, which moves to a
  // second row when the window is too narrow for both (never into "»").
  clockBar_ = addToolBar(tr("Clock"));
  clockBar_->setObjectName("ClockToolBar");
  clockBar_->setMovable(false);
  tb = clockBar_;
  auto* sl = new QLabel(tr(" Speed "));
  tb->addWidget(sl);
  speed_ = new QSlider(Qt::Horizontal);
  speed_->setObjectName("SpeedSlider");
  speed_->setRange(0, kSpeedMax);
  speed_->setFixedWidth(110);
  speed_->setToolTip(tr("Simulated seconds per wall second (log scale, 0.1× to max)"));
  speed_->setValue(speedToSlider(1.0));
  tb->addWidget(speed_);
  speedLabel_ = new QLabel;
  speedLabel_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance("1000× "));
  tb->addWidget(speedLabel_);
  connect(speed_, &QSlider::valueChanged, this, &MainWindow::setSpeedFromSlider);
  setSpeedFromSlider(speed_->value());
  tb->addSeparator();
  simTime_ = new QLabel;
  simTime_->setObjectName("SimClock");
  simTime_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance("t = 00000.0 s "));
  QFont mono = simTime_->font();
  mono.setBold(true);
  simTime_->setFont(mono);
  simTime_->setToolTip(tr("Simulated time"));
  tb->addWidget(simTime_);
  eventsRate_ = new QLabel;
  eventsRate_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance("000.0 k ev/s "));
  eventsRate_->setToolTip(tr("Engine events per wall second"));
  tb->addWidget(eventsRate_);
  tb->addSeparator();
  tb->addWidget(new QLabel(tr(" Seed ")));
  seed_ = new QSpinBox;
  seed_->setObjectName("SeedBox");
  seed_->setRange(0, 2'000'000'000);
  seed_->setToolTip(tr("Random seed of the workload and policies; changing it restarts the run"));
  seed_->setKeyboardTracking(false);
  seed_->setFixedWidth(90);
  tb->addWidget(seed_);
  connect(seed_, &QSpinBox::valueChanged, this, [this](int) { reseed(false); });
  auto* dice = new QAction(tr("Reseed"), this);
  dice->setToolTip(tr("Draw a new random seed and restart"));
  connect(dice, &QAction::triggered, this, [this] { reseed(true); });
  tb->addAction(dice);
}

std::vector<QWidget*> MainWindow::toolbarEssentials() const {
  auto* tb = findChild<QToolBar*>("RunToolBar");
  std::vector<QWidget*> out;
  for (QAction* a : {play_, step_, reset_})
    if (QWidget* b = tb->widgetForAction(a)) {
      b->setObjectName(a->text() == tr("Pause") ? "Play" : a->text());
      out.push_back(b);
    }
  for (QWidget* w : std::initializer_list<QWidget*>{simTime_, speed_, speedLabel_, seed_}) out.push_back(w);
  return out;
}

void MainWindow::fitToolBars() {
  // One row when both toolbars fit the window, else the clock row below.
  auto* run = findChild<QToolBar*>("RunToolBar");
  if (!run || !clockBar_) return;
  const int need = run->sizeHint().width() + clockBar_->sizeHint().width() + 16;
  const bool split = need > width();
  if (split == toolBarsSplit_) return;
  toolBarsSplit_ = split;
  if (split) insertToolBarBreak(clockBar_);
  else removeToolBarBreak(clockBar_);
}

void MainWindow::resizeEvent(QResizeEvent* e) {
  QMainWindow::resizeEvent(e);
  fitToolBars();
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(open_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  presetsMenu_ = file->addMenu(tr("&Presets"));
  file->addAction(save_);
  file->addAction(saveAs_);
  file->addAction(saveRun_);
  file->addSeparator();
  buildExportMenu(file);
  file->addSeparator();
  file->addAction(quit_);
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(play_);
  run->addAction(step_);
  run->addAction(reset_);
  run->addSeparator();
  run->addAction(runMode_);
  run->addAction(fastMode_);
  run->addAction(expressMode_);
  run->addAction(stop_);
  run->addAction(runUntil_);
  run->addSeparator();
  run->addAction(compare_);
  run->addAction(tr("S&weep…"), this, [this] {  // issue 14: ui/sweep_window.h
    if (!ctl_->loaded()) return;
    auto* w = new SweepWindow(ctl_->scenario(), this);
    w->setAttribute(Qt::WA_DeleteOnClose);
    connect(w, &SweepWindow::openPoint, this, [this](const Scenario& s, const QString& name) {
      if (loadScenario(s, name)) startInRunMode();
    });
    w->show();
  });
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(scenarioDock_->toggleViewAction());
  view->addAction(chartsDock_->toggleViewAction());
  view->addAction(inspectorDock_->toggleViewAction());
  view->addSeparator();
  view->addAction(lecture_);
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  buildTourMenu(help);
  help->addAction(tr("&About ServeLab"), this, [this] {
    QMessageBox::about(this, tr("About ServeLab"),
                       tr("<b>ServeLab</b> — a what-if lab for LLM serving schedulers.<br>"
                          "Every run is reproducible from its scenario, seed and change log."));
  });
  rebuildRecentMenu();
  rebuildPresetsMenu();
}

void MainWindow::buildStatusBar() {
  QStatusBar* sb = statusBar();
  stTime_ = new QLabel;
  stSpeed_ = new QLabel;
  stEvents_ = new QLabel;
  stRequests_ = new QLabel;
  stEta_ = new QLabel;
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(160);
  progress_->setMaximumHeight(14);
  progress_->setTextVisible(false);
  sb->setStyleSheet("QStatusBar QLabel { padding: 0 6px; }");
  for (QLabel* l : {stTime_, stSpeed_, stEvents_, stRequests_}) sb->addPermanentWidget(l);
  sb->addPermanentWidget(progress_);
  sb->addPermanentWidget(stEta_);
  // A message gets the room of everything but the clock while it shows.
  connect(sb, &QStatusBar::messageChanged, this, [this](const QString& m) {
    for (QWidget* wdg : std::initializer_list<QWidget*>{stSpeed_, stEvents_, stRequests_, progress_, stEta_})
      wdg->setVisible(m.isEmpty());
    if (m.isEmpty()) statusBar()->setToolTip(QString());
  });
}

void MainWindow::showStatus(const QString& message, int timeoutMs) {
  // Whole where it fits next to the clock, else shortened in the middle
  // (paths) with the whole text on hover — never cut at the end.
  QStatusBar* sb = statusBar();
  const int room = sb->width() - stTime_->sizeHint().width() - 40;
  const QString shown =
      sb->isVisible() ? sb->fontMetrics().elidedText(message, Qt::ElideMiddle, std::max(200, room)) : message;
  sb->showMessage(shown, timeoutMs);
  sb->setToolTip(shown == message ? QString() : message);
}

QString MainWindow::statusText() const { return statusBar()->currentMessage(); }

void MainWindow::rebuildPresetsMenu() {
  presetsMenu_->clear();
  const QString dir = samplesDir();
  if (dir.isEmpty()) {
    presetsMenu_->addAction(tr("(no samples folder found)"))->setEnabled(false);
    return;
  }
  const QStringList files = QDir(dir).entryList({"*.json"}, QDir::Files, QDir::Name);
  for (const QString& f : files) {
    QAction* a = presetsMenu_->addAction(QFileInfo(f).completeBaseName());
    const QString path = dir + "/" + f;
    a->setToolTip(path);
    connect(a, &QAction::triggered, this, [this, path] { openScenarioInteractive(path); });
  }
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = QSettings().value("recent").toStringList();
  for (const QString& p : recent) {
    QAction* a = recentMenu_->addAction(QFileInfo(p).fileName());
    a->setToolTip(p);
    connect(a, &QAction::triggered, this, [this, p] { openScenarioInteractive(p); });
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::addRecent(const QString& path) {
  QSettings s;
  QStringList recent = s.value("recent").toStringList();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > kMaxRecent) recent.removeLast();
  s.setValue("recent", recent);
  s.setValue("lastScenario", abs);
  rebuildRecentMenu();
}

void MainWindow::restoreSettings() {
  QSettings s;
  if (s.contains("geometry")) restoreGeometry(s.value("geometry").toByteArray());
  if (s.contains("windowState")) restoreState(s.value("windowState").toByteArray());
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
  s.setValue("windowState", saveState());
  s.setValue("speed", speed_->value());
  ctl_->pause();
  QMainWindow::closeEvent(e);
}

bool MainWindow::openScenario(const QString& path, QString* error) {
  Scenario s;
  ChangeLog replay;
  try {
    // A saved run opens as its scenario and replays its live changes as the
    // run reaches them (as servelab-cli run does).
    ScenarioFile file = loadScenarioOrSavedRun(path.toStdString());
    s = std::move(file.scenario);
    if (file.live) replay = file.live->changes;
  } catch (const std::exception& e) {
    const QString msg = QString::fromStdString(e.what());
    panel_->setError(msg);
    showStatus(msg, 8000);
    if (error) *error = msg;
    return false;
  }
  QString loadErr;
  if (!loadScenario(s, QFileInfo(path).fileName(), &loadErr, replay)) {
    // The engine's refusal (e.g. the model does not fit) names the file too.
    if (error) *error = QFileInfo(path).fileName() + ": " + loadErr;
    return false;
  }
  currentPath_ = QFileInfo(path).absoluteFilePath();
  addRecent(path);
  startInRunMode();
  if (!replay.empty()) {
    showStatus(tr("%1 is a saved run: its %2 live change(s) are replayed as the run reaches them")
                                 .arg(QFileInfo(path).fileName())
                                 .arg(replay.size()),
                             10000);
  }
  return true;
}

bool MainWindow::saveRun(const QString& path, QString* error) {
  if (!ctl_->loaded()) {
    if (error) *error = tr("No scenario is loaded");
    return false;
  }
  const std::shared_ptr<const LiveFrame> f = ctl_->latest();
  Scenario s = ctl_->scenario();
  // Relative trace, profile and length-file paths keep naming the same files
  // from the saved run's folder.
  rebaseScenarioPaths(s, QFileInfo(path).absolutePath().toStdString());
  LiveChanges lc;
  lc.changes = f->changes;
  lc.savedAt = SavedAt{kServeLabVersion, f->snapshot.events, nsToSeconds(f->snapshot.now), f->fingerprint};
  std::string text;
  try {
    validateScenario(s, QFileInfo(path).fileName().toStdString());
    validateLiveChanges(s, lc, QFileInfo(path).fileName().toStdString());
    text = dumpSavedRun(s, lc);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly) || out.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
      !out.commit()) {
    if (error) *error = tr("cannot write %1").arg(path);
    return false;
  }
  savedRunLog_ = f->changes;
  showStatus(tr("Run saved to %1: seed %2, %3 live change(s), fingerprint %4 at t = %5 s; "
                              "servelab-cli run reproduces it")
                               .arg(path)
                               .arg(s.run.seed)
                               .arg(f->changes.size())
                               .arg(QString::fromStdString(fingerprintHex(f->fingerprint)))
                               .arg(nsToSeconds(f->snapshot.now), 0, 'f', 1),
                           8000);
  return true;
}

bool MainWindow::loadScenario(const Scenario& s, const QString& name, QString* error, const ChangeLog& replay) {
  QString err;
  if (!ctl_->load(s, replay, &err)) {
    panel_->setError(err);
    showStatus(err, 8000);
    if (error) *error = err;
    return false;
  }
  savedRunLog_ = replay;  // a replayed saved run's changes are in its file already
  panel_->setRunningPolicy(s.policy.id);
  panel_->setScenario(s);
  {
    const QSignalBlocker block(seed_);
    seed_->setValue(static_cast<int>(std::min<std::uint64_t>(s.run.seed, 2'000'000'000)));
  }
  setWindowTitle(QString("ServeLab — %1").arg(name));
  charts_->clear(s.cluster.instances);
  charts_->setMeasureWindow(s.run.measure ? std::optional<std::pair<double, double>>(std::make_pair(
                                                s.run.measure->warmup_s, s.run.measure->endS()))
                                          : std::nullopt);
  updateRunActions();
  return true;
}

bool MainWindow::saveScenario(const QString& path, QString* error) {
  Scenario s;
  QString err;
  if (!panel_->buildScenario(s, &err)) {
    if (error) *error = err;
    return false;
  }
  try {
    validateScenario(s, QFileInfo(path).fileName().toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  QSaveFile f(path);
  const std::string text = dumpScenario(s);
  if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) < 0 || !f.commit()) {
    if (error) *error = tr("cannot write %1").arg(path);
    return false;
  }
  currentPath_ = QFileInfo(path).absoluteFilePath();
  addRecent(path);
  showStatus(tr("Saved %1").arg(path), 4000);
  return true;
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
  ctl_->setMode(m);
  (m == RunMode::Run ? runMode_ : m == RunMode::Fast ? fastMode_ : expressMode_)->setChecked(true);
  ctl_->play();
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
  if (ctl_->isRunning() && ctl_->mode() == RunMode::Express) interval = 1000;
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
  charts_->addFinished(ctl_->takeFinished());
  charts_->addPolicySamples(ctl_->takePolicySamples());
  charts_->setChanges(f->changes);
  const bool express = f->running && f->mode == RunMode::Express;
  if (!express || force) cluster_->setFrame(f);
  pullTeaching(*f);
  // Charts cost a few ms each (tens with long series): while a run animates
  // they get new data at ~5 Hz and are redrawn one per frame, so no frame
  // pays for all six; otherwise all at once.
  const bool animating = f->running && f->mode == RunMode::Run && !force;
  bool prepared = false;
  if (force || !f->running || sinceChartRefresh_.elapsed() >= 200) {
    prepared = true;
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
  if (f.stalled) showStatus(tr("The run stalled: requests are stuck (policy deadlock)"));
  panel_->setLiveRate(f.arrivalRate, f.rateLive);
  panel_->setLiveClients(f.clients, f.clientsLive);
}

CompareWindow* MainWindow::openCompare(const QStringList& policies, QString* error) {
  if (!ctl_->loaded()) {
    if (error) *error = tr("open a scenario first");
    return nullptr;
  }
  auto* w = new CompareWindow(this);
  w->setAttribute(Qt::WA_DeleteOnClose);
  const QString name = currentPath_.isEmpty() ? tr("scenario") : QFileInfo(currentPath_).fileName();
  if (!w->load(ctl_->scenario(), policies, name, error)) {
    delete w;
    return nullptr;
  }
  w->resize(size());
  w->show();
  return w;
}

namespace {
// Which run a PNG shows (its text chunks): chart and cluster-view exports.
QMap<QString, QString> runPngText(const LiveFrame& f, const Scenario& s, const QString& name) {
  QMap<QString, QString> meta;
  meta["Software"] = QString("ServeLab %1").arg(kServeLabVersion);
  meta["ServeLab scenario"] = name;
  meta["ServeLab seed"] = QString::number(s.run.seed);
  meta["ServeLab sim time (s)"] = QString::number(f.clockS, 'f', 3);
  meta["ServeLab events"] = QString::number(f.snapshot.events);
  meta["ServeLab fingerprint"] = QString::fromStdString(fingerprintHex(f.fingerprint));
  meta["ServeLab live changes"] = QString::number(f.changes.size());
  return meta;
}
}  // namespace

int MainWindow::exportCharts(const QString& dir, QSize size, qreal scale) {
  ChartExportOptions o;
  o.size = size;
  o.scale = scale;
  return exportCharts(dir, o);
}

int MainWindow::exportCharts(const QString& dir, const ChartExportOptions& options) {
  QDir().mkpath(dir);
  pull(true);
  // Which run the charts show: scenario, seed, moment, fingerprint and live
  // changes, in each PNG's text chunks and in run.json next to them.
  QMap<QString, QString> meta;
  nlohmann::ordered_json run;
  if (ctl_->loaded()) {
    const std::shared_ptr<const LiveFrame> f = ctl_->latest();
    const Scenario& s = ctl_->scenario();
    const QString name = currentPath_.isEmpty() ? tr("(unsaved scenario)") : QFileInfo(currentPath_).fileName();
    meta = runPngText(*f, s, name);
    run = {{"servelab", kServeLabVersion},
           {"scenario", name.toStdString()},
           {"policy", s.policy.id},
           {"seed", s.run.seed},
           {"sim_s", f->clockS},
           {"events", f->snapshot.events},
           {"fingerprint", fingerprintHex(f->fingerprint)},
           {"changes", changeLogToJson(f->changes)}};
  }
  int n = charts_->exportAll(dir, options, meta);
  if (!run.empty()) {
    QSaveFile f(dir + "/run.json");
    const std::string text = run.dump(2) + "\n";
    if (f.open(QIODevice::WriteOnly) && f.write(text.data(), static_cast<qint64>(text.size())) >= 0 && f.commit()) ++n;
  }
  return n;
}

bool MainWindow::openScenarioInteractive(const QString& path) {
  if (!confirmDiscard(tr("Opening %1").arg(QFileInfo(path).fileName()))) return false;
  QString err;
  if (openScenario(path, &err)) return true;
  QMessageBox box(QMessageBox::Warning, tr("Open scenario"), tr("%1 could not be opened.").arg(QFileInfo(path).fileName()),
                  QMessageBox::Ok, this);
  box.setObjectName("OpenErrorBox");
  box.setInformativeText(err);
  box.exec();
  return false;
}

// ---- File → Export (charts, run results, trace, cluster view) ----------

void MainWindow::buildExportMenu(QMenu* file) {
  QMenu* ex = file->addMenu(tr("&Export"));
  ex->addAction(exportCharts_);
  ex->addSeparator();
  auto pickAndRun = [this](const QString& what, auto&& fn) {
    QString err;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const bool ok = fn(&err);
    QApplication::restoreOverrideCursor();
    if (!ok) QMessageBox::warning(this, what, err);
  };
  ex->addAction(tr("Run &results (JSON, CSV)…"), this, [this, pickAndRun] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export run results to folder"));
    if (dir.isEmpty()) return;
    pickAndRun(tr("Export run results"), [&](QString* e) { return exportRunResults(dir, e); });
  });
  ex->addAction(tr("&Trace (Chrome/Perfetto JSON)…"), this, [this, pickAndRun] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export trace"), "trace.json", tr("Trace (*.json)"));
    if (path.isEmpty()) return;
    pickAndRun(tr("Export trace"), [&](QString* e) { return exportRunTrace(path, e); });
  });
  ex->addAction(tr("C&luster view (PNG)…"), this, [this, pickAndRun] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export cluster view"), "cluster.png", tr("PNG (*.png)"));
    if (path.isEmpty()) return;
    pickAndRun(tr("Export cluster view"), [&](QString* e) { return exportClusterPng(path, e); });
  });
}

namespace {
bool runExport(SimController* ctl, const ExportRunOptions& base, QString* error, ExportRunResult* out) {
  if (!ctl->loaded()) {
    if (error) *error = QObject::tr("No scenario is loaded");
    return false;
  }
  const std::shared_ptr<const LiveFrame> f = ctl->latest();
  ExportRunOptions opt = base;
  opt.events = f->done ? -1 : f->snapshot.events;
  try {
    *out = exportRun(ctl->scenario(), f->changes, opt);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}
}  // namespace

bool MainWindow::exportRunResults(const QString& dir, QString* error) {
  ExportRunOptions opt;
  opt.resultsDir = dir.toStdString();
  ExportRunResult r;
  if (!runExport(ctl_, opt, error, &r)) return false;
  showStatus(tr("Run results (%1 requests, %2 events) written to %3")
                               .arg(r.arrived).arg(r.events).arg(dir), 5000);
  return true;
}

bool MainWindow::exportRunTrace(const QString& path, QString* error) {
  ExportRunOptions opt;
  opt.tracePath = path.toStdString();
  ExportRunResult r;
  if (!runExport(ctl_, opt, error, &r)) return false;
  showStatus(tr("Trace written to %1").arg(path), 5000);
  return true;
}

bool MainWindow::exportClusterPng(const QString& path, QString* error) {
  pull(true);
  QImage shot = cluster_->grab().toImage();
  // The seed and fingerprint travel with the picture, as with the charts.
  if (ctl_->loaded()) {
    const QString name = currentPath_.isEmpty() ? tr("(unsaved scenario)") : QFileInfo(currentPath_).fileName();
    const QMap<QString, QString> meta = runPngText(*ctl_->latest(), ctl_->scenario(), name);
    for (auto it = meta.begin(); it != meta.end(); ++it) shot.setText(it.key(), it.value());
  }
  QSaveFile f(path);
  if (shot.isNull() || !f.open(QIODevice::WriteOnly) || !shot.save(&f, "PNG") || !f.commit()) {
    if (error) *error = tr("cannot write %1").arg(path);
    return false;
  }
  showStatus(tr("Cluster view written to %1").arg(path), 5000);
  return true;
}

}  // namespace sl::ui
