// Chart interaction and headless rendering, run headless
// (QT_QPA_PLATFORM=offscreen): wheel zoom, drag pan and double-click reset
// while data keeps arriving, hover text of the nearest point, linked time
// axes in the chart panel, the binned tail overlay, and `plot`'s rendering of
// saved results (all charts, sizes, bad input leaving nothing behind).
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTabWidget>
#include <QGraphicsView>
#include <QTest>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "ui/charts/chart_axes.h"
#include "ui/charts/chart_panel.h"
#include "ui_test_util.h"
#include "ui/charts/chart_render.h"
#include "ui/charts/csv_results.h"
#include "metrics/binned_tail.h"
#include "run/execute.h"
#include "scenario/scenario_io.h"
#include "ui/controller/sim_controller.h"
#include "ui/shell/main_window.h"
#include "ui/teaching/tour_guide.h"
#include "util/error.h"

using namespace sl;
using namespace sl::ui;

namespace {

std::vector<QPointF> line(double x0, double x1, double step) {
  std::vector<QPointF> v;
  for (double x = x0; x <= x1 + 1e-9; x += step) v.emplace_back(x, 0.5 * x);
  return v;
}

void wheel(QWidget* w, QPoint pos, int delta) {
  QWheelEvent e(QPointF(pos), QPointF(w->mapToGlobal(pos)), QPoint(), QPoint(0, delta), Qt::NoButton,
                Qt::NoModifier, Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(w, &e);
}

int nonWhitePixels(const QImage& img) {
  int n = 0;
  for (int y = 0; y < img.height(); y += 2)
    for (int x = 0; x < img.width(); x += 2)
      if (img.pixelColor(x, y) != QColor(Qt::white)) ++n;
  return n;
}

ProbeSample probe(double t, int instances) {
  ProbeSample s;
  s.time = secondsToNs(t);
  s.tokens = 1000;
  s.ttftP50 = 0.1 * t;
  s.ttftP99 = 0.2 * t;
  s.tpotP50 = 0.01;
  s.tpotP99 = 0.02;
  s.sloAttainment = 0.9;
  s.qoeViolationRate = 0.1;
  s.instances.resize(static_cast<std::size_t>(instances));
  for (auto& i : s.instances) {
    i.gpuBlocks = 50;
    i.gpuCapacity = 100;
  }
  return s;
}

// The bounding box of the pixels that differ from the background (white).
QRect inkBox(const QImage& img) {
  int x0 = img.width(), y0 = img.height(), x1 = -1, y1 = -1;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x)
      if (img.pixel(x, y) != qRgb(255, 255, 255)) {
        x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
      }
  return x1 < 0 ? QRect() : QRect(QPoint(x0, y0), QPoint(x1, y1));
}

// Pixels close to `c` (within `tol` per channel).
int pixelsNear(const QImage& img, QColor c, int tol = 24) {
  int n = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const QColor p = img.pixelColor(x, y);
      if (std::abs(p.red() - c.red()) <= tol && std::abs(p.green() - c.green()) <= tol &&
          std::abs(p.blue() - c.blue()) <= tol)
        ++n;
    }
  return n;
}

