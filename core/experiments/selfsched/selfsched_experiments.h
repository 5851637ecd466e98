#pragma once
// The self-scheduling paper's evaluation (`servelab-cli reproduce`):
// selfsched-fig5-tau, selfsched-fig6-p95, selfsched-fig8-starvation,
// selfsched-table2-overhead.
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

void addSelfSchedExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
