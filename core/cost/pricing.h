#pragma once
// What a deployment costs (issue 49 item 2; docs/metrics.md "Cost"): each
// GPU preset's on-demand price per GPU-hour and board power, from
// resources/pricing/gpu-prices.json (each figure dated and cited; sources in
// docs/analysis/gpu_prices_sources.md), and the run's cost metrics.
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sl {

struct GpuPrice {
  std::string gpu;            ///< preset id
  double usdPerGpuHour = 0;
  std::string provider, instance, date, source;
};

/// The price of `gpu` (a preset id), if the file has one.
const GpuPrice* gpuPrice(std::string_view gpu);
/// Board power (TDP, W) of `gpu`, if the file has it.
std::optional<double> gpuBoardPowerW(std::string_view gpu);

/// One pool's share of a run's cost: its GPU, GPU count and price.
struct PoolCost {
  std::string gpu;
  int gpus = 0;
  std::optional<double> usdPerGpuHour;  ///< unset: no price known
  std::optional<double> powerW;         ///< per GPU; unset: unknown
};

/// The run's cost metrics. Unset when a pool lacks its price (or power).
struct CostMetrics {
  int gpus = 0;
  std::optional<double> usdPerHour;
  std::optional<double> usdPerMillionTokens;  ///< output tokens: the whole bill over them
  /// Input (prompt) tokens: the whole bill over them, as the output figure
  /// (each is the price per token of its kind if it paid for the cluster
  /// alone; not a split of the bill between the two).
  std::optional<double> usdPerMillionInputTokens;
  std::optional<double> tokensPerJoule;       ///< output tokens per joule at board power
  std::optional<double> goodputPerUsd;        ///< requests meeting the SLO per dollar
  std::vector<std::string> missingPrice;      ///< GPUs without a price
};
/// From the pools, the output tokens per second, the goodput (req/s) and the
/// input tokens per second (NaN: no input figure).
CostMetrics costMetrics(const std::vector<PoolCost>& pools, double outputTokensPerS, double goodputRps,
                        double inputTokensPerS = std::numeric_limits<double>::quiet_NaN());

}  // namespace sl
