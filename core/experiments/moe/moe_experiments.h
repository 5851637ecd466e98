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

/// One side of a P/D-disaggregated wide-EP deployment of DeepSeek-V3
/// (issue 47 anchor (a); docs/fidelity.md "Mixture of experts"): a prefill
/// pool of `prefillInstances` instances of `prefillGpus` GPUs and a decode
/// pool of `decodeInstances` of `decodeGpus`, every instance EP over all its
/// GPUs with data-parallel attention, `redundant` EPLB replicas, fp8 weights,
/// static-pd; closed-loop clients at `concurrency`, fixed prompts and answers,
/// measured over [warmup, warmup + window) simulated seconds.
struct PdWideEp {
  std::string gpu = "h100-sxm-80g";
  int prefillGpus = 32, prefillInstances = 1;
  int decodeGpus = 72, decodeInstances = 1;
  int redundant = 32;
  bool tbo = true;
  int maxBatchedTokens = 16384 * 32;  // per instance and step (16384 per GPU on 32 GPUs)
  int maxSeqs = 256 * 72;             // per instance (256 per GPU on 72 GPUs)
  int concurrency = 1024;
  int input = 2000, output = 1;
  double warmupS = 10, windowS = 60;
  double mtpAcceptance = 0;  // > 0: MTP with one draft token accepted at this rate
  double nicGbps = 3200;     // cluster.fabric.nic_gbps: per node (8 × 400 Gb/s)
};
Scenario pdWideEpScenario(const PdWideEp& d);

void addMoeExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
