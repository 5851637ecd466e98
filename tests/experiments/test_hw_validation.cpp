// hw-validation (core/experiments/validation): the embedded measurements,
// the scenario a row asks for, the prediction of one row against a hand
// calculation with the cost model, the error arithmetic, the rules that
// leave a row out of a metric, and the experiment's --quick run.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "experiment_test_util.h"
#include "experiments/validation/hw_validation.h"
#include "run/run.h"
#include "util/error.h"

namespace sl::exp {
namespace {

MeasuredRow row(int tp, int prompt, int batch, int tokens, double ttft, double tpot, double e2e) {
  MeasuredRow r;
  r.tp = tp;
  r.prompt = prompt;
  r.batch = batch;
  r.tokens = tokens;
  r.repeats = 5;
  r.ttft = {ttft, 0, ttft, ttft};
  r.tpot = {tpot, 0, tpot, tpot};
  r.e2e = {e2e, 0, e2e, e2e};
  return r;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(HwValidationData, EmbeddedCopyEqualsTheSourceFile) {
  const char* text = embeddedValidationCsv("splitwise_h100_llama2_70b.csv");
  ASSERT_NE(text, nullptr);
  const std::string onDisk = readFile(std::string(SERVELAB_SOURCE_DIR) + "/resources/validation/splitwise_h100_llama2_70b.csv");
  ASSERT_FALSE(onDisk.empty());
  EXPECT_EQ(std::string(text), onDisk);
  EXPECT_EQ(embeddedValidationCsv("no-such.csv"), nullptr);
}

TEST(HwValidationData, SplitwiseGroupHasEveryConfiguration) {
  const auto& groups = validationGroups();
  ASSERT_EQ(groups.size(), 1u);
  const ValidationGroup& g = groups[0];
  EXPECT_EQ(g.gpu, "h100-sxm-80g");
  EXPECT_EQ(g.model, "llama-2-70b");
  // 19 configurations per TP (three sweeps sharing prompt 512 / batch 1 / 128 tokens) × TP 2, 4, 8.
  ASSERT_EQ(g.rows.size(), 57u);
  const MeasuredRow& first = g.rows.front();  // the file's first data line
  EXPECT_EQ(first.tp, 2);
  EXPECT_EQ(first.prompt, 128);
  EXPECT_EQ(first.batch, 1);
  EXPECT_EQ(first.tokens, 128);
  EXPECT_EQ(first.repeats, 5);
  EXPECT_DOUBLE_EQ(first.ttft.mean, 49.204);
  EXPECT_DOUBLE_EQ(first.ttft.sd, 3.271);
  EXPECT_DOUBLE_EQ(first.tpot.mean, 37.211);
  EXPECT_DOUBLE_EQ(first.e2e.max, 4794.395);
  for (const MeasuredRow& r : g.rows) {
    EXPECT_EQ(r.repeats, 5);
    EXPECT_TRUE(r.tp == 2 || r.tp == 4 || r.tp == 8);
  }
}

TEST(HwValidationData, BadCsvNamesFileLineAndColumn) {
  const std::string header =
      "tensor_parallel,prompt_size,batch_size,token_size,repeats,prompt_time_ms_mean,prompt_time_ms_sd,"
      "prompt_time_ms_min,prompt_time_ms_max,token_time_ms_mean,token_time_ms_sd,token_time_ms_min,token_time_ms_max,"
      "e2e_time_ms_mean,e2e_time_ms_sd,e2e_time_ms_min,e2e_time_ms_max\n";
  const std::string good = "8,512,1,128,5,50,1,49,51,30,0,30,30,3860,5,3850,3870\n";
  EXPECT_EQ(parseMeasuredCsv(header + good, "x.csv").size(), 1u);
  auto message = [](const std::string& csv) {
    try {
      parseMeasuredCsv(csv, "x.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("tensor_parallel,prompt_size\n8,512\n").find("x.csv: missing column 'batch_size'"), std::string::npos);
  EXPECT_NE(message(header + "8,512,1,128,5,abc,1,49,51,30,0,30,30,3860,5,3850,3870\n")
                .find("x.csv:2: prompt_time_ms_mean: expected a number, got 'abc'"),
            std::string::npos);
  EXPECT_NE(message(header + "0,512,1,128,5,50,1,49,51,30,0,30,30,3860,5,3850,3870\n")
                .find("x.csv:2: tensor_parallel: must be > 0"),
            std::string::npos);
  EXPECT_NE(message(header + "8,512,1,128,5,60,1,49,51,30,0,30,30,3860,5,3850,3870\n")
                .find("prompt_time_ms_mean: the mean is outside [min, max]"),
            std::string::npos);
  EXPECT_NE(message(header).find("x.csv: no measurements"), std::string::npos);
}

TEST(HwValidationScenario, MatchesTheRowExactly) {
  const MeasuredRow r = row(4, 512, 64, 128, 3532, 52, 10167);
  const Scenario s = validationScenario(r, "h100-sxm-80g", "llama-2-70b");
  EXPECT_EQ(s.model, "llama-2-70b");
  EXPECT_EQ(s.cluster.instances, 1);
  EXPECT_EQ(s.cluster.gpu, "h100-sxm-80g");
  EXPECT_EQ(s.cluster.tp, 4);
  EXPECT_FALSE(s.cluster.chunked_prefill);
  EXPECT_EQ(s.cluster.max_num_batched_tokens, 64 * 512);  // the whole batch in one prefill
  EXPECT_EQ(s.cluster.max_num_seqs, 256);
  EXPECT_EQ(s.cluster.cost, nlohmann::json::object());  // the default cost model
  EXPECT_FALSE(s.cluster.profile.has_value());
  EXPECT_EQ(s.workload.requests, 64);
  EXPECT_EQ(s.workload.input_tokens.kind, LengthDist::Kind::Constant);
  EXPECT_EQ(s.workload.input_tokens.value, 512);
  EXPECT_EQ(s.workload.reasoning_tokens.kind, LengthDist::Kind::Constant);
  EXPECT_EQ(s.workload.reasoning_tokens.value, 0);
  EXPECT_EQ(s.workload.answer_tokens.kind, LengthDist::Kind::Constant);
  EXPECT_EQ(s.workload.answer_tokens.value, 128);
  EXPECT_FALSE(s.workload.preset.has_value());
  EXPECT_FALSE(s.workload.trace.has_value());

  // A small batch keeps the default budget; a batch above the default
  // sequence cap raises it; cost overrides name only what they change.
  const Scenario small = validationScenario(row(8, 128, 1, 128, 50, 30, 3860), "h100-sxm-80g", "llama-2-70b",
                                            {{"t_step_us", 20000}});
  EXPECT_EQ(small.cluster.max_num_batched_tokens, 8192);
  EXPECT_EQ(small.cluster.cost, (nlohmann::json{{"t_step_us", 20000}}));
  EXPECT_EQ(validationScenario(row(8, 16, 300, 8, 50, 30, 300), "h100-sxm-80g", "llama-2-70b").cluster.max_num_seqs, 300);
}

TEST(HwValidationScenario, PredictionIsOnePrefillThenDecodesOfTheCostModel) {
  // Batch 1, 3 output tokens: TTFT is one prefill iteration of the prompt,
  // then two decode iterations.
  const MeasuredRow r = row(8, 512, 1, 3, 50, 30, 110);
  const Scenario s = validationScenario(r, "h100-sxm-80g", "llama-2-70b");
  const auto cost = makeCostModel(s);
  BatchShape prefill;
  addPrefillChunk(prefill, 512);
  const double ttftMs = std::round(cost->iterationSeconds(prefill) * 1e9) / 1e6;
  const Prediction p = predictRow(r, "h100-sxm-80g", "llama-2-70b");
  EXPECT_TRUE(p.onePrefill);
  EXPECT_NEAR(p.ttft_ms, ttftMs, 1e-6);
  // Each decode reads the whole context: between a 512- and a 515-token one.
  BatchShape d0, d1;
  addDecodeSeq(d0, 512);
  addDecodeSeq(d1, 515);
  EXPECT_GE(p.tpot_ms, cost->iterationSeconds(d0) * 1e3 - 1e-6);
  EXPECT_LE(p.tpot_ms, cost->iterationSeconds(d1) * 1e3 + 1e-6);
  EXPECT_NEAR(p.e2e_ms, p.ttft_ms + 2 * p.tpot_ms, 1e-5);

  // Only the per-iteration overhead changes: every iteration gets 10 ms longer.
  const Prediction q = predictRow(r, "h100-sxm-80g", "llama-2-70b", {{"t_step_us", cost->coefficients().t_step_us + 10000}});
  EXPECT_NEAR(q.ttft_ms - p.ttft_ms, 10.0, 1e-5);
  EXPECT_NEAR(q.tpot_ms - p.tpot_ms, 10.0, 1e-5);
}

TEST(HwValidationScenario, WholeBatchArrivesAtZeroAndPrefillsTogether) {
  // 16 prompts of 8192 tokens: beyond Llama-2's 4096-token context, which
  // the measured engine ran anyway; ServeLab runs them unclipped.
  const MeasuredRow big = row(8, 8192, 16, 4, 50, 30, 200);
  const Prediction p = predictRow(big, "h100-sxm-80g", "llama-2-70b");
  EXPECT_TRUE(p.onePrefill);
  const Scenario s = validationScenario(big, "h100-sxm-80g", "llama-2-70b");
  BatchShape prefill;
  for (int i = 0; i < 16; ++i) addPrefillChunk(prefill, 8192);
  EXPECT_NEAR(p.ttft_ms, makeCostModel(s)->iterationSeconds(prefill) * 1e3, 1e-5);
}

TEST(HwValidationErrors, HandMadeRows) {
  EXPECT_DOUBLE_EQ(signedErrorPct(110, 100), 10.0);
  EXPECT_DOUBLE_EQ(signedErrorPct(45, 50), -10.0);
  const ErrorSummary s = summarizeErrors({10, -20, 30, -40});
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.medianAbsPct, 25.0);   // |e| = 10 20 30 40
  EXPECT_DOUBLE_EQ(s.meanAbsPct, 25.0);
  EXPECT_DOUBLE_EQ(s.medianSignedPct, -5.0);  // -40 -20 10 30
  EXPECT_DOUBLE_EQ(s.maxAbsPct, 40.0);
  const ErrorSummary odd = summarizeErrors({-3, 1, 8});
  EXPECT_DOUBLE_EQ(odd.medianAbsPct, 3.0);
  EXPECT_DOUBLE_EQ(odd.meanAbsPct, 4.0);
  EXPECT_DOUBLE_EQ(odd.medianSignedPct, 1.0);
  EXPECT_TRUE(std::isnan(summarizeErrors({}).meanAbsPct));
}

TEST(HwValidationErrors, RowsLeftOutOfAMetric) {
  // e2e = TTFT + (tokens − 1) · TPOT: every metric is compared.
  const MeasuredRow whole = row(2, 512, 1, 128, 100, 10, 100 + 127 * 10);
  const std::vector<MeasuredRow> one = {whole};
  const RowUse a = rowUse(whole, one);
  EXPECT_TRUE(a.ttft && a.tpot && a.e2e);
  EXPECT_TRUE(a.reason.empty());
  // The run stopped after ~91 tokens: its e2e is not the asked configuration's.
  const MeasuredRow shortRun = row(2, 512, 1, 128, 100, 10, 1000);
  const RowUse b = rowUse(shortRun, {shortRun});
  EXPECT_TRUE(b.ttft && b.tpot);
  EXPECT_FALSE(b.e2e);
  EXPECT_NE(b.reason.find("short output: e2e implies 91 of 128 tokens"), std::string::npos);
  // Within 1 %: still compared; a longer e2e (per-request work after the
  // last token) is no sign of a short run.
  EXPECT_TRUE(rowUse(row(2, 512, 1, 128, 100, 10, 100 + 126 * 10), {}).e2e);
  EXPECT_FALSE(rowUse(row(2, 512, 1, 128, 100, 10, 100 + 125 * 10), {}).e2e);
  EXPECT_TRUE(rowUse(row(2, 512, 1, 128, 100, 10, 100 + 140 * 10), {}).e2e);
  // A larger batch with a shorter prompt phase did not run as one batch.
  const MeasuredRow b32 = row(2, 512, 32, 128, 2394, 52, 9049);
  const MeasuredRow b64 = row(2, 512, 64, 128, 361, 42, 83864);
  const MeasuredRow b8 = row(2, 512, 8, 128, 606, 40, 5742);
  const RowUse c = rowUse(b64, {b8, b32, b64});
  EXPECT_FALSE(c.ttft || c.tpot || c.e2e);
  EXPECT_NE(c.reason.find("not one batch: batch 32 has a longer prompt phase (2394 ms > 361 ms)"), std::string::npos);
  // Another TP, prompt or output size does not count.
  EXPECT_TRUE(rowUse(b64, {row(4, 512, 32, 128, 2394, 52, 9049), row(2, 1024, 32, 128, 2394, 52, 9049),
                           row(2, 512, 32, 256, 2394, 52, 9049)})
                  .ttft);
  EXPECT_TRUE(rowUse(b32, {b32, b64}).ttft);
}

TEST(HwValidationExperiment, RegisteredAndRunsQuick) {
  const Experiment* e = findExperiment("hw-validation");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->title.empty());
  const ExperimentResult r = runQuick("hw-validation");
  // --quick: the 19 TP-8 configurations.
  ASSERT_EQ(r.table.rows.size(), 19u);
  int compared = 0;
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    EXPECT_EQ(cell(r.table, i, "tp"), 8);
    EXPECT_GT(cell(r.table, i, "ttft_pred_ms"), 0);
    EXPECT_GT(cell(r.table, i, "tpot_pred_ms"), 0);
    EXPECT_GT(cell(r.table, i, "e2e_pred_ms"), cell(r.table, i, "ttft_pred_ms"));
    const double err = cell(r.table, i, "ttft_err_pct");
    EXPECT_NEAR(err, 100 * (cell(r.table, i, "ttft_pred_ms") - cell(r.table, i, "ttft_meas_ms")) / cell(r.table, i, "ttft_meas_ms"),
                0.2);
    if (str(r.table, i, "compared").find("ttft") != std::string::npos) ++compared;
  }
  EXPECT_EQ(compared, 19);  // no TP-8 row breaks a rule for TTFT
  ASSERT_EQ(r.charts.size(), 3u);
  EXPECT_EQ(r.charts[0].name, "predicted_vs_measured.csv");
  EXPECT_EQ(r.charts[0].plots.size(), 3u);
  EXPECT_EQ(r.charts[0].csv.rfind("group,metric,tp,prompt,batch,tokens,measured_ms,", 0), 0u);
  EXPECT_EQ(r.charts[2].name, "step_overhead_sweep.csv");
  // The sweep: the default and one other t_step_us, three metrics each,
  // over all rows and over TP 8 (the only TP of --quick).
  std::istringstream sweep(r.charts[2].csv);
  std::string line;
  int lines = 0;
  while (std::getline(sweep, line)) ++lines;
  EXPECT_EQ(lines, 1 + 2 * 2 * 3);
  EXPECT_NE(r.charts[2].csv.find("splitwise-h100-llama2-70b,20000,no,8,tpot,19,"), std::string::npos);
  // Deterministic.
  EXPECT_EQ(runQuick("hw-validation").table.csv(), r.table.csv());
}

}  // namespace
}  // namespace sl::exp
