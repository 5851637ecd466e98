// reproduce --summary (experiments/summary.h): every claim runs under
// --quick and gets a verdict; the verdict rule by hand.
#include <set>

#include <gtest/gtest.h>

#include "experiments/arrow/arrow_experiments.h"
#include "experiments/summary.h"

using namespace sl::exp;

TEST(FidelitySummary, VerdictRule) {
  Claim c;
  c.paperValue = 10.0;
  ClaimReading r;
  r.ok = true;
  r.direction = true;
  r.value = 6.0;
  EXPECT_EQ(fidelityVerdict(c, r), "size within 2x");
  r.value = 21.0;
  EXPECT_EQ(fidelityVerdict(c, r), "direction only");
  r.value = 4.9;
  EXPECT_EQ(fidelityVerdict(c, r), "direction only");
  r.value = -8.0;  // the other sign: not the paper's size
  EXPECT_EQ(fidelityVerdict(c, r), "direction only");
  r.direction = false;
  r.value = 10.0;
  EXPECT_EQ(fidelityVerdict(c, r), "not reproduced");
  r.ok = false;
  EXPECT_EQ(fidelityVerdict(c, r), "not run");
  c.paperValue.reset();  // an order, no number
  r.ok = true;
  r.direction = true;
  EXPECT_EQ(fidelityVerdict(c, r), "direction only");
}

TEST(FidelitySummary, QuickRunGivesEveryClaimAVerdict) {
  ExperimentOptions o;
  o.quick = true;
  const ExperimentResult r = runFidelitySummary(o);
  ASSERT_EQ(r.table.rows.size(), fidelityClaims().size());
  const int verdict = r.table.column("verdict"), value = r.table.column("servelab_value"),
            paper = r.table.column("paper");
  ASSERT_GE(verdict, 0);
  std::set<std::string> papers;
  const std::set<std::string> allowed = {"size within 2x", "direction only", "not reproduced"};
  for (const auto& row : r.table.rows) {
    const std::string& v = row[static_cast<std::size_t>(verdict)];
    papers.insert(row[static_cast<std::size_t>(paper)]);
    // Only Arrow's trace experiments may be unrun, and only without the traces.
    if (row[static_cast<std::size_t>(paper)] == "Arrow" && !arrowTracesDir()) {
      EXPECT_EQ(v, "not run");
      continue;
    }
    EXPECT_TRUE(allowed.count(v)) << row[2] << ": " << v << " (" << row[static_cast<std::size_t>(value)] << ")";
  }
  EXPECT_EQ(papers, (std::set<std::string>{"PASCAL", "Arrow", "CascadeInfer", "Self-scheduling"}));
  EXPECT_EQ(r.notes.size(), 4u);
}
