// Issue 23 item 4: today's GPU and model presets and the FP8 options. Each
// GPU × model pairing below is worked out by hand in the comments from the
// formulas of /work/shared/spec/20-cost-model.md (tp 1, so no all-reduce
// term), and the test compares the cost model with those hand figures.
//
// Coefficients used throughout: the spec's (η_c 0.70, η_a 0.55, η_w 0.73,
// η_kv 0.51; t_step 126 µs, t_layer 32 µs, t_seq 4.4 µs; ServeLab's defaults
// now differ, docs/cost-model.md), passed explicitly; gpu_memory_utilization 0.9,
// kv_capacity_fraction 1, block 16 tokens; activation reserve 1 GiB +
// 1 KiB × vocab. A decode batch of 32 sequences at 2048 context (equal
// lengths, so h = 1) and a prefill of one 2048-token prompt (no cache:
// Σ n(c + n/2) = 2048 · 1024 = 2,097,152).
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "cost/presets.h"
#include "util/error.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {

const PresetRegistry& reg() { return PresetRegistry::builtin(); }

// 20-cost-model.md's coefficients, which the hand figures below use.
CostCoefficients specCoefficients() {
  CostCoefficients c;
  c.eta_c = 0.70;
  c.eta_a = 0.55;
  c.eta_w = 0.73;
  c.eta_kv = 0.51;
  c.t_step_us = 126;
  c.t_layer_us = 32;
  c.t_seq_us = 4.4;
  return c;
}

CostModel make(const char* gpu, const char* model, Precision p = {}, int tp = 1) {
  return CostModel(reg().gpu(gpu), reg().model(model), tp, specCoefficients(), p);
}

BatchShape decode32x2048() {
  BatchShape b;
  for (int i = 0; i < 32; ++i) addDecodeSeq(b, 2048);
  return b;
}

BatchShape prefill2048() {
  BatchShape b;
  addPrefillChunk(b, 2048);
  return b;
}

std::int64_t blocks(const CostModel& m) { return m.kvCapacityBlocks(0.9, 1.0, 16); }

// Relative tolerance: the hand figures are the same arithmetic in another
// order, so they agree to rounding.
void expectSeconds(double got, double want, const char* what) {
  EXPECT_NEAR(got, want, want * 1e-12) << what;
}


// One pairing's hand figures: weight bytes, KV blocks, and the two iterations.
struct HandFigures {
  std::int64_t weightBytes, blocks;
  double decodeS, prefillS;
};
void expectHand(const CostModel& m, const HandFigures& h) {
  const std::string at = m.gpu().id + " × " + m.model().id;
  EXPECT_EQ(m.weightBytes(), h.weightBytes) << at;
  EXPECT_EQ(blocks(m), h.blocks) << at;
  expectSeconds(m.iterationSeconds(decode32x2048()), h.decodeS, (at + ", decode 32@2048").c_str());
  expectSeconds(m.iterationSeconds(prefill2048()), h.prefillS, (at + ", prefill 2048").c_str());
}

}  // namespace

