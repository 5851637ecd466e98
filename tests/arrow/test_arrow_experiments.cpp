// Arrow's reproduce experiments on the shared traces (skipped when
// ../shared/traces is absent) and the testbed preset they use.
#include <gtest/gtest.h>

#include <filesystem>

#include "cost/presets.h"
#include "experiments/arrow/arrow_experiments.h"
#include "experiments/experiment.h"
#include "util/error.h"

namespace sl::exp {
namespace {

// Arrow's testbed (paper §7.1): H800 80 GB = H100 SXM compute and memory,
// NVLink "400 GB/s" between two GPUs, i.e. 200 GB/s per direction as the
// presets count it (20-cost-model.md).
TEST(ArrowTestbed, H800PresetMatchesThePaper) {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const GpuSpec& h800 = reg.gpu("h800-80g");
  const GpuSpec& h100 = reg.gpu("h100-sxm-80g");
  EXPECT_DOUBLE_EQ(h800.bf16_tflops, h100.bf16_tflops);
  EXPECT_DOUBLE_EQ(h800.hbm_tbps, h100.hbm_tbps);
  EXPECT_DOUBLE_EQ(h800.hbm_gib, 80);
  EXPECT_DOUBLE_EQ(h800.nvlinkBytesPerSec() * 2, 400e9);
}

TEST(ArrowExperiments, Listed) {
  for (const char* id : {"arrow-fig7-azure-code", "arrow-fig7-azure-conv", "arrow-fig7-burstgpt", "arrow-fig7-mooncake",
                         "arrow-fig8-ablation", "arrow-fig9-scaling"}) {
    const Experiment* e = findExperiment(id);
    ASSERT_NE(e, nullptr) << id;
    EXPECT_EQ(e->paper, "Arrow");
  }
}

bool haveTraces() { return arrowTracesDir().has_value(); }

TEST(ArrowExperiments, ScenarioIsThePapersSetting) {
  if (!haveTraces()) GTEST_SKIP() << "no ../shared/traces";
  const ArrowTrace& code = arrowTraces()[0];
  EXPECT_EQ(code.ttft, 3.0);
  EXPECT_EQ(code.tpot, 0.1);
  Scenario a = arrowScenario(code, "arrow", 0.5);
  EXPECT_EQ(a.cluster.gpu, "h800-80g");
  EXPECT_EQ(a.cluster.instances, 8);
  EXPECT_EQ(a.model, "llama-3.1-8b");
  EXPECT_EQ(a.workload.trace->time_scale, 0.5);
  Scenario v = arrowScenario(code, "vllm-colocated", 1.0);
  EXPECT_EQ(v.cluster.instances, 1);
  EXPECT_EQ(v.cluster.tp, 8);
  Scenario d = arrowScenario(code, "vllm-disaggregated", 1.0);
  EXPECT_EQ(d.cluster.instances, 2);
  EXPECT_EQ(d.cluster.tp, 4);
}

TEST(ArrowExperiments, Fig7QuickOnAzureCode) {
  if (!haveTraces()) GTEST_SKIP() << "no ../shared/traces";
  ExperimentOptions o;
  o.quick = true;
  const ExperimentResult r = findExperiment("arrow-fig7-azure-code")->run(o);
  ASSERT_EQ(r.table.rows.size(), 4u);
  EXPECT_EQ(r.table.rows[0][0], "arrow");
  // Arrow sustains more than every baseline on the bursty Azure Code trace
  // (paper Fig. 7); each system's rate is a number.
  const double arrow = std::stod(r.table.rows[0][1]);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_GT(arrow, std::stod(r.table.rows[i][1])) << r.table.rows[i][0];
  ASSERT_EQ(r.charts.size(), 3u);
  EXPECT_EQ(r.charts[2].csv.rfind("time_s,instance,from,to,reason,", 0), 0u);
  // Deterministic.
  const ExperimentResult again = findExperiment("arrow-fig7-azure-code")->run(o);
  EXPECT_EQ(again.table.csv(), r.table.csv());
  EXPECT_EQ(again.charts[0].csv, r.charts[0].csv);
}

double rateCell(const std::string& v) { return std::stod(v.back() == '+' ? v.substr(0, v.size() - 1) : v); }

TEST(ArrowExperiments, Fig8QuickSloAwareBeatsStaticDispatchOnAzureCode) {
  if (!haveTraces()) GTEST_SKIP() << "no ../shared/traces";
  ExperimentOptions o;
  o.quick = true;
  const ExperimentResult r = findExperiment("arrow-fig8-ablation")->run(o);
  ASSERT_EQ(r.table.rows.size(), 6u);
  EXPECT_EQ(r.table.rows[0][0], "azure-code");
  EXPECT_EQ(r.table.rows[0][1], "arrow");
  EXPECT_EQ(r.table.rows[1][1], "static-pd/minimal-load");
  EXPECT_GT(rateCell(r.table.rows[0][2]), rateCell(r.table.rows[1][2]));
  EXPECT_GT(rateCell(r.table.rows[0][2]), rateCell(r.table.rows[2][2]));
}

TEST(ArrowExperiments, Fig9QuickTwoGpusCannotFlipEightCan) {
  if (!haveTraces()) GTEST_SKIP() << "no ../shared/traces";
  ExperimentOptions o;
  o.quick = true;
  const ExperimentResult r = findExperiment("arrow-fig9-scaling")->run(o);
  ASSERT_EQ(r.table.rows.size(), 4u);
  // 2 GPUs: 1 P + 1 D, and Arrow keeps >= 1 of each, so it is the static split.
  for (std::size_t c = 2; c < r.table.columns.size(); ++c) EXPECT_EQ(r.table.rows[0][c], r.table.rows[1][c]);
  EXPECT_EQ(r.table.rows[2][0], "8");
  EXPECT_GT(rateCell(r.table.rows[2][5]), rateCell(r.table.rows[3][5]));
  EXPECT_GT(rateCell(r.table.rows[2][5]), rateCell(r.table.rows[0][5]));
}

}  // namespace
}  // namespace sl::exp
