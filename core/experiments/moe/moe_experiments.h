#pragma once
// Mixture-of-experts deployments (issue 47 item 5; docs/fidelity.md
// "Mixture of experts"): tensor vs expert parallelism with and without
// data-parallel attention, and the cost of expert imbalance with and without
// EPLB's redundant experts.
#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

/// One instance of `model` on `gpus` × `gpu` (tp = gpus) with the given
/// expert parallelism and routing, closed-loop clients at `concurrency` with
/// no think time, fixed prompts of `input` and answers of `output` tokens.
Scenario moeScenario(const std::string& model, const std::string& gpu, int gpus, int ep, bool attentionDp,
                     const nlohmann::json& routing, int redundant, int concurrency, int input, int output,
                     std::int64_t requests);

void addMoeExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
