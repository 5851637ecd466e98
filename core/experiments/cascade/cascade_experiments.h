#pragma once
// CascadeInfer (shared/papers/cascadeinfer-length-aware-pipeline.txt)
// figure experiments: Figs. 6-7 (latency vs rate, eight models), 9 (L40 and
// 70B testbeds), 10 (throughput), 12 (SLO attainment), 13 (Q-model error),
// 14 (layouts), 15 (refinement), 16 (imbalance) and the planner-cost table.
// The workload is ShareGPT-like: prompt and output lengths drawn from the
// shared ShareGPT statistics (SERVELAB_TRACES_DIR or ../shared/traces, file
// sharegpt/sharegpt_8k_filtered_stats_llama2_tokenizer.csv) with Poisson
// arrivals; when that file is absent, lognormal fits of its quantiles (said
// in each experiment's notes).
#include <optional>
#include <string>

#include "experiments/experiment.h"

namespace sl::exp {

/// The ShareGPT statistics CSV, or nullopt when absent.
std::optional<std::string> cascadeShareGptPath();

/// One run of the paper's setting: `system` (a policy id) on `instances`
/// GPUs of `gpu` at tensor parallelism `tp` (instances = gpus / tp), model
/// `model`, Poisson `rate` req/s, `requests` requests.
Scenario cascadeScenario(const std::string& system, const std::string& model, const std::string& gpu, int gpus,
                         int tp, double rate, std::int64_t requests, std::uint64_t seed = 1);

/// The heavy-load rate of a setting (Little's law on the cost model): the
/// instances' concurrent capacity (max_num_seqs, or what KV memory holds at
/// the workload's mean length) over the mean output length times the
/// iteration time of that batch.
double cascadeHeavyRate(const std::string& model, const std::string& gpu, int gpus, int tp);

void addCascadeExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
