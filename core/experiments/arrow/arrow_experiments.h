#pragma once
// Arrow (shared/papers/arrow-adaptive-pd-instances.txt) figure experiments:
// Fig. 7 (four systems on the four Table 1 traces), Fig. 8 (ablation of the
// dispatch strategies, 4 P + 4 D), Fig. 9 (scaling with the GPU count).
// Traces are read from the shared trace folder (SERVELAB_TRACES_DIR, else
// ../shared/traces next to the source tree); an experiment whose trace is
// absent stops with an InputError naming the file.
#include <optional>
#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

/// One of the paper's Table 1 workloads and its SLOs.
struct ArrowTrace {
  std::string key;        // "azure-code" ...
  std::string name;       // "Azure Code"
  std::string file;       // relative to the traces folder
  std::string format;     // trace reader
  double ttft = 0, tpot = 0;                 // Table 1 SLOs (s)
  std::optional<double> windowEndS;          // Mooncake: first 10 minutes
  std::optional<std::int64_t> maxRequests;   // BurstGPT: the shared slice is what there is
  int paperRequests = 0;                     // Table 1's request count
  double compression = 1;                    // time scales searched: 8/c .. 1/(64 c) (BurstGPT slice: sparse)
  bool prefixCaching = false;                // cluster.prefix_caching (arrow-fig7-mooncake-prefix)
};

const std::vector<ArrowTrace>& arrowTraces();
/// The trace file of `t` in the shared traces folder; InputError naming
/// what was looked for when the folder or the file is missing.
std::string arrowTracePath(const ArrowTrace& t);
/// The folder holding the shared traces, or nullopt when none is found.
std::optional<std::string> arrowTracesDir();

/// The paper's setting for one system on a trace: "arrow", "static-pd/minimal-load",
/// "static-pd/round-robin" (4 P + 4 D), "vllm-colocated" (1 x TP 8),
/// "vllm-disaggregated" (1 P + 1 D, TP 4), "distserve" (4 P + 4 D); `gpus` GPUs
/// (instances of TP 1, or one TP=gpus instance for vllm-colocated).
Scenario arrowScenario(const ArrowTrace& t, const std::string& system, double timeScale, int gpus = 8,
                       std::optional<std::int64_t> maxRequests = std::nullopt);

void addArrowExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
