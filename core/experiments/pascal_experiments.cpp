#include "experiments/pascal_experiments.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

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
// prompt 128, reasoning uniform 128-2048, 300 requests.
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

std::int64_t pascalRequests(const ExperimentOptions& o) {
  return o.quick ? kQuickRequests : kFullRequests;
}

std::vector<double> sweepRates(const ExperimentOptions& o) {
  if (o.quick) return {kPascalLowRate, kPascalMediumRate, kPascalHighRate};
  return {1, 2, 3, 4, 5, 6, 7, 8};
}

std::string rateLabel(double r) {
  return num(r, 1);
}

Scenario withSeed(Scenario s, const ExperimentOptions& o) {
  if (o.seed) s.run.seed = *o.seed;
  return s;
}

RunOutcome runPascal(double rate, const std::string& policy, const ExperimentOptions& o) {
  const std::string label = policy + " @ " + rateLabel(rate) + " req/s";
  if (o.onRun) o.onRun(label);
  return runInMemory(withSeed(pascalScenario(rate, policy, pascalRequests(o)), o), label);
}

double pct(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : std::nan("");
}

/// 100 * (base - x) / base.
double reductionPct(double base, double x) {
  return base > 0 ? 100.0 * (base - x) / base : std::nan("");
}

std::vector<double> ttfts(const std::vector<RequestRecord>& recs) {
  std::vector<double> v;
  for (const RequestRecord& r : recs)
    if (r.finished)
      if (auto t = r.ttft()) v.push_back(*t);
  std::sort(v.begin(), v.end());
  return v;
}

// ---- Fig. 10: binned tail TTFT at the high rate ------------------------------

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

std::string binsCsvRows(const std::string& policy, const std::vector<TailBin>& bins, const std::string& prefix = "") {
  std::string out;
  for (const TailBin& b : bins)
    out += prefix + policy + "," + std::to_string(b.bin_lo) + "," + std::to_string(b.bin_hi) + "," +
           std::to_string(b.n) + "," + b.rule + "," + num(b.value, 6) + "\n";
  return out;
}

ExperimentResult fig10(const ExperimentOptions& o) {
  const std::vector<std::string> policies = {"fcfs", "rr", "pascal"};
  std::map<std::string, std::vector<TailBin>> bins;
  std::map<std::string, RunOutcome> runs;
  for (const std::string& p : policies) {
    runs[p] = runPascal(kPascalHighRate, p, o);
    bins[p] = binnedTailTtft(runs[p].records);
  }
  ExperimentResult r;
  r.table.columns = {"policy",
                     "rate_rps",
                     "finished",
                     "ttft_p50_s",
                     "ttft_p99_s",
                     "tail_bins",
                     "tail_ttft_max_s",
                     "tail_ttft_mean_s",
                     "pascal_max_reduction_pct",
                     "pascal_max_reduction_s",
                     "pascal_mean_reduction_pct",
                     "pascal_worst_increase_s",
                     "pascal_worst_increase_pct"};
  for (const std::string& p : policies) {
    const auto& b = bins[p];
    double mx = 0, sum = 0;
    for (const TailBin& t : b) {
      mx = std::max(mx, t.value);
      sum += t.value;
    }
    std::vector<std::string> row = {p,
                                    rateLabel(kPascalHighRate),
                                    std::to_string(runs[p].summary.finished),
                                    num(runs[p].summary.ttft_s.p50),
                                    num(runs[p].summary.ttft_s.p99),
                                    std::to_string(b.size()),
                                    num(mx),
                                    num(b.empty() ? std::nan("") : sum / static_cast<double>(b.size()))};
    if (p == "pascal") {
      for (int i = 0; i < 5; ++i) row.push_back("-");
    } else {
      const BinCompare c = compareBins(b, bins["pascal"]);
      row.push_back(num(c.maxReduction, 1));
      row.push_back(num(c.maxReductionAbs, 2));
      row.push_back(num(c.meanReduction, 1));
      row.push_back(num(c.worstIncrease, 2));
      row.push_back(num(c.worstIncreasePct, 1));
    }
    r.table.addRow(std::move(row));
  }
  std::string csv = "policy,bin_lo,bin_hi,n,rule,ttft_s\n";
  for (const std::string& p : policies) csv += binsCsvRows(p, bins[p]);
  r.charts.push_back({"tail_ttft_by_reasoning.csv", csv});
  r.notes.push_back(
      "pascal_*_reduction: per 256-token reasoning bin, 100*(policy - pascal)/policy over bins both keep; "
      "worst_increase: largest bin where pascal is slower.");
  return r;
}

