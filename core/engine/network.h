#pragma once
// Inter-instance KV transfers as flows over shared resources (NVLink ports,
// host links, node NICs). Concurrent flows share each resource max-min fairly;
// rates and finish times are recomputed whenever the set of flows changes
// (10-engine.md "Migration between instances").
#include <cstdint>
#include <vector>

#include "util/time.h"

namespace sl {

struct Flow {
  std::int64_t id = -1;
  double bytesLeft = 0;
  double bytesTotal = 0;
  double rate = 0;            // bytes/s currently granted
  int res[2] = {-1, -1};      // resources used (egress, ingress)
  SimTime started = 0;        // when bytes began to move
  SimTime finishAt = kTimeNever;
  std::int64_t tag = -1;      // owner's handle (migration id)
};

class Network {
public:
  /// Add a resource with `bytesPerSec` capacity; returns its index.
  int addResource(double bytesPerSec);
  int resourceCount() const { return static_cast<int>(capacity_.size()); }

  /// Start a flow now (latency already elapsed). Returns the flow id.
  std::int64_t start(SimTime now, double bytes, int resA, int resB, std::int64_t tag);
  /// Drop a flow (cancelled transfer).
  void cancel(SimTime now, std::int64_t id);
  /// Earliest finish time over active flows (kTimeNever if none).
  SimTime nextFinish() const;
  /// Remove and return the tags of flows finished by `now`; re-shares bandwidth.
  void collectFinished(SimTime now, std::vector<std::int64_t>& tags);

  const std::vector<Flow>& flows() const { return flows_; }
  /// Fraction of bytes moved for flow `id` at `now` (0..1), -1 if unknown.
  double progress(std::int64_t id, SimTime now) const;
  /// Version increments on every change, to invalidate stale wake-up events.
  std::uint64_t version() const { return version_; }

private:
  void advance(SimTime now);
  void reshare(SimTime now);

  std::vector<double> capacity_;
  std::vector<Flow> flows_;
  std::vector<int> scratchCount_;
  std::vector<double> scratchCap_;
  std::vector<char> scratchFrozen_;
  SimTime lastUpdate_ = 0;
  std::int64_t nextId_ = 0;
  std::uint64_t version_ = 0;
};

}  // namespace sl
