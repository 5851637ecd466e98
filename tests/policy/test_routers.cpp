// Routing-only global policies (30-schedulers.md "Routing-only policies"):
// the instance each arrival is routed to, on small multi-instance clusters.
#include <gtest/gtest.h>

#include "policy_harness.h"
#include "util/rng.h"

namespace sl::test {
namespace {

/// Instance chosen for each request, in arrival order.
std::vector<int> routes(const Recorder& rec) {
  std::vector<int> out;
  for (const Ev& e : rec.events)
    if (e.kind == RequestEvent::Arrived) out.push_back(e.instance);
  return out;
}

std::vector<RequestSpec> burst(const std::vector<int>& inputs, double gapMs = 0) {
  std::vector<RequestSpec> v;
  for (std::size_t i = 0; i < inputs.size(); ++i) v.push_back(req(gapMs * static_cast<double>(i), inputs[i], 2));
  return v;
}

TEST(Routers, RoundRobinCycles) {
  Rig rig(tinyInstance(100, 1), burst({3, 1, 4, 1, 5, 9, 2}, 0.01), fcfs(), RouterKind::RoundRobin, 3);
  rig.run();
  EXPECT_EQ(routes(rig.rec), (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(rig.sim->finishedCount(), 7);
}

// Fewest assigned tokens (prompt + generated of the requests an instance
// holds); ties go to the lowest index. All arrive at t = 0, before any
// token is produced, so the loads are the sums of the prompts.
TEST(Routers, LeastLoadedPicksFewestAssignedTokens) {
  Rig rig(tinyInstance(100, 1), burst({10, 5, 7, 1, 1, 3}), fcfs(), RouterKind::LeastLoaded, 3);
  // loads: 0,0,0 -> 0 | 10,0,0 -> 1 | 10,5,0 -> 2 | 10,5,7 -> 1 | 10,6,7 -> 1 | 10,7,7 -> tie: 1
  rig.run();
  EXPECT_EQ(routes(rig.rec), (std::vector<int>{0, 1, 2, 1, 1, 1}));
}

// Generated tokens count, and finished requests stop counting. At 3 ms
// instance 0 holds a 2-token prompt that has produced 2 tokens (load 4) and
// instance 1 a 3-token prompt still prefilling (load 3): the request goes
// to instance 1, although instance 0 has the smaller prompt sum. Once
// everything has finished the loads are 0 again.
TEST(Routers, LeastLoadedCountsGeneratedTokensAndForgetsFinished) {
  const std::vector<RequestSpec> reqs = {req(0, 2, 20), req(2.5, 3, 20), req(3.0, 1, 1), req(100.0, 1, 1)};
  Rig rig(tinyInstance(100, 1), reqs, fcfs(), RouterKind::LeastLoaded, 2);
  rig.sim->run(ms(2.9));  // instance 0: tokens at 1.2, 2.3; instance 1: prefill [2.5, 3.8]
  EXPECT_EQ(rig.sim->instance(0).assignedTokens(), 2 + 2);
  EXPECT_EQ(rig.sim->instance(1).assignedTokens(), 3);
  rig.run();
  EXPECT_EQ(routes(rig.rec), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(rig.sim->instance(0).assignedTokens(), 0);
  EXPECT_EQ(rig.sim->instance(1).assignedTokens(), 0);
}

// Smallest KV footprint (GPU blocks held). Instance 1 receives a 15-token
// prompt at 3 µs that is not yet admitted (its first iteration runs until
// 1.3 ms), so its footprint stays 3 blocks while its assigned tokens are 18:
// least-kv sends the next request to 1, least-loaded to 2.
TEST(Routers, LeastKvPicksSmallestFootprint) {
  const std::vector<RequestSpec> reqs = {req(0, 10, 1), req(0.001, 3, 1), req(0.002, 6, 1), req(0.003, 15, 1),
                                         req(0.004, 1, 1)};
  Rig kv(tinyInstance(20, 1), reqs, fcfs(), RouterKind::LeastKv, 3);
  kv.sim->run(ms(0.0035));
  EXPECT_EQ(kv.sim->instance(0).kvFootprintBlocks(), 10);
  EXPECT_EQ(kv.sim->instance(1).kvFootprintBlocks(), 3);
  EXPECT_EQ(kv.sim->instance(2).kvFootprintBlocks(), 6);
  EXPECT_EQ(kv.sim->instance(1).assignedTokens(), 18);
  kv.run();
  EXPECT_EQ(routes(kv.rec), (std::vector<int>{0, 1, 2, 1, 1}));

  Rig ll(tinyInstance(20, 1), reqs, fcfs(), RouterKind::LeastLoaded, 3);
  ll.run();
  EXPECT_EQ(routes(ll.rec), (std::vector<int>{0, 1, 2, 1, 2}));
}

// Swapped-out blocks count in the footprint (GPU + CPU).
TEST(Routers, LeastKvCountsSwappedBlocks) {
  // Instance 0: A and B grow until B is swapped out at 2.9 ms (the FCFS
  // victim timeline of test_fcfs.cpp): footprint 6 GPU + 4 CPU = 10.
  // Instance 1 gets a 7-token prompt at 0.5 µs that holds 9 blocks from its
  // second decode on (2.8 ms). A request at 3 ms goes to instance 1 (9 < 10),
  // although instance 0 holds only 6 GPU blocks.
  const std::vector<RequestSpec> reqs = {req(0, 4, 4), req(0.0005, 7, 3), req(0.1, 4, 4), req(3.0, 1, 1)};
  InstanceConfig ic = tinyInstance(10, 1);
  // Route 0 -> 0, 1 -> 1 (empty), 2 -> 0 (footprint 4 < 7), 3 -> see above.
  Rig rig(ic, reqs, fcfs(), RouterKind::LeastKv, 2);
  rig.sim->run(ms(2.95));
  EXPECT_EQ(rig.sim->instance(0).gpuBlocksUsed(), 6);
  EXPECT_EQ(rig.sim->instance(0).cpuBlocksUsed(), 4);
  EXPECT_EQ(rig.sim->instance(0).kvFootprintBlocks(), 10);
  EXPECT_EQ(rig.sim->instance(1).kvFootprintBlocks(), 9);
  rig.run();
  EXPECT_EQ(routes(rig.rec), (std::vector<int>{0, 1, 0, 1}));
}

std::vector<int> runRoutes(RouterKind k, std::uint64_t seed, const std::vector<RequestSpec>& reqs, int n) {
  Rig rig(tinyInstance(1000, 1), reqs, fcfs(), k, n, seed);
  rig.run();
  return routes(rig.rec);
}

// Random: one uniform draw per request from the "router" stream of the
// run's seed; the same seed gives the same routes, another seed others.
TEST(Routers, RandomIsSeededAndDeterministic) {
  std::vector<int> inputs;
  for (int i = 0; i < 40; ++i) inputs.push_back(1 + (i * 7) % 13);
  const auto reqs = burst(inputs);
  const auto a = runRoutes(RouterKind::Random, 7, reqs, 4);
  EXPECT_EQ(a, runRoutes(RouterKind::Random, 7, reqs, 4));
  EXPECT_NE(a, runRoutes(RouterKind::Random, 8, reqs, 4));
  Rng g = Rng::forStream(7, "router");
  std::vector<int> expected;
  for (std::size_t i = 0; i < reqs.size(); ++i) expected.push_back(static_cast<int>(g.below(4)));
  EXPECT_EQ(a, expected);
  std::vector<int> count(4, 0);
  for (int i : a) ++count[static_cast<std::size_t>(i)];
  for (int c : count) EXPECT_GT(c, 0);
}

// Power of two choices: two draws from the "router" stream, the one with
// fewer assigned tokens wins (ties: lower index). Replayed here with the
// same stream and the loads of a t = 0 burst (sums of prompts).
TEST(Routers, PowerOfTwoPicksLessLoadedOfItsTwoDraws) {
  std::vector<int> inputs;
  for (int i = 0; i < 40; ++i) inputs.push_back(1 + (i * 7) % 13);
  const auto reqs = burst(inputs);
  for (std::uint64_t seed : {1ull, 7ull, 12345ull}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto got = runRoutes(RouterKind::PowerOfTwo, seed, reqs, 4);
    EXPECT_EQ(got, runRoutes(RouterKind::PowerOfTwo, seed, reqs, 4));
    Rng g = Rng::forStream(seed, "router");
    std::vector<std::int64_t> load(4, 0);
    std::vector<int> expected;
    int secondWon = 0, notGlobalMin = 0;
    for (const RequestSpec& r : reqs) {
      const auto a = static_cast<std::size_t>(g.below(4));
      const auto b = static_cast<std::size_t>(g.below(4));
      const std::size_t pick = load[b] < load[a] || (load[b] == load[a] && b < a) ? b : a;
      secondWon += pick != a;
      notGlobalMin += load[pick] > *std::min_element(load.begin(), load.end());
      expected.push_back(static_cast<int>(pick));
      load[pick] += r.input;
    }
    EXPECT_EQ(got, expected);
    EXPECT_GT(secondWon, 0);     // the second draw matters ...
    EXPECT_GT(notGlobalMin, 0);  // ... and it is not least-loaded
  }
  EXPECT_NE(runRoutes(RouterKind::PowerOfTwo, 1, reqs, 4), runRoutes(RouterKind::PowerOfTwo, 2, reqs, 4));
}

TEST(Routers, NamesRoundTrip) {
  for (RouterKind k : {RouterKind::RoundRobin, RouterKind::LeastLoaded, RouterKind::LeastKv, RouterKind::Random,
                       RouterKind::PowerOfTwo}) {
    EXPECT_EQ(parseRouter(routerId(k)), k);
    EXPECT_STREQ(RouterPolicy(k).name(), routerId(k));
  }
}

}  // namespace
}  // namespace sl::test
