// The size-bucket router (issue 49 item 4b, docs/policies/baselines.md "Routers"):
// Mélange's allocation of request-size buckets to GPU types, by hand on a
// small case; each bucket routed where the allocation puts it; bad use
// named.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "engine/simulator.h"
#include "policy/routers.h"
#include "run/run.h"
#include "scenario/scenario_io.h"

#include "../common/input_error.h"

namespace sl {
namespace {

using testutil::errorOf;

TEST(SizeBucket, BucketIndex) {
  EXPECT_EQ(sizeBucket(1, 1), 0);
  EXPECT_EQ(sizeBucket(15, 15), 0);
  EXPECT_EQ(sizeBucket(16, 1), kSizeBucketsPerSide);            // input 16-31, output < 16
  EXPECT_EQ(sizeBucket(100, 40), 3 * kSizeBucketsPerSide + 2);  // 64-127 x 32-63
  EXPECT_EQ(sizeBucket(1 << 20, 1 << 20), kSizeBucketsPerSide * kSizeBucketsPerSide - 1);
  const auto [in, out] = sizeBucketLengths(3 * kSizeBucketsPerSide + 2);
  EXPECT_NEAR(in, 64 * std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(out, 32 * std::sqrt(2.0), 1e-9);
}

// Two buckets, two pools (1 instance each): pool 0 at $1/h, pool 1 at $8/h.
// Bucket 0: 10 req/s on pool 0, 40 on pool 1 -> $0.1 against $0.2 per
// req/s-hour: pool 0. Bucket 1: 1 against 20 -> $1 against $0.4: pool 1.
TEST(SizeBucket, AssignmentByHand) {
  const std::vector<std::vector<BucketPerf>> perf = {{{10, 8, true}, {40, 64, true}}, {{1, 2, true}, {20, 32, true}}};
  const std::vector<int> n = {1, 1};
  const std::vector<double> usd = {1, 8};
  // Light load: each bucket on its cheapest pool; utilisation 5/10, 4/20.
  BucketAssignment a = assignBuckets({5, 4}, perf, n, usd);
  EXPECT_EQ(a.share[0], (std::vector<double>{1, 0}));
  EXPECT_EQ(a.share[1], (std::vector<double>{0, 1}));
  EXPECT_DOUBLE_EQ(a.utilization[0], 0.5);
  EXPECT_DOUBLE_EQ(a.utilization[1], 0.2);
  // 15 req/s of bucket 0 overfill pool 0 (1.5): the excess 5 req/s (0.5 of
  // its 10) moves to pool 1 (the only move, cost ratio 2): bucket 0 splits
  // 10 : 5, pool 1 at 0.2 + 5/40.
  a = assignBuckets({15, 4}, perf, n, usd);
  EXPECT_NEAR(a.share[0][0], 2.0 / 3, 1e-12);
  EXPECT_NEAR(a.share[0][1], 1.0 / 3, 1e-12);
  EXPECT_EQ(a.share[1], (std::vector<double>{0, 1}));
  EXPECT_NEAR(a.utilization[0], 1.0, 1e-12);
  EXPECT_NEAR(a.utilization[1], 0.325, 1e-12);
  // Two instances in pool 0 carry the 15 req/s: no move.
  a = assignBuckets({15, 4}, perf, {2, 1}, usd);
  EXPECT_EQ(a.share[0], (std::vector<double>{1, 0}));
  EXPECT_DOUBLE_EQ(a.utilization[0], 0.75);
  // A pool missing the SLO for a bucket is passed over however cheap.
  const std::vector<std::vector<BucketPerf>> slow = {{{10, 1, false}, {40, 64, true}}};
  a = assignBuckets({1}, slow, n, usd);
  EXPECT_EQ(a.share[0], (std::vector<double>{0, 1}));
}

// The throughput of a bucket: the largest batch whose effective time per
// token (a step of the decodes plus batch x input / output prompt tokens)
// meets the SLO.
TEST(SizeBucket, ThroughputIsTheLargestBatchWithinTheSlo) {
  nlohmann::json j = {{"schema_version", 1}, {"model", "llama-3.1-8b"}, {"cluster", {{"gpu", "a100-80g"}}}};
  const Scenario s = parseScenario(j, "sb.json");
  const auto cost = makeCostModel(s);
  const double in = 500, out = 100, tpot = 0.04;
  const BucketPerf p = bucketThroughput(*cost, in, out, tpot, 1e6, 256);
  ASSERT_TRUE(p.meetsSlo);
  ASSERT_GT(p.batch, 1);
  ASSERT_LT(p.batch, 256);
  const auto eff = [&](int b) {
    BatchShape d;
    for (int k = 0; k < b; ++k) addDecodeSeq(d, in + out / 2);
    addPrefillChunk(d, b * in / out);
    return cost->iterationSeconds(d);
  };
  EXPECT_LE(eff(p.batch), tpot);
  EXPECT_GT(eff(p.batch + 1), tpot);
  EXPECT_DOUBLE_EQ(p.rps, p.batch / (out * eff(p.batch)));
  // KV room for 10 such requests caps the batch at 10.
  EXPECT_EQ(bucketThroughput(*cost, in, out, tpot, 10 * (in + out), 256).batch, 10);
  // An SLO nothing meets: one request alone, flagged.
  const BucketPerf none = bucketThroughput(*cost, in, out, 1e-4, 1e6, 256);
  EXPECT_FALSE(none.meetsSlo);
  EXPECT_EQ(none.batch, 1);
}

// The H100 priced at $16/h (not its list price) so that the cheap L4s win
// the small buckets at a 100 ms TPOT; the allocation, not the price, is
// under test.
constexpr double kH100Usd = 16;

nlohmann::json mixed(int input, int answer, const std::string& router = "size-bucket") {
  return {{"schema_version", 1},
          {"model", "llama-3.1-8b"},
          {"cluster",
           {{"pools",
             {{{"gpu", "l4-24g"}, {"instances", 2}, {"price_usd_per_gpu_hour", 0.8048}},
              {{"gpu", "h100-sxm-80g"}, {"instances", 1}, {"price_usd_per_gpu_hour", kH100Usd}}}}}},
          {"workload",
           {{"arrival", {{"process", "poisson"}, {"rate", 0.5}}},
            {"input_tokens", {{"dist", "constant"}, {"value", input}}},
            {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
            {"answer_tokens", {{"dist", "constant"}, {"value", answer}}},
            {"requests", 30}}},
          {"slo", {{"ttft_s", 1.0}, {"tpot_s", 0.1}}},
          {"policy", {{"id", "fcfs"}, {"router", router}}},
          {"run", {{"seed", 3}}}};
}

/// Pools (0: L4, 1: H100) the run's requests went to.
std::set<int> poolsUsed(const nlohmann::json& j) {
  auto run = prepareRun(parseScenario(j, "sb.json"), "sb.json");
  while (run->simulator->step()) {
  }
  std::set<int> used;
  for (const RequestRecord r : run->simulator->records()) used.insert(run->simulator->poolOf(r.instance));
  return used;
}

/// The pool the allocation picks for one request size at light load, from
/// each pool's own cost model, KV room and price.
int assignedPool(const nlohmann::json& j, int input, int answer) {
  auto run = prepareRun(parseScenario(j, "sb.json"), "sb.json");
  const Simulator& sim = *run->simulator;
  const auto [in, out] = sizeBucketLengths(sizeBucket(input, answer));
  std::vector<BucketPerf> perf;
  for (int i : {0, 2}) {  // an L4 instance, the H100 instance
    const InstanceConfig& c = sim.instance(i).config();
    perf.push_back(bucketThroughput(sim.instance(i).cost(), in, out, 0.1,
                                    static_cast<double>(c.gpuBlocks) * c.blockSize, c.maxNumSeqs));
  }
  const BucketAssignment a = assignBuckets({0.0}, {perf}, {2, 1}, {0.8048, kH100Usd});
  return a.share[0][0] == 1 ? 0 : 1;
}

// Short requests go to the cheap L4s, long ones to the H100, each where the
// allocation puts its bucket.
TEST(SizeBucket, RoutesEachBucketWhereAssigned) {
  const int small = assignedPool(mixed(20, 8), 20, 8), large = assignedPool(mixed(6000, 1000), 6000, 1000);
  EXPECT_EQ(small, 0);
  EXPECT_EQ(large, 1);
  EXPECT_EQ(poolsUsed(mixed(20, 8)), (std::set<int>{small}));
  EXPECT_EQ(poolsUsed(mixed(6000, 1000)), (std::set<int>{large}));
}

// Many sizes at light load: once the rate estimate has settled (after the
// first 64 arrivals) every request goes to its bucket's cheapest pool, also
// a bucket first seen late.
TEST(SizeBucket, EveryBucketToItsCheapestPool) {
  nlohmann::json j = mixed(20, 8);
  j["workload"]["input_tokens"] = {{"dist", "uniform"}, {"min", 8}, {"max", 3000}};
  j["workload"]["answer_tokens"] = {{"dist", "uniform"}, {"min", 4}, {"max", 700}};
  j["workload"]["requests"] = 300;
  auto run = prepareRun(parseScenario(j, "sb.json"), "sb.json");
  while (run->simulator->step()) {
  }
  const Simulator& sim = *run->simulator;
  std::set<int> pools;
  int checked = 0;
  for (const RequestRecord r : sim.records()) {
    if (r.id < 64) continue;
    const auto [in, out] = sizeBucketLengths(sizeBucket(r.input, static_cast<int>(r.outputTokens())));
    std::vector<BucketPerf> perf;
    for (int i : {0, 2}) {
      const InstanceConfig& c = sim.instance(i).config();
      perf.push_back(bucketThroughput(sim.instance(i).cost(), in, out, 0.1,
                                      static_cast<double>(c.gpuBlocks) * c.blockSize, c.maxNumSeqs));
    }
    const int want = assignBuckets({0.0}, {perf}, {2, 1}, {0.8048, kH100Usd}).share[0][0] == 1 ? 0 : 1;
    EXPECT_EQ(sim.poolOf(r.instance), want)
        << "request " << r.id << ": " << r.input << " in, " << r.outputTokens() << " out";
    pools.insert(want);
    ++checked;
  }
  EXPECT_EQ(checked, 236);
  EXPECT_EQ(pools, (std::set<int>{0, 1}));  // both pools have buckets of their own
}

TEST(SizeBucket, BadUseIsNamed) {
  nlohmann::json one = mixed(20, 8);
  one["cluster"] = {{"gpu", "h100-sxm-80g"}, {"instances", 2}};
  EXPECT_EQ(errorOf([&] { prepareRun(parseScenario(one, "sb.json"), "sb.json"); }),
            "sb.json: policy.router: size-bucket routes between mixed pools; give cluster.pools two or more pools");
  const std::string typo =
      errorOf([&] { prepareRun(parseScenario(mixed(20, 8, "size-buckets"), "sb.json"), "sb.json"); });
  EXPECT_NE(typo.find("policy.router: unknown router 'size-buckets' (did you mean 'size-bucket'?)"), std::string::npos)
      << typo;
}

}  // namespace
}  // namespace sl