// H200 SXM × Llama-3.3-70B with FP8 weights (the only way it fits one H200).
//   Parameters P = 70,553,706,496; the layers' linear weights
//   P_L = 80 × 855,638,016 = 68,451,041,280; the rest (embedding, LM head,
//   norms) 2,102,665,216; LM head P_H = 128,256 × 8192 = 1,050,673,152.
//   FP8 weights W = 68,451,041,280 × 1 + 2,102,665,216 × 2 = 72,656,371,712 B.
//   HBM 141 GiB = 151,397,597,184 B; × 0.9 = 136,257,837,465.6;
//   reserve 1,073,741,824 + 1024 × 128,256 = 1,205,075,968;
//   usable = 136,257,837,465.6 − 72,656,371,712 − 1,205,075,968 = 62,396,389,785.6 B.
//   KV per token 2·80·8·128·2 = 327,680 B; a block 5,242,880 B;
//   blocks = ⌊11,901.17⌋ = 11,901. FP8 KV: 163,840 B, ⌊23,802.33⌋ = 23,802.
//   Decode 32 @ 2048: compute 2·32·(P_L/1979e12 + P_H/989e12)/0.70 = 3.2595 ms
//   < weight read 72,656,371,712/(4.8e12·0.73) = 20.7353 ms; KV read
//   65,536 · 327,680/(4.8e12·0.51) = 8.7724 ms; overhead 126 + 32·80 + 4.4·32
//   = 2,826.8 µs; total 2.8268 + 20.7353 + 8.7724 = 32.3345 ms.
//   Prefill 2048: compute 2·2048·(P_L/1979e12 + P_H/989e12)/0.70 = 208.6096 ms
//   > 20.7353; attention 4·80·64·128·2,097,152/(989e12·0.55) = 10.1067 ms
//   (bf16 peak); overhead 126 + 2560 + 4.4 = 2,690.4 µs; total 221.4068 ms.
TEST(Deployments, H200Llama33_70bFp8Weights) {
  const CostModel m = make("h200-sxm-141g", "llama-3.3-70b", {DType::FP8, DType::BF16});
  expectHand(m, {72'656'371'712, 11'901, 0.032334466422419196, 0.22140677192989977});
  const CostBreakdown d = m.breakdown(decode32x2048());
  expectSeconds(d.linear_s, 72'656'371'712.0 / (4.8e12 * 0.73), "weight read");
  expectSeconds(d.decode_attn_s, 65'536.0 * 327'680 / (4.8e12 * 0.51), "KV read");
  const CostBreakdown p = m.breakdown(prefill2048());
  expectSeconds(p.linear_s, 2.0 * 2048 * (68'451'041'280.0 / 1979e12 + 1'050'673'152.0 / 989e12) / 0.70,
                "FP8 linear compute");
  expectSeconds(p.prefill_attn_s, 4.0 * 80 * 64 * 128 * 2'097'152 / (989e12 * 0.55), "attention at bf16");
  // BF16 weights (141.1 GB) do not fit one H200: the message says so.
  const std::string e = errorOf([] { blocks(make("h200-sxm-141g", "llama-3.3-70b")); });
  EXPECT_NE(e.find("Llama-3.3-70B-Instruct needs 141 GB of weights"), std::string::npos) << e;
  EXPECT_NE(e.find("use tp \u2265 2"), std::string::npos) << e;

  const CostModel kv8 = make("h200-sxm-141g", "llama-3.3-70b", {DType::FP8, DType::FP8});
  EXPECT_EQ(kv8.kvBytesPerToken(), 163'840);
  EXPECT_EQ(blocks(kv8), 23'802);
  expectSeconds(kv8.iterationSeconds(decode32x2048()), 0.02794826616098129, "decode, FP8 KV");
}

// B200 × Qwen3-32B, bf16.
//   P = 32,762,106,880; W = 2 × P = 65,524,213,760 B; P_linear = 64 ×
//   487,587,840 + 151,936 × 5120 = 31,205,621,760 + 777,912,320 = 31,983,534,080.
//   HBM 180 GiB = 193,273,528,320 B; × 0.9 = 173,946,175,488; reserve
//   1,073,741,824 + 1024 × 151,936 = 1,229,324,288; usable = 107,192,637,440 B.
//   KV per token 2·64·8·128·2 = 262,144 B; a block 4,194,304 B;
//   blocks = ⌊25,556.72⌋ = 25,556.
//   Decode: compute 2·32·31,983,534,080/(2250e12·0.70) = 1.2996 ms < weights
//   65,524,213,760/(7.7e12·0.73) = 11.6570 ms; KV 65,536·262,144/(7.7e12·0.51)
//   = 4.3748 ms; overhead 126 + 2048 + 140.8 = 2,314.8 µs; total 18.3466 ms.
//   Prefill: compute 2·2048·31,983,534,080/(2250e12·0.70) = 83.1775 ms;
//   attention 4·64·64·128·2,097,152/(2250e12·0.55) = 3.5540 ms; overhead
//   2,178.4 µs; total 88.9099 ms.
TEST(Deployments, B200Qwen3_32b) {
  const CostModel m = make("b200-180g", "qwen3-32b");
  expectHand(m, {65'524'213'760, 25'556, 0.018346646096019478, 0.088909872592434977});
  expectSeconds(m.breakdown(prefill2048()).prefill_attn_s, 4.0 * 64 * 64 * 128 * 2'097'152 / (2250e12 * 0.55),
                "attention");
}

// L40S × Qwen3-8B, bf16.
//   P = 8,190,726,144; W = 16,381,452,288 B; P_linear = 36 × 192,937,984 +
//   151,936 × 4096 = 6,945,767,424 + 622,329,856 = 7,568,097,280.
//   48 GiB = 51,539,607,552 B; × 0.9 = 46,385,646,796.8; reserve 1,229,324,288;
//   usable = 28,774,870,220.8 B. KV per token 2·36·8·128·2 = 147,456 B; a
//   block 2,359,296 B; blocks = ⌊12,196.38⌋ = 12,196.
//   Decode: compute 2·32·7,568,097,280/(362e12·0.70) = 1.9114 ms < weights
//   16,381,452,288/(0.864e12·0.73) = 25.9726 ms; KV 65,536·147,456/(0.864e12·0.51)
//   = 21.9310 ms; overhead 126 + 1152 + 140.8 = 1,418.8 µs; total 49.3224 ms.
//   Prefill: compute 2·2048·7,568,097,280/(362e12·0.70) = 122.3320 ms;
//   attention 4·36·32·128·2,097,152/(362e12·0.55) = 6.2127 ms; overhead
//   1,282.4 µs; total 129.8271 ms.
TEST(Deployments, L40sQwen3_8b) {
  expectHand(make("l40s-48g", "qwen3-8b"), {16'381'452'288, 12'196, 0.049322423529411769, 0.12982710086286575});
}

// MI300X × Llama-3.3-70B, bf16 on one GPU (192 GB holds the 141 GB).
//   W = 2 × 70,553,706,496 = 141,107,412,992 B; 192 GiB = 206,158,430,208 B;
//   × 0.9 = 185,542,587,187.2; reserve 1,205,075,968; usable
//   43,230,098,227.2 B; blocks = ⌊43,230,098,227.2 / 5,242,880⌋ = ⌊8,245.49⌋ = 8,245.
//   Decode: compute 2·32·69,501,714,432/(1307e12·0.70) = 4.8619 ms < weights
//   141,107,412,992/(5.3e12·0.73) = 36.4713 ms; KV 65,536·327,680/(5.3e12·0.51)
//   = 7.9448 ms; overhead 2,826.8 µs; total 47.2429 ms.
//   Prefill: compute 2·2048·69,501,714,432/(1307e12·0.70) = 311.1586 ms;
//   attention 4·80·64·128·2,097,152/(1307e12·0.55) = 7.6477 ms; overhead
//   2,690.4 µs; total 321.4967 ms.
TEST(Deployments, Mi300xLlama33_70b) {
  const CostModel m = make("mi300x-192g", "llama-3.3-70b");
  expectHand(m, {141'107'412'992, 8'245, 0.047242903495517408, 0.3214967334683882});
  // KV transfers between two MI300X see one xGMI link, collectives all seven.
  EXPECT_DOUBLE_EQ(m.peerLinkBytesPerSec(), 64e9);
  EXPECT_DOUBLE_EQ(m.nvlinkBytesPerSec(), 448e9);
}

// What FP8 halves, exactly, on every FP8 GPU × model pairing that fits.
TEST(Deployments, Fp8HalvesWhatItShould) {
  for (const GpuSpec& g : reg().allGpus()) {
    if (!g.hasFp8()) continue;
    for (const ModelSpec& mod : reg().allModels()) {
      const int tp = 8;  // every model fits but the largest MoE ones on the smallest GPUs
      if (static_cast<double>(mod.weightBytes()) > 0.8 * tp * g.hbmBytes()) continue;
      const CostModel bf(g, mod, tp);
      const CostModel w8(g, mod, tp, {}, {DType::FP8, DType::BF16});
      const CostModel kv8(g, mod, tp, {}, {DType::BF16, DType::FP8});
      const std::string at = g.id + " × " + mod.id;
      // bf16 is the preset's own numbers.
      EXPECT_EQ(bf.weightBytes(), mod.weightBytes()) << at;
      EXPECT_EQ(bf.kvBytesPerToken(), mod.kvBytesPerToken()) << at;
      // FP8 KV: bytes per token halve, so the KV read of a decode halves
      // and a block holds twice the tokens.
      EXPECT_EQ(kv8.kvBytesPerToken() * 2, bf.kvBytesPerToken()) << at;
      const BatchShape d = decode32x2048();
      EXPECT_EQ(kv8.breakdown(d).decode_attn_s * 2, bf.breakdown(d).decode_attn_s) << at;
      EXPECT_EQ(kv8.breakdown(d).linear_s, bf.breakdown(d).linear_s) << at;
      const double bfBlocks = bf.usableKvBytesPerGpu(0.9) / (16 * bf.kvBytesPerTokenPerGpu());
      if (mod.sliding_window == 0)
        EXPECT_EQ(kv8.kvCapacityBlocks(0.9, 1, 16), static_cast<std::int64_t>(std::floor(2 * bfBlocks))) << at;
      else  // the windows' share halves too (docs/cost-model.md "Sliding-window KV"): at least twice
        EXPECT_GE(kv8.kvCapacityBlocks(0.9, 1, 16), 2 * bf.kvCapacityBlocks(0.9, 1, 16)) << at;
      // FP8 weights: the layers' linear weights halve (1 byte of 2); the
      // embedding, norms and LM head do not.
      const std::int64_t layerLinear = mod.layerLinearParams();
      EXPECT_EQ(bf.weightBytes() - w8.weightBytes(), layerLinear) << at;
      EXPECT_EQ(w8.kvBytesPerToken(), bf.kvBytesPerToken()) << at;
      // Attention and the all-reduce (activations, 2 bytes) do not move.
      const BatchShape p = prefill2048();
      EXPECT_EQ(w8.breakdown(p).prefill_attn_s, bf.breakdown(p).prefill_attn_s) << at;
      EXPECT_EQ(w8.breakdown(p).comm_s, bf.breakdown(p).comm_s) << at;
      EXPECT_EQ(kv8.breakdown(p).comm_s, bf.breakdown(p).comm_s) << at;
      // fp16 costs what bf16 costs.
      const CostModel f16(g, mod, tp, {}, {DType::FP16, DType::FP16});
      EXPECT_EQ(f16.iterationSeconds(p), bf.iterationSeconds(p)) << at;
      EXPECT_EQ(f16.kvCapacityBlocks(0.9, 1, 16), bf.kvCapacityBlocks(0.9, 1, 16)) << at;
    }
  }
}

// Linear compute at the FP8 peak: on H100 SXM (FP8 1979, BF16 989) a large
// prefill's linear time is 2·N·(P_L/1979e12 + P_H/989e12)/0.70 against the
// bf16 model's 2·N·(P_L + P_H)/(989e12·0.70). Llama-3.1-8B: P_L = 32 ×
// 218,103,808 = 6,979,321,856, P_H = 525,336,576.
TEST(Deployments, Fp8WeightsRunTheLinearLayersAtTheFp8Peak) {
  const CostModel bf = make("h100-sxm-80g", "llama-3.1-8b");
  const CostModel w8 = make("h100-sxm-80g", "llama-3.1-8b", {DType::FP8, DType::BF16});
  BatchShape b;
  addPrefillChunk(b, 8192);
  const double pl = 6'979'321'856.0, ph = 525'336'576.0;
  expectSeconds(bf.breakdown(b).linear_s, 2.0 * 8192 * (pl + ph) / (989e12 * 0.70), "bf16 linear");
  expectSeconds(w8.breakdown(b).linear_s, 2.0 * 8192 * (pl / 1979e12 + ph / 989e12) / 0.70, "fp8 linear");
  EXPECT_EQ(w8.weightBytes(), 16'060'522'496 - 6'979'321'856);
}

TEST(Deployments, Fp8OnAGpuWithoutFp8NamesTheField) {
  const std::string w = errorOf([] { make("a100-40g", "llama-3.1-8b", {DType::FP8, DType::BF16}); });
  EXPECT_EQ(w.rfind("cluster.model_dtype: fp8 needs a GPU with FP8 tensor cores; a100-40g has none", 0), 0u) << w;
  const std::string kv = errorOf([] { make("a100-40g", "llama-3.1-8b", {DType::BF16, DType::FP8}); });
  EXPECT_EQ(kv.rfind("cluster.kv_dtype: fp8 needs", 0), 0u) << kv;
  EXPECT_NO_THROW(make("a100-40g", "llama-3.1-8b", {DType::FP16, DType::BF16}));
  EXPECT_EQ(parseDType("fp8", "x"), DType::FP8);
  const std::string bad = errorOf([] { parseDType("fp4", "cluster.kv_dtype"); });
  EXPECT_EQ(bad, "cluster.kv_dtype: must be one of 'bf16', 'fp16', 'fp8' (got 'fp4')");
}

// A100 80GB with its own per-operator fit (η_w 0.78): Llama-3.1-8B, tp 1,
// decode 8 sequences. The weight read dominates: all 8 030 261 248 parameters
// (untied embedding and LM head) × 2 B = 16.06 GB at 2.039 TB/s × 0.78 =
// 10.098 ms, against 2 · 7.50 G params · 8 tokens / (312 T · 0.714) = 0.54 ms
// of compute (tests/run/test_gpu_coefficients.cpp: a scenario gets the same).
TEST(Deployments, A100UsesItsOwnWeightReadEfficiency) {
  const GpuSpec& gpu = reg().gpu("a100-80g");
  const ModelSpec& m = reg().model("llama-3.1-8b");
  ASSERT_EQ(m.paramCount(), 8030261248);
  const CostModel cm(gpu, m, 1, gpuCoefficients(gpu));
  BatchShape b;
  b.decode_seqs = 8;
  b.decode_ctx_sum = 8 * 1024;
  const double expected = 8030261248.0 * 2 / (2.039e12 * 0.78);
  EXPECT_NEAR(cm.breakdown(b).linear_s, expected, 1e-9);
  EXPECT_NEAR(expected * 1e3, 10.098, 0.001);
  // The built-in defaults (the H100 fit, η_w 0.90) would give 8.75 ms.
  EXPECT_NEAR(CostModel(gpu, m, 1, CostCoefficients{}).breakdown(b).linear_s * 1e3, 8.752, 0.001);
}
