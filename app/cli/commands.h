#pragma once
// The servelab-cli subcommands. Each returns the process exit code:
// 0 success, 2 bad input (sl::InputError), 1 internal error.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run/saved_run.h"
#include "scenario/spec.h"

namespace sl::cli {

struct ScenarioArgs {
  std::string path;
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
};

struct RunArgs {
  ScenarioArgs scenario;
  std::string out;
  std::string outputs;   // --outputs (empty: all); parsed by outputsOf()
  bool json = false;
  bool quiet = false;
  bool recordWallTime = false;
  bool lenient = false;  // --lenient: workload.trace.lenient = true
};

/// The scenario file with --set overrides and --seed applied (validated).
/// A saved run's "live_changes" section (run/saved_run.h) is parsed and
/// checked against the scenario; it goes to `*live` when given, otherwise a
/// warning says that `ignoredBy` (the command) runs without it.
Scenario loadWithOverrides(const ScenarioArgs& a, std::optional<LiveChanges>* live = nullptr,
                           const char* ignoredBy = nullptr);

int cmdRun(const RunArgs& a);
int cmdCompare(const RunArgs& a, const std::vector<std::string>& policies);
int cmdValidate(const ScenarioArgs& a, bool printCanonical);
int cmdPresets(const std::string& what, bool json);

struct CostArgs {
  std::string gpu = "h100-sxm-80g";
  std::string model = "llama-3.1-8b";
  int tp = 1;
  std::string modelDtype = "bf16", kvDtype = "bf16";
  std::optional<std::string> expertDtype;  ///< MoE experts: bf16 | fp16 | fp8 | mxfp4 (unset: --model-dtype)
  std::optional<std::string> prefill, decode, profile;
  double gpuMemoryUtilization = 0.9;
  double kvCapacityFraction = 1.0;
  int blockSize = 16;
  std::string allreduce = "vllm";
  std::optional<std::string> hetero;  ///< "kernel" | "cv": overrides the profile's
  std::optional<std::string> engine;  ///< engine-generation preset: coefficients and async scheduling
  // Expert parallelism of an MoE model (cluster.ep etc.; cost/moe.h).
  int ep = 1;
  bool attentionDp = false;
  int epRedundant = 0;
  std::optional<std::string> epPlacement;  ///< contiguous | eplb
  std::string routing = "balanced";        ///< balanced | zipf:SKEW | file:PATH
  int gpusPerNode = 8;
  double nicGbps = 3200;  ///< per node (8 × 400 Gb/s)
  // Speculative decoding (cost/speculative.h): METHOD[:K] (eagle:3, mtp:1,
  // ngram:4, draft:3 with --draft-model) and the per-position acceptance.
  std::optional<std::string> spec, draftModel;
  std::vector<double> acceptance;
  bool allreduceFit = false;  ///< print the measured-collective fits instead
  bool json = false;
};
int cmdCost(const CostArgs& a);

}  // namespace sl::cli