// ---- rate sweeps (Fig. 11, 12, 15b) -----------------------------------------

using Sweep = std::map<std::pair<double, std::string>, Summary>;

Sweep runSweep(const std::vector<std::string>& policies, const ExperimentOptions& o) {
  Sweep s;
  for (double rate : sweepRates(o))
    for (const std::string& p : policies) s[{rate, p}] = runPascal(rate, p, o).summary;
  return s;
}

ExperimentResult fig11(const ExperimentOptions& o) {
  const std::vector<std::string> policies = {"fcfs", "rr", "pascal"};
  const Sweep s = runSweep(policies, o);
  ExperimentResult r;
  r.table.columns = {"rate_rps"};
  for (const auto& p : policies) r.table.columns.push_back(p + "_slo_violation_pct");
  for (const auto& p : policies) r.table.columns.push_back(p + "_blocking_p99_s");
  std::string csv = "rate_rps,policy,qoe_n,qoe_violation_rate,qoe_mean,blocking_p99_s,preemptions\n";
  for (double rate : sweepRates(o)) {
    std::vector<std::string> row = {rateLabel(rate)};
    for (const auto& p : policies) row.push_back(num(100 * s.at({rate, p}).qoe_violation_rate, 2));
    for (const auto& p : policies) row.push_back(num(s.at({rate, p}).blocking_s.p99, 3));
    r.table.addRow(std::move(row));
    for (const auto& p : policies) {
      const Summary& m = s.at({rate, p});
      csv += rateLabel(rate) + "," + p + "," + std::to_string(m.qoe_n) + "," + num(m.qoe_violation_rate, 6) + "," +
             num(m.qoe_mean, 6) + "," + num(m.blocking_s.p99, 6) + "," + std::to_string(m.preemptions) + "\n";
    }
  }
  r.charts.push_back({"slo_violation_vs_rate.csv", csv});
  r.notes.push_back(
      "SLO violation = share of answer streams with QoE < 0.95 (ServeLab QoE counts the </think> -> "
      "first answer token wait, docs/policies/pascal.md choice 8).");
  return r;
}

ExperimentResult fig12(const ExperimentOptions& o) {
  const std::vector<std::string> policies = {"fcfs", "rr", "pascal"};
  const Sweep s = runSweep(policies, o);
  ExperimentResult r;
  r.table.columns = {"rate_rps"};
  for (const auto& p : policies) r.table.columns.push_back(p + "_tokens_per_s");
  r.table.columns.push_back("pascal_vs_fcfs_pct");
  r.table.columns.push_back("pascal_vs_rr_pct");
  std::string csv = "rate_rps,policy,tokens_per_s,output_tokens,sim_s\n";
  for (double rate : sweepRates(o)) {
    std::vector<std::string> row = {rateLabel(rate)};
    for (const auto& p : policies) row.push_back(num(s.at({rate, p}).tokens_per_s, 1));
    const double pa = s.at({rate, "pascal"}).tokens_per_s;
    row.push_back(num(-reductionPct(s.at({rate, "fcfs"}).tokens_per_s, pa), 2));
    row.push_back(num(-reductionPct(s.at({rate, "rr"}).tokens_per_s, pa), 2));
    r.table.addRow(std::move(row));
    for (const auto& p : policies) {
      const Summary& m = s.at({rate, p});
      csv += rateLabel(rate) + "," + p + "," + num(m.tokens_per_s, 3) + "," + std::to_string(m.output_tokens) + "," +
             num(m.sim_s, 6) + "\n";
    }
  }
  r.charts.push_back({"throughput_vs_rate.csv", csv});
  r.notes.push_back(
      "tokens/s = all generated tokens (reasoning + answer) / simulated time until the last request "
      "finishes.");
  return r;
}

// ---- Fig. 13: PASCAL vs PASCAL(NoMigration) ---------------------------------

