// core/experiments: registry, --quick runs of each experiment, determinism.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "experiments/experiment.h"
#include "experiments/pascal_experiments.h"
#include "experiments/table.h"

namespace sl::exp {
namespace {

ExperimentResult runQuick(const std::string& id) {
  const Experiment* e = findExperiment(id);
  EXPECT_NE(e, nullptr) << id;
  if (!e) return {};
  ExperimentOptions o;
  o.quick = true;
  return e->run(o);
}

double cell(const Table& t, std::size_t row, const std::string& col) {
  const int c = t.column(col);
  EXPECT_GE(c, 0) << "missing column " << col;
  if (c < 0 || row >= t.rows.size()) return std::nan("");
  return std::stod(t.rows[row][static_cast<std::size_t>(c)]);
}

std::string str(const Table& t, std::size_t row, const std::string& col) {
  const int c = t.column(col);
  EXPECT_GE(c, 0) << "missing column " << col;
  return c < 0 ? "" : t.rows[row][static_cast<std::size_t>(c)];
}

TEST(Table, CsvAndText) {
  Table t;
  t.columns = {"name", "value"};
  t.addRow({"a,b", "1.5"});
  t.addRow({"long-name", "22"});
  EXPECT_EQ(t.csv(), "name,value\n\"a,b\",1.5\nlong-name,22\n");
  EXPECT_EQ(t.text(), "name       value\na,b          1.5\nlong-name     22\n");
  EXPECT_EQ(t.column("value"), 1);
  EXPECT_EQ(t.column("nope"), -1);
  EXPECT_EQ(num(std::nan("")), "nan");
}

TEST(Registry, ListsPascalExperiments) {
  std::set<std::string> ids;
  for (const Experiment& e : experimentRegistry()) {
    EXPECT_FALSE(e.title.empty());
    EXPECT_FALSE(e.description.empty());
    EXPECT_TRUE(static_cast<bool>(e.run));
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate " << e.id;
  }
  for (const char* id :
       {"pascal-fig10-tail-ttft", "pascal-fig11-slo", "pascal-fig12-throughput", "pascal-fig13-nomigration",
        "pascal-fig15-nonadaptive", "pascal-fig4-reasoning-breakdown", "pascal-fig9-ttft-scatter"})
    EXPECT_TRUE(ids.count(id)) << id;
  EXPECT_EQ(findExperiment("no-such-experiment"), nullptr);
}

TEST(Registry, PascalRatesAscending) {
  EXPECT_LT(kPascalLowRate, kPascalMediumRate);
  EXPECT_LT(kPascalMediumRate, kPascalHighRate);
  const Scenario s = pascalScenario(kPascalHighRate, "rr", 123);
  EXPECT_EQ(s.cluster.instances, 8);
  EXPECT_EQ(s.workload.requests, 123);
  EXPECT_EQ(s.policy.id, "rr");
  EXPECT_DOUBLE_EQ(s.workload.arrival.rate, kPascalHighRate);
}

TEST(Fig10, TailTtftTable) {
  const ExperimentResult r = runQuick("pascal-fig10-tail-ttft");
  ASSERT_EQ(r.table.rows.size(), 3u);
  EXPECT_EQ(str(r.table, 0, "policy"), "fcfs");
  EXPECT_EQ(str(r.table, 2, "policy"), "pascal");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_GT(cell(r.table, i, "tail_bins"), 0);
    EXPECT_GT(cell(r.table, i, "tail_ttft_max_s"), 0);
    EXPECT_GE(cell(r.table, i, "ttft_p99_s"), cell(r.table, i, "ttft_p50_s"));
  }
  EXPECT_LE(cell(r.table, 0, "pascal_max_reduction_pct"), 100.0);
  EXPECT_GE(cell(r.table, 0, "pascal_worst_increase_s"), 0.0);
  ASSERT_EQ(r.charts.size(), 1u);
  EXPECT_EQ(r.charts[0].csv.rfind("policy,bin_lo,bin_hi,n,rule,ttft_s\n", 0), 0u);
}

TEST(Fig11, SloViolationSweep) {
  const ExperimentResult r = runQuick("pascal-fig11-slo");
  ASSERT_EQ(r.table.rows.size(), 3u);
  double prev = 0;
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    const double rate = cell(r.table, i, "rate_rps");
    EXPECT_GT(rate, prev);
    prev = rate;
    for (const char* c : {"fcfs_slo_violation_pct", "rr_slo_violation_pct", "pascal_slo_violation_pct"}) {
      EXPECT_GE(cell(r.table, i, c), 0.0);
      EXPECT_LE(cell(r.table, i, c), 100.0);
    }
  }
}

