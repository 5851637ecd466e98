// Issue 48 item 1 (the cost side): acceptance arithmetic, the verify step and
// each draft method's cost by hand calculation, and bad specs naming the field.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "cost/presets.h"
#include "cost/speculative.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {
const PresetRegistry& reg() {
  return PresetRegistry::builtin();
}
CostModel llama8b() {
  return CostModel(reg().gpu("h100-sxm-80g"), reg().model("llama-3.1-8b"), 1, CostCoefficients{});
}
}  // namespace

TEST(Speculative, AcceptanceArithmetic) {
  // k = 3 at α = 0.8: 1 + 0.8 + 0.64 + 0.512.
  EXPECT_NEAR(expectedTokensPerStep({0.8}, 3), 2.952, 1e-12);
  // Per position: 0.9, then 0.5 given the first, then 0.5 repeated.
  EXPECT_NEAR(expectedTokensPerStep({0.9, 0.5}, 3), 1 + 0.9 + 0.45 + 0.225, 1e-12);
  EXPECT_NEAR(expectedTokensPerStep({0.0}, 4), 1.0, 1e-12);
  EXPECT_NEAR(expectedTokensPerStep({1.0}, 4), 5.0, 1e-12);
  // The inverse: τ = 2.952 at k = 3 is α = 0.8; the ends clamp.
  EXPECT_NEAR(alphaFromAcceptanceLength(2.952, 3), 0.8, 1e-9);
  EXPECT_NEAR(alphaFromAcceptanceLength(1.87, 1), 0.87, 1e-9);
  EXPECT_EQ(alphaFromAcceptanceLength(5.0, 4), 1.0);
  EXPECT_EQ(alphaFromAcceptanceLength(1.0, 4), 0.0);
}

TEST(Speculative, VerifyStepRunsTheGemmsOverKPlusOneTokens) {
  const CostModel cm = llama8b();
  SpeculativeSpec s;
  s.method = SpecMethod::Ngram;
  s.k = 4;
  const SpeculativeCost sc(cm, s);
  BatchShape b;
  for (int i = 0; i < 32; ++i) addDecodeSeq(b, 1024);
  const BatchShape v = sc.verifyShape(b);
  EXPECT_EQ(v.verify_tokens, 128);
  EXPECT_EQ(batchTokens(v), 160);
  // Decode attention reads the KV once per sequence: unchanged; the linear
  // term sees 160 tokens (still read bound at 160: 16.06 GB / (3.35 TB/s · 0.9)).
  EXPECT_DOUBLE_EQ(cm.breakdown(v).decode_attn_s, cm.breakdown(b).decode_attn_s);
  EXPECT_DOUBLE_EQ(cm.breakdown(v).linear_s, cm.breakdown(b).linear_s);
  // Past the ridge the GEMMs grow: 512 sequences verify 2560 tokens.
  BatchShape big;
  for (int i = 0; i < 512; ++i) addDecodeSeq(big, 256);
  EXPECT_NEAR(cm.breakdown(sc.verifyShape(big)).linear_s / cm.breakdown(big).linear_s, 2560.0 / 512, 1e-9);
  // n-gram lookup: 5 µs of CPU per sequence.
  EXPECT_NEAR(sc.draftSeconds(32, 32 * 1024.0), 32 * 5e-6, 1e-15);
  EXPECT_EQ(sc.draftWeightBytesPerGpu(), 0);
}

TEST(Speculative, EagleHeadCostByHand) {
  // Llama-3.1-8B's EAGLE head: one decoder layer (attention 4096·48·128 +
  // 32·128·4096 = 41 943 040, MLP 3·4096·14336 = 176 160 768) and the LM
  // head 128 256·4096 = 525 336 576, norms 3·4096: 743 452 672 parameters,
  // 1 486 905 344 bytes read per draft token over 3.35 TB/s · 0.9 = 0.49320
  // ms; its one layer's KV (4096 B a token) at 1024 tokens over 3.35 TB/s ·
  // 0.51: 2.455 µs; t_layer 46 µs. Three draft tokens.
  const CostModel cm = llama8b();
  SpeculativeSpec s;
  s.method = SpecMethod::Eagle;
  s.k = 3;
  const SpeculativeCost sc(cm, s);
  const double read = 1486905344.0 / (3.35e12 * 0.90);
  const auto kv = [](double ctx) { return 4096.0 * ctx / (3.35e12 * 0.51); };
  const double want = 3 * (read + 46e-6) + kv(1024) + kv(1025) + kv(1026);
  EXPECT_NEAR(sc.draftSeconds(1, 1024), want, 1e-9);
  EXPECT_NEAR(want * 1e3, 1.6245, 1e-3);
  EXPECT_NEAR(sc.draftWeightBytesPerGpu(), 1486905344.0, 1);
  EXPECT_NEAR(sc.draftKvBytesPerTokenPerGpu(), 4096, 1e-9);
}

