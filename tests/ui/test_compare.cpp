// Compare mode, headless (QT_QPA_PLATFORM=offscreen): three policies on one
// seeded workload run in lockstep; the table is checked against summaries
// computed independently with the core engine, the deltas against the
// reference row, the CSV export line by line; reset replays the same
// numbers; closing the window mid-run neither crashes nor hangs.
#include <QAction>
#include <QComboBox>
#include <QHeaderView>
#include <QFile>
#include <QMenuBar>
#include <QPointer>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <cmath>

#include "ui/charts/chart_panel.h"
#include "ui/charts/live_chart.h"
#include "ui_test_util.h"
#include "ui/compare/compare_model.h"
#include "ui/compare/compare_window.h"
#include "ui/shell/main_window.h"
#include "metrics/binned_tail.h"
#include "metrics/summary.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "ui/controller/sim_controller.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSample = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/pascal-phase-aware.json");
const QStringList kPolicies{"pascal", "fcfs", "rr"};

Scenario sample(std::int64_t requests) {
  Scenario s = loadScenarioFile(kSample.toStdString());
  s.workload.requests = requests;
  return s;
}

// The summary of `policy` on `base` after simulated time `t` (< 0: the whole
// run), straight from the core engine, without the GUI.
Summary coreSummary(const Scenario& base, const QString& policy, double t, double* tailMean = nullptr) {
  const Scenario s = scenarioForPolicy(base, policy.toStdString());
  auto run = prepareRun(s, "test");
  Simulator& sim = *run->simulator;
  if (t < 0) sim.run();
  else sim.run(secondsToNs(t));
  std::vector<RequestRecord> recs = sim.records();
  if (tailMean) {  // tail_ttft_mean_s: the mean of the per-bin tails of the finished requests
    const std::vector<TailBin> bins = binnedTailTtft(recs);
    double sum = 0;
    for (const TailBin& b : bins) sum += b.value;
    *tailMean = bins.empty() ? std::nan("") : sum / static_cast<double>(bins.size());
  }
  for (const RequestRecord& r : sim.inFlightRecords()) recs.push_back(r);
  return summarize(recs, sim.arrived(), sim.now(), s.slo);
}

bool near(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

// Table cell of `metric` in `row`.
QTableWidgetItem* metricCell(QTableWidget* t, int row, CompareMetric metric) {
  for (int c = 0; c < t->columnCount(); ++c)
    if (t->horizontalHeaderItem(c)->text() == QString(compareMetrics()[static_cast<std::size_t>(metric)].header))
      return t->item(row, c);
  return nullptr;
}

void checkAgainstCore(CompareWindow& w, const Scenario& base, double t) {
  const std::vector<CompareRow> rows = w.rows();
  QCOMPARE(static_cast<int>(rows.size()), w.runCount());
  for (int i = 0; i < w.runCount(); ++i) {
    double tail = 0;
    const Summary s = coreSummary(base, w.policies()[i], t, &tail);
    const CompareRow& r = rows[static_cast<std::size_t>(i)];
    QCOMPARE(r.policy, w.policies()[i]);
    QCOMPARE(r.arrived, s.arrived);
    QCOMPARE(r.finished, s.finished);
    QVERIFY2(s.finished > 0, "the run should have finished requests by then");
    // Sim time: the run's clock (t, or its end); throughput over the engine's span (sim_s).
    QVERIFY2(near(r.simS, t < 0 ? s.sim_s : t), qPrintable(QString("%1 vs %2").arg(r.simS).arg(t)));
    QVERIFY(near(r.lastEventS, s.sim_s));
    QVERIFY(near(r.ttftP50, s.ttft_s.p50));
    QVERIFY(near(r.ttftP99, s.ttft_s.p99));
    QVERIFY2(near(r.tailTtft, tail), qPrintable(QString("%1 vs %2").arg(r.tailTtft).arg(tail)));
    QVERIFY(near(r.qoeViolation, s.qoe_violation_rate));
    QVERIFY(near(r.tokensPerS, s.tokens_per_s));
    QCOMPARE(r.migrations, s.migrations);
    QCOMPARE(r.preemptions, s.preemptions);
    // The table shows the same values.
    QTableWidget* tab = w.table();
    QCOMPARE(metricCell(tab, i, CompareMetric::TtftP99)->data(Qt::UserRole).toDouble(), r.ttftP99);
    QCOMPARE(metricCell(tab, i, CompareMetric::Preemptions)->data(Qt::UserRole).toDouble(),
             static_cast<double>(s.preemptions));
    QCOMPARE(tab->item(i, 0)->data(Qt::UserRole).toString(), w.policies()[i]);
  }
}

}  // namespace

