// hw-validation-modern (experiments/validation/modern_validation.h): the
// CSV's checks name file, line and column; each mode becomes the scenario
// it says; each metric is read from the run as the benchmark measures it;
// the embedded data parse and reference presets that exist.
#include <set>

#include <gtest/gtest.h>

#include "experiments/validation/modern_validation.h"
#include "util/error.h"

#include "../common/input_error.h"

using namespace sl;
using namespace sl::exp;
using sl::testutil::errorOf;

namespace {

const std::string kHeader =
    "group,engine,engine_version,gpu,gpus,tp,model,model_dtype,kv_dtype,lengths,input_tokens,output_tokens,mode,load,"
    "requests,metric,statistic,value,location,note\n";

std::string row(const std::string& gpu = "h100-sxm-80g", const std::string& gpus = "2", const std::string& tp = "2",
                const std::string& mode = "concurrency", const std::string& load = "4",
                const std::string& metric = "ttft_ms", const std::string& model = "llama-3.3-70b") {
  return "g,NIM,1.8.0," + gpu + "," + gpus + "," + tp + "," + model + ",fp8,fp8,fixed,5000,500," + mode + "," + load +
         ",," + metric + ",mean,406.77,somewhere,\n";
}

}  // namespace

TEST(ModernValidation, ParsesARow) {
  const std::vector<ModernRow> rows = parseModernCsv(kHeader + row(), "x.csv");
  ASSERT_EQ(rows.size(), 1u);
  const ModernRow& r = rows[0];
  EXPECT_EQ(r.gpu, "h100-sxm-80g");
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.tp, 2);
  EXPECT_EQ(r.input, 5000);
  EXPECT_EQ(r.output, 500);
  EXPECT_EQ(r.mode, "concurrency");
  EXPECT_EQ(r.load, 4);
  EXPECT_EQ(r.value, 406.77);
  EXPECT_EQ(r.line, 2);
  EXPECT_EQ(modernRequestCount(r), 200);  // max(200, 10 x 4 clients)
}

TEST(ModernValidation, BadRowsNameFileLineAndColumn) {
  EXPECT_EQ(errorOf([] { parseModernCsv(kHeader + row("v100-32g"), "x.csv"); }),
            "x.csv:2: gpu: unknown GPU preset 'v100-32g'");
  EXPECT_EQ(errorOf([] { parseModernCsv(kHeader + row("h100-sxm-80g", "3", "2"), "x.csv"); }),
            "x.csv:2: gpus: 3 GPUs is not a multiple of tp 2");
  EXPECT_NE(errorOf([] { parseModernCsv(kHeader + row("h100-sxm-80g", "2", "2", "burst"), "x.csv"); })
                .find("x.csv:2: mode: must be one of offline, batch, rate, concurrency (got 'burst')"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parseModernCsv(kHeader + row("h100-sxm-80g", "2", "2", "concurrency", "2.5"), "x.csv"); })
                .find("x.csv:2: load: expected a whole number"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              parseModernCsv(kHeader + row("h100-sxm-80g", "2", "2", "concurrency", "4", "goodput"), "x.csv");
            }).find("x.csv:2: metric: must be one of"),
            std::string::npos);
  EXPECT_EQ(errorOf([] { parseModernCsv("group,engine\n", "x.csv"); }), "x.csv: missing column 'engine_version'");
}

TEST(ModernValidation, EachModeIsItsScenario) {
  const ModernRow closed = parseModernCsv(kHeader + row(), "x.csv")[0];
  const Scenario c = *modernScenario(closed);
  EXPECT_EQ(c.cluster.instances, 1);
  EXPECT_EQ(c.cluster.tp, 2);
  EXPECT_EQ(c.cluster.model_dtype, "fp8");
  EXPECT_EQ(c.workload.arrival.process, ArrivalSpec::Process::Closed);
  EXPECT_EQ(c.workload.arrival.concurrency, 4);
  EXPECT_FALSE(modernWorkload(closed));
  const ModernRow rate = parseModernCsv(kHeader + row("h200-sxm-141g", "8", "4", "rate", "2.5"), "x.csv")[0];
  const Scenario r = *modernScenario(rate, std::string("vllm-v1-serve"));
  EXPECT_EQ(r.cluster.instances, 2);
  EXPECT_EQ(r.workload.arrival.process, ArrivalSpec::Process::Poisson);
  EXPECT_EQ(r.workload.arrival.rate, 2.5);
  EXPECT_EQ(*r.cluster.engine, "vllm-v1-serve");
  EXPECT_EQ(r.workload.requests, 1000);
  const ModernRow batch = parseModernCsv(kHeader + row("h100-sxm-80g", "1", "1", "batch", "300", "e2e_ms",
                                                       "llama-3.1-8b"),
                                         "x.csv")[0];
  const Scenario b = *modernScenario(batch);
  EXPECT_EQ(b.workload.requests, 300);
  EXPECT_EQ(b.cluster.max_num_seqs, 300);  // the whole batch runs together
  EXPECT_TRUE(modernWorkload(batch));
}

