// MainWindow: scenario and run files (open, save, save run) and the exports
// (charts, run results, trace, cluster picture) behind File.
#include "ui/shell/main_window.h"
#include "ui/shell/results_export_dialog.h"
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
#include <QEventLoop>
#include <QProgressBar>
#include <QProgressDialog>
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
#include <atomic>
#include <cmath>
#include <exception>
#include <thread>

#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/compare/compare_window.h"
#include "ui/sweep/sweep_window.h"
#include "ui/controller/export_run.h"
#include "run/execute.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "ui/scenario/scenario_panel.h"
#include "ui/controller/sim_controller.h"

namespace sl::ui {

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
  cost_.setScenario(s);
  cluster_->setPools(cost_.pools());
  charts_->setRollingWindow(s.run.rolling_window_s);
  charts_->setSpeculationShown(s.cluster.speculative.on);
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
    const bool ok = fn(&err);  // (run exports show their own progress)
    if (!ok && !err.isEmpty()) QMessageBox::warning(this, what, err);  // (empty: cancelled)
  };
  ex->addAction(tr("Run &results (JSON, CSV)…"), this, [this, pickAndRun] {
    // Which files (`--outputs`' groups) and the folder.
    ResultsExportDialog dlg(currentPath_.isEmpty() ? QString() : QFileInfo(currentPath_).completeBaseName(), this);
    if (dlg.exec() != QDialog::Accepted || dlg.folder().isEmpty() || !dlg.outputs().any()) return;
    const QString dir = dlg.folder();
    const OutputSet outputs = dlg.outputs();
    ResultsExportDialog::rememberOutputs(outputs);
    pickAndRun(tr("Export run results"), [&](QString* e) {
      const bool ok = exportRunResults(dir, outputs, e);
      if (ok) ChartExportDialog::rememberFolder(dir);
      return ok;
    });
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

// The replay runs on a thread of its own (a run of 10^7 requests takes a
// minute): the window stays live behind a progress dialog whose Cancel
// stops the replay, and then nothing is written. Returns false with an empty
// error when cancelled.
bool runExport(QWidget* parent, SimController* ctl, const QString& what, const ExportRunOptions& base, QString* error,
               ExportRunResult* out) {
  if (!ctl->loaded()) {
    if (error) *error = QObject::tr("No scenario is loaded");
    return false;
  }
  const std::shared_ptr<const LiveFrame> f = ctl->latest();
  const Scenario scenario = ctl->scenario();  // (copies: the replay's own)
  const ChangeLog changes = f->changes;
  ExportRunOptions opt = base;
  opt.events = f->done ? -1 : f->snapshot.events;
  std::atomic<bool> cancel{false};
  std::atomic<int> permille{0};
  opt.cancel = &cancel;
  opt.progress = [&permille](double fraction) {
    permille.store(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000), std::memory_order_relaxed);
  };
  ExportRunResult result;
  std::exception_ptr failure;
  QProgressDialog dialog(QObject::tr("%1: replaying the run…").arg(what), QObject::tr("Cancel"), 0, 1000, parent);
  dialog.setObjectName("exportProgress");
  dialog.setWindowTitle(what);
  dialog.setWindowModality(Qt::WindowModal);
  dialog.setMinimumDuration(400);  // (quick exports never show it)
  dialog.setAutoReset(false);
  dialog.setAutoClose(false);
  QEventLoop loop;
  QTimer tick;
  QObject::connect(&tick, &QTimer::timeout, &dialog, [&] {
    if (dialog.wasCanceled()) cancel.store(true);  // (the button, Escape, closing the dialog)
    else dialog.setValue(permille.load(std::memory_order_relaxed));
  });
  std::atomic<bool> done{false};
  std::thread worker([&] {
    try {
      result = exportRun(scenario, changes, opt);
    } catch (...) {
      failure = std::current_exception();
    }
    done.store(true);
    QMetaObject::invokeMethod(&loop, &QEventLoop::quit, Qt::QueuedConnection);
  });
  dialog.setValue(0);  // (starts the dialog's minimum-duration clock)
  tick.start(100);
  // A quit handled before exec() starts would be lost: a replay already
  // done by now is not waited for (its posted quit dies with `loop`).
  if (!done.load()) loop.exec();
  worker.join();
  tick.stop();
  dialog.close();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const RunCancelled&) {
      if (error) error->clear();
      return false;
    } catch (const std::exception& e) {
      if (error) *error = QString::fromStdString(e.what());
      return false;
    }
  }
  *out = result;
  return true;
}

}  // namespace

bool MainWindow::exportRunResults(const QString& dir, QString* error) {
  return exportRunResults(dir, ExportRunOptions{}.outputs, error);
}

bool MainWindow::exportRunResults(const QString& dir, const OutputSet& outputs, QString* error) {
  ExportRunOptions opt;
  opt.resultsDir = dir.toStdString();
  opt.outputs = outputs;
  ExportRunResult r;
  QString err;
  if (!runExport(this, ctl_, tr("Export run results"), opt, &err, &r)) {
    if (err.isEmpty()) showStatus(tr("Export of the run results cancelled: nothing was written"), 5000);
    if (error) *error = err;
    return false;
  }
  showStatus(tr("Run results (%1 requests, %2 events: %3) written to %4")
                 .arg(r.arrived).arg(r.events).arg(QString::fromStdString(outputSetString(outputs))).arg(dir),
             5000);
  return true;
}

bool MainWindow::exportRunTrace(const QString& path, QString* error) {
  ExportRunOptions opt;
  opt.tracePath = path.toStdString();
  ExportRunResult r;
  QString err;
  if (!runExport(this, ctl_, tr("Export trace"), opt, &err, &r)) {
    if (err.isEmpty()) showStatus(tr("Export of the trace cancelled: nothing was written"), 5000);
    if (error) *error = err;
    return false;
  }
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
