// Issue 47: sliding-window attention in the KV accounting. A sliding layer
// keeps only the last W tokens of a sequence (in whole blocks, as vLLM V1's
// SlidingWindowManager frees them), reads only those in a decode step and
// attends over at most W keys in prefill. Every figure worked out by hand.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "cost/cost_report.h"
#include "cost/presets.h"

using namespace sl;

namespace {
const PresetRegistry& reg() {
  return PresetRegistry::builtin();
}
/// The preset without its window: every layer keeps the whole context.
ModelSpec noWindow(const char* id) {
  ModelSpec m = reg().model(id);
  m.sliding_window = 0;
  m.sliding_layers = 0;
  return m;
}
}  // namespace

// gpt-oss-120b: 36 layers, 8 KV heads of 64, bf16: 2·8·64·2 = 2 048 B per
// token and layer; 73 728 B per token over 36 layers, 36 864 on the 18 full
// and 36 864 on the 18 sliding (W = 128) layers.
TEST(SlidingWindow, GptOssBytesPerTokenSplit) {
  const CostModel c(reg().gpu("h100-sxm-80g"), reg().model("gpt-oss-120b"), 1);
  EXPECT_EQ(c.kvBytesPerToken(), 73728);
  EXPECT_EQ(c.kvBytesPerTokenFull(), 36864);
  EXPECT_EQ(c.kvBytesPerTokenWindowed(), 36864);
  const CostModel dense(reg().gpu("h100-sxm-80g"), reg().model("llama-3.1-8b"), 1);
  EXPECT_EQ(dense.kvBytesPerTokenWindowed(), 0);
  EXPECT_EQ(dense.kvBytesPerTokenFull(), dense.kvBytesPerToken());
}

// A 4 000-token sequence, blocks of 16.
//   no window: 250 blocks · 16 · 73 728 = 294 912 000 B
//   window:    full layers 4 000 · 36 864 = 147 456 000; sliding layers keep
//              the blocks from the one holding token 4 000 − 128 + 1 = 3 873
//              (0-based 3 872: block 242) on: 250 − 242 = 8 blocks, 128
//              tokens · 36 864 = 4 718 592; total 152 174 592 B.
//   4 001 tokens: 251 blocks, block 242 still the first kept: 9 blocks (144
//              tokens); (4 016 + 144) · 36 864 = 153 354 240 B.
//   100 tokens: 7 blocks on every layer, 112 · 73 728 = 8 257 536 B.
TEST(SlidingWindow, KvBytesOfOneSequenceByHand) {
  const GpuSpec& h100 = reg().gpu("h100-sxm-80g");
  const CostModel w(h100, reg().model("gpt-oss-120b"), 1);
  const CostModel whole(h100, noWindow("gpt-oss-120b"), 1);
  EXPECT_DOUBLE_EQ(whole.kvBytesForContext(4000, 16), 294912000.0);
  EXPECT_EQ(w.windowTokensHeld(4000, 16), 128);
  EXPECT_DOUBLE_EQ(w.kvBytesForContext(4000, 16), 152174592.0);
  EXPECT_EQ(w.windowTokensHeld(4001, 16), 144);
  EXPECT_DOUBLE_EQ(w.kvBytesForContext(4001, 16), 153354240.0);
  EXPECT_DOUBLE_EQ(w.kvBytesForContext(100, 16), 8257536.0);
  EXPECT_DOUBLE_EQ(whole.kvBytesForContext(100, 16), 8257536.0);
  // The window never holds more than ⌈(128 + 16 − 2)/16⌉ = 9 blocks.
  std::int64_t most = 0;
  for (std::int64_t t = 1; t <= 2000; ++t) most = std::max(most, w.windowTokensHeld(t, 16));
  EXPECT_EQ(most, 144);
}

