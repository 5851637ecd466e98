#pragma once
// Mixed GPUs and money (issue 49 item 4; docs/fidelity.md "Mixed pools and
// cost"): Splitwise's iso-cost comparison of H100 prefill + A100 decode
// against all-H100 and all-A100 clusters (Llama-2-70B, the Azure 2023 code
// and conversation traces), also under Splitwise's slowdown SLOs and at its
// 40-machine scale; Mélange-style mixing of GPU types (melange-mix).
#include <vector>

#include "cost/cost_model.h"
#include "experiments/experiment.h"
#include "metrics/request_record.h"

namespace sl::exp {

void addCostExperiments(std::vector<Experiment>& out);

/// Splitwise's SLO metrics (splitwise-sim notebooks/plots.ipynb get_data):
/// the P50/P90/P99 over requests of TTFT, TBT ((end - first token) / output
/// tokens) and end-to-end latency, each over the same request served alone
/// on `ref` (its iteration time of the whole prompt; of one decode step at
/// the prompt's context, per token). An unfinished request is infinitely slow.
struct SplitwiseSlowdowns {
  double ttft[3] = {0, 0, 0};  // P50, P90, P99
  double tbt[3] = {0, 0, 0};
  double e2e[3] = {0, 0, 0};
};
SplitwiseSlowdowns splitwiseSlowdowns(const std::vector<RequestRecord>& records, const CostModel& ref);
/// Splitwise's limits, all nine strictly: TTFT P50/P90/P99 < 2/3/6, TBT and
/// end-to-end < 1.25/1.5/5 (notebooks/plots.ipynb get_slo).
bool meetsSplitwiseSlos(const SplitwiseSlowdowns& s);

}  // namespace sl::exp
