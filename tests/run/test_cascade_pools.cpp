// Issue 49 item 1 (CascadeInfer on mixed pools): CascadeInfer profiles each
// pool and its planner costs a stage on the instances it has (a stage on
// L40S costs what an L40S-only cluster's stage costs), "stage-k" pool roles
// pin the stages' instances (only the length cuts are planned), bad roles
// name their field, and the roles round-trip.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/simulator.h"
#include "policy/cascade/cascade_global.h"
#include "policy/cascade/planner.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {

nlohmann::json pool(const std::string& gpu, int n, const std::string& role = "") {
  nlohmann::json p = {{"gpu", gpu}, {"instances", n}};
  if (!role.empty()) p["role"] = role;
  return p;
}

nlohmann::json scenarioJson(const std::vector<nlohmann::json>& pools, const std::string& policy = "cascade",
                            int requests = 300) {
  return {{"schema_version", 1},
          {"cluster", {{"pools", pools}}},
          {"model", "llama-3.1-8b"},
          {"workload",
           {{"arrival", {{"process", "poisson"}, {"rate", 8.0}}},
            {"input_tokens", {{"dist", "lognormal"}, {"median", 1730}, {"p90", 5696}, {"max", 8141}}},
            {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
            {"answer_tokens", {{"dist", "lognormal"}, {"median", 415}, {"p90", 834}, {"max", 1024}}},
            {"requests", requests}}},
          {"policy", {{"id", policy}}},
          {"run", {{"seed", 3}}}};
}

Scenario parse(const nlohmann::json& j) {
  return parseScenario(j, "cascade-pools.json");
}

struct Ran {
  std::unique_ptr<PreparedRun> run;
  const CascadeGlobal& g() const { return dynamic_cast<const CascadeGlobal&>(run->simulator->globalPolicy()); }
};

// Prepared (start-up plan made); `finish` runs it to the end.
Ran prepare(const nlohmann::json& j, bool finish = false) {
  Ran r{prepareRun(parse(j), "cascade-pools.json")};
  if (finish) executeRun(*r.run, RunOptions{});
  return r;
}

const char* kL40s = "l40s-48g";
const char* kH100 = "h100-sxm-80g";

// A histogram with population in every bucket (hand-made requests).
LengthHistogram histogram() {
  std::vector<std::pair<std::int64_t, std::int64_t>> req;
  for (int k = 0; k < 200; ++k) req.emplace_back(100 + 37 * k, 50 + (k * 13) % 700);
  return buildHistogram(req, exponentialEdges(256, 8192), 120.0);
}

}  // namespace

// Each pool is profiled on its own GPU: the L40S pool's model is the one an
// L40S-only cluster fits, the H100 pool's the H100-only one, whichever pool
// comes first.
TEST(CascadePools, EachPoolIsProfiledOnItsOwnGpu) {
  const Ran l40s = prepare(scenarioJson({pool(kL40s, 2)}));
  const Ran h100 = prepare(scenarioJson({pool(kH100, 2)}));
  ASSERT_NE(l40s.g().qoe().d, h100.g().qoe().d);
  EXPECT_FALSE(l40s.g().mixedPools());
  for (const bool l40sFirst : {true, false}) {
    const Ran mixed = prepare(scenarioJson(l40sFirst ? std::vector<nlohmann::json>{pool(kL40s, 2), pool(kH100, 2)}
                                                     : std::vector<nlohmann::json>{pool(kH100, 2), pool(kL40s, 2)}));
    const CascadeGlobal& g = mixed.g();
    EXPECT_TRUE(g.mixedPools());
    const int l = l40sFirst ? 0 : 2, h = l40sFirst ? 2 : 0;
    for (int i : {l, l + 1}) EXPECT_EQ(g.qoeOf(i).d, l40s.g().qoe().d) << "instance " << i;
    for (int i : {h, h + 1}) EXPECT_EQ(g.qoeOf(i).d, h100.g().qoe().d) << "instance " << i;
    // The planner got each instance's model at its place in the planning order.
    const PlanCosts& pc = g.planCosts();
    ASSERT_EQ(pc.prefixD.size(), 5u);
    for (std::size_t pos = 0; pos < 4; ++pos)
      for (std::size_t k = 0; k < 5; ++k)
        EXPECT_NEAR(pc.prefixD[pos + 1][k] - pc.prefixD[pos][k], g.qoeOf(g.planOrder()[pos]).d[k],
                    1e-12 * std::abs(g.qoeOf(g.planOrder()[pos]).d[k]) + 1e-300);
    // The report has the second pool's model.
    std::vector<PolicyReportEntry> rep;
    g.report(rep);
    const auto it = std::find_if(rep.begin(), rep.end(), [](const auto& e) { return e.key == "pool1/qoe_model/D4"; });
    ASSERT_NE(it, rep.end());
    EXPECT_EQ(it->value, g.qoeOf(2).d[4]);
  }
}

