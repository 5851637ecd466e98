// core/experiments/cost (issue 49 item 4a): Splitwise's iso-cost designs on
// the shared Azure traces (skipped when ../shared/traces is absent).
#include <gtest/gtest.h>

#include <string>

#include "experiment_test_util.h"
#include "experiments/arrow/arrow_experiments.h"

namespace sl::exp {
namespace {

TEST(CostExperiments, SplitwiseIsoCostQuick) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult a = runQuick("splitwise-isocost");
  const ExperimentResult b = runQuick("splitwise-isocost");
  EXPECT_EQ(a.table.csv(), b.table.csv());  // deterministic
  ASSERT_EQ(a.charts.size(), 1u);
  EXPECT_EQ(a.charts[0].csv, b.charts[0].csv);
  // --quick: a budget of 2 DGX-H100; per trace: both baselines, the chunked
  // reference, HH 1P+1D and HA 1P + floor(4.76/2.21) = 2 A100 machines.
  const Table& t = a.table;
  ASSERT_EQ(t.rows.size(), 10u);
  for (std::size_t base : {0u, 5u}) {
    EXPECT_EQ(str(t, base + 0, "design"), "Baseline-H100 (2)");
    EXPECT_EQ(str(t, base + 1, "design"), "Baseline-A100 (4)");
    EXPECT_EQ(str(t, base + 4, "design"), "Splitwise-HA (1P H100 + 2D A100)");
    // $/h by hand at Splitwise's prices ($4.76 H100, $2.21 A100 per GPU-hour).
    EXPECT_NEAR(cell(t, base + 0, "usd_per_hour"), 16 * 4.76, 0.01);
    EXPECT_NEAR(cell(t, base + 1, "usd_per_hour"), 32 * 2.21, 0.01);
    EXPECT_NEAR(cell(t, base + 4, "usd_per_hour"), 8 * 4.76 + 16 * 2.21, 0.01);
    EXPECT_EQ(cell(t, base + 4, "gpus"), 24);
    for (std::size_t r = base; r < base + 5; ++r) {
      const double rate = cell(t, r, "max_rate_rps");
      EXPECT_GT(rate, 0.25) << str(t, r, "design");
      // req/s per $100/h is the rate over the cost.
      EXPECT_NEAR(cell(t, r, "rps_per_100_usd_h"), rate / cell(t, r, "usd_per_hour") * 100, 0.01)
          << str(t, r, "design");
    }
    // A DGX-H100 serves more than a DGX-A100: the 2-H100 baseline sustains a
    // higher rate than half the A100 machines would (per machine).
    EXPECT_GT(cell(t, base + 0, "max_rate_rps") / 2, cell(t, base + 1, "max_rate_rps") / 4);
    EXPECT_EQ(str(t, base + 0, "vs_baseline_h100"), "1.00x");
  }
}

}  // namespace
}  // namespace sl::exp

namespace sl::exp {
namespace {

TEST(CostExperiments, MelangeMixQuick) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult a = runQuick("melange-mix");
  const ExperimentResult b = runQuick("melange-mix");
  EXPECT_EQ(a.table.csv(), b.table.csv());
  const Table& t = a.table;
  ASSERT_EQ(t.rows.size(), 2u);  // --quick: 4 and 16 req/s
  double last = 0;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    // A homogeneous deployment always meets the SLO within 16 GPUs here, and
    // a higher rate never costs less.
    const double h = cell(t, r, "homogeneous_usd_h");
    EXPECT_GE(h, last);
    last = h;
    const double saving = cell(t, r, "saving_pct");
    if (str(t, r, "best_mixed") == "none cheaper") {
      EXPECT_EQ(saving, 0.0);
    } else {
      const double m = cell(t, r, "mixed_usd_h");
      EXPECT_LT(m, h);
      EXPECT_NEAR(saving, (1 - m / h) * 100, 0.06);
    }
    EXPECT_GT(cell(t, r, "simulated"), 0);
  }
}

}  // namespace
}  // namespace sl::exp

// Splitwise's slowdown SLOs (issue 49 item 4a; splitwise-isocost-slowdown):
// the quantiles against an uncontended DGX-A100, by hand.
#include "cost/presets.h"
#include "cost/pricing.h"
#include "experiments/cost/cost_experiments.h"
#include "run/run.h"

