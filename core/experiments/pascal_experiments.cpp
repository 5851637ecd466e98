#include "experiments/pascal_experiments.h"

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

namespace sl::exp {
namespace {

// samples/pascal-baseline-fcfs.json (PASCAL §V-A): 8 x H100 96 GB, one GPU per
// node on a 100 Gbps fabric, DeepSeek-R1-Distill-Qwen-32B, KV capped at 50 %,
// no chunked prefill (vLLM 0.6.1), AlpacaEval-like reasoning chat.
constexpr const char* kPascalBase = R"({
  "schema_version": 1,
  "cluster": {
    "instances": 8, "gpu": "h100-96g", "kv_capacity_fraction": 0.5,
    "preemption": "swap", "chunked_prefill": false,
    "fabric": {"gpus_per_node": 1, "nic_gbps": 100}
  },
  "model": "r1-distill-qwen-32b",
  "workload": {"preset": "alpaca-reasoning", "arrival": {"process": "poisson", "rate": 8.0}, "requests": 1000},
  "policy": {"id": "fcfs", "router": "least-kv"},
  "slo": {"ttfat_s": 0.25, "qoe_tpot_s": 0.1, "qoe_threshold": 0.95},
  "run": {"seed": 1}
})";

// samples/pascal-char-reasoning-fcfs.json (PASCAL §III, Fig. 4): one instance,
// prompt 128, reasoning uniform 128-2048, 300 requests. Fig. 5 swaps in the
// pascal-char-answering preset (prompt 128, no reasoning, answer 128-2048).
constexpr const char* kCharReasoningBase = R"({
  "schema_version": 1,
  "cluster": {"instances": 1, "gpu": "h100-96g", "kv_capacity_fraction": 0.5, "chunked_prefill": false},
  "model": "r1-distill-qwen-32b",
  "workload": {"preset": "pascal-char-reasoning", "arrival": {"process": "poisson", "rate": 2.0}, "requests": 300},
  "policy": {"id": "fcfs", "router": "least-kv"},
  "run": {"seed": 1}
})";

constexpr std::int64_t kFullRequests = 1000;
constexpr std::int64_t kQuickRequests = 200;
constexpr double kCharRate = 2.0;  // the characterization samples' rate (Figs. 4, 5)

/// A workload of the PASCAL evaluation: preset, how descriptions name it and
/// the suffix of the experiment ids that use it.
/// Its low/medium/high rates come from the same sweep rule (docs/fidelity.md);
/// its rate sweeps (Figs. 11, 12, 15) step by `sweepStep` up to 8 steps.
struct Dataset {
  const char* preset;
  const char* name;
  const char* idSuffix;
  double low, medium, high;
  double sweepStep;
};
constexpr Dataset kAlpaca{"alpaca-reasoning", "AlpacaEval-like", "", kPascalLowRate, kPascalMediumRate,
                          kPascalHighRate, 1.0};
constexpr Dataset kArena{"arena-hard-reasoning", "Arena-Hard-like", "-arena", kArenaLowRate, kArenaMediumRate,
                         kArenaHighRate, 0.5};
constexpr Dataset kMix{"reasoning-mix", "50 % Arena-Hard-like + 50 % reasoning-heavy", "-mixed", kPascalLowRate,
                       kPascalMediumRate, kPascalHighRate, 1.0};

const std::vector<std::string> kBaselinesAndPascal = {"fcfs", "rr", "pascal"};

std::int64_t pascalRequests(const ExperimentOptions& o) {
  return o.quick ? kQuickRequests : kFullRequests;
}

std::vector<double> loadRates(const Dataset& d = kAlpaca) {
  return {d.low, d.medium, d.high};
}

std::vector<double> sweepRates(const ExperimentOptions& o, const Dataset& d = kAlpaca) {
  if (o.quick) return loadRates(d);
  std::vector<double> r;
  for (int k = 1; k <= 8; ++k) r.push_back(k * d.sweepStep);
  return r;
}

