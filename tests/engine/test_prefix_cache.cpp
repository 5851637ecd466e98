// Prefix caching (engine/prefix_cache.h, docs/engine.md "Prefix caching"):
// hash-chain keys, LRU eviction, reference counts, the cost of a hit and
// determinism.
#include <map>

#include <gtest/gtest.h>

#include "engine/prefix_cache.h"
#include "engine_test_util.h"

namespace sl::enginetest {
namespace {

PrefixState state(std::int64_t id, std::int32_t input, std::vector<TokenSegment> segs) {
  PrefixState s;
  s.id = id;
  s.input = input;
  s.segments = std::move(segs);
  return s;
}

TEST(PrefixCache, ChainKeysFollowTokenIdentity) {
  // The same tokens split differently give the same keys.
  PrefixState a = state(1, 64, {{7, 0, 64}});
  PrefixState b = state(2, 64, {{7, 0, 20}, {7, 20, 44}});
  extendChain(a, 4, 16);
  extendChain(b, 4, 16);
  EXPECT_EQ(a.chain, b.chain);
  // Mooncake: 512-token ids on 16-token blocks: two prompts sharing their
  // first id share 32 blocks, then part (the chain carries the difference on).
  PrefixState m1 = state(3, 1024, {{100, 0, 512}, {101, 0, 512}});
  PrefixState m2 = state(4, 1024, {{100, 0, 512}, {202, 0, 512}});
  extendChain(m1, 64, 16);
  extendChain(m2, 64, 16);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(m1.chain[k], m2.chain[k]) << k;
  for (int k = 32; k < 64; ++k) EXPECT_NE(m1.chain[k], m2.chain[k]) << k;
  // Unnamed prompt tails and outputs are each request's own.
  PrefixState u1 = state(5, 40, {}), u2 = state(6, 40, {});
  extendChain(u1, 2, 16);
  extendChain(u2, 2, 16);
  EXPECT_NE(u1.chain[0], u2.chain[0]);
  // Extending in steps gives the keys computed at once.
  PrefixState c = state(3, 1024, {{100, 0, 512}, {101, 0, 512}});
  extendChain(c, 5, 16);
  extendChain(c, 64, 16);
  EXPECT_EQ(c.chain, m1.chain);
  // A follow-up turn naming its history matches the blocks of the earlier
  // request's prompt and output.
  PrefixState t1 = state(10, 50, {});
  extendChain(t1, 5, 16);  // 80 tokens: 50 prompt + 30 output
  PrefixState t2 = state(11, 100, {{promptTailSegmentId(10), 0, 50}, {outputSegmentId(10), 0, 30}});
  extendChain(t2, 6, 16);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(t1.chain[k], t2.chain[k]) << k;
}

TEST(PrefixCache, LruEvictsLeastRecentlyFreedFirst) {
  PrefixCache c(0);
  std::int64_t used = 3;  // three private blocks become cached ones
  for (std::uint64_t k : {11u, 12u, 13u}) EXPECT_TRUE(c.registerBlock(k));
  EXPECT_FALSE(c.registerBlock(12));  // a duplicate stays private
  c.release(13, used);  // freed first: evicted first
  c.release(11, used);
  c.release(12, used);
  EXPECT_EQ(used, 0);
  EXPECT_EQ(c.evictableGpu(), 3);
  c.acquire(11, used);  // a hit takes it back out of the LRU
  EXPECT_EQ(used, 1);
  c.reclaim(used, 0, 2);  // room for used (1) + 1 free
  EXPECT_EQ(c.find(13), nullptr);
  EXPECT_NE(c.find(12), nullptr);
  EXPECT_EQ(c.stats().evictions, 1);
  c.reclaim(used + 1, 0, 2);
  EXPECT_EQ(c.find(12), nullptr);
  EXPECT_NE(c.find(11), nullptr);  // referenced: never evicted
}

TEST(PrefixCache, OffloadTierTakesEvictedBlocks) {
  PrefixCache c(1);
  std::int64_t used = 2;
  c.registerBlock(1);
  c.registerBlock(2);
  c.release(1, used);
  c.release(2, used);
  c.reclaim(0, 0, 0);  // both leave the GPU; the CPU tier keeps the newer
  EXPECT_EQ(c.stats().evictions, 2);
  EXPECT_EQ(c.stats().offloaded, 2);
  EXPECT_EQ(c.stats().cpuEvictions, 1);
  EXPECT_EQ(c.find(1), nullptr);
  ASSERT_NE(c.find(2), nullptr);
  EXPECT_EQ(c.find(2)->tier, PrefixCache::Tier::Cpu);
  c.load(2, used);
  EXPECT_EQ(used, 1);
  EXPECT_EQ(c.find(2)->tier, PrefixCache::Tier::Gpu);
  EXPECT_EQ(c.stats().offloadHits, 1);
}

SimConfig cachingConfig(int n = 1, std::int64_t blocks = 200) {
  SimConfig cfg = smallConfig(llama8b(), n, blocks);
  cfg.instance.prefixCaching = true;
  return cfg;
}

RequestSpec shared(std::int64_t id, SimTime at, std::int32_t input, std::int32_t answer, std::uint64_t doc,
                   std::int32_t docLen) {
  RequestSpec s = spec(id, at, input, 0, answer);
  s.segments = {{doc, 0, docLen}};
  return s;
}

TEST(PrefixCache, HitSkipsPrefillButAttentionCounts) {
  // Request 1 shares request 0's 100-token prompt (one document): after 0
  // finished, 1 finds floor(99/16) = 6 blocks (96 tokens) cached and
  // computes the last 4 tokens, attending over the 96.
  Harness h(llama8b(), cachingConfig(), {shared(0, 0, 100, 3, 42, 100), shared(1, 500 * kMs, 100, 3, 42, 100)});
  h.run();
  std::vector<IterRec> it = h.rec.itersOf(0);
  const IterRec* second = nullptr;
  for (const IterRec& x : it)
    if (!x.entries.empty() && x.entries[0].id == 1 && x.entries[0].prefill) second = &x;
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->entries[0].newTokens, 4);
  BatchShape s{};
  s.prefill_seqs = 1;
  s.prefill_tokens = 4;
  s.prefill_attn = 4.0 * (96 + 4 / 2.0);
  EXPECT_EQ(second->end - second->start, h.iterNs(s));
  const PrefixCacheStats st = h.sim->prefixCacheStats();
  EXPECT_EQ(st.promptTokens, 200);
  EXPECT_EQ(st.cachedTokens, 96);
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(h.sim->cachedTokensById(), (std::vector<std::pair<std::int64_t, std::int32_t>>{{0, 0}, {1, 96}}));
  // Everything freed: no block used, the cached ones free (evictable).
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);
  EXPECT_GT(h.sim->instance(0).prefixCache()->evictableGpu(), 0);
}

