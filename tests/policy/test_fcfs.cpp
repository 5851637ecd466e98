// FCFS local policy (30-schedulers.md "fcfs", 10-engine.md "iteration loop",
// "Preemption"): exact timelines on a one-instance cluster with a tiny KV
// cache. Iteration time = 1 ms + 0.1 ms × (prefill tokens + decodes), swap
// 0.1 ms per block (policy_harness.h). Token times are iteration ends.
#include <gtest/gtest.h>

#include "policy_harness.h"

namespace sl::test {
namespace {

using RE = RequestEvent;
using IdT = std::vector<std::pair<std::int64_t, SimTime>>;

// PASCAL Fig. 2b: room for two requests. A, B, C arrive at 0, 0.1, 0.2 ms
// (4-token prompts, 2 output tokens: 5 blocks each at their peak, 10
// blocks). C cannot be admitted while A and B hold their prompts; it starts
// in the iteration that follows A's completion.
TEST(FcfsLocal, HeadOfLineBlockingFig2b) {
  Rig rig(tinyInstance(10, 1), {req(0, 4, 2), req(0.1, 4, 2), req(0.2, 4, 2)}, fcfs());
  rig.sim->run(ms(2.0));  // inside iteration 2: A decodes, B prefills, C waits
  EXPECT_EQ(queues(*rig.sim), (std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                                  {"running", {0, 1}}, {"waiting", {2}}}));
  EXPECT_EQ(rig.sim->instance(0).gpuBlocksUsed(), 9);
  rig.run();

