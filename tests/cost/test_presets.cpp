// Presets: embedded data, derived model numbers, lookups with did-you-mean.
#include <cmath>
#include <optional>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cost/embedded_presets.h"
#include "cost/cost_model.h"
#include "cost/presets.h"
#include "cost/suggest.h"
#include "util/error.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {
const PresetRegistry& reg() { return PresetRegistry::builtin(); }
using Files = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST(Presets, GpuTableInStableOrderDefaultFirst) {
  const std::vector<std::string> expected = {
      "h100-sxm-80g",  "h100-96g",  "h100-nvl-94g", "h100-pcie-80g", "h800-80g", "h20-141g", "l40-48g", "a100-40g",
      "h200-sxm-141g", "b200-180g", "l40s-48g",     "mi300x-192g",   "a100-80g", "l4-24g",   "a10g-24g"};
  EXPECT_EQ(reg().gpus(), expected);
  const GpuSpec& h = reg().gpu("h100-sxm-80g");
  EXPECT_DOUBLE_EQ(h.bf16_tflops, 989);
  EXPECT_DOUBLE_EQ(h.hbm_tbps, 3.35);
  EXPECT_DOUBLE_EQ(h.hbm_gib, 80);
  ASSERT_TRUE(h.nvlink_gbps.has_value());
  EXPECT_DOUBLE_EQ(h.nvlinkBytesPerSec(), 450e9);
  EXPECT_DOUBLE_EQ(h.hostLinkBytesPerSec(), 64e9);
  EXPECT_DOUBLE_EQ(h.hbmBytes(), 80.0 * 1024 * 1024 * 1024);

  EXPECT_FALSE(reg().gpu("h100-96g").nvlink_gbps.has_value());
  EXPECT_DOUBLE_EQ(reg().gpu("h100-96g").hbm_gib, 96);
  EXPECT_DOUBLE_EQ(reg().gpu("h100-96g").nvlinkBytesPerSec(), 0.0);
  EXPECT_DOUBLE_EQ(reg().gpu("h100-96g").intraNodeLinkBytesPerSec(), 64e9);
  EXPECT_DOUBLE_EQ(reg().gpu("h100-nvl-94g").bf16_tflops, 835);
  EXPECT_DOUBLE_EQ(reg().gpu("h100-nvl-94g").hbm_tbps, 3.9);
  EXPECT_DOUBLE_EQ(*reg().gpu("h100-nvl-94g").nvlink_gbps, 300);
  EXPECT_DOUBLE_EQ(reg().gpu("h100-pcie-80g").bf16_tflops, 756);
  EXPECT_DOUBLE_EQ(reg().gpu("h100-pcie-80g").hbm_tbps, 2.0);
  EXPECT_FALSE(reg().gpu("h100-pcie-80g").nvlink_gbps);
  EXPECT_DOUBLE_EQ(*reg().gpu("h800-80g").nvlink_gbps, 200);
  EXPECT_DOUBLE_EQ(reg().gpu("h20-141g").bf16_tflops, 148);
  EXPECT_DOUBLE_EQ(reg().gpu("h20-141g").hbm_tbps, 4.8);
  EXPECT_DOUBLE_EQ(reg().gpu("h20-141g").hbm_gib, 141);
  EXPECT_DOUBLE_EQ(reg().gpu("l40-48g").hbm_tbps, 0.864);
  EXPECT_FALSE(reg().gpu("l40-48g").nvlink_gbps);
  EXPECT_DOUBLE_EQ(reg().gpu("l40-48g").host_link_gbps, 32);
  EXPECT_DOUBLE_EQ(reg().gpu("a100-40g").bf16_tflops, 312);
  EXPECT_DOUBLE_EQ(reg().gpu("a100-40g").hbm_tbps, 1.555);
  EXPECT_DOUBLE_EQ(*reg().gpu("a100-40g").nvlink_gbps, 300);
}

