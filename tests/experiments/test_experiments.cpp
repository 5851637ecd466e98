// core/experiments: registry, --quick runs of each experiment, determinism.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiment_test_util.h"
#include "experiments/experiment.h"
#include "experiments/grid.h"
#include "experiments/pascal/pascal_experiments.h"
#include "experiments/table.h"

namespace sl::exp {
namespace {

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
        "pascal-fig15-nonadaptive", "pascal-fig4-reasoning-breakdown", "pascal-fig9-ttft-scatter",
        "pascal-fig5-answering", "pascal-kv-transfer", "pascal-fig16-mixed", "pascal-fig10-tail-ttft-arena",
        "pascal-fig11-slo-arena", "pascal-fig12-throughput-arena"})
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
  // two charts plus the blocking breakdown's CSV (issue 26)
  ASSERT_EQ(r.charts.size(), 3u);
  EXPECT_EQ(r.charts[2].name, "blocking_breakdown.csv");
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

// ---- shared helpers: the grid and its tables ----------------------------------

GridCell fakeCell(double rate, const std::string& policy, double tokensPerS, std::int64_t preemptions) {
  GridCell c;
  c.rate = rate;
  c.policy = policy;
  c.run.summary.tokens_per_s = tokensPerS;
  c.run.summary.preemptions = preemptions;
  return c;
}

TEST(Grid, LongAndWideTables) {
  Grid g;
  g.rates = {1, 2};
  g.policies = {"a", "b"};
  g.cells = {fakeCell(1, "a", 10, 1), fakeCell(1, "b", 20, 2), fakeCell(2, "a", 30, 3), fakeCell(2, "b", 40, 4)};
  const Column tps = summaryColumn(
      "tps", [](const Summary& m) { return m.tokens_per_s; }, 1);
  const Column pre = countColumn("pre", [](const Summary& m) { return m.preemptions; });
  EXPECT_EQ(longTable(g, {rateColumn(), policyColumn(), tps, pre}).csv(),
            "rate_rps,policy,tps,pre\n1.0,a,10.0,1\n1.0,b,20.0,2\n2.0,a,30.0,3\n2.0,b,40.0,4\n");
  Table w = wideTable(g, {tps, pre});
  addRateColumn(w, g, "b_over_a",
                [&g](double r) { return num(g.summary(r, "b").tokens_per_s / g.summary(r, "a").tokens_per_s, 2); });
  EXPECT_EQ(w.csv(), "rate_rps,a_tps,b_tps,a_pre,b_pre,b_over_a\n1.0,10.0,20.0,1,2,2.00\n2.0,30.0,40.0,3,4,1.33\n");
  EXPECT_THROW(g.at(3, "a"), std::out_of_range);
}

TEST(Grid, RunsEveryCellInOrderWithTheSeed) {
  std::vector<std::string> labels;
  ExperimentOptions o;
  o.seed = 5;
  o.onRun = [&labels](const std::string& l) { labels.push_back(l); };
  std::vector<std::uint64_t> seeds;
  const Grid g = runGrid(
      [&seeds](double rate, const std::string& p) {
        Scenario s = pascalScenario(rate, p, 30);
        s.cluster.instances = 2;
        seeds.push_back(s.run.seed);
        return s;
      },
      {1.0, 2.0}, {"fcfs", "rr"}, o);
  ASSERT_EQ(g.cells.size(), 4u);
  EXPECT_EQ(labels,
            (std::vector<std::string>{"fcfs @ 1.0 req/s", "rr @ 1.0 req/s", "fcfs @ 2.0 req/s", "rr @ 2.0 req/s"}));
  EXPECT_EQ(g.cells[3].policy, "rr");
  EXPECT_EQ(g.cells[3].rate, 2.0);
  for (const GridCell& c : g.cells) {
    EXPECT_EQ(c.run.summary.arrived, 30);
    EXPECT_EQ(c.run.records.size(), 30u);
  }
  // The same scenario run directly with seed 5 gives the cell's summary.
  Scenario s = pascalScenario(2.0, "rr", 30);
  s.cluster.instances = 2;
  s.run.seed = 5;
  const RunOutcome direct = runInMemory(s, "direct");
  EXPECT_EQ(direct.summary.output_tokens, g.summary(2.0, "rr").output_tokens);
  EXPECT_EQ(direct.summary.ttft_s.p99, g.summary(2.0, "rr").ttft_s.p99);
}