std::string loadName(double rate, const Dataset& d = kAlpaca) {
  if (rate == d.low) return "low";
  if (rate == d.medium) return "medium";
  if (rate == d.high) return "high";
  return "-";
}


/// The §V grid: `policies` at `rates` on `dataset`.
Grid pascalGrid(const Dataset& dataset, const std::vector<double>& rates, const std::vector<std::string>& policies,
                const ExperimentOptions& o, const ObserverFn& observer = {}) {
  const std::int64_t n = pascalRequests(o);
  return runGrid([&](double rate, const std::string& p) { return pascalScenario(rate, p, n, dataset.preset); }, rates,
                 policies, o, observer);
}

/// 100 * (base - x) / base.
double reductionPct(double base, double x) {
  return base > 0 ? 100.0 * (base - x) / base : std::nan("");
}

double pct(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : std::nan("");
}

std::vector<double> ttfts(const std::vector<RequestRecord>& recs) {
  std::vector<double> v;
  for (const RequestRecord& r : recs)
    if (r.finished)
      if (auto t = r.ttft()) v.push_back(*t);
  std::sort(v.begin(), v.end());
  return v;
}

// ---- common columns ----------------------------------------------------------

Column finishedColumn() {
  return countColumn("finished", [](const Summary& m) { return m.finished; });
}
Column preemptionsColumn() {
  return countColumn("preemptions", [](const Summary& m) { return m.preemptions; });
}
Column migrationsColumn() {
  return countColumn("migrations", [](const Summary& m) { return m.migrations; });
}
Column sloViolationColumn(int decimals = 2) {
  return summaryColumn(
      "slo_violation_pct", [](const Summary& m) { return 100 * m.qoe_violation_rate; }, decimals);
}

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

// ---- rate sweeps (Fig. 11, 12, 15b) -----------------------------------------

ExperimentResult fig11(const ExperimentOptions& o, const Dataset& d) {
  const Grid g = pascalGrid(d, sweepRates(o, d), kBaselinesAndPascal, o);
  ExperimentResult r;
  r.table = wideTable(g, {summaryColumn(
                              "slo_violation_pct", [](const Summary& m) { return 100 * m.qoe_violation_rate; }, 2),
                          summaryColumn(
                              "blocking_p99_s", [](const Summary& m) { return m.blocking_s.p99; }, 3)});
  const Table chart =
      longTable(g, {rateColumn(), policyColumn(), countColumn("qoe_n", [](const Summary& m) { return m.qoe_n; }),
                    summaryColumn(
                        "qoe_violation_rate", [](const Summary& m) { return m.qoe_violation_rate; }, 6),
                    summaryColumn(
                        "qoe_mean", [](const Summary& m) { return m.qoe_mean; }, 6),
                    summaryColumn(
                        "blocking_p99_s", [](const Summary& m) { return m.blocking_s.p99; }, 6),
                    preemptionsColumn()});
  r.charts.push_back({"slo_violation_vs_rate.csv", chart.csv()});
  r.notes.push_back(
      "SLO violation = share of answer streams with QoE < 0.95 (ServeLab QoE counts the </think> -> "
      "first answer token wait, docs/policies/pascal.md choice 8).");
  return r;
}