  expectIterations(rig.rec, {
                                {0.0, 1.4, {P(0, 4)}},
                                {1.4, 2.9, {D(0), P(1, 4)}},  // C: 4 blocks needed, 1 free
                                {2.9, 4.4, {D(1), P(2, 4)}},  // A finished at 2.9: C admitted
                                {4.4, 5.5, {D(2)}},
                            });
  EXPECT_EQ(rig.tokens(0), times({1.4, 2.9}));
  EXPECT_EQ(rig.tokens(1), times({2.9, 4.4}));
  EXPECT_EQ(rig.tokens(2), times({4.4, 5.5}));
  EXPECT_EQ(rig.rec.firstTokenOrder(), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(rig.record(2).queueing, ms(2.9) - ms(0.2));
  EXPECT_EQ(rig.record(0).last_token, ms(2.9));  // C's first schedule == A's completion
  EXPECT_EQ(rig.sim->preemptions(), 0);
  EXPECT_EQ(rig.sim->finishedCount(), 3);
}

// Memory runs out during decode: the most recently arrived running request
// (B) is the victim, swapped out within the iteration that needs the room
// (its copy time is added to that iteration), and swapped back in when
// A's completion frees memory.
TEST(FcfsLocal, LatestArrivalIsVictimSwap) {
  Rig rig(tinyInstance(10, 1), {req(0, 4, 4), req(0.1, 4, 4)}, fcfs());
  rig.sim->run(ms(3.0));  // inside iteration 3
  {
    const auto q = queues(*rig.sim);
    EXPECT_EQ(q[0].second, (std::vector<std::int64_t>{0}));
    EXPECT_EQ(q[1].second, (std::vector<std::int64_t>{1}));
    EXPECT_EQ(rig.sim->instance(0).cpuBlocksUsed(), 4);  // B's 4 blocks on the host
    EXPECT_EQ(rig.sim->instance(0).gpuBlocksUsed(), 6);  // A: prompt 4 + 2 generated slots
  }
  rig.run();

  expectIterations(rig.rec, {
                                {0.0, 1.4, {P(0, 4)}},
                                {1.4, 2.9, {D(0), P(1, 4)}},
                                {2.9, 4.4, {D(0)}},  // 1.1 + swap-out of 4 blocks (0.4)
                                {4.4, 5.5, {D(0)}},  // B needs 5 blocks, 3 free
                                {5.5, 7.0, {D(1)}},  // 1.1 + swap-in of 4 blocks (0.4)
                                {7.0, 8.1, {D(1)}},
                                {8.1, 9.2, {D(1)}},
                            });
  EXPECT_EQ(rig.tokens(0), times({1.4, 2.9, 4.4, 5.5}));
  EXPECT_EQ(rig.tokens(1), times({2.9, 7.0, 8.1, 9.2}));
  EXPECT_EQ(rig.rec.of(RE::Preempted), (IdT{{1, ms(2.9)}}));
  EXPECT_EQ(rig.rec.of(RE::Resumed), (IdT{{1, ms(5.5)}}));
  for (const Ev& e : rig.rec.events) {
    if (e.kind == RE::Preempted) { EXPECT_EQ(e.state, ReqState::Swapped); }
  }
  EXPECT_EQ(rig.record(0).preemptions, 0);
  EXPECT_EQ(rig.record(1).preemptions, 1);
  EXPECT_EQ(rig.record(1).preempted, ms(5.5) - ms(2.9));
  EXPECT_EQ(rig.record(1).swapped, ms(5.5) - ms(2.9));
  EXPECT_EQ(rig.sim->preemptions(), 1);
  EXPECT_EQ(rig.sim->instance(0).cpuBlocksUsed(), 0);
  EXPECT_EQ(rig.sim->instance(0).gpuBlocksUsed(), 0);
}

// Same workload with recompute: B's KV is dropped (no copy time), and it
// re-prefills prompt + its one generated token (5 tokens: 1.5 ms instead of
// a 1.1 ms decode) once A has finished; that prefill emits B's 2nd token.
TEST(FcfsLocal, LatestArrivalIsVictimRecompute) {
  InstanceConfig ic = tinyInstance(10, 1);
  ic.swapPreemption = false;
  Rig rig(ic, {req(0, 4, 4), req(0.1, 4, 4)}, fcfs());
  rig.run();

  expectIterations(rig.rec, {
                                {0.0, 1.4, {P(0, 4)}},
                                {1.4, 2.9, {D(0), P(1, 4)}},
                                {2.9, 4.0, {D(0)}},  // B dropped: no copy time
                                {4.0, 5.1, {D(0)}},  // B needs 5 blocks for 4 + 1 tokens, 3 free
                                {5.1, 6.6, {P(1, 5)}},  // recompute: prompt + 1 generated token
                                {6.6, 7.7, {D(1)}},
                                {7.7, 8.8, {D(1)}},
                            });
  EXPECT_EQ(rig.tokens(1), times({2.9, 6.6, 7.7, 8.8}));
  EXPECT_EQ(rig.rec.of(RE::Preempted), (IdT{{1, ms(2.9)}}));
  EXPECT_EQ(rig.rec.of(RE::Resumed), (IdT{{1, ms(5.1)}}));
  for (const Ev& e : rig.rec.events) {
    if (e.kind == RE::Preempted) { EXPECT_EQ(e.state, ReqState::Waiting); }
  }
  EXPECT_EQ(rig.record(1).preemptions, 1);
  EXPECT_EQ(rig.record(1).preempted, ms(5.1) - ms(2.9));
  EXPECT_EQ(rig.record(1).swapped, 0);
  EXPECT_EQ(rig.record(1).generated, 4);
  EXPECT_EQ(rig.sim->instance(0).cpuBlocksUsed(), 0);
}

// Swap space too small for the victim's 4 blocks: the preemption falls back
// to recompute (10-engine.md), giving exactly the recompute timeline.
TEST(FcfsLocal, FullSwapSpaceFallsBackToRecompute) {
  InstanceConfig ic = tinyInstance(10, 1);
  ic.cpuBlocks = 3;
  Rig rig(ic, {req(0, 4, 4), req(0.1, 4, 4)}, fcfs());
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.4, {P(0, 4)}},
                                {1.4, 2.9, {D(0), P(1, 4)}},
                                {2.9, 4.0, {D(0)}},
                                {4.0, 5.1, {D(0)}},
                                {5.1, 6.6, {P(1, 5)}},
                                {6.6, 7.7, {D(1)}},
                                {7.7, 8.8, {D(1)}},
                            });
  EXPECT_EQ(rig.record(1).preemptions, 1);
  EXPECT_EQ(rig.record(1).swapped, 0);
}

