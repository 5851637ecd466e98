// Mixed GPU pools in the app (issue 49 item 5): the cluster view groups the
// cards of samples/mixed-pools-splitwise.json (H100 TP8 ×1 prefill, A100
// TP8 ×2 decode) under one header per pool naming its role, GPU, count × TP
// and price per hour; the status bar's cost readout gives the cluster's
// $/hour (8 H100 + 16 A100 at their list prices, read with gpuPrice()) and
// $ per million output tokens at the rolling throughput, "—" for a GPU
// without a price (h800-80g); a one-pool cluster is drawn as before.
#include <QImage>
#include <QLabel>
#include <QTest>

#include <cmath>

#include "cost/presets.h"
#include "cost/pricing.h"
#include "scenario/scenario_io.h"
#include "ui/cluster/cluster_view.h"
#include "ui/common/pool_cost.h"
#include "ui/controller/sim_controller.h"
#include "ui/shell/main_window.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSamples = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/");
const QString kMixed = QStringLiteral("mixed-pools-splitwise.json");

Scenario sample(const QString& name) {
  return loadScenarioFile((kSamples + name).toStdString());
}

double price(const char* gpu) {
  const GpuPrice* p = gpuPrice(gpu);
  return p ? p->usdPerGpuHour : -1;
}

// The window at `size` with `s` loaded, run to `seconds` and pulled.
bool openRun(MainWindow& w, QSize size, const Scenario& s, const QString& name, double seconds) {
  w.resize(size);
  w.fitDocksToSize();
  w.show();
  QString err;
  if (!QTest::qWaitForWindowExposed(&w) || !w.loadScenario(s, name, &err)) {
    qWarning("%s: %s", qPrintable(name), qPrintable(err));
    return false;
  }
  // Two steps, so that the rolling throughput has a window.
  for (const double t : {seconds / 2, seconds}) {
    w.controller()->runTo(t);
    if (!w.controller()->waitIdle(60000)) return false;
    w.pullNow();
  }
  if (!test::waitSettled(w)) return false;
  w.pullNow();
  w.clusterView()->repaint();
  return true;
}

QString costText(const MainWindow& w) {
  return w.findChild<QLabel*>("CostReadout")->text();
}

}  // namespace

