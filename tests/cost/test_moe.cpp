// Issue 47 item 1 (and the balanced-routing part of item 2): mixture-of-
// experts model presets from their config.json, parameter counts, KV bytes
// per token (GQA and DeepSeek's MLA) and one decode step, each worked out by
// hand in the comments.
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "cost/operator_fit.h"
#include "cost/presets.h"
#include "util/error.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {
const PresetRegistry& reg() { return PresetRegistry::builtin(); }
using Files = std::vector<std::pair<std::string, std::string>>;
}  // namespace

// Qwen3-30B-A3B: hidden 2048, 48 layers, 32 q / 4 kv heads of 128, 128
// experts of width 768, top-8, no shared expert, vocab 151 936.
//   attention  2048·(32 + 8)·128 + 32·128·2048 = 10 485 760 + 8 388 608 = 18 874 368
//   router     2048·128 = 262 144
//   one expert 3·2048·768 = 4 718 592; 128 of them 603 979 776
//   layer      623 116 288; × 48 = 29 909 581 824
//   embedding and LM head 151 936·2048 = 311 164 928 each
//   norms      (2·2048)·48 + 2048 = 198 656
//   total      29 909 581 824 + 2·311 164 928 + 198 656 = 30 532 110 336 (30.5 B)
//   active     (18 874 368 + 262 144 + 8·4 718 592)·48 + 622 329 856 + 198 656 = 3 353 020 416 (3.3 B)
TEST(Moe, Qwen3_30bA3bCountsByHand) {
  const ModelSpec& m = reg().model("qwen3-30b-a3b");
  EXPECT_TRUE(m.isMoe());
  EXPECT_FALSE(m.hasMla());
  EXPECT_EQ(m.moeLayers(), 48);
  EXPECT_EQ(m.attentionParamsPerLayer(), 18874368);
  EXPECT_EQ(m.expertParams(), 4718592);
  EXPECT_EQ(m.paramCount(), 30532110336);
  EXPECT_EQ(m.activeParamCount(), 3353020416);
  EXPECT_EQ(m.kvBytesPerToken(), 2 * 48 * 4 * 128 * 2);  // 98 304
}

// DeepSeek-V3: MLA and 3 leading dense layers.
//   attention  q: 7168·1536 + 1536·128·(128 + 64) = 11 010 048 + 37 748 736
//              kv: 7168·(512 + 64) + 512·128·(128 + 128) = 4 128 768 + 16 777 216
//              o: 128·128·7168 = 117 440 512          → 187 105 280
//   dense layer 187 105 280 + 3·7168·18432 = 583 467 008 (× 3)
//   MoE layer  187 105 280 + 7168·256 (router 1 835 008) + 257·3·7168·2048
//              (256 routed + 1 shared expert of 44 040 192) = 11 507 269 632 (× 58)
//   embedding + LM head 2·129 280·7168 = 1 853 358 080
//   norms      (2·7168 + 1536 + 512)·61 + 7168 = 999 424 + 7168
//   total 671 026 404 352 (671 B); active: routed 256 → 8 per MoE layer:
//   − 248·44 040 192·58 = 633 474 121 728 → 37 552 282 624 (37 B)
//   KV per token: 61·(512 + 64)·2 B = 70 272 B (MLA's latent, not 2·128 heads)
TEST(Moe, DeepSeekV3MlaAndDenseLayersByHand) {
  const ModelSpec& m = reg().model("deepseek-v3");
  EXPECT_TRUE(m.hasMla());
  EXPECT_EQ(m.moeLayers(), 58);
  EXPECT_EQ(m.attentionParamsPerLayer(), 187105280);
  EXPECT_EQ(m.paramCount(), 671026404352);
  EXPECT_EQ(m.activeParamCount(), 37552282624);
  EXPECT_EQ(m.kvBytesPerToken(), 70272);
  EXPECT_EQ(&reg().model("deepseek-r1"), &m);  // R1 shares the architecture
}

// Every MoE preset: totals within 2 % of the published figure (Llama-4-Scout's
// 109 B includes its vision encoder: text model 107.8 B, −1.1 %), active
// parameters within 3 % (Qwen3-30B-A3B 3.35 vs 3.3, DeepSeek-V3 37.55 vs 37,
// Llama-4-Scout 17.17 vs 17). gpt-oss's cards count the embedding lookup
// out of the active parameters (5.13 B, 3.61 B): there the comparison
// leaves out vocab·hidden.
TEST(Moe, PresetsMatchTheirPublishedSizes) {
  for (const char* id : {"mixtral-8x7b", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b", "gpt-oss-20b",
                         "llama-4-scout", "deepseek-v3"}) {
    const ModelSpec& m = reg().model(id);
    ASSERT_TRUE(m.isMoe()) << id;
    EXPECT_NEAR(m.paramCount() / 1e9 / m.published_params_b, 1.0, 0.02) << id;
    const bool embeddingOut = std::string(id).rfind("gpt-oss", 0) == 0;
    const double active = static_cast<double>(m.activeParamCount()) -
                          (embeddingOut ? static_cast<double>(m.vocab) * m.hidden : 0.0);
    EXPECT_NEAR(active / 1e9 / m.published_active_params_b, 1.0, 0.03) << id;
    EXPECT_LT(m.activeParamCount(), m.paramCount() / 2) << id;
  }
  // Mixtral: 2 of 8 experts of 3·4096·14336 = 176 160 768 per layer.
  const ModelSpec& mx = reg().model("mixtral-8x7b");
  EXPECT_EQ(mx.paramCount() - mx.activeParamCount(), std::int64_t{6} * 176160768 * 32);
  EXPECT_EQ(reg().model("gpt-oss-120b").sliding_window, 128);
  EXPECT_EQ(reg().model("gpt-oss-120b").sliding_layers, 18);
}