// Two victims (C, then B: latest arrival first) go back to the queue front
// in arrival order, ahead of D which arrived before either was preempted;
// both resume (B first) before D is first scheduled.
TEST(FcfsLocal, PreemptedReturnToQueueFrontInArrivalOrder) {
  Rig rig(tinyInstance(9, 1), {req(0, 2, 8), req(0.1, 2, 4), req(0.2, 2, 3), req(0.3, 4, 1)}, fcfs());
  rig.sim->run(ms(6.0));  // after B's preemption at 5.3
  EXPECT_EQ(queues(*rig.sim), (std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                                  {"running", {0}}, {"waiting", {1, 2, 3}}}));
  rig.run();

  expectIterations(rig.rec, {
                                {0.0, 1.2, {P(0, 2)}},
                                {1.2, 2.7, {D(0), P(1, 2), P(2, 2)}},  // D: 4 blocks, 2 free
                                {2.7, 4.1, {D(0), D(1)}},  // C swapped out (2 blocks, 0.2 ms)
                                {4.1, 5.3, {D(0), D(1)}},  // C needs 3 blocks, none free
                                {5.3, 6.8, {D(0)}},        // B swapped out (4 blocks, 0.4 ms)
                                {6.8, 7.9, {D(0)}},
                                {7.9, 9.0, {D(0)}},
                                {9.0, 10.1, {D(0)}},               // A finishes
                                {10.1, 11.9, {D(1), D(2)}},        // swap-in 4 + 2 blocks (0.6 ms)
                                {11.9, 13.4, {D(2), P(3, 4)}},     // B finished: D admitted
                            });
  EXPECT_EQ(rig.rec.of(RE::Preempted), (IdT{{2, ms(2.7)}, {1, ms(5.3)}}));
  EXPECT_EQ(rig.rec.of(RE::Resumed), (IdT{{1, ms(10.1)}, {2, ms(10.1)}}));
  const IdT first = rig.rec.of(RE::FirstScheduled);
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first.back(), (std::pair<std::int64_t, SimTime>{3, ms(11.9)}));
  EXPECT_EQ(rig.tokens(0), times({1.2, 2.7, 4.1, 5.3, 6.8, 7.9, 9.0, 10.1}));
  EXPECT_EQ(rig.tokens(1), times({2.7, 4.1, 5.3, 11.9}));
  EXPECT_EQ(rig.tokens(2), times({2.7, 11.9, 13.4}));
  EXPECT_EQ(rig.tokens(3), times({13.4}));
  EXPECT_EQ(rig.record(0).preemptions, 0);
  EXPECT_EQ(rig.record(1).preemptions, 1);
  EXPECT_EQ(rig.record(2).preemptions, 1);
  EXPECT_EQ(rig.record(3).preemptions, 0);
  EXPECT_EQ(rig.record(3).queueing, ms(11.9) - ms(0.3));
}

// No skipping: a 1-token prompt that would fit waits behind a 6-token head
// that does not.
TEST(FcfsLocal, NoSkippingSmallRequestWaitsBehindBigHead) {
  Rig rig(tinyInstance(8, 1), {req(0, 4, 3), req(0.1, 6, 1), req(0.2, 1, 1)}, fcfs());
  rig.sim->run(ms(2.0));
  EXPECT_EQ(queues(*rig.sim), (std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                                  {"running", {0}}, {"waiting", {1, 2}}}));
  EXPECT_EQ(rig.sim->instance(0).freeGpuBlocks(), 3);  // room for C (1 block), not B (6)
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.4, {P(0, 4)}},
                                {1.4, 2.5, {D(0)}},
                                {2.5, 3.6, {D(0)}},
                                {3.6, 5.3, {P(1, 6), P(2, 1)}},
                            });
  EXPECT_EQ(rig.rec.of(RE::FirstScheduled), (IdT{{0, 0}, {1, ms(3.6)}, {2, ms(3.6)}}));
  EXPECT_EQ(rig.rec.firstTokenOrder(), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(rig.sim->preemptions(), 0);
}