// An observer only watches: the run's results do not change.
TEST(Grid, ObserverDoesNotChangeTheRun) {
  struct Counter : SimObserver {
    int transfers = 0;
    void onTransfer(const Request&, int, int, SimTime, SimTime, double) override { ++transfers; }
  } counter;
  const Scenario s = pascalScenario(kPascalHighRate, "pascal", 150);
  const RunOutcome plain = runInMemory(s, "plain");
  const RunOutcome watched = runInMemory(s, "watched", &counter);
  EXPECT_GT(counter.transfers, 0);
  EXPECT_EQ(plain.summary.migrations, watched.summary.migrations);
  EXPECT_EQ(plain.summary.preemptions, watched.summary.preemptions);
  EXPECT_EQ(plain.summary.output_tokens, watched.summary.output_tokens);
  EXPECT_EQ(plain.summary.ttft_s.p99, watched.summary.ttft_s.p99);
  EXPECT_EQ(plain.summary.qoe_violation_rate, watched.summary.qoe_violation_rate);
}

// ---- new experiments: --quick size, deterministic, sane values ---------------

void expectSameResult(const ExperimentResult& a, const ExperimentResult& b) {
  EXPECT_EQ(a.table.csv(), b.table.csv());
  ASSERT_EQ(a.charts.size(), b.charts.size());
  for (std::size_t i = 0; i < a.charts.size(); ++i) {
    EXPECT_EQ(a.charts[i].name, b.charts[i].name);
    EXPECT_EQ(a.charts[i].csv, b.charts[i].csv) << a.charts[i].name;
  }
  EXPECT_EQ(a.notes, b.notes);
}

/// Runs a quick experiment twice and checks the two results are identical.
ExperimentResult runQuickTwice(const std::string& id) {
  const ExperimentResult a = runQuick(id);
  const ExperimentResult b = runQuick(id);
  expectSameResult(a, b);
  return a;
}

/// A chart CSV (no quoted cells) as rows of cells; the first row is the header.
std::vector<std::vector<std::string>> parseCsv(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::size_t p = 0;
    while (true) {
      const std::size_t q = line.find(',', p);
      cells.push_back(line.substr(p, q == std::string::npos ? std::string::npos : q - p));
      if (q == std::string::npos) break;
      p = q + 1;
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

std::size_t headerIndex(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "chart has no column " << name;
  return 0;
}

const ChartData* chart(const ExperimentResult& r, const std::string& name) {
  for (const ChartData& c : r.charts)
    if (c.name == name) return &c;
  ADD_FAILURE() << "no chart " << name;
  return nullptr;
}

TEST(Fig5, AnsweringBreakdownSumsToOneAndSloIsConsistent) {
  const ExperimentResult r = runQuickTwice("pascal-fig5-answering");
  expectPolicies(r.table, {"oracle", "fcfs", "rr"});
  if (HasFatalFailure()) return;
  EXPECT_EQ(cell(r.table, 0, "preemptions"), 0);
  EXPECT_DOUBLE_EQ(cell(r.table, 0, "preempted_pct"), 0.0);
  EXPECT_DOUBLE_EQ(cell(r.table, 0, "vs_oracle"), 1.0);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cell(r.table, i, "requests"), 100);
    const double sum =
        cell(r.table, i, "executed_pct") + cell(r.table, i, "blocked_pct") + cell(r.table, i, "preempted_pct");
    EXPECT_NEAR(sum, 100.0, 0.2) << str(r.table, i, "policy");
    EXPECT_GT(cell(r.table, i, "answering_mean_s"), 0.0);
    const double slo = cell(r.table, i, "slo_attainment_pct");
    EXPECT_GE(slo, 0.0);
    // both parts must hold, so attainment cannot exceed either part
    EXPECT_LE(slo, cell(r.table, i, "ttfat_met_pct") + 1e-9);
    EXPECT_LE(slo, cell(r.table, i, "qoe_met_pct") + 1e-9);
  }
  // Without memory limits nothing waits long: every request meets the SLO.
  EXPECT_DOUBLE_EQ(cell(r.table, 0, "slo_attainment_pct"), 100.0);
  // The memory-limited baselines do block or preempt someone.
  EXPECT_GT(cell(r.table, 1, "blocked_pct") + cell(r.table, 1, "preempted_pct"), 0.0);
  EXPECT_GT(cell(r.table, 2, "preemptions"), 0);

  const ChartData* c = chart(r, "answering_breakdown_by_bin.csv");
  ASSERT_NE(c, nullptr);
  const auto rows = parseCsv(c->csv);
  ASSERT_GT(rows.size(), 1u);
  const auto& h = rows[0];
  const std::size_t lo = headerIndex(h, "bin_lo"), n = headerIndex(h, "n"), ex = headerIndex(h, "executed_s"),
                    bl = headerIndex(h, "blocked_s"), pr = headerIndex(h, "preempted_s"),
                    tot = headerIndex(h, "total_s"), att = headerIndex(h, "slo_attainment_pct");
  std::map<std::string, std::int64_t> perPolicy;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    perPolicy[row[0]] += std::stoll(row[n]);
    // answers are 128..2048 tokens
    EXPECT_GE(std::stoll(row[lo]), 0);
    EXPECT_LT(std::stoll(row[lo]), 2048 + 256);
    EXPECT_NEAR(std::stod(row[ex]) + std::stod(row[bl]) + std::stod(row[pr]), std::stod(row[tot]), 1e-5);
    EXPECT_GE(std::stod(row[att]), 0.0);
    EXPECT_LE(std::stod(row[att]), 100.0);
  }
  for (const char* p : {"oracle", "fcfs", "rr"}) EXPECT_EQ(perPolicy[p], 100) << p;
}