TEST(Speculative, DraftModelAndMtp) {
  const CostModel cm = llama8b();
  SpeculativeSpec d;
  d.method = SpecMethod::Draft;
  d.k = 2;
  d.draft_model = "llama-3.2-3b";
  const SpeculativeCost sc(cm, d);
  // Two steps of the 3B model, each without the per-step CPU overhead.
  const CostModel small(reg().gpu("h100-sxm-80g"), reg().model("llama-3.2-3b"), 1, CostCoefficients{});
  BatchShape one, two;
  addDecodeSeq(one, 1000);
  addDecodeSeq(two, 1001);
  EXPECT_NEAR(sc.draftSeconds(1, 1000),
              small.iterationSeconds(one) + small.iterationSeconds(two) - 2 * CostCoefficients{}.t_step_us * 1e-6,
              1e-12);
  EXPECT_NEAR(sc.draftWeightBytesPerGpu(), static_cast<double>(small.weightBytes()), 1);
  // MTP: one more DeepSeek-V3 layer (MLA + 256 experts) with the shared head.
  const CostModel ds(reg().gpu("h200-sxm-141g"), reg().model("deepseek-v3"), 8, CostCoefficients{},
                     Precision{DType::FP8, DType::BF16});
  SpeculativeSpec m;
  m.method = SpecMethod::Mtp;
  m.k = 1;
  const SpeculativeCost mtp(ds, m);
  EXPECT_GT(mtp.draftSeconds(32, 32 * 2048.0), 0);
  // Its weights: one layer of the 61 (58 MoE); far under 2 % of the model.
  EXPECT_LT(mtp.draftWeightBytesPerGpu(), 0.02 * ds.weightBytesPerGpu());
  EXPECT_GT(mtp.draftWeightBytesPerGpu(), 0.01 * ds.weightBytesPerGpu());
}

TEST(Speculative, BadSpecsNameTheField) {
  const CostModel cm = llama8b();
  SpeculativeSpec s;
  s.k = 0;
  EXPECT_EQ(errorOf([&] { SpeculativeCost(cm, s); }), "cluster.speculative.k: must be >= 1 (got 0)");
  s.k = 3;
  s.method = SpecMethod::Draft;
  EXPECT_EQ(errorOf([&] { SpeculativeCost(cm, s); }),
            "cluster.speculative.draft_model: needed with method \"draft\" (a model preset id)");
  s.draft_model = "llama-3.1-70b";
  EXPECT_NE(errorOf([&] { SpeculativeCost(cm, s); }).find("cluster.speculative.draft_model: Llama-3.1-70B"),
            std::string::npos);
  s.draft_model = "qwen3-8b";  // 8.2 B against 8.0 B, and another tokenizer
  EXPECT_NE(errorOf([&] { SpeculativeCost(cm, s); }).find("cluster.speculative.draft_model"), std::string::npos);
  s.draft_model = "qwen2.5-14b";
  EXPECT_NE(errorOf([&] { SpeculativeCost(cm, s); }).find("not smaller than the target"), std::string::npos);
  const CostModel qwen14(reg().gpu("h100-sxm-80g"), reg().model("qwen2.5-14b"), 1, CostCoefficients{});
  SpeculativeSpec q;
  q.method = SpecMethod::Draft;
  q.draft_model = "llama-3.2-3b";
  EXPECT_NE(errorOf([&] { SpeculativeCost(qwen14, q); }).find("must share the target's tokenizer"), std::string::npos);
  SpeculativeSpec mtp;
  mtp.method = SpecMethod::Mtp;
  EXPECT_EQ(errorOf([&] { SpeculativeCost(cm, mtp); }),
            "cluster.speculative.method: mtp needs a model with multi-token-prediction modules (DeepSeek-V3/R1); "
            "Llama-3.1-8B has none: use eagle, draft or ngram");
  EXPECT_EQ(errorOf([] { parseSpecMethod("medusa", "cluster.speculative.method"); }),
            "cluster.speculative.method: must be one of 'draft', 'eagle', 'mtp', 'ngram' (got 'medusa')");
}