// Today's deployments (issue 23 item 4): the vendors' datasheet figures,
// dense peaks (half the with-sparsity figures where the sheet lists those).
TEST(Presets, NewGpusFromTheirDatasheets) {
  struct Want {
    const char* id;
    double bf16, fp8, tbps, gib;
    std::optional<double> nvlink;
    double peer, host;
  };
  const Want want[] = {
      {"h200-sxm-141g", 989, 1979, 4.8, 141, 450, 450, 64},
      {"b200-180g", 2250, 4500, 7.7, 180, 900, 900, 64},
      {"l40s-48g", 362, 733, 0.864, 48, std::nullopt, 0, 32},
      {"mi300x-192g", 1307, 2615, 5.3, 192, 448, 64, 64},    // xGMI mesh: 7 peers × 64
      {"l4-24g", 121, 242.5, 0.3, 24, std::nullopt, 0, 32},  // issue 49: Mélange's L4
  };
  for (const Want& w : want) {
    const GpuSpec& g = reg().gpu(w.id);
    EXPECT_DOUBLE_EQ(g.bf16_tflops, w.bf16) << w.id;
    ASSERT_TRUE(g.hasFp8()) << w.id;
    EXPECT_DOUBLE_EQ(g.fp8FlopsPerSec(), w.fp8 * 1e12) << w.id;
    EXPECT_DOUBLE_EQ(g.hbm_tbps, w.tbps) << w.id;
    EXPECT_DOUBLE_EQ(g.hbm_gib, w.gib) << w.id;
    EXPECT_EQ(g.nvlink_gbps, w.nvlink) << w.id;
    EXPECT_DOUBLE_EQ(g.peerLinkBytesPerSec(), w.peer * 1e9) << w.id;
    EXPECT_DOUBLE_EQ(g.hostLinkBytesPerSec(), w.host * 1e9) << w.id;
  }
  // Mélange's A10G: the A10 datasheet's figures, no FP8 (Ampere), 80 SMs.
  const GpuSpec& a10g = reg().gpu("a10g-24g");
  EXPECT_DOUBLE_EQ(a10g.bf16_tflops, 125);
  EXPECT_FALSE(a10g.hasFp8());
  EXPECT_DOUBLE_EQ(a10g.hbm_tbps, 0.6);
  EXPECT_DOUBLE_EQ(a10g.hbm_gib, 24);
  EXPECT_EQ(a10g.sm_count, 80);
  EXPECT_EQ(reg().gpu("l4-24g").sm_count, 58);
  // The mesh: collectives see all seven links, one peer only its own.
  const GpuSpec& mi = reg().gpu("mi300x-192g");
  EXPECT_DOUBLE_EQ(mi.intraNodeLinkBytesPerSec(), 448e9);
  EXPECT_DOUBLE_EQ(mi.peerLinkBytesPerSec() * 7, mi.nvlinkBytesPerSec());
  EXPECT_DOUBLE_EQ(reg().gpu("l40s-48g").intraNodeLinkBytesPerSec(), 32e9);
}

TEST(Presets, Fp8PeaksOnEveryGpuThatHasFp8) {
  // Dense FP8 = 2 × dense BF16 on every FP8 GPU here (H100 NVL: 1,670 of 835.5).
  const std::pair<const char*, double> fp8[] = {
      {"h100-sxm-80g", 1979}, {"h100-96g", 1979}, {"h100-nvl-94g", 1670}, {"h100-pcie-80g", 1513},
      {"h800-80g", 1979},     {"h20-141g", 296},  {"l40-48g", 362}};
  for (const auto& [id, tflops] : fp8) {
    ASSERT_TRUE(reg().gpu(id).fp8_tflops) << id;
    EXPECT_DOUBLE_EQ(*reg().gpu(id).fp8_tflops, tflops) << id;
  }
  EXPECT_FALSE(reg().gpu("a100-40g").hasFp8());  // Ampere: no FP8 tensor cores
  EXPECT_DOUBLE_EQ(reg().gpu("a100-40g").fp8FlopsPerSec(), 0.0);
  for (const GpuSpec& g : reg().allGpus()) {
    EXPECT_FALSE(g.source.empty()) << g.id << " cites no source";
    if (g.fp8_tflops) {
      EXPECT_NE(g.source.find("FP8"), std::string::npos) << g.id << ": the source names the FP8 figure";
      EXPECT_GE(*g.fp8_tflops, 1.99 * g.bf16_tflops) << g.id << ": a sparse figure typed as dense?";
      EXPECT_LE(*g.fp8_tflops, 2.03 * g.bf16_tflops) << g.id;  // L40S: 733 of 362.05
    }
    if (!g.peer_link_gbps) {
      EXPECT_DOUBLE_EQ(g.peerLinkBytesPerSec(), g.nvlinkBytesPerSec()) << g.id;
    }
  }
}

