// core/plan: the deployment search (docs/sweeps.md "Deployment search").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>

#include "cost/pricing.h"
#include "plan/plan.h"
#include "scenario/scenario_io.h"
#include "sweep/capacity.h"
#include "util/error.h"

namespace sl::plan {
namespace {

// Llama-3.1-8B, 1 K-token prompts and 128-token answers (every request
// alike), Poisson arrivals, TTFT <= 0.5 s and TPOT <= 50 ms: small runs.
Scenario smallScenario(int requests = 300) {
  Scenario s;
  s.model = "llama-3.1-8b";
  s.workload.input_tokens.kind = LengthDist::Kind::Constant;
  s.workload.input_tokens.value = 1024;
  s.workload.answer_tokens.kind = LengthDist::Kind::Constant;
  s.workload.answer_tokens.value = 128;
  s.workload.reasoning_tokens.kind = LengthDist::Kind::Constant;
  s.workload.reasoning_tokens.value = 0;
  s.workload.requests = requests;
  s.slo.ttft_s = 0.5;
  s.slo.tpot_s = 0.05;
  s.policy.id = "fcfs";
  validateScenario(s, "test");
  return s;
}

PlanOptions homogeneousOnly(double rate, std::vector<std::string> gpus, int maxGpus) {
  PlanOptions o;
  o.rate = rate;
  o.gpus = std::move(gpus);
  o.maxGpus = maxGpus;
  o.tps = {1};
  o.mixed = false;
  o.jobs = 2;
  return o;
}

std::optional<std::size_t> find(const PlanResult& r, const std::string& deployment) {
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].deployment() == deployment) return i;
  return std::nullopt;
}

// The known optimum, found another way: for each GPU the fewest instances
// meeting the target (the capacity planner's bisection, sweep::minInstances,
// run on the same scenario), then the cheaper of the two by list price. The
// plan must return exactly that deployment, and one instance fewer of it
// must miss the target.
TEST(Plan, ReturnsTheKnownOptimumOfASmallCase) {
  for (double rate : {10.0, 20.0}) {
    SCOPED_TRACE("rate " + std::to_string(rate));
    const PlanOptions o = homogeneousOnly(rate, {"l40s-48g", "h100-sxm-80g"}, 8);
    const PlanResult r = runPlan(smallScenario(), o);
    ASSERT_TRUE(r.winner.has_value());

    std::string bestDeployment;
    double bestCost = 1e300;
    for (const std::string gpu : {"l40s-48g", "h100-sxm-80g"}) {
      Scenario s = r.base;  // at the plan's rate
      s.cluster.gpu = gpu;
      sweep::CapacityOptions co;
      co.target = o.target;
      co.maxInstances = 8;
      const sweep::InstanceCapacity ic = sweep::minInstances(s, std::nullopt, co, "test");
      ASSERT_TRUE(ic.minInstances.has_value()) << gpu;
      const double cost = *ic.minInstances * gpuPrice(gpu)->usdPerGpuHour;
      if (cost < bestCost) {
        bestCost = cost;
        bestDeployment = std::to_string(*ic.minInstances) + "x " + gpu + "/tp1";
      }
    }
    const Candidate& w = r.candidates[*r.winner];
    EXPECT_EQ(w.deployment(), bestDeployment);
    EXPECT_NEAR(w.usdPerHour, bestCost, 1e-9);
    EXPECT_TRUE(r.outcomes[*r.winner].meets);
    // N - 1 of the winner's GPU misses the target (or is not there: N = 1).
    const int n = w.pools.front().instances;
    if (n > 1) {
      const auto fewer = find(r, std::to_string(n - 1) + "x " + w.pools.front().gpu + "/tp1");
      ASSERT_TRUE(fewer.has_value());
      // Simulated and missing, or pruned by the roofline; either way a run
      // of it misses.
      const Outcome& f = r.outcomes[*fewer];
      EXPECT_TRUE(f.status == Status::Pruned || (f.status == Status::Simulated && !f.meets));
      EXPECT_LT(sweep::sloAttainment(candidateScenario(r.base, r.candidates[*fewer]), "test"), o.target);
    }
  }
}

