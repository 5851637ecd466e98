// servelab: the desktop what-if lab (50-gui.md).
//
//   servelab [SCENARIO.json]
//   servelab --first-screen          (what `bash .ci/servelab run` opens)
//   servelab --scenario FILE --screenshot OUT.png [--run-for SIM_SECONDS] (default: to the end)
//            [--size WxH] [--no-opengl] [--compare POLICY,POLICY[,…]]
//            [--lecture] [--tour ID[:STEP]] [--inspect REQUEST_ID|gpuN|auto]
//   servelab --scenario FILE --run-for T --export-charts DIR
//            [--export-preset ID] [--export-size WxH] [--export-scale S] [--export-no-markers]
//
// A scenario that cannot be loaded (malformed, refused by the engine) is
// reported on stderr, naming the file and the place, with exit code 2.
// --export-charts writes what File ▸ Export ▸ Charts… writes (every chart as
// PNG, SVG and CSV) after the run and exits.
// With --screenshot the window is laid out at --size, the scenario optionally
// runs headless for --run-for simulated seconds, the main window is rendered
// to OUT.png and the program exits (0 on success). --compare opens compare
// mode for 2–4 policies (the first is the reference); with --screenshot the
// compare window is the one rendered.
//
// --check-tours OUT.json (not in --help; tests/ui/xvfb_tours.sh): once the
// window is up, walk every step of every guided tour (of --tour ID only,
// when given), normal and in lecture mode (with --lecture, lecture mode
// only), in the window as the window manager sized it; write what each
// step's layout gets wrong (ui/cluster/layout_check.h: compact cards, a
// named field elided, an arrow over text or bars; a tour text that
// scrolls) and what its text as shown gets wrong
// (ui/teaching/tour_claims_check.h: a comparison's word against its two
// quoted numbers, an outcome word typed outside a comparison) to OUT.json
// and exit: 0 when nothing, 1 otherwise. With
// --check-tours-pause DIR it waits after each step, for up to 20 s, until
// DIR/<tour>-<step>.ready, which it writes, is removed (by the script
// taking a screenshot of the screen).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScreen>
#include <QSettings>
#include <QStyleFactory>
#include <QTimer>

#include <cstdio>

#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "ui/charts/chart_panel.h"
#include "ui/charts/chart_render.h"
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/layout_check.h"
#include "ui/common/ui_info.h"
#include "ui/compare/compare_window.h"
#include "ui/controller/sim_controller.h"
#include "ui/shell/main_window.h"
#include "ui/teaching/tour_claims_check.h"
#include "ui/teaching/tour_guide.h"

namespace {

void applyLightPalette(QApplication& app) {
  app.setStyle(QStyleFactory::create("Fusion"));
  QPalette p = app.palette();
  p.setColor(QPalette::Window, QColor(0xF3, 0xF5, 0xF8));
  p.setColor(QPalette::Base, Qt::white);
  p.setColor(QPalette::AlternateBase, QColor(0xF7, 0xF8, 0xFA));
  p.setColor(QPalette::Button, QColor(0xFA, 0xFB, 0xFC));
  p.setColor(QPalette::Highlight, QColor(0x2F, 0x6F, 0xB5));
  p.setColor(QPalette::WindowText, QColor(0x1F, 0x29, 0x37));
  p.setColor(QPalette::Text, QColor(0x1F, 0x29, 0x37));
  p.setColor(QPalette::ButtonText, QColor(0x1F, 0x29, 0x37));
  app.setPalette(p);
}

bool parseSize(const QString& s, QSize& out) {
  const QStringList parts = s.toLower().split('x');
  if (parts.size() != 2) return false;
  bool a = false, b = false;
  out = QSize(parts[0].toInt(&a), parts[1].toInt(&b));
  return a && b && out.width() >= 320 && out.height() >= 240;
}

// Batch modes (and --help/--version) show no window: they must not need a
// display. Looked up in argv because the platform is chosen when
// QApplication is constructed, before QCommandLineParser can run.
bool isBatchInvocation(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const QByteArray a(argv[i]);
    if (a == "--") break;
    for (const char* opt : {"--screenshot", "--export-charts"})
      if (a == opt || a.startsWith(QByteArray(opt) + '=')) return true;
    if (a == "--help" || a == "-h" || a == "--help-all" || a == "--version" || a == "-v") return true;
  }
  return false;
}

