#pragma once
// Routing-only global policies usable with any local part (30-schedulers.md):
// round-robin, least-loaded (fewest assigned tokens), least-KV (smallest
// GPU + CPU KV footprint), random (seeded), power-of-two-choices. Ties go to
// the lowest instance index, so routing is deterministic. With prefix
// caching (docs/engine.md "Prefix caching"): prefix-aware (the cached
// share of the prompt on each instance against its load, weighted by
// policy.prefix_weight) and session-affinity (a session's requests stay
// where its first went, placed least-loaded). On mixed pools (cluster.pools)
// the load-reading routers weigh each instance by its pool: assigned tokens
// by how slow its GPU steps a reference decode batch, the KV footprint as a
// share of its own memory.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
  /// load(i) weighed by instance i's pool (mixed pools only; else the count
  /// itself): assigned tokens × its reference step time over the fastest
  /// pool's, or its KV footprint as a share of its own memory (least-kv).
  double score(int i) const;
  void prepareWeights() const;
  int leastLoaded() const;
  int prefixAware(const Request& r) const;
  int sessionAffinity(const Request& r);
  RouterKind kind_;
  double prefixWeight_ = 1.0;
  int next_ = 0;
  std::map<std::uint64_t, int> sessions_;  // session key -> instance (session-affinity)
  mutable bool weightsReady_ = false;
  mutable std::vector<double> scale_;  // per instance; empty: one pool, plain counts
};

/// Parse a router id; throws InputError naming `policy.router` with a hint.
RouterKind parseRouter(const std::string& id);
const char* routerId(RouterKind k);

}  // namespace sl