ExperimentResult fig12(const ExperimentOptions& o, const Dataset& d) {
  const Grid g = pascalGrid(d, sweepRates(o, d), kBaselinesAndPascal, o);
  ExperimentResult r;
  r.table = wideTable(g, {summaryColumn(
                             "tokens_per_s", [](const Summary& m) { return m.tokens_per_s; }, 1)});
  for (const char* base : {"fcfs", "rr"})
    addRateColumn(r.table, g, std::string("pascal_vs_") + base + "_pct", [&g, base](double rate) {
      return num(-reductionPct(g.summary(rate, base).tokens_per_s, g.summary(rate, "pascal").tokens_per_s), 2);
    });
  const Table chart = longTable(g, {rateColumn(), policyColumn(),
                                    summaryColumn(
                                        "tokens_per_s", [](const Summary& m) { return m.tokens_per_s; }, 3),
                                    countColumn("output_tokens", [](const Summary& m) { return m.output_tokens; }),
                                    summaryColumn(
                                        "sim_s", [](const Summary& m) { return m.sim_s; }, 6)});
  r.charts.push_back({"throughput_vs_rate.csv", chart.csv()});
  r.notes.push_back(
      "tokens/s = all generated tokens (reasoning + answer) / simulated time until the last request "
      "finishes.");
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
  return r;
}

// ---- Fig. 15: PASCAL vs PASCAL(NonAdaptive) ---------------------------------

ExperimentResult fig15(const ExperimentOptions& o) {
  const Grid g = pascalGrid(kAlpaca, sweepRates(o), {"pascal", "pascal-nonadaptive"}, o);
  std::map<std::pair<double, std::string>, std::vector<double>> t;
  for (const GridCell& c : g.cells) t[{c.rate, c.policy}] = ttfts(c.run.records);
  ExperimentResult r;
  r.table = longTable(g, {policyColumn(),
                          rateColumn(),
                          {"ttft_p10_s",
                           [&t](const GridCell& c) {
                             return num(percentileSorted(t.at({c.rate, c.policy}), 0.10));
                           }},
                          summaryColumn("ttft_p50_s", [](const Summary& m) { return m.ttft_s.p50; }),
                          summaryColumn("ttft_p90_s", [](const Summary& m) { return m.ttft_s.p90; }),
                          summaryColumn("ttft_p99_s", [](const Summary& m) { return m.ttft_s.p99; }),
                          summaryColumn("e2e_p50_s", [](const Summary& m) { return m.e2e_s.p50; }),
                          summaryColumn("e2e_p99_s", [](const Summary& m) { return m.e2e_s.p99; }),
                          sloViolationColumn(),
                          migrationsColumn(),
                          preemptionsColumn()});
  const std::vector<double> ps = {0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99};
  std::string dist = "rate_rps,policy,percentile,ttft_s\n";
  for (const GridCell& c : g.cells)
    for (double q : ps)
      dist += rateLabel(c.rate) + "," + c.policy + "," + num(q, 2) + "," +
              num(percentileSorted(t.at({c.rate, c.policy}), q), 6) + "\n";
  const Table slo = longTable(g, {rateColumn(), policyColumn(),
                                  summaryColumn(
                                      "qoe_violation_rate", [](const Summary& m) { return m.qoe_violation_rate; }, 6),
                                  summaryColumn(
                                      "e2e_p50_s", [](const Summary& m) { return m.e2e_s.p50; }, 6),
                                  summaryColumn(
                                      "e2e_p99_s", [](const Summary& m) { return m.e2e_s.p99; }, 6)});
  r.charts.push_back({"ttft_distribution.csv", dist});
  r.charts.push_back({"slo_violation_e2e_vs_rate.csv", slo.csv()});
  return r;
}

// ---- Figs. 4 and 5: phase-latency breakdown (Sec. III) ----------------------

/// A phase's latency split into executed / blocked / preempted, summed over
/// requests; SLO counts for the answering phase.
struct Breakdown {
  double executed = 0, blocked = 0, preempted = 0;
  std::int64_t n = 0;
  std::int64_t sloMet = 0;  // requests meeting the answering SLO (Fig. 5)
  double total() const { return executed + blocked + preempted; }
  double mean() const { return n ? total() / static_cast<double>(n) : std::nan(""); }
};

/// What one characterization measures: the phase latency of a record and
/// the token count its bins are keyed by.
struct PhaseSpec {
  std::optional<double> (*latency)(const RequestRecord&);
  std::int64_t (*tokens)(const RequestRecord&);
  bool (*sloMet)(const RequestRecord&, const SloSpec&);  // null: no SLO columns
};

