// Issue 47 item 3: expert-parallel deployments from a scenario file — the
// fields reach the cost model, bad values name their field (the CLI exits 2
// on them, tests/cli/cli_e2e.sh), a run is deterministic, and the snapshot
// carries the step's split and per-rank load for the app.
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include <gtest/gtest.h>

#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {
const std::string kSample = std::string(SERVELAB_SOURCE_DIR) + "/samples/moe-qwen3-235b-ep8.json";

Scenario withCluster(const nlohmann::json& extra, const std::string& model = "qwen3-235b-a22b") {
  nlohmann::json cluster = {{"instances", 1}, {"gpu", "h200-sxm-141g"}, {"tp", 8}};
  for (const auto& [k, v] : extra.items()) cluster[k] = v;
  const nlohmann::json j = {
      {"schema_version", 1}, {"cluster", cluster}, {"model", model}, {"workload", {{"requests", 20}}}};
  return parseScenario(j, "moe.json");
}

std::string prepareError(const nlohmann::json& extra, const std::string& model = "qwen3-235b-a22b") {
  return errorOf([&] { prepareRun(withCluster(extra, model), "moe.json"); });
}
}  // namespace

TEST(MoeDeploy, ScenarioFieldsReachTheCostModel) {
  const Scenario s = loadScenarioFile(kSample);
  EXPECT_EQ(s.cluster.ep, 8);
  EXPECT_TRUE(s.cluster.attention_dp);
  const auto cost = makeCostModel(s);
  EXPECT_EQ(cost->moe().ep, 8);
  EXPECT_TRUE(cost->moe().attentionDp);
  EXPECT_EQ(cost->moe().redundant, 0);
  EXPECT_EQ(cost->moe().placement, Placement::Contiguous);
  // Replicas imply EPLB placement unless it is given.
  const auto eplb = makeCostModel(withCluster({{"ep", 8}, {"ep_redundant", 16}}));
  EXPECT_EQ(eplb->moe().placement, Placement::Eplb);
  EXPECT_EQ(eplb->moe().redundant, 16);
  EXPECT_EQ(cost->moe().routing.kind, RoutingKind::Zipf);
  EXPECT_DOUBLE_EQ(cost->moe().routing.skew, 0.8);
  EXPECT_DOUBLE_EQ(cost->moe().nicBytesPerSecPerGpu, 3200e9 / 8 / 8);
  // The canonical form keeps the fields (and only when set).
  const std::string dumped = dumpScenario(s);
  EXPECT_NE(dumped.find("\"attention_dp\": true"), std::string::npos);
  EXPECT_NE(dumped.find("\"skew\": 0.8"), std::string::npos);
  EXPECT_EQ(dumpScenario(withCluster({})).find("\"ep\""), std::string::npos);
}

TEST(MoeDeploy, BadFieldsNameTheField) {
  EXPECT_EQ(prepareError({{"ep", 3}}), "moe.json: cluster.ep: 3 does not divide the instance's 8 GPUs (cluster.tp)");
  EXPECT_EQ(prepareError({{"ep", 8}, {"ep_redundant", 4}}),
            "moe.json: cluster.ep_redundant: Qwen3-235B-A22B's 128 experts + 4 redundant do not divide evenly over "
            "cluster.ep = 8 ranks");
  EXPECT_EQ(prepareError({{"ep", 2}}, "llama-3.1-70b"),
            "moe.json: cluster.ep: Llama-3.1-70B is a dense model (no experts to spread); use 1");
  EXPECT_EQ(
      prepareError({{"attention_dp", true}}),
      "moe.json: cluster.attention_dp: needs cluster.ep equal to cluster.tp (8): the experts spread over every GPU");
  EXPECT_EQ(errorOf([&] {
              withCluster({{"moe_routing", {{"kind", "zipf"}, {"skew", 0}}}});
            }),
            "moe.json: cluster.moe_routing.skew: must be > 0 (got 0)");
  EXPECT_NE(errorOf([&] {
              withCluster({{"moe_routing", {{"kind", "file"}}}});
            }).find("cluster.moe_routing.path: needed with kind \"file\""),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              withCluster({{"ep_placement", "random"}});
            }).find("cluster.ep_placement"),
            std::string::npos);
  // A routing file with the wrong number of experts.
  const auto dir = std::filesystem::temp_directory_path() / "servelab-moe-deploy";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "h.csv") << "1\n2\n3\n";
  Scenario s = withCluster({{"ep", 8}, {"moe_routing", {{"kind", "file"}, {"path", "h.csv"}}}});
  s.base_dir = dir.string();
  EXPECT_EQ(errorOf([&] { prepareRun(s, "moe.json"); }),
            "moe.json: cluster.moe_routing.path: h.csv has 3 expert loads; the model has 128 routed experts per layer");
}