ExperimentResult fig13(const ExperimentOptions& o) {
  const std::vector<std::string> policies = {"pascal", "pascal-nomigration"};
  const std::vector<double> rates = {kPascalLowRate, kPascalMediumRate, kPascalHighRate};
  ExperimentResult r;
  r.table.columns = {"policy",          "rate_rps",       "ttft_p50_s",        "ttft_p99_s", "reasoning_p50_s",
                     "reasoning_p99_s", "blocking_p99_s", "slo_violation_pct", "migrations", "preemptions"};
  std::string tail = "rate_rps,policy,bin_lo,bin_hi,n,rule,ttft_s\n";
  std::string lat = "rate_rps,policy,metric,p50_s,p90_s,p99_s,mean_s\n";
  for (double rate : rates) {
    for (const std::string& p : policies) {
      const RunOutcome run = runPascal(rate, p, o);
      const Summary& m = run.summary;
      r.table.addRow({p, rateLabel(rate), num(m.ttft_s.p50), num(m.ttft_s.p99), num(m.reasoning_s.p50),
                      num(m.reasoning_s.p99), num(m.blocking_s.p99), num(100 * m.qoe_violation_rate, 2),
                      std::to_string(m.migrations), std::to_string(m.preemptions)});
      tail += binsCsvRows(p, binnedTailTtft(run.records), rateLabel(rate) + ",");
      auto line = [&](const char* name, const LatencyStats& st) {
        lat += rateLabel(rate) + "," + p + "," + name + "," + num(st.p50, 6) + "," + num(st.p90, 6) + "," +
               num(st.p99, 6) + "," + num(st.mean, 6) + "\n";
      };
      line("ttft", m.ttft_s);
      line("reasoning", m.reasoning_s);
      line("blocking", m.blocking_s);
    }
  }
  r.charts.push_back({"tail_ttft_by_reasoning.csv", tail});
  r.charts.push_back({"latencies.csv", lat});
  r.notes.push_back("blocking = </think> -> first scheduled again (the paper's blocking latency, Fig. 13c).");
  return r;
}

// ---- Fig. 15: PASCAL vs PASCAL(NonAdaptive) ---------------------------------

ExperimentResult fig15(const ExperimentOptions& o) {
  const std::vector<std::string> policies = {"pascal", "pascal-nonadaptive"};
  ExperimentResult r;
  r.table.columns = {"policy",    "rate_rps",  "ttft_p10_s",        "ttft_p50_s", "ttft_p90_s", "ttft_p99_s",
                     "e2e_p50_s", "e2e_p99_s", "slo_violation_pct", "migrations", "preemptions"};
  const std::vector<double> ps = {0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99};
  std::string dist = "rate_rps,policy,percentile,ttft_s\n";
  std::string slo = "rate_rps,policy,qoe_violation_rate,e2e_p50_s,e2e_p99_s\n";
  for (double rate : sweepRates(o)) {
    for (const std::string& p : policies) {
      const RunOutcome run = runPascal(rate, p, o);
      const Summary& m = run.summary;
      const std::vector<double> t = ttfts(run.records);
      r.table.addRow({p, rateLabel(rate), num(percentileSorted(t, 0.10)), num(m.ttft_s.p50), num(m.ttft_s.p90),
                      num(m.ttft_s.p99), num(m.e2e_s.p50), num(m.e2e_s.p99), num(100 * m.qoe_violation_rate, 2),
                      std::to_string(m.migrations), std::to_string(m.preemptions)});
      for (double q : ps)
        dist += rateLabel(rate) + "," + p + "," + num(q, 2) + "," + num(percentileSorted(t, q), 6) + "\n";
      slo += rateLabel(rate) + "," + p + "," + num(m.qoe_violation_rate, 6) + "," + num(m.e2e_s.p50, 6) + "," +
             num(m.e2e_s.p99, 6) + "\n";
    }
  }
  r.charts.push_back({"ttft_distribution.csv", dist});
  r.charts.push_back({"slo_violation_e2e_vs_rate.csv", slo});
  return r;
}

// ---- Fig. 4: reasoning-latency breakdown (Sec. III) -------------------------

struct Breakdown {
  double executed = 0, blocked = 0, preempted = 0;
  std::int64_t n = 0;
  double total() const { return executed + blocked + preempted; }
};