// Rate 10: two L40S ($3.72/h) beat one H100 ($6.88/h); one L40S misses.
TEST(Plan, TwoL40sBeatOneH100AtTenRequestsPerSecond) {
  const PlanResult r = runPlan(smallScenario(), homogeneousOnly(10, {"l40s-48g", "h100-sxm-80g"}, 4));
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_EQ(r.candidates[*r.winner].deployment(), "2x l40s-48g/tp1");
  const auto one = find(r, "1x l40s-48g/tp1");
  ASSERT_TRUE(one.has_value());
  EXPECT_FALSE(r.outcomes[*one].meets);
  const auto h100 = find(r, "1x h100-sxm-80g/tp1");
  ASSERT_TRUE(h100.has_value());
  EXPECT_TRUE(r.outcomes[*h100].meets);
}

void expectNonDominated(const PlanResult& r) {
  std::set<std::size_t> front(r.pareto.begin(), r.pareto.end());
  for (std::size_t i : r.pareto) {
    EXPECT_EQ(r.outcomes[i].status, Status::Simulated);
    for (std::size_t j = 0; j < r.candidates.size(); ++j) {
      if (j == i || r.outcomes[j].status != Status::Simulated) continue;
      const bool noWorse = r.candidates[j].usdPerHour <= r.candidates[i].usdPerHour &&
                           r.outcomes[j].attainment >= r.outcomes[i].attainment;
      const bool better = r.candidates[j].usdPerHour < r.candidates[i].usdPerHour ||
                          r.outcomes[j].attainment > r.outcomes[i].attainment;
      EXPECT_FALSE(noWorse && better) << r.candidates[j].deployment() << " dominates " << r.candidates[i].deployment();
    }
  }
  // And every simulated point off the front is dominated by one on it.
  for (std::size_t j = 0; j < r.candidates.size(); ++j) {
    if (r.outcomes[j].status != Status::Simulated || front.count(j)) continue;
    bool dominated = false;
    for (std::size_t i : r.pareto)
      dominated |= r.candidates[i].usdPerHour <= r.candidates[j].usdPerHour &&
                   r.outcomes[i].attainment >= r.outcomes[j].attainment;
    EXPECT_TRUE(dominated) << r.candidates[j].deployment();
  }
}

TEST(Plan, ParetoFrontIsNonDominatedAndHoldsTheCheapestFeasible) {
  PlanOptions o = homogeneousOnly(20, {"l40s-48g", "h100-sxm-80g", "a100-80g"}, 6);
  o.mixed = true;
  o.tps = {1, 2};
  const PlanResult r = runPlan(smallScenario(), o);
  ASSERT_TRUE(r.winner.has_value());
  ASSERT_FALSE(r.pareto.empty());
  expectNonDominated(r);
  EXPECT_NE(std::find(r.pareto.begin(), r.pareto.end(), *r.winner), r.pareto.end());
  // Sorted by cost.
  for (std::size_t k = 1; k < r.pareto.size(); ++k)
    EXPECT_LE(r.candidates[r.pareto[k - 1]].usdPerHour, r.candidates[r.pareto[k]].usdPerHour);
}

// The front's definition on random points (ties in cost and attainment
// included): non-dominated, and complete.
TEST(Plan, ParetoFrontPropertyOnRandomPoints) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    PlanResult r;
    const int n = 1 + static_cast<int>(rng() % 40);
    std::vector<std::size_t> idx;
    for (int i = 0; i < n; ++i) {
      Candidate c;
      c.usdPerHour = static_cast<double>(rng() % 10);
      Outcome o;
      o.attainment = static_cast<double>(rng() % 5) / 4.0;
      r.candidates.push_back(c);
      r.outcomes.push_back(o);
      idx.push_back(static_cast<std::size_t>(i));
    }
    r.pareto = paretoFront(r.candidates, r.outcomes, idx);
    expectNonDominated(r);
  }
}

