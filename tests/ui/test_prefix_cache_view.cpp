// Prefix caching in the GUI (issue 28 item 5): the engine's snapshot of
// each instance's cache, the KV bar's teal cache band (present with caching
// on, absent with it off), the inspector's cache block and a request's
// cached prompt tokens, and the lecture-mode "cache hit" callout.
#include <QImage>
#include <QTest>

#include <algorithm>
#include <map>

#include "engine/simulator.h"
#include "engine/snapshot.h"
#include "run/live_run.h"
#include "scenario/scenario_io.h"
#include "ui/cluster/cluster_view.h"
#include "ui/common/cache_view.h"
#include "ui/common/theme.h"
#include "ui/controller/sim_controller.h"
#include "ui/inspector/inspector_panel.h"
#include "ui/teaching/teaching_callouts.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSamples = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/");

Scenario sample(const QString& name, std::int64_t requests) {
  Scenario s = loadScenarioFile((kSamples + name).toStdString());
  s.workload.requests = requests;
  return s;
}

// A frame of `n` cards, 100 GPU blocks each, 30 used; caching on with
// `freeCached` blocks held only as cache on every card.
std::shared_ptr<LiveFrame> frame(int n, bool caching, std::int64_t freeCached, SimTime now = kNsPerSecond) {
  auto f = std::make_shared<LiveFrame>();
  f->generation = 1;
  f->running = true;
  f->mode = RunMode::Run;
  f->snapshot.now = now;
  for (int i = 0; i < n; ++i) {
    InstanceSnapshot in;
    in.id = i;
    in.gpuBlocks = 100;
    in.gpuBlocksUsed = 30;
    in.cpuBlocks = 100;
    in.queues.push_back({"waiting", {}});
    if (caching) {
      in.cache.on = true;
      in.cache.gpuFreeBlocks = freeCached;
      in.cache.gpuBlocks = freeCached + 10;
      in.cache.promptTokens = 4000;
      in.cache.cachedTokens = 1000;
      in.cache.hits = 2;
    }
    f->snapshot.instances.push_back(in);
  }
  return f;
}

// Pixels of exactly `c` in `r` of `img`, and the most on one row.
struct Count {
  int total = 0, bestRow = 0, bestRowY = -1;
};
Count countColour(const QImage& img, const QRect& r, const QColor& c) {
  Count out;
  const QRgb want = c.rgb();
  for (int y = std::max(0, r.top()); y <= std::min(img.height() - 1, r.bottom()); ++y) {
    int row = 0;
    for (int x = std::max(0, r.left()); x <= std::min(img.width() - 1, r.right()); ++x)
      row += (img.pixel(x, y) & 0xFFFFFF) == (want & 0xFFFFFF);
    out.total += row;
    if (row > out.bestRow) {
      out.bestRow = row;
      out.bestRowY = y;
    }
  }
  return out;
}

int countOnRow(const QImage& img, const QRect& r, int y, const QColor& c) {
  int n = 0;
  for (int x = r.left(); x <= r.right(); ++x) n += (img.pixel(x, y) & 0xFFFFFF) == (c.rgb() & 0xFFFFFF);
  return n;
}

}  // namespace

