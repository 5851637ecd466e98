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