// Pruning (roofline and cost bound) never removes a candidate that would
// meet the target: the search without pruning simulates every candidate that
// fits; every one it finds meeting the target is simulated with pruning too,
// and the answers agree.
TEST(Plan, PruningNeverRemovesAFeasibleCandidate) {
  for (double rate : {10.0, 20.0, 40.0}) {
    SCOPED_TRACE("rate " + std::to_string(rate));
    PlanOptions o = homogeneousOnly(rate, {"l40s-48g", "h100-sxm-80g", "a100-40g"}, 6);
    o.tps = {1, 2};
    o.mixed = true;
    const PlanResult on = runPlan(smallScenario(), o);
    o.prune = false;
    const PlanResult off = runPlan(smallScenario(), o);
    ASSERT_EQ(on.candidates.size(), off.candidates.size());
    std::size_t roofline = 0;
    for (std::size_t i = 0; i < on.candidates.size(); ++i) {
      if (on.outcomes[i].status == Status::Pruned) ++roofline;
      if (off.outcomes[i].status != Status::Simulated) continue;
      if (on.outcomes[i].status == Status::Pruned) {
        EXPECT_FALSE(off.outcomes[i].meets) << "pruned but feasible: " << on.candidates[i].deployment();
      }
      if (on.outcomes[i].status == Status::Simulated) {
        EXPECT_EQ(on.outcomes[i].attainment, off.outcomes[i].attainment);  // same run
      }
    }
    EXPECT_EQ(on.winner, off.winner);
    EXPECT_GT(off.simulated, on.simulated);
    if (rate >= 20) {
      EXPECT_GT(roofline, 0u) << "the roofline bound pruned nothing";
    }
  }
}

TEST(Plan, DeterministicAcrossThreadCounts) {
  PlanOptions o = homogeneousOnly(20, {"l40s-48g", "h100-sxm-80g"}, 4);
  o.tps = {1, 2};
  o.mixed = true;
  o.jobs = 1;
  const PlanResult a = runPlan(smallScenario(), o);
  o.jobs = 3;
  const PlanResult b = runPlan(smallScenario(), o);
  EXPECT_EQ(candidatesCsv(a), candidatesCsv(b));
  EXPECT_EQ(paretoCsv(a), paretoCsv(b));
}

// The bound is a sum of instance capacities: n instances carry n times one.
TEST(Plan, RooflineLoadFallsAsOneOverInstances) {
  const PlanOptions o = homogeneousOnly(20, {"h100-sxm-80g"}, 4);
  Demand d;
  const Scenario base = scenarioAtRate(smallScenario(), o, &d);
  Candidate one, three, mixed;
  one.pools = {{"h100-sxm-80g", 1, 1}};
  three.pools = {{"h100-sxm-80g", 3, 1}};
  const double l1 = rooflineLoad(base, one, d), l3 = rooflineLoad(base, three, d);
  EXPECT_GT(l1, 0);
  EXPECT_NEAR(l3, l1 / 3, 1e-12);
  // Two pools colocated: capacities add.
  mixed.kind = Kind::Mixed;
  mixed.pools = {{"h100-sxm-80g", 1, 1}, {"h100-sxm-80g", 2, 1}};
  EXPECT_NEAR(rooflineLoad(base, mixed, d), l3, 1e-12);
  // The demand: 1024-token prompts, 128-token answers at ~20 req/s.
  EXPECT_NEAR(d.prefillTokensPerS / d.rate, 1024, 1e-9);
  EXPECT_NEAR(d.decodeTokensPerS / d.rate, 128, 1e-9);
  EXPECT_NEAR(d.decodeContextPerS / d.rate, 128 * 1024 + 128.0 * 127 / 2, 1e-6);
  // Prefill and decode pools each carry their side only: a prefill pool's
  // load is compute for the prompts alone, below the colocated one.
  Candidate pd;
  pd.kind = Kind::Disaggregated;
  pd.pools = {{"h100-sxm-80g", 1, 1, "prefill"}, {"h100-sxm-80g", 1, 1, "decode"}};
  EXPECT_LT(rooflineLoad(base, pd, d), l1);
}