// Admission needs prompt blocks + watermark free: with 6 blocks free and a
// watermark of 2, a 4-block prompt (exactly at the threshold) and a 3-block
// one are admitted at once; a 5-block prompt waits until the holder ends.
TEST(FcfsLocal, WatermarkThresholdIsExact) {
  struct Case {
    int input;
    std::vector<ExpIter> iters;
  };
  const std::vector<Case> cases = {
      {3, {{0.0, 1.3, {P(0, 3)}}, {1.3, 2.7, {D(0), P(1, 3)}}}},
      {4, {{0.0, 1.3, {P(0, 3)}}, {1.3, 2.8, {D(0), P(1, 4)}}}},
      {5, {{0.0, 1.3, {P(0, 3)}}, {1.3, 2.4, {D(0)}}, {2.4, 3.9, {P(1, 5)}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("prompt of " + std::to_string(c.input) + " blocks");
    InstanceConfig ic = tinyInstance(10, 1);
    ic.watermarkBlocks = 2;
    // Holder: 3-token prompt, decodes once (4 blocks); X arrives during its prefill.
    Rig rig(ic, {req(0, 3, 2), req(0.1, c.input, 1)}, fcfs());
    rig.run();
    expectIterations(rig.rec, c.iters);
    EXPECT_EQ(rig.sim->finishedCount(), 2);
    EXPECT_EQ(rig.sim->aborted(), 0);
  }
}

// chunked_prefill = false (vLLM V0): an iteration that admits a prompt is
// prefill-only (A does not decode while B prefills); with chunked prefill
// the same workload mixes A's decode into B's prefill iteration.
TEST(FcfsLocal, NoChunkedPrefillMeansPrefillOnlyIterations) {
  InstanceConfig ic = tinyInstance(100, 1);
  ic.chunkedPrefill = false;
  Rig v0(ic, {req(0, 4, 3), req(0.1, 6, 2)}, fcfs());
  v0.run();
  expectIterations(v0.rec, {
                               {0.0, 1.4, {P(0, 4)}},
                               {1.4, 3.0, {P(1, 6)}},  // prefill-only: A waits
                               {3.0, 4.2, {D(0), D(1)}},
                               {4.2, 5.3, {D(0)}},
                           });
  EXPECT_EQ(v0.tokens(0), times({1.4, 4.2, 5.3}));

  ic.chunkedPrefill = true;
  Rig v1(ic, {req(0, 4, 3), req(0.1, 6, 2)}, fcfs());
  v1.run();
  expectIterations(v1.rec, {
                               {0.0, 1.4, {P(0, 4)}},
                               {1.4, 3.1, {D(0), P(1, 6)}},
                               {3.1, 4.3, {D(0), D(1)}},
                           });
  EXPECT_EQ(v1.tokens(0), times({1.4, 3.1, 4.3}));
}

// Without chunked prefill whole prompts are packed up to
// max_num_batched_tokens (8 here): A (5) fits, B (5) waits for the next
// prefill-only iteration, and C (12 > 8) runs alone in an otherwise empty
// batch.
TEST(FcfsLocal, NoChunkedPrefillPacksWholePromptsUpToTokenBudget) {
  InstanceConfig ic = tinyInstance(100, 1);
  ic.chunkedPrefill = false;
  ic.maxBatchedTokens = 8;
  Rig rig(ic, {req(0, 5, 2), req(0, 5, 2), req(0, 12, 1)}, fcfs());
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.5, {P(0, 5)}},
                                {1.5, 3.0, {P(1, 5)}},
                                {3.0, 5.2, {P(2, 12)}},
                                {5.2, 6.4, {D(0), D(1)}},
                            });
}

