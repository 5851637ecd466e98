// Per-operator comparison and refit (core/cost/operator_fit.h) and engine
// presets (core/cost/engine_presets.h).
#include <gtest/gtest.h>

#include <sstream>

#include "cost/engine_presets.h"
#include "cost/operator_fit.h"
#include "cost/presets.h"
#include "util/error.h"

namespace sl {
namespace {

const GpuSpec& h100() { return PresetRegistry::builtin().gpu("h100-sxm-80g"); }

// Llama-2-7B's layer: hidden 4096, 32 heads of 128, MLP 11008.
OperatorRow llama7b(OperatorGroup g, int tp, double tokens, int seqs, double context, double seconds) {
  OperatorRow r;
  r.group = g;
  r.tp = tp;
  r.tokens = tokens;
  r.seqs = seqs;
  r.context = context;
  r.hidden = 4096;
  r.q_heads = 32;
  r.kv_heads = 32;
  r.head_dim = 128;
  r.intermediate = 11008;
  r.dtype_bytes = 2;
  r.seconds = seconds;
  return r;
}

TEST(OperatorFit, ParsesAndPredictsAHandMadeRowByHand) {
  std::istringstream in(
      "# a comment line, with commas\n"
      "source,model,group,tp,tokens,seqs,context,hidden,q_heads,kv_heads,head_dim,intermediate,dtype_bytes,seconds\n"
      "hand,llama-2-7b,linear,1,4096,0,0,4096,32,32,128,11008,2,0.0022\n"
      "hand,llama-2-7b,linear,2,1,0,0,4096,32,32,128,11008,2,3.0e-05\n"
      "hand,llama-2-7b,prefill_attn,1,1024,2,512,4096,32,32,128,11008,2,1.0e-04\n"
      "hand,llama-2-7b,decode_attn,1,8,8,8192,4096,32,32,128,11008,2,2.0e-05\n"
      "hand,llama-2-7b,layer_misc,1,1,0,0,4096,32,32,128,11008,2,2.0e-05\n");
  const std::vector<OperatorRow> rows = parseOperatorCsv(in, "hand.csv");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].line, 3);  // comment lines keep the file's numbering
  CostCoefficients c;
  c.eta_c = 0.70;
  c.eta_w = 0.73;
  c.eta_a = 0.55;
  c.eta_kv = 0.51;
  c.t_layer_us = 32;
  // P_l = 4096·(4096 + 2·4096) + 4096·4096 + 3·4096·11008 = 202,375,168.
  EXPECT_DOUBLE_EQ(rows[0].linearParamsPerLayer(), 202375168.0);
  // 4096 tokens, tp 1: compute 2·P·4096 / (989e12·0.70) = 2.394 ms > weights.
  EXPECT_NEAR(predictOperator(h100(), c, rows[0]), 2.0 * 202375168.0 * 4096 / (989e12 * 0.70), 1e-12);
  EXPECT_NEAR(predictOperator(h100(), c, rows[0]), 2.394709e-3, 1e-9);
  // 1 token, tp 2: weight read P·2 / 2 / (3.35e12·0.73) = 82.76 us.
  EXPECT_NEAR(predictOperator(h100(), c, rows[1]), 202375168.0 * 2 / 2 / (3.35e12 * 0.73), 1e-12);
  EXPECT_NEAR(predictOperator(h100(), c, rows[1]), 82.75411e-6, 1e-11);
  // Prefill: 2 chunks of 512 on 256 cached each: Σ n(c + n/2) = 2·512·(256+256)
  // = 524,288 = 1024·(512 + 512)/2; × 4·32·128 / (989e12·0.55).
  EXPECT_NEAR(predictOperator(h100(), c, rows[2]), 4.0 * 32 * 128 * 524288 / (989e12 * 0.55), 1e-15);
  // Decode: 8192 context tokens × 2·32·128·2 B = 134,217,728 B / (3.35e12·0.51).
  EXPECT_NEAR(predictOperator(h100(), c, rows[3]), 134217728.0 / (3.35e12 * 0.51), 1e-15);
  EXPECT_DOUBLE_EQ(predictOperator(h100(), c, rows[4]), 32e-6);

  const std::vector<OperatorGroupError> errs = compareOperators(h100(), c, rows);
  // linear, linear/weight, linear/compute, prefill_attn, decode_attn, layer_misc
  ASSERT_EQ(errs.size(), 6u);
  EXPECT_EQ(errs[0].name, "linear");
  EXPECT_EQ(errs[0].rows, 2);
  EXPECT_EQ(errs[1].name, "linear/weight");
  EXPECT_EQ(errs[2].name, "linear/compute");
  const double e0 = (2.394709e-3 - 0.0022) / 0.0022 * 100;  // +8.85 %
  EXPECT_NEAR(errs[2].medianSignedPct, e0, 0.01);
  const double e1 = (82.75411e-6 - 30e-6) / 30e-6 * 100;  // +175.8 %
  EXPECT_NEAR(errs[1].medianAbsPct, e1, 0.01);
  EXPECT_NEAR(errs[0].meanAbsPct, (e0 + e1) / 2, 0.01);
  EXPECT_EQ(errs[5].name, "layer_misc");
  EXPECT_NEAR(errs[5].medianSignedPct, 60.0, 1e-9);  // 32 us vs 20 us
}