// Prefill pool + decode pool candidates (cluster.pools[].role) run under
// static-pd; each side on either GPU.
TEST(Plan, DisaggregatedCandidatesRunUnderStaticPd) {
  PlanOptions o = homogeneousOnly(20, {"l40s-48g", "h100-sxm-80g"}, 4);
  o.homogeneous = false;
  o.disaggregated = true;
  o.prune = false;
  const PlanResult r = runPlan(smallScenario(), o);
  // (P, D) GPU pairs: 4; counts with nP + nD <= 4 GPUs at TP 1: 6 each.
  ASSERT_EQ(r.candidates.size(), 24u);
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const Candidate& c = r.candidates[i];
    EXPECT_EQ(c.kind, Kind::Disaggregated);
    EXPECT_EQ(c.policy, "static-pd");
    ASSERT_EQ(c.pools.size(), 2u);
    EXPECT_EQ(c.pools[0].role, "prefill");
    EXPECT_EQ(c.pools[1].role, "decode");
    EXPECT_EQ(r.outcomes[i].status, Status::Simulated) << c.deployment() << ": " << r.outcomes[i].reason;
  }
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_TRUE(r.outcomes[*r.winner].meets);
  const Scenario s = candidateScenario(r.base, r.candidates[*r.winner]);
  EXPECT_EQ(s.policy.id, "static-pd");
  EXPECT_EQ(s.cluster.pools.size(), 2u);
  EXPECT_EQ(s.cluster.pools[0].role, "prefill");
}

TEST(Plan, UnfitCandidatesAreReportedNotSimulated) {
  Scenario s = smallScenario();
  s.model = "llama-3.1-70b";
  PlanOptions o = homogeneousOnly(2, {"l40s-48g"}, 4);
  o.tps = {1, 4};
  const PlanResult r = runPlan(s, o);
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    if (r.candidates[i].pools[0].tp == 1) {
      EXPECT_EQ(r.outcomes[i].status, Status::Unfit);
      EXPECT_NE(r.outcomes[i].reason.find("tp"), std::string::npos) << r.outcomes[i].reason;
    }
  }
  EXPECT_EQ(r.unfit, 4u);
}

TEST(Plan, TraceIsTimeScaledToTheRate) {
  Scenario s = smallScenario();
  TraceSpec t;
  t.path = std::string(SERVELAB_SOURCE_DIR) + "/samples/traces/azure-chat-300.csv";
  s.workload.trace = t;
  PlanOptions o = homogeneousOnly(7, {"h100-sxm-80g"}, 2);
  Demand d;
  const Scenario at = scenarioAtRate(s, o, &d);
  ASSERT_TRUE(d.traceTimeScale.has_value());
  EXPECT_NEAR(*d.traceTimeScale, d.traceNativeRate / 7, 1e-12);
  EXPECT_NEAR(at.workload.trace->time_scale, *d.traceTimeScale, 1e-12);
  EXPECT_NEAR(d.rate, 7, 7 * 0.01);  // (n - 1) / span against n / last arrival
}

TEST(Plan, BudgetPicksTheMostGoodputPerDollarWithinIt) {
  PlanOptions o = homogeneousOnly(20, {"l40s-48g", "h100-sxm-80g"}, 8);
  o.budget = 10;
  const PlanResult r = runPlan(smallScenario(), o);
  ASSERT_TRUE(r.winner.has_value());
  const double best = r.outcomes[*r.winner].goodputPerUsd.value_or(0);
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    if (r.candidates[i].usdPerHour > 10) {
      EXPECT_EQ(r.outcomes[i].status, Status::OverBudget);
    } else if (r.outcomes[i].status == Status::Simulated) {
      EXPECT_LE(r.outcomes[i].goodputPerUsd.value_or(0), best);
    }
  }
}

