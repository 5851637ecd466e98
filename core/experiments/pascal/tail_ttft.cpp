// PASCAL's TTFT figures: binned tail TTFT (Fig. 10), the NoMigration
// ablation (Fig. 13), TTFT vs reasoning length (Fig. 9), the mixed workload (Fig. 16).
#include "experiments/pascal/common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/request.h"
#include "experiments/grid.h"
#include "metrics/binned_tail.h"
#include "scenario/scenario_io.h"

namespace sl::exp::pascal_impl {

// ---- binned tail TTFT (Figs. 10, 13, 16) ------------------------------------

struct BinCompare {
  double maxReduction = std::nan("");     // max over shared bins of 100 (other - pascal) / other
  double meanReduction = std::nan("");    // mean over shared bins
  double maxReductionAbs = std::nan("");  // seconds, at the bin of max absolute reduction
  double worstIncrease = 0;               // max over shared bins of pascal - other (s), >= 0
  double worstIncreasePct = 0;
  int shared = 0;
};

BinCompare compareBins(const std::vector<TailBin>& other, const std::vector<TailBin>& pascal) {
  BinCompare c;
  double sum = 0;
  for (const TailBin& p : pascal) {
    for (const TailBin& b : other) {
      if (b.bin_lo != p.bin_lo) continue;
      const double red = reductionPct(b.value, p.value);
      if (std::isnan(c.maxReduction) || red > c.maxReduction) c.maxReduction = red;
      const double abs = b.value - p.value;
      if (std::isnan(c.maxReductionAbs) || abs > c.maxReductionAbs) c.maxReductionAbs = abs;
      if (-abs > c.worstIncrease) {
        c.worstIncrease = -abs;
        c.worstIncreasePct = -red;
      }
      sum += red;
      ++c.shared;
    }
  }
  if (c.shared > 0) c.meanReduction = sum / c.shared;
  return c;
}

/// Mean over the bins both keep with bin_lo in [lo, hi) of 100 (other -
/// pascal) / other; NaN when there are none.
double meanReductionIn(const std::vector<TailBin>& other, const std::vector<TailBin>& pascal, std::int64_t lo,
                       std::int64_t hi) {
  double sum = 0;
  int n = 0;
  for (const TailBin& p : pascal)
    for (const TailBin& b : other)
      if (b.bin_lo == p.bin_lo && b.bin_lo >= lo && b.bin_lo < hi) {
        sum += reductionPct(b.value, p.value);
        ++n;
      }
  return n ? sum / n : std::nan("");
}

/// Binned tail TTFT of every cell of a grid, by (rate, policy).
class TailBins {
 public:
  explicit TailBins(const Grid& g) {
    for (const GridCell& c : g.cells) bins_[{c.rate, c.policy}] = binnedTailTtft(c.run.records);
  }
  const std::vector<TailBin>& of(double rate, const std::string& p) const { return bins_.at({rate, p}); }

