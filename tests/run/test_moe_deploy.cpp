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