/// Phase latency split into blocked (arrival -> first scheduled), preempted
/// (time preempted, capped at what is left of the phase latency: the record
/// keeps one total) and executed (the rest).
void addBreakdown(const RequestRecord& rec, const PhaseSpec& spec, const SloSpec& slo, Breakdown& b) {
  const auto lat = spec.latency(rec);
  if (!lat) return;
  const double blocked = std::min(*lat, nsToSeconds(rec.queueing));
  const double preempted = std::min(*lat - blocked, nsToSeconds(rec.preempted));
  b.blocked += blocked;
  b.preempted += preempted;
  b.executed += *lat - blocked - preempted;
  ++b.n;
  if (spec.sloMet && spec.sloMet(rec, slo)) ++b.sloMet;
}

struct Characterization {
  Grid grid;
  SloSpec slo;
  std::map<std::string, Breakdown> all;
  std::map<std::string, std::map<std::int64_t, Breakdown>> perBin;  // bin index -> breakdown
};

Characterization characterize(const char* preset, std::int64_t requests, const std::vector<std::string>& policies,
                              const PhaseSpec& spec, const ExperimentOptions& o) {
  Scenario base = parseScenario(nlohmann::json::parse(kCharReasoningBase), "pascal-char");
  base.workload.preset = preset;
  base.workload.requests = requests;
  Characterization ch;
  ch.slo = base.slo;
  ch.grid = runGrid(
      [&](double rate, const std::string& p) {
        Scenario s = base;
        s.workload.arrival.rate = rate;
        s.policy.id = p;
        return s;
      },
      {kCharRate}, policies, o);
  for (const GridCell& c : ch.grid.cells) {
    for (const RequestRecord& rec : c.run.records) {
      if (!rec.finished) continue;
      addBreakdown(rec, spec, ch.slo, ch.all[c.policy]);
      addBreakdown(rec, spec, ch.slo, ch.perBin[c.policy][spec.tokens(rec) / kTailBinWidth]);
    }
  }
  return ch;
}

/// Per-bin chart: policy,bin_lo,bin_hi,n,executed_s,blocked_s,preempted_s,
/// total_s,normalized_to_oracle[,slo_attainment_pct] (means over requests).
std::string breakdownCsv(const Characterization& ch, bool withSlo) {
  std::string csv = "policy,bin_lo,bin_hi,n,executed_s,blocked_s,preempted_s,total_s,normalized_to_oracle";
  csv += withSlo ? ",slo_attainment_pct\n" : "\n";
  static const std::map<std::int64_t, Breakdown> kNone;
  const auto oit = ch.perBin.find("oracle");
  const auto& ob = oit != ch.perBin.end() ? oit->second : kNone;
  for (const std::string& p : ch.grid.policies) {
    const auto pit = ch.perBin.find(p);
    if (pit == ch.perBin.end()) continue;
    for (const auto& [bin, b] : pit->second) {
      const double n = static_cast<double>(b.n);
      const auto it = ob.find(bin);
      const double oracleBin = it != ob.end() ? it->second.mean() : std::nan("");
      csv += p + "," + std::to_string(bin * kTailBinWidth) + "," + std::to_string((bin + 1) * kTailBinWidth) + "," +
             std::to_string(b.n) + "," + num(b.executed / n, 6) + "," + num(b.blocked / n, 6) + "," +
             num(b.preempted / n, 6) + "," + num(b.total() / n, 6) + "," + num(b.total() / n / oracleBin, 4);
      if (withSlo) csv += "," + num(pct(static_cast<double>(b.sloMet), n), 2);
      csv += "\n";
    }
  }
  return csv;
}