// A stage on L40S instances costs what the same stage costs on an L40S-only
// cluster, one on H100s the H100 cost, and one straddling the two pools half
// of each (the population is spread evenly: Σ_i Q_i^B(f / m)).
TEST(CascadePools, StageCostIsThatOfItsInstancesPool) {
  const QoeModel qL = prepare(scenarioJson({pool(kL40s, 1)})).g().qoe();
  const QoeModel qH = prepare(scenarioJson({pool(kH100, 1)})).g().qoe();
  const LengthHistogram h = histogram();
  ASSERT_GE(h.buckets(), 4);
  PlanCosts mixed{qH, 0.0, {}};
  setInstanceModels(mixed, {qH, qH, qL, qL});
  const PlanCosts onlyL{qL, 0.0, {}}, onlyH{qH, 0.0, {}};
  for (int a = 0; a + 1 < h.buckets(); ++a) {
    const int b = a + 2;
    const double costL = stageCost(h, onlyL, a, b, 2), costH = stageCost(h, onlyH, a, b, 2);
    ASSERT_GT(costL, 0);
    EXPECT_GT(costL, costH);  // the L40S is the slower GPU
    EXPECT_NEAR(stageCost(h, mixed, a, b, 2, 2), costL, 1e-12 * costL);
    EXPECT_NEAR(stageCost(h, mixed, a, b, 2, 0), costH, 1e-12 * costH);
    EXPECT_NEAR(stageCost(h, mixed, a, b, 2, 1), (costL + costH) / 2, 1e-12 * costL);
  }
  // The exact DP on one pool's models is the single-pool plan.
  PlanCosts allL{qL, 0.0, {}};
  setInstanceModels(allL, {qL, qL, qL});
  const Plan p1 = planExact(h, onlyL, 3), p2 = planExact(h, allL, 3);
  EXPECT_EQ(p1.cuts, p2.cuts);
  EXPECT_EQ(p1.instances, p2.instances);
  EXPECT_NEAR(p1.cost, p2.cost, 1e-9 * p1.cost);
  // On mixed instances the heuristic's plan costs what planCost says, and the
  // exact DP is no worse.
  const Plan ph = planHeuristic(h, mixed, 4), pe = planExact(h, mixed, 4);
  EXPECT_NEAR(ph.cost, planCost(h, mixed, ph), 1e-9 * ph.cost);
  EXPECT_LE(pe.cost, ph.cost * (1 + 1e-9));
}

