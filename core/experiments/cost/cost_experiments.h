#pragma once
// Mixed GPUs and money (issue 49 item 4; docs/fidelity.md "Mixed pools and
// cost"): Splitwise's iso-cost comparison of H100 prefill + A100 decode
// against all-H100 and all-A100 clusters (Llama-2-70B, the Azure 2023 code
// and conversation traces).
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

void addCostExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
