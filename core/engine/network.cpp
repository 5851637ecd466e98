#include "engine/network.h"

#include <algorithm>
#include <cmath>

namespace sl {

int Network::addResource(double bytesPerSec) {
  capacity_.push_back(bytesPerSec);
  return static_cast<int>(capacity_.size()) - 1;
}

void Network::advance(SimTime now) {
  if (now <= lastUpdate_) return;
  const double dt = nsToSeconds(now - lastUpdate_);
  for (Flow& f : flows_) f.bytesLeft = std::max(0.0, f.bytesLeft - f.rate * dt);
  lastUpdate_ = now;
}

// Max-min fair shares by progressive filling: repeatedly find the resource
// with the smallest equal share among its unfrozen flows, freeze those flows
// at that share, and charge them to their other resource.
void Network::reshare(SimTime now) {
  ++version_;
  const std::size_t nres = capacity_.size();
  scratchCap_.assign(capacity_.begin(), capacity_.end());
  scratchFrozen_.assign(flows_.size(), 0);
  std::size_t left = flows_.size();
  while (left > 0) {
    scratchCount_.assign(nres, 0);
    for (std::size_t i = 0; i < flows_.size(); ++i)
      if (!scratchFrozen_[i])
        for (int r : flows_[i].res)
          if (r >= 0) ++scratchCount_[static_cast<std::size_t>(r)];
    int best = -1;
    double bestShare = 0;
    for (std::size_t r = 0; r < nres; ++r) {
      if (scratchCount_[r] == 0) continue;
      const double share = std::max(0.0, scratchCap_[r]) / scratchCount_[r];
      if (best < 0 || share < bestShare) best = static_cast<int>(r), bestShare = share;
    }
    if (best < 0) break;  // remaining flows use no resource (cannot happen)
    for (std::size_t i = 0; i < flows_.size(); ++i) {
      Flow& f = flows_[i];
      if (scratchFrozen_[i] || (f.res[0] != best && f.res[1] != best)) continue;
      f.rate = bestShare;
      scratchFrozen_[i] = 1;
      --left;
      for (int r : f.res)
        if (r >= 0) scratchCap_[static_cast<std::size_t>(r)] -= bestShare;
    }
  }
  for (Flow& f : flows_) {
    if (f.bytesLeft <= 0) {
      f.finishAt = now;
    } else if (f.rate <= 0) {
      f.finishAt = kTimeNever;
    } else {
      f.finishAt = now + static_cast<SimTime>(std::ceil(f.bytesLeft / f.rate * 1e9));
    }
  }
}

std::int64_t Network::start(SimTime now, double bytes, int resA, int resB, std::int64_t tag) {
  advance(now);
  Flow f;
  f.id = nextId_++;
  f.bytesLeft = f.bytesTotal = std::max(0.0, bytes);
  f.res[0] = resA;
  f.res[1] = resB;
  f.started = now;
  f.tag = tag;
  flows_.push_back(f);
  reshare(now);
  return f.id;
}

void Network::cancel(SimTime now, std::int64_t id) {
  advance(now);
  std::erase_if(flows_, [id](const Flow& f) { return f.id == id; });
  reshare(now);
}

SimTime Network::nextFinish() const {
  SimTime t = kTimeNever;
  for (const Flow& f : flows_) t = std::min(t, f.finishAt);
  return t;
}

void Network::collectFinished(SimTime now, std::vector<std::int64_t>& tags) {
  advance(now);
  bool any = false;
  // Keep flow order stable (ids ascending) so completions are deterministic.
  for (const Flow& f : flows_)
    if (f.finishAt <= now) tags.push_back(f.tag), any = true;
  if (!any) return;
  std::erase_if(flows_, [now](const Flow& f) { return f.finishAt <= now; });
  reshare(now);
}

double Network::progress(std::int64_t id, SimTime now) const {
  for (const Flow& f : flows_) {
    if (f.id != id) continue;
    if (f.bytesTotal <= 0) return 1.0;
    const double moved = f.bytesTotal - std::max(0.0, f.bytesLeft - f.rate * nsToSeconds(now - lastUpdate_));
    return std::clamp(moved / f.bytesTotal, 0.0, 1.0);
  }
  return -1.0;
}

}  // namespace sl
