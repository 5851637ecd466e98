// KV accounting: admission with the watermark, block-by-block growth, freeing
// at finish, swap preemption (time added to the iteration), recompute
// fallback, and the preemption counters of the request record.
#include <gtest/gtest.h>

#include "engine_test_util.h"

namespace sl::enginetest {
namespace {

TEST(Kv, AdmissionNeedsPromptBlocksPlusWatermark) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 10, 4);
  c.instance.watermarkBlocks = 2;
  // A: 7 blocks. B: 2 blocks, but 10 - 7 - 2 < watermark until A finishes.
  Harness h(cost, c, {spec(0, 0, 28, 0, 3), spec(1, 0, 8, 0, 1)});
  h.run();
  const auto its = h.rec.itersOf(0);
  ASSERT_EQ(its.size(), 4u);
  EXPECT_EQ(its[0].entries, (std::vector<EntryRec>{{0, 28, true, 7}}));
  EXPECT_EQ(its[0].gpuUsed, 7);
  EXPECT_EQ(its[1].entries, (std::vector<EntryRec>{{0, 1, false, 8}}));  // L = 29 crosses into block 8
  EXPECT_EQ(its[2].entries, (std::vector<EntryRec>{{0, 1, false, 8}}));
  EXPECT_EQ(its[3].entries, (std::vector<EntryRec>{{1, 8, true, 2}}));
  EXPECT_EQ(its[3].gpuUsed, 2);
  EXPECT_EQ(h.record(1).queueing, its[2].end);
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);
}

TEST(Kv, WithoutWatermarkBothAreAdmittedTogether) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 10, 4);
  Harness h(cost, c, {spec(0, 0, 28, 0, 3), spec(1, 0, 8, 0, 1)});
  h.run();
  const auto its = h.rec.itersOf(0);
  ASSERT_GE(its.size(), 1u);
  EXPECT_EQ(its[0].entries, (std::vector<EntryRec>{{0, 28, true, 7}, {1, 8, true, 2}}));
  EXPECT_EQ(its[0].gpuUsed, 9);
}

TEST(Kv, RequestThatCanNeverFitIsAbortedAtArrival) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 10, 4);
  c.instance.watermarkBlocks = 1;
  // blocks(37) + watermark 1 = 11 > 10: no empty instance could admit it.
  Harness h(cost, c, {spec(0, 0, 37, 0, 1), spec(1, 0, 8, 0, 1)});
  h.run();
  EXPECT_EQ(h.sim->aborted(), 1);
  EXPECT_EQ(h.sim->finishedCount(), 1);
  EXPECT_EQ(h.sim->records()[0].id, 1);
  EXPECT_EQ(h.sim->arrived(), 2);
  const auto ev = h.rec.eventsOf(0);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].e, RequestEvent::Arrived);
  EXPECT_EQ(ev[1].e, RequestEvent::Aborted);
}

TEST(Kv, PromptThatExactlyFillsTheCacheIsAdmitted) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 10, 4);
  c.instance.watermarkBlocks = 1;
  // blocks(36) + watermark 1 = 10 <= 10: admitted; its prefill emits its only token.
  Harness h(cost, c, {spec(0, 0, 36, 0, 1)});
  h.run();
  EXPECT_EQ(h.sim->aborted(), 0);
  ASSERT_EQ(h.sim->finishedCount(), 1);
  EXPECT_EQ(h.sim->records()[0].generated, 1);
}

TEST(Kv, BlocksGrowOneAtATimeOnBlockBoundaries) {
  const CostModel& cost = llama8b();
  Harness h(cost, smallConfig(cost, 1, 64, 4), {spec(0, 0, 6, 0, 8)});
  h.run();
  const auto its = h.rec.itersOf(0);
  ASSERT_EQ(its.size(), 8u);
  // Prefill of 6 tokens: 2 blocks. Decodes write slots 7..13.
  const std::vector<std::int32_t> want = {2, 2, 2, 3, 3, 3, 3, 4};
  for (std::size_t i = 0; i < its.size(); ++i) {
    ASSERT_EQ(its[i].entries.size(), 1u);
    EXPECT_EQ(its[i].entries[0].blocksGpu, want[i]) << i;
    EXPECT_EQ(its[i].gpuUsed, want[i]) << i;
  }
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);  // freed at finish
  EXPECT_EQ(h.sim->instance(0).gpuBlocksReserved(), 0);
}

