// The engine's hooks for policies (docs/policy-api.md): end of iteration
// (local and global), length thresholds, named timers, the mutable arrival
// hook, the O(1) per-instance counters, and queued hand-offs that can be
// cancelled or re-targeted. Each hook is driven by a small scripted policy.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "engine_test_util.h"

namespace sl::enginetest {
namespace {

// FCFS that counts the end-of-iteration calls of its instance.
class CountingFcfs : public FcfsLocal {
public:
  explicit CountingFcfs(std::map<int, int>& calls, int instance) : calls_(calls), instance_(instance) {}
  void onIterationEnd() override { ++calls_[instance_]; }

private:
  std::map<int, int>& calls_;
  int instance_;
};

TEST(Hooks, IterationEndRunsOncePerIterationLocallyAndGlobally) {
  const CostModel& cost = llama8b();
  std::map<int, int> local, global;
  Harness h(cost, smallConfig(cost, 2, 64),
            {spec(0, 0, 32, 3, 4), spec(1, 0, 16, 0, 9), spec(2, 5 * kMs, 40, 2, 2)}, nullptr,
            [&local](int i) { return std::make_unique<CountingFcfs>(local, i); });
  h.global->onRoute = [](const Request& r) { return static_cast<int>(r.id % 2); };
  h.global->onIterationEndFn = [&](Simulator& s, int i) {
    ++global[i];
    EXPECT_FALSE(s.instance(i).busy());  // called between iterations
  };
  h.run();
  for (int i = 0; i < 2; ++i) {
    const auto iters = static_cast<int>(h.rec.itersOf(i).size());
    EXPECT_GT(iters, 0);
    EXPECT_EQ(local[i], iters) << i;
    EXPECT_EQ(global[i], iters) << i;
  }
}

TEST(Hooks, LengthThresholdFiresOnceAtTheIterationThatReachesItAndCanBeRearmed) {
  const CostModel& cost = llama8b();
  Harness h(cost, smallConfig(cost, 1, 64), {spec(0, 0, 16, 4, 20), spec(1, 0, 16, 0, 3)});
  std::vector<std::pair<std::int32_t, SimTime>> hits;  // (generated, time)
  h.global->onArrivalFn = [](Simulator& s, Request& r) {
    if (r.id == 0) s.watchLength(r, 16 + 5);  // prompt + 5 generated tokens
    if (r.id == 1) s.watchLength(r, 16 + 50); // never reached: no call
  };
  h.global->onLengthFn = [&](Simulator& s, Request& r) {
    EXPECT_EQ(r.id, 0);
    EXPECT_EQ(r.lengthWatch, -1);  // cleared before the call
    hits.emplace_back(r.generated, s.now());
    if (hits.size() == 1) s.watchLength(r, 16 + 12);
  };
  h.run();
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].first, 5);
  EXPECT_EQ(hits[1].first, 12);
  // At the end of the iteration that produced the token: a batch end time.
  for (const auto& [gen, t] : hits) {
    bool atEnd = false;
    for (const auto& it : h.rec.iters) atEnd |= it.end == t;
    EXPECT_TRUE(atEnd) << gen;
  }
}

TEST(Hooks, NamedTimersKeepTheirOwnPeriodsAndCanBeRetunedOrStopped) {
  const CostModel& cost = llama8b();
  std::vector<RequestSpec> reqs;
  for (int i = 0; i < 20; ++i) reqs.push_back(spec(i, i * 20 * kMs, 16, 0, 4));  // keeps the run ~400 ms long
  Harness h(cost, smallConfig(cost, 1, 64), reqs);
  Simulator& sim = *h.sim;
  const int fast = sim.startTimer("fast", 10 * kMs);
  const int slow = sim.startTimer("slow", 25 * kMs);
  EXPECT_EQ(sim.timerName(fast), "fast");
  EXPECT_EQ(sim.timerName(slow), "slow");
  std::map<int, std::vector<SimTime>> fired;
  h.global->onTimerFn = [&](Simulator& s, int id) {
    fired[id].push_back(s.now());
    if (id == slow && fired[id].size() == 3) s.stopTimer(slow);
    if (id == fast && fired[id].size() == 5) s.setTimerPeriod(fast, 50 * kMs);
  };
  h.run();
  ASSERT_EQ(fired[slow], (std::vector<SimTime>{25 * kMs, 50 * kMs, 75 * kMs}));
  ASSERT_GE(fired[fast].size(), 8u);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(fired[fast][k], static_cast<SimTime>(k + 1) * 10 * kMs);
  // The firing already queued (60 ms) keeps its time; the new period counts from it.
  EXPECT_EQ(fired[fast][5], 60 * kMs);
  for (std::size_t k = 6; k < fired[fast].size(); ++k) EXPECT_EQ(fired[fast][k] - fired[fast][k - 1], 50 * kMs);
  EXPECT_THROW(sim.startTimer("bad", 0), std::logic_error);
}

