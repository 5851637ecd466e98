#pragma once
// Mixed GPU pools and what they cost, as the GUI words them (issue 49 item
// 5): the cluster view's pool headers and the status bar's live cost
// readout. Prices come from core (run/execute.h costJson: the scenario's
// price_usd_per_gpu_hour, else the GPU's dated, cited list price in
// resources/pricing/; cost/pricing.h costMetrics for $ per million tokens);
// nothing here prices a GPU itself.
#include <QString>
#include <QStringList>

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "cost/pricing.h"

namespace sl {
struct Scenario;
}

namespace sl::ui {

/// One pool of the scenario's cluster: instances [first, first + count).
struct PoolGroup {
  int first = 0, count = 0;
  int tp = 1;
  QString gpuId, gpuName;               // preset id, datasheet name ("NVIDIA H100 SXM5 80GB")
  QString role;                         // "colocated", "prefill", "decode"
  std::optional<double> usdPerGpuHour;  // unset: no price known
  QString priceSource;                  // "AWS p5.48xlarge (…), 2026-11", "scenario"
  std::optional<double> usdPerHour() const {
    return usdPerGpuHour ? std::optional<double>(*usdPerGpuHour * count * tp) : std::nullopt;
  }
  /// The header's texts, longest first: "prefill pool · NVIDIA H100 SXM5
  /// 80GB · 1 × TP8 · $55.04/h", then shorter (the GPU's id, no "pool").
  QStringList headerForms() const;
  /// The header's tooltip: the pool, its GPUs and where its price comes from.
  QString toolTip() const;
};

/// The scenario's pools in instance order (one group for a cluster without
/// cluster.pools).
std::vector<PoolGroup> poolGroups(const Scenario& s);

/// "$55.04/h", "$1,234/h"; "—" when unset.
QString usdText(std::optional<double> usd);

/// The status bar's throughput and cost readout: output tokens per second
/// over the last kWindowS simulated seconds, the cluster's $/hour and $ per
/// million output tokens at that throughput ("—" when a GPU has no price).
class CostReadout {
 public:
  static constexpr double kWindowS = 10.0;
  void setScenario(const Scenario& s);
  /// A frame: simulated clock, all output tokens so far and the prompt
  /// tokens of the requests prefilled so far; a new `generation` (load,
  /// reset) starts the window afresh.
  void record(int generation, double clockS, std::int64_t tokens, std::int64_t inputTokens = 0);
  /// Rolling output tokens per second (unset before two frames).
  std::optional<double> tokensPerS() const { return tps_; }
  /// Rolling input (prompt) tokens prefilled per second.
  std::optional<double> inputTokensPerS() const { return inTps_; }
  std::optional<double> usdPerHour() const { return metrics_.usdPerHour; }
  std::optional<double> usdPerMillionTokens() const;
  std::optional<double> usdPerMillionInputTokens() const;
  /// Output tokens per joule at board power (unset: a GPU's power unknown).
  std::optional<double> tokensPerJoule() const;
  /// A request that finished at `finishS` meeting the SLO.
  void recordMet(int generation, double finishS);
  /// Requests meeting the SLO per dollar over the same window (goodput ×
  /// 3600 ÷ $/hour); unset without a price or before a frame.
  std::optional<double> goodputPerUsd() const;
  /// The readout, longest form first: "3.1 k tok/s · $109.93/h · $9.84/M tok",
  /// "$109.93/h · $9.84/M tok", "$109.93/h".
  QStringList forms() const;
  QString toolTip() const;
  const std::vector<PoolGroup>& pools() const { return pools_; }

 private:
  void restart(int generation);
  std::vector<PoolGroup> pools_;
  std::vector<PoolCost> costs_;
  CostMetrics metrics_;  // at 0 tok/s: $/hour and the missing prices
  struct Sample {
    double clockS;
    std::int64_t tokens, input;
  };
  std::deque<Sample> samples_;
  std::deque<double> met_;  // finish times of SLO-meeting requests in the window
  int generation_ = -1;
  std::optional<double> tps_, inTps_;
};

}  // namespace sl::ui