/// policy, requests, <phase>_mean_s, vs_oracle, executed/blocked/preempted %.
std::vector<std::string> breakdownRow(const Characterization& ch, const std::string& p) {
  const Breakdown& b = ch.all.at(p);
  const double oracleMean = ch.all.count("oracle") ? ch.all.at("oracle").mean() : std::nan("");
  return {p,
          std::to_string(b.n),
          num(b.mean()),
          num(oracleMean > 0 ? b.mean() / oracleMean : std::nan(""), 2),
          num(pct(b.executed, b.total()), 1),
          num(pct(b.blocked, b.total()), 1),
          num(pct(b.preempted, b.total()), 1)};
}

const std::vector<std::string> kCharPolicies = {"oracle", "fcfs", "rr"};

ExperimentResult fig4(const ExperimentOptions& o) {
  const PhaseSpec spec{[](const RequestRecord& r) { return r.reasoningLatency(); },
                       [](const RequestRecord& r) { return r.reasoning; }, nullptr};
  const Characterization ch = characterize("pascal-char-reasoning", o.quick ? 100 : 300, kCharPolicies, spec, o);
  ExperimentResult r;
  r.table.columns = {"policy",      "requests",      "reasoning_mean_s", "vs_oracle", "executed_pct",
                     "blocked_pct", "preempted_pct", "preemptions",      "ttft_p99_s"};
  for (const std::string& p : kCharPolicies) {
    const Summary& m = ch.grid.summary(kCharRate, p);
    std::vector<std::string> row = breakdownRow(ch, p);
    row.push_back(std::to_string(m.preemptions));
    row.push_back(num(m.ttft_s.p99));
    r.table.addRow(std::move(row));
  }
  r.charts.push_back({"reasoning_breakdown_by_bin.csv", breakdownCsv(ch, false)});
  r.notes.push_back(
      "blocked = arrival -> first scheduled; preempted = time preempted (capped at the reasoning "
      "latency left); executed = the rest. Means over requests, seconds.");
  return r;
}

/// Fig. 5's answering SLO: the first answer token within TTFAT* of the
/// request's arrival (the paper's requests arrive with reasoning done, so
/// arrival is the phase boundary) and QoE >= threshold. ServeLab scores QoE
/// of a request without reasoning from its first token, so the TTFAT* part
/// is checked here from the record.
bool answeringSloMet(const RequestRecord& r, const SloSpec& slo) {
  const auto t = r.ttft();
  return t && *t <= slo.ttfat_s && r.hasQoe() && r.qoe >= slo.qoe_threshold;
}