TEST(OperatorFit, BadRowsNameFileLineAndColumn) {
  const std::string head =
      "source,model,group,tp,tokens,seqs,context,hidden,q_heads,kv_heads,head_dim,intermediate,dtype_bytes,seconds\n";
  auto fails = [&](const std::string& row, const std::string& needle) {
    std::istringstream in(head + row);
    try {
      parseOperatorCsv(in, "ops.csv");
      ADD_FAILURE() << "accepted: " << row;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails("s,m,gemm,1,4,0,0,4096,32,32,128,11008,2,1e-5\n", "ops.csv:2: group: unknown operator group 'gemm'");
  fails("s,m,linear,0,4,0,0,4096,32,32,128,11008,2,1e-5\n", "ops.csv:2: tp: must be >= 1");
  fails("s,m,linear,1,4,0,0,4096,32,32,128,11008,2,0\n", "ops.csv:2: seconds: must be > 0");
  fails("s,m,decode_attn,1,4,4,0,4096,32,32,128,11008,2,1e-5\n", "ops.csv:2: context: must be > 0");
  fails("s,m,linear,1,x,0,0,4096,32,32,128,11008,2,1e-5\n", "ops.csv:2: tokens: not a number");
  std::istringstream noCol("source,model,group\n");
  EXPECT_THROW(parseOperatorCsv(noCol, "ops.csv"), InputError);
}

// Synthetic rows timed with known coefficients and per-group fixed times: the
// fit must give them back.
TEST(OperatorFit, RecoversKnownCoefficientsFromSyntheticRows) {
  CostCoefficients truth;
  truth.eta_c = 0.62;
  truth.eta_w = 0.81;
  truth.eta_a = 0.47;
  truth.eta_kv = 0.66;
  const double kLin = 9e-6, kMisc = 14e-6, kPre = 4e-6, kDec = 6e-6;
  std::vector<OperatorRow> rows;
  for (int tp : {1, 2, 4, 8})
    for (double n : {1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0}) {
      OperatorRow r = llama7b(OperatorGroup::Linear, tp, n, 0, 0, 0);
      // A second architecture so weight reads differ beyond tp.
      OperatorRow big = r;
      big.hidden = 8192;
      big.q_heads = 64;
      big.kv_heads = 8;
      big.intermediate = 28672;
      for (OperatorRow* x : {&r, &big}) {
        x->seconds = kLin + predictOperator(h100(), truth, *x);
        rows.push_back(*x);
      }
    }
  for (double n : {1.0, 8.0, 32.0}) {
    OperatorRow r = llama7b(OperatorGroup::LayerMisc, 1, n, 0, 0, kMisc);
    rows.push_back(r);
  }
  for (double n : {64.0, 256.0, 1024.0, 2048.0})
    for (double ctx : {0.0, 512.0, 4096.0}) {
      OperatorRow r = llama7b(OperatorGroup::PrefillAttn, 2, n, 1, ctx, 0);
      r.seconds = kPre + predictOperator(h100(), truth, r);
      rows.push_back(r);
    }
  for (int b : {1, 8, 64, 256})
    for (double per : {64.0, 1024.0, 8192.0}) {
      OperatorRow r = llama7b(OperatorGroup::DecodeAttn, 4, b, b, b * per, 0);
      r.seconds = kDec + predictOperator(h100(), truth, r);
      rows.push_back(r);
    }
  CostCoefficients base;  // start from the defaults
  const OperatorFitReport rep = fitOperators(h100(), rows, base);
  EXPECT_TRUE(rep.converged);
  EXPECT_NEAR(rep.coefficients.eta_c, truth.eta_c, 1e-6);
  EXPECT_NEAR(rep.coefficients.eta_w, truth.eta_w, 1e-6);
  EXPECT_NEAR(rep.coefficients.eta_a, truth.eta_a, 1e-6);
  EXPECT_NEAR(rep.coefficients.eta_kv, truth.eta_kv, 1e-6);
  EXPECT_NEAR(rep.linearFixedUs, 9.0, 1e-4);
  EXPECT_NEAR(rep.miscFixedUs, 14.0, 1e-4);
  EXPECT_NEAR(rep.prefillFixedUs, 4.0, 1e-4);
  EXPECT_NEAR(rep.decodeFixedUs, 6.0, 1e-4);
  EXPECT_NEAR(rep.coefficients.t_layer_us, 9.0 + 14.0 + 6.0, 1e-4);
  // What the operator data cannot see stays the base's.
  EXPECT_EQ(rep.coefficients.t_step_us, base.t_step_us);
  EXPECT_EQ(rep.coefficients.t_seq_us, base.t_seq_us);
  for (const OperatorGroupError& e : rep.fitErrors) EXPECT_LT(e.meanAbsPct, 1e-6) << e.name;
}

TEST(OperatorFit, GroupsWithoutRowsKeepTheBase) {
  std::vector<OperatorRow> rows;
  for (double n : {1.0, 64.0, 4096.0}) {
    OperatorRow r = llama7b(OperatorGroup::Linear, 1, n, 0, 0, 0);
    r.seconds = predictOperator(h100(), CostCoefficients{}, r);
    rows.push_back(r);
  }
  const OperatorFitReport rep = fitOperators(h100(), rows);
  EXPECT_EQ(rep.coefficients.eta_a, CostCoefficients{}.eta_a);
  EXPECT_EQ(rep.coefficients.eta_kv, CostCoefficients{}.eta_kv);
  EXPECT_EQ(rep.coefficients.t_layer_us, CostCoefficients{}.t_layer_us);
  EXPECT_FALSE(rep.notes.empty());
  EXPECT_THROW(fitOperators(h100(), {}), InputError);
}

TEST(EnginePresets, BuiltinsLoadWithSourcesAndOneDefault) {
  const auto& all = enginePresets();
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(defaultEngineId(), "vllm-v1");
  const EnginePreset& v05 = enginePreset("vllm-v0.5");
  EXPECT_EQ(v05.coefficients.at("t_step_us").get<double>(), 4000.0);
  for (const EnginePreset& p : all)
    for (auto it = p.coefficients.begin(); it != p.coefficients.end(); ++it)
      EXPECT_FALSE(p.sources.at(it.key()).get<std::string>().empty()) << p.id << " " << it.key();
  CostCoefficients base;
  base.eta_c = 0.5;
  const CostCoefficients c = v05.apply(base);
  EXPECT_EQ(c.t_step_us, 4000.0);
  EXPECT_EQ(c.eta_c, 0.5);  // keys the preset does not name are kept
  // The default preset equals the built-in defaults on its keys.
  const CostCoefficients d = enginePreset(defaultEngineId()).apply(CostCoefficients{});
  EXPECT_EQ(d.toJson(), CostCoefficients{}.toJson());
}

TEST(EnginePresets, UnknownIdNamesTheFieldAndSuggests) {
  try {
    enginePreset("vllm-v0.6", "cluster.engine");
    FAIL() << "accepted an unknown engine";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("cluster.engine: unknown engine 'vllm-v0.6'", 0), 0u) << m;
    EXPECT_NE(m.find("did you mean"), std::string::npos) << m;
    EXPECT_NE(m.find("vllm-v1"), std::string::npos) << m;
  }
}

TEST(EnginePresets, PresetFilesAreChecked) {
  const nlohmann::json ok = {{"id", "x"},
                             {"name", "X"},
                             {"coefficients", {{"t_step_us", 10}}},
                             {"sources", {{"t_step_us", "somewhere"}}}};
  EXPECT_NO_THROW(parseEnginePreset(ok, "x.json"));
  nlohmann::json noSource = ok;
  noSource["sources"] = nlohmann::json::object();
  EXPECT_THROW(parseEnginePreset(noSource, "x.json"), InputError);
  nlohmann::json badKey = ok;
  badKey["coefficients"] = {{"t_stepp_us", 10}};
  badKey["sources"] = {{"t_stepp_us", "s"}};
  EXPECT_THROW(parseEnginePreset(badKey, "x.json"), InputError);
  nlohmann::json negative = ok;
  negative["coefficients"] = {{"t_step_us", -1}};
  EXPECT_THROW(parseEnginePreset(negative, "x.json"), InputError);
}

// The a100-80g preset's own coefficients are exactly what the refit of its
// per-operator data gives (the preset's numbers are that fit, rounded to
// three decimals), and with them the weight-bound GEMMs move from 22 % too
// fast to within the data's spread.
TEST(OperatorFit, A100PresetIsTheFitOfItsOperatorData) {
  const std::vector<OperatorRow> rows =
      readOperatorCsv(std::string(SERVELAB_SOURCE_DIR) + "/resources/profiles/a100-operators.csv");
  ASSERT_EQ(rows.size(), 576u);
  const GpuSpec& gpu = PresetRegistry::builtin().gpu("a100-80g");
  const OperatorFitReport rep =
      fitOperators(gpu, rows, CostCoefficients{}, {OperatorGroup::Linear, OperatorGroup::LayerMisc});
  const CostCoefficients preset = gpuCoefficients(gpu);
  EXPECT_NEAR(rep.coefficients.eta_c, preset.eta_c, 0.0005);
  EXPECT_NEAR(rep.coefficients.eta_w, preset.eta_w, 0.0005);
  const auto weightErr = [&](const CostCoefficients& c) {
    for (const OperatorGroupError& e : compareOperators(gpu, c, rows))
      if (e.name == "linear/weight") return e.medianSignedPct;
    return 0.0;
  };
  EXPECT_LT(weightErr(CostCoefficients{}), -20.0);  // the H100 fit reads A100 weights too fast
  EXPECT_GT(weightErr(preset), -13.0);
}

}  // namespace
}  // namespace sl