namespace sl::exp {
namespace {

std::unique_ptr<CostModel> dgxA100() {
  Scenario s;
  s.model = "llama-2-70b";
  s.cluster.gpu = "a100-80g";
  s.cluster.tp = 8;
  return makeCostModel(s);
}

/// A finished request of `input` prompt and `output` tokens whose TTFT and
/// TBT are `ttftX` and `tbtX` times the uncontended ones on `ref`.
RequestRecord served(const CostModel& ref, int input, int output, double ttftX, double tbtX) {
  BatchShape prompt, step;
  addPrefillChunk(prompt, input);
  addDecodeSeq(step, input);
  RequestRecord r;
  r.arrival = 1'000'000'000;
  r.input = input;
  r.answer = output;
  r.generated = output;
  r.finished = true;
  r.first_visible = r.arrival + secondsToNs(ttftX * ref.iterationSeconds(prompt));
  r.first_token = r.first_visible;
  r.last_token = r.first_visible + secondsToNs(tbtX * ref.iterationSeconds(step) * output);
  return r;
}

TEST(CostExperiments, SplitwiseSlowdownsByHand) {
  const auto ref = dgxA100();
  // 100 requests: TTFT slowdown i/10 for i = 10..109 (1.0 .. 10.9), TBT
  // slowdown 1.2 for all.
  std::vector<RequestRecord> recs;
  for (int i = 10; i < 110; ++i) recs.push_back(served(*ref, 500 + 37 * i, 200, i / 10.0, 1.2));
  const SplitwiseSlowdowns s = splitwiseSlowdowns(recs, *ref);
  // Linear-interpolated quantiles of 1.0 .. 10.9: P50 at position 49.5.
  EXPECT_NEAR(s.ttft[0], 5.95, 1e-3);
  EXPECT_NEAR(s.ttft[1], 9.91, 1e-3);
  EXPECT_NEAR(s.ttft[2], 10.801, 1e-3);
  for (int q = 0; q < 3; ++q) EXPECT_NEAR(s.tbt[q], 1.2, 1e-3);
  EXPECT_FALSE(meetsSplitwiseSlos(s));  // TTFT P50 5.95 >= 2

  // All at TTFT and TBT 1.2x: every limit holds. End to end, the first
  // token's share of the time stays at 1.2x and the rest at 1.2 x out /
  // (out - 1): just above 1.2, below the P50 limit 1.25 for out >= 50.
  recs.clear();
  for (int i = 0; i < 100; ++i) recs.push_back(served(*ref, 300 + 91 * i, 50 + i, 1.2, 1.2));
  const SplitwiseSlowdowns ok = splitwiseSlowdowns(recs, *ref);
  EXPECT_NEAR(ok.ttft[1], 1.2, 1e-3);
  EXPECT_GT(ok.e2e[0], 1.2);
  EXPECT_LT(ok.e2e[2], 1.25);
  EXPECT_TRUE(meetsSplitwiseSlos(ok));
  // With TTFT at 1.9x (below its limit 2) the prompt's share pushes the
  // end-to-end P50 over 1.25 for these prompts (300-9 309 tokens).
  std::vector<RequestRecord> slowFirst;
  for (int i = 0; i < 100; ++i) slowFirst.push_back(served(*ref, 300 + 91 * i, 50 + i, 1.9, 1.2));
  const SplitwiseSlowdowns sf = splitwiseSlowdowns(slowFirst, *ref);
  EXPECT_LT(sf.ttft[2], 2.0);
  EXPECT_GT(sf.e2e[0], 1.25);
  EXPECT_FALSE(meetsSplitwiseSlos(sf));
  // TBT 1.6x for a fifth of them: P90 1.6, not below 1.5.
  for (int i = 0; i < 20; ++i) recs[static_cast<std::size_t>(i)] = served(*ref, 400, 100, 1.2, 1.6);
  EXPECT_FALSE(meetsSplitwiseSlos(splitwiseSlowdowns(recs, *ref)));
  // An unfinished request is infinitely slow: 2 % of them break P99.
  recs.clear();
  for (int i = 0; i < 100; ++i) recs.push_back(served(*ref, 1000, 100, 1.1, 1.1));
  EXPECT_TRUE(meetsSplitwiseSlos(splitwiseSlowdowns(recs, *ref)));
  recs[3].finished = false;
  recs[7].finished = false;
  const SplitwiseSlowdowns two = splitwiseSlowdowns(recs, *ref);
  EXPECT_TRUE(std::isinf(two.tbt[2]));
  EXPECT_FALSE(meetsSplitwiseSlos(two));
}

TEST(CostExperiments, SplitwiseSlowdownVariantsQuick) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult a = runQuick("splitwise-isocost-slowdown");
  const ExperimentResult b = runQuick("splitwise-isocost-slowdown");
  EXPECT_EQ(a.table.csv(), b.table.csv());
  const ExperimentResult trace = runQuick("splitwise-isocost");
  const Table& t = a.table;
  ASSERT_EQ(t.rows.size(), 10u);  // same designs as splitwise-isocost --quick
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    EXPECT_EQ(str(t, r, "design"), str(trace.table, r, "design"));
    const double rate = cell(t, r, "max_rate_rps");
    EXPECT_GT(rate, 0.25) << str(t, r, "design");
    EXPECT_NEAR(cell(t, r, "rps_per_100_usd_h"), rate / cell(t, r, "usd_per_hour") * 100, 0.01);
  }
  // A different SLO gives different capacities.
  EXPECT_NE(t.csv(), trace.table.csv());
}