class TestPrefixCacheView : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_prefix_cache_view");
  }

  // The engine's snapshot of each cache: zero when caching is off; on, its
  // counters add up to the cluster totals summary.json reports, and the
  // free cached blocks fit in the memory nobody else holds.
  void snapshotCarriesTheCache() {
    {
      auto live = prepareLiveRun(sample("pascal-baseline-rr.json", 200));
      live->sim().run(20 * kNsPerSecond);
      Snapshot s;
      live->sim().fillSnapshot(s);
      for (const InstanceSnapshot& in : s.instances) {
        QVERIFY(!in.cache.on);
        QCOMPARE(in.cache.gpuFreeBlocks, std::int64_t{0});
        QCOMPARE(in.cache.hits, std::int64_t{0});
      }
    }
    auto live = prepareLiveRun(sample("prefix-system-prompt.json", 600));
    Snapshot s;
    bool sawFree = false, sawCpu = false;
    for (int t = 10; t <= 60; t += 10) {
      live->sim().run(t * kNsPerSecond);
      live->sim().fillSnapshot(s);
      const PrefixCacheStats tot = live->sim().prefixCacheStats();
      std::int64_t prompt = 0, cached = 0, hits = 0, evictions = 0, offloadHits = 0;
      for (const InstanceSnapshot& in : s.instances) {
        QVERIFY(in.cache.on);
        QVERIFY(in.cache.gpuFreeBlocks >= 0 && in.cache.gpuFreeBlocks <= in.cache.gpuBlocks);
        QVERIFY(in.gpuBlocksUsed + in.gpuBlocksReserved + in.cache.gpuFreeBlocks <= in.gpuBlocks);
        QVERIFY(in.cache.cpuCapacity > 0);  // the sample has an 8 GB tier
        QVERIFY(in.cache.cpuBlocks <= in.cache.cpuCapacity);
        sawFree = sawFree || in.cache.gpuFreeBlocks > 0;
        sawCpu = sawCpu || in.cache.cpuBlocks > 0;
        prompt += in.cache.promptTokens;
        cached += in.cache.cachedTokens;
        hits += in.cache.hits;
        evictions += in.cache.evictions;
        offloadHits += in.cache.offloadHits;
      }
      QCOMPARE(prompt, tot.promptTokens);
      QCOMPARE(cached, tot.cachedTokens);
      QCOMPARE(hits, tot.hits);
      QCOMPARE(evictions, tot.evictions);
      QCOMPARE(offloadHits, tot.offloadHits);
    }
    QVERIFY(sawFree);  // the band has something to show on this sample
    QVERIFY(s.instances.front().cache.hits > 0);
    Q_UNUSED(sawCpu);
  }

  // The teal band: next to the used (blue) blocks, as wide as the free
  // cached blocks' share; the legend names it and the tooltip explains it.
  // With caching off not one teal pixel, on full and compact cards.
  void bandAppearsOnlyWithCaching() {
    for (int n : {2, 48}) {  // full cards, then compact ones
      ClusterView on;
      on.resize(900, 600);
      on.setFrame(frame(n, true, 40));
      const QImage img = on.grab().toImage();
      if (qEnvironmentVariableIsSet("CACHE_VIEW_DUMP")) img.save(QString("/tmp/cg-band-%1.png").arg(n));
      QCOMPARE(on.compact(), n > 2);
      const QRect card = on.cardRect(0);
      const Count teal = countColour(img, card, theme::kCachedBar);
      QVERIFY2(teal.total > 0, "no cache band on a card with free cached blocks");
      // Its widest row is the KV bar: the band is 40% of the bar (blue used
      // + teal + grey track; a pixel or two go to antialiased corners), and
      // starts where the used blocks end.
      const int y = teal.bestRowY;
      const int blue = countOnRow(img, card, y, theme::kGpuBar);
      const int track = countOnRow(img, card, y, theme::kTrack);
      QVERIFY2(blue > 0 && track > 0, "the band is not on the KV bar's row");
      const double want = 0.4 * (blue + teal.bestRow + track);
      QVERIFY2(std::abs(teal.bestRow - want) <= 4,
               qPrintable(QString("n %1: teal %2 px, blue %3, track %4").arg(n).arg(teal.bestRow).arg(blue).arg(track)));
      int lastBlue = -1, firstTeal = -1;
      for (int x = card.left(); x <= card.right(); ++x) {
        const QRgb px = img.pixel(x, y) & 0xFFFFFF;
        if (px == (theme::kGpuBar.rgb() & 0xFFFFFF)) lastBlue = x;
        if (firstTeal < 0 && px == (theme::kCachedBar.rgb() & 0xFFFFFF)) firstTeal = x;
      }
      QVERIFY2(firstTeal > lastBlue && firstTeal - lastBlue <= 3,
               qPrintable(QString("blue ends at %1, teal starts at %2").arg(lastBlue).arg(firstTeal)));

      ClusterView off;
      off.resize(900, 600);
      off.setFrame(frame(n, false, 40));
      const QImage plain = off.grab().toImage();
      QCOMPARE(countColour(plain, plain.rect(), theme::kCachedBar).total, 0);

      // Caching on with nothing free-able: no band either, and the card
      // looks as it does with caching off.
      ClusterView empty;
      empty.resize(900, 600);
      empty.setFrame(frame(n, true, 0));
      const QImage e = empty.grab().toImage();
      QCOMPARE(countColour(e, e.rect().adjusted(0, 0, 0, -40), theme::kCachedBar).total, 0);  // the legend has a swatch
      QCOMPARE(e.copy(on.cardRect(0)), plain.copy(off.cardRect(0)));
    }
    // The tooltip over the KV bar explains the band with the card's numbers.
    ClusterView v;
    v.resize(900, 600);
    v.setFrame(frame(2, true, 40));
    v.grab();
    QString tip;
    const QRect info = v.infoRect(0);
    for (int y = info.top(); y <= info.bottom() && tip.isEmpty(); ++y) {
      const QString t = v.toolTipAt(QPoint(info.center().x(), y));
      if (t.startsWith("GPU KV cache")) tip = t;
    }
    QVERIFY2(tip.contains("Teal band: 40 of 100 blocks held only as prefix cache"), qPrintable(tip));
    QVERIFY2(tip.contains("hit rate so far 25.0%"), qPrintable(tip));
    ClusterView offTip;
    offTip.resize(900, 600);
    offTip.setFrame(frame(2, false, 40));
    offTip.grab();
    for (int y = info.top(); y <= info.bottom(); ++y)
      QVERIFY(!offTip.toolTipAt(QPoint(info.center().x(), y)).contains("prefix cache"));
  }

  // With a CPU tier the CPU bar spans swap + tier, the tier's blocks in teal.
  void cpuTierBandOnTheCpuBar() {
    auto f = frame(2, true, 0);
    for (InstanceSnapshot& in : f->snapshot.instances) {
      in.cache.cpuCapacity = 100;  // host memory: 100 swap + 100 tier blocks
      in.cache.cpuBlocks = 50;
      in.cpuBlocksUsed = 20;
    }
    ClusterView v;
    v.resize(900, 600);
    v.setFrame(f);
    const QImage img = v.grab().toImage();
    const Count teal = countColour(img, v.cardRect(0), theme::kCachedBar);
    QVERIFY(teal.total > 0);
    const int orange = countOnRow(img, v.cardRect(0), teal.bestRowY, theme::kCpuBar);
    QVERIFY(orange > 0);
    QVERIFY2(std::abs(static_cast<double>(teal.bestRow) / orange - 50.0 / 20.0) < 0.3,
             qPrintable(QString("teal %1 orange %2").arg(teal.bestRow).arg(orange)));
    QString tip;
    const QRect info = v.infoRect(0);
    for (int y = info.top(); y <= info.bottom() && tip.isEmpty(); ++y) {
      const QString t = v.toolTipAt(QPoint(info.center().x(), y));
      if (t.startsWith("Host memory")) tip = t;
    }
    QVERIFY2(tip.contains("CPU swap space 20 of 100 blocks used") && tip.contains("CPU tier (teal band) 50 of 100"),
             qPrintable(tip));
    // A compact card's tooltip: swap as a share of swap space, and the tier.
    auto many = frame(48, true, 0);
    for (InstanceSnapshot& in : many->snapshot.instances) {
      in.cache.cpuCapacity = 100;
      in.cache.cpuBlocks = 50;
      in.cpuBlocksUsed = 20;
    }
    ClusterView compact;
    compact.resize(900, 600);
    compact.setFrame(many);
    compact.grab();
    QVERIFY(compact.compact());
    const QString ctip = compact.toolTipAt(compact.cardRect(3).center());
    QVERIFY2(ctip.contains("CPU swap 20 of 100 blocks (20%)") && ctip.contains("CPU tier (teal band) 50 of 100"),
             qPrintable(ctip));
  }

  // Lecture mode: a card's hit count growing between two frames becomes
  // "cache hit: N prompt tokens skipped"; more merge into one callout.
  void cacheHitBecomesACallout() {
    auto withHits = [](SimTime t, std::int64_t hits, std::int64_t tokens) {
      auto f = frame(3, true, 10, t);
      f->snapshot.instances[2].cache.hits = hits;
      f->snapshot.instances[2].cache.cachedTokens = tokens;
      return f;
    };
    ClusterView view;
    view.resize(900, 600);
    view.setLecture(true);
    view.setFrame(withHits(kNsPerSecond, 2, 1000));
    QVERIFY(view.callouts().empty());  // the first frame is the baseline
    view.setFrame(withHits(2 * kNsPerSecond, 2, 1000));
    QVERIFY(view.callouts().empty());  // no new hit
    view.setFrame(withHits(3 * kNsPerSecond, 3, 4100));
    QCOMPARE(view.callouts().items().size(), std::size_t{1});
    const Callout& c = view.callouts().items()[0];
    QCOMPARE(c.instance, 2);
    QCOMPARE(c.kind, Callout::Kind::CacheHit);
    QCOMPARE(c.caption(), QString("cache hit: 3.1k prompt tokens skipped"));
    view.setFrame(withHits(4 * kNsPerSecond, 5, 6100));  // merged, counts and tokens summed
    QCOMPARE(view.callouts().items().size(), std::size_t{1});
    QCOMPARE(view.callouts().items()[0].caption(), QString("3 cache hits: 5.1k prompt tokens skipped"));
    view.grab();
    QCOMPARE(view.calloutRects().size(), std::size_t{1});  // drawn in the lane

    // A jump of the simulated clock (Run to t) longer than a callout's
    // sim-age limit: those hits are not called out; the next ones are.
    view.setFrame(withHits(20 * kNsPerSecond, 40, 90000));
    QCOMPARE(view.callouts().items().size(), std::size_t{1});
    QCOMPARE(view.callouts().items()[0].count, 3);
    view.setFrame(withHits(21 * kNsPerSecond, 41, 92048));
    QCOMPARE(view.callouts().items()[0].caption(), QString("4 cache hits: 7.1k prompt tokens skipped"));

    ClusterView quiet;  // not in lecture mode: none
    quiet.resize(900, 600);
    quiet.setFrame(withHits(kNsPerSecond, 2, 1000));
    quiet.setFrame(withHits(2 * kNsPerSecond, 9, 9000));
    QVERIFY(quiet.callouts().empty());

    QCOMPARE(cacheview::tokenCount(512), QString("512"));
    QCOMPARE(cacheview::tokenCount(12345), QString("12k"));
    QCOMPARE(cacheview::tokenCount(1'450'000), QString("1.4M"));
  }

  // A real prefix run through the worker, lecture mode on: hits are called
  // out; the inspector's instance page shows the snapshot's cache numbers
  // and a request's page its cached prompt tokens, as the engine counted
  // them (the same scenario run alone: requests.csv's cached_tokens).
  void realRunInspectorAndCallout() {
    const Scenario sc = sample("prefix-system-prompt.json", 400);
    auto alone = prepareLiveRun(sc);
    alone->sim().run();
    std::map<std::int64_t, std::int32_t> engine;
    for (const auto& [id, n] : alone->sim().cachedTokensById()) engine[id] = n;
    QVERIFY(std::any_of(engine.begin(), engine.end(), [](const auto& e) { return e.second > 0; }));

    SimController c;
    QString err;
    QVERIFY2(c.load(sc, &err), qPrintable(err));
    ClusterView view;
    view.resize(1000, 700);
    view.setLecture(true);
    view.setFrame(c.takeFrame());
    bool calledOut = false;
    for (int t = 2; t <= 30; t += 2) {
      c.runTo(t);
      QVERIFY(c.waitIdle(60000));
      QTest::qWait(20);
      view.setFrame(c.takeFrame());
      for (const Callout& co : view.callouts().items())
        calledOut = calledOut || (co.kind == Callout::Kind::CacheHit && co.caption().contains("prompt tokens skipped"));
    }
    QVERIFY(calledOut);

    InspectorPanel ins(&c);
    const Snapshot& s = c.latest()->snapshot;
    const PrefixCacheSnapshot& cache = s.instances[0].cache;
    QVERIFY(cache.on && cache.promptTokens > 0);
    ins.showInstance(0);
    const QString html = ins.cacheText();
    QVERIFY2(html.contains(cacheview::hitRateText(cache)), qPrintable(html));
    QVERIFY2(html.contains(QString("%1 / %2").arg(cacheview::tokenCount(cache.cachedTokens), cacheview::tokenCount(cache.promptTokens))),
             qPrintable(html));
    QVERIFY2(html.contains(QString("<b>%1 blocks</b>").arg(cache.gpuBlocks)), qPrintable(html));
    QVERIFY2(html.contains(QString("<b>%1</b>").arg(cache.gpuFreeBlocks)), qPrintable(html));
    QVERIFY2(html.contains(QString("%1 / %2").arg(cache.cpuBlocks).arg(cache.cpuCapacity)), qPrintable(html));

    int checked = 0, hit = 0;
    for (const auto& [id, n] : engine) {
      const auto t = c.timelines().request(id);
      if (!t || !t->finished) continue;
      QCOMPARE(t->cachedTokens, n);
      ins.showRequest(id);
      QVERIFY2(ins.metricsText().contains(QString("cached prompt")) &&
                   ins.metricsText().contains(QString("%1 of %2 tokens").arg(n).arg(t->input)),
               qPrintable(ins.metricsText()));
      ++checked;
      hit += n > 0;
    }
    QVERIFY(checked > 20);
    QVERIFY(hit > 0);

    // Caching off: no cache block, no cached-prompt row.
    SimController plain;
    QVERIFY2(plain.load(sample("pascal-baseline-rr.json", 200), &err), qPrintable(err));
    plain.runTo(20);
    QVERIFY(plain.waitIdle(60000));
    QTest::qWait(20);
    InspectorPanel pins(&plain);
    pins.showInstance(0);
    QVERIFY(pins.cacheText().isEmpty());
    for (std::int64_t id = 0; id < 50; ++id)
      if (auto t = plain.timelines().request(id); t && t->finished) {
        QCOMPARE(t->cachedTokens, -1);
        pins.showRequest(id);
        QVERIFY(!pins.metricsText().contains("cached prompt"));
        break;
      }
  }
};

QTEST_MAIN(TestPrefixCacheView)
#include "test_prefix_cache_view.moc"