TEST(MoeDeploy, DeterministicAndSnapshotCarriesTheSplit) {
  const Scenario s = loadScenarioFile(kSample);
  auto a = prepareRun(s, "a");
  auto b = prepareRun(s, "b");
  Snapshot snap;
  bool sawBusy = false;
  for (int i = 0; i < 3000 && a->simulator->step(); ++i) {
    ASSERT_TRUE(b->simulator->step());
    ASSERT_EQ(a->simulator->now(), b->simulator->now());
    if (i % 100 != 0) continue;
    a->simulator->fillSnapshot(snap);
    for (const InstanceSnapshot& in : snap.instances) {
      const MoeStepSnapshot& m = in.moe;
      ASSERT_EQ(m.rankPairs.size(), 8u);
      if (m.tokens <= 0) continue;
      sawBusy = true;
      // Every token goes to 8 experts: the ranks' pairs sum to 8 N.
      EXPECT_NEAR(std::accumulate(m.rankPairs.begin(), m.rankPairs.end(), 0.0), 8 * m.tokens, 1e-6 * m.tokens);
      EXPECT_GE(m.stragglerPairs, *std::max_element(m.rankPairs.begin(), m.rankPairs.end()));
      EXPECT_GT(m.expertS, 0);
      EXPECT_GT(m.allToAllS, 0);
      EXPECT_EQ(m.commS, 0);  // data-parallel attention: no all-reduce
      EXPECT_GT(m.otherS, 0);
    }
  }
  EXPECT_TRUE(sawBusy);
}

// Issue 47 anchor (a): two-batch overlap and per-rank schedulers from the
// scenario, and a P/D-disaggregated wide-EP deployment of DeepSeek-V3 whose
// pools carry their own EP (instances of 32 and 72 GPUs spanning nodes, so
// the all-to-all crosses the NICs).
TEST(MoeDeploy, TwoBatchOverlapFieldsReachTheCostModel) {
  const auto cost = makeCostModel(withCluster({{"ep", 8},
                                               {"attention_dp", true},
                                               {"two_batch_overlap", true},
                                               {"tbo_min_tokens", 64},
                                               {"dp_scheduler", "per-rank"}}));
  EXPECT_TRUE(cost->moe().twoBatchOverlap);
  EXPECT_EQ(cost->moe().tboMinTokens, 64);
  EXPECT_TRUE(cost->moe().perRankScheduler);
  const auto plain = makeCostModel(withCluster({{"ep", 8}, {"attention_dp", true}}));
  EXPECT_FALSE(plain->moe().twoBatchOverlap);
  EXPECT_FALSE(plain->moe().perRankScheduler);
  EXPECT_EQ(prepareError({{"ep", 8}, {"two_batch_overlap", true}}),
            "moe.json: cluster.two_batch_overlap: needs cluster.attention_dp with cluster.ep > 1 (it hides the expert "
            "all-to-all, which only data-parallel attention has)");
  EXPECT_NE(errorOf([&] { withCluster({{"tbo_min_tokens", 1}}); }).find("cluster.tbo_min_tokens"), std::string::npos);
  EXPECT_NE(errorOf([&] {
              withCluster({{"dp_scheduler", "global"}});
            }).find("cluster.dp_scheduler"),
            std::string::npos);
}