// Dense presets: the MoE terms are all zero, the counts are the old formula.
TEST(Moe, DenseModelsUnchanged) {
  const ModelSpec& m = reg().model("llama-3.1-8b");
  EXPECT_FALSE(m.isMoe());
  EXPECT_EQ(m.moeLayers(), 0);
  EXPECT_EQ(m.layerLinearParams(), m.linearParamsPerLayer() * m.layers);
  EXPECT_EQ(m.activeParamCount(), m.paramCount());
  EXPECT_EQ(m.paramCount(), 8030261248);
}

// One decode step of Qwen3-30B-A3B on one H100 SXM (tp 1, defaults η_w 0.90,
// η_c 0.70): the linear term is the weight read, and it grows with the batch
// because more experts are touched. Routed experts: 48·128·4 718 592 =
// 28 991 029 248 params = 57 982 058 496 B; everything else
// (30 532 110 336 − 28 991 029 248)·2 = 3 082 162 176 B.
//   batch 1: touched 8 of 128 → 3 082 162 176 + 57 982 058 496·8/128
//            = 6 706 040 832 B / (3.35e12 · 0.90) = 2.2242 ms
//   batch 8: 1 − (1 − 8/128)^8 = 0.403 28 of each layer's experts (51.6 of 128)
//            → 3 082 162 176 + 57 982 058 496·0.403 28 B → 8.778 ms
//   compute: the active linear weights and the LM head, not the embedding
//            lookup or the norms: 3 353 020 416 − 311 164 928 − 198 656 =
//            3 041 656 832 params; at batch 8 2·that·8 / (989e12·0.70) = 0.070 ms,
//            far below the read; a 4 096-token prefill: 35.99 ms, above the
//            whole model's read (20.25 ms).
TEST(Moe, DecodeStepReadsTheTouchedExperts) {
  const GpuSpec& gpu = reg().gpu("h100-sxm-80g");
  const ModelSpec& m = reg().model("qwen3-30b-a3b");
  const CostModel cm(gpu, m, 1, CostCoefficients{});
  const double other = 3082162176.0, routed = 57982058496.0, bw = 3.35e12 * 0.90;
  const double bwE = 3.35e12 * kH100ExpertGemmEtaW;  // the experts' read: the H100 expert GEMM fit
  BatchShape one, eight;
  addDecodeSeq(one, 1024);
  for (int i = 0; i < 8; ++i) addDecodeSeq(eight, 1024);
  const double frac8 = 1.0 - std::pow(1.0 - 8.0 / 128.0, 8);
  EXPECT_NEAR(frac8, 0.40328, 1e-5);
  // Two rooflines: every weight but the routed experts, then the experts;
  // both memory bound at small batch, so the reads add up.
  const auto linear = [&](const BatchShape& b) { return cm.breakdown(b).linear_s + cm.breakdown(b).expert_s; };
  EXPECT_NEAR(cm.breakdown(one).linear_s, other / bw, 1e-12);
  EXPECT_NEAR(cm.breakdown(one).expert_s, routed * 8.0 / 128.0 / bwE, 1e-12);
  EXPECT_NEAR(linear(one) * 1e3, 2.3762, 1e-4);
  EXPECT_NEAR(linear(eight), other / bw + routed * frac8 / bwE, 1e-12);
  EXPECT_NEAR(linear(eight) * 1e3, 9.758, 1e-3);
  // 600 tokens: the non-expert part is compute bound (2 · 1 229 717 504
  // active non-expert parameters incl. LM head · 600 / (989e12 · 0.7) =
  // 2.132 ms > its 1.022 ms read) while the experts are still read bound
  // (every expert touched: 19.23 ms): the sum of the two, not one max.
  BatchShape mid;
  addPrefillChunk(mid, 600);
  const double nonExpert = 2.0 * (3041656832.0 - 48.0 * 8 * 4718592) * 600 / (989e12 * 0.70);
  EXPECT_NEAR(cm.breakdown(mid).linear_s, nonExpert, 1e-12);
  EXPECT_NEAR(cm.breakdown(mid).expert_s, routed * (1 - std::pow(1 - 8.0 / 128, 600)) / bwE, 1e-12);
  EXPECT_NEAR(nonExpert * 1e3, 2.1315, 1e-4);
  // A large prefill touches every expert: the whole model is read once.
  BatchShape big;
  big.prefill_seqs = 1;
  big.prefill_tokens = 4096;
  big.prefill_attn = 4096.0 * 2048;
  // At the experts' η_w 0.799 their read (21.66 ms) just exceeds their
  // compute (21.45 ms): non-expert compute + the whole experts' read.
  EXPECT_NEAR(linear(big), 2.0 * (3041656832.0 - 48.0 * 8 * 4718592) * 4096 / (989e12 * 0.70) + routed / bwE, 1e-9);
  EXPECT_NEAR(linear(big) * 1e3, 36.21, 0.01);
  // The fast path agrees with the breakdown.
  EXPECT_DOUBLE_EQ(cm.iterationSeconds(eight), cm.breakdown(eight).total_s);
  // KV capacity counts every expert's weights (61.06 GB of the 80 GiB).
  EXPECT_EQ(cm.weightBytes(), 61064220672);
}

