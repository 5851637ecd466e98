// Run ▸ Sweep… (ui/sweep/sweep_window.h) on the offscreen platform: a small sweep
// over a scenario runs on the worker, fills the table, chart and heatmap
// with the same numbers as `servelab-cli sweep` would write, cancels, exports
// CSV/PNG/SVG and opens a point as a scenario.
#include <QAction>
#include <QApplication>
#include <QPushButton>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/charts/chart_panel.h"
#include "ui/shell/main_window.h"
#include "ui/controller/sim_controller.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"
#include "ui/sweep/sweep_window.h"

using namespace sl;
using namespace sl::ui;

class TestSweepWindow : public QObject {
  Q_OBJECT
private:
  static Scenario base() {
    Scenario s = parseScenario(nlohmann::json::parse(R"({"cluster": {"instances": 2}, "workload": {"requests": 40}})"),
                               "t.json");
    return s;
  }
  static void fill(SweepWindow& w) {
    w.policiesEdit()->setText("fcfs,rr");
    w.rateFrom()->setValue(4);
    w.rateTo()->setValue(8);
    w.rateStep()->setValue(2);
    w.seeds()->setValue(2);
    w.extraPath()->setText("cluster.instances");
    w.extraValues()->setText("1,2");
    w.threads()->setValue(2);
  }
private slots:
  void runsAndShowsWhatTheCliWrites() {
    SweepWindow w(base());
    fill(w);
    QString err;
    QVERIFY2(w.start(&err), qPrintable(err));
    QVERIFY(w.waitDone(120000));
    // 2 policies × 3 rates × 2 seeds × 2 instance counts.
    QCOMPARE(w.table()->rowCount(), 24);
    QCOMPARE(w.table()->item(0, 1)->text(), QString("fcfs"));
    // The same spec through core/sweep gives the same results.csv.
    QTemporaryDir dir;
    sweep::SweepRunOptions o;
    o.outDir = dir.path().toStdString();
    (void)sweep::runSweep(sweep::parseSweep(w.specJson(), "sweep", "."), o);
    QFile f(dir.path() + "/results.csv");
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(w.resultsCsv(), QString::fromUtf8(f.readAll()));
    // Chart: one line per policy, one point per rate; heatmap policy × rate.
    w.metric()->setCurrentText("requests.finished");
    QCOMPARE(w.chart()->seriesCount(), 2);
    QCOMPARE(w.chart()->seriesData(0).size(), std::size_t(3));
    QCOMPARE(w.chart()->seriesData(0)[0].y(), 40.0);
    QCOMPARE(w.heatmap()->rowCount(), 2);
    QCOMPARE(w.heatmap()->columnCount(), 3);
    QCOMPARE(w.heatmap()->value(1, 2), 40.0);
    if (qEnvironmentVariableIsSet("SWEEP_SCREENSHOT")) {  // a look at the window, for docs and review
      w.resize(1000, 760);
      w.show();
      for (int tab : {0, 1, 2}) {
        w.findChild<QTabWidget*>()->setCurrentIndex(tab);
        QTest::qWait(50);
        w.grab().save(qEnvironmentVariable("SWEEP_SCREENSHOT") + QString("-%1.png").arg(tab));
      }
    }
    // Exports.
    QTemporaryDir out;
    QVERIFY(w.exportCsv(out.path() + "/r.csv"));
    QVERIFY(w.exportChart(out.path() + "/c.png"));
    QVERIFY(w.exportChart(out.path() + "/c.svg"));
    QVERIFY(w.exportHeatmap(out.path() + "/h.png"));
    QVERIFY(w.exportHeatmap(out.path() + "/h.svg"));
    for (const char* n : {"/r.csv", "/c.png", "/c.svg", "/h.png", "/h.svg"})
      QVERIFY2(QFileInfo(out.path() + n).size() > 100, n);
    // A point's scenario (what "Open point as a run" loads) carries its values.
    const Scenario s = w.pointScenario(23);
    QCOMPARE(QString::fromStdString(s.policy.id), QString("rr"));
    QCOMPARE(s.workload.arrival.rate, 8.0);
    QCOMPARE(s.run.seed, std::uint64_t(2));
    QCOMPARE(s.cluster.instances, 2);
  }
  // Run ▸ Sweep… in the main window, then "Open point as a run": the main
  // window's run becomes that point's scenario.
  void fromTheMenuToAPointRun() {
    MainWindow mw;
    QString err;
    QVERIFY2(mw.loadScenario(base(), "t", &err), qPrintable(err));
    QAction* act = nullptr;
    for (QAction* a : mw.findChildren<QAction*>())
      if (a->text() == "S&weep…") act = a;
    QVERIFY(act);
    act->trigger();
    auto* w = mw.findChild<SweepWindow*>();
    QVERIFY(w);
    fill(*w);
    QVERIFY2(w->start(&err), qPrintable(err));
    QVERIFY(w->waitDone(120000));
    w->table()->selectRow(23);
    QPushButton* open = nullptr;
    for (QPushButton* b : w->findChildren<QPushButton*>())
      if (b->text() == "Open point as a run") open = b;
    QVERIFY(open && open->isEnabled());
    open->click();
    const Scenario& s = mw.controller()->scenario();
    QCOMPARE(QString::fromStdString(s.policy.id), QString("rr"));
    QCOMPARE(s.workload.arrival.rate, 8.0);
    QCOMPARE(s.run.seed, std::uint64_t(2));
    QCOMPARE(s.cluster.instances, 2);
  }
  // Issue 29: the form's own defaults on a PASCAL scenario with knobs used to
  // fail ("answering_quantum: unknown knob for policy 'fcfs'"). As compare
  // mode: the scenario's own policy keeps its knobs, the others run with
  // their defaults. The table shows formatted numbers, the chart names its
  // metric, the heatmap's row labels are whole and it has a colour scale.
  void pascalKnobsApplyToPascalOnly() {
    Scenario s = loadScenarioOrSavedRun(SERVELAB_SOURCE_DIR "/samples/pascal-phase-aware.json").scenario;
    s.workload.requests = 30;
    s.cluster.instances = 2;
    SweepWindow w(s);
    QCOMPARE(w.policiesEdit()->text(), QString("fcfs,pascal"));  // the form's default
    w.rateFrom()->setValue(4);
    w.rateTo()->setValue(6);
    w.rateStep()->setValue(2);
    w.seeds()->setValue(1);
    w.threads()->setValue(2);
    QString err;
    QVERIFY2(w.start(&err), qPrintable(err));
    QVERIFY(w.waitDone(120000));
    QCOMPARE(w.table()->rowCount(), 4);
    QCOMPARE(w.table()->horizontalHeaderItem(1)->text(), QString("policy"));
    QCOMPARE(w.table()->item(0, 1)->text(), QString("fcfs"));
    QCOMPARE(w.table()->item(3, 1)->text(), QString("pascal"));
    QVERIFY(w.pointScenario(0).policy.knobs.empty());
    QVERIFY(w.pointScenario(3).policy.knobs == s.policy.knobs);
    QCOMPARE(QString::fromStdString(w.pointScenario(3).policy.id), QString("pascal"));
    // Numbers: four significant digits, never 13.989630422000001.
    int metricCells = 0;
    for (int r = 0; r < w.table()->rowCount(); ++r)
      for (int c = 4; c + 1 < w.table()->columnCount(); ++c) {
        const QString t = w.table()->item(r, c)->text();
        const int dot = t.indexOf('.');
        QVERIFY2(dot < 0 || t.size() - dot - 1 <= 6, qPrintable(t));
        QVERIFY2(!t.contains('e'), qPrintable(t));
        ++metricCells;
      }
    QVERIFY(metricCells >= 4 * 6);
    QCOMPARE(formatSweepNumber(13.989630422000001), QString("13.99"));
    QCOMPARE(formatSweepNumber(0.41237), QString("0.4124"));
    QCOMPARE(formatSweepNumber(3210.49), QString("3210"));
    QCOMPARE(formatSweepNumber(40.0), QString("40"));
    // The chart's title and y axis name the metric in words with its unit
    // (they said "Metric vs arrival rate" and "ttft_s.p99", issue 50).
    w.metric()->setCurrentText("ttft_s.p99");
    QCOMPARE(w.chart()->yLabel(), QString("TTFT p99 (s)"));
    QCOMPARE(w.chart()->title(), QString("TTFT p99 vs arrival rate"));
    // Both axes fitted to the data (issue 50: the rates 4..6 sat in the
    // right third of an axis from 0, the TTFTs in the top of one from 0).
    {
      double ylo = INFINITY, yhi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
      for (int i = 0; i < w.chart()->seriesCount(); ++i)
        for (const QPointF& p : w.chart()->seriesData(i)) {
          ylo = std::min(ylo, p.y()), yhi = std::max(yhi, p.y());
          xlo = std::min(xlo, p.x()), xhi = std::max(xhi, p.x());
        }
      const auto [x0, x1] = w.chart()->xRange();
      const auto [y0, y1] = w.chart()->yRange();
      QVERIFY2(x0 <= xlo && x1 >= xhi && (x1 - x0) <= 2 * (xhi - xlo),
               qPrintable(QString("x axis %1..%2 for rates %3..%4").arg(x0).arg(x1).arg(xlo).arg(xhi)));
      QVERIFY2(y0 <= ylo && y1 >= yhi && (y1 - y0) <= 3 * std::max(yhi - ylo, 0.2 * std::abs(yhi)),
               qPrintable(QString("y axis %1..%2 for values %3..%4").arg(y0).arg(y1).arg(ylo).arg(yhi)));
    }
    w.metric()->setCurrentText("requests.finished");
    QCOMPARE(w.chart()->yLabel(), QString("finished requests (requests)"));
    QCOMPARE(sweepMetricWords("qoe.violation_rate").unit, QString("fraction"));
    QCOMPARE(sweepMetricWords("e2e_s.p50").name, QString("E2E p50"));
    QCOMPARE(sweepMetricWords("some.new_metric").name, QString("some.new_metric"));
    // Heatmap: row labels whole at the dialog's size, a colour scale's ends.
    QCOMPARE(w.heatmap()->rowCount(), 2);
    for (const QString& l : w.heatmap()->rowLabelsAsPainted(QSize(640, 400)))
      QVERIFY2(!l.endsWith(QChar(0x2026)), qPrintable(l));
    QCOMPARE(w.heatmap()->range().first, 30.0);  // every request finished
    QCOMPARE(w.heatmap()->range().second, 30.0);
    w.metric()->setCurrentText("ttft_s.p99");
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        lo = std::min(lo, w.heatmap()->value(r, c));
        hi = std::max(hi, w.heatmap()->value(r, c));
      }
    QVERIFY(lo < hi);
    QCOMPARE(w.heatmap()->range().first, lo);
    QCOMPARE(w.heatmap()->range().second, hi);
    if (qEnvironmentVariableIsSet("SWEEP_SCREENSHOT")) {
      w.metric()->setCurrentText("ttft_s.p99");
      for (QSize sz : {QSize(1000, 720), QSize(760, 560)}) {
        w.resize(sz);
        w.show();
        for (int tab : {0, 1, 2}) {
          w.findChild<QTabWidget*>()->setCurrentIndex(tab);
          QTest::qWait(300);
          w.grab().save(qEnvironmentVariable("SWEEP_SCREENSHOT") +
                        QString("-pascal-%1x%2-%3.png").arg(sz.width()).arg(sz.height()).arg(tab));
        }
      }
    }
  }
  void badInputIsRefusedBeforeRunning() {
    SweepWindow w(base());
    fill(w);
    w.policiesEdit()->setText("fcfs,fcsf");
    QString err;
    QVERIFY(!w.start(&err));
    QVERIFY2(err.contains("fcsf"), qPrintable(err));
    QVERIFY(!w.running());
  }
  void cancelStopsEarly() {
    SweepWindow w(base());
    fill(w);
    w.rateTo()->setValue(40);  // 2 × 19 × 2 × 2 = 152 points
    w.threads()->setValue(1);
    QString err;
    QVERIFY2(w.start(&err), qPrintable(err));
    w.cancel();
    QVERIFY(w.waitDone(120000));
    QVERIFY(w.results().is_null());
    QCOMPARE(w.table()->rowCount(), 0);
  }
};

QTEST_MAIN(TestSweepWindow)
#include "test_sweep_window.moc"
