#pragma once
// Speculative decoding (issue 48 item 5; docs/fidelity.md "Speculative
// decoding"): the load crossover of vLLM's n-gram result, EAGLE-3's speed-up
// by batch size in SGLang, DeepSeek-V3's MTP, and PASCAL with speculation.
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

void addSpeculativeExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
