// The PASCAL experiments' registry entries (ids, titles, descriptions) and
// the §V base scenario.
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

namespace sl::exp {

using namespace pascal_impl;

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