// vLLM V0 (chunked_prefill = false) schedules no prefill while any request
// is swapped out: the iteration that swaps B back in is decode-only, and C
// (which arrived after B's preemption) is prefilled in the next iteration.
// Regression test: FcfsLocal used to admit C into the resume iteration,
// mixing a prefill with decodes.
TEST(FcfsLocal, NoChunkedPrefillResumeIterationIsDecodeOnly) {
  InstanceConfig ic = tinyInstance(7, 1);
  ic.chunkedPrefill = false;
  Rig rig(ic, {req(0, 2, 5), req(0.1, 2, 3), req(4.0, 1, 1)}, fcfs());
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.2, {P(0, 2)}},
                                {1.2, 2.4, {P(1, 2)}},
                                {2.4, 3.6, {D(0), D(1)}},
                                {3.6, 5.0, {D(0)}},  // B swapped out (3 blocks, 0.3 ms)
                                {5.0, 6.1, {D(0)}},  // B needs 4 blocks, 2 free; C waits behind B
                                {6.1, 7.2, {D(0)}},  // A finishes
                                {7.2, 8.6, {D(1)}},  // swap-in (0.3 ms), decode-only
                                {8.6, 9.7, {P(2, 1)}},
                            });
  EXPECT_EQ(rig.rec.of(RE::Preempted), (IdT{{1, ms(3.6)}}));
  EXPECT_EQ(rig.rec.of(RE::Resumed), (IdT{{1, ms(7.2)}}));
  for (const Iter& it : rig.rec.iters) {
    bool pre = false, dec = false;
    for (const Entry& e : it.batch) (e.prefill ? pre : dec) = true;
    EXPECT_FALSE(pre && dec) << "mixed batch at " << it.start;
  }
}

// max_num_seqs bounds the running set, as in vLLM V0 (running sequences
// count against the budget of a prefill-only iteration): with a limit of 2,
// C is not admitted while A and B run; it would otherwise be admitted and
// then left out of every decode iteration until A and B finish.
// Regression test: FcfsLocal used to admit up to max_num_seqs new prompts
// per prefill-only iteration regardless of the running requests.
TEST(FcfsLocal, NoChunkedPrefillMaxNumSeqsCountsRunning) {
  InstanceConfig ic = tinyInstance(100, 1);
  ic.chunkedPrefill = false;
  ic.maxNumSeqs = 2;
  Rig rig(ic, {req(0, 2, 3), req(0.1, 2, 3), req(0.2, 2, 3)}, fcfs());
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.2, {P(0, 2)}},
                                {1.2, 2.4, {P(1, 2)}},
                                {2.4, 3.6, {D(0), D(1)}},
                                {3.6, 4.8, {D(0), D(1)}},
                                {4.8, 6.0, {P(2, 2)}},
                                {6.0, 7.1, {D(2)}},
                                {7.1, 8.2, {D(2)}},
                            });
  // Chunked prefill: the limit applies to the mixed batch (A's decode + B).
  ic.chunkedPrefill = true;
  Rig v1(ic, {req(0, 2, 3), req(0.1, 2, 3), req(0.2, 2, 3)}, fcfs());
  v1.run();
  expectIterations(v1.rec, {
                               {0.0, 1.2, {P(0, 2)}},
                               {1.2, 2.5, {D(0), P(1, 2)}},
                               {2.5, 3.7, {D(0), D(1)}},  // A done
                               {3.7, 5.0, {D(1), P(2, 2)}},  // B done
                               {5.0, 6.1, {D(2)}},
                               {6.1, 7.2, {D(2)}},
                           });
}

// Decode growth takes one block at a time as a sequence crosses a block
// boundary (block size 4): a 5-token prompt holds 2 blocks until its 8th
// token slot is written, then 3.
TEST(FcfsLocal, DecodeGrowsOneBlockAtBoundaries) {
  Rig rig(tinyInstance(10, 4), {req(0, 5, 6)}, fcfs());
  std::vector<std::int64_t> used;
  while (rig.sim->step())
    if (rig.sim->instance(0).busy()) used.push_back(rig.sim->instance(0).gpuBlocksUsed());
  // Iterations write slots 1-5 (prefill), 6, 7, 8, 9, 10 (decodes).
  EXPECT_EQ(used, (std::vector<std::int64_t>{2, 2, 2, 2, 3, 3}));
  EXPECT_EQ(rig.tokens(0), times({1.5, 2.6, 3.7, 4.8, 5.9, 7.0}));
}

}  // namespace
}  // namespace sl::test