// A decode step of 8 sequences of 4 000 tokens on one H100 (3.35 TB/s, η_kv
// 0.51; equal lengths and 8·8 CTAs < 264 slots: h = 1):
//   no window: 73 728 · 32 000 / (3.35e12 · 0.51) = 1.380 9 ms
//   window:    36 864 · 32 000 + 36 864 · min(32 000, 8 · 128) = 1 217 396 736 B
//              / 1.708 5e12 = 0.712 55 ms
// Every other term is the same; the step is shorter by the difference.
TEST(SlidingWindow, DecodeStepReadsTheWindowOnly) {
  const GpuSpec& h100 = reg().gpu("h100-sxm-80g");
  const CostModel w(h100, reg().model("gpt-oss-120b"), 1);
  const CostModel whole(h100, noWindow("gpt-oss-120b"), 1);
  BatchShape b;
  for (int i = 0; i < 8; ++i) addDecodeSeq(b, 4000);
  const CostBreakdown bw = w.breakdown(b), bn = whole.breakdown(b);
  EXPECT_DOUBLE_EQ(bw.heterogeneity_h, 1.0);
  EXPECT_NEAR(bn.decode_attn_s * 1e3, 73728.0 * 32000 / (3.35e12 * 0.51) * 1e3, 1e-9);
  EXPECT_NEAR(bn.decode_attn_s * 1e3, 1.38092, 1e-5);
  EXPECT_NEAR(bw.decode_attn_s * 1e3, 1217396736.0 / (3.35e12 * 0.51) * 1e3, 1e-9);
  EXPECT_NEAR(bw.decode_attn_s * 1e3, 0.71255, 1e-5);
  EXPECT_DOUBLE_EQ(bw.linear_s, bn.linear_s);
  EXPECT_DOUBLE_EQ(bw.expert_s, bn.expert_s);
  EXPECT_NEAR(bn.total_s - bw.total_s, bn.decode_attn_s - bw.decode_attn_s, 1e-15);
  EXPECT_DOUBLE_EQ(w.iterationSeconds(b), bw.total_s);
  // Contexts within the window: both read the same.
  BatchShape s;
  for (int i = 0; i < 8; ++i) addDecodeSeq(s, 100);
  EXPECT_DOUBLE_EQ(w.breakdown(s).decode_attn_s, whole.breakdown(s).decode_attn_s);
}

// Prefill of 2 000 new tokens (no cache): Σ n(c + n/2) = 2e6 key-query
// pairs per layer; a sliding layer attends over at most 128 keys: min(2e6,
// 128 · 2 000) = 256 000. 4 · 18 · 64 · 64 = 294 912 FLOP-units per layer
// half, at 989 TFLOP/s · η_a 0.55:
//   no window: 589 824 · 2e6 / 5.439 5e14 = 2.168 7 ms
//   window:    294 912 · (2e6 + 256 000) / 5.439 5e14 = 1.223 1 ms
TEST(SlidingWindow, PrefillAttendsOverTheWindow) {
  const GpuSpec& h100 = reg().gpu("h100-sxm-80g");
  const CostModel w(h100, reg().model("gpt-oss-120b"), 1);
  const CostModel whole(h100, noWindow("gpt-oss-120b"), 1);
  BatchShape b;
  addPrefillChunk(b, 2000);
  const double F = 989e12 * 0.55;
  EXPECT_NEAR(whole.breakdown(b).prefill_attn_s, 589824.0 * 2e6 / F, 1e-12);
  EXPECT_NEAR(w.breakdown(b).prefill_attn_s, 294912.0 * 2256000.0 / F, 1e-12);
  EXPECT_NEAR(w.breakdown(b).prefill_attn_s * 1e3, 1.2231, 1e-4);
}

// KV capacity: T tokens fit when T · full + min(T, S · W') · sliding ≤
// usable, W' = 144 (9 blocks) the most one window holds, S = maxSeqs.
// gpt-oss-120b on 2 × H200 (KV split over 2): full and sliding 18 432 B per
// token and GPU; 256 windows take 256 · 144 · 18 432 = 679 477 248 B.
TEST(SlidingWindow, CapacityCountsTheWindowsOnce) {
  const GpuSpec& h200 = reg().gpu("h200-sxm-141g");
  const CostModel w(h200, reg().model("gpt-oss-120b"), 2);
  const CostModel whole(h200, noWindow("gpt-oss-120b"), 2);
  const double usable = w.usableKvBytesPerGpu(0.9);
  ASSERT_GT(usable, 1e9);
  const std::int64_t blocks = w.kvCapacityBlocks(0.9, 1.0, 16);
  const std::int64_t before = whole.kvCapacityBlocks(0.9, 1.0, 16);
  EXPECT_EQ(before, static_cast<std::int64_t>(std::floor(usable / (16 * 36864.0))));
  EXPECT_EQ(blocks, static_cast<std::int64_t>(std::floor((usable - 679477248.0) / 18432.0 / 16)));
  // Memory holds: the blocks on the full layers plus 256 full windows.
  EXPECT_LE(static_cast<double>(blocks) * 16 * 18432 + 679477248.0, usable);
  EXPECT_GT(blocks, 19 * before / 10);
  // kv_capacity_fraction scales the tokens.
  EXPECT_EQ(w.kvCapacityBlocks(0.9, 0.5, 16),
            static_cast<std::int64_t>(std::floor((usable - 679477248.0) / 18432.0 / 16 * 0.5)));
}