TEST(Presets, ModelsListed) {
  const std::vector<std::string> expected = {"r1-distill-qwen-32b", "llama-3.1-8b",
                                             "llama-3.2-3b",        "qwen3-14b",
                                             "llama-3.1-70b",       "llama-2-70b",
                                             "phi-3-mini",          "glm-4-9b",
                                             "phi-3-medium",        "qwen2.5-14b",
                                             "qwq-32b",             "qwen2.5-32b",
                                             "qwen3-8b",            "qwen3-32b",
                                             "llama-3.3-70b",       "mixtral-8x7b",
                                             "qwen3-30b-a3b",       "qwen3-235b-a22b",
                                             "gpt-oss-120b",        "gpt-oss-20b",
                                             "llama-4-scout",       "deepseek-v3"};
  EXPECT_EQ(reg().models(), expected);
  EXPECT_EQ(&reg().model("llama-3.3-70b-instruct"), &reg().model("llama-3.3-70b"));
  EXPECT_EQ(&reg().model("deepseek-r1-distill-qwen-32b"), &reg().model("r1-distill-qwen-32b"));
  EXPECT_TRUE(reg().hasModel("deepseek-r1-distill-qwen-32b"));
  EXPECT_FALSE(reg().hasModel("gpt-5"));
  EXPECT_TRUE(reg().model("llama-3.2-3b").tied_embeddings);
  EXPECT_FALSE(reg().model("llama-3.1-8b").tied_embeddings);
}

TEST(Presets, DerivedParamCountsMatchPublishedWithinOnePercent) {
  for (const auto& m : reg().allModels()) {
    const double derived = static_cast<double>(m.paramCount());
    const double published = m.published_params_b * 1e9;
    // Llama-4-Scout's published 109 B includes its vision encoder, which
    // ServeLab does not count (tests/cost/test_moe.cpp: within 2 %).
    EXPECT_LT(std::abs(derived / published - 1.0), m.id == "llama-4-scout" ? 0.02 : 0.01)
        << m.id << ": derived " << derived / 1e9 << " B vs published " << m.published_params_b;
    EXPECT_EQ(m.weightBytes(), m.paramCount() * m.dtype_bytes) << m.id;
  }
}