TEST(Plan, NoFeasibleDeploymentListsTheClosestMisses) {
  PlanOptions o = homogeneousOnly(200, {"l40s-48g"}, 2);
  o.prune = false;
  const PlanResult r = runPlan(smallScenario(), o);
  EXPECT_FALSE(r.winner.has_value());
  ASSERT_FALSE(r.closestMisses.empty());
  for (std::size_t k = 1; k < r.closestMisses.size(); ++k)
    EXPECT_GE(r.outcomes[r.closestMisses[k - 1]].attainment, r.outcomes[r.closestMisses[k]].attainment);
}

TEST(Plan, ExplainSplitsTheTimeAndNamesTheBindingConstraint) {
  const PlanOptions o = homogeneousOnly(20, {"l40s-48g"}, 4);
  Demand d;
  const Scenario base = scenarioAtRate(smallScenario(), o, &d);
  Candidate c;
  c.pools = {{"l40s-48g", 3, 1}};
  c.policy = "fcfs";
  const Explanation x = explain(candidateScenario(base, c), c.deployment());
  EXPECT_GT(x.busyShare, 0);
  EXPECT_LE(x.busyShare, 1 + 1e-9);
  EXPECT_NEAR(x.prefillShareOfBusy + x.decodeShareOfBusy, 1, 1e-9);
  EXPECT_GT(x.prefillShareOfBusy, 0);
  EXPECT_GT(x.queueingMean, 0);
  EXPECT_LE(x.queueingMean, x.ttftMean);
  EXPECT_FALSE(x.binding.empty());
  // Three L40S reach 44 % attainment: every TTFT is met (p99 ~0.29 s), but
  // batches of ~100 sequences with prefill chunks in them stretch the token
  // interval past 50 ms for most requests: the TPOT SLO binds.
  EXPECT_EQ(x.ttftViolations, 0);
  EXPECT_GT(x.tpotViolations, 100);
  EXPECT_NE(x.binding.find("TPOT"), std::string::npos) << x.binding;
  EXPECT_LT(x.attainment, 0.9);
}

// Mixed and disaggregated pools take their TPs independently over --tp
// (where the model fits): for two GPUs at TP 1 or 2 within 4 GPUs, the
// (tp_a, tp_b) pairs (1,1), (1,2), (2,1), (2,2) allow 6, 2, 2 and 1 count
// pairs with n_a·tp_a + n_b·tp_b <= 4.
TEST(Plan, MixedAndDisaggregatedPoolsTakeTheirTpIndependently) {
  PlanOptions o = homogeneousOnly(10, {"l40s-48g", "h100-sxm-80g"}, 4);
  o.tps = {1, 2};
  o.homogeneous = false;
  o.mixed = true;
  o.disaggregated = true;
  const Scenario base = scenarioAtRate(smallScenario(), o);
  const std::vector<Candidate> c = enumerateCandidates(base, o);
  std::map<std::pair<int, int>, int> mixed, disagg;
  for (const Candidate& x : c) {
    ASSERT_EQ(x.pools.size(), 2u);
    EXPECT_LE(x.gpus, 4);
    (x.kind == Kind::Mixed ? mixed : disagg)[{x.pools[0].tp, x.pools[1].tp}]++;
  }
  EXPECT_EQ(mixed, (std::map<std::pair<int, int>, int>{{{1, 1}, 6}, {{1, 2}, 2}, {{2, 1}, 2}, {{2, 2}, 1}}));
  // Disaggregated: 4 (prefill GPU, decode GPU) pairs, each with those counts.
  EXPECT_EQ(disagg, (std::map<std::pair<int, int>, int>{{{1, 1}, 24}, {{1, 2}, 8}, {{2, 1}, 8}, {{2, 2}, 4}}));
  // A TP at which the model does not fit is not offered to a pool: the 70B
  // model fits an L40S only from TP 4 and an H100 from TP 2.
  Scenario big = smallScenario();
  big.model = "llama-3.1-70b";
  o.tps = {1, 2, 4};
  o.maxGpus = 8;
  o.disaggregated = false;
  for (const Candidate& x : enumerateCandidates(scenarioAtRate(big, o), o)) {
    EXPECT_GE(x.pools[0].tp, 4) << x.deployment();
    EXPECT_GE(x.pools[1].tp, 2) << x.deployment();
  }
}

