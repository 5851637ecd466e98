// File → Export of the current run, headless (QT_QPA_PLATFORM=offscreen):
// run results and trace of a finished run equal what the run module writes
// for the same scenario (`servelab-cli run --out`), a mid-run export holds
// exactly the requests arrived so far, live changes are replayed, and the
// cluster view is saved as a PNG.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QMenu>
#include <QMenuBar>
#include <QProgressDialog>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <QComboBox>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QRegularExpression>
#include <QSettings>
#include <QLineEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/charts/live_chart.h"
#include "ui/controller/export_run.h"
#include "ui/shell/results_export_dialog.h"
#include "ui/shell/main_window.h"
#include "run/execute.h"
#include "scenario/scenario_io.h"
#include "ui/controller/sim_controller.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSample = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/pascal-baseline-rr.json");

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int csvRows(const QString& path) {
  const std::string s = slurp(path);
  int n = 0;
  for (char c : s) n += c == '\n';
  return n - 1;  // header
}

template <class P> bool waitFrame(SimController& c, P pred, int timeoutMs = 60000) {
  return test::waitFrame(c, pred, timeoutMs);
}

// A copy of the sample with `requests` requests, saved where the window can open it.
QString sampleFile(const QTemporaryDir& tmp, std::int64_t requests, double rateScale = 1) {
  Scenario s = loadScenarioFile(kSample.toStdString());
  s.workload.requests = requests;
  s.workload.arrival.rate *= rateScale;
  const QString path = tmp.filePath("scenario.json");
  std::ofstream(path.toStdString(), std::ios::binary) << dumpScenario(s);
  return path;
}

}  // namespace