TEST(PrefixCache, OffloadHitPaysTheHostLinkCopy) {
  // 10 GPU blocks of 16 tokens, a CPU tier of 16. Request 0 (100 tokens of
  // document 42) leaves 6 full blocks cached. Request 2 (128 tokens of
  // another document, 3 output tokens) takes 8 blocks, then 9 to decode:
  // used + cached <= 10 evicts request 0's blocks tail first (5, 4, 3, 2,
  // then 1) into the CPU tier; block 0 stays on GPU. Request 1 repeats
  // request 0's prompt: floor(99/16) = 6 blocks hit, 5 of them loaded back
  // over the host link, so its iteration = compute of 4 new tokens
  // attending over 96 + 5 blocks' bytes / host link.
  SimConfig cfg = cachingConfig(1, 10);
  cfg.instance.prefixCpuBlocks = 16;
  Harness h(llama8b(), cfg,
            {shared(0, 0, 100, 3, 42, 100), shared(2, 200 * kMs, 128, 3, 7, 128), shared(1, 500 * kMs, 100, 3, 42, 100)});
  h.run();
  const std::vector<IterRec> it = h.rec.itersOf(0);
  const IterRec* hit = nullptr;
  for (const IterRec& x : it)
    if (!x.entries.empty() && x.entries[0].id == 1 && x.entries[0].prefill) hit = &x;
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->entries[0].newTokens, 4);
  BatchShape s{};
  s.prefill_seqs = 1;
  s.prefill_tokens = 4;
  s.prefill_attn = 4.0 * (96 + 4 / 2.0);
  const double copy = 5.0 * static_cast<double>(cfg.instance.kvBytesPerBlock);
  EXPECT_EQ(hit->end - hit->start, h.iterNs(s, copy));
  EXPECT_GT(h.iterNs(s, copy), h.iterNs(s));  // the copy really costs time
  const PrefixCacheStats st = h.sim->prefixCacheStats();
  EXPECT_EQ(st.offloadHits, 5);
  // 5 offloaded for request 2; request 1's 7 used blocks then leave room
  // for 3 of request 2's 8 cached blocks: 5 more go to the tier.
  EXPECT_EQ(st.offloaded, 10);
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(st.cachedTokens, 96);
}