TEST(Kv, BlocksFreedAtTheFinishingIterationEnd) {
  // A short request frees its blocks at its last iteration's end; the next
  // iteration of the long one sees only its own.
  const CostModel& cost = llama8b();
  Harness h(cost, smallConfig(cost, 1, 64, 4), {spec(0, 0, 8, 0, 4), spec(1, 0, 12, 0, 2)});
  h.run();
  const auto its = h.rec.itersOf(0);
  ASSERT_EQ(its.size(), 4u);
  EXPECT_EQ(its[0].gpuUsed, 2 + 3);
  EXPECT_EQ(its[1].gpuUsed, 3 + 4);  // L = 9 and 13 cross boundaries
  EXPECT_EQ(its[2].gpuUsed, 3);      // request 1 finished at the end of iteration 2
  EXPECT_EQ(its[3].gpuUsed, 3);
}

// A request alone on its instance that outgrows the whole KV cache preempts
// itself (swap or recompute) and can then never run again: it is aborted
// (it used to stay queued forever and block the instance).
class OutgrowsCapacity : public ::testing::TestWithParam<bool> {};

TEST_P(OutgrowsCapacity, IsAbortedAndTheInstanceCarriesOn) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 4, 4);  // 16 tokens
  c.instance.swapPreemption = GetParam();
  Harness h(cost, c, {spec(0, 0, 8, 0, 20), spec(1, 0, 4, 0, 2)});
  h.run();
  EXPECT_EQ(h.sim->aborted(), 1);
  ASSERT_EQ(h.sim->finishedCount(), 1);
  EXPECT_EQ(h.sim->records()[0].id, 1);
  EXPECT_EQ(h.sim->inFlight(), 0);
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);
  EXPECT_EQ(h.sim->instance(0).cpuBlocksUsed(), 0);
  std::vector<RequestEvent> kinds;
  for (const auto& e : h.rec.eventsOf(0)) kinds.push_back(e.e);
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.back(), RequestEvent::Aborted);
}

INSTANTIATE_TEST_SUITE_P(Kv, OutgrowsCapacity, ::testing::Values(true, false),
                         [](const auto& info) { return std::string(info.param ? "Swap" : "Recompute"); });

TEST(Kv, AbortFreesMemoryForWaitingIncomingCopies) {
  // Instance 1 (5 blocks of 16) runs request 1, which outgrows it and is
  // aborted; request 0's copy, waiting for 3 of those blocks, then starts.
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 5);
  Harness h(cost, c, {spec(0, 0, 32, 4, 4), spec(1, 0, 40, 0, 60)});
  h.global->onRoute = [](const Request& r) { return static_cast<int>(r.id); };
  h.global->onReasoning = [](Simulator& s, Request& r) { EXPECT_TRUE(s.migrate(r, 1)); };
  SimTime tA = h.iterNs(prefillShape(40));
  for (double L = 41; L <= 80; ++L) tA += h.iterNs(decodeShape({L}));
  h.run();
  EXPECT_EQ(h.sim->aborted(), 1);
  ASSERT_EQ(h.rec.transfers.size(), 1u);
  EXPECT_EQ(h.rec.transfers[0].start, tA);
  EXPECT_EQ(h.record(0).instance, 1);
  EXPECT_EQ(h.record(0).generated, 8);
}

// Two requests of 8-token prompts on 6 blocks of 4 tokens: at context 13 both
// need a 4th block; FCFS preempts the later one (B) and it resumes only after
// A finishes.
struct PreemptCase {
  bool swapMode;
  std::int64_t cpuBlocks;
  bool expectSwap;
};

class Preemption : public ::testing::TestWithParam<PreemptCase> {};

