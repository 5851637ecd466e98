#pragma once
// `servelab-cli reproduce hw-validation-modern` (docs/validation.md "Modern
// engines"): ServeLab's predictions against published end-to-end
// measurements of 2024-2026 serving engines (TensorRT-LLM, vLLM, SGLang,
// NVIDIA NIM; resources/validation/modern/, embedded at build time; sources
// and licences in its README). Each measured configuration becomes one
// scenario and one run; every metric the source gives for it (TTFT, TPOT /
// ITL, E2E, throughput) is compared. Compared with, never fitted to.
#include <optional>
#include <string>
#include <vector>

#include "experiments/experiment.h"
#include "scenario/spec.h"

namespace sl::exp {

/// One published number (a row of a resources/validation/modern/*.csv).
struct ModernRow {
  std::string file;       ///< the CSV it came from
  int line = 0;           ///< its line there
  std::string group;      ///< a family of rows: one source, engine and version
  std::string engine, engineVersion;
  std::string gpu;        ///< ServeLab GPU preset
  int gpus = 1, tp = 1;   ///< instances = gpus / tp
  std::string model;      ///< ServeLab model preset
  std::string modelDtype = "bf16", kvDtype = "bf16";
  std::string lengths;    ///< "fixed" | "sharegpt"
  int input = 0, output = 0;  ///< fixed lengths (0 with sharegpt)
  std::string mode;       ///< "offline" | "batch" | "rate" | "concurrency"
  double load = 0;        ///< req/s (rate), clients (concurrency), batch size (batch); 0 offline
  int requests = 0;       ///< the benchmark's request count; 0 = not published
  std::string metric;     ///< ttft_ms | tpot_ms | itl_ms | e2e_ms | output_tok_s | total_tok_s | req_s | output_tok_s_per_gpu
  std::string statistic;  ///< mean | median | p90 | p99 | value
  double value = 0;
  std::string location, note;
  /// The configuration's key: rows with the same key share one run.
  std::string configKey() const;
};

/// Parses one modern-validation CSV (columns in resources/validation/modern/
/// README.md). InputError naming `name`, the line and the column for a
/// missing column, a bad number, an unknown preset, mode, metric or
/// statistic, or gpus not a multiple of tp.
std::vector<ModernRow> parseModernCsv(const std::string& csv, const std::string& name);

/// Every embedded modern CSV's rows, in file then line order.
const std::vector<ModernRow>& modernRows();

/// Requests ServeLab runs for a row when the source does not say (offline
/// and open-loop: 1000; closed loop: max(200, 10 x clients); batch: the batch).
int modernRequestCount(const ModernRow& r);

/// The scenario of a row's configuration: instances = gpus / tp of `gpu`
/// running `model` at its dtypes, FCFS, least-loaded routing, the engine's
/// default batching (chunked prefill, 256 sequences, 8192 tokens), the
/// default cost model (`engine`, when set, names an engine preset); lengths
/// fixed or ShareGPT's (../shared/traces; nullopt when absent); offline and
/// batch: every request at t = 0 (with modernWorkload); rate: Poisson;
/// concurrency: a closed loop.
std::optional<Scenario> modernScenario(const ModernRow& r, const std::optional<std::string>& engine = std::nullopt);

/// The workload of a row's run: offline and batch rows move every request's
/// arrival to t = 0; the others use the scenario's (an empty factory).
WorkloadFactory modernWorkload(const ModernRow& r);

/// ServeLab's value of a row's metric and statistic from a run of its
/// scenario (ms for latencies, per second for throughputs). ITL is
/// predicted by TPOT (equal for fixed lengths).
double modernPredicted(const ModernRow& r, const RunOutcome& run);

/// Whether a row enters the summaries: not with ShareGPT lengths (the
/// shared file holds whole conversations, not the benchmarks' first-turn
/// samples: shown, not compared; docs/validation.md).
bool modernCompared(const ModernRow& r);

void addModernValidationExperiment(std::vector<Experiment>& out);

}  // namespace sl::exp
