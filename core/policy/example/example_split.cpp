#include "policy/example/example_split.h"

#include <algorithm>

#include "engine/simulator.h"
#include "engine/snapshot.h"

namespace sl {

void ExampleSplit::attach(Simulator& sim) {
  GlobalPolicy::attach(sim);
  const int n = sim.numInstances();
  // With one instance there is nothing to split: it does both.
  prefill_ = n < 2 ? n : std::clamp(cfg_.prefillInstances, 1, n - 1);
  if (n < 2) return;
  for (int i = 0; i < n; ++i) {
    sim.setRole(i, i < prefill_ ? InstanceRole::Prefill : InstanceRole::Decode);
    sim.setPoolLabel(i, i < prefill_ ? "prefill" : "decode");
  }
}

void ExampleSplit::publishInstance(int instance, std::vector<PolicyField>& out) const {
  out.push_back({"KV", static_cast<double>(sim_->instance(instance).kvFootprintBlocks()), "blocks",
                 "KV footprint (GPU + CPU) the rebalancing compares across the decode pool"});
}

void ExampleSplit::publishCluster(std::vector<PolicyField>& out) const {
  out.push_back({"rebalances", static_cast<double>(rebalances_), "migrations",
                 "live migrations started by the rebalancing so far"});
}

void ExampleSplit::report(std::vector<PolicyReportEntry>& out) const {
  out.push_back({"prefill_instances", static_cast<double>(prefill_)});
  out.push_back({"rebalances", static_cast<double>(rebalances_)});
}

int ExampleSplit::route(const Request&) {
  int best = 0;
  for (int i = 1; i < prefill_; ++i)
    if (sim_->instance(i).assignedTokens() < sim_->instance(best).assignedTokens()) best = i;
  return best;
}

SimTime ExampleSplit::tickInterval() const { return secondsToNs(cfg_.rebalanceIntervalS); }

void ExampleSplit::onTick() {
  const int n = sim_->numInstances();
  if (n - prefill_ < 2) return;
  int hi = prefill_, lo = prefill_;
  for (int i = prefill_ + 1; i < n; ++i) {
    const std::int64_t m = sim_->instance(i).kvFootprintBlocks();
    if (m > sim_->instance(hi).kvFootprintBlocks()) hi = i;
    if (m < sim_->instance(lo).kvFootprintBlocks()) lo = i;
  }
  const double gap = static_cast<double>(sim_->instance(hi).kvFootprintBlocks() -
                                         sim_->instance(lo).kvFootprintBlocks());
  if (hi == lo || gap <= cfg_.rebalanceGap * static_cast<double>(sim_->instance(hi).config().gpuBlocks)) return;
  // The decoding request on `hi` with the most output still to produce
  // (lowest id on ties): moving it relieves `hi` the longest.
  Request* pick = nullptr;
  sim_->forEachActive([&](const Request& r) {
    if (r.instance != hi || r.state != ReqState::Running || !r.prefillDone()) return;
    const std::int32_t left = r.outputLen() - r.generated;
    if (!pick || left > pick->outputLen() - pick->generated || (left == pick->outputLen() - pick->generated && r.id < pick->id))
      pick = const_cast<Request*>(&r);
  });
  if (pick && sim_->migrateLive(*pick, lo)) ++rebalances_;
}

bool ExampleSplit::setKnob(const std::string& name, double value) {
  if (name == "rebalance_interval_s") cfg_.rebalanceIntervalS = value;
  else if (name == "rebalance_gap") cfg_.rebalanceGap = value;
  else return false;
  return true;
}

}  // namespace sl