// Let the window manager's resizes, the layouts and the charts' relayouts
// land: events for `ms` of wall time.
void settle(int ms) {
  QEventLoop loop;
  QTimer::singleShot(ms, &loop, &QEventLoop::quit);
  loop.exec();
}

QJsonArray sizeJson(QSize s) { return {s.width(), s.height()}; }

// --check-tours: every step of `tours` (all when empty), in lecture mode or
// not as `modes` says, checked in the window as it is; the report to `out`.
int checkTours(sl::ui::MainWindow& w, const QString& out, const QString& tourId, const std::vector<bool>& modes,
               const QString& pauseDir) {
  using namespace sl::ui;
  settle(1500);  // the window manager places and sizes the window
  QJsonArray steps;
  int problems = 0;
  for (const bool lecture : modes) {
    w.setLecture(lecture);
    for (const Tour& t : availableTours(MainWindow::samplesDir())) {
      if (!tourId.isEmpty() && t.id.compare(tourId, Qt::CaseInsensitive) != 0) continue;
      QString err;
      if (!w.startTour(t.id, 0, false, &err)) {
        std::fprintf(stderr, "servelab: --check-tours: %s\n", qPrintable(err));
        return 2;
      }
      int dockWidth = -1;
      for (int s = 0; s < static_cast<int>(t.steps.size()); ++s) {
        if (!w.showTourStep(s, false, &err)) {
          std::fprintf(stderr, "servelab: --check-tours: %s\n", qPrintable(err));
          return 2;
        }
        // What 20 wall seconds of the step show at its own speed (as
        // tests/ui/test_tour_layout.cpp).
        const TourStep& step = t.steps[static_cast<std::size_t>(s)];
        w.controller()->runTo(std::min(60.0, 20 * step.speed));
        if (!w.controller()->waitIdle(120000)) {
          std::fprintf(stderr, "servelab: --check-tours: %s step %d timed out\n", qPrintable(t.id), s + 1);
          return 1;
        }
        w.pullNow();
        settle(120);
        w.pullNow();
        ClusterView* cv = w.clusterView();
        const QString where = QString("%1 step %2%3").arg(t.id).arg(s + 1).arg(lecture ? " (lecture)" : "");
        QStringList found =
            layoutcheck::viewProblems(*cv, w.controller()->latest()->snapshot, w.tourPanel()->watchText(), where);
        for (const QString& p : w.tourPanel()->layoutProblems()) found << where + ": tour panel: " + p;
        // The step's words against its numbers, as the panel shows them now
        // (the run paused: its figures and the baseline's at the same time).
        const QString text = w.tourPanel()->watchText();
        for (const QString& p : tourcheck::directionProblems(text)) found << where + ": tour text: " + p;
        const int dw = w.tourDock()->width();
        if (dockWidth < 0) dockWidth = dw;
        if (std::abs(dw - dockWidth) > 2) found << where + QString(": tour panel %1 px wide, %2 px at step 1").arg(dw).arg(dockWidth);
        QJsonObject o;
        o["tour"] = t.id;
        o["step"] = s + 1;
        o["lecture"] = lecture;
        o["window"] = sizeJson(w.size());
        o["cluster_view"] = sizeJson(cv->size());
        o["cards"] = cv->tiles() ? "tiles" : cv->compact() ? "compact" : cv->dense() ? "dense" : "full";
        o["comparisons"] = static_cast<int>(tourcheck::comparisons(text).size());
        o["problems"] = QJsonArray::fromStringList(found);
        steps.append(o);
        problems += static_cast<int>(found.size());
        for (const QString& p : found) std::printf("%s\n", qPrintable(p));
        std::fflush(stdout);
        if (!pauseDir.isEmpty()) {
          w.pullNow();
          cv->repaint();
          settle(200);
          const QString ready = QString("%1/%2-%3.ready").arg(pauseDir, t.id).arg(s + 1);
          QFile(ready).open(QIODevice::WriteOnly);
          for (int i = 0; i < 200 && QFileInfo::exists(ready); ++i) settle(100);
        }
      }
      w.closeTour();
    }
  }
  QJsonObject report;
  const QScreen* sc = w.screen();
  report["screen"] = sizeJson(sc ? sc->geometry().size() : QSize());
  report["available"] = sizeJson(sc ? sc->availableGeometry().size() : QSize());
  report["window"] = sizeJson(w.size());
  report["maximized"] = w.isMaximized();
  report["steps"] = steps;
  report["problems"] = problems;
  QFile f(out);
  if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(report).toJson()) < 0) {
    std::fprintf(stderr, "servelab: --check-tours: cannot write %s\n", qPrintable(out));
    return 2;
  }
  std::printf("%d steps checked at %dx%d, %d problems\n", static_cast<int>(steps.size()), w.width(), w.height(), problems);
  return problems == 0 ? 0 : 1;
}