  /// tail_bins, tail_ttft_max_s, tail_ttft_mean_s, then (when the grid has
  /// pascal) PASCAL's per-bin reduction against the row's policy at the
  /// same rate ("-" on pascal's own rows).
  std::vector<Column> columns(bool withPascalComparison) const {
    std::vector<Column> cols;
    cols.push_back({"tail_bins", [this](const GridCell& c) { return std::to_string(of(c.rate, c.policy).size()); }});
    cols.push_back({"tail_ttft_max_s", [this](const GridCell& c) {
                      double mx = 0;
                      for (const TailBin& t : of(c.rate, c.policy)) mx = std::max(mx, t.value);
                      return num(mx);
                    }});
    cols.push_back({"tail_ttft_mean_s", [this](const GridCell& c) {
                      const auto& b = of(c.rate, c.policy);
                      double sum = 0;
                      for (const TailBin& t : b) sum += t.value;
                      return num(b.empty() ? std::nan("") : sum / static_cast<double>(b.size()));
                    }});
    if (!withPascalComparison) return cols;
    auto cmp = [this](const GridCell& c, const std::function<std::string(const BinCompare&)>& f) -> std::string {
      if (c.policy == "pascal") return "-";
      return f(compareBins(of(c.rate, c.policy), of(c.rate, "pascal")));
    };
    cols.push_back({"pascal_max_reduction_pct", [cmp](const GridCell& c) {
                      return cmp(c, [](const BinCompare& b) { return num(b.maxReduction, 1); });
                    }});
    cols.push_back({"pascal_max_reduction_s", [cmp](const GridCell& c) {
                      return cmp(c, [](const BinCompare& b) { return num(b.maxReductionAbs, 2); });
                    }});
    cols.push_back({"pascal_mean_reduction_pct", [cmp](const GridCell& c) {
                      return cmp(c, [](const BinCompare& b) { return num(b.meanReduction, 1); });
                    }});
    cols.push_back({"pascal_worst_increase_s", [cmp](const GridCell& c) {
                      return cmp(c, [](const BinCompare& b) { return num(b.worstIncrease, 2); });
                    }});
    cols.push_back({"pascal_worst_increase_pct", [cmp](const GridCell& c) {
                      return cmp(c, [](const BinCompare& b) { return num(b.worstIncreasePct, 1); });
                    }});
    return cols;
  }

  /// PASCAL's mean per-bin reduction against the row's policy over the bins
  /// of reasoning length in [lo, hi) ("-" on pascal's rows).
  Column rangeReductionColumn(std::string name, std::int64_t lo, std::int64_t hi) const {
    return {std::move(name), [this, lo, hi](const GridCell& c) -> std::string {
              if (c.policy == "pascal") return "-";
              return num(meanReductionIn(of(c.rate, c.policy), of(c.rate, "pascal"), lo, hi), 1);
            }};
  }

  /// Chart CSV: [rate_rps,]policy,bin_lo,bin_hi,n,rule,ttft_s.
  std::string csv(const Grid& g, bool withRate) const {
    std::string out =
        withRate ? "rate_rps,policy,bin_lo,bin_hi,n,rule,ttft_s\n" : "policy,bin_lo,bin_hi,n,rule,ttft_s\n";
    for (const GridCell& c : g.cells)
      for (const TailBin& b : of(c.rate, c.policy))
        out += (withRate ? rateLabel(c.rate) + "," : std::string()) + c.policy + "," + std::to_string(b.bin_lo) + "," +
               std::to_string(b.bin_hi) + "," + std::to_string(b.n) + "," + b.rule + "," + num(b.value, 6) + "\n";
    return out;
  }

