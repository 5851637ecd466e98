// Llumnix, CascadeInfer's baseline (llumnix_global.h).
#include "policy/cascade/llumnix_global.h"

#include <cmath>

#include "engine/simulator.h"
#include "policy/cascade/cascade_global.h"

namespace sl {

void LlumnixGlobal::attach(Simulator& sim) {
  GlobalPolicy::attach(sim);
  timer_ = sim.startTimer("llumnix-balance", secondsToNs(cfg_.intervalS));
}

double LlumnixGlobal::usage(int i) const {
  const Instance& in = sim_->instance(i);
  return in.config().gpuBlocks > 0 ? static_cast<double>(in.kvFootprintBlocks() + in.gpuBlocksReserved()) /
                                         static_cast<double>(in.config().gpuBlocks)
                                   : 0.0;
}

int LlumnixGlobal::route(const Request&) {
  int best = 0;
  for (int i = 1; i < sim_->numInstances(); ++i)
    if (sim_->instance(i).freeGpuBlocks() > sim_->instance(best).freeGpuBlocks()) best = i;
  return best;
}

bool LlumnixGlobal::balanceNow() {
  const int n = sim_->numInstances();
  if (n < 2) return false;
  int hi = 0, lo = 0;
  for (int i = 1; i < n; ++i) {
    if (usage(i) > usage(hi)) hi = i;
    if (usage(i) < usage(lo)) lo = i;
  }
  const double gap = usage(hi) - usage(lo);
  if (hi == lo || gap <= cfg_.gapThreshold) return false;
  // The movable request on `hi` with the least KV (quickest to copy) whose move narrows the gap.
  const Request* pick = nullptr;
  sim_->forEachActive([&](const Request& r) {
    if (r.instance != hi || !CascadeGlobal::movable(r)) return;
    if (!pick || r.kvTokens < pick->kvTokens || (r.kvTokens == pick->kvTokens && r.id < pick->id)) pick = &r;
  });
  if (!pick) return false;
  const double cap = static_cast<double>(sim_->instance(hi).config().gpuBlocks);
  const double moved = static_cast<double>(pick->blocksGpu + pick->blocksCpu) / cap;
  if (std::abs(gap - 2 * moved) >= gap) return false;
  if (!sim_->migrateLive(const_cast<Request&>(*pick), lo)) return false;
  ++started_;
  return true;
}

void LlumnixGlobal::onTimer(int timer) {
  if (timer == timer_) balanceNow();
}

bool LlumnixGlobal::setKnob(const std::string& name, double value) {
  if (name == "gap_threshold") cfg_.gapThreshold = value;
  else return false;
  return true;
}

void LlumnixGlobal::publishCluster(std::vector<PolicyField>& out) const {
  out.push_back({"migrations", static_cast<double>(started_), "migrations", "live migrations started by the balancer"});
}

void LlumnixGlobal::report(std::vector<PolicyReportEntry>& out) const {
  out.push_back({"migrations_started", static_cast<double>(started_)});
}

}  // namespace sl