// Pinned stages: the DP over cuts finds the cheapest cut for the given
// instance counts (checked against every cut by hand).
TEST(CascadePools, PinnedPlanChoosesTheCheapestCuts) {
  const QoeModel qL = prepare(scenarioJson({pool(kL40s, 1)})).g().qoe();
  const QoeModel qH = prepare(scenarioJson({pool(kH100, 1)})).g().qoe();
  const LengthHistogram h = histogram();
  PlanCosts c{qL, 1e-9, {}};
  setInstanceModels(c, {qL, qL, qL, qH});
  const Plan p = planPinned(h, c, {3, 1});
  EXPECT_EQ(p.instances, (std::vector<int>{3, 1}));
  double best = std::numeric_limits<double>::infinity();
  int bestCut = -1;
  for (int k = 1; k < h.buckets(); ++k) {
    Plan q;
    q.cuts = {0, k, h.buckets()};
    q.instances = {3, 1};
    if (const double v = planCost(h, c, q); v < best) {
      best = v;
      bestCut = k;
    }
  }
  EXPECT_EQ(p.cuts, (std::vector<int>{0, bestCut, h.buckets()}));
  EXPECT_NEAR(p.cost, best, 1e-12 * best);
  EXPECT_THROW(planPinned(h, c, std::vector<int>(static_cast<std::size_t>(h.buckets()) + 1, 1)), std::invalid_argument);
}

