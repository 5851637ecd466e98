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
//
// size-bucket (mixed pools only; docs/policies/baselines.md "Routers"): Mélange's
// allocation as a router. Requests fall into (input length × output length)
// buckets (powers of two from 16); for each bucket and pool the cost model
// gives the most requests/s one instance serves within the TPOT SLO, and so
// the pool's cost per request at its price; each bucket goes to its cheapest
// pool, and a greedy by cost ratio moves load off any pool the estimated
// per-bucket arrival rates would overfill. Within the pool: least-loaded.
// It reads the request's true output length (an oracle, as Mélange's
// offline histogram).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/policy_api.h"
#include "util/time.h"

namespace sl {

class CostModel;

enum class RouterKind {
  RoundRobin,
  LeastLoaded,
  LeastKv,
  Random,
  PowerOfTwo,
  PrefixAware,
  SessionAffinity,
  SizeBucket
};

/// One size bucket on one pool type: the most requests/s one instance serves
/// within the TPOT SLO (at batch `batch`), or, when even one request misses
/// it (`meetsSlo` false), its requests/s alone.
struct BucketPerf {
  double rps = 0;
  int batch = 0;
  bool meetsSlo = false;
};

/// Steady state with `batch` requests of `input` prompt and `output` tokens
/// decoding together, each slot refilled once per lifetime: the time per
/// output token is one step of `batch` decodes at the mean context
/// (input + output / 2) plus batch x input / output prompt tokens (the
/// prompts of the requests that replace them, batched with the decodes);
/// the largest batch with that within `tpotS` and batch x (input + output)
/// within `kvTokens` (at most `maxSeqs`) gives batch / (output x that time).
BucketPerf bucketThroughput(const CostModel& cost, double input, double output, double tpotS, double kvTokens,
                            int maxSeqs);

/// The bucket of a request: input and output lengths each in powers of two
/// from 16 (<16, 16-31, ..., >= 16384): 12 x 12 buckets, index in x 12 + out.
int sizeBucket(int input, int output);
constexpr int kSizeBucketsPerSide = 12;
/// A bucket's representative lengths: the geometric mean of its bounds.
std::pair<double, double> sizeBucketLengths(int bucket);

/// Mélange's allocation by greedy (its ILP's capacity constraint, not its
/// integer pool sizing: the pools are given). rate[b]: arrivals/s of bucket
/// b; perf[b][p]; instances[p]; usdPerInstanceHour[p]. Each bucket starts on
/// the pool with the lowest cost per request (price / rps, a pool missing the
/// SLO counting 1e6 x dearer); while a pool's utilisation Σ rate x share /
/// (instances x rps) exceeds 1, the load whose move costs least (cost ratio
/// of the new pool over the old) moves to a pool below 1, as much as fits.
/// share[b][p] sums to 1 over p.
struct BucketAssignment {
  std::vector<std::vector<double>> share;
  std::vector<double> utilization;
};
BucketAssignment assignBuckets(const std::vector<double>& rate, const std::vector<std::vector<BucketPerf>>& perf,
                               const std::vector<int>& instances, const std::vector<double>& usdPerInstanceHour);

class RouterPolicy : public GlobalPolicy {
public:
  explicit RouterPolicy(RouterKind kind, double prefixWeight = 1.0) : kind_(kind), prefixWeight_(prefixWeight) {}
  const char* name() const override;
  int route(const Request& r) override;
  /// Routing reads instance counters only (assigned tokens, KV footprint);
  /// a subclass may do more, so only this class itself says so.
  bool progressBlind() const override;
  /// size-bucket: each pool's price per instance-hour (cluster.pools order);
  /// unset: each instance's GPU count (equal GPU prices).
  void setPoolPrices(std::vector<double> usdPerInstanceHour) { poolUsd_ = std::move(usdPerInstanceHour); }

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
  int sizeBucketRoute(const Request& r);
  void prepareBuckets();
  void reassign();
  RouterKind kind_;
  double prefixWeight_ = 1.0;
  int next_ = 0;
  std::map<std::uint64_t, int> sessions_;  // session key -> instance (session-affinity)
  mutable bool weightsReady_ = false;
  mutable std::vector<double> scale_;  // per instance; empty: one pool, plain counts
  // size-bucket state
  std::vector<double> poolUsd_;
  bool bucketsReady_ = false;
  int pools_ = 0;
  std::vector<int> poolInstances_;
  std::vector<int> poolFirst_;                 // an instance of each pool (its cost model and config)
  std::vector<std::vector<BucketPerf>> perf_;  // [bucket][pool], filled on a bucket's first request
  std::vector<bool> perfReady_;
  std::vector<std::int64_t> arrivals_;  // per bucket
  std::int64_t total_ = 0;
  SimTime first_ = 0;
  BucketAssignment assign_;
  std::vector<std::vector<std::int64_t>> sent_;  // [bucket][pool] since the last reassignment
};

/// Parse a router id; throws InputError naming `policy.router` with a hint.
RouterKind parseRouter(const std::string& id);
const char* routerId(RouterKind k);

}  // namespace sl