TEST(KvTransfer, LatencyAtLeastTheWireTimeAndBandwidthBelowTheLink) {
  const ExperimentResult r = runQuickTwice("pascal-kv-transfer");
  ASSERT_EQ(r.table.rows.size(), 6u);  // 2 datasets x low/medium/high
  EXPECT_EQ(str(r.table, 0, "dataset"), "alpaca-reasoning");
  EXPECT_EQ(str(r.table, 3, "dataset"), "arena-hard-reasoning");
  EXPECT_EQ(str(r.table, 0, "load"), "low");
  EXPECT_EQ(str(r.table, 2, "load"), "high");
  std::int64_t transfers = 0;
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    const double n = cell(r.table, i, "transfers");
    EXPECT_GT(n, 0);
    EXPECT_LE(n, cell(r.table, i, "migrations"));
    transfers += static_cast<std::int64_t>(n);
    EXPECT_LE(cell(r.table, i, "transfer_p50_s"), cell(r.table, i, "transfer_p99_s"));
    EXPECT_LE(cell(r.table, i, "transfer_p99_s"), cell(r.table, i, "transfer_max_s"));
    // every copy takes at least its wire time, so its p99 does too
    EXPECT_GE(cell(r.table, i, "transfer_p99_s"), cell(r.table, i, "wire_p99_s"));
    EXPECT_LE(cell(r.table, i, "gbps_mean"), cell(r.table, i, "link_gbps"));
    EXPECT_GT(cell(r.table, i, "gbps_min"), 0.0);
    EXPECT_GT(cell(r.table, i, "mb_per_transfer_mean"), 0.0);
    EXPECT_LE(cell(r.table, i, "mb_per_transfer_mean"), cell(r.table, i, "mb_per_transfer_max"));
    // the stall includes the copy
    EXPECT_GE(cell(r.table, i, "stall_p99_s"), cell(r.table, i, "transfer_p50_s"));
  }
  // Arena-Hard-like requests are longer, so their KV copies are larger.
  EXPECT_GT(cell(r.table, 5, "mb_per_transfer_mean"), cell(r.table, 2, "mb_per_transfer_mean"));

  const ChartData* c = chart(r, "kv_transfers.csv");
  ASSERT_NE(c, nullptr);
  const auto rows = parseCsv(c->csv);
  ASSERT_EQ(static_cast<std::int64_t>(rows.size()) - 1, transfers);
  const auto& h = rows[0];
  const std::size_t lat = headerIndex(h, "latency_s"), bytes = headerIndex(h, "bytes"), gbps = headerIndex(h, "gbps"),
                    src = headerIndex(h, "src"), dst = headerIndex(h, "dst");
  const double linkBytesPerS = 100e9 / 8;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const double b = std::stod(rows[i][bytes]);
    EXPECT_GT(b, 0.0);
    // 6-decimal rounding of the latency allows 0.5 us
    EXPECT_GE(std::stod(rows[i][lat]) + 5e-7, b / linkBytesPerS) << "row " << i;
    EXPECT_LE(std::stod(rows[i][gbps]), 100.0 + 1e-3);
    EXPECT_NE(rows[i][src], rows[i][dst]);
  }
}