TEST(PrefixCache, SharedBlocksCountOnceWhileBothRun) {
  // Two requests with one 160-token document, the second arriving once the
  // first has prefilled: it shares 9 blocks ((160+10-1)/16 = 10 capped at
  // the computed ones) and the instance holds them once.
  Harness h(llama8b(), cachingConfig(), {shared(0, 0, 170, 200, 9, 160), shared(1, 30 * kMs, 170, 200, 9, 160)});
  bool checked = false;
  while (h.sim->step()) {
    const Request* a = h.active(0);
    const Request* b = h.active(1);
    if (!a || !b || b->state != ReqState::Running || !b->prefillDone()) continue;
    const PrefixState* pb = h.sim->prefixStateOf(*b);
    ASSERT_NE(pb, nullptr);
    EXPECT_EQ(pb->shared, 10);  // 160 tokens = 10 full blocks of the document
    EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), a->blocksGpu + b->blocksGpu - pb->shared);
    const PrefixCache::Entry* e = h.sim->instance(0).prefixCache()->find(pb->table[0]);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->refs, 2);
    checked = true;
    break;
  }
  EXPECT_TRUE(checked);
}

TEST(PrefixCache, MigrationLeavesTheSourceCachedCopy) {
  SimConfig cfg = cachingConfig(2);
  Harness h(llama8b(), cfg, {shared(0, 0, 100, 50, 5, 100)});
  bool moved = false;
  h.global->onIterationEndFn = [&](Simulator& sim, int) {
    if (moved) return;
    sim.forEachActive([&](const Request& r) {
      if (r.id == 0 && r.prefillDone() && r.state == ReqState::Running) moved = true;
    });
    if (moved)
      sim.forEachActive([&](const Request& r) {
        if (r.id == 0) sim.migrate(const_cast<Request&>(r), 1);
      });
  };
  h.run();
  ASSERT_TRUE(moved);
  EXPECT_EQ(h.sim->migrations(), 1);
  // The source kept its 6 computed prompt blocks as free cache; nothing used.
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);
  EXPECT_GE(h.sim->instance(0).prefixCache()->evictableGpu(), 6);
  EXPECT_EQ(h.sim->instance(1).gpuBlocksUsed(), 0);
}

/// Every cache entry's reference count equals the number of block-table
/// slots of the instance's requests that point at it, and the instance's
/// used blocks are the private ones plus each referenced entry once.
/// Returns the largest count seen (so a test can tell sharing happened).
int checkRefcounts(const Simulator& sim, int i) {
  std::map<std::uint64_t, int> refs;
  std::int64_t privateBlocks = 0;
  sim.forEachActive([&](const Request& r) {
    if (r.instance != i || r.blocksGpu == 0) return;
    const PrefixState* s = sim.prefixStateOf(r);
    if (!s) return;
    int shared = 0;
    for (std::uint64_t key : s->table)
      if (key != 0) {
        ++refs[key];
        ++shared;
      }
    EXPECT_EQ(shared, s->shared) << "request " << r.id;
    privateBlocks += r.blocksGpu - s->shared;
  });
  int most = 0;
  const PrefixCache* c = sim.instance(i).prefixCache();
  for (const auto& [key, n] : refs) {
    const PrefixCache::Entry* e = c->find(key);
    EXPECT_NE(e, nullptr);
    if (e) {
      EXPECT_EQ(e->refs, n);
    }
    most = std::max(most, n);
  }
  EXPECT_EQ(sim.instance(i).gpuBlocksUsed(), privateBlocks + static_cast<std::int64_t>(refs.size()));
  return most;
}

void refcountsUnderPreemption(bool swap) {
  // Four requests share a 160-token document on an instance of 60 blocks;
  // their decodes outgrow it, so the newest are preempted and come back.
  SimConfig cfg = cachingConfig(1, 60);
  cfg.instance.swapPreemption = swap;
  std::vector<RequestSpec> reqs;
  for (int k = 0; k < 4; ++k) reqs.push_back(shared(k, k * 20 * kMs, 170, 300, 9, 160));
  Harness h(llama8b(), cfg, std::move(reqs));
  int most = 0, sharedAfterPreemption = 0;
  std::int64_t preemptions = 0, steps = 0;
  while (h.sim->step()) {
    ASSERT_LT(++steps, 200'000);
    const int m = checkRefcounts(*h.sim, 0);
    if (::testing::Test::HasFailure()) return;
    most = std::max(most, m);
    if (h.sim->preemptions() > preemptions) {
      preemptions = h.sim->preemptions();
      sharedAfterPreemption = std::max(sharedAfterPreemption, m);
    }
  }
  EXPECT_TRUE(h.sim->done());
  EXPECT_GE(preemptions, 1);
  EXPECT_GE(most, 3);                   // the document was shared by three or more at once
  EXPECT_GE(sharedAfterPreemption, 1);  // survivors still hold it after a preemption
  for (int k = 0; k < 4; ++k) EXPECT_EQ(h.record(k).generated, 300);
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);
}

