#pragma once
// Routing-only global policies usable with any local part (30-schedulers.md):
// round-robin, least-loaded (fewest assigned tokens), least-KV (smallest
// GPU + CPU KV footprint), random (seeded), power-of-two-choices. Ties go to
// the lowest instance index, so routing is deterministic. With prefix
// caching (docs/engine.md "Prefix caching"): prefix-aware (the cached
// share of the prompt on each instance against its load, weighted by
// policy.prefix_weight) and session-affinity (a session's requests stay
// where its first went, placed least-loaded).
#include <cstdint>
#include <map>
#include <string>

#include "engine/policy_api.h"

namespace sl {

enum class RouterKind { RoundRobin, LeastLoaded, LeastKv, Random, PowerOfTwo, PrefixAware, SessionAffinity };

class RouterPolicy : public GlobalPolicy {
public:
  explicit RouterPolicy(RouterKind kind, double prefixWeight = 1.0) : kind_(kind), prefixWeight_(prefixWeight) {}
  const char* name() const override;
  int route(const Request& r) override;
  /// Routing reads instance counters only (assigned tokens, KV footprint);
  /// a subclass may do more, so only this class itself says so.
  bool progressBlind() const override;

private:
  std::int64_t load(int i) const;
  int leastLoaded() const;
  int prefixAware(const Request& r) const;
  int sessionAffinity(const Request& r);
  RouterKind kind_;
  double prefixWeight_ = 1.0;
  int next_ = 0;
  std::map<std::uint64_t, int> sessions_;  // session key -> instance (session-affinity)
};

/// Parse a router id; throws InputError naming `policy.router` with a hint.
RouterKind parseRouter(const std::string& id);
const char* routerId(RouterKind k);

}  // namespace sl