TEST(CostExperiments, Scale40DesignsQuick) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  // --quick: 8 machines' worth, splits every 4: both baselines, chunked, HH
  // 4P+4D and HA 4P + floor(4.76 x 4 / 2.21) = 8D per trace.
  const ExperimentResult a = runQuick("splitwise-isocost-40");
  const Table& t = a.table;
  ASSERT_EQ(t.rows.size(), 10u);
  EXPECT_EQ(str(t, 1, "design"), "Baseline-A100 (17)");  // floor(4.76 x 8 / 2.21)
  EXPECT_EQ(str(t, 3, "design"), "Splitwise-HH (4P + 4D)");
  EXPECT_EQ(str(t, 4, "design"), "Splitwise-HA (4P H100 + 8D A100)");
  EXPECT_NEAR(cell(t, 4, "usd_per_hour"), 32 * 4.76 + 64 * 2.21, 0.01);
  for (std::size_t r = 0; r < t.rows.size(); ++r) EXPECT_GT(cell(t, r, "max_rate_rps"), 0.25);
}

TEST(CostExperiments, MelangeGpuPresetsPriced) {
  // Mélange's L4 and A10G (AWS g6.xlarge, g5.xlarge): presets with a price
  // and a board power, and cheaper per hour than the L40S.
  const PresetRegistry& reg = PresetRegistry::builtin();
  EXPECT_EQ(reg.gpu("l4-24g").bf16_tflops, 121);
  EXPECT_FALSE(reg.gpu("a10g-24g").fp8_tflops.has_value());
  for (const char* id : {"l4-24g", "a10g-24g"}) {
    const GpuPrice* p = gpuPrice(id);
    ASSERT_NE(p, nullptr) << id;
    EXPECT_LT(p->usdPerGpuHour, gpuPrice("l40s-48g")->usdPerGpuHour);
    EXPECT_TRUE(gpuBoardPowerW(id).has_value());
  }
  EXPECT_NEAR(gpuPrice("l4-24g")->usdPerGpuHour, 0.8048, 1e-9);
  EXPECT_NEAR(gpuPrice("a10g-24g")->usdPerGpuHour, 1.006, 1e-9);
  EXPECT_EQ(*gpuBoardPowerW("l4-24g"), 72);
}

}  // namespace
}  // namespace sl::exp

// melange-mix-size-bucket (issue 49 item 4b): melange-mix's columns
// unchanged, plus the cheapest mix meeting the SLO under the size-bucket
// router, cheaper than the best homogeneous deployment when found.
namespace sl::exp {
namespace {

TEST(CostExperiments, MelangeMixSizeBucketQuick) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult plain = runQuick("melange-mix");
  const ExperimentResult a = runQuick("melange-mix-size-bucket");
  EXPECT_EQ(a.table.csv(), runQuick("melange-mix-size-bucket").table.csv());
  const Table& t = a.table;
  ASSERT_EQ(t.rows.size(), plain.table.rows.size());
  ASSERT_EQ(t.columns.size(), plain.table.columns.size() + 4);
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    for (std::size_t c = 0; c < plain.table.columns.size(); ++c)
      EXPECT_EQ(t.rows[r][c], plain.table.rows[r][c]) << plain.table.columns[c];
    const double h = cell(t, r, "homogeneous_usd_h");
    const double saving = cell(t, r, "size_bucket_saving_pct");
    if (str(t, r, "best_size_bucket_mix") == "none cheaper") {
      EXPECT_EQ(saving, 0.0);
    } else {
      const double m = cell(t, r, "size_bucket_usd_h");
      EXPECT_LT(m, h);
      EXPECT_NEAR(saving, (1 - m / h) * 100, 0.06);
      EXPECT_GT(cell(t, r, "size_bucket_runs"), 0);
    }
  }
}

}  // namespace
}  // namespace sl::exp