TEST(PrefixCache, RefcountsExactUnderRecomputePreemption) { refcountsUnderPreemption(false); }
TEST(PrefixCache, RefcountsExactUnderSwapPreemption) { refcountsUnderPreemption(true); }

TEST(PrefixCache, MigrationGivesBackOneReference) {
  // Two requests share a document on instance 0; one migrates: the
  // source's entries drop to one reference (the stayer's), the copy
  // arrives private at the destination.
  Harness h(llama8b(), cachingConfig(2), {shared(0, 0, 170, 200, 9, 160), shared(1, 30 * kMs, 170, 200, 9, 160)});
  h.global->onRoute = [](const Request&) { return 0; };
  bool moved = false;
  int before = 0, after = -1;
  h.global->onIterationEndFn = [&](Simulator& sim, int) {
    if (moved) return;
    const Request* b = nullptr;
    sim.forEachActive([&](const Request& r) {
      if (r.id == 1 && r.state == ReqState::Running && r.prefillDone() && r.instance == 0) b = &r;
    });
    if (!b) return;
    before = checkRefcounts(sim, 0);
    moved = true;
    sim.migrate(const_cast<Request&>(*b), 1);
  };
  std::int64_t steps = 0;
  while (h.sim->step()) {
    ASSERT_LT(++steps, 200'000);
    checkRefcounts(*h.sim, 0);
    checkRefcounts(*h.sim, 1);
    if (after < 0 && h.sim->migrations() == 1) after = checkRefcounts(*h.sim, 0);
    if (::testing::Test::HasFailure()) return;
  }
  ASSERT_TRUE(moved);
  EXPECT_EQ(before, 2);
  EXPECT_EQ(after, 1);
  const Request* none = h.active(1);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(h.record(1).generated, 200);
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);
  EXPECT_EQ(h.sim->instance(1).gpuBlocksUsed(), 0);
}

TEST(PrefixCache, SessionKeySkipsThePrefixEveryRequestShares) {
  // Mooncake-like: every prompt starts with block 0. Keying on it alone
  // would put every request in one session; the key is the shared lead
  // plus the conversation's first block.
  auto blocks = [](std::int64_t id, SimTime at, std::vector<std::uint64_t> ids) {
    RequestSpec s = spec(id, at, static_cast<std::int32_t>(ids.size()) * 32, 0, 4);
    for (std::uint64_t b : ids) s.segments.push_back({b, 0, 32});
    return s;
  };
  Harness h(llama8b(), cachingConfig(),
            {blocks(0, 0, {0, 7}), blocks(1, kMs, {0, 9, 10}), blocks(2, 2 * kMs, {0, 7, 8}),
             blocks(3, 3 * kMs, {0, 9, 11, 12}), blocks(4, 4 * kMs, {0, 5})});
  std::map<std::int64_t, std::uint64_t> key;
  h.global->onArrivalFn = [&](Simulator& sim, Request& r) { key[r.id] = sim.sessionKey(r); };
  h.run();
  ASSERT_EQ(key.size(), 5u);
  EXPECT_EQ(key[0], key[2]);  // conversation 7
  EXPECT_EQ(key[1], key[3]);  // conversation 9
  EXPECT_NE(key[0], key[1]);
  EXPECT_NE(key[4], key[0]);
  EXPECT_NE(key[4], key[1]);
}

TEST(PrefixCache, OffIsUnchangedAndOnIsDeterministic) {
  auto reqs = [] {
    std::vector<RequestSpec> v;
    for (int i = 0; i < 60; ++i)
      v.push_back(shared(i, i * 7 * kMs, 80 + (i * 37) % 300, 5 + (i * 13) % 90, static_cast<std::uint64_t>(i % 3),
                         64 + (i % 3) * 32));
    return v;
  };
  auto run = [&](bool caching) {
    SimConfig cfg = smallConfig(llama8b(), 2, 120);
    cfg.instance.prefixCaching = caching;
    Simulator sim(cfg, llama8b(), std::make_unique<ListWorkload>(reqs()),
                  std::make_unique<RouterPolicy>(RouterKind::PrefixAware), fcfsFactory());
    sim.run();
    return std::make_pair(sim.fingerprint(), sim.prefixCacheStats().cachedTokens);
  };
  const auto on1 = run(true), on2 = run(true), off = run(false);
  EXPECT_EQ(on1, on2);
  EXPECT_NE(on1.first, off.first);
  EXPECT_GT(on1.second, 0);
  EXPECT_EQ(off.second, 0);
}

}  // namespace
}  // namespace sl::enginetest