TEST_P(Preemption, TimelineIsExact) {
  const PreemptCase pc = GetParam();
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 6, 4);
  c.instance.swapPreemption = pc.swapMode;
  c.instance.cpuBlocks = pc.cpuBlocks;
  c.instance.hostLinkBytesPerSec = 1e9;  // slow, so the swap time is visible
  Harness h(cost, c, {spec(0, 0, 8, 0, 10), spec(1, 0, 8, 0, 10)});
  h.run();
  const double bpb = c.instance.kvBytesPerBlock;

  struct W {
    std::vector<EntryRec> e;
    BatchShape s;
    double swap;
    std::int64_t cpu;
  };
  std::vector<W> want;
  BatchShape s1 = prefillShape(8);
  addPrefillChunk(s1, 8);
  want.push_back({{{0, 8, true, 2}, {1, 8, true, 2}}, s1, 0, 0});
  for (double L = 9; L <= 12; ++L)
    want.push_back({{{0, 1, false, 3}, {1, 1, false, 3}}, decodeShape({L, L}), 0, 0});
  const std::int64_t cpuHeld = pc.expectSwap ? 3 : 0;
  // A alone (B swapped out: its 3 blocks' copy time is added to this iteration).
  want.push_back({{{0, 1, false, 4}}, decodeShape({13}), pc.expectSwap ? 3 * bpb : 0, cpuHeld});
  for (double L = 14; L <= 17; ++L) want.push_back({{{0, 1, false, L <= 16 ? 4 : 5}}, decodeShape({L}), 0, cpuHeld});
  if (pc.expectSwap) {
    // Swap-in of 3 blocks, then B's 6th token at context 13.
    want.push_back({{{1, 1, false, 4}}, decodeShape({13}), 3 * bpb, 0});
  } else {
    // Recompute: prefill over prompt + 5 generated tokens emits token 6.
    want.push_back({{{1, 13, true, 4}}, prefillShape(13), 0, 0});
  }
  for (double L = 14; L <= 17; ++L) want.push_back({{{1, 1, false, L <= 16 ? 4 : 5}}, decodeShape({L}), 0, 0});

  const auto its = h.rec.itersOf(0);
  ASSERT_EQ(its.size(), want.size());
  SimTime t = 0;
  for (std::size_t i = 0; i < its.size(); ++i) {
    EXPECT_EQ(its[i].start, t) << i;
    EXPECT_EQ(its[i].end, t + h.iterNs(want[i].s, want[i].swap)) << i;
    EXPECT_EQ(its[i].entries, want[i].e) << i;
    EXPECT_EQ(its[i].cpuUsed, want[i].cpu) << i;
    t = its[i].end;
  }
  const RequestRecord& a = h.record(0);
  const RequestRecord& b = h.record(1);
  EXPECT_EQ(a.preemptions, 0);
  EXPECT_EQ(a.preempted, 0);
  EXPECT_EQ(a.last_token, its[9].end);
  EXPECT_EQ(b.preemptions, 1);
  EXPECT_EQ(b.generated, 10);
  EXPECT_EQ(b.preempted, its[10].start - its[5].start);
  EXPECT_EQ(b.swapped, pc.expectSwap ? its[10].start - its[5].start : 0);
  EXPECT_EQ(b.last_token, its[14].end);
  EXPECT_EQ(h.sim->preemptions(), 1);
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 0);
  EXPECT_EQ(h.sim->instance(0).cpuBlocksUsed(), 0);

  const auto ev = h.rec.eventsOf(1);
  std::vector<RequestEvent> kinds;
  for (const auto& e : ev) kinds.push_back(e.e);
  EXPECT_EQ(kinds, (std::vector<RequestEvent>{RequestEvent::Arrived, RequestEvent::FirstScheduled,
                                              RequestEvent::Preempted, RequestEvent::Resumed,
                                              RequestEvent::Finished}));
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[2].t, its[5].start);
  EXPECT_EQ(ev[3].t, its[10].start);
}

INSTANTIATE_TEST_SUITE_P(Kv, Preemption,
                         ::testing::Values(PreemptCase{true, 100, true},    // swap
                                           PreemptCase{true, 2, false},     // swap space full: recompute
                                           PreemptCase{false, 100, false}), // recompute mode
                         [](const auto& info) {
                           return std::string(info.param.swapMode ? (info.param.expectSwap ? "Swap" : "SwapFull")
                                                                  : "Recompute");
                         });

}  // namespace
}  // namespace sl::enginetest
