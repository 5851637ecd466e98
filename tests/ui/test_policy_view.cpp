// What the GUI shows of a policy (docs/policy-api.md "What the GUI shows of
// a policy"): the cluster view's cards, the inspector and the "Policy" chart
// render whatever the running policy publishes — per-instance fields, pool
// labels (length ranges included), cluster-level series, decisions named by
// the policy — and nothing when it publishes nothing. PASCAL (t/r/a/m) and
// example-split (pools, a rebalance series) go through the same path.
#include <QDir>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/cluster_view_paint.h"
#include "ui/common/theme.h"
#include "ui/inspector/inspector_panel.h"
#include "ui/shell/main_window.h"
#include "ui/cluster/policy_view.h"
#include "scenario/scenario_io.h"
#include "ui/controller/sim_controller.h"
#include "ui/sweep/sweep_window.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSamples = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/");

// The tooltip of the first hit inside `card` whose text contains `needle`.
QString tipInCard(const ClusterView& v, const QRect& card, const QString& needle) {
  for (int y = card.top(); y <= card.bottom(); y += 2)
    for (int x = card.left(); x <= card.right(); x += 6) {
      const QString t = v.toolTipAt(QPoint(x, y));
      if (t.contains(needle)) return t;
    }
  return {};
}

QString num(double v) { return QString::number(static_cast<qint64>(std::llround(v))); }

// A frame as a policy of no known family would publish it: a flag that is
// off, a token count, a duration, and a pool label that carries a length range.
std::shared_ptr<LiveFrame> handMadeFrame(int instances) {
  auto f = std::make_shared<LiveFrame>();
  f->snapshot.instances.resize(static_cast<std::size_t>(instances));
  for (int i = 0; i < instances; ++i) {
    InstanceSnapshot& in = f->snapshot.instances[static_cast<std::size_t>(i)];
    in.id = i;
    in.gpuBlocks = 1000;
    in.gpuBlocksUsed = 100 * (i % 10);
    in.cpuBlocks = 100;
    in.queues.push_back({"waiting", {}});
  }
  InstanceSnapshot& a = f->snapshot.instances[0];
  a.poolLabel = "stage 2 · 2k–8k tok";
  a.policyFields = {{"ready", 0, "bool", "accepts new prompts"},
                    {"b", 2048, "tokens", "the stage's lower length bound"},
                    {"wait", 0.25, "s", "time since the last move"}};
  return f;
}

}  // namespace