TEST(Fig16, MixedWorkloadSweep) {
  const ExperimentResult r = runQuickTwice("pascal-fig16-mixed");
  ASSERT_EQ(r.table.rows.size(), 9u);  // 3 rates x fcfs/rr/pascal
  EXPECT_EQ(str(r.table, 0, "rate_rps"), "0.25");
  EXPECT_EQ(str(r.table, 8, "rate_rps"), "8.0");
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    EXPECT_EQ(str(r.table, i, "policy"), (std::vector<std::string>{"fcfs", "rr", "pascal"})[i % 3]);
    EXPECT_EQ(cell(r.table, i, "finished"), 200);
    EXPECT_GE(cell(r.table, i, "ttft_p99_s"), cell(r.table, i, "ttft_p50_s"));
    EXPECT_GE(cell(r.table, i, "slo_violation_pct"), 0.0);
    EXPECT_LE(cell(r.table, i, "slo_violation_pct"), 100.0);
    EXPECT_GT(cell(r.table, i, "tokens_per_s"), 0.0);
    if (str(r.table, i, "policy") == "pascal") {
      EXPECT_EQ(str(r.table, i, "pascal_max_reduction_pct"), "-");
      EXPECT_EQ(str(r.table, i, "pascal_short_reduction_pct"), "-");
      EXPECT_EQ(str(r.table, i, "pascal_long_reduction_pct"), "-");
    } else {
      // a mean over some bins cannot exceed the best bin
      EXPECT_LE(cell(r.table, i, "pascal_short_reduction_pct"), cell(r.table, i, "pascal_max_reduction_pct") + 0.05);
      // (no long bin keeps 5 requests at --quick size: "nan")
      const double longRed = cell(r.table, i, "pascal_long_reduction_pct");
      if (!std::isnan(longRed)) {
        EXPECT_LE(longRed, cell(r.table, i, "pascal_max_reduction_pct") + 0.05);
      }
      EXPECT_LE(cell(r.table, i, "pascal_max_reduction_pct"), 100.0);
      EXPECT_GE(cell(r.table, i, "pascal_worst_increase_s"), 0.0);
    }
  }
  // The mix really has reasoning-heavy requests (median 4K reasoning
  // tokens): kept tail bins (>= 5 requests each) reach lengths that
  // alpaca-reasoning (median 384) does not fill at this size.
  const ChartData* c = chart(r, "tail_ttft_by_reasoning.csv");
  ASSERT_NE(c, nullptr);
  const auto rows = parseCsv(c->csv);
  const std::size_t lo = headerIndex(rows[0], "bin_lo");
  std::int64_t maxLo = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) maxLo = std::max<std::int64_t>(maxLo, std::stoll(rows[i][lo]));
  EXPECT_GE(maxLo, 3072);
  EXPECT_EQ(pascalScenario(2, "rr", 10, "reasoning-mix").workload.preset, "reasoning-mix");
}

TEST(Arena, VariantsRunOnArenaHardRequests) {
  const ExperimentResult arena = runQuickTwice("pascal-fig10-tail-ttft-arena");
  const ExperimentResult alpaca = runQuick("pascal-fig10-tail-ttft");
  ASSERT_EQ(arena.table.columns, alpaca.table.columns);
  ASSERT_EQ(arena.table.rows.size(), 3u);
  EXPECT_NE(arena.table.csv(), alpaca.table.csv());
  // Longer prompts, reasoning and answers: a higher median TTFT for every policy.
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_GT(cell(arena.table, i, "ttft_p50_s"), cell(alpaca.table, i, "ttft_p50_s"));

  const ExperimentResult slo = runQuickTwice("pascal-fig11-slo-arena");
  ASSERT_EQ(slo.table.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i)
    for (const char* col : {"fcfs_slo_violation_pct", "rr_slo_violation_pct", "pascal_slo_violation_pct"}) {
      EXPECT_GE(cell(slo.table, i, col), 0.0);
      EXPECT_LE(cell(slo.table, i, col), 100.0);
    }
  const ExperimentResult tput = runQuickTwice("pascal-fig12-throughput-arena");
  ASSERT_EQ(tput.table.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i)
    for (const char* col : {"fcfs_tokens_per_s", "rr_tokens_per_s", "pascal_tokens_per_s"})
      EXPECT_GT(cell(tput.table, i, col), 0.0);
  EXPECT_EQ(pascalScenario(2, "rr", 10, "arena-hard-reasoning").workload.preset, "arena-hard-reasoning");
}

}  // namespace
}  // namespace sl::exp
