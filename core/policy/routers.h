#pragma once
// Routing-only global policies usable with any local part (30-schedulers.md):
// round-robin, least-loaded (fewest assigned tokens), least-KV (smallest
// GPU + CPU KV footprint), random (seeded), power-of-two-choices. Ties go to
// the lowest instance index, so routing is deterministic.
#include <cstdint>
#include <string>

#include "engine/policy_api.h"

namespace sl {

enum class RouterKind { RoundRobin, LeastLoaded, LeastKv, Random, PowerOfTwo };

class RouterPolicy : public GlobalPolicy {
public:
  explicit RouterPolicy(RouterKind kind) : kind_(kind) {}
  const char* name() const override;
  int route(const Request& r) override;
  /// Routing reads instance counters only (assigned tokens, KV footprint);
  /// a subclass may do more, so only this class itself says so.
  bool progressBlind() const override;

private:
  std::int64_t load(int i) const;
  RouterKind kind_;
  int next_ = 0;
};

/// Parse a router id; throws InputError naming `policy.router` with a hint.
RouterKind parseRouter(const std::string& id);
const char* routerId(RouterKind k);

}  // namespace sl