TEST(Moe, BadMoeFieldsNameFileAndField) {
  const std::string head = R"({"id":"x","name":"X","layers":4,"hidden":64,"q_heads":4,"kv_heads":4,"head_dim":16,)"
                           R"("intermediate":128,"vocab":100,"tied_embeddings":false,"dtype_bytes":2,"max_context":100,)"
                           R"("published_params_b":1)";
  const auto err = [&](const std::string& tail) {
    return errorOf([&] { PresetRegistry r(Files{{"models/x.json", head + tail + "}"}}); });
  };
  const std::string moe = R"(,"published_active_params_b":0.5,"moe":{"experts":8,"experts_per_token":%K%,)"
                          R"("shared_experts":0,"expert_intermediate":32,"dense_layers":%D%,"moe_layer_step":1})";
  const auto with = [&](const std::string& k, const std::string& d) {
    std::string s = moe;
    s.replace(s.find("%K%"), 3, k);
    s.replace(s.find("%D%"), 3, d);
    return s;
  };
  EXPECT_EQ(err(with("2", "0")), "<no InputError>");
  EXPECT_NE(err(with("9", "0")).find("resources/models/x.json: moe: experts_per_token: must be <= experts (8)"),
            std::string::npos);
  EXPECT_NE(err(with("2", "4")).find("resources/models/x.json: moe: dense_layers: must be an integer in [0, layers)"),
            std::string::npos);
  EXPECT_NE(err(R"(,"moe":{"experts":8})").find("resources/models/x.json: moe: experts_per_token: missing"),
            std::string::npos);
  EXPECT_NE(err(R"(,"moe":{"experts":8,"experts_per_tok":2})").find("did you mean 'experts_per_token'?"),
            std::string::npos);
  EXPECT_NE(err(R"(,"published_active_params_b":0.5)").find("published_active_params_b: goes with a \"moe\" object"),
            std::string::npos);
  EXPECT_NE(err(R"(,"mla":{"kv_lora_rank":8})").find("resources/models/x.json: mla: q_lora_rank: missing"),
            std::string::npos);
  EXPECT_NE(err(R"(,"sliding_window":{"tokens":8,"layers":5})")
                .find("resources/models/x.json: sliding_window: layers: must be <= the model's layers (4)"),
            std::string::npos);
}

// MLA under tensor parallelism: every head reads the same latent, so each
// GPU of the group holds and reads all of it (vLLM replicates it): DeepSeek-V3
// at tp 8 keeps 70 272 B per token on every GPU, not 1/8 of it, and the
// decode KV read does not shrink with tp. A GQA model's does.
TEST(Moe, MlaLatentIsReplicatedAcrossTp) {
  const GpuSpec& gpu = reg().gpu("h200-sxm-141g");
  const Precision fp8w{DType::FP8, DType::BF16};
  const CostModel tp8(gpu, reg().model("deepseek-v3"), 8, {}, fp8w);
  const CostModel tp16(gpu, reg().model("deepseek-v3"), 16, {}, fp8w);
  EXPECT_DOUBLE_EQ(tp8.kvBytesPerTokenPerGpu(), 70272.0);
  BatchShape d;
  for (int i = 0; i < 32; ++i) addDecodeSeq(d, 2048);
  const auto kvRead = [&](const CostModel& m) { return m.breakdown(d).decode_attn_s / m.breakdown(d).heterogeneity_h; };
  // 32·2048·70 272 B / (4.8e12 · 0.51) = 1.8807 ms at any tp.
  EXPECT_NEAR(kvRead(tp8) * 1e3, 32.0 * 2048 * 70272 / (4.8e12 * 0.51) * 1e3, 1e-9);
  EXPECT_DOUBLE_EQ(kvRead(tp8), kvRead(tp16));
  // Qwen3-235B has 4 KV heads: tp 2 → 2 heads a GPU; tp 4 and tp 8 → one
  // head each (past 4 GPUs the heads are replicated, as vLLM does).
  const auto q = [&](int tp) { return CostModel(gpu, reg().model("qwen3-235b-a22b"), tp).kvBytesPerTokenPerGpu(); };
  EXPECT_DOUBLE_EQ(q(2), 2 * q(4));
  EXPECT_DOUBLE_EQ(q(4), q(8));
  EXPECT_DOUBLE_EQ(q(8), 192512.0 / 4);
}
