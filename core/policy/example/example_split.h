#pragma once
// The worked example of docs/policy-api.md ("adding a scheduler family"):
// a small, complete global policy that is not from a paper. It splits the
// cluster into a prefill pool (the first `prefill_instances` instances,
// which hand every request off after its prefill) and a decode pool, and
// every `rebalance_interval_s` live-migrates one decoding request from the
// decode instance with the largest KV footprint to the one with the
// smallest, when their gap exceeds `rebalance_gap` of an instance's KV.
// Routing: the prefill instance with the fewest assigned tokens (lowest
// index on ties); hand-off: the engine's default (least-loaded decode
// instance). Local scheduling: vLLM FCFS. Exercised by samples/
// example-split-*.json and tests/policy/test_example_split.cpp.
#include <cstdint>
#include <string>

#include "engine/policy_api.h"

namespace sl {

struct ExampleSplitConfig {
  int prefillInstances = 1;          // clamped to [1, instances - 1] at attach
  double rebalanceIntervalS = 1.0;   // monitor tick
  double rebalanceGap = 0.2;         // fraction of an instance's GPU KV blocks
};

class ExampleSplit : public GlobalPolicy {
public:
  explicit ExampleSplit(const ExampleSplitConfig& cfg) : cfg_(cfg) {}
  const char* name() const override { return "example-split"; }
  void attach(Simulator& sim) override;
  int route(const Request& r) override;
  SimTime tickInterval() const override;
  void onTick() override;
  bool setKnob(const std::string& name, double value) override;
  /// Its pool ("prefill" / "decode") and KV footprint per instance.
  void publishInstance(int instance, std::vector<PolicyField>& out) const override;
  void publishCluster(std::vector<PolicyField>& out) const override;
  void report(std::vector<PolicyReportEntry>& out) const override;

  /// Instances [0, prefillCount()) prefill; the rest decode.
  int prefillCount() const { return prefill_; }
  std::int64_t rebalances() const { return rebalances_; }

private:
  ExampleSplitConfig cfg_;
  int prefill_ = 1;
  std::int64_t rebalances_ = 0;
};

}  // namespace sl
