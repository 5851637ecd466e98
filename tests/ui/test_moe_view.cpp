// MoE instances in the GUI (issue 47 item 4): the card's layout line and
// per-rank heat strip (ui/cluster/moe_strip.h) follow the engine's
// snapshots (cells = rankPairs / mean, coloured by the strip's scale, the
// busiest rank outlined), the inspector's MoE block (ui/inspector/moe_split.h)
// gives the snapshot's split in ms, and a dense model shows neither.
#include <QImage>
#include <QRegularExpression>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "scenario/scenario_io.h"
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/moe_strip.h"
#include "ui/common/theme.h"
#include "ui/controller/sim_controller.h"
#include "ui/inspector/inspector_panel.h"
#include "ui/inspector/moe_split.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSamples = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/");

Scenario sample(const QString& name, std::int64_t requests) {
  Scenario s = loadScenarioFile((kSamples + name).toStdString());
  s.workload.requests = requests;
  return s;
}

// Runs `c` to `seconds` in `frames` pulls, each handed to `view` as the main
// window does (history first, then the frame).
void runInFrames(SimController& c, ClusterView& view, double seconds, int frames) {
  for (int k = 1; k <= frames; ++k) {
    c.runTo(seconds * k / frames);
    QVERIFY(c.waitIdle(120000));
    QTest::qWait(10);
    const auto f = c.takeFrame();
    moestrip::record(&view, *f, c.scenario());
    view.setFrame(f);
  }
}

// Warm minus cool: > 0 for the strip's warm side, < 0 for its cold side.
int heat(QRgb px) { return qRed(px) - qBlue(px); }

}  // namespace

class TestMoeView : public QObject {
  Q_OBJECT
private slots:
  void layoutLineOfTheSample() {
    Scenario s = sample("moe-qwen3-235b-ep8.json", 10);
    QCOMPARE(moestrip::layoutForms(s).front(), QString("EP8 · DP attn · zipf 0.8"));
    s.cluster.ep_redundant = 16;  // EPLB implied by the replicas
    const QStringList forms = moestrip::layoutForms(s);
    QCOMPARE(forms.size(), 3);
    QCOMPARE(forms.front(), QString("EP8 · DP attn · zipf 0.8 · EPLB +16"));
    QCOMPARE(forms.back(), QString("EP8 DP z0.8 +16"));
    Scenario tp = s;
    tp.cluster.ep = 4;
    tp.cluster.attention_dp = false;
    tp.cluster.ep_redundant = 0;
    tp.cluster.moe_routing.kind = "balanced";
    QCOMPARE(moestrip::layoutForms(tp).front(), QString("EP4 · TP attn · balanced"));
  }

  void colourScale() {
    // Monotone heat through the mean; the mean itself neither warm nor cold.
    int last = heat(moestrip::heatColor(0.3).rgb());
    for (double r = 0.4; r <= 2.5; r += 0.1) {
      const int h = heat(moestrip::heatColor(r).rgb());
      QVERIFY2(h >= last, qPrintable(QString("ratio %1: %2 after %3").arg(r).arg(h).arg(last)));
      last = h;
    }
    QVERIFY(heat(moestrip::heatColor(1.5).rgb()) > heat(moestrip::heatColor(1.0).rgb()) + 100);
    QVERIFY(heat(moestrip::heatColor(0.6).rgb()) < 0);
  }