ExperimentResult fig5(const ExperimentOptions& o) {
  const PhaseSpec spec{[](const RequestRecord& r) { return r.e2e(); }, [](const RequestRecord& r) { return r.answer; },
                       answeringSloMet};
  const Characterization ch = characterize("pascal-char-answering", o.quick ? 100 : 300, kCharPolicies, spec, o);
  ExperimentResult r;
  r.table.columns = {"policy",      "requests",          "answering_mean_s", "vs_oracle",         "executed_pct",
                     "blocked_pct", "preempted_pct",     "preemptions",      "first_token_p99_s", "ttfat_met_pct",
                     "qoe_met_pct", "slo_attainment_pct"};
  for (const std::string& p : kCharPolicies) {
    const GridCell& c = ch.grid.at(kCharRate, p);
    std::int64_t n = 0, ttfatMet = 0, qoeMet = 0;
    for (const RequestRecord& rec : c.run.records) {
      if (!rec.finished) continue;
      ++n;
      if (const auto t = rec.ttft(); t && *t <= ch.slo.ttfat_s) ++ttfatMet;
      if (rec.hasQoe() && rec.qoe >= ch.slo.qoe_threshold) ++qoeMet;
    }
    const double dn = static_cast<double>(n);
    std::vector<std::string> row = breakdownRow(ch, p);
    row.push_back(std::to_string(c.run.summary.preemptions));
    row.push_back(num(c.run.summary.ttft_s.p99));
    row.push_back(num(pct(static_cast<double>(ttfatMet), dn), 1));
    row.push_back(num(pct(static_cast<double>(qoeMet), dn), 1));
    row.push_back(num(pct(static_cast<double>(ch.all.at(p).sloMet), dn), 1));
    r.table.addRow(std::move(row));
  }
  r.charts.push_back({"answering_breakdown_by_bin.csv", breakdownCsv(ch, true)});
  r.notes.push_back(
      "Answering latency = arrival -> last token (no reasoning: the requests start in the answering phase). "
      "blocked = arrival -> first scheduled; preempted = time preempted; executed = the rest. Means, seconds.");
  r.notes.push_back(
      "slo_attainment = first token within TTFAT* (0.25 s) of arrival AND QoE >= 0.95 (TPOT* 0.1 s); "
      "ttfat_met / qoe_met: each part alone.");
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

// ---- KV-cache transfer overhead of PASCAL's migrations (Sec. V-B) ------------

/// Collects every KV copy (network flow) and every migration's stall
/// (left the source -> arrived on the destination: waiting for room there
/// plus the copy).
class TransferLog : public SimObserver {
 public:
  struct Transfer {
    std::int64_t request;
    int src, dst;
    SimTime start, end;
    double bytes;
  };
  void onTransfer(const Request& r, int src, int dst, SimTime start, SimTime end, double bytes) override {
    transfers.push_back({r.id, src, dst, start, end, bytes});
  }
  void onRequestEvent(RequestEvent e, const Request& r, int, SimTime t) override {
    if (e == RequestEvent::MigrationStart) {
      left_[r.id] = t;
    } else if (e == RequestEvent::MigrationEnd) {
      if (const auto it = left_.find(r.id); it != left_.end()) {
        stalls.push_back(nsToSeconds(t - it->second));
        left_.erase(it);
      }
    }
  }
  std::vector<Transfer> transfers;
  std::vector<double> stalls;  // seconds

 private:
  std::map<std::int64_t, SimTime> left_;
};

ExperimentResult kvTransfer(const ExperimentOptions& o) {
  const std::vector<Dataset> datasets = {kAlpaca, kArena};
  const double linkGbps = pascalScenario(kPascalHighRate, "pascal", 1).cluster.fabric.nic_gbps;
  const double linkBytesPerS = linkGbps * 1e9 / 8.0;
  ExperimentResult r;
  r.table.columns = {"dataset",
                     "load",
                     "rate_rps",
                     "migrations",
                     "transfers",
                     "transfer_p50_s",
                     "transfer_p99_s",
                     "transfer_max_s",
                     "wire_p99_s",
                     "mb_per_transfer_mean",
                     "mb_per_transfer_max",
                     "gbps_mean",
                     "gbps_min",
                     "link_gbps",
                     "stall_p99_s",
                     "ttft_p50_s"};
  std::string csv = "dataset,rate_rps,request_id,src,dst,start_s,latency_s,bytes,gbps,wire_s\n";
  for (const Dataset& d : datasets) {
    std::map<double, TransferLog> logs;
    const Grid g = pascalGrid(d, loadRates(d), {"pascal"}, o,
                              [&logs](double rate, const std::string&) -> SimObserver* { return &logs[rate]; });
    for (double rate : g.rates) {
      const TransferLog& log = logs.at(rate);
      const Summary& m = g.summary(rate, "pascal");
      std::vector<double> lat, wire, mb, gbps;
      for (const TransferLog::Transfer& t : log.transfers) {
        const double s = nsToSeconds(t.end - t.start);
        lat.push_back(s);
        wire.push_back(t.bytes / linkBytesPerS);  // the copy alone on an idle link
        mb.push_back(t.bytes / 1e6);
        // a copy always takes the link start-up (> 0), so s > 0
        const double achieved = s > 0 ? t.bytes * 8 / s / 1e9 : std::nan("");
        if (s > 0) gbps.push_back(achieved);
        csv += std::string(d.preset) + "," + rateLabel(rate) + "," + std::to_string(t.request) + "," +
               std::to_string(t.src) + "," + std::to_string(t.dst) + "," + num(nsToSeconds(t.start), 6) + "," +
               num(s, 6) + "," + num(t.bytes, 0) + "," + num(achieved, 3) + "," + num(wire.back(), 6) + "\n";
      }
      std::vector<double> stalls = log.stalls;
      const LatencyStats ls = computeStats(lat), ws = computeStats(wire), ms = computeStats(mb),
                         gs = computeStats(gbps), ss = computeStats(stalls);
      const bool any = !lat.empty();
      const double gbpsMin = gbps.empty() ? 0.0 : *std::min_element(gbps.begin(), gbps.end());
      auto v = [any](double x, int dec) { return any ? num(x, dec) : std::string("nan"); };
      r.table.addRow({d.preset, loadName(rate, d), rateLabel(rate), std::to_string(m.migrations),
                      std::to_string(log.transfers.size()), v(ls.p50, 4), v(ls.p99, 4), v(ls.max, 4), v(ws.p99, 4),
                      v(ms.mean, 1), v(ms.max, 1), gs.n ? num(gs.mean, 1) : "nan", gs.n ? num(gbpsMin, 1) : "nan",
                      num(linkGbps, 0), ss.n ? num(ss.p99, 4) : "nan", num(m.ttft_s.p50, 2)});
    }
  }
  r.charts.push_back({"kv_transfers.csv", csv});
  r.notes.push_back(
      "transfer = one KV copy over the fabric (link start-up + bytes at the max-min fair share of the NICs); "
      "wire = bytes / 100 Gbps (the same copy alone on the link); gbps = bytes * 8 / transfer.");
  r.notes.push_back(
      "stall = the request left its source -> arrived on the destination (waiting for room there + the copy).");
  return r;
}

}  // namespace

