// Issue 45 item 4: where a run's cost coefficients come from, in order —
// the built-in defaults, the GPU preset's own per-operator fit, a cost
// profile (replaces both), an engine preset, then cluster.cost.
#include <string>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "run/run.h"

using namespace sl;

namespace {
Scenario onGpu(const std::string& gpu) {
  Scenario s;
  s.cluster.instances = 1;
  s.cluster.gpu = gpu;
  s.model = "llama-3.1-8b";
  return s;
}
}  // namespace

TEST(GpuCoefficients, ScenarioStartsFromItsGpusFit) {
  const CostCoefficients d;
  const CostCoefficients a = makeCostModel(onGpu("a100-80g"))->coefficients();
  EXPECT_DOUBLE_EQ(a.eta_c, 0.714);
  EXPECT_DOUBLE_EQ(a.eta_w, 0.78);
  EXPECT_DOUBLE_EQ(a.eta_kv, d.eta_kv);
  // A GPU without its own data: the defaults, unchanged.
  EXPECT_EQ(makeCostModel(onGpu("a100-40g"))->coefficients().toJson(), d.toJson());
  EXPECT_EQ(makeCostModel(onGpu("h100-sxm-80g"))->coefficients().toJson(), d.toJson());
}

TEST(GpuCoefficients, EnginePresetAndClusterCostGoOnTopProfileReplaces) {
  Scenario s = onGpu("a100-80g");
  s.cluster.engine = "vllm-v0.5";
  s.cluster.cost = {{"eta_c", 0.5}};
  const CostCoefficients c = makeCostModel(s)->coefficients();
  EXPECT_DOUBLE_EQ(c.eta_c, 0.5);   // cluster.cost
  EXPECT_DOUBLE_EQ(c.eta_w, 0.78);  // the GPU's fit survives the engine preset
  EXPECT_NE(c.t_step_us, CostCoefficients{}.t_step_us);  // the engine's CPU overhead
  // A cost profile is a whole set of coefficients: the GPU's fit is replaced.
  Scenario p = onGpu("a100-80g");
  p.cluster.profile = std::string(SERVELAB_SOURCE_DIR) + "/resources/profiles/spec-defaults.json";
  EXPECT_DOUBLE_EQ(makeCostModel(p)->coefficients().eta_w, 0.73);
}