class TestExport : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_export");
  }

  void finishedRunEqualsTheCliRun() {
    QTemporaryDir tmp;
    const QString scenario = sampleFile(tmp, 300);
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(scenario, &err), qPrintable(err));
    w.controller()->setMode(RunMode::Express);
    w.controller()->play();
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) { return f.done; }));

    QVERIFY2(w.exportRunResults(tmp.filePath("gui"), &err), qPrintable(err));
    QVERIFY2(w.exportRunTrace(tmp.filePath("gui/trace.json"), &err), qPrintable(err));

    // What `servelab-cli run SCENARIO --out DIR` writes (the run module).
    auto prepared = prepareRun(loadScenarioFile(scenario.toStdString()), scenario.toStdString());
    RunOptions ro;
    ro.outDir = tmp.filePath("cli").toStdString();
    executeRun(*prepared, ro);

    const QStringList cliFiles = QDir(tmp.filePath("cli")).entryList(QDir::Files, QDir::Name);
    QVERIFY(cliFiles.contains("summary.json") && cliFiles.contains("requests.csv") &&
            cliFiles.contains("timeseries.csv") && cliFiles.contains("trace.json"));
    QCOMPARE(QDir(tmp.filePath("gui")).entryList(QDir::Files, QDir::Name), cliFiles);
    for (const QString& f : cliFiles)
      QVERIFY2(slurp(tmp.filePath("gui/" + f)) == slurp(tmp.filePath("cli/" + f)), qPrintable(f + " differs"));
    QCOMPARE(csvRows(tmp.filePath("gui/requests.csv")), 300);
  }

  void midRunExportHoldsTheRequestsArrivedSoFar() {
    QTemporaryDir tmp;
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp, 100000), &err), qPrintable(err));
    SimController& c = *w.controller();
    c.runTo(25);
    QVERIFY(c.waitIdle(60000));
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running && f.clockS >= 25.0; }));
    c.setArrivalRate(20.0);  // a live change: the export replays it
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 1; }));
    c.runTo(40);
    QVERIFY(c.waitIdle(60000));
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running && f.clockS >= 40.0; }));
    const auto f = c.latest();
    QVERIFY(!f->done);
    QVERIFY(f->snapshot.arrived > 100);

    QVERIFY2(w.exportRunResults(tmp.filePath("mid"), &err), qPrintable(err));
    QCOMPARE(csvRows(tmp.filePath("mid/requests.csv")), static_cast<int>(f->snapshot.arrived));
    const auto j = nlohmann::json::parse(slurp(tmp.filePath("mid/summary.json")));
    QCOMPARE(j["requests"]["arrived"].get<std::int64_t>(), f->snapshot.arrived);
    QCOMPARE(j["requests"]["finished"].get<std::int64_t>(), f->snapshot.finished);
    QCOMPARE(j["events"].get<std::int64_t>(), f->snapshot.events);
    QCOMPARE(QString::fromStdString(j["fingerprint"].get<std::string>()),
             QString::fromStdString(fingerprintHex(f->fingerprint)));
    // Probes up to the export point only (one per simulated second here).
    const int rows = csvRows(tmp.filePath("mid/timeseries.csv"));
    QVERIFY2(rows >= 35 && rows <= 41, qPrintable(QString::number(rows)));

    // The worker was not disturbed: the run goes on from where it was.
    c.runTo(45);
    QVERIFY(c.waitIdle(60000));
    QVERIFY(waitFrame(c, [](const LiveFrame& x) { return !x.running && x.clockS >= 45.0; }));
    QVERIFY(c.latest()->snapshot.events > f->snapshot.events);
  }

  void exportMenu() {
    MainWindow w;
    QMenu* file = nullptr;
    for (QAction* a : w.menuBar()->actions())
      if (a->text().remove('&') == "File") file = a->menu();
    QVERIFY(file);
    QMenu* ex = nullptr;
    for (QAction* a : file->actions())
      if (a->menu() && a->text().remove('&') == "Export") ex = a->menu();
    QVERIFY(ex);
    QStringList items;
    for (QAction* a : ex->actions())
      if (!a->isSeparator()) items << a->text().remove('&');
    QCOMPARE(items.size(), 4);
    QVERIFY(items[0].startsWith("Export charts"));
    QCOMPARE(ex->actions().first()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
    QVERIFY(items[1].startsWith("Run results"));
    QVERIFY(items[2].startsWith("Trace"));
    QVERIFY(items[3].startsWith("Cluster view"));
  }

  void replayWithoutTheWindow() {
    // The function itself: stopping after N events gives exactly N events.
    Scenario s = loadScenarioFile(kSample.toStdString());
    s.workload.requests = 200;
    QTemporaryDir tmp;
    ExportRunOptions opt;
    opt.resultsDir = tmp.filePath("r").toStdString();
    opt.events = 1234;
    const ExportRunResult r = exportRun(s, {}, opt);
    QCOMPARE(r.events, 1234);
    QVERIFY(!r.complete);
    QCOMPARE(csvRows(tmp.filePath("r/requests.csv")), static_cast<int>(r.arrived));
    const ReplayResult ref = replayRun(s, {}, 1234);
    QCOMPARE(r.fingerprint, ref.fingerprint);
    QCOMPARE(r.finished, ref.finished);

    // Cancelled: RunCancelled, and nothing written (not even the folder);
    // the progress callback reports fractions in [0, 1].
    std::atomic<bool> cancel{true};
    ExportRunOptions c = opt;
    c.resultsDir = tmp.filePath("cancelled").toStdString();
    c.events = -1;
    c.cancel = &cancel;
    QVERIFY_THROWS_EXCEPTION(RunCancelled, exportRun(s, {}, c));
    QVERIFY(!QDir(tmp.filePath("cancelled")).exists());
    std::vector<double> seen;
    ExportRunOptions p = opt;
    p.resultsDir = tmp.filePath("progress").toStdString();
    p.events = -1;
    p.progress = [&seen](double x) { seen.push_back(x); };
    QVERIFY(exportRun(s, {}, p).complete);
    QVERIFY(!seen.empty());
    for (const double x : seen) QVERIFY2(x >= 0 && x <= 1, qPrintable(QString::number(x)));
  }

  // Issue 27 item 2 in the app: the results export writes the groups
  // chosen (`--outputs`), each file the same bytes as in an export of all.
  void exportWritesTheChosenGroups() {
    Scenario s = loadScenarioFile(kSample.toStdString());
    s.workload.requests = 300;
    QTemporaryDir tmp;
    const auto files = [&](const QString& dir) {
      return QDir(tmp.filePath(dir)).entryList(QDir::Files, QDir::Name);
    };
    ExportRunOptions all;
    all.resultsDir = tmp.filePath("all").toStdString();
    all.outputs = OutputSet{};  // every group, trace.json in the folder
    exportRun(s, {}, all);
    QCOMPARE(files("all"), (QStringList{"requests.csv", "summary.json", "tail_ttft.csv", "timeseries.csv", "trace.json"}));
    const std::map<std::string, QStringList> groups = {
        {"summary", {"summary.json", "tail_ttft.csv"}},
        {"requests,trace", {"requests.csv", "trace.json"}},
        {"timeseries", {"timeseries.csv"}},
    };
    for (const auto& [list, want] : groups) {
      const QString dir = QString::fromStdString("g-" + list);
      ExportRunOptions o;
      o.resultsDir = tmp.filePath(dir).toStdString();
      o.outputs = parseOutputSet(list);
      exportRun(s, {}, o);
      QCOMPARE(files(dir), want);
      for (const QString& f : want)
        QVERIFY2(slurp(tmp.filePath(dir + "/" + f)) == slurp(tmp.filePath("all/" + f)), qPrintable(dir + "/" + f));
    }
    // The default: all but the trace (File ▸ Export ▸ Trace… writes it).
    ExportRunOptions d;
    d.resultsDir = tmp.filePath("default").toStdString();
    exportRun(s, {}, d);
    QCOMPARE(files("default"), (QStringList{"requests.csv", "summary.json", "tail_ttft.csv", "timeseries.csv"}));
  }

  // The dialog behind File ▸ Export ▸ Run results…: the groups as check
  // boxes (first time all but the trace, then the last choice), Export off
  // with none chosen, and the CLI command that writes the same files.
  void resultsExportDialogChoosesGroups() {
    QSettings().remove("exportOutputs");
    {
      ResultsExportDialog d("my-run");
      QVERIFY(d.folder().endsWith("my-run-results"));
      const OutputSet o = d.outputs();
      QVERIFY(o.summary && o.requests && o.timeseries && !o.trace);
      QVERIFY(d.exportButton()->isEnabled());
      QVERIFY2(d.commandLine().endsWith("--outputs summary,requests,timeseries"), qPrintable(d.commandLine()));
      for (int i = 0; i < 3; ++i) d.groupBox(i)->setChecked(false);
      QVERIFY(!d.exportButton()->isEnabled());
      d.groupBox(3)->setChecked(true);
      d.groupBox(0)->setChecked(true);
      QVERIFY(d.exportButton()->isEnabled());
      QVERIFY2(d.commandLine() == "servelab-cli run my-run.json --out " + d.folder() + " --outputs summary,trace",
               qPrintable(d.commandLine()));
      for (int i = 0; i < 4; ++i) d.groupBox(i)->setChecked(true);
      QVERIFY2(!d.commandLine().contains("--outputs"), qPrintable(d.commandLine()));  // all: the default
      d.folderEdit()->setText("  ");
      QVERIFY(!d.exportButton()->isEnabled());
      ResultsExportDialog::rememberOutputs(parseOutputSet("requests,trace"));
    }
    ResultsExportDialog again("x");
    QCOMPARE(again.outputs(), parseOutputSet("requests,trace"));
    QSettings().remove("exportOutputs");
  }

  // The window's export replays on a thread of its own behind a progress
  // dialog: its Cancel stops the replay, nothing is written, no error box,
  // the status bar says so, and the window's own run is untouched. (The
  // dialog exists from the start; a zero timer presses Cancel as soon as the
  // window's loop turns, long before the 10^5-request replay ends.)
  void cancelledExportWritesNothing() {
    QTemporaryDir tmp;
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp, 100000, 60), &err), qPrintable(err));
    SimController& c = *w.controller();
    c.runTo(150);
    QVERIFY(c.waitIdle(60000));
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running && f.clockS >= 150.0; }));
    const std::int64_t events = c.latest()->snapshot.events;
    QVERIFY2(events > 65536, qPrintable(QString::number(events)));  // a replay long enough to be cancelled mid-way
    bool pressed = false;
    QTimer::singleShot(0, &w, [&] {
      if (auto* d = w.findChild<QProgressDialog*>("exportProgress"))
        if (auto* b = d->findChild<QPushButton*>()) {
          b->click();  // the dialog's Cancel
          pressed = true;
        }
    });
    err = "not cleared";
    QVERIFY(!w.exportRunResults(tmp.filePath("cancelled"), &err));
    QVERIFY(pressed);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    QVERIFY(!QDir(tmp.filePath("cancelled")).exists());
    QVERIFY2(w.statusBar()->currentMessage().contains("cancelled"), qPrintable(w.statusBar()->currentMessage()));
    QCOMPARE(c.latest()->snapshot.events, events);

    // Not cancelled: the same call writes the files.
    QVERIFY2(w.exportRunResults(tmp.filePath("done"), &err), qPrintable(err));
    QCOMPARE(csvRows(tmp.filePath("done/requests.csv")), static_cast<int>(c.latest()->snapshot.arrived));
  }

  // Issue 29, slide exports: text scales with the canvas (a slide preset's
  // tick labels are 1/30 of its height, the screen preset's as on screen),
  // live changes are labelled markers or left out, the export dialog offers
  // a custom size and a folder that is not samples/.
  void slideExportsScaleTextAndLabelChanges() {
    QTemporaryDir tmp;
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp, 1000), &err), qPrintable(err));
    SimController& c = *w.controller();
    c.runTo(20);
    QVERIFY(c.waitIdle(60000));
    c.setArrivalRate(14.0);
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 1; }));
    c.runTo(40);
    QVERIFY(c.waitIdle(60000));
    w.pullNow();
    LiveChart* ttft = w.chartPanel()->chart("ttft");
    QCOMPARE(ttft->shownMarkerLabels(), QStringList{"rate 14/s"});  // labelled on screen too
    const QFont before = ttft->labelFont();

    // Largest font size in an SVG's text, in pixels (QSvgGenerator writes
    // the font's point size; the charts convert at the screen's dpi).
    auto svgFontPx = [&](const QString& path) {
      const QString svg = QString::fromStdString(slurp(path));
      double best = 0;
      static const QRegularExpression re(R"re(font-size="([0-9.]+)")re");
      for (auto it = re.globalMatch(svg); it.hasNext();)
        best = std::max(best, it.next().captured(1).toDouble() * ttft->logicalDpiY() / 72.0);
      return best;
    };
    const ChartExportPreset* slide = chartExportPreset("slide");
    const ChartExportPreset* screen = chartExportPreset("screen");
    QVERIFY(slide && screen);
    QVERIFY(w.exportCharts(tmp.filePath("slide"), slide->options) >= 28);
    QVERIFY(w.exportCharts(tmp.filePath("screen"), screen->options) >= 28);
    // The title is the largest text: 1.19 × the labels' 1/30 of 900 px.
    const double slideTitle = svgFontPx(tmp.filePath("slide/ttft.svg"));
    const double screenTitle = svgFontPx(tmp.filePath("screen/ttft.svg"));
    QVERIFY2(std::fabs(slideTitle - 900.0 / 30 * 0.95 / 0.8) < 0.5, qPrintable(QString::number(slideTitle)));
    QVERIFY2(screenTitle < slideTitle / 2, qPrintable(QString::number(screenTitle)));
    // Lines scale with the text (label px / 10: ×3 on a slide, ×1 on paper):
    // the widest stroke is a series' 1.6 px × 3 on the slide, at most the
    // screen's 2 px window line in the screen export.
    QCOMPARE(slide->options.lineScale(), 3.0);
    QCOMPARE(chartExportPreset("paper")->options.lineScale(), 1.0);
    auto svgMaxStroke = [](const QString& path) {
      const QString svg = QString::fromStdString(slurp(path));
      double best = 0;
      static const QRegularExpression re(R"re(stroke-width="([0-9.]+)")re");
      for (auto it = re.globalMatch(svg); it.hasNext();) best = std::max(best, it.next().captured(1).toDouble());
      return best;
    };
    const double slideStroke = svgMaxStroke(tmp.filePath("slide/ttft.svg"));
    const double screenStroke = svgMaxStroke(tmp.filePath("screen/ttft.svg"));
    QVERIFY2(slideStroke >= 4.8 - 1e-6, qPrintable(QString::number(slideStroke)));
    QVERIFY2(screenStroke > 0 && screenStroke <= 2.0, qPrintable(QString::number(screenStroke)));
    QCOMPARE(ttft->lineScale(), 1.0);  // back to the screen's widths
    // The change is a labelled marker in the export; or left out on request.
    QVERIFY(slurp(tmp.filePath("slide/ttft.svg")).find("rate 14/s") != std::string::npos);
    ChartExportOptions bare = slide->options;
    bare.markers = false;
    QVERIFY(w.exportCharts(tmp.filePath("bare"), bare) >= 28);
    QVERIFY(slurp(tmp.filePath("bare/ttft.svg")).find("rate 14/s") == std::string::npos);
    // The charts on screen are as they were: font inherited, markers back,
    // the plot inside the view (a slide font left the chart laid out taller
    // than its view, its x axis cut off).
    QVERIFY(test::waitSettled(w));
    const QPoint origin = ttft->viewPosOf(QPointF(ttft->xRange().first, ttft->yRange().first));
    QVERIFY2(origin.y() < ttft->plotWidget()->height() && origin.x() < ttft->plotWidget()->width(),
             qPrintable(QString("origin at %1,%2 in a %3x%4 view").arg(origin.x()).arg(origin.y())
                            .arg(ttft->plotWidget()->width()).arg(ttft->plotWidget()->height())));
    QVERIFY(!ttft->testAttribute(Qt::WA_SetFont));
    QCOMPARE(ttft->labelFont(), before);
    QCOMPARE(ttft->shownMarkerLabels(), QStringList{"rate 14/s"});
    // Sizes: slide 2× is 3200×1800 px; a custom size as asked.
    QVERIFY(w.exportCharts(tmp.filePath("slide2"), chartExportPreset("slide-2x")->options) >= 28);
    QCOMPARE(QImage(tmp.filePath("slide2/ttft.png")).size(), QSize(3200, 1800));
    if (qEnvironmentVariableIsSet("EXPORT_SHOTS")) {
      const QString out = qEnvironmentVariable("EXPORT_SHOTS");
      for (const char* d : {"slide", "screen", "bare", "slide2"})
        for (const char* f : {"ttft", "kv_usage", "ttft_vs_reasoning", "throughput"})
          QFile::copy(tmp.filePath(QString("%1/%2.png").arg(d, f)), out + QString("/%1-%2.png").arg(d, f));
    }

    // The dialog: presets fill the fields, editing them is "Custom size".
    ChartExportDialog dlg("pascal-baseline-rr");
    QVERIFY2(!dlg.folder().contains("/samples"), qPrintable(dlg.folder()));
    QVERIFY2(dlg.folder().endsWith("/pascal-baseline-rr-charts"), qPrintable(dlg.folder()));
    dlg.presetBox()->setCurrentIndex(dlg.presetBox()->findData("slide"));
    QCOMPARE(dlg.widthBox()->value(), 1600);
    QCOMPARE(dlg.options().textFraction, 1.0 / 30);
    dlg.widthBox()->setValue(1280);
    dlg.heightBox()->setValue(720);
    QCOMPARE(dlg.presetBox()->currentIndex(), dlg.customIndex());
    dlg.textBox()->setValue(4);
    dlg.markersBox()->setChecked(false);
    const ChartExportOptions o = dlg.options();
    QCOMPARE(o.size, QSize(1280, 720));
    QCOMPARE(o.scale, 1.0);
    QCOMPARE(o.textFraction, 0.04);
    QVERIFY(!o.markers);
    QVERIFY(w.exportCharts(tmp.filePath("custom"), o) >= 28);
    QCOMPARE(QImage(tmp.filePath("custom/ttft.png")).size(), QSize(1280, 720));
    // The folder last exported to is proposed next time (its parent, with
    // the next scenario's name).
    ChartExportDialog::rememberFolder(tmp.filePath("custom"));
    QCOMPARE(ChartExportDialog("x").folder(), QDir(tmp.path()).filePath("x-charts"));
  }

  void clusterViewPng() {
    QTemporaryDir tmp;
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp, 1000), &err), qPrintable(err));
    w.controller()->runTo(10);
    QVERIFY(w.controller()->waitIdle(60000));
    QVERIFY2(w.exportClusterPng(tmp.filePath("cluster.png"), &err), qPrintable(err));
    const QImage img(tmp.filePath("cluster.png"));
    QVERIFY(!img.isNull());
    QCOMPARE(img.size(), w.clusterView()->size() * w.clusterView()->devicePixelRatioF());
    // Not a blank picture: the cards are drawn.
    QSet<QRgb> colours;
    for (int y = 0; y < img.height(); y += 7)
      for (int x = 0; x < img.width(); x += 7) colours.insert(img.pixel(x, y));
    QVERIFY(colours.size() > 5);
  }
};

QTEST_MAIN(TestExport)
#include "test_export.moc"
