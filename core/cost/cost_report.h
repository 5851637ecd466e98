#pragma once
// The `servelab-cli cost` subcommand's logic (60-cli-formats.md): batch
// arguments → BatchShape, and the predicted iteration time as text or JSON.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/cost_model.h"

namespace sl {

/// "--prefill TOKENS[xBATCH]": BATCH prompts of TOKENS new tokens each, no
/// cached context ("2048", "512x8"). InputError naming --prefill on bad syntax.
BatchShape parsePrefillArg(std::string_view arg);
/// "--decode SEQS@CONTEXT": SEQS decode sequences at context CONTEXT
/// ("1@1024", "32@1024"). InputError naming --decode on bad syntax.
BatchShape parseDecodeArg(std::string_view arg);
/// Both options combined into one batch; with neither given, the batch is
/// one decode step at 1 K context ("--decode 1@1024").
BatchShape parseCostBatch(std::optional<std::string_view> prefill,
                          std::optional<std::string_view> decode);

struct CostReportOptions {
  double gpu_memory_utilization = 0.9;
  double kv_capacity_fraction = 1.0;
  int block_size = 16;
  std::string profile;  ///< active profile's path; "" = default coefficients
  /// Speculative decoding (cost --spec): the draft side and the per-position
  /// acceptance; the report adds the draft, the verify step and the time per
  /// token against no speculation. Null: none.
  const class SpeculativeCost* speculative = nullptr;
  std::vector<double> acceptance;
};

/// Human-readable report: iteration time and its breakdown in ms, the
/// heterogeneity factor, KV capacity in tokens and blocks (or why the
/// weights do not fit).
std::string formatCostReport(const CostModel& model, const BatchShape& batch,
                             const CostReportOptions& opts = {});
/// The same numbers for machines (`--json`). Keys: gpu, model, tp,
/// model_dtype, kv_dtype, weight_bytes (whole instance), profile,
/// batch{...}, iteration_ms, breakdown_ms{linear, prefill_attention,
/// decode_attention, overhead, communication}, heterogeneity_h,
/// kv_capacity{tokens, blocks, block_size, bytes_per_token,
/// windowed_bytes_per_token (sliding-window layers; 0 without)} or
/// kv_capacity null + kv_error, coefficients{...}.
nlohmann::json costReportJson(const CostModel& model, const BatchShape& batch,
                              const CostReportOptions& opts = {});

/// `servelab-cli cost --allreduce-fit`: every fitted all-reduce line
/// (implementation, tp, size regime, latency floor, bus bandwidth, η,
/// median / max relative error over the measured points) and the sources.
std::string formatAllReduceFit();
nlohmann::json allReduceFitJson();

}  // namespace sl