/// Reasoning latency g_R - a split into blocked (arrival -> first scheduled),
/// preempted (time preempted, capped at what is left of the reasoning
/// latency: the record keeps one total, and with 16 answer tokens nearly all
/// of it falls in the reasoning phase) and executed (the rest).
void addBreakdown(const RequestRecord& rec, Breakdown& b) {
  const auto lat = rec.reasoningLatency();
  if (!lat) return;
  const double blocked = std::min(*lat, nsToSeconds(rec.queueing));
  const double preempted = std::min(*lat - blocked, nsToSeconds(rec.preempted));
  b.blocked += blocked;
  b.preempted += preempted;
  b.executed += *lat - blocked - preempted;
  ++b.n;
}

ExperimentResult fig4(const ExperimentOptions& o) {
  const std::vector<std::string> policies = {"oracle", "fcfs", "rr"};
  const std::int64_t requests = o.quick ? 100 : 300;
  Scenario base = parseScenario(nlohmann::json::parse(kCharReasoningBase), "pascal-char-reasoning");
  base.workload.requests = requests;
  base = withSeed(base, o);
  std::map<std::string, std::map<std::int64_t, Breakdown>> perBin;
  std::map<std::string, Breakdown> all;
  std::map<std::string, Summary> sums;
  for (const std::string& p : policies) {
    Scenario s = base;
    s.policy.id = p;
    if (o.onRun) o.onRun(p);
    const RunOutcome run = runInMemory(s, p);
    sums[p] = run.summary;
    for (const RequestRecord& rec : run.records) {
      if (!rec.finished) continue;
      addBreakdown(rec, all[p]);
      addBreakdown(rec, perBin[p][rec.reasoning / kTailBinWidth]);
    }
  }
  ExperimentResult r;
  r.table.columns = {"policy",      "requests",      "reasoning_mean_s", "vs_oracle", "executed_pct",
                     "blocked_pct", "preempted_pct", "preemptions",      "ttft_p99_s"};
  const double oracleMean = all["oracle"].n ? all["oracle"].total() / static_cast<double>(all["oracle"].n) : 0;
  for (const std::string& p : policies) {
    const Breakdown& b = all[p];
    const double mean = b.n ? b.total() / static_cast<double>(b.n) : std::nan("");
    r.table.addRow({p, std::to_string(b.n), num(mean), num(oracleMean > 0 ? mean / oracleMean : std::nan(""), 2),
                    num(pct(b.executed, b.total()), 1), num(pct(b.blocked, b.total()), 1),
                    num(pct(b.preempted, b.total()), 1), std::to_string(sums[p].preemptions), num(sums[p].ttft_s.p99)});
  }
  std::string csv = "policy,bin_lo,bin_hi,n,executed_s,blocked_s,preempted_s,total_s,normalized_to_oracle\n";
  for (const std::string& p : policies) {
    for (const auto& [bin, b] : perBin[p]) {
      const double n = static_cast<double>(b.n);
      const auto& ob = perBin["oracle"];
      const auto it = ob.find(bin);
      const double oracleBin =
          it != ob.end() && it->second.n ? it->second.total() / static_cast<double>(it->second.n) : std::nan("");
      csv += p + "," + std::to_string(bin * kTailBinWidth) + "," + std::to_string((bin + 1) * kTailBinWidth) + "," +
             std::to_string(b.n) + "," + num(b.executed / n, 6) + "," + num(b.blocked / n, 6) + "," +
             num(b.preempted / n, 6) + "," + num(b.total() / n, 6) + "," + num(b.total() / n / oracleBin, 4) + "\n";
    }
  }
  r.charts.push_back({"reasoning_breakdown_by_bin.csv", csv});
  r.notes.push_back(
      "blocked = arrival -> first scheduled; preempted = time preempted (capped at the reasoning "
      "latency left); executed = the rest. Means over requests, seconds.");
  return r;
}

// ---- Fig. 9: TTFT vs reasoning length at three rates ------------------------

