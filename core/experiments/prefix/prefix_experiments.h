#pragma once
// Prefix caching experiments (issue 28 item 6; docs/fidelity.md "Prefix
// caching"): the Mooncake trace's shared blocks (hash_ids) with caching off
// and on under round-robin, prefix-aware and session-affinity routing.
#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

/// The setting of prefix-mooncake: Arrow's testbed (8 x h800-80g, llama-3.1-8b,
/// chunked prefill 8192) as 8 vLLM replicas (vllm-colocated, TP 1) on the
/// Mooncake clip at `timeScale`, with `router` and caching on or off.
Scenario prefixMooncakeScenario(const std::string& router, bool caching, double timeScale,
                                std::optional<std::int64_t> maxRequests);

/// prefix-sessions: the same replicas on "system-prompt" or "sessions"
/// (synthetic shared prefixes, docs/workloads.md "Shared prefixes").
Scenario prefixSyntheticScenario(const std::string& workload, const std::string& router, bool caching,
                                 std::int64_t requests);

void addPrefixExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