TEST(Presets, DerivedNumbersExact) {
  const ModelSpec& q = reg().model("r1-distill-qwen-32b");
  EXPECT_EQ(q.kvBytesPerToken(), 262144);  // 256 KiB
  // 64 · (5120·(40+16)·128 + 40·128·5120 + 3·5120·27648)
  EXPECT_EQ(q.linearParamsPerLayer(), 487'587'840);
  // Embedding + LM head + layers + norms: the published 32.76 B less the QKV biases.
  EXPECT_EQ(q.paramCount(), 32'763'417'600);
  const ModelSpec& l8 = reg().model("llama-3.1-8b");
  EXPECT_EQ(l8.kvBytesPerToken(), 131072);
  EXPECT_EQ(l8.paramCount(), 8'030'261'248);  // exactly the published count
  const ModelSpec& l3 = reg().model("llama-3.2-3b");
  EXPECT_EQ(l3.paramCount(), 3'212'749'824);  // tied: no separate LM head
  EXPECT_EQ(l3.linearParams(), l3.linearParamsPerLayer() * 28 + 128256LL * 3072);
  EXPECT_EQ(reg().model("llama-2-70b").paramCount(), 68'976'648'192);
  EXPECT_EQ(reg().model("llama-3.1-70b").paramCount(), 70'553'706'496);
}

// Issue 23's models, from their config.json (the figures in each file's
// "source"). By hand: Qwen3-8B per layer 4096·(32+16)·128 + 32·128·4096 +
// 3·4096·12288 = 25,165,824 + 16,777,216 + 150,994,944 = 192,937,984;
// ×36 + 2·4096·36 norms + 4096 + 2·151936·4096 embedding/LM head
// = 6,945,767,424 + 294,912 + 4,096 + 1,244,659,712 = 8,190,726,144 (card: 8.2 B).
// Qwen3-32B: q_heads·head_dim = 8192 ≠ hidden 5120; per layer 5120·80·128 +
// 64·128·5120 + 3·5120·25600 = 487,587,840; total 32,762,106,880 (card: 32.8 B).
// KV per token: 2 · layers · 8 · 128 · 2 B.
TEST(Presets, Issue23ModelsFromTheirConfigs) {
  const ModelSpec& q8 = reg().model("qwen3-8b");
  EXPECT_EQ(q8.linearParamsPerLayer(), 192'937'984);
  EXPECT_EQ(q8.paramCount(), 8'190'726'144);
  EXPECT_EQ(q8.kvBytesPerToken(), 147'456);  // 144 KiB
  EXPECT_EQ(q8.max_context, 40960);
  const ModelSpec& q32 = reg().model("qwen3-32b");
  EXPECT_EQ(q32.linearParamsPerLayer(), 487'587'840);
  EXPECT_EQ(q32.paramCount(), 32'762'106'880);
  EXPECT_EQ(q32.kvBytesPerToken(), 262'144);  // 256 KiB
  const ModelSpec& l33 = reg().model("llama-3.3-70b");
  EXPECT_EQ(l33.paramCount(), 70'553'706'496);  // the Llama-3.1-70B architecture
  EXPECT_EQ(l33.kvBytesPerToken(), 327'680);    // 320 KiB
  EXPECT_EQ(l33.max_context, 131072);
  for (const ModelSpec* m : {&q8, &q32, &l33}) {
    EXPECT_FALSE(m->tied_embeddings) << m->id;
    EXPECT_EQ(m->dtype_bytes, 2) << m->id;  // published in bfloat16
  }
}

// CascadeInfer's eight models (§5.1): the figures of each published
// config.json give these counts (embedding + layers + norms + LM head, no
// biases) and KV bytes per token (2 · layers · kv_heads · head_dim · 2 B).
TEST(Presets, CascadeInferModelsFromTheirConfigs) {
  struct Want { const char* id; long long params; long long kv; };
  const Want want[] = {
      {"phi-3-mini", 3'821'079'552, 393'216},      // 32 kv heads of 96: no GQA
      {"glm-4-9b", 9'399'767'040, 40'960},         // 2 KV groups
      {"phi-3-medium", 13'960'238'080, 204'800},   // 10 kv heads
      {"qwen2.5-14b", 14'769'689'600, 196'608},
      {"qwen2.5-32b", 32'763'417'600, 262'144},
      {"qwq-32b", 32'763'417'600, 262'144},        // the Qwen2.5-32B architecture
  };
  for (const auto& w : want) {
    const ModelSpec& m = reg().model(w.id);
    EXPECT_EQ(m.paramCount(), w.params) << w.id;
    EXPECT_EQ(m.kvBytesPerToken(), w.kv) << w.id;
    EXPECT_GE(m.max_context, 131072) << w.id << ": the paper's models all take 128K contexts";
  }
  // The paper's short names resolve.
  EXPECT_EQ(reg().model("phi-3-3b").id, "phi-3-mini");
  EXPECT_EQ(reg().model("phi-3-14b").id, "phi-3-medium");
  EXPECT_EQ(reg().model("qwen-2.5-32b").id, "qwen2.5-32b");
}

TEST(Presets, Fabrics) {
  const std::vector<std::string> expected = {"pascal-100g", "cascade-400g", "arrow-nvlink"};
  EXPECT_EQ(reg().fabrics(), expected);
  EXPECT_DOUBLE_EQ(reg().fabric("pascal-100g").bytesPerSec(), 12.5e9);
  EXPECT_DOUBLE_EQ(reg().fabric("cascade-400g").bytesPerSec(), 50e9);
  EXPECT_DOUBLE_EQ(reg().fabric("arrow-nvlink").bytesPerSec(), 400e9);
  EXPECT_EQ(reg().fabric("arrow-nvlink").kind, "nvlink");
  for (const auto& f : reg().allFabrics()) EXPECT_EQ(f.gpus_per_node, 8) << f.id;
}

TEST(Presets, UnknownIdsSuggest) {
  const std::string g = errorOf([] { reg().gpu("h100-sxm-80"); });
  EXPECT_NE(g.find("unknown GPU preset 'h100-sxm-80': did you mean 'h100-sxm-80g'?"),
            std::string::npos) << g;
  EXPECT_NE(g.find("known: h100-sxm-80g, h100-96g,"), std::string::npos) << g;
  const std::string g2 = errorOf([] { reg().gpu("h100x"); });
  EXPECT_NE(g2.find("did you mean 'h100-"), std::string::npos) << g2;
  const std::string m = errorOf([] { reg().model("llama-3.1-8"); });
  EXPECT_NE(m.find("unknown model preset 'llama-3.1-8': did you mean 'llama-3.1-8b'?"),
            std::string::npos) << m;
  const std::string m2 = errorOf([] { reg().model("deepseek-r1-distil-qwen-32b"); });
  EXPECT_NE(m2.find("did you mean 'deepseek-r1-distill-qwen-32b'?"), std::string::npos) << m2;
  const std::string far = errorOf([] { reg().model("zzzzzzzzzzzzzzzzzzzzzz"); });
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  EXPECT_NE(far.find("known: r1-distill-qwen-32b"), std::string::npos) << far;
  const std::string f = errorOf([] { reg().fabric("pascal-100"); });
  EXPECT_NE(f.find("did you mean 'pascal-100g'?"), std::string::npos) << f;
}

TEST(Presets, EditDistance) {
  EXPECT_EQ(costdetail::editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(costdetail::editDistance("", "abc"), 3u);
  EXPECT_EQ(costdetail::editDistance("same", "same"), 0u);
  EXPECT_EQ(costdetail::closestMatch("eta_x", {"eta_c", "eta_kv"}), "eta_c");
  EXPECT_EQ(costdetail::closestMatch("completely-different", {"eta_c"}), "");
}

TEST(Presets, BadPresetFilesNameFileAndField) {
  const std::string bad = errorOf([] {
    PresetRegistry r(Files{{"hardware/x.json",
                       R"({"id":"x","name":"X","bf16_tflops":-1,"hbm_tbps":1,"hbm_gib":1,)"
                       R"("nvlink_gbps":null,"host_link_gbps":1})"}});
  });
  EXPECT_NE(bad.find("resources/hardware/x.json: bf16_tflops: must be > 0"), std::string::npos)
      << bad;
  const std::string typo = errorOf([] {
    PresetRegistry r(Files{{"fabric/y.json", R"({"id":"y","name":"Y","kind":"nic","gpus_per_node":8,)"
                                        R"("nic_gbps":1,"link_latency_us":1,"nic_gbp":3})"}});
  });
  EXPECT_NE(typo.find("resources/fabric/y.json: nic_gbp: unknown field: did you mean 'nic_gbps'?"),
            std::string::npos) << typo;
  const std::string missing = errorOf([] { PresetRegistry r(Files{{"models/z.json", R"({"id":"z"})"}}); });
  EXPECT_NE(missing.find("resources/models/z.json: name: missing"), std::string::npos) << missing;
}

// Issue 45 item 4: a GPU preset may carry coefficients fitted on its own
// per-operator data; the others use the built-in defaults (the H100 SXM fit).
TEST(Presets, PerGpuCoefficientsOnlyWhereTheGpuHasOperatorData) {
  const GpuSpec& a = reg().gpu("a100-80g");
  EXPECT_DOUBLE_EQ(a.hbm_tbps, 2.039);
  EXPECT_DOUBLE_EQ(a.hbm_gib, 80);
  ASSERT_EQ(a.coefficients.size(), 2u);
  EXPECT_EQ(a.coefficients[0].first, "eta_c");
  EXPECT_DOUBLE_EQ(a.coefficients[0].second, 0.714);
  EXPECT_EQ(a.coefficients[1].first, "eta_w");
  EXPECT_DOUBLE_EQ(a.coefficients[1].second, 0.78);
  EXPECT_NE(a.coefficients_source.find("a100-operators.csv"), std::string::npos);
  const CostCoefficients c = gpuCoefficients(a), d;
  EXPECT_DOUBLE_EQ(c.eta_c, 0.714);
  EXPECT_DOUBLE_EQ(c.eta_w, 0.78);
  EXPECT_DOUBLE_EQ(c.eta_a, d.eta_a);
  EXPECT_DOUBLE_EQ(c.eta_kv, d.eta_kv);
  EXPECT_DOUBLE_EQ(c.t_layer_us, d.t_layer_us);
  for (const std::string& id : reg().gpus()) {
    if (id == "a100-80g") continue;
    EXPECT_TRUE(reg().gpu(id).coefficients.empty()) << id;
    EXPECT_EQ(gpuCoefficients(reg().gpu(id)).toJson(), d.toJson()) << id;
  }
}

TEST(Presets, BadPerGpuCoefficientsNameFileAndField) {
  const std::string head = R"({"id":"x","name":"X","bf16_tflops":1,"hbm_tbps":1,"hbm_gib":1,"fp8_tflops":null,)"
                           R"("nvlink_gbps":null,"host_link_gbps":1,"sm_count":1,"source":"s")";
  const auto err = [&](const std::string& tail) {
    return errorOf([&] { PresetRegistry r(Files{{"hardware/x.json", head + tail + "}"}}); });
  };
  EXPECT_NE(err(R"(,"coefficients":{"eta_q":0.5},"coefficients_source":"d")")
                .find("resources/hardware/x.json: coefficients: eta_q: unknown field: did you mean 'eta_c'?"),
            std::string::npos);
  // Only what a per-operator profile can fit: not the CPU overheads.
  EXPECT_NE(err(R"(,"coefficients":{"t_step_us":5},"coefficients_source":"d")")
                .find("resources/hardware/x.json: coefficients: t_step_us: unknown field"),
            std::string::npos);
  EXPECT_NE(err(R"(,"coefficients":{"eta_w":0},"coefficients_source":"d")")
                .find("resources/hardware/x.json: coefficients: eta_w: must be > 0"),
            std::string::npos);
  EXPECT_NE(err(R"(,"coefficients":{"eta_w":0.8})").find("resources/hardware/x.json: coefficients_source: missing"),
            std::string::npos);
  EXPECT_NE(err(R"(,"coefficients_source":"d")").find("resources/hardware/x.json: coefficients_source: goes with"),
            std::string::npos);
  EXPECT_NE(err(R"(,"coefficients":{},"coefficients_source":"d")")
                .find("resources/hardware/x.json: coefficients: must be a non-empty object"),
            std::string::npos);
}

TEST(Presets, EmbeddedFilesMatchSourceTree) {
  const auto files = costdetail::embeddedPresetFiles();
  EXPECT_EQ(files.size(), 15u + 22u + 3u);  // hardware, models, engines
  for (const auto& f : files) {
    std::ifstream in(std::string(SERVELAB_SOURCE_DIR) + "/resources/" + f.path);
    ASSERT_TRUE(in) << f.path;
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), std::string(f.text)) << f.path << " is stale: re-run CMake";
  }
}