TEST(ModernValidation, BatchRunsFromTimeZeroAndMetricsAreTheRunsOwn) {
  // A batch of 8 identical requests at t = 0 on one H100: every request
  // arrives at 0, so its E2E is its last token's time, and throughput is
  // the output tokens over the batch's makespan.
  const ModernRow batch =
      parseModernCsv(kHeader + row("h100-sxm-80g", "1", "1", "batch", "8", "e2e_ms", "llama-3.1-8b"), "x.csv")[0];
  const RunOutcome run = runInMemory(*modernScenario(batch), "batch", nullptr, modernWorkload(batch));
  ASSERT_EQ(run.summary.finished, 8);
  double sumLastMs = 0, lastMs = 0;
  for (const RequestRecord& rec : run.records) {
    EXPECT_EQ(rec.arrival, 0);
    sumLastMs += nsToSeconds(rec.last_token) * 1e3;
    lastMs = std::max(lastMs, nsToSeconds(rec.last_token) * 1e3);
  }
  // Every request arrived at 0: its E2E is its last token's time.
  EXPECT_NEAR(modernPredicted(batch, run), sumLastMs / 8, 1e-6);
  EXPECT_NEAR(run.summary.sim_s * 1e3, lastMs, 1e-6);
  ModernRow tput = batch;
  tput.metric = "output_tok_s";
  EXPECT_NEAR(modernPredicted(tput, run), 8 * 500 / run.summary.sim_s, 1e-6);
  tput.metric = "total_tok_s";
  EXPECT_NEAR(modernPredicted(tput, run), 8 * 5500 / run.summary.sim_s, 1e-6);
  ModernRow ttft = batch;
  ttft.metric = "ttft_ms";
  ttft.statistic = "p99";
  EXPECT_NEAR(modernPredicted(ttft, run), run.summary.ttft_s.p99 * 1e3, 1e-9);
}

TEST(ModernValidation, EmbeddedRowsParse) {
  // The committed data load (presets exist, every field valid) and come from
  // at least four sources.
  const std::vector<ModernRow>& rows = modernRows();
  std::set<std::string> files;
  for (const ModernRow& r : rows) files.insert(r.file);
  EXPECT_GE(rows.size(), 100u);
  EXPECT_GE(files.size(), 4u);
}

TEST(ModernValidation, QuickRunPredictsEveryRowAndSummarises) {
  const Experiment* e = findExperiment("hw-validation-modern");
  ASSERT_NE(e, nullptr);
  ExperimentOptions o;
  o.quick = true;
  const ExperimentResult r = e->run(o);
  ASSERT_GE(r.table.rows.size(), 50u);
  const int pred = r.table.column("servelab"), meas = r.table.column("measured"), cmp = r.table.column("compared");
  ASSERT_GE(pred, 0);
  int compared = 0;
  for (const auto& row : r.table.rows) {
    EXPECT_GT(std::stod(row[static_cast<std::size_t>(pred)]), 0) << row[0];
    EXPECT_GT(std::stod(row[static_cast<std::size_t>(meas)]), 0) << row[0];
    compared += row[static_cast<std::size_t>(cmp)] == "yes";
  }
  EXPECT_GT(compared, 40);
  bool summary = false;
  for (const std::string& n : r.notes) summary = summary || n.find("all compared ttft") != std::string::npos;
  EXPECT_TRUE(summary);
}