// A first start (no layout saved) takes the screen: all of a laptop's or a
// projector's (up to 1600×1000 available: the window manager's border and
// title bar excepted, MainWindow::fitToScreen), 90 % of a larger one,
// centred; a saved layout is adapted to the screen
// (MainWindow::restoreSettings) and kept inside it.
void openOnScreen(sl::ui::MainWindow& w) {
  const QScreen* sc = w.screen() ? w.screen() : QGuiApplication::primaryScreen();
  if (QSettings().contains("geometry") || !sc) return w.fitToScreen();
  const QRect avail = sc->availableGeometry();
  if (avail.width() < 1600 || avail.height() < 1000) {
    w.resize(avail.size());
    return w.fitToScreen();  // and its docks
  }
  QRect r(QPoint(0, 0), avail.size() * 0.9);
  r.moveCenter(avail.center());
  w.setGeometry(r);
  w.fitDocksToSize();
}

}  // namespace

// Qt's offscreen platform warns once per window that it "does not support
// propagateSizeHints()": noise on every batch run, dropped here; every other
// message goes to Qt's default handler.
QtMessageHandler defaultHandler = nullptr;
void quietHandler(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
  if (type == QtWarningMsg && msg.contains(QLatin1String("propagateSizeHints"))) return;
  if (defaultHandler) defaultHandler(type, ctx, msg);
}

// The batch modes' run length when --run-for is not given: the scenario to
// its end (a huge simulated time; the run stops when it is done).
constexpr double kRunToEnd = 1e9;  // 1e18 ns: within SimTime