namespace {
Scenario deepseekPd(bool tbo, int requests) {
  const nlohmann::json pools = nlohmann::json::array(
      {{{"gpu", "h100-sxm-80g"}, {"tp", 32}, {"ep", 32}, {"attention_dp", true}, {"role", "prefill"}},
       {{"gpu", "h100-sxm-80g"}, {"tp", 72}, {"ep", 72}, {"attention_dp", true}, {"role", "decode"}}});
  const nlohmann::json cluster = {{"model_dtype", "fp8"},
                                  {"ep_redundant", 32},
                                  {"two_batch_overlap", tbo},
                                  {"dp_scheduler", "per-rank"},
                                  {"max_num_seqs", 4096},
                                  {"max_num_batched_tokens", 65536},
                                  {"fabric", {{"gpus_per_node", 8}, {"nic_gbps", 3200}}},
                                  {"pools", pools}};
  const nlohmann::json workload = {{"arrival", {{"process", "closed"}, {"concurrency", 256}}},
                                   {"input_tokens", {{"dist", "constant"}, {"value", 2000}}},
                                   {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
                                   {"answer_tokens", {{"dist", "constant"}, {"value", 32}}},
                                   {"requests", requests}};
  const nlohmann::json j = {{"schema_version", 1},
                            {"cluster", cluster},
                            {"model", "deepseek-v3"},
                            {"workload", workload},
                            {"policy", {{"id", "static-pd"}}},
                            {"run", {{"seed", 3}}}};
  return parseScenario(j, "pd.json");
}
}  // namespace

TEST(MoeDeploy, DisaggregatedWideEpPoolsKeepTheirOwnExpertParallelism) {
  auto run = prepareRun(deepseekPd(true, 512), "pd.json");
  ASSERT_EQ(run->poolCosts.size(), 1u);  // the first pool's cost model is the run's
  const CostModel& prefill = *run->cost;
  const CostModel& decode = *run->poolCosts[0];
  EXPECT_EQ(prefill.moe().ep, 32);
  EXPECT_EQ(decode.moe().ep, 72);
  EXPECT_TRUE(decode.moe().twoBatchOverlap);
  EXPECT_EQ(decode.placement().ranks(), 72);
  EXPECT_EQ(decode.placement().experts(), 256);
  // 288 replicas (256 + 32) over 72 ranks: 4 a GPU.
  for (int r = 0; r < 72; ++r) EXPECT_EQ(decode.placement().rankReplicaQ(r).size(), 4u);
  // Instances over 4 and 9 nodes of 8: 24 of 32 (64 of 72) peers over the
  // NICs; on one NVLink domain the same all-to-all takes well under half.
  MoeDeployment nvl = decode.moe();
  nvl.gpusPerNode = 72;  // the same instance on one NVLink domain
  CostModel oneDomain(decode.gpu(), decode.model(), 72, decode.coefficients(), decode.precision());
  oneDomain.setMoe(nvl);
  EXPECT_GT(decode.allToAllSeconds(256 * 72), 2 * oneDomain.allToAllSeconds(256 * 72));
  // End to end: every request through both pools, the same run twice.
  const auto exec = [](bool tbo) {
    auto r = prepareRun(deepseekPd(tbo, 512), "pd.json");
    return executeRun(*r, RunOptions{});
  };
  const RunResult a = exec(true), b = exec(true);
  EXPECT_EQ(a.summary.finished, 512);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  // Two-batch overlap hides part of the NIC all-to-all: the same requests finish sooner.
  const RunResult off = exec(false);
  EXPECT_EQ(off.summary.finished, 512);
  EXPECT_LT(a.summary.sim_s, off.summary.sim_s);
}