 private:
  std::map<std::pair<double, std::string>, std::vector<TailBin>> bins_;
};

const char* kTailNote =
    "pascal_*_reduction: per 256-token reasoning bin, 100*(policy - pascal)/policy over bins both keep; "
    "worst_increase: largest bin where pascal is slower.";

// ---- Fig. 10: binned tail TTFT at the high rate ------------------------------

ExperimentResult fig10(const ExperimentOptions& o, const Dataset& d) {
  const Grid g = pascalGrid(d, {d.high}, kBaselinesAndPascal, o);
  const TailBins bins(g);
  std::vector<Column> cols = {policyColumn(), rateColumn(), finishedColumn(),
                              summaryColumn("ttft_p50_s", [](const Summary& m) { return m.ttft_s.p50; }),
                              summaryColumn("ttft_p99_s", [](const Summary& m) { return m.ttft_s.p99; })};
  for (Column& c : bins.columns(true)) cols.push_back(std::move(c));
  ExperimentResult r;
  r.table = longTable(g, cols);
  r.charts.push_back({"tail_ttft_by_reasoning.csv", bins.csv(g, false)});
  r.notes.push_back(kTailNote);
  return r;
}

// ---- per-metric latency chart (Figs. 13, 16) --------------------------------

std::string latenciesCsv(const Grid& g) {
  std::string lat = "rate_rps,policy,metric,p50_s,p90_s,p99_s,mean_s\n";
  for (const GridCell& c : g.cells) {
    auto line = [&](const char* name, const LatencyStats& st) {
      lat += rateLabel(c.rate) + "," + c.policy + "," + name + "," + num(st.p50, 6) + "," + num(st.p90, 6) + "," +
             num(st.p99, 6) + "," + num(st.mean, 6) + "\n";
    };
    const Summary& m = c.run.summary;
    line("ttft", m.ttft_s);
    line("reasoning", m.reasoning_s);
    line("blocking", m.blocking_s);
  }
  return lat;
}

// ---- Fig. 13: PASCAL vs PASCAL(NoMigration) ---------------------------------

// Where the blocking latency went (docs/metrics.md "Blocking breakdown"): per
// cell, the mean of each part over all requests with blocking defined, and
// over the p99 tail (blocking >= its p99). Each row's parts sum to its
// blocking_s. One CSV row per (rate, policy, stat), and the same as notes.
std::string blockingBreakdownCsv(const Grid& g, std::vector<std::string>* notes) {
  std::string head = "rate_rps,policy,stat,n,blocking_s";
  for (int i = 0; i < BlockingBreakdown::kParts; ++i) {
    head += ',';
    head += blockingPartName(i);
    head += "_s";
  }
  std::string csv = head;
  csv += '\n';
  if (notes) notes->push_back("blocking breakdown (s; mean: over all; p99_tail: over blocking >= p99): " + head);
  for (const GridCell& c : g.cells) {
    const BlockingBreakdown& bd = c.run.summary.blocking_breakdown;
    const auto row = [&](const char* stat, std::int64_t n, const std::array<double, BlockingBreakdown::kParts>& v) {
      double total = 0;
      for (double x : v) total += x;
      std::string line = rateLabel(c.rate);
      for (const std::string& f : {c.policy, std::string(stat), std::to_string(n), num(total, 4)}) {
        line += ',';
        line += f;
      }
      for (double x : v) {
        line += ',';
        line += num(x, 4);
      }
      csv += line;
      csv += '\n';
      if (notes) notes->push_back(std::string(2, ' ').append(line));
    };
    row("mean", bd.n, bd.mean_s);
    row("p99_tail", bd.tail_n, bd.tail_mean_s);
  }
  return csv;
}

ExperimentResult fig13(const ExperimentOptions& o) {
  const Grid g = pascalGrid(kAlpaca, loadRates(), {"pascal", "pascal-nomigration"}, o);
  ExperimentResult r;
  r.table = longTable(
      g, {policyColumn(), rateColumn(), summaryColumn("ttft_p50_s", [](const Summary& m) { return m.ttft_s.p50; }),
          summaryColumn("ttft_p99_s", [](const Summary& m) { return m.ttft_s.p99; }),
          summaryColumn("reasoning_p50_s", [](const Summary& m) { return m.reasoning_s.p50; }),
          summaryColumn("reasoning_p99_s", [](const Summary& m) { return m.reasoning_s.p99; }),
          summaryColumn("blocking_p99_s", [](const Summary& m) { return m.blocking_s.p99; }), sloViolationColumn(),
          migrationsColumn(), preemptionsColumn()});
  r.charts.push_back({"tail_ttft_by_reasoning.csv", TailBins(g).csv(g, true)});
  r.charts.push_back({"latencies.csv", latenciesCsv(g)});
  r.notes.push_back("blocking = </think> -> first scheduled again (the paper's blocking latency, Fig. 13c).");
  r.charts.push_back({"blocking_breakdown.csv", blockingBreakdownCsv(g, &r.notes)});
  return r;
}

// ---- Fig. 9: TTFT vs reasoning length at three rates ------------------------

ExperimentResult fig9(const ExperimentOptions& o) {
  const Grid g = pascalGrid(kAlpaca, loadRates(), kBaselinesAndPascal, o);
  ExperimentResult r;
  r.table = longTable(g, {{"load", [](const GridCell& c) { return loadName(c.rate); }},
                          rateColumn(),
                          policyColumn(),
                          finishedColumn(),
                          summaryColumn("ttft_p50_s", [](const Summary& m) { return m.ttft_s.p50; }),
                          summaryColumn("ttft_p90_s", [](const Summary& m) { return m.ttft_s.p90; }),
                          summaryColumn("ttft_p99_s", [](const Summary& m) { return m.ttft_s.p99; }),
                          summaryColumn("ttft_max_s", [](const Summary& m) { return m.ttft_s.max; }),
                          preemptionsColumn()});
  std::string csv = "load,rate_rps,policy,request_id,reasoning_tokens,ttft_s\n";
  for (const GridCell& c : g.cells)
    for (const RequestRecord& rec : c.run.records)
      if (rec.finished)
        if (auto t = rec.ttft())
          csv += loadName(c.rate) + "," + rateLabel(c.rate) + "," + c.policy + "," + std::to_string(rec.id) + "," +
                 std::to_string(rec.reasoning) + "," + num(*t, 6) + "\n";
  r.charts.push_back({"ttft_scatter.csv", csv});
  return r;
}

// ---- Fig. 16: the reasoning-heavy mix -----------------------------------------

/// The mix carries several times the tokens of an alpaca request (half of
/// the requests reason for a median 4K tokens), so it saturates the cluster
/// near 0.5 req/s (fcfs: 11 preemptions at 0.25 req/s, 1647 at 0.5); the
/// sweep starts below that and goes up to the high rate of the others.
constexpr std::int64_t kShortReasoning = 1024;  // Fig. 16 "shorter reasoning segments"
constexpr std::int64_t kLongReasoning = 4096;   // reasoning-heavy median

std::vector<double> mixRates(const ExperimentOptions& o) {
  if (o.quick) return {0.25, 1, kPascalHighRate};
  return {0.25, 0.5, 1, 2, 4, kPascalHighRate};
}

ExperimentResult fig16(const ExperimentOptions& o) {
  const Grid g = pascalGrid(kMix, mixRates(o), kBaselinesAndPascal, o);
  const TailBins bins(g);
  std::vector<Column> cols = {policyColumn(),
                              rateColumn(),
                              finishedColumn(),
                              summaryColumn("ttft_p50_s", [](const Summary& m) { return m.ttft_s.p50; }),
                              summaryColumn("ttft_p99_s", [](const Summary& m) { return m.ttft_s.p99; }),
                              sloViolationColumn(),
                              summaryColumn(
                                  "tokens_per_s", [](const Summary& m) { return m.tokens_per_s; }, 1),
                              preemptionsColumn()};
  for (Column& c : bins.columns(true)) cols.push_back(std::move(c));
  // The paper's reading of Fig. 16: short reasoning gains, long reasoning
  // pays a little.
  cols.push_back(bins.rangeReductionColumn("pascal_short_reduction_pct", 0, kShortReasoning));
  cols.push_back(bins.rangeReductionColumn("pascal_long_reduction_pct", kLongReasoning, INT64_MAX));
  ExperimentResult r;
  r.table = longTable(g, cols);
  r.charts.push_back({"tail_ttft_by_reasoning.csv", bins.csv(g, true)});
  const Table sweep = longTable(g, {rateColumn(), policyColumn(),
                                    summaryColumn(
                                        "ttft_p99_s", [](const Summary& m) { return m.ttft_s.p99; }, 6),
                                    summaryColumn(
                                        "qoe_violation_rate", [](const Summary& m) { return m.qoe_violation_rate; }, 6),
                                    summaryColumn(
                                        "tokens_per_s", [](const Summary& m) { return m.tokens_per_s; }, 3),
                                    preemptionsColumn()});
  r.charts.push_back({"slo_throughput_vs_rate.csv", sweep.csv()});
  r.notes.push_back(kTailNote);
  r.notes.push_back(
      "pascal_short/long_reduction: mean of the per-bin reduction over bins below 1024 / from 4096 "
      "reasoning tokens.");
  return r;
}

}  // namespace sl::exp::pascal_impl