// A known optimum that needs different TPs on its two pools. 8 K-token
// prompts on Llama-3.1-8B take 0.21 s to prefill on one H100 (TP 1) and
// ~0.12 s on two (TP 2): with TTFT <= 0.2 s a TP 1 prefill pool misses every
// request, whatever its count, so the prefill pool must be TP 2 (two
// instances for the queueing at 2 req/s), while the 64-token answers need
// one TP 1 decode instance (TPOT p99 ~13 ms against 50 ms). One TP for both
// pools (the smallest that fits, TP 1) finds nothing; TP 2 for both costs
// one GPU more.
TEST(Plan, DisaggregatedOptimumTakesDifferentTpsForItsPools) {
  Scenario s = smallScenario(200);
  s.workload.input_tokens.value = 8192;
  s.workload.answer_tokens.value = 64;
  s.slo.ttft_s = 0.2;
  PlanOptions o = homogeneousOnly(2, {"h100-sxm-80g"}, 6);
  o.homogeneous = false;
  o.disaggregated = true;
  o.tps = {1, 2};
  o.prune = false;
  const PlanResult all = runPlan(s, o);
  ASSERT_TRUE(all.winner.has_value());
  const Candidate& w = all.candidates[*all.winner];
  EXPECT_EQ(w.deployment(), "P 2x h100-sxm-80g/tp2 + D 1x h100-sxm-80g/tp1");
  EXPECT_EQ(w.gpus, 5);
  for (std::size_t i = 0; i < all.candidates.size(); ++i)
    if (all.candidates[i].pools[0].tp == 1) {
      EXPECT_EQ(all.outcomes[i].attainment, 0) << all.candidates[i].deployment();  // prefill too slow
    }
  // Pruned, the same answer.
  o.prune = true;
  EXPECT_EQ(runPlan(s, o).winner, all.winner);
  // One TP for both pools: TP 1 finds nothing, TP 2 costs a GPU more.
  o.tps = {1};
  EXPECT_FALSE(runPlan(s, o).winner.has_value());
  o.tps = {2};
  const PlanResult tp2 = runPlan(s, o);
  ASSERT_TRUE(tp2.winner.has_value());
  EXPECT_EQ(tp2.candidates[*tp2.winner].deployment(), "P 2x h100-sxm-80g/tp2 + D 1x h100-sxm-80g/tp2");
  EXPECT_GT(tp2.candidates[*tp2.winner].usdPerHour, w.usdPerHour);
}

// Sharded search: N shards, merged, give the one-process plan's outcomes,
// winner, front and files (plan.json but for wall_s), whatever N.
TEST(Plan, MergedShardsGiveTheOneProcessPlan) {
  PlanOptions o = homogeneousOnly(20, {"l40s-48g", "h100-sxm-80g", "a100-40g"}, 6);
  o.tps = {1, 2};
  o.mixed = true;
  o.disaggregated = true;
  const PlanResult one = runPlan(smallScenario(), o);
  ASSERT_TRUE(one.winner.has_value());
  std::size_t costBound = 0;
  for (const Outcome& x : one.outcomes) costBound += x.status == Status::CostBound;
  ASSERT_GT(costBound, 0u) << "the case should exercise the cost bound";
  auto withoutWall = [](nlohmann::ordered_json j) {
    j.erase("wall_s");
    return j.dump();
  };
  for (int n : {1, 3, 4}) {
    SCOPED_TRACE("shards " + std::to_string(n));
    std::vector<std::pair<std::string, nlohmann::json>> recs;
    std::size_t simulated = 0;
    for (int k = n - 1; k >= 0; --k) {  // any order
      PlanShardReport rep;
      const auto rec = runPlanShard(smallScenario(), o, k, n, {}, nullptr, &rep);
      simulated += rep.simulated;
      // Through text, as the files carry it.
      recs.emplace_back(planShardFileName(k, n), nlohmann::json::parse(rec.dump(1)));
    }
    EXPECT_GE(simulated, one.simulated);  // shards' own bounds are looser
    PlanOptions merged;
    const PlanResult m = mergePlanShards(recs, &merged);
    EXPECT_EQ(m.winner, one.winner);
    EXPECT_EQ(m.pareto, one.pareto);
    EXPECT_EQ(m.simulated, one.simulated);
    EXPECT_EQ(candidatesCsv(m), candidatesCsv(one));
    EXPECT_EQ(paretoCsv(m), paretoCsv(one));
    EXPECT_EQ(withoutWall(planJson(m, merged)), withoutWall(planJson(one, o)));
  }
}