TEST(Hooks, ArrivalHookMayEditTheRequestBeforeRouting) {
  const CostModel& cost = llama8b();
  Harness h(cost, smallConfig(cost, 2, 64), {spec(0, 0, 16, 0, 3), spec(1, kMs, 16, 0, 3)});
  h.global->onArrivalFn = [](Simulator&, Request& r) { r.predicted = 100 + static_cast<std::int32_t>(r.id); };
  h.global->onRoute = [](const Request& r) {
    EXPECT_EQ(r.predicted, 100 + r.id);  // route sees the edit
    return r.predicted % 2;
  };
  h.run();
  EXPECT_EQ(h.record(0).predicted, 100);
  EXPECT_EQ(h.record(1).predicted, 101);
  EXPECT_EQ(h.record(1).instance, 1);
}

// Draining (docs/policy-api.md "pools"): the policy stops routing to an
// instance and watches it; it is told once, when its last request has left.
TEST(Hooks, DrainedInstanceIsReportedOnceWhenItsLastRequestLeaves) {
  const CostModel& cost = llama8b();
  Harness h(cost, smallConfig(cost, 2, 64),
            {spec(0, 0, 16, 0, 20), spec(1, 0, 16, 0, 3), spec(2, 50 * kMs, 16, 0, 3)});
  std::vector<std::pair<int, SimTime>> drained;
  h.global->onDrainedFn = [&](Simulator& s, int i) { drained.emplace_back(i, s.now()); };
  h.global->onRoute = [&](const Request& r) {
    Simulator& s = *h.global->sim();
    if (r.id == 0) {
      s.watchDrain(0);  // empty already: reported at once
      EXPECT_EQ(drained.size(), 1u);
    }
    if (r.id == 1) {
      s.watchDrain(1);  // holds request 0
      EXPECT_FALSE(s.drained(1));
    }
    return r.id == 2 ? 0 : 1;
  };
  h.run();
  const SimTime lastOn1 = std::max(h.record(0).last_token, h.record(1).last_token);
  ASSERT_EQ(drained.size(), 2u);
  EXPECT_EQ(drained[0], (std::pair<int, SimTime>{0, 0}));
  EXPECT_EQ(drained[1], (std::pair<int, SimTime>{1, lastOn1}));
  EXPECT_TRUE(h.sim->drained(0));  // request 2 came and went, but the watch had fired
}

TEST(Counters, QueuedPrefillAndRunningTokens) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 200);
  c.instance.maxBatchedTokens = 128;  // chunked: 3 prompts of 100 take 3 iterations
  Harness h(cost, c, {spec(0, 0, 100, 0, 4), spec(1, 0, 100, 0, 4), spec(2, 0, 100, 0, 4)});
  const Instance& in = h.sim->instance(0);
  EXPECT_EQ(in.queuedPrefillTokens(), 0);
  h.sim->run(0);  // arrivals at 0 and the first iteration's start
  ASSERT_TRUE(in.busy());
  EXPECT_EQ(in.queuedPrefillTokens(), 300);  // computed tokens count at the iteration's end
  std::int64_t chunk = 0;
  for (const BatchEntry& e : in.batch()) {
    EXPECT_TRUE(e.prefill);
    chunk += e.newTokens;
  }
  EXPECT_GT(chunk, 0);
  EXPECT_LE(chunk, 128);
  EXPECT_EQ(in.runningTokens(), chunk);  // no KV yet: only the tokens being computed
  h.sim->run(in.iterationEnd());
  EXPECT_EQ(in.queuedPrefillTokens(), 300 - chunk);
  h.run();
  EXPECT_EQ(in.queuedPrefillTokens(), 0);
  EXPECT_EQ(in.runningTokens(), 0);
}