class TestPoolView : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_pool_view");
  }

  void poolsOfTheSample() {
    const std::vector<PoolGroup> pools = poolGroups(sample(kMixed));
    QCOMPARE(pools.size(), std::size_t(2));
    QCOMPARE(pools[0].role, QString("prefill"));
    QCOMPARE(pools[0].gpuName, QString::fromStdString(PresetRegistry::builtin().gpu("h100-sxm-80g").name));
    QCOMPARE(pools[0].first, 0);
    QCOMPARE(pools[0].count, 1);
    QCOMPARE(pools[0].tp, 8);
    QCOMPARE(pools[1].role, QString("decode"));
    QCOMPARE(pools[1].gpuName, QString::fromStdString(PresetRegistry::builtin().gpu("a100-80g").name));
    QCOMPARE(pools[1].first, 1);
    QCOMPARE(pools[1].count, 2);
    // The pool's price per hour: its GPUs at the list price.
    QVERIFY(price("h100-sxm-80g") > 0 && price("a100-80g") > 0);
    QCOMPARE(*pools[0].usdPerHour(), 8 * price("h100-sxm-80g"));
    QCOMPARE(*pools[1].usdPerHour(), 16 * price("a100-80g"));
    const QString full = pools[0].headerForms().front();
    QVERIFY2(full.contains("prefill pool") && full.contains(pools[0].gpuName) && full.contains("1 × TP8") &&
                 full.contains(usdText(8 * price("h100-sxm-80g")) + "/h"),
             qPrintable(full));
    QVERIFY2(
        pools[1].headerForms().front().contains("decode pool") && pools[1].headerForms().front().contains("2 × TP8"),
        qPrintable(pools[1].headerForms().front()));
  }

  void headersAndCostReadout_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1024x768") << QSize(1024, 768);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
  }

  void headersAndCostReadout() {
    QFETCH(QSize, size);
    MainWindow w;
    QVERIFY(openRun(w, size, sample(kMixed), kMixed, 20));
    const ClusterView* cv = w.clusterView();
    const auto& headers = cv->poolHeaders();
    QCOMPARE(headers.size(), std::size_t(2));
    // Role and GPU named (in the text, or a shorter form's GPU family and
    // the tooltip where the card is narrow), whole, inside the view.
    const QStringList gpus = {"H100", "A100"}, roles = {"prefill", "decode"};
    for (int g = 0; g < 2; ++g) {
      const auto& h = headers[static_cast<std::size_t>(g)];
      QVERIFY2(h.text.contains(gpus[g]), qPrintable(h.text));
      QVERIFY2(h.text.contains(roles[g]) || h.toolTip.startsWith(roles[g]), qPrintable(h.text + " | " + h.toolTip));
      QVERIFY2(h.toolTip.contains(roles[g] + " pool"), qPrintable(h.toolTip));
      QVERIFY2(cv->rect().contains(h.rect), qPrintable(QString("header %1 outside the view").arg(h.text)));
      QVERIFY2(cv->fontMetrics().horizontalAdvance(h.text) > 0, "empty header");
      for (int i = 0; i < 3; ++i)
        QVERIFY2(!h.rect.intersects(cv->cardRect(i)), qPrintable(QString("header %1 over card %2").arg(g).arg(i)));
    }
    if (size.width() >= 1920) {  // room for the whole header
      QVERIFY2(headers[0].text.contains("prefill pool") && headers[0].text.contains("1 × TP8"),
               qPrintable(headers[0].text));
      QVERIFY2(headers[1].text.contains("decode pool") && headers[1].text.contains("2 × TP8"),
               qPrintable(headers[1].text));
    }
    // Each pool's cards below its own header, not another's.
    QVERIFY(cv->cardRect(0).top() > headers[0].rect.bottom());
    QVERIFY(cv->cardRect(1).top() > headers[1].rect.bottom());
    QVERIFY(cv->cardRect(1).left() >= headers[1].rect.left() - 1);
    QVERIFY(!cv->compact());

    // $/hour by hand: 8 H100 + 16 A100 at their list prices.
    const double perHour = 8 * price("h100-sxm-80g") + 16 * price("a100-80g");
    const QString text = costText(w);
    QVERIFY2(text.contains(usdText(perHour) + "/h"), qPrintable(text + " vs " + usdText(perHour)));
    // $ per million output tokens at the readout's throughput (its
    // arithmetic: perMillionTokensByHand).
    QVERIFY2(text.contains("/M tok") && !text.contains(QStringLiteral("—")), qPrintable(text));
    const QString tip = w.findChild<QLabel*>("CostReadout")->toolTip();
    QVERIFY2(tip.contains("resources/pricing"), qPrintable(tip));
    // The live run feeds the input tokens and the SLO-meeting finishes.
    QVERIFY2(tip.contains("per million input tokens") && tip.contains("requests meeting the SLO per dollar"),
             qPrintable(tip));
    QVERIFY(w.width() <= size.width());
  }

  void perMillionTokensByHand() {
    // The readout's arithmetic on its own: 3,000 tok/s for 10 s on the sample.
    CostReadout c;
    c.setScenario(sample(kMixed));
    c.record(0, 0, 0);
    c.record(0, 10, 30'000);
    QVERIFY(c.tokensPerS());
    QCOMPARE(*c.tokensPerS(), 3000.0);
    const double perHour = 8 * price("h100-sxm-80g") + 16 * price("a100-80g");
    QCOMPARE(*c.usdPerHour(), perHour);
    QVERIFY(std::abs(*c.usdPerMillionTokens() - perHour / 3600.0 / 3000.0 * 1e6) < 1e-9);
    QCOMPARE(
        c.forms().front(),
        QString("3.0 k tok/s · %1/h · %2/M tok").arg(usdText(perHour)).arg(usdText(perHour / 3600.0 / 3000.0 * 1e6)));
    // Input: 80,000 prompt tokens prefilled over the same 10 s.
    c.record(0, 10.5, 30'000, 80'000);
    QVERIFY(std::abs(*c.inputTokensPerS() - 80'000 / 10.5) < 1e-9);
    QVERIFY(std::abs(*c.usdPerMillionInputTokens() - perHour / 3600.0 / (80'000 / 10.5) * 1e6) < 1e-9);
    QVERIFY(c.toolTip().contains(usdText(perHour / 3600.0 / (80'000 / 10.5) * 1e6) + " per million input tokens"));
    // Output tokens per joule at board power: 700 W an H100, 400 W an A100.
    const double watts = 8 * *gpuBoardPowerW("h100-sxm-80g") + 16 * *gpuBoardPowerW("a100-80g");
    QVERIFY(std::abs(*c.tokensPerJoule() - (30'000 / 10.5) / watts) < 1e-12);
    // Goodput per dollar: two requests within the SLO in the window [0, 10.5].
    c.recordMet(0, 3.0);
    c.recordMet(0, 9.0);
    QVERIFY(std::abs(*c.goodputPerUsd() - 2 / 10.5 * 3600 / perHour) < 1e-9);
    QVERIFY(c.toolTip().contains("requests meeting the SLO per dollar"));
    // The window rolls: only the last 10 simulated seconds count.
    c.record(0, 20, 30'000 + 10 * 1000);
    c.record(0, 30, 30'000 + 20 * 1000);
    QCOMPARE(*c.tokensPerS(), 1000.0);
    QCOMPARE(*c.goodputPerUsd(), 0.0);  // both finished before the window [20, 30]
    // A new run (generation) starts afresh.
    c.record(1, 0, 0);
    c.record(1, 4, 400);
    QCOMPARE(*c.tokensPerS(), 100.0);
  }

  void noPriceIsADash() {
    // h800-80g has no public price: the pool's header says so and the
    // readout shows "—" for $/hour and $/M tokens.
    QVERIFY(!gpuPrice("h800-80g"));
    Scenario s = sample(kMixed);
    s.cluster.pools[0].gpu = "h800-80g";
    MainWindow w;
    QVERIFY(openRun(w, QSize(1280, 800), s, "h800", 10));
    const QString text = costText(w);
    QVERIFY2(text.contains(QStringLiteral("—/h")), qPrintable(text));
    QVERIFY2(!text.contains("$"), qPrintable(text));
    const QString tip = w.findChild<QLabel*>("CostReadout")->toolTip();
    QVERIFY2(tip.contains("h800-80g"), qPrintable(tip));
    const auto& headers = w.clusterView()->poolHeaders();
    QCOMPARE(headers.size(), std::size_t(2));
    QVERIFY2(headers[0].toolTip.contains("No price known for h800-80g"), qPrintable(headers[0].toolTip));
    QVERIFY(poolGroups(s)[0].headerForms().front().contains("no price"));
    // A price in the scenario fills the gap.
    s.cluster.pools[0].price_usd_per_gpu_hour = 2.5;
    CostReadout c;
    c.setScenario(s);
    QCOMPARE(*c.usdPerHour(), 8 * 2.5 + 16 * price("a100-80g"));
  }

  void cascadeStagePoolsAreNamed() {
    // A CascadeInfer stage role ("stage-k") is named as its stage, not as a
    // colocated pool.
    Scenario s = sample(kMixed);
    s.policy.id = "cascade";
    s.cluster.pools[0].role = "stage-1";
    s.cluster.pools[1].role = "stage-2";
    const auto pools = poolGroups(s);
    QVERIFY2(pools[0].headerForms().front().startsWith("stage 1 pool"), qPrintable(pools[0].headerForms().front()));
    QVERIFY2(pools[1].headerForms().front().startsWith("stage 2 pool"), qPrintable(pools[1].headerForms().front()));
  }

  void onePoolLooksAsBefore() {
    // A one-pool cluster: no headers, the same pixels with or without the
    // scenario's (single) pool set.
    const Scenario s = sample("default.json");
    QCOMPARE(poolGroups(s).size(), std::size_t(1));
    SimController c;
    QString err;
    QVERIFY2(c.load(s, &err), qPrintable(err));
    c.runTo(5);
    QVERIFY(c.waitIdle(60000));
    const auto f = c.takeFrame();
    ClusterView plain, pooled;
    pooled.setPools(poolGroups(s));
    for (ClusterView* v : {&plain, &pooled}) {
      v->resize(900, 500);
      v->setFrame(f);
    }
    const QImage a = plain.grab().toImage(), b = pooled.grab().toImage();
    QVERIFY(pooled.poolHeaders().empty());
    QVERIFY(a == b);
    // The mixed sample's pools on a frame of another size fall back to the
    // plain grid rather than mislabel cards.
    ClusterView wrong;
    wrong.setPools(poolGroups(sample(kMixed)));
    wrong.resize(900, 500);
    wrong.setFrame(f);
    (void)wrong.grab();
    if (f->snapshot.instances.size() != 3) QVERIFY(wrong.poolHeaders().empty());
  }
};

QTEST_MAIN(TestPoolView)
#include "test_pool_view.moc"