TEST(Plan, MergeRejectsMissingDuplicateAndForeignShards) {
  PlanOptions o = homogeneousOnly(20, {"l40s-48g", "h100-sxm-80g"}, 3);
  auto shard = [&](const PlanOptions& opt, int k, int n) {
    return std::make_pair("dir" + std::to_string(k) + "/" + planShardFileName(k, n),
                          nlohmann::json::parse(runPlanShard(smallScenario(), opt, k, n).dump()));
  };
  auto expectError = [](const std::vector<std::pair<std::string, nlohmann::json>>& recs, const std::string& what) {
    try {
      (void)mergePlanShards(recs);
      ADD_FAILURE() << "no error; expected " << what;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const auto s0 = shard(o, 0, 3), s1 = shard(o, 1, 3), s2 = shard(o, 2, 3);
  EXPECT_NO_THROW((void)mergePlanShards({s0, s1, s2}));
  expectError({s0, s2}, "shard 1/3 is missing");
  expectError({s0, s1, s2, s1}, "shard 1/3 appears twice");
  PlanOptions other = o;
  other.rate = 21;
  expectError({s0, shard(other, 1, 3), s2}, "dir1/plan-shard-1-of-3.json: belongs to another plan");
  expectError({s0, s1, s2, shard(o, 1, 4)}, "dir1/plan-shard-1-of-4.json: shard 1/4 does not fit");
  auto bad = s1;
  bad.second["outcomes"].erase(0);
  expectError({s0, bad, s2}, "dir1/plan-shard-1-of-3.json: shard 1/3 lacks candidate");
  bad = s1;
  bad.second.erase("format");
  expectError({s0, bad, s2}, "dir1/plan-shard-1-of-3.json: not a plan shard");
}

TEST(Plan, BadOptionsNameTheFlag) {
  auto expectError = [](PlanOptions o, const std::string& flag) {
    try {
      validatePlanOptions(o);
      ADD_FAILURE() << "no error for " << flag;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
    }
  };
  PlanOptions ok;
  ok.rate = 5;
  EXPECT_NO_THROW(validatePlanOptions(ok));
  PlanOptions o = ok;
  o.rate = 0;
  expectError(o, "--rate");
  o = ok;
  o.target = 1.01;
  expectError(o, "--target");
  o = ok;
  o.target = 0;
  expectError(o, "--target");
  o = ok;
  o.tps = {1, 3};
  expectError(o, "--tp");
  o = ok;
  o.gpus = {"h100-sxm"};
  expectError(o, "--gpus");
  o = ok;
  o.gpus = {"h20-141g"};  // no list price
  expectError(o, "--gpus");
  o = ok;
  o.maxGpus = 0;
  expectError(o, "--max-gpus");
  o = ok;
  o.policies = {"fcsf"};
  expectError(o, "--policies");
  o = ok;
  o.budget = -1;
  expectError(o, "--budget");
  // No candidates at all: TP 8 with at most 4 GPUs.
  o = ok;
  o.tps = {8};
  o.maxGpus = 4;
  o.mixed = false;
  EXPECT_THROW(runPlan(smallScenario(), o), InputError);
}

}  // namespace
}  // namespace sl::plan
