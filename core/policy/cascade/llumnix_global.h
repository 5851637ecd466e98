#pragma once
// Llumnix as CascadeInfer's baseline (paper §6.1; 30-schedulers.md): its
// dispatch and migration rule on the shared engine.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/policy_api.h"

namespace sl {

/// Llumnix (the paper's baseline): dispatch to the instance with the most
/// free KV; every interval, live-migrate one request from the most to the
/// least loaded instance when their KV-usage gap exceeds a threshold and the
/// move narrows it.
struct LlumnixConfig {
  double intervalS = 0.1;
  double gapThreshold = 0.1;  // fraction of KV capacity
};

class LlumnixGlobal : public GlobalPolicy {
public:
  explicit LlumnixGlobal(LlumnixConfig cfg) : cfg_(cfg) {}
  const char* name() const override { return "llumnix"; }
  /// Reads progress through forEachActive and instance counters only.
  bool laneAware() const override { return true; }
  void attach(Simulator& sim) override;
  int route(const Request& r) override;
  void onTimer(int timer) override;
  bool setKnob(const std::string& name, double value) override;
  void publishCluster(std::vector<PolicyField>& out) const override;
  void report(std::vector<PolicyReportEntry>& out) const override;
  std::int64_t migrationsStarted() const { return started_; }
  /// One balancing pass (the timer's work); true when a migration started.
  bool balanceNow();

private:
  double usage(int i) const;
  LlumnixConfig cfg_;
  int timer_ = -1;
  std::int64_t started_ = 0;
};

}  // namespace sl