TEST(Fig12, ThroughputSweep) {
  const ExperimentResult r = runQuick("pascal-fig12-throughput");
  ASSERT_EQ(r.table.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i)
    for (const char* c : {"fcfs_tokens_per_s", "rr_tokens_per_s", "pascal_tokens_per_s"})
      EXPECT_GT(cell(r.table, i, c), 0.0);
  // more load, more tokens/s (below saturation at least)
  EXPECT_GT(cell(r.table, 1, "fcfs_tokens_per_s"), cell(r.table, 0, "fcfs_tokens_per_s"));
}

TEST(Fig13, NoMigrationNeverMigrates) {
  const ExperimentResult r = runQuick("pascal-fig13-nomigration");
  ASSERT_EQ(r.table.rows.size(), 6u);
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    if (str(r.table, i, "policy") == "pascal-nomigration") {
      EXPECT_EQ(cell(r.table, i, "migrations"), 0);
    }
    EXPECT_GE(cell(r.table, i, "blocking_p99_s"), 0.0);
    EXPECT_GE(cell(r.table, i, "ttft_p99_s"), cell(r.table, i, "ttft_p50_s"));
  }
  EXPECT_EQ(r.charts.size(), 2u);
}

TEST(Fig15, NonAdaptiveColumns) {
  const ExperimentResult r = runQuick("pascal-fig15-nonadaptive");
  ASSERT_EQ(r.table.rows.size(), 6u);
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    EXPECT_LE(cell(r.table, i, "ttft_p10_s"), cell(r.table, i, "ttft_p50_s"));
    EXPECT_LE(cell(r.table, i, "ttft_p90_s"), cell(r.table, i, "ttft_p99_s"));
    EXPECT_LE(cell(r.table, i, "e2e_p50_s"), cell(r.table, i, "e2e_p99_s"));
  }
}

TEST(Fig4, OracleHasNoPreemptionOrBlocking) {
  const ExperimentResult r = runQuick("pascal-fig4-reasoning-breakdown");
  ASSERT_EQ(r.table.rows.size(), 3u);
  EXPECT_EQ(str(r.table, 0, "policy"), "oracle");
  EXPECT_EQ(cell(r.table, 0, "preemptions"), 0);
  EXPECT_DOUBLE_EQ(cell(r.table, 0, "preempted_pct"), 0.0);
  EXPECT_DOUBLE_EQ(cell(r.table, 0, "vs_oracle"), 1.0);
  for (std::size_t i = 0; i < 3; ++i) {
    const double sum =
        cell(r.table, i, "executed_pct") + cell(r.table, i, "blocked_pct") + cell(r.table, i, "preempted_pct");
    EXPECT_NEAR(sum, 100.0, 0.2);
    EXPECT_GT(cell(r.table, i, "vs_oracle"), 0.9);
  }
}

TEST(Fig9, ScatterHasOneRowPerFinishedRequest) {
  const ExperimentResult r = runQuick("pascal-fig9-ttft-scatter");
  ASSERT_EQ(r.table.rows.size(), 9u);
  std::int64_t finished = 0;
  for (std::size_t i = 0; i < 9; ++i) finished += static_cast<std::int64_t>(cell(r.table, i, "finished"));
  ASSERT_EQ(r.charts.size(), 1u);
  std::int64_t lines = 0;
  for (char c : r.charts[0].csv) lines += c == '\n';
  EXPECT_EQ(lines - 1, finished);
}

TEST(Determinism, SameTableTwiceAndSeedMatters) {
  const ExperimentResult a = runQuick("pascal-fig10-tail-ttft");
  const ExperimentResult b = runQuick("pascal-fig10-tail-ttft");
  EXPECT_EQ(a.table.csv(), b.table.csv());
  ASSERT_EQ(a.charts.size(), b.charts.size());
  for (std::size_t i = 0; i < a.charts.size(); ++i) EXPECT_EQ(a.charts[i].csv, b.charts[i].csv);
  ExperimentOptions o;
  o.quick = true;
  o.seed = 7;
  const ExperimentResult c = findExperiment("pascal-fig10-tail-ttft")->run(o);
  EXPECT_NE(a.table.csv(), c.table.csv());
}

TEST(Outputs, WritesTableAndCharts) {
  const auto dir = std::filesystem::temp_directory_path() / ("servelab_exp_test_" + std::to_string(::getpid()));
  ExperimentResult r;
  r.table.columns = {"a", "b"};
  r.table.addRow({"x", "1"});
  r.charts.push_back({"chart.csv", "k,v\n1,2\n"});
  writeExperimentOutputs(r, (dir / "sub").string());
  std::ifstream t(dir / "sub" / "table.csv");
  std::stringstream ss;
  ss << t.rdbuf();
  EXPECT_EQ(ss.str(), "a,b\nx,1\n");
  EXPECT_TRUE(std::filesystem::exists(dir / "sub" / "chart.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "sub" / "table.txt"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sl::exp