class TestPolicyView : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_policy_view");
  }

  // Formatting follows the unit only.
  void fieldsAreFormattedByTheirUnit() {
    using namespace policyview;
    QCOMPARE(valueText({"r", 3, "requests", ""}), QString("3"));
    QCOMPARE(valueWithUnit({"r", 3, "requests", ""}), QString("3 requests"));
    QCOMPARE(valueText({"wait", 0.25, "s", ""}), QString("0.25 s"));
    QCOMPARE(valueText({"share", 0.4, "fraction", ""}), QString("40%"));
    QCOMPARE(flagText({"on pace", 1, "bool", ""}), QString("on pace"));
    QCOMPARE(flagText({"on pace", 0, "bool", ""}), QString("not on pace"));
    const std::vector<PolicyField> f = {{"on pace", 1, "bool", ""}, {"r", 3, "requests", ""},
                                        {"a", 0, "requests", ""}, {"m", 420, "blocks", ""}};
    QCOMPARE(valueForms(f), (QStringList{"r 3 · a 0 · m 420", "r3 a0 m420"}));
    QVERIFY(valueForms({{"on pace", 1, "bool", ""}}).isEmpty());
    // Large counts fit a card in three digits; the tooltip keeps them exact.
    QCOMPARE(valueForms({{"queued", 103431, "tokens", ""}, {"load", 1534567, "tokens", ""}}),
             (QStringList{"queued 103k · load 1.53M", "queued 103k load 1.53M"}));
    QCOMPARE(tooltipLine({"queued", 103431, "tokens", "prompt tokens"}), QString("queued = 103431 tokens: prompt tokens"));
    QCOMPARE(valueForms({{"m", 9999, "blocks", ""}}).front(), QString("m 9999"));
    QCOMPARE(tooltipLine({"m", 420, "blocks", "KV blocks"}), QString("m = 420 blocks: KV blocks"));
    DecisionSnapshot d;
    d.decision.requestId = 39;
    d.decision.boundary = true;
    d.decision.from = 1;
    d.decision.chosen = d.decision.instance = 5;
    d.reason = "fewest r; move";
    QCOMPARE(decisionText(d), QString("#39 GPU 1 → GPU 5 · fewest r; move"));
    QVERIFY(decisionInvolves(d, 1) && decisionInvolves(d, 5) && !decisionInvolves(d, 2));
    // A decision about an instance (request id -1), e.g. an Arrow flip.
    DecisionSnapshot flip;
    flip.decision.from = flip.decision.chosen = flip.decision.instance = 3;
    flip.reason = "to P→D; monitor-tpot";
    QCOMPARE(decisionText(flip), QString("GPU 3 · to P→D; monitor-tpot"));
    QVERIFY(decisionInvolves(flip, 3) && !decisionInvolves(flip, 1));
  }

  // A card draws the pool label (with its length range), the flag's text and
  // the values; hover gives each field's own tooltip. A card with nothing
  // published draws nothing of a policy. Compact cards keep it in the tooltip.
  void cardsDrawWhateverAFramePublishes() {
    ClusterView v;
    v.resize(900, 500);
    v.setFrame(handMadeFrame(2));
    v.grab();
    QVERIFY(!v.compact());
    const QStringList t0 = v.policyTexts(0);
    QVERIFY2(t0.contains("stage 2 · 2k–8k tok"), qPrintable(t0.join(" | ")));
    QVERIFY2(t0.contains("not ready"), qPrintable(t0.join(" | ")));
    QVERIFY2(t0.contains("b 2048 · wait 0.25 s"), qPrintable(t0.join(" | ")));
    QVERIFY2(v.policyTexts(1).isEmpty(), qPrintable(v.policyTexts(1).join(" | ")));
    const QString tip = tipInCard(v, v.cardRect(0), "Published by the running policy");
    QVERIFY2(tip.contains("b = 2048 tokens: the stage's lower length bound"), qPrintable(tip));
    QVERIFY2(tip.contains("ready = no: accepts new prompts"), qPrintable(tip));
    QVERIFY2(tipInCard(v, v.cardRect(0), "pool: stage 2").contains("GPU 0"), "the header names the pool");
    QVERIFY(tipInCard(v, v.cardRect(1), "Published by").isEmpty());
    QVERIFY(tipInCard(v, v.cardRect(1), "pool:").isEmpty());

    // 64 small cards: compact, the pool's initial on the card, all on hover.
    ClusterView small;
    small.resize(700, 420);
    small.setFrame(handMadeFrame(64));
    small.grab();
    QVERIFY(small.compact());
    const QStringList ct = small.policyTexts(0);
    QVERIFY2(!ct.isEmpty() && ct.front() == "S", qPrintable(ct.join(" | ")));
    // A line to spare: the values' tight form (elided if need be).
    if (ct.size() > 1)
      QVERIFY2(ct[1] == "b 2048 wait 0.25 s" || (ct[1].endsWith(QChar(0x2026)) && ct[1].startsWith("b")), qPrintable(ct[1]));
    QCOMPARE(small.policyTexts(1), QStringList{});
    // CascadeInfer's stage ranges in short: not "0" and "4" (issue 29).
    QCOMPARE(policyview::compactBadgeText(QString::fromUtf8("0–4.1k")), QString::fromUtf8("≤4.1k"));
    QCOMPARE(policyview::compactBadgeText(QString::fromUtf8("4.1k–4.8k")), QString::fromUtf8("≤4.8k"));
    QCOMPARE(policyview::compactBadgeText(QString::fromUtf8("4.8k–∞")), QString::fromUtf8(">4.8k"));
    QCOMPARE(policyview::compactBadgeText(QString::fromUtf8("P→D")), QString::fromUtf8("P→D"));
    QCOMPARE(policyview::compactBadgeText("decode"), QString("D"));
    const QString ctip = small.toolTipAt(small.cardRect(0).center());
    QVERIFY2(ctip.contains("pool: stage 2 · 2k–8k tok") && ctip.contains("wait = 0.25 s"), qPrintable(ctip));
    QVERIFY(!small.toolTipAt(small.cardRect(1).center()).contains("Published by"));
  }

  // Past what compact cards can hold (hundreds to thousands of instances,
  // B5 has 512), every instance gets a tile and the whole cluster stays in
  // view: tiles inside the cards' area, none overlapping, each one's KV bar
  // drawn to its share, and hover and click reach every one.
  void manyInstancesGetTilesThatAllFit() {
    for (const int n : {512, 1000, 4096})
      for (const QSize size : {QSize(700, 420), QSize(950, 340), QSize(1150, 370)}) {
        const QString at = QString("%1 instances at %2x%3").arg(n).arg(size.width()).arg(size.height());
        ClusterView v;
        v.resize(size);
        v.setFrame(handMadeFrame(n));
        const QImage img = v.grab().toImage();
        QVERIFY2(v.tiles() && v.compact(), qPrintable(at));
        const QRect area = v.rect().adjusted(0, 0, 0, -clusterpaint::kLegendH);  // above the legend
        for (int i = 0; i < n; ++i) {
          const QRect r = v.cardRect(i);
          QVERIFY2(!r.isEmpty() && area.contains(r), qPrintable(at + QString(": tile %1 outside").arg(i)));
          if (i + 1 < n) QVERIFY2(!r.intersects(v.cardRect(i + 1)), qPrintable(at));
        }
        // No two rows overlap: the next row starts below this one.
        const int firstOfRow2 = [&] {
          for (int i = 1; i < n; ++i)
            if (v.cardRect(i).left() <= v.cardRect(0).left()) return i;
          return n;
        }();
        QVERIFY2(firstOfRow2 < n && v.cardRect(firstOfRow2).top() > v.cardRect(0).bottom(), qPrintable(at));
        // Hover and click name the instance.
        for (const int i : {0, n / 2, n - 1}) {
          const QPoint c = v.cardRect(i).center();
          QCOMPARE(v.instanceAt(c), i);
          const QString tip = v.toolTipAt(c);
          QVERIFY2(tip.startsWith(QString("GPU %1\n").arg(i)) &&
                       tip.contains(QString("GPU KV %1 of 1000 blocks").arg(100 * (i % 10))),
                   qPrintable(at + ": " + tip));
        }
        // Instance 9 holds 90 % of its KV blocks, instance 0 none: 80 % of
        // the way along the tile's top bar is the KV colour on 9 only.
        const auto kvDrawn = [&](int i) {  // in the bar's rows (the top third)
          const QRect r = v.cardRect(i);
          const int inset = r.width() >= 8 && r.height() >= 8 ? 2 : 0;
          const QRect c = r.adjusted(inset, inset, -inset, -inset);
          const int x = c.left() + static_cast<int>(0.8 * c.width());
          for (int y = c.top(); y <= c.top() + c.height() / 3; ++y)
            if (img.pixelColor(x, y) == theme::kGpuBar) return true;
          return false;
        };
        QVERIFY2(kvDrawn(9), qPrintable(at));
        QVERIFY2(!kvDrawn(0), qPrintable(at));
      }
    // A handful of instances stay cards.
    ClusterView few;
    few.resize(700, 420);
    few.setFrame(handMadeFrame(64));
    few.grab();
    QVERIFY(few.compact() && !few.tiles());
  }

  // The chart set makes one line per published label, in the order first
  // seen, and says so when a run has probes but no series.
  void policyChartMakesOneLinePerPublishedLabel() {
    ChartPanel p;
    p.clear(2);
    QCOMPARE(p.tabs()->tabText(2), QString("Policy"));
    LiveChart* c = p.policyChart();
    QCOMPARE(p.chart("policy"), c);
    QCOMPARE(c->seriesCount(), 0);
    ProbeSample probe;
    probe.time = secondsToNs(1);
    p.addProbes({probe});
    QVERIFY2(c->subtitle().contains("publishes no cluster-level series"), qPrintable(c->subtitle()));
    p.addPolicySamples({{1.0, {{"moved", 2, "requests", "moves so far"}, {"stayed", 5, "requests", ""}}},
                        {2.0, {{"moved", 4, "requests", "moves so far"}, {"stayed", 6, "requests", ""}}},
                        {3.0, {{"moved", 7, "requests", ""}, {"b1", 512, "tokens", ""}}}});
    p.refresh();
    QCOMPARE(c->seriesCount(), 3);
    QCOMPARE(c->seriesName(0), QString("moved (requests)"));
    QCOMPARE(c->seriesName(2), QString("b1 (tokens)"));
    QCOMPARE(c->seriesData(0), (std::vector<QPointF>{{1, 2}, {2, 4}, {3, 7}}));
    QCOMPARE(c->seriesData(1), (std::vector<QPointF>{{1, 5}, {2, 6}}));
    QCOMPARE(c->seriesData(2), (std::vector<QPointF>{{3, 512}}));
    QVERIFY(c->subtitle().isEmpty());  // mixed units: no common unit to name
    // Exported with the other charts when it has series; a new run empties it.
    QTemporaryDir dir;
    const int withPolicy = p.exportAll(dir.path(), QSize(480, 300), 1.0);
    QCOMPARE(withPolicy, 3 * static_cast<int>(p.charts().size()) + 3);
    QVERIFY(QFile::exists(dir.path() + "/policy.csv"));
    p.clear(2);
    QCOMPARE(c->seriesCount(), 0);
    QTemporaryDir dir2;
    QCOMPARE(p.exportAll(dir2.path(), QSize(480, 300), 1.0), 3 * static_cast<int>(p.charts().size()));
    QVERIFY(!QFile::exists(dir2.path() + "/policy.png"));
  }

  // PASCAL's monitor line, tooltips, decisions and cluster series reach the
  // cards, the inspector and the policy chart through the generic path.
  void pascalGoesThroughTheGenericPath() {
    MainWindow w;
    w.resize(1280, 800);
    w.fitDocksToSize();
    w.show();
    QString err;
    QVERIFY2(w.openScenario(kSamples + "pascal-phase-aware.json", &err), qPrintable(err));
    w.controller()->runTo(40);
    QVERIFY(w.controller()->waitIdle(60000));
    QTest::qWait(20);
    w.pullNow();
    const std::shared_ptr<const LiveFrame> f = w.controller()->latest();
    ClusterView* cv = w.clusterView();
    cv->grab();
    QVERIFY(!cv->compact());
    for (const InstanceSnapshot& in : f->snapshot.instances) {
      const auto& pf = in.policyFields;
      QCOMPARE(pf.size(), std::size_t{4});
      const QStringList texts = cv->policyTexts(in.id);
      // t_i as a flag, r/a/m as values: wide or tight, whichever the card fits.
      const QString wide = QString("r %1 · a %2 · m %3").arg(num(pf[1].value), num(pf[2].value), num(pf[3].value));
      const QString tight = QString("r%1 a%2 m%3").arg(num(pf[1].value), num(pf[2].value), num(pf[3].value));
      QVERIFY2(texts.contains(wide) || texts.contains(tight), qPrintable(texts.join(" | ") + " vs " + wide));
      if (texts.size() > 1)
        QCOMPARE(texts.front(), pf[0].value != 0 ? QString("on pace") : QString("not on pace"));
      const QString tip = tipInCard(*cv, cv->cardRect(in.id), "Published by");
      QVERIFY2(tip.contains("r_i:") && tip.contains(QString("m = %1 blocks").arg(num(pf[3].value))), qPrintable(tip));
    }

    // The inspector's instance page: the fields and the decisions there,
    // named by PASCAL's own table (the same text as the snapshot's reason).
    QVERIFY(!f->snapshot.recentDecisions.empty());
    const DecisionSnapshot& last = f->snapshot.recentDecisions.back();
    const int inst = last.decision.instance;
    InspectorPanel* ins = w.inspector();
    ins->showInstance(inst);
    const InstanceSnapshot& in = w.controller()->latest()->snapshot.instances[static_cast<std::size_t>(inst)];
    QVERIFY2(ins->policyText().contains(QString("<b>%1 blocks</b>").arg(num(in.policyFields[3].value))),
             qPrintable(ins->policyText()));
    QVERIFY2(ins->policyText().contains(QString::fromStdString(last.reason).toHtmlEscaped()), qPrintable(ins->policyText()));
    QVERIFY(ins->policyToolTip().contains("a_i:"));

    // A request's events include PASCAL's decisions about it.
    const std::int64_t id = last.decision.requestId;
    ins->showRequest(id);
    bool found = false;
    for (int r = 0; r < ins->eventRows(); ++r)
      found = found || (ins->eventText(r).startsWith("policy: ") &&
                        ins->eventText(r).contains(QString::fromStdString(last.reason)));
    QVERIFY2(found, "no decision row with the snapshot's reason");
    // Arrival first, then the placement decided at that same instant.
    QVERIFY2(ins->eventText(0).startsWith("arrived"), qPrintable(ins->eventText(0)));
    QVERIFY2(ins->eventText(1).startsWith("policy: placed on GPU"), qPrintable(ins->eventText(1)));
    const auto t = w.controller()->timelines().request(id);
    QVERIFY(t && !t->decisions.empty());
    QCOMPARE(t->decisions.front().boundary, false);  // its placement comes first

    // The policy chart: PASCAL's two cluster series, never decreasing counts,
    // the latest at most what the snapshot says now.
    LiveChart* pc = w.chartPanel()->policyChart();
    w.chartPanel()->refresh();
    QCOMPARE(pc->seriesCount(), 2);
    QCOMPARE(pc->seriesName(0), QString("migrated at </think> (requests)"));
    const auto& moved = pc->seriesData(0);
    QVERIFY(moved.size() >= 30);
    for (std::size_t i = 1; i < moved.size(); ++i) QVERIFY(moved[i].y() >= moved[i - 1].y());
    QVERIFY(moved.back().y() > 0);
    QVERIFY(moved.back().y() <= f->snapshot.policySeries[0].value);
  }

  // example-split: its pool labels on the cards, its KV field, its series.
  void exampleSplitPoolsAndSeriesAreShown() {
    MainWindow w;
    w.resize(1280, 800);
    w.fitDocksToSize();
    w.show();
    QString err;
    QVERIFY2(w.openScenario(kSamples + "example-split-handoff.json", &err), qPrintable(err));
    w.controller()->runTo(20);
    QVERIFY(w.controller()->waitIdle(60000));
    QTest::qWait(20);
    w.pullNow();
    const std::shared_ptr<const LiveFrame> f = w.controller()->latest();
    ClusterView* cv = w.clusterView();
    cv->grab();
    QCOMPARE(f->snapshot.instances.size(), std::size_t{4});
    QCOMPARE(cv->policyTexts(0).front(), QString("prefill"));
    for (int i = 1; i < 4; ++i) {
      const InstanceSnapshot& in = f->snapshot.instances[static_cast<std::size_t>(i)];
      QCOMPARE(cv->policyTexts(i).front(), QString("decode"));
      QVERIFY2(cv->policyTexts(i).contains("KV " + num(in.policyFields[0].value)), qPrintable(cv->policyTexts(i).join(" | ")));
    }
    w.chartPanel()->refresh();
    LiveChart* pc = w.chartPanel()->policyChart();
    QCOMPARE(pc->seriesCount(), 1);
    QCOMPARE(pc->seriesName(0), QString("rebalances (migrations)"));
    QVERIFY2(pc->subtitle().contains("migrations"), qPrintable(pc->subtitle()));
    w.inspector()->showInstance(2);
    QVERIFY2(w.inspector()->policyText().contains("pool: decode"), qPrintable(w.inspector()->policyText()));
  }

  // A policy that publishes nothing (fcfs): no policy line, no badge, no
  // policy block, an empty policy chart that says why; nothing breaks.
  void aPolicyThatPublishesNothingShowsNothing() {
    MainWindow w;
    w.resize(1280, 800);
    w.fitDocksToSize();
    w.show();
    QString err;
    QVERIFY2(w.openScenario(kSamples + "default.json", &err), qPrintable(err));
    w.controller()->runTo(10);
    QVERIFY(w.controller()->waitIdle(60000));
    QTest::qWait(20);
    w.pullNow();
    const std::shared_ptr<const LiveFrame> f = w.controller()->latest();
    QVERIFY(f->snapshot.policySeries.empty());
    ClusterView* cv = w.clusterView();
    cv->grab();
    for (const InstanceSnapshot& in : f->snapshot.instances) {
      QVERIFY(in.policyFields.empty());
      QVERIFY2(cv->policyTexts(in.id).isEmpty(), qPrintable(cv->policyTexts(in.id).join(" | ")));
      QVERIFY(tipInCard(*cv, cv->cardRect(in.id), "Published by").isEmpty());
    }
    w.inspector()->showInstance(0);
    QVERIFY2(w.inspector()->policyText().isEmpty(), qPrintable(w.inspector()->policyText()));
    w.chartPanel()->refresh();
    QCOMPARE(w.chartPanel()->policyChart()->seriesCount(), 0);
    QVERIFY(w.chartPanel()->policyChart()->subtitle().contains("publishes no cluster-level series"));
  }

  // The Policy tab at the three screen sizes: PASCAL's series with their
  // whole names, nothing cut to "…" (a grab of each is left in the build
  // folder to look at).
  void policyTabFitsAtEachScreenSize() {
    for (const QSize size : {QSize(1024, 768), QSize(1280, 800), QSize(1920, 1080)}) {
      MainWindow w;
      w.resize(size);
      w.fitDocksToSize();
      w.show();
      QString err;
      QVERIFY2(w.openScenario(kSamples + "pascal-phase-aware.json", &err), qPrintable(err));
      w.controller()->runTo(60);
      QVERIFY(w.controller()->waitIdle(60000));
      w.chartPanel()->tabs()->setCurrentIndex(2);
      QTest::qWait(20);
      w.pullNow();
      w.chartPanel()->refresh();
      QVERIFY(test::waitSettled(w));  // the chart lays itself out again once a resize settles
      w.chartPanel()->policyChart()->refresh();
      QCoreApplication::processEvents();
      LiveChart* pc = w.chartPanel()->policyChart();
      QVERIFY(pc->isVisible());
      QVERIFY2(pc->width() >= 300, qPrintable(QString::number(pc->width())));
      const QStringList texts = pc->paintedTexts();
      for (const QString& t : texts)
        QVERIFY2(!t.contains(QChar(0x2026)), qPrintable(QString("%1x%2: %3").arg(size.width()).arg(size.height()).arg(t)));
      QVERIFY2(texts.contains("migrated at </think> (requests)") && texts.contains("stayed at </think> (requests)"),
               qPrintable(texts.join(" | ")));
      w.grab().save(QString(SERVELAB_TEST_OUT "/policy-tab-%1x%2.png").arg(size.width()).arg(size.height()));
    }
  }

  // The sweep window's default policies come from the registry.
  void sweepDefaultsComeFromTheRegistry() {
    // fcfs loaded: the next baseline and the first policy of each paper family, at most 4.
    QCOMPARE(QString::fromStdString(defaultSweepPolicies("fcfs")), QString("fcfs,rr,pascal,arrow"));
    QCOMPARE(QString::fromStdString(defaultSweepPolicies("rr")), QString("fcfs,rr"));
    QCOMPARE(QString::fromStdString(defaultSweepPolicies("example-split")), QString("fcfs,example-split"));
  }
};

QTEST_MAIN(TestPolicyView)
#include "test_policy_view.moc"