class TestCompare : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_compare");
  }

  // Issue 15: say when a comparison cannot tell the policies apart.
  void hintWhenTheComparisonIsUninformative() {
    std::vector<CompareRow> rows(2);
    for (CompareRow& r : rows) {
      r.finished = 10;
      r.ttftP99 = 1.0;
    }
    QVERIFY(compareHint(rows).isEmpty());  // too early
    for (CompareRow& r : rows) r.finished = 500;
    QVERIFY2(compareHint(rows).contains("KV memory"), qPrintable(compareHint(rows)));
    rows[1].preemptions = 40;
    QVERIFY2(compareHint(rows).contains("within 2 %"), qPrintable(compareHint(rows)));
    rows[1].ttftP99 = 1.5;
    QVERIFY(compareHint(rows).isEmpty());
    // In the window: the default sample at a low rate never preempts.
    CompareWindow w;
    w.resize(1280, 800);
    w.show();
    Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/default.json");
    s.workload.requests = 300;
    QString err;
    QVERIFY2(w.load(s, {"fcfs", "rr"}, "default", &err), qPrintable(err));
    w.runTo(2000);
    QVERIFY(w.waitIdle(60000));
    w.pullNow();
    QVERIFY2(w.hint().contains("KV memory"), qPrintable(w.hint()));
  }

  void deltasAndPolicyLists() {
    QCOMPARE(deltaPct(1.5, 1.0), 50.0);
    QCOMPARE(deltaPct(0.5, 2.0), -75.0);
    QCOMPARE(deltaPct(-3.0, -2.0), -50.0);  // relative to |ref|
    QCOMPARE(deltaPct(0.0, 0.0), 0.0);
    QVERIFY(std::isnan(deltaPct(1.0, 0.0)));
    QVERIFY(std::isnan(deltaPct(1.0, CompareRow::kNaN)));
    QVERIFY(std::isnan(deltaPct(CompareRow::kNaN, 1.0)));
    QCOMPARE(verdict(-10, Better::Lower), Verdict::Better);
    QCOMPARE(verdict(10, Better::Lower), Verdict::Worse);
    QCOMPARE(verdict(10, Better::Higher), Verdict::Better);
    QCOMPARE(verdict(-10, Better::Higher), Verdict::Worse);
    QCOMPARE(verdict(10, Better::Neither), Verdict::None);
    QCOMPARE(verdict(0, Better::Lower), Verdict::Same);
    QCOMPARE(verdict(CompareRow::kNaN, Better::Lower), Verdict::None);
    QCOMPARE(formatDelta(12.34), QString("+12.3%"));
    QCOMPARE(formatDelta(-4.0), QString::fromUtf8("−4.0%"));
    QCOMPARE(formatDelta(CompareRow::kNaN), QString::fromUtf8("–"));

    QVERIFY(checkComparePolicies({"pascal", "fcfs"}).isEmpty());
    QVERIFY(checkComparePolicies({"pascal", "fcfs", "rr", "oracle"}).isEmpty());
    QVERIFY(checkComparePolicies({"pascal"}).contains("2 to 4"));
    QVERIFY(checkComparePolicies({"pascal", "fcfs", "rr", "oracle", "pascal-nomigration"}).contains("2 to 4"));
    QVERIFY(checkComparePolicies({"pascal", "fcfs", "pascal"}).contains("'pascal' is listed twice"));
    QVERIFY(checkComparePolicies({"pascal", "fcsf"}).contains("fcsf"));
    QCOMPARE(defaultComparePolicies("pascal"), QStringList({"pascal", "fcfs", "rr"}));
    QCOMPARE(defaultComparePolicies("rr"), QStringList({"rr", "fcfs"}));

    // The scenario's own policy keeps its knobs, the others get defaults.
    const Scenario base = sample(10);
    QVERIFY(!base.policy.knobs.empty());
    QVERIFY(scenarioForPolicy(base, "pascal").policy.knobs == base.policy.knobs);
    QVERIFY(scenarioForPolicy(base, "rr").policy.knobs.empty());
    QCOMPARE(scenarioForPolicy(base, "rr").policy.id, std::string("rr"));
    QCOMPARE(scenarioForPolicy(base, "rr").run.seed, base.run.seed);

    CompareWindow w;
    QString err;
    QVERIFY(!w.load(base, {"pascal", "nope"}, "x", &err));
    QVERIFY2(err.contains("nope"), qPrintable(err));
  }

  void threePoliciesSameArrivalsAndTable() {
    const Scenario base = sample(300);
    CompareWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.load(base, kPolicies, "pascal-phase-aware.json", &err), qPrintable(err));
    QCOMPARE(w.runCount(), 3);
    QCOMPARE(w.table()->rowCount(), 3);
    for (LiveChart* c : {w.chart("compare_ttft_p99"), w.chart("compare_qoe_violation"), w.chart("compare_throughput")}) {
      QVERIFY(c);
      QCOMPARE(c->seriesCount(), 3);
    }

    const double t = 60;
    w.runTo(t);
    QVERIFY(w.waitIdle(60000));
    w.pullNow();
    // Same seeded workload: every run saw the same arrivals by the same time.
    const std::int64_t arrived = w.controller(0)->latest()->snapshot.arrived;
    QVERIFY(arrived > 100);
    for (int i = 0; i < 3; ++i) {
      const auto f = w.controller(i)->latest();
      QCOMPARE(f->clockS, t);
      QVERIFY(!f->done);
      QCOMPARE(f->snapshot.arrived, arrived);
      QVERIFY(f->snapshot.now <= secondsToNs(t));
    }
    checkAgainstCore(w, base, t);
    // The policies do differ (otherwise this comparison proves little).
    const auto rows = w.rows();
    QVERIFY(rows[0].preemptions != rows[1].preemptions || rows[0].ttftP99 != rows[1].ttftP99);
    // The overlaid charts got one series of probes per policy.
    QVERIFY(!w.chart("compare_throughput")->seriesData(0).empty());
    QCOMPARE(w.chart("compare_throughput")->seriesData(0).size(), w.chart("compare_throughput")->seriesData(2).size());

    // Deltas against the reference row, recomputed here.
    for (const CompareMetricInfo& m : compareMetrics()) {
      const double ref = metricValue(rows[0], m.metric);
      QTableWidgetItem* refCell = metricCell(w.table(), 0, m.metric);
      QVERIFY(refCell);
      const double d0 = refCell->data(Qt::UserRole + 1).toDouble();
      if (std::isfinite(ref)) QCOMPARE(d0, 0.0);
      else QVERIFY(std::isnan(d0));
      for (int i = 1; i < 3; ++i) {
        const double v = metricValue(rows[static_cast<std::size_t>(i)], m.metric);
        const double d = metricCell(w.table(), i, m.metric)->data(Qt::UserRole + 1).toDouble();
        if (std::isfinite(v) && std::isfinite(ref) && ref != 0) QVERIFY(near(d, (v - ref) / std::fabs(ref) * 100.0));
        else if (v == 0 && ref == 0) QCOMPARE(d, 0.0);
        else QVERIFY(std::isnan(d));
      }
    }
    // Preemptions: pascal preempts in this scenario, so rows 1..2 have a delta.
    QVERIFY(rows[0].preemptions > 0);

    // CSV export: a header and one line per policy, values and deltas.
    QTemporaryDir dir;
    const QString path = dir.filePath("compare.csv");
    QVERIFY(w.exportCsv(path, &err));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4);
    const QStringList header = lines[0].split(',');
    QCOMPARE(header.mid(0, 6), QStringList({"policy", "sim_s", "arrived", "finished", "ttft_p50_s",
                                            "ttft_p50_s_delta_pct"}));
    QCOMPARE(header.size(), 4 + 2 * static_cast<int>(compareMetrics().size()));
    const int p99 = static_cast<int>(header.indexOf("ttft_p99_s"));
    const int pre = static_cast<int>(header.indexOf("preemptions"));
    const int preD = static_cast<int>(header.indexOf("preemptions_delta_pct"));
    QVERIFY(p99 > 0 && pre > 0 && preD > 0);
    for (int i = 0; i < 3; ++i) {
      const QStringList cols = lines[i + 1].split(',');
      const CompareRow& r = rows[static_cast<std::size_t>(i)];
      QCOMPARE(cols.size(), header.size());
      QCOMPARE(cols[0], kPolicies[i]);
      QCOMPARE(cols[2].toLongLong(), r.arrived);
      QCOMPARE(cols[3].toLongLong(), r.finished);
      QVERIFY(std::fabs(cols[p99].toDouble() - r.ttftP99) <= 5e-7);
      QCOMPARE(cols[pre].toLongLong(), r.preemptions);
      const double want = i == 0 ? 0.0 : (static_cast<double>(r.preemptions) - static_cast<double>(rows[0].preemptions)) /
                                             static_cast<double>(rows[0].preemptions) * 100.0;
      QVERIFY2(std::fabs(cols[preD].toDouble() - want) <= 0.005 + 1e-9, qPrintable(cols[preD]));
    }
    // Same runs, same file.
    const QString again = dir.filePath("again.csv");
    QVERIFY(w.exportCsv(again));
    QFile g(again);
    QVERIFY(g.open(QIODevice::ReadOnly));
    f.seek(0);
    QCOMPARE(g.readAll(), f.readAll());

    // Reset: back to t = 0, and the same numbers again after the same time.
    w.reset();
    for (int i = 0; i < 3; ++i) QCOMPARE(w.controller(i)->latest()->clockS, 0.0);
    QCOMPARE(w.rows()[0].finished, std::int64_t{0});
    w.runTo(t);
    QVERIFY(w.waitIdle(60000));
    w.pullNow();
    const auto again2 = w.rows();
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(again2[static_cast<std::size_t>(i)].finished, rows[static_cast<std::size_t>(i)].finished);
      QCOMPARE(again2[static_cast<std::size_t>(i)].ttftP99, rows[static_cast<std::size_t>(i)].ttftP99);
      QCOMPARE(again2[static_cast<std::size_t>(i)].preemptions, rows[static_cast<std::size_t>(i)].preemptions);
    }
  }

  // Issue 29: at 1024×768 a value and its delta collided ("0.729 s+26.4%").
  // Every metric cell draws them apart and whole, at each window size; the
  // narrow ones stack the delta under the value in a two-line row.
  void tableValuesAndDeltasNeverCollide() {
    const Scenario base = sample(300);
    for (QSize size : {QSize(1024, 768), QSize(1280, 800), QSize(1920, 1080)}) {
      CompareWindow w;
      w.resize(size);
      w.show();
      QString err;
      QVERIFY2(w.load(base, {"pascal", "fcfs", "rr", "pascal-nomigration"}, "pascal-phase-aware.json", &err),
               qPrintable(err));
      w.runTo(60);
      QVERIFY(w.waitIdle(60000));
      w.pullNow();
      QVERIFY(test::waitSettled(w));
      QTableWidget* t = w.table();
      int stacked = 0, cells = 0;
      const QFontMetrics fm(t->font());
      for (int r = 1; r < t->rowCount(); ++r)
        for (int c = 3; c < t->columnCount(); ++c) {
          const CompareCellLayout l = w.cellLayout(r, c);
          auto str = [](QRect q) { return QString("(%1,%2 %3x%4)").arg(q.x()).arg(q.y()).arg(q.width()).arg(q.height()); };
          const QString what = QString("%1x%2 row %3 col %4 '%5' cell %6 value %7 delta %8")
                                   .arg(size.width()).arg(size.height()).arg(r).arg(c)
                                   .arg(t->item(r, c)->text(), str(l.cell), str(l.value), str(l.delta));
          QVERIFY2(!l.delta.isEmpty(), qPrintable(what));
          QVERIFY2(!l.value.intersects(l.delta), qPrintable(what));
          QVERIFY2(l.cell.contains(l.value) && l.cell.contains(l.delta), qPrintable(what));
          QVERIFY2(l.value.width() >= fm.horizontalAdvance(t->item(r, c)->text()), qPrintable(what));
          stacked += l.stacked;
          ++cells;
        }
      QCOMPARE(cells, 3 * static_cast<int>(compareMetrics().size()));
      if (size.width() == 1920) QCOMPARE(stacked, 0);  // room for both on one line
      if (stacked > 0) QVERIFY(t->rowHeight(1) >= 2 * fm.height());
      if (qEnvironmentVariableIsSet("COMPARE_SCREENSHOT"))
        w.grab().save(qEnvironmentVariable("COMPARE_SCREENSHOT") + QString("-%1x%2.png").arg(size.width()).arg(size.height()));
    }
  }

  // Issue 50: the compare window follows lecture mode: its text 1.3×, its
  // charts taller than outside lecture mode, each with its legend (the
  // policies), >= 4 ticks and nothing cut; the table's headers whole.
  void lectureModeCompareChartsReadable() {
    const Scenario base = sample(300);
    auto open = [&](CompareWindow& w, bool lecture) {
      w.setLecture(lecture);
      w.resize(1016, 728);
      w.show();
      QString err;
      QVERIFY2(w.load(base, {"pascal", "fcfs"}, "pascal-phase-aware.json", &err), qPrintable(err));
      w.runTo(60);
      QVERIFY(w.waitIdle(60000));
      w.pullNow();
      QVERIFY(test::waitSettled(w));
    };
    CompareWindow plain, lecture;
    open(plain, false);
    open(lecture, true);
    QVERIFY(lecture.lecture());
    QVERIFY2(lecture.font().pointSizeF() >= plain.font().pointSizeF() * 1.25,
             qPrintable(QString("%1 pt vs %2 pt").arg(lecture.font().pointSizeF()).arg(plain.font().pointSizeF())));
    for (const char* id : {"compare_ttft_p99", "compare_qoe_violation", "compare_throughput"}) {
      LiveChart* c = lecture.chart(id);
      LiveChart* p = plain.chart(id);
      QVERIFY(c && p);
      QVERIFY2(c->height() > p->height() && c->height() * 3 >= lecture.height(),
               qPrintable(QString("%1: %2 px in lecture mode, %3 px without").arg(id).arg(c->height()).arg(p->height())));
      QVERIFY2(c->labelFont().pointSizeF() >= p->labelFont().pointSizeF() * 1.25, id);
      QVERIFY2(c->yTickCount() >= 4, qPrintable(QString("%1: %2 y ticks").arg(id).arg(c->yTickCount())));
      QStringList keys = c->shownSeriesKeys();
      keys.sort();
      QCOMPARE(keys, (QStringList{"fcfs", "pascal"}));
      for (const QString& t : c->paintedTexts()) QVERIFY2(!t.contains(QChar(0x2026)) && !t.contains("..."), qPrintable(t));
    }
    // Every header of the table whole.
    QTableWidget* t = lecture.table();
    const QFontMetrics fm(t->horizontalHeader()->font());
    for (int c = 0; c < t->columnCount(); ++c)
      if (!t->isColumnHidden(c))
        QVERIFY2(t->columnWidth(c) >= fm.horizontalAdvance(t->horizontalHeaderItem(c)->text()),
                 qPrintable(QString("%1: %2 px for %3 px").arg(t->horizontalHeaderItem(c)->text()).arg(t->columnWidth(c)).arg(fm.horizontalAdvance(t->horizontalHeaderItem(c)->text()))));
    // Off again: back to the plain size.
    lecture.setLecture(false);
    QCOMPARE(lecture.font().pointSizeF(), plain.font().pointSizeF());
    if (qEnvironmentVariableIsSet("COMPARE_SCREENSHOT")) {
      lecture.setLecture(true);
      QVERIFY(test::waitSettled(lecture));
      lecture.grab().save(qEnvironmentVariable("COMPARE_SCREENSHOT") + "-lecture-1016x728.png");
    }
  }

  void playToTheEndInLockstep() {
    const Scenario base = sample(120);
    CompareWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.load(base, {"fcfs", "pascal"}, "small", &err), qPrintable(err));
    w.setSpeed(0);  // as fast as possible, in lockstep rounds
    w.play();
    QVERIFY(w.isPlaying());
    QVERIFY(w.waitIdle(120000));
    QVERIFY(!w.isPlaying());
    w.pullNow();
    for (int i = 0; i < 2; ++i) {
      QVERIFY(w.controller(i)->latest()->done);
      QCOMPARE(w.rows()[static_cast<std::size_t>(i)].finished, std::int64_t{120});
    }
    checkAgainstCore(w, base, -1);
  }

  void closeMidRun() {
    auto* w = new CompareWindow;
    w->setAttribute(Qt::WA_DeleteOnClose);
    w->resize(1280, 800);
    w->show();
    QString err;
    QVERIFY2(w->load(sample(200000), kPolicies, "big", &err), qPrintable(err));
    w->setSpeed(0);
    w->play();
    QTRY_VERIFY_WITH_TIMEOUT(w->controller(0)->latest()->clockS > 5.0, 30000);
    QVERIFY(w->isPlaying());
    QPointer<CompareWindow> alive(w);
    QVERIFY(w->close());
    QTRY_VERIFY_WITH_TIMEOUT(alive.isNull(), 10000);  // deleted, workers joined
  }

  // Issue 15: the window had no Close button and neither Escape nor Ctrl+W
  // closed it; its table export gave no confirmation.
  void closeKeysAndExportConfirmation() {
    for (const QKeySequence& key : {QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_W)}) {
      auto* w = new CompareWindow;
      w->setAttribute(Qt::WA_DeleteOnClose);
      w->resize(1024, 768);
      w->show();
      QVERIFY(QTest::qWaitForWindowExposed(w));
      w->activateWindow();
      QString err;
      QVERIFY2(w->load(sample(200), kPolicies, "small", &err), qPrintable(err));
      QToolButton* closeButton = nullptr;
      for (QToolButton* b : w->findChildren<QToolButton*>())
        if (b->defaultAction() && b->defaultAction()->text() == "Close" && b->isVisible()) closeButton = b;
      QVERIFY2(closeButton, "no visible Close button at 1024 px");
      if (key == QKeySequence(Qt::Key_Escape)) {
        QTemporaryDir tmp;
        const QString path = tmp.filePath("table.csv");
        QVERIFY2(w->exportTable(path, &err), qPrintable(err));
        QVERIFY2(w->notice().contains("table.csv"), qPrintable(w->notice()));
      }
      QPointer<CompareWindow> alive(w);
      QTest::keySequence(w, key);
      QTRY_VERIFY_WITH_TIMEOUT(alive.isNull(), 10000);
    }
  }

  void policyDialog() {
    ComparePolicyDialog d({"pascal", "fcfs", "rr"});
    QCOMPARE(d.policies(), QStringList({"pascal", "fcfs", "rr"}));
    const QList<QComboBox*> combos = d.findChildren<QComboBox*>();
    QCOMPARE(combos.size(), kCompareMaxPolicies);
    QPushButton* ok = nullptr;
    for (QPushButton* b : d.findChildren<QPushButton*>())
      if (b->text() == "Compare") ok = b;
    QVERIFY(ok);
    QVERIFY(ok->isEnabled());
    combos[1]->setCurrentIndex(combos[1]->findData("pascal"));  // a duplicate is refused inline
    QVERIFY(!ok->isEnabled());
    combos[1]->setCurrentIndex(combos[1]->findData("oracle"));
    combos[2]->setCurrentIndex(0);  // "(none)": two policies are enough
    QVERIFY(ok->isEnabled());
    QCOMPARE(d.policies(), QStringList({"pascal", "oracle"}));
    d.show();
    QVERIFY(d.grab().save(QStringLiteral(SERVELAB_TEST_OUT "/compare-dialog.png")));
  }

  void pausedRunsStandTogether() {
    CompareWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.load(sample(100000), kPolicies, "paced", &err), qPrintable(err));
    w.setSpeed(100);
    w.play();
    QTRY_VERIFY_WITH_TIMEOUT(w.controller(0)->latest()->clockS > 1.0, 30000);
    w.pause();
    QVERIFY(w.waitIdle(30000));
    w.pullNow();
    // Lockstep: pausing lets the round in flight finish, so all runs stop at the same time.
    const double t = w.controller(0)->latest()->clockS;
    QVERIFY(t > 1.0);
    for (int i = 1; i < 3; ++i) QCOMPARE(w.controller(i)->latest()->clockS, t);
    for (const CompareRow& r : w.rows()) QCOMPARE(r.arrived, w.rows()[0].arrived);
    // Step: one more simulated second for everyone.
    w.step();
    QVERIFY(w.waitIdle(30000));
    for (int i = 0; i < 3; ++i) QCOMPARE(w.controller(i)->latest()->clockS, t + 1.0);
  }

  // Issue 50: the toolbar said t = 60.0 s (the round's target) while the
  // table's "Sim time" said 59.9 s (each engine's last event). Both now read
  // the runs' clock.
  void toolbarClockAgreesWithTheTable() {
    CompareWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.load(sample(100000), kPolicies, "clock", &err), qPrintable(err));
    for (double t : {12.34, 40.0}) {
      w.runTo(t);
      QVERIFY(w.waitIdle(60000));
      w.pullNow();
      QCOMPARE(w.shownClock(), t);
      const QString shown = w.clockText();  // "t = 12.3 s"
      for (int i = 0; i < w.runCount(); ++i) {
        QCOMPARE(w.table()->item(i, 1)->data(Qt::UserRole).toDouble(), t);
        QVERIFY2(shown.endsWith(w.table()->item(i, 1)->text()),
                 qPrintable(shown + " vs " + w.table()->item(i, 1)->text()));
        if (t != std::floor(t))  // the engine's last event is earlier (probes fall on whole seconds)
          QVERIFY(w.controller(i)->latest()->snapshot.now < secondsToNs(t));
      }
    }
  }

  // Issue 50: on pascal-phase-aware.json PASCAL looked worse than FCFS by
  // the overall p99; the table shows the paper's binned tail TTFT beside it
  // whenever a PASCAL policy is compared (and only then).
  void binnedTailBesideP99ForPascal() {
    const auto tailColumn = [](QTableWidget* t) {
      for (int c = 0; c < t->columnCount(); ++c)
        if (t->horizontalHeaderItem(c)->text() == "Tail TTFT") return c;
      return -1;
    };
    CompareWindow w;
    w.resize(1024, 768);
    w.show();
    QString err;
    QVERIFY2(w.load(sample(1000), {"fcfs", "rr"}, "no pascal", &err), qPrintable(err));
    const int col = tailColumn(w.table());
    QVERIFY(col > 0);
    QVERIFY(w.table()->isColumnHidden(col));
    QVERIFY2(w.load(sample(1000), {"fcfs", "pascal"}, "pascal-phase-aware.json", &err), qPrintable(err));
    QVERIFY(!w.table()->isColumnHidden(col));
    QCOMPARE(w.table()->horizontalHeaderItem(col - 1)->text(), QString("TTFT p99"));  // beside it
    w.setSpeed(0);
    w.play();
    QVERIFY(w.waitIdle(120000));
    w.pullNow();
    const std::vector<CompareRow> rows = w.rows();
    // The paper's point: PASCAL cuts the binned tail well below FCFS's.
    QVERIFY2(rows[1].tailTtft < 0.85 * rows[0].tailTtft,
             qPrintable(QString("pascal %1 s vs fcfs %2 s").arg(rows[1].tailTtft).arg(rows[0].tailTtft)));
    QCOMPARE(w.table()->item(1, col)->data(Qt::UserRole).toDouble(), rows[1].tailTtft);
    QVERIFY(w.table()->item(1, col)->text().endsWith(" s"));
    if (qEnvironmentVariableIsSet("COMPARE_SCREENSHOT")) w.grab().save(qEnvironmentVariable("COMPARE_SCREENSHOT") + "-tail.png");
  }

  void mainWindowEntryPoint() {
    MainWindow mw;
    mw.resize(1280, 800);
    QString err;
    CompareWindow* none = mw.openCompare({"pascal", "fcfs"}, &err);
    QVERIFY(!none);
    QVERIFY(!err.isEmpty());  // nothing loaded yet
    QVERIFY2(mw.openScenario(kSample, &err), qPrintable(err));
    // Run menu: "Compare policies…" with Ctrl+K.
    QAction* action = nullptr;
    for (QAction* m : mw.menuBar()->actions())
      if (m->menu())
        for (QAction* a : m->menu()->actions())
          if (a->text().contains("Compare")) action = a;
    QVERIFY(action);
    QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_K));
    QVERIFY(action->isEnabled());
    QVERIFY(!mw.openCompare({"pascal", "pascal"}, &err));
    QVERIFY2(err.contains("twice"), qPrintable(err));
    QPointer<CompareWindow> cw = mw.openCompare({"pascal", "fcfs", "rr", "pascal-nomigration"}, &err);
    QVERIFY2(cw, qPrintable(err));
    QCOMPARE(cw->runCount(), 4);
    QVERIFY(cw->controller(0)->scenario().policy.knobs == mw.controller()->scenario().policy.knobs);
    QCOMPARE(cw->controller(3)->scenario().policy.id, std::string("pascal-nomigration"));
    QCOMPARE(cw->controller(3)->scenario().run.seed, mw.controller()->scenario().run.seed);
    cw->close();
    QTRY_VERIFY_WITH_TIMEOUT(cw.isNull(), 10000);
  }
};

QTEST_MAIN(TestCompare)
#include "test_compare.moc"
