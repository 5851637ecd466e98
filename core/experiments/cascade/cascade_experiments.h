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

/// Which workload and batch cap a cascade run uses.
///  - Long (the paper's setting, §2.2 and §5.1): the `sharegpt-long` preset
///    (ShareGPT conversations with the long-context tail to 128K, requests
///    clipped to the model's context window by the run) and max_num_seqs
///    1024 ("the vLLM official default").
///  - Short8k (the earlier, non-paper variant): the shared ShareGPT file cut
///    at 8K (lognormal fits when absent) and max_num_seqs 256.
enum class CascadeWorkload { Long, Short8k };

/// One run: `system` (a policy id) on `instances` GPUs of `gpu` at tensor
/// parallelism `tp` (instances = gpus / tp), model `model`, Poisson `rate`
/// req/s, `requests` requests, workload `w`.
Scenario cascadeScenario(const std::string& system, const std::string& model, const std::string& gpu, int gpus,
                         int tp, double rate, std::int64_t requests, std::uint64_t seed = 1,
                         CascadeWorkload w = CascadeWorkload::Short8k);

/// The heavy-load rate of a setting (Little's law on the cost model): the
/// instances' concurrent capacity (max_num_seqs, or what KV memory holds at
/// the workload's mean sequence length) over the mean output length times
/// the time per output token at that batch. Lengths are the run's own
/// (the workload source at seed 1, clipped to the context window), so the
/// batches carry the workload's length mix and the cost model's
/// heterogeneity rule (cluster.cost.hetero) prices them.
double cascadeHeavyRate(const std::string& model, const std::string& gpu, int gpus, int tp,
                        CascadeWorkload w = CascadeWorkload::Short8k);

void addCascadeExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