// "stage-k" roles keep each stage's instances through the start-up plan and
// the replans; the scenario round-trips.
TEST(CascadePools, StageRolesPinTheStages) {
  const std::vector<nlohmann::json> pools = {pool(kH100, 1, "stage-2"), pool(kL40s, 3, "stage-1")};
  const Scenario s = parse(scenarioJson(pools));
  EXPECT_EQ(s.cluster.pools[0].role, "stage-2");
  const std::string dumped = dumpScenario(s);
  EXPECT_NE(dumped.find("\"stage-1\""), std::string::npos);
  EXPECT_EQ(dumpScenario(parseScenario(nlohmann::json::parse(dumped), "again.json")), dumped);

  nlohmann::json j = scenarioJson(pools, "cascade", 600);
  j["policy"]["knobs"] = {{"replan_interval_s", 10}};
  const Ran r = prepare(j);
  const CascadeGlobal& g = r.g();
  EXPECT_EQ(g.pinnedStages(), (std::vector<int>{3, 1}));
  ASSERT_EQ(g.stages(), 2);
  EXPECT_EQ(g.members(0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(g.members(1), (std::vector<int>{0}));
  EXPECT_EQ(g.plan().instances, (std::vector<int>{3, 1}));
  EXPECT_GT(g.upper(0), 0);
  executeRun(*r.run, RunOptions{});
  std::vector<PolicyReportEntry> rep;
  g.report(rep);
  double replans = 0, l40sInStage1 = 0, h100InStage2 = 0;
  for (const auto& e : rep) {
    if (e.key == "replans") replans = e.value;
    if (e.key == "stage1/pool1_instances") l40sInStage1 = e.value;
    if (e.key == "stage2/pool0_instances") h100InStage2 = e.value;
  }
  EXPECT_GE(replans, 2);  // the start-up plan and at least one replan
  EXPECT_EQ(l40sInStage1, 3);
  EXPECT_EQ(h100InStage2, 1);
  EXPECT_EQ(g.members(0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(g.members(1), (std::vector<int>{0}));
  EXPECT_GT(g.handovers(), 0);
  EXPECT_EQ(r.run->simulator->finishedCount(), 600);
}

TEST(CascadePools, BadRolesNameTheirField) {
  const auto err = [](const std::vector<nlohmann::json>& pools, const std::string& policy = "cascade") {
    return errorOf([&] { prepareRun(parse(scenarioJson(pools, policy)), "cascade-pools.json"); });
  };
  EXPECT_EQ(err({pool(kL40s, 2, "prefill"), pool(kH100, 2, "decode")}),
            "cascade-pools.json: cluster.pools[0].role: policy 'cascade' plans length stages; its pools take "
            "\"stage-k\" roles, not 'prefill'");
  EXPECT_EQ(err({pool(kL40s, 2, "stage-1"), pool(kH100, 2, "decode")}),
            "cascade-pools.json: cluster.pools[1].role: policy 'cascade' plans length stages; its pools take "
            "\"stage-k\" roles, not 'decode'");
  EXPECT_EQ(err({pool(kL40s, 2), pool(kH100, 2, "stage-1")}),
            "cascade-pools.json: cluster.pools[0].role: every pool needs a stage role (\"stage-k\") once one has one");
  EXPECT_EQ(err({pool(kL40s, 2, "stage-1"), pool(kH100, 2, "stage-3"), pool(kH100, 1, "stage-3")}),
            "cascade-pools.json: cluster.pools[0].role: no pool has role \"stage-2\"; number the stages 1..3 without "
            "gaps");
  EXPECT_EQ(err({pool(kL40s, 2, "stage-1"), pool(kH100, 2, "stage-3")}),
            "cascade-pools.json: cluster.pools[1].role: stage 3 of 2 pools; number the stages 1, 2, ... without gaps");
  const std::string users = "cascade, cascade-quantity, cascade-memory, cascade-interstage-only";
  for (const char* policy : {"fcfs", "cascade-chain", "cascade-nopipeline", "arrow"})
    EXPECT_EQ(err({pool(kL40s, 2, "stage-1"), pool(kH100, 2, "stage-2")}, policy),
              "cascade-pools.json: cluster.pools[0].role: policy '" + std::string(policy) +
                  "' cannot use role 'stage-1'; stage roles need a policy that plans CascadeInfer stages: " + users)
        << policy;
  // The existing prefill / decode message is unchanged.
  EXPECT_NE(err({pool(kL40s, 2, "prefill"), pool(kH100, 2, "decode")}, "fcfs")
                .find("cluster.pools[0].role: policy 'fcfs' cannot use role 'prefill' (it schedules every instance "
                      "alike)"),
            std::string::npos);
  // A Scenario built in code is checked too.
  {
    Scenario s = parse(scenarioJson({pool(kL40s, 2, "stage-1"), pool(kH100, 2, "stage-2")}));
    s.cluster.pools[1].role = "stage-2x";
    EXPECT_EQ(errorOf([&] { prepareRun(s, "cascade-pools.json"); }),
              "cascade-pools.json: cluster.pools[1].role: a CascadeInfer stage role is \"stage-k\" with k from 1 to "
              "64 (got 'stage-2x')");
  }
  // Parse errors.
  for (const char* bad : {"stage-0", "stage-x", "stage-65", "stage-", "stage-01"})
    EXPECT_EQ(errorOf([&] { parse(scenarioJson({pool(kL40s, 2, bad)})); }),
              "cascade-pools.json: cluster.pools[0].role: a CascadeInfer stage role is \"stage-k\" with k from 1 to "
              "64 (got '" +
                  std::string(bad) + "')")
        << bad;
  EXPECT_EQ(errorOf([&] { parse(scenarioJson({pool(kL40s, 2, "stage")})); }),
            "cascade-pools.json: cluster.pools[0].role: must be one of 'colocated', 'prefill', 'decode' or "
            "'stage-k' (got 'stage')");
}

// One pool: nothing about pools changes CascadeInfer (same fingerprint as
// the classic cluster; the samples' fingerprints cover the rest).
TEST(CascadePools, OnePoolIsTheClassicCluster) {
  nlohmann::json classic = scenarioJson({pool(kH100, 4)});
  classic["cluster"] = {{"gpu", kH100}, {"instances", 4}};
  const Ran a = prepare(classic, true);
  const Ran b = prepare(scenarioJson({pool(kH100, 4)}), true);
  EXPECT_EQ(a.run->simulator->fingerprint(), b.run->simulator->fingerprint());
  EXPECT_FALSE(b.g().mixedPools());
  EXPECT_TRUE(b.g().planCosts().prefixD.empty());
  EXPECT_GE(b.g().stages(), 2);
}
