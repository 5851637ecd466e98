// Fit of the MoE expert GEMM's efficiencies on H100 per-operator rows
// (core/cost/operator_fit.h, "MoE expert GEMM"; data:
// resources/profiles/h100-mixtral-expert-gemm.csv, LLMServingSim's Mixtral-8x7B
// expert.w1/w2/w3 rows).
#include <gtest/gtest.h>

#include <sstream>

#include "cost/cost_model.h"
#include "cost/operator_fit.h"
#include "cost/presets.h"
#include "util/error.h"

namespace sl {
namespace {

const GpuSpec& h100() {
  return PresetRegistry::builtin().gpu("h100-sxm-80g");
}

std::vector<ExpertGemmPoint> profile() {
  return readExpertGemmCsv(std::string(SERVELAB_SOURCE_DIR) + "/resources/profiles/h100-mixtral-expert-gemm.csv");
}

TEST(ExpertGemmFit, ReadsAndSumsTheThreeGemmsOfEachPoint) {
  const auto pts = profile();
  ASSERT_EQ(pts.size(), 120u);  // 40 token counts × tp 1, 2, 4
  EXPECT_EQ(pts[0].tp, 1);
  EXPECT_EQ(pts[0].tokens, 1);
  EXPECT_EQ(pts[0].hidden, 4096);
  EXPECT_EQ(pts[0].intermediate, 14336);
  EXPECT_NEAR(pts[0].seconds, (41762 + 42978 + 39906) * 1e-9, 1e-15);  // w1 + w2 + w3 at 1 token
}

// Fit on every other token count of the tp-1 rows (20 points, factor-√2
// steps from 1 to 2048), hold out the 20 in between and the tp-2 / tp-4
// repeats (the profiler does not split the expert over tp).
TEST(ExpertGemmFit, FitsH100ExpertGemmAndPredictsHeldOutRows) {
  const auto pts = profile();
  std::vector<ExpertGemmPoint> train, held, repeats;
  int i = 0;
  for (const ExpertGemmPoint& p : pts) {
    if (p.tp != 1)
      repeats.push_back(p);
    else
      (i++ % 2 == 0 ? train : held).push_back(p);
  }
  ASSERT_EQ(train.size(), 20u);
  ASSERT_EQ(held.size(), 20u);
  const ExpertGemmFit fit = fitExpertGemm(h100(), train);
  EXPECT_TRUE(fit.converged);
  EXPECT_NEAR(fit.eta_c, 0.7015, 0.001);
  EXPECT_NEAR(fit.eta_w, 0.7990, 0.001);
  EXPECT_EQ(fit.computePoints, 6);  // 304 tokens and up

  const ExpertGemmError h = expertGemmError(h100(), fit.eta_c, fit.eta_w, held);
  EXPECT_EQ(h.points, 20);
  EXPECT_NEAR(h.medianAbsPct, 4.58, 0.01);
  EXPECT_NEAR(h.maxAbsPct, 18.6, 0.1);  // 181 tokens: the knee between the branches
  EXPECT_LT(expertGemmError(h100(), fit.eta_c, fit.eta_w, repeats).medianAbsPct, 6.0);
  // The dense η (0.70, 0.90) on the same held-out rows: reads too fast.
  EXPECT_NEAR(expertGemmError(h100(), 0.70, 0.90, held).medianAbsPct, 10.65, 0.01);
}

TEST(ExpertGemmFit, PredictionByHand) {
  // One Mixtral expert (3 × 4096 × 14336 bf16 parameters) on an H100 SXM
  // (989 TFLOP/s, 3.35 TB/s) at η_c 0.70, η_w 0.80.
  ExpertGemmPoint p;
  p.hidden = 4096;
  p.intermediate = 14336;
  const double P = 3.0 * 4096 * 14336;
  p.tokens = 8;  // weight read: 352.3 MB / (3.35 TB/s · 0.80) = 131.5 µs
  EXPECT_NEAR(predictExpertGemm(h100(), 0.70, 0.80, p), P * 2 / (3.35e12 * 0.80), 1e-12);
  EXPECT_NEAR(predictExpertGemm(h100(), 0.70, 0.80, p) * 1e6, 131.5, 0.05);
  p.tokens = 2048;  // compute: 2 · P · 2048 / (989e12 · 0.70) = 1042.3 µs
  EXPECT_NEAR(predictExpertGemm(h100(), 0.70, 0.80, p) * 1e6, 1042.3, 0.05);
}

TEST(ExpertGemmFit, BadRowsNameTheFileLineAndColumn) {
  const std::string head = "gemm,tokens,tp,hidden,intermediate,latency_ns\n";
  auto parse = [&](const std::string& body) {
    std::istringstream in(head + body);
    return parseExpertGemmCsv(in, "x.csv");
  };
  auto message = [&](const std::string& body) {
    try {
      parse(body);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("expert.w4,1,1,8,8,100\n"),
            "x.csv:2: gemm: unknown expert GEMM 'expert.w4' (known: expert.w1, expert.w2, expert.w3)");
  EXPECT_EQ(message("expert.w1,x,1,8,8,100\n"), "x.csv:2: tokens: not a number: 'x'");
  EXPECT_EQ(message("expert.w1,1,1,8,8,100\nexpert.w2,1,1,8,8,100\n"),
            "x.csv:2: tp 1, tokens 1: lacks expert.w3 (each point needs w1, w2 and w3)");
  EXPECT_EQ(message("expert.w1,1,1,8,8,100\nexpert.w1,1,1,8,8,100\n"),
            "x.csv:3: gemm: expert.w1 appears twice for tp 1, tokens 1");
  std::istringstream noCol("gemm,tokens,tp,hidden,latency_ns\n");
  EXPECT_THROW(parseExpertGemmCsv(noCol, "y.csv"), InputError);
  // Only weight-bound points: η_c is not determined.
  const auto small = parse(
      "expert.w1,1,1,4096,14336,41762\nexpert.w2,1,1,4096,14336,42978\n"
      "expert.w3,1,1,4096,14336,39906\n");
  EXPECT_THROW(fitExpertGemm(h100(), small), InputError);
}

// The rule: Hopper presets read routed experts at the fitted η_w while the
// run's η_w is the default; another GPU, or an η_w from the run's own data
// (profile, engine preset, cluster.cost), keeps the run's η_w.
TEST(ExpertGemmFit, ExpertTermUsesTheFitOnHopperOnly) {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const ModelSpec& m = reg.model("qwen3-30b-a3b");
  BatchShape one;
  addDecodeSeq(one, 1024);
  const double routed = 57982058496.0;  // bytes of all routed experts (48 layers × 128 × 3 × 2048 × 768 × 2)
  for (const char* id : {"h100-sxm-80g", "h200-sxm-141g"}) {
    const GpuSpec& g = reg.gpu(id);
    EXPECT_TRUE(isHopperPreset(g)) << id;
    const CostModel cm(g, m, 1, gpuCoefficients(g));
    EXPECT_NEAR(cm.breakdown(one).expert_s, routed * 8.0 / 128 / (g.hbmBytesPerSec() * 0.799), 1e-12) << id;
  }
  const GpuSpec& b200 = reg.gpu("b200-180g");
  EXPECT_FALSE(isHopperPreset(b200));
  const CostModel cb(b200, m, 1, gpuCoefficients(b200));
  EXPECT_NEAR(cb.breakdown(one).expert_s, routed * 8.0 / 128 / (b200.hbmBytesPerSec() * 0.90), 1e-12);
  CostCoefficients own;
  own.eta_w = 0.85;
  const CostModel co(h100(), m, 1, own);
  EXPECT_NEAR(co.breakdown(one).expert_s, routed * 8.0 / 128 / (3.35e12 * 0.85), 1e-12);
}

}  // namespace
}  // namespace sl