// What a scatter dot of `c` (alpha 150) looks like over white.
QColor overWhite(QColor c, int alpha = 150) {
  auto mix = [&](int v) { return 255 - (255 - v) * alpha / 255; };
  return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

QStringList elided(const LiveChart& c) {
  QStringList out;
  for (const QString& t : c.paintedTexts())
    if (t.contains(QChar(0x2026)) || t.contains("...")) out << t;
  return out;
}

// A panel with a finished-request scatter and 120 s of probes.
void fillPanel(ChartPanel& p, int instances) {
  p.clear(instances);
  std::vector<ProbeSample> probes;
  for (int t = 1; t <= 120; ++t) probes.push_back(probe(t, instances));
  p.addProbes(probes);
  std::vector<FinishedPoint> pts;
  for (int i = 0; i < 600; ++i) {
    FinishedPoint f;
    f.reasoning = (i * 37) % 3000;
    f.ttftS = 0.01 * ((i * 53) % 97) + 0.0005 * f.reasoning;
    pts.push_back(f);
  }
  p.addFinished(pts);
  p.refresh();
}

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

class TestCharts : public QObject {
  Q_OBJECT
private slots:
  void wheelZoomKeepsViewWhileDataArrives() {
    LiveChart c("t", "test", "time (s)", "y");
    const int s = c.addSeries("s", Qt::blue);
    c.resize(640, 400);
    c.show();
    QVERIFY(QTest::qWaitForWindowExposed(&c));
    c.setSeriesData(s, line(0, 100, 1));
    c.refresh();
    QVERIFY(!c.zoomed());
    QCOMPARE(c.xRange().first, 0.0);
    QCOMPARE(c.xRange().second, 100.0);

    // Zoom in around x = 50 (one wheel notch: the span shrinks to 80 %).
    const QPoint at = c.viewPosOf(QPointF(50, 25));
    QSignalSpy spy(&c, &LiveChart::viewChanged);
    wheel(c.plotWidget(), at, 120);
    QVERIFY(c.zoomed());
    QCOMPARE(spy.count(), 1);
    const auto [lo, hi] = c.xRange();
    QVERIFY2(std::abs((hi - lo) - 80.0) < 1.0, qPrintable(QString("%1..%2").arg(lo).arg(hi)));
    QVERIFY(lo < 50 && hi > 50);
    QVERIFY(std::abs((50 - lo) / (hi - lo) - 0.5) < 0.02);  // the point under the cursor stays put

    // More data arrives: the view stays; y follows the data in view.
    c.setSeriesData(s, line(0, 300, 1));
    c.refresh();
    QCOMPARE(c.xRange().first, lo);
    QCOMPARE(c.xRange().second, hi);
    QVERIFY(c.yRange().second < 0.5 * 300 * 0.5);  // not the full data's max (150)
    QVERIFY(c.yRange().second >= 0.5 * hi);

    // Double-click: back to the automatic range, which now covers 0..300.
    QTest::mouseDClick(c.plotWidget(), Qt::LeftButton, Qt::NoModifier, at);
    QVERIFY(!c.zoomed());
    QCOMPARE(c.xRange().first, 0.0);
    QVERIFY(c.xRange().second >= 300.0);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.last().at(2).toBool(), false);
  }

  void dragPansTheView() {
    LiveChart c("t", "test", "x", "y");
    const int s = c.addSeries("s", Qt::blue);
    c.resize(640, 400);
    c.show();
    QVERIFY(QTest::qWaitForWindowExposed(&c));
    c.setSeriesData(s, line(0, 100, 1));
    c.refresh();
    c.setViewX(20, 60);
    const QPoint a = c.viewPosOf(QPointF(40, 10));
    const QPoint b = c.viewPosOf(QPointF(50, 10));  // 10 units to the right
    QTest::mousePress(c.plotWidget(), Qt::LeftButton, Qt::NoModifier, a);
    QMouseEvent move(QEvent::MouseMove, QPointF(b), QPointF(c.plotWidget()->mapToGlobal(b)), Qt::NoButton,
                     Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(c.plotWidget(), &move);
    QTest::mouseRelease(c.plotWidget(), Qt::LeftButton, Qt::NoModifier, b);
    // Dragging the content right by 10 units shows 10 units further left.
    QVERIFY2(std::abs(c.xRange().first - 10) < 0.5 && std::abs(c.xRange().second - 50) < 0.5,
             qPrintable(QString("%1..%2").arg(c.xRange().first).arg(c.xRange().second)));
  }

  void hoverNamesTheNearestPoint() {
    LiveChart c("t", "test", "reasoning tokens", "TTFT (s)");
    const int s = c.addSeries("requests", Qt::blue, SeriesStyle::Scatter);
    c.resize(640, 400);
    c.show();
    QVERIFY(QTest::qWaitForWindowExposed(&c));
    c.setSeriesData(s, {{100, 1.0}, {400, 3.0}, {900, 2.0}});
    c.refresh();
    const QPoint near = c.viewPosOf(QPointF(400, 3.0)) + QPoint(3, -2);
    const QString text = c.hoverText(near);
    QVERIFY2(text.contains("requests") && text.contains("reasoning tokens: 400") && text.contains("TTFT (s): 3"),
             qPrintable(text));
    // Far from every point: nothing.
    QVERIFY(c.hoverText(c.viewPosOf(QPointF(650, 0.2))).isEmpty());
  }

  // run.measure's window (issue 25): its edges are drawn on every time
  // chart, which widen their x range to show the window's end.
  void panelDrawsTheMeasurementWindow() {
    ChartPanel p;
    p.resize(1200, 600);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    p.clear(2);
    std::vector<ProbeSample> probes;
    for (int t = 1; t <= 200; ++t) probes.push_back(probe(t, 2));
    p.addProbes(probes);
    p.refresh();
    for (LiveChart* c : p.timeCharts())
      if (c->seriesCount() > 0 && c != p.policyChart()) QVERIFY2(c->xRange().second < 300, qPrintable(c->id()));
    p.setMeasureWindow(std::make_pair(120.0, 300.0));
    p.refresh();
    for (LiveChart* c : p.timeCharts())
      if (c != p.policyChart()) QVERIFY2(c->xRange().second >= 300, qPrintable(c->id()));
    // Both edges are labelled, on the charts wide enough for the labels.
    QCOMPARE(p.chart("ttft")->shownMarkerLabels(), (QStringList{"warm-up ends", "window ends"}));
    p.grab().save(SERVELAB_TEST_OUT "/charts_window.png");
    // Kept across clear() (a new run of the same scenario), removed by nullopt.
    p.clear(2);
    p.addProbes(probes);
    p.refresh();
    QVERIFY(p.chart("ttft")->xRange().second >= 300);
    p.setMeasureWindow(std::nullopt);
    p.refresh();
    QVERIFY(p.chart("ttft")->xRange().second < 300);
    // Another scenario without a window, loaded as the main window loads it
    // (clear, the new window, clear again on the new run's first frame,
    // then a refresh): the old edges go (they stayed, seen on the tour that
    // follows the measurement-window one).
    p.setMeasureWindow(std::make_pair(120.0, 300.0));
    p.refresh();
    QCOMPARE(p.chart("ttft")->shownMarkerLabels().size(), 2);
    p.clear(2);
    p.setMeasureWindow(std::nullopt);
    p.clear(2);
    p.addProbes(probes);
    p.refresh();
    QVERIFY(p.chart("ttft")->shownMarkerLabels().isEmpty());
    QVERIFY(p.chart("ttft")->xRange().second < 300);
  }

  void panelLinksTimeAxes() {
    ChartPanel p;
    p.resize(1200, 600);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    p.clear(2);
    std::vector<ProbeSample> probes;
    for (int t = 1; t <= 200; ++t) probes.push_back(probe(t, 2));
    p.addProbes(probes);
    p.refresh();
    LiveChart* ttft = p.chart("ttft");
    QVERIFY(ttft);
    wheel(ttft->plotWidget(), ttft->viewPosOf(QPointF(100, 10)), 240);
    QVERIFY(ttft->zoomed());
    for (LiveChart* c : p.timeCharts()) {
      QVERIFY2(c->zoomed(), qPrintable(c->id()));
      QCOMPARE(c->xRange(), ttft->xRange());
    }
    QVERIFY(!p.chart("ttft_vs_reasoning")->zoomed());  // not a time axis
    // For review: the zoomed panel (reset buttons on the time charts).
    p.grab().save(SERVELAB_TEST_OUT "/charts_zoomed.png");
    // New samples: every linked chart keeps the view.
    p.addProbes({probe(201, 2), probe(202, 2)});
    p.refresh();
    for (LiveChart* c : p.timeCharts()) QCOMPARE(c->xRange(), ttft->xRange());
    // Reset on one resets all.
    LiveChart* kv = p.chart("kv_usage");
    QTest::mouseDClick(kv->plotWidget(), Qt::LeftButton, Qt::NoModifier, kv->viewPosOf(QPointF(100, 0.5)));
    for (LiveChart* c : p.timeCharts()) QVERIFY2(!c->zoomed(), qPrintable(c->id()));
    // Unlinked: only the chart under the wheel zooms.
    p.setLinkedTimeAxes(false);
    wheel(ttft->plotWidget(), ttft->viewPosOf(QPointF(100, 10)), 120);
    QVERIFY(ttft->zoomed());
    QVERIFY(!p.chart("tpot")->zoomed());
  }

  void tailOverlayIsTheMetricsModulesBinnedTail() {
    ChartPanel p;
    p.clear(1);
    std::vector<FinishedPoint> pts;
    std::vector<std::pair<std::int64_t, double>> samples;
    for (int i = 0; i < 300; ++i) {
      FinishedPoint f;
      f.reasoning = (i * 37) % 1000;
      f.ttftS = 0.01 * ((i * 53) % 97);
      pts.push_back(f);
      samples.emplace_back(static_cast<std::int64_t>(f.reasoning), f.ttftS);
    }
    p.addFinished(pts);
    p.refresh();
    const auto bins = binnedTailTtft(samples);
    const auto& tail = p.chart("ttft_vs_reasoning")->seriesData(1);
    QCOMPARE(tail.size(), bins.size());
    for (std::size_t i = 0; i < bins.size(); ++i) {
      QCOMPARE(tail[i].x(), 0.5 * static_cast<double>(bins[i].bin_lo + bins[i].bin_hi));
      QCOMPARE(tail[i].y(), bins[i].value);
    }
  }

  // B4: while a run animates, the overlay is computed off the GUI thread and
  // shows up on a later pull; a clear() in between drops the stale result;
  // once the run stops, the overlay covers every point exactly.
  void animatedTailOverlayArrivesLaterAndEndsExact() {
    ChartPanel p;
    p.clear(1);
    auto batch = [](int from, int n, std::vector<std::pair<std::int64_t, double>>* samples) {
      std::vector<FinishedPoint> pts;
      for (int i = from; i < from + n; ++i) {
        FinishedPoint f;
        f.reasoning = (i * 37) % 3000;
        f.ttftS = 0.01 * ((i * 53) % 97);
        pts.push_back(f);
        samples->emplace_back(static_cast<std::int64_t>(f.reasoning), f.ttftS);
      }
      return pts;
    };
    std::vector<std::pair<std::int64_t, double>> samples;
    p.addFinished(batch(0, 30000, &samples));
    p.prepareAnimated();
    const auto& tail = p.chart("ttft_vs_reasoning")->seriesData(1);
    QVERIFY(tail.empty());  // not on this pull: the job runs on its own thread
    QTRY_VERIFY_WITH_TIMEOUT((p.prepareAnimated(), !tail.empty()), 10000);
    QCOMPARE(tail.size(), binnedTailTtft(samples).size());
    // More points while animating, then the run stops: exact for all of them.
    p.addFinished(batch(30000, 5000, &samples));
    p.prepareAnimated();
    p.refresh();
    const auto bins = binnedTailTtft(samples);
    QCOMPARE(tail.size(), bins.size());
    for (std::size_t i = 0; i < bins.size(); ++i) QCOMPARE(tail[i].y(), bins[i].value);
    QCOMPARE(p.chart("ttft_vs_reasoning")->seriesData(0).size(), samples.size());
    // A job started before clear() never paints the new run's chart.
    ChartPanel q;
    q.clear(1);
    q.addFinished(batch(0, 30000, &samples));
    q.prepareAnimated();  // the first scatter update: the job starts
    q.clear(1);
    QTest::qWait(500);
    q.prepareAnimated();
    QVERIFY(q.chart("ttft_vs_reasoning")->seriesData(1).empty());
    QVERIFY(q.chart("ttft_vs_reasoning")->seriesData(0).empty());
  }

  void renderImageHasTheAskedSize() {
    LiveChart c("t", "A chart", "x", "y");
    c.setSeriesData(c.addSeries("s", Qt::blue), line(0, 10, 0.5));
    c.refresh();
    const QImage img = c.renderImage(QSize(500, 300), 2.0);
    QCOMPARE(img.size(), QSize(1000, 600));
    QVERIFY(nonWhitePixels(img) > 500);
    const QByteArray svg = c.renderSvg(QSize(500, 300));
    QVERIFY(svg.contains("<svg"));
  }

  void plotRendersSavedResults() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString res = tmp.filePath("run");
    Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/pascal-baseline-rr.json");
    s.workload.requests = 200;
    auto prepared = prepareRun(s);
    RunOptions ro;
    ro.outDir = res.toStdString();
    const RunResult rr = executeRun(*prepared, ro);

    // The saved samples come back as what the live charts are fed with.
    const SavedResults saved = loadSavedResults(res.toStdString(), kSavedTimeseries | kSavedRequests);
    QCOMPARE(saved.instances, s.cluster.instances);
    QCOMPARE(static_cast<std::int64_t>(saved.requests.size()), rr.summary.arrived);
    QVERIFY(saved.probes.size() > 10);
    QVERIFY(saved.gpuCapacityBlocks > 0);
    QCOMPARE(static_cast<std::int64_t>(saved.probes.front().instances.at(0).gpuCapacity), saved.gpuCapacityBlocks);

    PlotOptions opt;
    opt.resultsDir = res.toStdString();
    opt.chart = "all";
    opt.png = tmp.filePath("png").toStdString();
    opt.svg = tmp.filePath("svg").toStdString();
    opt.size = QSize(800, 500);
    const auto files = plotSavedResults(opt);
    QCOMPARE(files.size(), 2 * plotCharts().size());
    for (const PlotChartInfo& c : plotCharts()) {
      const QImage img(tmp.filePath("png/" + QString::fromStdString(c.name) + ".png"));
      QCOMPARE(img.size(), QSize(800, 500));
      QVERIFY2(nonWhitePixels(img) > 1000, c.name.c_str());
      QVERIFY(QFile::exists(tmp.filePath("svg/" + QString::fromStdString(c.name) + ".svg")));
    }
    // Same input, same picture.
    opt.chart = "ttft-by-reasoning";
    opt.png = tmp.filePath("again.png").toStdString();
    opt.svg.clear();
    plotSavedResults(opt);
    QCOMPARE(QImage(tmp.filePath("again.png")), QImage(tmp.filePath("png/ttft-by-reasoning.png")));
  }

  void plotBadInputNamesFileAndLineAndWritesNothing() {
    QTemporaryDir tmp;
    const QString res = tmp.filePath("run");
    Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/pascal-baseline-rr.json");
    s.workload.requests = 50;
    auto prepared = prepareRun(s);
    RunOptions ro;
    ro.outDir = res.toStdString();
    executeRun(*prepared, ro);
    // Break line 4 of timeseries.csv.
    std::string ts = slurp(res + "/timeseries.csv");
    std::size_t pos = 0;
    for (int i = 0; i < 3; ++i) pos = ts.find('\n', pos) + 1;
    ts.replace(pos, ts.find(',', pos) - pos, "abc");
    std::ofstream(res.toStdString() + "/timeseries.csv", std::ios::binary) << ts;

    PlotOptions opt;
    opt.resultsDir = res.toStdString();
    opt.chart = "ttft-percentiles";
    opt.png = tmp.filePath("out.png").toStdString();
    try {
      plotSavedResults(opt);
      QFAIL("no error for a malformed timeseries.csv");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("timeseries.csv:4") && QString(e.what()).contains("time_s"), e.what());
    }
    QVERIFY(!QFile::exists(tmp.filePath("out.png")));

    opt.chart = "no-such-chart";
    try {
      plotSavedResults(opt);
      QFAIL("no error for an unknown chart");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("unknown chart 'no-such-chart'") && QString(e.what()).contains("ttft-cdf"),
               e.what());
    }
    opt.chart = "ttft-cdf";
    opt.resultsDir = tmp.filePath("missing").toStdString();
    try {
      plotSavedResults(opt);
      QFAIL("no error for a missing folder");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("missing"), e.what());
    }
    QVERIFY(!QFile::exists(tmp.filePath("out.png")));
  }

  // Issue 15: an exported PNG of a chart shown in a narrow panel used only
  // part of the image, and the scatter's dots were missing.
  void exportedPngSpansTheImageWithItsDots() {
    QWidget host;
    auto* panel = new ChartPanel(&host);
    host.resize(900, 420);  // each chart ~300 px wide, as with the inspector docked
    panel->resize(host.size());
    host.show();
    fillPanel(*panel, 4);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    for (LiveChart* c : panel->charts()) {
      const QString path = tmp.filePath(c->id() + ".png");
      QVERIFY(c->exportPng(path, QSize(800, 500), 2.0));
      const QImage img(path);
      QCOMPARE(img.size(), QSize(1600, 1000));
      const QRect ink = inkBox(img);
      QVERIFY2(ink.width() >= img.width() * 9 / 10 && ink.height() >= img.height() * 9 / 10,
               qPrintable(QString("%1: drawn area %2x%3 of %4x%5")
                              .arg(c->id())
                              .arg(ink.width())
                              .arg(ink.height())
                              .arg(img.width())
                              .arg(img.height())));
    }
    const QImage scatter(tmp.filePath("ttft_vs_reasoning.png"));
    QVERIFY2(pixelsNear(scatter, overWhite(QColor(0x8B, 0x5C, 0xD6))) > 300, "no request dots in the scatter PNG");
    // The binned tail line is drawn over the dots (its colour is present).
    QVERIFY(pixelsNear(scatter, QColor(0xD9, 0x48, 0x3B), 30) > 200);
  }

  void narrowChartsElideNothing() {
    for (const QSize size : {QSize(700, 330), QSize(760, 360), QSize(1200, 420)}) {
      QWidget host;
      auto* panel = new ChartPanel(&host);
      host.resize(size);
      panel->resize(size);
      host.show();
      fillPanel(*panel, 4);
      QVERIFY(test::waitSettled(host));  // the resize relayout
      for (LiveChart* c : panel->charts()) {
        if (!c->isVisible()) continue;  // on the other tab
        QVERIFY2(elided(*c).isEmpty(), qPrintable(QString("%1 at %2x%3: %4")
                                                        .arg(c->id())
                                                        .arg(size.width())
                                                        .arg(size.height())
                                                        .arg(elided(*c).join(" | "))));
      }
      // Zoomed in, the ticks still fit.
      LiveChart* t = panel->chart("ttft");
      t->setViewX(12.3, 47.9);
      QVERIFY2(elided(*t).isEmpty(), qPrintable(elided(*t).join(" | ")));
      // "Reset zoom" sits clear of the title.
      QVERIFY(t->resetButton()->isVisible());
      QVERIFY(!t->titleRect().isEmpty());
      QVERIFY2(!t->resetButton()->geometry().intersects(t->titleRect()), "Reset zoom covers the title");
    }
  }

  // End-of-run views: CDFs of TTFT, TPOT and E2E on their own tab, and the
  // scatter says when a workload has no reasoning tokens.
  // A narrow chart (2 intervals) ends its x axis at the data, not at the
  // next round number (0..60 drawn as 0..100: issue 29, the self-scheduling
  // tour's Throughput chart at 1280 px).
  void xAxisEndsAtTheData() {
    using chartaxes::dataRange;
    const auto narrow = dataRange(0, 60, 2);
    QVERIFY(narrow.atData);
    QCOMPARE(narrow.top, 60.0);
    QCOMPARE(narrow.step, 50.0);
    const auto wide = dataRange(0, 60, 6);  // 0..60 in steps of 10: already at the data
    QVERIFY(!wide.atData);
    QCOMPARE(wide.top, 60.0);
    QCOMPARE(dataRange(0, 401, 6).top, 500.0);  // a small overshoot keeps the round top
    LiveChart c("t", "Throughput", "time (s)", "k tok/s");
    c.addSeries("output tokens", Qt::blue);
    std::vector<QPointF> pts;
    for (int t = 0; t <= 41; ++t) pts.emplace_back(t, 1 + (t % 7));  // 0..60 on a round top
    c.setSeriesData(0, pts);
    c.resize(170, 140);
    c.show();
    QVERIFY(QTest::qWaitForWindowExposed(&c));
    c.refresh();
    QVERIFY2(c.xRange().second <= 41 * 1.25, qPrintable(QString::number(c.xRange().second)));
  }

  void distributionsTabAndNoReasoningNote() {
    ChartPanel p;
    p.clear(2);
    std::vector<FinishedPoint> pts;
    for (int i = 0; i < 100; ++i) {
      FinishedPoint f;
      f.reasoning = 0;
      f.ttftS = 0.1 * (99 - i);
      f.tpotS = 0.01 + 1e-4 * i;
      f.e2eS = 10.0 + i;
      pts.push_back(f);
    }
    p.addFinished(pts);
    p.refresh();
    int shownTabs = 0;  // (the prefix cache's tab only where a run caches prefixes)
    for (int i = 0; i < p.tabs()->count(); ++i) shownTabs += p.tabs()->isTabVisible(i);
    QCOMPARE(shownTabs, 3);  // live, distributions, policy
    for (const char* id : {"ttft_cdf", "tpot_cdf", "e2e_cdf"}) {
      const auto& d = p.chart(id)->seriesData(0);
      QCOMPARE(d.size(), std::size_t{100});
      QVERIFY(std::is_sorted(d.begin(), d.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); }));
      QCOMPARE(d.back().y(), 1.0);
      QCOMPARE(d.front().y(), 0.01);
    }
    QCOMPARE(p.chart("e2e_cdf")->seriesData(0).front().x(), 10.0);
    // No reasoning: a clear message in the plot instead of a column of dots
    // at 0 (drawn whole: not elided, inside the plot).
    LiveChart* sc = p.chart("ttft_vs_reasoning");
    QCOMPARE(sc->emptyText().simplified(), QString("no reasoning requests in this workload"));
    QVERIFY(sc->paintedTexts().join(" ").simplified().contains("no reasoning requests in this workload"));
    FinishedPoint r;
    r.reasoning = 500;
    r.ttftS = 1.0;
    p.addFinished({r});
    p.refresh();
    QVERIFY(sc->emptyText().isEmpty());
  }

  // The CDFs' values are kept sorted batch by batch (a merge, not a
  // re-sort of everything per refresh): the result must be the full sort.
  void sortedValuesMergeBatches() {
    SortedValues v;
    std::vector<double> all;
    std::uint32_t x = 12345;
    for (int batch = 0; batch < 7; ++batch) {
      for (int i = 0; i < 50 + 37 * batch; ++i) {
        x = x * 1664525u + 1013904223u;
        const double d = static_cast<double>(x % 1000) / 7.0;
        v.add(d);
        all.push_back(d);
      }
      std::vector<double> want = all;
      std::sort(want.begin(), want.end());
      QCOMPARE(v.sorted(), want);
    }
    v.clear();
    QCOMPARE(v.size(), std::size_t{0});
    QVERIFY(v.sorted().empty());
  }

  // While a run goes on in Fast or Express mode (refreshLive) the
  // O(finished requests) views are brought up to date off the GUI thread or
  // at most once a second; refresh() at the run's end makes them exact.
  void liveRefreshThrottlesHeavyViewsThenCatchesUp() {
    ChartPanel p;
    p.clear(2);
    auto batch = [](int n, int from) {
      std::vector<FinishedPoint> pts;
      for (int i = 0; i < n; ++i) {
        FinishedPoint f;
        f.reasoning = 100 * ((from + i) % 9);
        f.ttftS = 0.01 * ((from + i) % 50);
        f.tpotS = 0.02;
        f.e2eS = 1.0 + i;
        pts.push_back(f);
      }
      return pts;
    };
    p.addFinished(batch(30000, 0));
    p.refreshLive();  // more than 20 000 points: scatter at most once a second
    QCOMPARE(p.chart("ttft_vs_reasoning")->seriesData(0).size(), std::size_t{30000});
    p.addFinished(batch(500, 30000));
    p.refreshLive();  // within the second: not yet
    QCOMPARE(p.chart("ttft_vs_reasoning")->seriesData(0).size(), std::size_t{30000});
    QCOMPARE(p.chart("ttft_cdf")->seriesData(0).size(), std::size_t{0});  // CDF tab not shown
    p.refresh();  // the run stopped: everything exact
    QCOMPARE(p.chart("ttft_vs_reasoning")->seriesData(0).size(), std::size_t{30500});
    QCOMPARE(p.chart("ttft_cdf")->seriesData(0).size(), std::size_t{30500});
    // The overlay equals the one computed from every point at once.
    std::vector<std::pair<std::int64_t, double>> all;
    for (const auto& b : {batch(30000, 0), batch(500, 30000)})
      for (const FinishedPoint& f : b) all.emplace_back(f.reasoning, f.ttftS);
    const auto bins = binnedTailTtft(all);
    const auto& tail = p.chart("ttft_vs_reasoning")->seriesData(1);
    QCOMPARE(tail.size(), bins.size());
    for (std::size_t i = 0; i < bins.size(); ++i) QCOMPARE(tail[i].y(), bins[i].value);
  }

  // The live scatter's sample (issue 27): bounded, even, and the same
  // whatever batches the points came in.
  void strideSampleIsBoundedEvenAndBatchIndependent() {
    std::vector<QPointF> all;
    for (int i = 0; i < 100000; ++i) all.emplace_back(i, 0.001 * (i % 977));
    chartaxes::StrideSample one(1000), batched(1000);
    one.append(all.data(), all.data() + all.size());
    for (std::size_t at = 0, step = 1; at < all.size(); at += step, step = step * 3 % 1013 + 1)
      batched.append(all.data() + at, all.data() + std::min(all.size(), at + step));
    QCOMPARE(one.seen(), all.size());
    QVERIFY(one.points().size() <= 1000);
    QVERIFY(one.points().size() > 500);
    QCOMPARE(one.points(), batched.points());
    QCOMPARE(one.stride(), batched.stride());
    QCOMPARE(one.stride(), std::size_t{128});  // 100 000 / 128 = 782 kept
    for (std::size_t k = 0; k < one.points().size(); ++k) QCOMPARE(one.points()[k], all[k * one.stride()]);
    chartaxes::StrideSample rebuilt(1000);
    rebuilt.rebuild(all);
    QCOMPARE(rebuilt.points(), one.points());
    chartaxes::StrideSample unbounded;  // cap 0: every point
    unbounded.append(all.data(), all.data() + all.size());
    QCOMPARE(unbounded.points().size(), all.size());
  }

  // While a run goes on, the scatter draws from at most kLiveScatterSample
  // requests and says so; the data (CSV) stays whole, and the end of the run
  // draws from all of them again.
  void liveScatterIsDrawnFromABoundedSample() {
    ChartPanel p;
    p.clear(2);
    std::vector<FinishedPoint> pts;
    for (int i = 0; i < 100000; ++i) {
      FinishedPoint f;
      f.reasoning = 10 * (i % 400);
      f.ttftS = 0.001 * (i % 997);
      f.tpotS = 0.02;
      f.e2eS = 1.0;
      pts.push_back(f);
    }
    p.addFinished(pts);
    p.refreshLive();
    LiveChart* sc = p.chart("ttft_vs_reasoning");
    QCOMPARE(sc->seriesData(0).size(), std::size_t{100000});
    QVERIFY(sc->sampledPoints(0) <= ChartPanel::kLiveScatterSample);
    QVERIFY(sc->sampledPoints(0) > ChartPanel::kLiveScatterSample / 2);
    QVERIFY(sc->drawnPoints() <= static_cast<int>(ChartPanel::kLiveScatterSample) + 100);  // + the tail line
    QVERIFY2(sc->subtitle().startsWith("showing " + QString::number(sc->sampledPoints(0)).insert(2, QChar(0x2009)) +
                                       " of 100" + QChar(0x2009) + "000 requests"),
             qPrintable(sc->subtitle()));
    // The x range still comes from every request: the longest reasoning,
    // 3990 (i = 399 + 400k, all odd), is in no sample of stride 8 (whose
    // longest is 3920; the tail line's last bin centre is 3968).
    QCOMPARE(sc->xRange().second, 3990.0);
    QTemporaryDir tmp;
    QVERIFY(sc->exportCsv(tmp.filePath("s.csv")));
    QFile csv(tmp.filePath("s.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    int requestRows = 0;
    for (const QByteArray& l : csv.readAll().split('\n')) requestRows += l.startsWith("requests,");
    QCOMPARE(requestRows, 100000);
    // The same points in other batches: the same sample.
    ChartPanel q;
    q.clear(2);
    for (std::size_t at = 0; at < pts.size(); at += 7000) {
      q.addFinished(std::vector<FinishedPoint>(pts.begin() + static_cast<std::ptrdiff_t>(at),
                                               pts.begin() + static_cast<std::ptrdiff_t>(std::min(pts.size(), at + 7000))));
      q.refreshLive();
    }
    QTest::qWait(1100);  // past 20 000 points the scatter takes new data once a second
    q.refreshLive();
    QCOMPARE(q.chart("ttft_vs_reasoning")->seriesData(0).size(), std::size_t{100000});
    QCOMPARE(q.chart("ttft_vs_reasoning")->sampledPoints(0), sc->sampledPoints(0));
    // The run ends: drawn from all of them, no caption.
    p.refresh();
    QCOMPARE(sc->sampledPoints(0), std::size_t{100000});
    QVERIFY(sc->subtitle().isEmpty());
  }

  void kvChartHasALegendForItsInstances() {
    QWidget host;
    auto* panel = new ChartPanel(&host);
    host.resize(1400, 600);
    panel->resize(host.size());
    host.show();
    fillPanel(*panel, 8);
    QVERIFY(test::waitSettled(host));
    const QStringList texts = panel->chart("kv_usage")->paintedTexts();
    for (int i = 0; i < 8; ++i) QVERIFY2(texts.contains(QString("GPU %1").arg(i)), qPrintable(texts.join(" | ")));
    // And in an export at a slide's size.
    LiveChart* kv = panel->chart("kv_usage");
    QCOMPARE(kv->seriesCount(), 8);
  }

  void chartFontsFollowTheWindowFont() {
    QWidget host;
    auto* c = new LiveChart("t", "A chart", "x", "y", &host);
    const double before = c->labelFont().pointSizeF();
    QFont f = host.font();
    f.setPointSizeF(f.pointSizeF() * 1.3);
    host.setFont(f);  // as lecture mode does on the main window
    QVERIFY2(c->labelFont().pointSizeF() >= before * 1.25,
             qPrintable(QString("%1 -> %2").arg(before).arg(c->labelFont().pointSizeF())));
  }

  // Two live changes close together: the second label goes on a second row
  // instead of being left out (it was hidden).
  void closeChangeMarkersShareTheTopInTwoRows() {
    LiveChart c("m", "Markers", "time (s)", "y");
    const int s = c.addSeries("line", Qt::red);
    std::vector<QPointF> pts;
    for (int x = 0; x <= 100; ++x) pts.emplace_back(x, 10.0);
    c.setSeriesData(s, pts);
    c.setMarkers({40, 45}, {"rate 11/s", "answering_quantum 200"});
    c.resize(520, 300);
    c.show();
    QVERIFY(QTest::qWaitForWindowExposed(&c));
    c.refresh();
    QVERIFY(test::waitSettled(c));
    QCOMPARE(c.shownMarkerLabels(), (QStringList{"rate 11/s", "answering_quantum 200"}));
  }

  // Issue 50: a change's label sat at the top right of its marker, on the
  // very line that rose there after the change. It now goes where no line
  // passes: here, the line peaks at the top of the plot after the change.
  void changeLabelsLeaveTheLinesFree() {
    LiveChart c("m", "Markers", "time (s)", "y");
    const int s = c.addSeries("p99", Qt::red);
    std::vector<QPointF> pts;
    auto y = [](double x) { return x < 40 ? 1.0 : x < 60 ? 11.8 : 10.0; };
    for (int x = 0; x <= 100; ++x) pts.emplace_back(x, y(x));
    c.setSeriesData(s, pts);
    c.setMarkers({40}, {"rate 11/s"});
    c.resize(520, 300);
    c.show();
    QVERIFY(QTest::qWaitForWindowExposed(&c));
    c.refresh();
    QVERIFY(test::waitSettled(c));
    QCOMPARE(c.shownMarkerLabels(), QStringList{"rate 11/s"});
    const QRectF label = c.shownMarkerLabelRects().value(0);
    QVERIFY(!label.isEmpty());
    // The line (every 0.1 s along it) stays out of the label.
    for (double x = 0; x <= 100; x += 0.1) {
      const QPoint p = c.viewPosOf(QPointF(x, y(std::floor(x))));
      QVERIFY2(!label.contains(p), qPrintable(QString("line at x %1 (%2,%3) under the label at %4,%5 %6x%7")
                                                  .arg(x).arg(p.x()).arg(p.y()).arg(label.x()).arg(label.y())
                                                  .arg(label.width()).arg(label.height())));
    }
    // Beside its marker, not on it.
    const int mx = c.viewPosOf(QPointF(40, 5)).x();
    QVERIFY(label.right() < mx || label.left() > mx);
    if (qEnvironmentVariableIsSet("CHART_SHOTS")) c.grab().save(qEnvironmentVariable("CHART_SHOTS") + "/change-label.png");
  }

  void glScatterKeepsTheTailLineOnTop() {
    // With OpenGL a scatter is painted over every software series: the tail
    // line must then go through OpenGL too, added after the dots.
    setChartsUseOpenGL(true);
    LiveChart c("t", "A chart", "x", "y");
    c.addSeries("requests", Qt::blue, SeriesStyle::Scatter);
    c.addSeries("tail", Qt::red);
    setChartsUseOpenGL(false);
    QVERIFY(c.seriesUsesOpenGL(0));
    QVERIFY(c.seriesUsesOpenGL(1));
    // The window then composes through OpenGL, where the view's minimal
    // updates left ghost tick labels after a re-range (Mesa under Xvfb): a
    // GL chart repaints its whole view.
    auto viewOf = [](const LiveChart& ch) { return qobject_cast<QGraphicsView*>(ch.plotWidget()->parentWidget()); };
    QVERIFY(viewOf(c));
    QCOMPARE(viewOf(c)->viewportUpdateMode(), QGraphicsView::FullViewportUpdate);
    LiveChart plain("p", "B", "x", "y");
    plain.addSeries("line", Qt::red);
    QVERIFY(!plain.seriesUsesOpenGL(0));
    QCOMPARE(viewOf(plain)->viewportUpdateMode(), QGraphicsView::MinimalViewportUpdate);
  }

  // Issue 50, "charts a room can read": in lecture mode at 1016×728 the
  // charts were ~50 px high with 2-3 ticks and no legend. The chart shown
  // (the main TTFT chart without a tour) is at least a third of the
  // window's height, with >= 4 ticks on each axis, its legend (p50, p99)
  // and its units, in text larger than outside lecture mode.
  void lectureModeShowsTheChartLarge() {
    for (QSize size : {QSize(1016, 728), QSize(1272, 680)}) {
      MainWindow w;
      w.resize(size);
      w.fitDocksToSize();
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QString err;
      QVERIFY2(w.openScenario(QStringLiteral(SERVELAB_SOURCE_DIR "/samples/pascal-baseline-fcfs.json"), &err),
               qPrintable(err));
      w.setLecture(true);
      w.controller()->runTo(40);
      QVERIFY(w.controller()->waitIdle(60000));
      w.pullNow();
      QVERIFY(test::waitSettled(w));
      w.pullNow();
      QVERIFY(test::waitSettled(w));
      LiveChart* c = w.chartPanel()->chart("ttft");
      QVERIFY(c);
      const QString at = QString("%1x%2: ").arg(size.width()).arg(size.height());
      QVERIFY2(c->isVisible(), qPrintable(at + "the TTFT chart is not shown"));
      QVERIFY2(c->height() * 3 >= w.height(),
               qPrintable(at + QString("chart %1 px high in a %2 px window").arg(c->height()).arg(w.height())));
      QVERIFY2(c->width() * 10 >= w.width() * 8,
               qPrintable(at + QString("chart %1 px wide in a %2 px window").arg(c->width()).arg(w.width())));
      QVERIFY2(c->yTickCount() >= 4 && c->xTickCount() >= 4,
               qPrintable(at + QString("%1 y ticks, %2 x ticks").arg(c->yTickCount()).arg(c->xTickCount())));
      QVERIFY2(c->legendShown(), qPrintable(at + "no legend"));
      QStringList keys = c->shownSeriesKeys();
      keys.sort();
      QCOMPARE(keys, (QStringList{"p50", "p99"}));
      const QStringList painted = c->paintedTexts();
      QVERIFY2(painted.contains(c->yLabel()) && painted.contains(c->xLabel()),
               qPrintable(at + "units not shown: " + painted.join("|")));
      QVERIFY2(elided(*c).isEmpty(), qPrintable(at + elided(*c).join("|")));
      const double basePt = QApplication::font().pointSizeF() * 0.8;  // a chart's labels outside lecture mode
      QVERIFY2(c->labelFont().pointSizeF() >= basePt * 1.3,
               qPrintable(at + QString("%1 pt vs %2 pt").arg(c->labelFont().pointSizeF()).arg(basePt)));
      if (qEnvironmentVariableIsSet("LAYOUT_SHOTS"))
        w.grab().save(qEnvironmentVariable("LAYOUT_SHOTS") +
                      QString("/lecture-chart-%1x%2.png").arg(size.width()).arg(size.height()));
      // Lecture mode off: every chart in its grid again.
      w.setLecture(false);
      QVERIFY(test::waitSettled(w));
      for (LiveChart* other : w.chartPanel()->charts())
        if (other->parentWidget() == c->parentWidget()) QVERIFY2(other->isVisible(), qPrintable(other->id()));
    }
  }

  // A tour step's text that names a chart gets that chart in lecture mode:
  // every step of every tour, the chart found from its text (the text is
  // not copied here), and that chart is the one shown, large.
  void lectureModeShowsTheChartATourStepNames() {
    ChartPanel probe;
    int named = 0;
    MainWindow w;
    w.resize(1016, 728);
    w.fitDocksToSize();
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.setLecture(true);
    for (const Tour& t : availableTours(QStringLiteral(SERVELAB_SOURCE_DIR "/samples"))) {
      for (std::size_t i = 0; i < t.steps.size(); ++i) {
        const TourStep& s = t.steps[i];
        // (The Speculation chart has a tab only in a run with speculation.)
        const Scenario sc = loadTourScenario(s, QStringLiteral(SERVELAB_SOURCE_DIR "/samples"));
        probe.setSpeculationShown(sc.cluster.speculative.on);
        const QString want = probe.chartNamedIn(s.title + " " + s.watch);
        QString err;
        QVERIFY2(w.startTour(t.id, static_cast<int>(i), false, &err), qPrintable(err));
        QVERIFY(test::waitSettled(w));
        const QString shown = w.chartPanel()->focusChart();
        QCOMPARE(shown, want.isEmpty() ? ChartPanel::mainChartId() : want);
        LiveChart* c = w.chartPanel()->chart(shown);
        QVERIFY2(c && c->isVisible() && c->height() * 3 >= w.height(),
                 qPrintable(QString("%1 step %2: %3, %4 px").arg(t.id).arg(i + 1).arg(shown).arg(c ? c->height() : 0)));
        named += !want.isEmpty();
      }
    }
    QVERIFY2(named >= 2, "no tour step names a chart any more: the test tests nothing");
    // How a text names a chart.
    QCOMPARE(probe.chartNamedIn("In the <b>TTFT-vs-reasoning</b> chart, even short ones wait"),
             QString("ttft_vs_reasoning"));
    QCOMPARE(probe.chartNamedIn("the <b>Policy</b> chart tab draws the pool sizes"), QString("policy"));
    QCOMPARE(probe.chartNamedIn("throughput goes up"), QString());
  }

  // 512 instances' KV lines: their names at the line ends (in 20 columns)
  // took the whole chart, which drew no plot at all in Express mode with
  // docs/screenshots/tiles-512.json. Names that would take more than a third
  // of the plot are left out; the plot keeps its width.
  void hundredsOfLinesLeaveThePlotItsRoom() {
    for (int instances : {8, 512}) {
      ChartPanel p;
      p.resize(950, 330);  // the charts dock at 1280×800
      p.show();
      QVERIFY(QTest::qWaitForWindowExposed(&p));
      fillPanel(p, instances);
      QVERIFY(test::waitSettled(p));
      p.refresh();
      QVERIFY(test::waitSettled(p));
      LiveChart& c = *p.chart("kv_usage");
      const int plotW = c.viewPosOf(QPointF(100, 0)).x() - c.viewPosOf(QPointF(0, 0)).x();
      QVERIFY2(plotW >= c.width() / 2, qPrintable(QString("%1 instances: plot %2 px wide in a %3 px chart")
                                                      .arg(instances).arg(plotW).arg(c.width())));
      if (instances == 8) QCOMPARE(c.shownSeriesKeys().size(), 8);  // few: named (legend or line ends)
    }
  }

  void csvChartsSpeakWordsNotColumnNames() {
    const std::string csv =
        "rate_rps,policy,bin_lo,bin_hi,n,rule,ttft_s\n8,fcfs,0,256,120,p99,1.5\n8,fcfs,256,512,40,p95,2.0\n"
        "8,pascal,0,256,120,p99,0.5\n8,pascal,256,512,40,p95,0.7\n";
    const auto c = csvChart(csv, "tail_ttft.csv", "pascal-fig10-tail-ttft: tail_ttft");
    QCOMPARE(c->xLabel(), QString("reasoning tokens (bin start)"));
    QVERIFY2(!c->yLabel().contains('_'), qPrintable(c->yLabel()));
    QVERIFY2(c->subtitle().contains("p99") && c->subtitle().contains("max"), qPrintable(c->subtitle()));
    for (int i = 0; i < c->seriesCount(); ++i)
      QVERIFY2(!c->seriesName(i).contains("rate_rps"), qPrintable(c->seriesName(i)));
  }

  void csvChartDrawsSeriesByCategory() {
    const std::string csv =
        "rate_rps,policy,qoe_violation_rate\n1,fcfs,0.1\n2,fcfs,0.3\n3,fcfs,0.6\n1,pascal,0.05\n2,pascal,0.1\n"
        "3,pascal,0.2\n";
    const std::vector<char> png = renderCsvChartPng(csv, "slo_violation_vs_rate.csv", "SLO violations");
    QImage img;
    QVERIFY(img.loadFromData(reinterpret_cast<const uchar*>(png.data()), static_cast<int>(png.size()), "PNG"));
    QCOMPARE(img.size(), QSize(960, 600));
    QVERIFY(nonWhitePixels(img) > 1000);
    try {
      renderCsvChartPng("policy,rule\nfcfs,p99\n", "t.csv", "x");
      QFAIL("no error for a CSV without numbers");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("t.csv"), e.what());
    }
  }

  // An experiment's PlotSpec: its x and y, series by a text column, a row
  // filter, a fixed y range; categorical x with named ticks; steps; and a
  // missing column named in the error.
  void plotSpecDrawsTheAskedColumns() {
    const std::string csv = "system,time_scale,rate_rps,slo_attainment,ttft_p90_s\n"
                            "arrow,2,1.5,1.0,0.1\narrow,1,3,0.9,0.2\narrow,0.5,6,0.4,0.9\n"
                            "static,2,1.5,1.0,0.2\nstatic,1,3,0.5,0.8\nstatic,0.5,6,0.1,3\n";
    exp::PlotSpec spec;
    spec.x = "rate_rps";
    spec.ys = {"slo_attainment"};
    spec.series = {"system"};
    spec.yRange = std::make_pair(0.0, 1.0);
    auto c = csvChart(csv, "fig7.csv", "Fig. 7", spec);
    QCOMPARE(c->xLabel(), QString("arrival rate (req/s)"));
    QCOMPARE(c->seriesCount(), 2);
    QCOMPARE(c->seriesName(0), QString("arrow"));
    QCOMPARE(c->seriesData(0).size(), std::size_t{3});
    QCOMPARE(c->seriesData(0).front(), QPointF(1.5, 1.0));  // sorted by x: the rows came by time_scale
    QCOMPARE(c->seriesData(0).back(), QPointF(6, 0.4));
    QCOMPARE(c->yRange(), std::make_pair(0.0, 1.0));
    spec.where = {{"system", "static"}};
    spec.ys = {"ttft_p90_s"};
    spec.yRange.reset();
    c = csvChart(csv, "fig7.csv", "Fig. 7", spec);
    QCOMPARE(c->seriesCount(), 1);
    QCOMPARE(c->seriesData(0).back(), QPointF(6, 3));

    exp::PlotSpec cat;  // a text x column: categories in first-seen order
    cat.x = "domain";
    cat.ys = {"minutes"};
    cat.series = {"policy"};
    cat.categoricalX = true;
    c = csvChart("policy,domain,minutes\nfcfs,math,20\nlo,math,5\nfcfs,code,30\nlo,code,9\n", "t.csv", "T", cat);
    QCOMPARE(c->seriesData(1), (std::vector<QPointF>{{0, 5}, {1, 9}}));
    QCOMPARE(c->xRange(), std::make_pair(-0.5, 1.5));
    c->resize(700, 400);
    c->show();
    QVERIFY(test::waitSettled(*c));  // laid out
    QStringList painted = c->paintedTexts();
    QVERIFY2(painted.contains("math") && painted.contains("code"), qPrintable(painted.join("|")));

    exp::PlotSpec step;  // a pool size holds until the next row
    step.x = "time_s";
    step.ys = {"pool_p"};
    step.step = true;
    c = csvChart("time_s,pool_p\n0,4\n10,3\n", "f.csv", "F", step);
    QCOMPARE(c->seriesData(0), (std::vector<QPointF>{{0, 4}, {10, 4}, {10, 3}}));

    spec.ys = {"no_such_column"};
    try {
      csvChart(csv, "fig7.csv", "Fig. 7", spec);
      QFAIL("no error for a missing column");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("fig7.csv") && QString(e.what()).contains("no_such_column"), e.what());
    }
  }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