  // The real controller on the MoE sample: a few hundred engine steps over
  // twelve frames; the strip's newest row is the latest snapshot's loads.
  // With EPLB's 16 replicas the expected loads are nearly even; without
  // them (contiguous placement) zipf routing makes hot ranks, and the
  // strip's colours must show which.
  void stripFollowsTheSnapshots_data() {
    QTest::addColumn<int>("redundant");
    QTest::newRow("eplb+16") << 16;
    QTest::newRow("contiguous") << 0;
  }
  void stripFollowsTheSnapshots() {
    QFETCH(int, redundant);
    Scenario sc = sample("moe-qwen3-235b-ep8.json", 400);
    sc.cluster.ep_redundant = redundant;
    SimController c;
    QString err;
    QVERIFY2(c.load(sc, &err), qPrintable(err));
    ClusterView view;
    view.resize(1000, 560);
    runInFrames(c, view, 12.0, 12);
    const auto f = c.latest();
    QVERIFY(f->snapshot.finished > 0);
    const QImage img = view.grab().toImage();
    img.save(QString(SERVELAB_TEST_OUT "/moe-strip-%1.png").arg(QTest::currentDataTag()));
    const moestrip::MoeHistory* h = moestrip::history(&view);
    QVERIFY(h);
    const QString layout = redundant ? "EP8 · DP attn · zipf 0.8 · EPLB +16" : "EP8 · DP attn · zipf 0.8";
    QCOMPARE(h->layout().front(), layout);
    for (int i = 0; i < static_cast<int>(f->snapshot.instances.size()); ++i) {
      const MoeStepSnapshot& m = f->snapshot.instances[static_cast<std::size_t>(i)].moe;
      QCOMPARE(m.rankPairs.size(), std::size_t{8});
      QVERIFY(m.tokens > 0);
      const moestrip::InstanceRows* rows = h->rows(i);
      QVERIFY(rows);
      QCOMPARE(static_cast<int>(rows->ratios.size()), moestrip::kRows);  // more frames than rows: full
      // Steps differ (the batch changes), so the rows do too.
      QVERIFY(std::any_of(rows->ratios.begin(), rows->ratios.end(),
                          [&](const std::vector<double>& r) { return r != rows->ratios.back(); }));
      const double mean = std::accumulate(m.rankPairs.begin(), m.rankPairs.end(), 0.0) / 8.0;
      const std::vector<double>& newest = rows->ratios.back();
      for (int r = 0; r < 8; ++r)
        QVERIFY2(std::abs(newest[static_cast<std::size_t>(r)] - m.rankPairs[static_cast<std::size_t>(r)] / mean) < 1e-12,
                 qPrintable(QString("instance %1 rank %2").arg(i).arg(r)));
      QVERIFY(std::abs(rows->straggler - m.stragglerPairs / mean) < 1e-12);

      // Drawn: each cell of the newest row in its ratio's colour, the
      // busiest rank outlined.
      QVERIFY(!h->stripRect(i).isNull());
      QVERIFY(view.cardRect(i).contains(h->stripRect(i)));
      const int hot = static_cast<int>(std::max_element(newest.begin(), newest.end()) - newest.begin());
      const int cold = static_cast<int>(std::min_element(newest.begin(), newest.end()) - newest.begin());
      QVERIFY(hot != cold);
      for (int r = 0; r < 8; ++r) {
        const QRect cell = h->cellRect(i, moestrip::kRows - 1, r);
        QVERIFY(!cell.isEmpty());
        QCOMPARE(img.pixel(cell.center()) & 0xFFFFFF,
                 moestrip::heatColor(newest[static_cast<std::size_t>(r)]).rgb() & 0xFFFFFF);
      }
      const QRect hotCell = h->cellRect(i, moestrip::kRows - 1, hot);
      const QRect coldCell = h->cellRect(i, moestrip::kRows - 1, cold);
      QCOMPARE(img.pixel(hotCell.topLeft()) & 0xFFFFFF, theme::kText.rgb() & 0xFFFFFF);
      QVERIFY((img.pixel(coldCell.topLeft()) & 0xFFFFFF) != (theme::kText.rgb() & 0xFFFFFF));
      if (!redundant) {
        // Hot ranks: well apart, and the hot one drawn warmer than the cold one.
        QVERIFY2(newest[static_cast<std::size_t>(hot)] - newest[static_cast<std::size_t>(cold)] > 0.2,
                 qPrintable(QString("hot %1 cold %2").arg(newest[hot]).arg(newest[cold])));
        QVERIFY2(heat(img.pixel(hotCell.center())) > heat(img.pixel(coldCell.center())) + 50,
                 qPrintable(QString("hot %1 cold %2").arg(newest[hot]).arg(newest[cold])));
      }
      // Older rows are drawn from the history, oldest at the top.
      const QRect oldest = h->cellRect(i, 0, cold);
      QCOMPARE(img.pixel(oldest.center()) & 0xFFFFFF,
               moestrip::heatColor(rows->ratios.front()[static_cast<std::size_t>(cold)]).rgb() & 0xFFFFFF);
      // The strip leaves the queues room, above them, and explains itself on hover.
      for (const QRect& q : view.queueRects())
        if (view.cardRect(i).contains(q)) QVERIFY(q.top() > h->stripRect(i).bottom());
      QVERIFY(view.toolTipAt(coldCell.center()).startsWith("Expert parallelism: " + layout));
    }

    // A 1024×768 window's cluster area (about 680×300): still the full strip.
    view.resize(680, 300);
    view.grab();
    for (int i = 0; i < 2; ++i) {
      QVERIFY(h->stripRect(i).height() >= moestrip::kRows * 2);
      QVERIFY(!h->cellRect(i, 0, 0).isEmpty());
    }

    // The inspector's MoE block: the latest snapshot's split, in ms.
    InspectorPanel panel(&c);
    panel.showInstance(1);
    const auto* label = panel.findChild<moesplit::MoeSplitLabel*>();
    QVERIFY(label && !label->isHidden());
    const QString text = label->text();
    const MoeStepSnapshot& m = c.latest()->snapshot.instances[1].moe;
    const std::pair<QString, double> want[] = {{"attention", m.attentionS}, {"experts", m.expertS},
                                               {"all-to-all", m.allToAllS}, {"all-reduce", m.commS},
                                               {"other", m.otherS}};
    const double total = m.attentionS + m.expertS + m.allToAllS + m.commS + m.otherS;
    QVERIFY(m.expertS > 0 && m.attentionS > 0 && m.allToAllS > 0);
    for (const auto& [name, seconds] : want) {
      const QRegularExpression re(QRegularExpression::escape(name) +
                                  "</td><td align='right'>&nbsp;&nbsp;(-?[0-9.]+) ms</td><td align='right'>&nbsp;&nbsp;(-?[0-9.]+)%");
      const QRegularExpressionMatch mm = re.match(text);
      QVERIFY2(mm.hasMatch(), qPrintable(name + " in " + text));
      QVERIFY2(std::abs(mm.captured(1).toDouble() - seconds * 1e3) <= 0.005 + 1e-9,
               qPrintable(QString("%1: %2 ms shown, %3 ms").arg(name, mm.captured(1)).arg(seconds * 1e3)));
      QVERIFY(std::abs(mm.captured(2).toDouble() - 100.0 * seconds / total) <= 0.05 + 1e-9);
    }
    QVERIFY2(text.contains(QString("%1 tokens in the step").arg(QString::number(m.tokens, 'f', 0))), qPrintable(text));
    QVERIFY2(text.contains(QString("%1 experts touched").arg(QString::number(m.expertsTouched, 'f', 1))), qPrintable(text));
    QVERIFY(text.contains(layout));
  }