int main(int argc, char** argv) {
  // Offscreen unless QT_QPA_PLATFORM says otherwise, as `servelab-cli plot`:
  // the same pixels with or without an X server, and no abort without one.
  if (isBatchInvocation(argc, argv)) sl::ui::preferOffscreenPlatform();
  defaultHandler = qInstallMessageHandler(quietHandler);
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName("ServeLab");
  QCoreApplication::setApplicationName("servelab");
  QCoreApplication::setApplicationVersion(sl::ui::versionString());
  QGuiApplication::setDesktopFileName("servelab");
  applyLightPalette(app);

  QCommandLineParser cli;
  cli.setApplicationDescription("ServeLab: a live, animated what-if lab for LLM serving schedulers.");
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption scenarioOpt("scenario", "Scenario JSON file to open.", "FILE");
  QCommandLineOption shotOpt("screenshot", "Render the main window to OUT.png and exit.", "OUT.png");
  QCommandLineOption runForOpt("run-for",
                               "With --screenshot / --export-charts: run this many simulated seconds first "
                               "(default: the scenario to its end; 0: t = 0).",
                               "SIM_SECONDS");
  QCommandLineOption sizeOpt("size", "Window size, e.g. 1280x800.", "WxH");
  QCommandLineOption noGlOpt("no-opengl", "Never use OpenGL for charts.");
  QCommandLineOption compareOpt("compare", "Compare mode: 2-4 policy ids, the first is the reference (e.g. pascal,fcfs,rr).",
                                "POLICIES");
  cli.addOptions({scenarioOpt, shotOpt, runForOpt, sizeOpt, noGlOpt, compareOpt});
  QCommandLineOption lectureOpt("lecture", "Start in lecture mode (larger fonts, slower speed, callouts).");
  QCommandLineOption tourOpt("tour", "Start guided tour ID at STEP (1-based), e.g. pascal or pascal:3.", "ID[:STEP]");
  QCommandLineOption inspectOpt("inspect", "Open the inspector on a request id, an instance (gpuN), or 'auto' "
                                           "(a request that was preempted or migrated).", "WHAT");
  QCommandLineOption firstOpt("first-screen", "Open the first screen (FCFS under memory pressure at 4×, as on a "
                                             "first start) whatever scenario was open last.");
  cli.addOptions({lectureOpt, tourOpt, inspectOpt, firstOpt});
  QCommandLineOption checkToursOpt("check-tours", "Walk every guided-tour step, write its layout problems to OUT.json, exit.",
                                   "OUT.json");
  checkToursOpt.setFlags(QCommandLineOption::HiddenFromHelp);
  QCommandLineOption checkPauseOpt("check-tours-pause", "With --check-tours: wait after each step for DIR/<tour>-<step>.ready "
                                                         "to be removed.", "DIR");
  checkPauseOpt.setFlags(QCommandLineOption::HiddenFromHelp);
  cli.addOptions({checkToursOpt, checkPauseOpt});
  QCommandLineOption exportOpt("export-charts", "Run (--run-for), write every chart to DIR as File ▸ Export ▸ Charts… "
                                                "does, and exit.", "DIR");
  QCommandLineOption exportSizeOpt("export-size", "Chart size for --export-charts (default 960x600).", "WxH");
  QCommandLineOption exportScaleOpt("export-scale", "PNG pixels per layout pixel for --export-charts (default 2).",
                                    "S");
  QStringList presetIds;
  for (const sl::ui::ChartExportPreset& p : sl::ui::chartExportPresets()) presetIds << p.id;
  QCommandLineOption exportPresetOpt("export-preset",
                                     "Size and text of --export-charts as File ▸ Export ▸ Charts… offers them: " +
                                         presetIds.join(", ") + " (--export-size/--export-scale then override the size).",
                                     "ID");
  QCommandLineOption noMarkersOpt("export-no-markers", "--export-charts without the live-change markers.");
  cli.addOptions({exportOpt, exportSizeOpt, exportScaleOpt, exportPresetOpt, noMarkersOpt});
  cli.addPositionalArgument("scenario", "Scenario JSON file to open (same as --scenario).", "[FILE]");
  cli.process(app);

  // OpenGL series only where a real GL context can exist (never offscreen,
  // never in screenshots, whose SVG/PNG paths render in software anyway).
  const QString platform = QGuiApplication::platformName();
  const bool gl = !cli.isSet(noGlOpt) && !cli.isSet(shotOpt) && platform != "offscreen" && platform != "minimal";
  sl::ui::setChartsUseOpenGL(gl);

  QString scenario = cli.value(scenarioOpt);
  if (scenario.isEmpty() && !cli.positionalArguments().isEmpty()) scenario = cli.positionalArguments().first();

  sl::ui::MainWindow w;
  QSize size(1280, 800);
  if (cli.isSet(sizeOpt) && !parseSize(cli.value(sizeOpt), size)) {
    std::fprintf(stderr, "servelab: --size: expected WxH, e.g. 1280x800 (got '%s')\n", qPrintable(cli.value(sizeOpt)));
    return 2;
  }
  sl::ui::ChartExportOptions exportOptions;
  if (cli.isSet(exportPresetOpt)) {
    const sl::ui::ChartExportPreset* p = sl::ui::chartExportPreset(cli.value(exportPresetOpt));
    if (!p) {
      std::fprintf(stderr, "servelab: --export-preset: unknown preset '%s' (one of %s)\n",
                   qPrintable(cli.value(exportPresetOpt)), qPrintable(presetIds.join(", ")));
      return 2;
    }
    exportOptions = p->options;
  }
  exportOptions.markers = !cli.isSet(noMarkersOpt);
  QSize exportSize = exportOptions.size;
  if (cli.isSet(exportSizeOpt) && (!parseSize(cli.value(exportSizeOpt), exportSize) || exportSize.width() > 8000 ||
                                   exportSize.height() > 8000)) {
    std::fprintf(stderr, "servelab: --export-size: expected WxH between 320x240 and 8000x8000 (got '%s')\n",
                 qPrintable(cli.value(exportSizeOpt)));
    return 2;
  }
  double exportScale = exportOptions.scale;
  if (cli.isSet(exportScaleOpt)) {
    bool ok = false;
    exportScale = cli.value(exportScaleOpt).toDouble(&ok);
    if (!ok || exportScale < 0.5 || exportScale > 4) {
      std::fprintf(stderr, "servelab: --export-scale: expected a number from 0.5 to 4 (got '%s')\n",
                   qPrintable(cli.value(exportScaleOpt)));
      return 2;
    }
  }
  if (cli.isSet(sizeOpt) || cli.isSet(shotOpt)) {
    w.resize(size);
    w.fitDocksToSize();
  }
  // --tour ID[:STEP] (STEP is 1-based).
  QString tourId;
  int tourStep = 0;
  if (cli.isSet(tourOpt)) {
    const QStringList parts = cli.value(tourOpt).split(':');
    bool ok = parts.size() <= 2 && !parts[0].isEmpty();
    tourId = parts[0];
    if (ok && parts.size() == 2) {
      tourStep = parts[1].toInt(&ok) - 1;
      ok = ok && tourStep >= 0;
    }
    if (!ok) {
      std::fprintf(stderr, "servelab: --tour: expected ID or ID:STEP with STEP >= 1, e.g. pascal:2 (got '%s')\n",
                   qPrintable(cli.value(tourOpt)));
      return 2;
    }
  }
  auto startTeaching = [&]() -> int {
    if (cli.isSet(lectureOpt)) w.setLecture(true);
    if (!tourId.isEmpty()) {
      QString err;
      if (!w.startTour(tourId, tourStep, false, &err)) {
        std::fprintf(stderr, "servelab: --tour: %s\n", qPrintable(err));
        return 2;
      }
    }
    if (cli.isSet(inspectOpt) && cli.value(inspectOpt) != "auto") {
      QString err;
      if (!w.inspect(cli.value(inspectOpt), &err)) {
        std::fprintf(stderr, "servelab: --inspect: %s\n", qPrintable(err));
        return 2;
      }
    }
    return 0;
  };

  QStringList comparePolicies;
  if (cli.isSet(compareOpt)) {
    for (const QString& p : cli.value(compareOpt).split(',', Qt::SkipEmptyParts)) comparePolicies << p.trimmed();
    const QString bad = sl::ui::checkComparePolicies(comparePolicies);
    if (!bad.isEmpty()) {
      std::fprintf(stderr, "servelab: --compare: %s\n", qPrintable(bad));
      return 2;
    }
  }

  if (cli.isSet(shotOpt) && !comparePolicies.isEmpty()) {
    // Compare mode only: the compare window is what gets rendered.
    if (scenario.isEmpty()) {
      std::fprintf(stderr, "servelab: --screenshot needs --scenario FILE\n");
      return 2;
    }
    double runFor = kRunToEnd;
    if (cli.isSet(runForOpt)) {
      bool ok = false;
      runFor = cli.value(runForOpt).toDouble(&ok);
      if (!ok || runFor < 0) {
        std::fprintf(stderr, "servelab: --run-for: expected simulated seconds >= 0\n");
        return 2;
      }
    }
    sl::Scenario s;
    try {
      s = sl::loadScenarioOrSavedRun(scenario.toStdString()).scenario;  // a saved run's changes: not in compare
    } catch (const std::exception& e) {
      std::fprintf(stderr, "servelab: %s\n", e.what());
      return 2;
    }
    sl::ui::CompareWindow cw;
    cw.setLecture(cli.isSet(lectureOpt));
    cw.resize(size);
    cw.show();
    QString err;
    if (!cw.load(s, comparePolicies, QFileInfo(scenario).fileName(), &err)) {
      std::fprintf(stderr, "servelab: --compare: %s\n", qPrintable(err));
      return 2;
    }
    if (runFor > 0) {
      cw.runTo(runFor);
      if (!cw.waitIdle(600'000)) {
        std::fprintf(stderr, "servelab: --run-for: timed out\n");
        return 1;
      }
    }
    QCoreApplication::processEvents();
    cw.pullNow();
    QCoreApplication::processEvents();
    const QString out = cli.value(shotOpt);
    if (!cw.grab().save(out, "PNG")) {
      std::fprintf(stderr, "servelab: cannot write %s\n", qPrintable(out));
      return 1;
    }
    std::printf("%s\n", qPrintable(QFileInfo(out).absoluteFilePath()));
    return 0;
  }

  if (cli.isSet(shotOpt) || cli.isSet(exportOpt)) {
    const char* what = cli.isSet(shotOpt) ? "--screenshot" : "--export-charts";
    if (scenario.isEmpty() && tourId.isEmpty() && !cli.isSet(firstOpt)) {
      std::fprintf(stderr, "servelab: %s needs --scenario FILE (or --tour, --first-screen)\n", what);
      return 2;
    }
    QString err;
    w.show();
    if (!scenario.isEmpty() && !w.openScenario(scenario, &err)) {
      std::fprintf(stderr, "servelab: %s\n", qPrintable(err));
      return 2;
    }
    if (scenario.isEmpty() && cli.isSet(firstOpt) && !w.openFirstScreen(&err)) {
      std::fprintf(stderr, "servelab: --first-screen: %s\n", qPrintable(err));
      return 2;
    }
    if (const int rc = startTeaching()) return rc;
    // Without --run-for the scenario runs to its end (docs/user-guide.md);
    // --run-for 0 keeps the window at t = 0.
    double t = kRunToEnd;
    if (cli.isSet(runForOpt)) {
      bool ok = false;
      t = cli.value(runForOpt).toDouble(&ok);
      if (!ok || t < 0) {
        std::fprintf(stderr, "servelab: --run-for: expected simulated seconds >= 0\n");
        return 2;
      }
    }
    if (t > 0) {
      w.controller()->runTo(t);
      if (!w.controller()->waitIdle(600'000)) {
        std::fprintf(stderr, "servelab: --run-for: timed out\n");
        return 1;
      }
    }
    // Let the worker's last frame arrive, then lay out and paint once.
    QCoreApplication::processEvents();
    w.pullNow();
    QCoreApplication::processEvents();
    if (cli.isSet(inspectOpt)) {  // 'auto' picks from what the run reached
      w.inspect(cli.value(inspectOpt));
      QCoreApplication::processEvents();
    }
    // Let resized widgets settle (the charts fit ticks and legend to their
    // size shortly after a resize) before the picture is taken.
    {
      QEventLoop settle;
      QTimer::singleShot(150, &settle, &QEventLoop::quit);
      settle.exec();
      w.pullNow();
      QCoreApplication::processEvents();
    }
    if (cli.isSet(exportOpt)) {
      const QString dir = cli.value(exportOpt);
      exportOptions.size = exportSize;
      exportOptions.scale = exportScale;
      const int n = w.exportCharts(dir, exportOptions);
      if (n < 3 * static_cast<int>(w.chartPanel()->charts().size()) + 1) {  // + run.json
        std::fprintf(stderr, "servelab: --export-charts: cannot write every chart to %s (%d files written)\n",
                     qPrintable(dir), n);
        return 1;
      }
      std::printf("%d files written to %s\n", n, qPrintable(QFileInfo(dir).absoluteFilePath()));
    }
    if (cli.isSet(shotOpt)) {
      const QString out = cli.value(shotOpt);
      if (!w.grab().save(out, "PNG")) {
        std::fprintf(stderr, "servelab: cannot write %s\n", qPrintable(out));
        return 1;
      }
      std::printf("%s\n", qPrintable(QFileInfo(out).absoluteFilePath()));
    }
    return 0;
  }

  if (!scenario.isEmpty()) {
    // A file named on the command line that cannot be opened is an error
    // (exit 2), not an empty window with made-up values.
    QString err;
    if (!w.openScenario(scenario, &err)) {
      std::fprintf(stderr, "servelab: %s\n", qPrintable(err));
      return 2;
    }
    if (!cli.isSet(sizeOpt)) openOnScreen(w);
    w.show();
  } else {
    if (!cli.isSet(sizeOpt)) openOnScreen(w);
    w.show();
    const QString last = QSettings().value("lastScenario").toString();
    if (!cli.isSet(firstOpt) && !last.isEmpty() && QFileInfo::exists(last)) w.openScenario(last);
    else w.openFirstScreen();  // a fresh start: contention within half a minute, and the tours
  }
  if (cli.isSet(checkToursOpt)) {
    const std::vector<bool> modes = cli.isSet(lectureOpt) ? std::vector<bool>{true} : std::vector<bool>{false, true};
    return checkTours(w, cli.value(checkToursOpt), tourId, modes, cli.value(checkPauseOpt));
  }
  if (const int rc = startTeaching()) return rc;
  if (!comparePolicies.isEmpty()) {
    QString err;
    if (!w.openCompare(comparePolicies, &err)) std::fprintf(stderr, "servelab: --compare: %s\n", qPrintable(err));
  }
  return app.exec();
}
