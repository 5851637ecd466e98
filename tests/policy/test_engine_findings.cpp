// Engine behaviours found while testing the policies, kept as regression
// tests of the policy/engine interplay (fixed in core/engine: same-time
// arrivals join the waking iteration; the arrival abort checks the prompt
// only; an empty, idle instance aborts requests that can never fit).
#include <gtest/gtest.h>

#include "policy_harness.h"

namespace sl::test {
namespace {

// Requests arriving at the same instant on an idle instance should all be
// seen by the iteration that starts at that instant (10-engine.md: "an idle
// instance starts an iteration at the arrival"). Simulator::onArrival pulls
// the next request (scheduleNextArrival) before it calls wake(), so the 2nd
// same-time arrival is queued before the InstanceWake event but the 3rd is
// queued after it: the first iteration used to see A and B but not C.
TEST(EngineFindings, SimultaneousArrivalsShareTheFirstIteration) {
  Rig rig(tinyInstance(100, 1), {req(0, 2, 1), req(0, 2, 1), req(0, 2, 1)}, fcfs());
  rig.run();
  expectIterations(rig.rec, {{0.0, 1.6, {P(0, 2), P(1, 2), P(2, 2)}}});
}

// A prompt that fits the instance (blocks + watermark <= capacity) used to be
// aborted on arrival when it had no room for one more token, although a
// request with one output token never writes another slot: the prefill
// emits its only token. vLLM rejects a prompt only when its blocks exceed
// capacity - watermark. Simulator::onArrival used to check
// blocksFor(input + 1) + watermark > gpuBlocks.
TEST(EngineFindings, PromptFillingTheCacheIsNotAborted) {
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
// request is Swapped (or Waiting, recompute) holding no GPU blocks. The
// stuck check used to look only for a Running request holding all used
// blocks, so the request stayed in flight forever and B, queued behind it,
// never ran (FCFS never skips; RR's prefix is empty): a deadlocked instance.
TEST(EngineFindings, RequestOutgrowingTheCacheIsAbortedNotStuck) {
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
