// PASCAL's rate sweeps: SLO violation (Fig. 11), throughput (Fig. 12), the
// NonAdaptive ablation (Fig. 15).
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

}  // namespace sl::exp::pascal_impl