TEST(Counters, RecentDecodeIntervalIsTheMeanDecodeIterationOverTheWindow) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 64);
  c.counterWindow = 50 * kMs;
  Harness h(cost, c, {spec(0, 0, 16, 0, 400)});
  const Instance& in = h.sim->instance(0);
  EXPECT_EQ(in.recentDecodeIntervalS(0), 0.0);
  const SimTime t = 300 * kMs;
  h.sim->run(t);
  // Expected: decode iterations (not the prefill) that ended in (t - 50 ms, t].
  double sum = 0;
  int n = 0;
  for (const auto& it : h.rec.itersOf(0))
    if (!it.entries[0].prefill && it.end > t - c.counterWindow && it.end <= t) {
      sum += nsToSeconds(it.end - it.start);
      ++n;
    }
  ASSERT_GT(n, 3);
  EXPECT_NEAR(in.recentDecodeIntervalS(t), sum / n, 1e-12);
  // Read later with no decode iteration since: the window has emptied.
  EXPECT_EQ(in.recentDecodeIntervalS(t + 10 * c.counterWindow), 0.0);
}

// Instance 0 prefills and hands off; instance 1 is full (request 1 holds
// most of its blocks), so a hand-off to it queues; instance 2 is free.
struct HandoffSetup {
  Harness h;
  explicit HandoffSetup(const CostModel& cost)
      : h(cost, smallConfig(cost, 3, 10), {spec(0, 2 * kMs, 32, 0, 3), spec(1, 0, 120, 0, 40)}) {
    h.sim->setRole(0, InstanceRole::Prefill);
    h.global->onRoute = [](const Request& r) { return static_cast<int>(r.id); };
  }
};

TEST(Handoff, QueuedHandoffCanBeRetargeted) {
  HandoffSetup s(llama8b());
  bool cancelledStarted = true, retargeted = false;
  s.h.global->onPrefill = [&](Simulator& sim, Request& r) {
    sim.handoff(r, 1);                   // needs 3 blocks, instance 1 has 2 free: queued
    retargeted = sim.retargetHandoff(r, 2);
    cancelledStarted = sim.cancelHandoff(r);  // its copy to 2 started at once: nothing to withdraw
  };
  s.h.run();
  EXPECT_TRUE(retargeted);
  EXPECT_FALSE(cancelledStarted);
  EXPECT_EQ(s.h.record(0).instance, 2);
  EXPECT_EQ(s.h.record(0).handoff_wait, 0);
  EXPECT_EQ(s.h.sim->handoffs(), 1);
  EXPECT_EQ(s.h.sim->migrations(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.h.sim->instance(i).gpuBlocksReserved(), 0) << i;
}

TEST(Handoff, CancelledHandoffWaitsOnItsPrefillInstanceUntilHandedAgain) {
  HandoffSetup s(llama8b());
  RequestHandle held;
  s.h.global->onPrefill = [&](Simulator& sim, Request& r) {
    sim.handoff(r, 1);
    EXPECT_TRUE(sim.cancelHandoff(r));
    EXPECT_FALSE(sim.cancelHandoff(r));  // nothing queued any more
    EXPECT_EQ(r.state, ReqState::HandoffWait);
    held = sim.handleOf(r);
    sim.sendMessage(30 * kMs, [&sim, &held] { sim.handoff(sim.request(held), 2); });
  };
  s.h.run();
  const RequestRecord& r = s.h.record(0);
  EXPECT_EQ(r.instance, 2);
  EXPECT_GE(r.handoff_wait, 30 * kMs);
  EXPECT_EQ(s.h.sim->handoffs(), 1);
}

// Arrow's P->D pool: a prefill-role instance may keep a request and decode
// it where it prefilled (hand-off to itself): no copy, no hand-off counted,
// every token produced on instance 0.
TEST(Handoff, HandoffToItselfKeepsTheRequestWithoutACopy) {
  HandoffSetup s(llama8b());
  int asked = 0;
  s.h.global->onPrefill = [&](Simulator& sim, Request& r) {
    ++asked;
    EXPECT_EQ(r.instance, 0);
    sim.handoff(r, r.instance);
    EXPECT_EQ(r.state, ReqState::Running);
  };
  s.h.run();
  EXPECT_EQ(asked, 1);
  const RequestRecord& r = s.h.record(0);
  EXPECT_EQ(r.instance, 0);
  EXPECT_EQ(r.generated, 3);
  EXPECT_EQ(r.migrating, 0);
  EXPECT_EQ(s.h.sim->handoffs(), 0);
  EXPECT_EQ(s.h.sim->migrations(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.h.sim->instance(i).gpuBlocksReserved(), 0) << i;
}

}  // namespace
}  // namespace sl::enginetest
