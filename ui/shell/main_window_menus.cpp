// MainWindow: actions, the run toolbar, menus (presets, recent files) and the
// status bar. The window itself, settings and the run loop: main_window.cpp.
#include "ui/shell/main_window.h"
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

#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/compare/compare_window.h"
#include "ui/shell/help_window.h"
#include "ui/sweep/sweep_window.h"
#include "ui/controller/export_run.h"
#include "run/execute.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "ui/scenario/scenario_panel.h"
#include "ui/controller/sim_controller.h"

#include "ui/plan/plan_window.h"  // Run ▸ Plan deployment…

namespace sl::ui {

namespace {
constexpr int kMaxRecent = 8;  // File ▸ Open recent
}  // namespace

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
  runMode_->setToolTip(tr("Animated, paced at the chosen speed (F5); Play starts and pauses"));
  fastMode_ = new QAction(tr("Fast"), modes_);
  fastMode_->setShortcut(QKeySequence(Qt::Key_F6));
  fastMode_->setToolTip(tr("As fast as possible, display refreshed a few times a second (F6); Play starts and pauses"));
  expressMode_ = new QAction(tr("Express"), modes_);
  expressMode_->setShortcut(QKeySequence(Qt::Key_F7));
  expressMode_->setToolTip(tr("As fast as possible, counters only (F7); Play starts and pauses"));
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
  run->addAction(tr("S&weep…"), this, [this] {  // issue 14: ui/sweep/sweep_window.h
    if (!ctl_->loaded()) return;
    auto* w = new SweepWindow(ctl_->scenario(), this);
    w->setAttribute(Qt::WA_DeleteOnClose);
    connect(w, &SweepWindow::openPoint, this, [this](const Scenario& s, const QString& name) {
      if (loadScenario(s, name)) startInRunMode();
    });
    w->show();
  });
  QAction* planAction = run->addAction(tr("&Plan deployment…"), this, [this] {  // issue 49: ui/plan/plan_window.h
    if (!ctl_->loaded()) return;
    auto* w = new PlanWindow(ctl_->scenario(), this);
    w->setAttribute(Qt::WA_DeleteOnClose);
    connect(w, &PlanWindow::openPoint, this, [this](const Scenario& s, const QString& name) {
      if (loadScenario(s, name)) startInRunMode();
    });
    w->show();
  });
  planAction->setObjectName("PlanDeploymentAction");
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(scenarioDock_->toggleViewAction());
  view->addAction(chartsDock_->toggleViewAction());
  view->addAction(inspectorDock_->toggleViewAction());
  view->addSeparator();
  view->addAction(lecture_);
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* guide = help->addAction(tr("&User guide"), this, [this] { showUserGuide(this); });
  guide->setShortcut(QKeySequence::HelpContents);
  guide->setObjectName("UserGuideAction");
  help->addAction(tr("&Glossary (TTFT, TPOT, p99…)"), this, [this] { showGlossary(this); })->setObjectName("GlossaryAction");
  QAction* keys = help->addAction(tr("&Keyboard shortcuts"), this, [this] {
    // Every menu's actions with a key, in menu order (so the list is the app's own).
    QList<QAction*> all;
    for (QAction* m : menuBar()->actions())
      if (m->menu())
        for (QAction* a : m->menu()->actions())
          if (!a->menu() && !a->shortcuts().isEmpty()) all << a;
    showShortcuts(this, all);
  });
  keys->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
  keys->setObjectName("ShortcutsAction");
  help->addSeparator();
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
  stCost_ = new QLabel;
  stCost_->setObjectName("CostReadout");
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(160);
  progress_->setMaximumHeight(14);
  progress_->setTextVisible(false);
  sb->setStyleSheet("QStatusBar QLabel { padding: 0 6px; }");
  for (QLabel* l : {stTime_, stSpeed_, stEvents_, stRequests_, stCost_}) sb->addPermanentWidget(l);
  sb->addPermanentWidget(progress_);
  sb->addPermanentWidget(stEta_);
  // A message gets the room of everything but the clock while it shows.
  connect(sb, &QStatusBar::messageChanged, this, [this](const QString& m) {
    for (QWidget* wdg : std::initializer_list<QWidget*>{stSpeed_, stEvents_, stRequests_, stCost_, progress_, stEta_})
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

}  // namespace sl::ui