ExperimentResult fig9(const ExperimentOptions& o) {
  const std::vector<std::string> policies = {"fcfs", "rr", "pascal"};
  const std::vector<std::pair<std::string, double>> rates = {
      {"low", kPascalLowRate}, {"medium", kPascalMediumRate}, {"high", kPascalHighRate}};
  ExperimentResult r;
  r.table.columns = {"load",       "rate_rps",   "policy",     "finished",   "ttft_p50_s",
                     "ttft_p90_s", "ttft_p99_s", "ttft_max_s", "preemptions"};
  std::string csv = "load,rate_rps,policy,request_id,reasoning_tokens,ttft_s\n";
  for (const auto& [load, rate] : rates) {
    for (const std::string& p : policies) {
      const RunOutcome run = runPascal(rate, p, o);
      const Summary& m = run.summary;
      r.table.addRow({load, rateLabel(rate), p, std::to_string(m.finished), num(m.ttft_s.p50), num(m.ttft_s.p90),
                      num(m.ttft_s.p99), num(m.ttft_s.max), std::to_string(m.preemptions)});
      for (const RequestRecord& rec : run.records)
        if (rec.finished)
          if (auto t = rec.ttft())
            csv += load + "," + rateLabel(rate) + "," + p + "," + std::to_string(rec.id) + "," +
                   std::to_string(rec.reasoning) + "," + num(*t, 6) + "\n";
    }
  }
  r.charts.push_back({"ttft_scatter.csv", csv});
  return r;
}

}  // namespace

Scenario pascalScenario(double rate, const std::string& policy, std::int64_t requests) {
  Scenario s = parseScenario(nlohmann::json::parse(kPascalBase), "pascal-baseline");
  s.workload.arrival.rate = rate;
  s.workload.requests = requests;
  s.policy.id = policy;
  return s;
}

void addPascalExperiments(std::vector<Experiment>& out) {
  const std::string setting =
      " Setting: PASCAL Sec. V (8 x h100-96g, r1-distill-qwen-32b, KV 50 %, no chunked prefill, 100 Gbps, "
      "alpaca-reasoning), 1000 requests (200 with --quick).";
  out.push_back({"pascal-fig10-tail-ttft", "PASCAL", "Fig. 10: tail TTFT by reasoning length at the high rate",
                 "Binned tail TTFT (256-token reasoning bins; max/p90/p95/p99 by bin size) for fcfs, rr and pascal "
                 "at 8 req/s, and PASCAL's per-bin tail-TTFT reduction." +
                     setting,
                 fig10});
  out.push_back({"pascal-fig11-slo", "PASCAL", "Fig. 11: answering-phase SLO violation vs arrival rate",
                 "Share of answer streams with QoE < 0.95 for fcfs, rr and pascal at 1..8 req/s (2, 4, 8 with "
                 "--quick)." +
                     setting,
                 fig11});
  out.push_back({"pascal-fig12-throughput", "PASCAL", "Fig. 12: serving throughput vs arrival rate",
                 "Output tokens per second (reasoning + answer) for fcfs, rr and pascal at 1..8 req/s." + setting,
                 fig12});
  out.push_back({"pascal-fig13-nomigration", "PASCAL", "Fig. 13: PASCAL vs PASCAL(NoMigration)",
                 "TTFT p50/p99, reasoning latency, p99 blocking latency and SLO violation for pascal and "
                 "pascal-nomigration at the low/medium/high rates (2/4/8 req/s)." +
                     setting,
                 fig13});
  out.push_back({"pascal-fig15-nonadaptive", "PASCAL", "Fig. 15: PASCAL vs PASCAL(NonAdaptive)",
                 "TTFT distribution percentiles, SLO violation and E2E latency for pascal and pascal-nonadaptive "
                 "at 1..8 req/s." +
                     setting,
                 fig15});
  out.push_back({"pascal-fig4-reasoning-breakdown", "PASCAL",
                 "Fig. 4: reasoning latency split into executed/blocked/preempted",
                 "oracle (unlimited KV), fcfs and rr on one instance with the pascal-char-reasoning preset (prompt "
                 "128, reasoning 128-2048, answer 16), 300 requests at 2 req/s (100 with --quick).",
                 fig4});
  out.push_back({"pascal-fig9-ttft-scatter", "PASCAL", "Fig. 9: TTFT vs reasoning length at low/medium/high rates",
                 "Per-request TTFT against reasoning tokens for fcfs, rr and pascal at 2/4/8 req/s (scatter CSV) "
                 "and TTFT percentiles." +
                     setting,
                 fig9});
}

}  // namespace sl::exp