// Llama-4-Scout (8 192-token chunks on 36 of 48 layers, recorded as a
// window) on 4 × H100: 256 windows of 513 blocks would take 256 · 8 208 ·
// 147 456 / 4 = 77.5 GB per GPU, more than is left after the weights: the
// whole-context bound is the larger and the capacity stays as without the
// window. With 8 sequences the windows take 2.4 GB and the 12 full layers
// (12 288 B per token and GPU) hold the rest.
TEST(SlidingWindow, LargeWindowNeverCostsCapacity) {
  const GpuSpec& h100 = reg().gpu("h100-sxm-80g");
  CostModel w(h100, reg().model("llama-4-scout"), 4);
  const CostModel whole(h100, noWindow("llama-4-scout"), 4);
  EXPECT_EQ(w.kvBytesPerTokenFull(), 12 * 4096);
  EXPECT_EQ(w.kvBytesPerTokenWindowed(), 36 * 4096);
  EXPECT_EQ(w.kvCapacityBlocks(0.9, 1.0, 16), whole.kvCapacityBlocks(0.9, 1.0, 16));
  w.setMaxSeqs(8);
  const double usable = w.usableKvBytesPerGpu(0.9);
  const double windows = 8.0 * 8208 * 36864;
  EXPECT_EQ(w.kvCapacityBlocks(0.9, 1.0, 16), static_cast<std::int64_t>(std::floor((usable - windows) / 12288.0 / 16)));
  EXPECT_GT(w.kvCapacityBlocks(0.9, 1.0, 16), 3 * whole.kvCapacityBlocks(0.9, 1.0, 16));
}

// The weights a decode step of a sparse model reads (the guided tour's step
// on it quotes these): one gpt-oss-120b expert is 3 · 2 880 · 2 880 =
// 24 883 200 parameters, 49 766 400 B in bf16, 1 791 590 400 B over the 36
// MoE layers. One token touches k = 4 experts a layer: 7 166 361 600 B.
// Eight tokens under balanced routing touch 128 · (1 − (124/128)^8) = 28.71.
TEST(SparseDecodeRead, ExpertsTouchedGrowWithTheBatch) {
  const CostModel c(reg().gpu("h100-sxm-80g"), reg().model("gpt-oss-120b"), 8);
  EXPECT_DOUBLE_EQ(c.expertReplicasTouched(1), 4.0);
  EXPECT_DOUBLE_EQ(c.expertWeightBytesRead(1), 7166361600.0);
  const double t8 = 128 * (1 - std::pow(124.0 / 128, 8));
  EXPECT_NEAR(c.expertReplicasTouched(8), t8, 1e-9);
  EXPECT_NEAR(c.expertReplicasTouched(8), 28.71, 0.01);
  EXPECT_NEAR(c.expertWeightBytesRead(8), t8 * 1791590400.0, 1e-3);
  EXPECT_NEAR(c.expertReplicasTouched(8), c.expertsTouched(8), 1e-9);
  // Skewed routing: the popular experts are shared, fewer touched.
  CostModel z(reg().gpu("h100-sxm-80g"), reg().model("gpt-oss-120b"), 8);
  MoeDeployment d;
  d.ep = 8;
  d.routing.kind = RoutingKind::Zipf;
  d.routing.skew = 1.0;
  z.setMoe(d);
  EXPECT_NEAR(z.expertReplicasTouched(1), 4.0, 1e-9);
  EXPECT_LT(z.expertReplicasTouched(8), c.expertReplicasTouched(8));
  EXPECT_GT(z.expertReplicasTouched(8), z.expertReplicasTouched(1));
  // A dense model reads no experts.
  EXPECT_EQ(CostModel(reg().gpu("h100-sxm-80g"), reg().model("llama-3.1-8b"), 1).expertWeightBytesRead(8), 0.0);
}

// `servelab-cli cost` says what the capacity counts.
TEST(SlidingWindow, CostReportNamesTheWindow) {
  const CostModel w(reg().gpu("h200-sxm-141g"), reg().model("gpt-oss-120b"), 2);
  BatchShape b;
  addDecodeSeq(b, 4000);
  const std::string text = formatCostReport(w, b);
  EXPECT_NE(text.find("36864 of them on 18 sliding-window layers that keep 128-144 tokens, windows counted for 256 "
                      "sequences"),
            std::string::npos)
      << text;
  EXPECT_EQ(costReportJson(w, b)["kv_capacity"]["windowed_bytes_per_token"], 36864);
  EXPECT_EQ(costReportJson(w, b)["kv_capacity"]["blocks"], w.kvCapacityBlocks(0.9, 1.0, 16));
}
