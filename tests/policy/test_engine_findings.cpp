// Engine behaviours found while testing the policies (core/engine is owned
// elsewhere). Each test states the expected behaviour and is skipped until
// the engine is fixed; remove the GTEST_SKIP() line to check a fix.
#include <gtest/gtest.h>

#include "policy_harness.h"

namespace sl::test {
namespace {

// Requests arriving at the same instant on an idle instance should all be
// seen by the iteration that starts at that instant (10-engine.md: "an idle
// instance starts an iteration at the arrival"). Simulator::onArrival pulls
// the next request (scheduleNextArrival) before it calls wake(), so the 2nd
// same-time arrival is queued before the InstanceWake event but the 3rd is
// queued after it: the first iteration sees A and B but not C.
// Fix (core/engine): order same-time events so that Arrival events precede
// InstanceWake (e.g. EventQueue ordered by (time, kind rank, seq) with
// Arrival ranked before InstanceWake), or have onArrival process every
// already-due arrival before waking the instance.
TEST(EngineFindings, SimultaneousArrivalsShareTheFirstIteration) {
  GTEST_SKIP() << "engine: same-time arrivals split across iterations (see comment)";
  Rig rig(tinyInstance(100, 1), {req(0, 2, 1), req(0, 2, 1), req(0, 2, 1)}, fcfs());
  rig.run();
  expectIterations(rig.rec, {{0.0, 1.6, {P(0, 2), P(1, 2), P(2, 2)}}});
}

// A prompt that fits the instance (blocks + watermark <= capacity) is
// aborted on arrival when it has no room for one more token, although a
// request with one output token never writes another slot: the prefill
// emits its only token. vLLM rejects a prompt only when its blocks exceed
// capacity - watermark. Simulator::onArrival checks
// blocksFor(input + 1) + watermark > gpuBlocks.
// Fix (core/engine): check blocksFor(input + (outputLen() > 1 ? 1 : 0)) +
// watermark > gpuBlocks, or blocksFor(input) + watermark > gpuBlocks and
// let startIteration's stuck-request abort handle the rest.
TEST(EngineFindings, PromptFillingTheCacheIsNotAborted) {
  GTEST_SKIP() << "engine: arrival abort check is one token too strict (see comment)";
  Rig rig(tinyInstance(10, 1), {req(0, 10, 1)}, fcfs());
  rig.run();
  EXPECT_EQ(rig.sim->aborted(), 0);
  expectIterations(rig.rec, {{0.0, 2.0, {P(0, 10)}}});
}

// A lone request that outgrows the whole KV cache (4-token prompt + 5
// output tokens = 8 slots, 6 blocks of 1 token) should be aborted so that
// it cannot block its instance (Simulator::startIteration: "A lone request
// that can never grow further is aborted so the instance cannot deadlock").
// But the local policy gets there first: FCFS preempts the request itself
// (it is the latest running arrival) and RR's runPrefix finds an empty
// prefix and preempts it, so when startIteration sees the empty batch the
// request is Swapped (or Waiting, recompute) holding no GPU blocks, the
// stuck check (Running, holding all used blocks) does not fire, and the
// request stays in flight forever. B, arriving later, is queued behind it
// and never runs (FCFS never skips; RR's prefix is empty): the instance is
// deadlocked and the run ends with both requests in flight.
// Fix (core/engine, Simulator::startIteration): when the batch is empty,
// abort every request on the instance that could not run even on an empty
// instance, whatever its state (IterationBuilder::blocksToRun(r) plus the
// watermark for a Waiting one > cfg.gpuBlocks; for Swapped use kvTokens + 1),
// then call the policy's schedule() again (after an abort the current code
// returns with the instance idle even if other requests could run).
TEST(EngineFindings, RequestOutgrowingTheCacheIsAbortedNotStuck) {
  GTEST_SKIP() << "engine: policy-preempted oversized request deadlocks its instance (see comment)";
  for (bool swap : {true, false}) {
    for (const bool useRr : {false, true}) {
      SCOPED_TRACE(std::string(useRr ? "rr" : "fcfs") + (swap ? " swap" : " recompute"));
      InstanceConfig ic = tinyInstance(6, 1);
      ic.swapPreemption = swap;
      Rig rig(ic, {req(0, 4, 5), req(5.0, 1, 1)}, useRr ? rr(500) : fcfs());
      rig.run();
      EXPECT_EQ(rig.sim->aborted(), 1);
      EXPECT_EQ(rig.sim->finishedCount(), 1);
      EXPECT_EQ(rig.sim->inFlight(), 0);
      EXPECT_EQ(rig.tokens(1), times({6.1}));
    }
  }
}
}  // namespace
}  // namespace sl::test