Scenario pascalScenario(double rate, const std::string& policy, std::int64_t requests, const std::string& preset) {
  Scenario s = parseScenario(nlohmann::json::parse(kPascalBase), "pascal-baseline");
  s.workload.arrival.rate = rate;
  s.workload.requests = requests;
  s.workload.preset = preset;
  s.policy.id = policy;
  return s;
}

void addPascalExperiments(std::vector<Experiment>& out) {
  auto setting = [](const Dataset& d) {
    return std::string(
               " Setting: PASCAL Sec. V (8 x h100-96g, r1-distill-qwen-32b, KV 50 %, no chunked prefill, "
               "100 Gbps, ") +
           d.preset + "), 1000 requests (200 with --quick).";
  };
  // Figs. 10-12 on AlpacaEval-like (the paper's plots) and, with the id
  // suffix "-arena", on Arena-Hard-like requests (the paper's second dataset).
  using DatasetFn = ExperimentResult (*)(const ExperimentOptions&, const Dataset&);
  auto onBothDatasets = [&](const std::string& id, const std::string& title, const std::string& what, DatasetFn fn) {
    for (const Dataset* d : {&kAlpaca, &kArena}) {
      const Dataset ds = *d;
      const std::string on = ds.idSuffix[0] ? std::string(" (") + ds.name + ")" : std::string();
      out.push_back({id + ds.idSuffix, "PASCAL", title + on, what + setting(ds),
                     [ds, fn](const ExperimentOptions& o) { return fn(o, ds); }});
    }
  };
  onBothDatasets("pascal-fig10-tail-ttft", "Fig. 10: tail TTFT by reasoning length at the high rate",
                 "Binned tail TTFT (256-token reasoning bins; max/p90/p95/p99 by bin size) for fcfs, rr and pascal "
                 "at the high rate (8 req/s; Arena-Hard-like: 2.5 req/s), and PASCAL's per-bin tail-TTFT reduction.",
                 fig10);
  onBothDatasets("pascal-fig11-slo", "Fig. 11: answering-phase SLO violation vs arrival rate",
                 "Share of answer streams with QoE < 0.95 for fcfs, rr and pascal at 1..8 req/s (Arena-Hard-like: "
                 "0.5..4 req/s; low/medium/high with --quick).",
                 fig11);
  onBothDatasets("pascal-fig12-throughput", "Fig. 12: serving throughput vs arrival rate",
                 "Output tokens per second (reasoning + answer) for fcfs, rr and pascal at 1..8 req/s "
                 "(Arena-Hard-like: 0.5..4 req/s).",
                 fig12);
  out.push_back({"pascal-fig13-nomigration", "PASCAL", "Fig. 13: PASCAL vs PASCAL(NoMigration)",
                 "TTFT p50/p99, reasoning latency, p99 blocking latency and SLO violation for pascal and "
                 "pascal-nomigration at the low/medium/high rates (2/4/8 req/s)." +
                     setting(kAlpaca),
                 fig13});
  out.push_back({"pascal-fig15-nonadaptive", "PASCAL", "Fig. 15: PASCAL vs PASCAL(NonAdaptive)",
                 "TTFT distribution percentiles, SLO violation and E2E latency for pascal and pascal-nonadaptive "
                 "at 1..8 req/s." +
                     setting(kAlpaca),
                 fig15});
  out.push_back({"pascal-fig4-reasoning-breakdown", "PASCAL",
                 "Fig. 4: reasoning latency split into executed/blocked/preempted",
                 "oracle (unlimited KV), fcfs and rr on one instance with the pascal-char-reasoning preset (prompt "
                 "128, reasoning 128-2048, answer 16), 300 requests at 2 req/s (100 with --quick).",
                 fig4});
  out.push_back({"pascal-fig5-answering", "PASCAL",
                 "Fig. 5: answering latency split into executed/blocked/preempted, and SLO attainment",
                 "oracle (unlimited KV), fcfs and rr on one instance with the pascal-char-answering preset (prompt "
                 "128, no reasoning, answer 128-2048), 300 requests at 2 req/s (100 with --quick); answering SLO "
                 "TTFAT* 0.25 s, TPOT* 0.1 s, QoE >= 0.95.",
                 fig5});
  out.push_back({"pascal-fig9-ttft-scatter", "PASCAL", "Fig. 9: TTFT vs reasoning length at low/medium/high rates",
                 "Per-request TTFT against reasoning tokens for fcfs, rr and pascal at 2/4/8 req/s (scatter CSV) "
                 "and TTFT percentiles." +
                     setting(kAlpaca),
                 fig9});
  out.push_back({"pascal-fig16-mixed", "PASCAL", "Fig. 16: 50 % reasoning-heavy mix: tail TTFT, SLO, throughput",
                 "TTFT p50/p99, binned tail TTFT with PASCAL's per-bin reduction, SLO violation and tokens/s for "
                 "fcfs, rr and pascal at 0.25, 0.5, 1, 2, 4, 8 req/s (0.25, 1, 8 with --quick; the mix "
                 "saturates the cluster near 0.5 req/s)." +
                     setting(kMix),
                 fig16});
  out.push_back({"pascal-kv-transfer", "PASCAL", "Sec. V-B: KV-cache transfer latency of PASCAL's migrations",
                 "Per-copy KV transfer latency (p50/p99/max), bytes per copy, achieved bandwidth vs the 100 Gbps "
                 "link and migration stall of pascal at the low/medium/high rates (alpaca-reasoning 2/4/8 req/s, "
                 "arena-hard-reasoning 1/1.5/2.5 req/s). "
                 "Setting: PASCAL Sec. V, 1000 requests (200 with --quick).",
                 kvTransfer});
}

}  // namespace sl::exp