  // A dense model: no rank loads in the snapshot, no strip, no MoE block.
  void denseShowsNoStrip() {
    SimController c;
    QString err;
    QVERIFY2(c.load(sample("default.json", 200), &err), qPrintable(err));
    ClusterView view;
    view.resize(1000, 560);
    runInFrames(c, view, 6.0, 4);
    const auto f = c.latest();
    QVERIFY(f->snapshot.finished > 0);
    view.grab();
    const moestrip::MoeHistory* h = moestrip::history(&view);
    QVERIFY(h);  // fed, with nothing to keep
    for (int i = 0; i < static_cast<int>(f->snapshot.instances.size()); ++i) {
      QVERIFY(f->snapshot.instances[static_cast<std::size_t>(i)].moe.rankPairs.empty());
      QVERIFY(!h->rows(i));
      QVERIFY(h->stripRect(i).isNull());
      const QRect card = view.cardRect(i);
      for (int y = card.top(); y <= card.bottom(); y += 2)
        QVERIFY(!view.toolTipAt(QPoint(card.center().x(), y)).startsWith("Expert parallelism"));
    }
    InspectorPanel panel(&c);
    panel.showInstance(0);
    const auto* label = panel.findChild<moesplit::MoeSplitLabel*>();
    QVERIFY(label && label->isHidden() && label->text().isEmpty());
  }
};

QTEST_MAIN(TestMoeView)
#include "test_moe_view.moc"
