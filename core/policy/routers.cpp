#include "policy/routers.h"

#include <algorithm>
#include <cmath>
#include <typeinfo>
#include <vector>

#include "cost/cost_model.h"
#include "engine/simulator.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {
namespace {
const std::vector<std::string>& routerIds() {
  static const std::vector<std::string> ids = {"round-robin",  "least-loaded", "least-kv",         "random",
                                               "power-of-two", "prefix-aware", "session-affinity", "size-bucket"};
  return ids;
}
}  // namespace

const char* routerId(RouterKind k) {
  return routerIds()[static_cast<std::size_t>(k)].c_str();
}

RouterKind parseRouter(const std::string& id) {
  const auto& ids = routerIds();
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id) return static_cast<RouterKind>(i);
  std::string msg = "policy.router: unknown router '" + id + "'";
  if (auto s = didYouMean(id, ids)) msg += " (did you mean '" + *s + "'?)";
  msg +=
      "; known: round-robin, least-loaded, least-kv, random, power-of-two, prefix-aware, session-affinity, size-bucket";
  throw InputError(msg);
}

bool RouterPolicy::progressBlind() const { return typeid(*this) == typeid(RouterPolicy); }

const char* RouterPolicy::name() const { return routerId(kind_); }

std::int64_t RouterPolicy::load(int i) const {
  const Instance& in = sim_->instance(i);
  return kind_ == RouterKind::LeastKv ? in.kvFootprintBlocks() : in.assignedTokens();
}

void RouterPolicy::prepareWeights() const {
  weightsReady_ = true;
  const int n = sim_->numInstances();
  bool mixed = false;
  for (int i = 1; i < n; ++i) mixed = mixed || sim_->poolOf(i) != sim_->poolOf(0);
  if (!mixed) return;  // one pool: the plain counts, today's routing exactly
  scale_.assign(static_cast<std::size_t>(n), 1.0);
  if (kind_ == RouterKind::LeastKv) {
    for (int i = 0; i < n; ++i)
      scale_[static_cast<std::size_t>(i)] =
          1.0 / static_cast<double>(std::max<std::int64_t>(1, sim_->instance(i).config().gpuBlocks));
    return;
  }
  // Speed: the step time of a reference decode batch (32 sequences at 1024
  // tokens of context) on each instance's own GPUs, over the fastest one's.
  BatchShape ref;
  for (int k = 0; k < 32; ++k) addDecodeSeq(ref, 1024);
  std::vector<double> t(static_cast<std::size_t>(n));
  double fastest = 0;
  for (int i = 0; i < n; ++i) {
    t[static_cast<std::size_t>(i)] = sim_->instance(i).cost().iterationSeconds(ref);
    if (i == 0 || t[static_cast<std::size_t>(i)] < fastest) fastest = t[static_cast<std::size_t>(i)];
  }
  for (int i = 0; i < n; ++i) scale_[static_cast<std::size_t>(i)] = t[static_cast<std::size_t>(i)] / fastest;
}

double RouterPolicy::score(int i) const {
  if (!weightsReady_) prepareWeights();
  const double l = static_cast<double>(load(i));
  return scale_.empty() ? l : l * scale_[static_cast<std::size_t>(i)];
}

int RouterPolicy::route(const Request& r) {
  const int n = sim_->numInstances();
  switch (kind_) {
    case RouterKind::RoundRobin: {
      const int i = next_;
      next_ = (next_ + 1) % n;
      return i;
    }
    case RouterKind::Random:
      return static_cast<int>(sim_->rng("router").below(static_cast<std::uint64_t>(n)));
    case RouterKind::PowerOfTwo: {
      Rng& g = sim_->rng("router");
      const int a = static_cast<int>(g.below(static_cast<std::uint64_t>(n)));
      const int b = static_cast<int>(g.below(static_cast<std::uint64_t>(n)));
      return score(b) < score(a) || (score(b) == score(a) && b < a) ? b : a;
    }
    case RouterKind::LeastLoaded:
    case RouterKind::LeastKv: return leastLoaded();
    case RouterKind::PrefixAware: return prefixAware(r);
    case RouterKind::SessionAffinity: return sessionAffinity(r);
    case RouterKind::SizeBucket:
      return sizeBucketRoute(r);
  }
  return 0;
}

int RouterPolicy::leastLoaded() const {
  int best = 0;
  double bestLoad = score(0);
  for (int i = 1; i < sim_->numInstances(); ++i)
    if (const double l = score(i); l < bestLoad) {
      best = i;
      bestLoad = l;
    }
  return best;
}

// score = weight x (cached share of the prompt there) - (assigned tokens
// there / the most any instance has): the cache pulls a request towards
// its prefix, the load pushes it away; weight 0 is least-loaded. Without
// prefix caching every cached share is 0 (least-loaded).
int RouterPolicy::prefixAware(const Request& r) const {
  const int n = sim_->numInstances();
  double most = 0;
  for (int i = 0; i < n; ++i) most = std::max(most, score(i));
  const double bs = sim_->config().instance.blockSize;
  int best = 0;
  double bestScore = 0;
  for (int i = 0; i < n; ++i) {
    const double cached = sim_->cachedPrefixBlocks(r, i) * bs / std::max(1, r.prefillTarget);
    const double busy = most > 0 ? score(i) / most : 0.0;
    const double score = prefixWeight_ * cached - busy;
    if (i == 0 || score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

int RouterPolicy::sessionAffinity(const Request& r) {
  const std::uint64_t key = sim_->sessionKey(r);
  const auto it = sessions_.find(key);
  if (it != sessions_.end()) return it->second;
  const int i = leastLoaded();
  sessions_.emplace(key, i);
  return i;
}

// ---- size-bucket (Mélange's allocation as a router)

int sizeBucket(int input, int output) {
  const auto side = [](int n) {
    int k = 0;
    for (int edge = 16; k < kSizeBucketsPerSide - 1 && n >= edge; edge *= 2) ++k;
    return k;
  };
  return side(input) * kSizeBucketsPerSide + side(output);
}

std::pair<double, double> sizeBucketLengths(int bucket) {
  // [1, 16): 4; [lo, 2 lo): lo x sqrt 2, the last (open-ended) one as a doubling.
  const auto mid = [](int k) { return k == 0 ? 4.0 : 8.0 * std::pow(2.0, k) * std::sqrt(2.0); };
  return {mid(bucket / kSizeBucketsPerSide), mid(bucket % kSizeBucketsPerSide)};
}

BucketPerf bucketThroughput(const CostModel& cost, double input, double output, double tpotS, double kvTokens,
                            int maxSeqs) {
  const double ctx = input + output / 2;
  // Each step carries the decodes and, on average, b x input / output
  // prompt tokens (mixed batching: prompts ride along with the decodes).
  const auto tpot = [&](int b) {
    BatchShape d;
    for (int k = 0; k < b; ++k) addDecodeSeq(d, ctx);
    addPrefillChunk(d, b * input / output);
    return cost.iterationSeconds(d);
  };
  const int kvMax = static_cast<int>(std::min<double>(maxSeqs, std::floor(kvTokens / (input + output))));
  BucketPerf p;
  if (kvMax < 1) {  // one request does not fit: no service
    p.rps = 1e-9;
    return p;
  }
  if (tpot(1) > tpotS) {
    p.batch = 1;
    p.rps = 1 / (output * tpot(1));
    return p;
  }
  int lo = 1, hi = kvMax;  // tpot(lo) within the SLO; it grows with the batch
  while (lo < hi) {
    const int m = lo + (hi - lo + 1) / 2;
    if (tpot(m) <= tpotS)
      lo = m;
    else
      hi = m - 1;
  }
  p.batch = lo;
  p.meetsSlo = true;
  p.rps = lo / (output * tpot(lo));
  return p;
}

BucketAssignment assignBuckets(const std::vector<double>& rate, const std::vector<std::vector<BucketPerf>>& perf,
                               const std::vector<int>& instances, const std::vector<double>& usdPerInstanceHour) {
  const std::size_t nb = rate.size(), np = instances.size();
  const auto cost = [&](std::size_t b, std::size_t p) {
    const BucketPerf& f = perf[b][p];
    return usdPerInstanceHour[p] / f.rps * (f.meetsSlo ? 1.0 : 1e6);
  };
  const auto cap = [&](std::size_t b, std::size_t p) { return instances[p] * perf[b][p].rps; };
  BucketAssignment a;
  a.share.assign(nb, std::vector<double>(np, 0.0));
  a.utilization.assign(np, 0.0);
  for (std::size_t b = 0; b < nb; ++b) {
    std::size_t best = 0;
    for (std::size_t p = 1; p < np; ++p)
      if (cost(b, p) < cost(b, best)) best = p;
    a.share[b][best] = 1;
    if (rate[b] > 0) a.utilization[best] += rate[b] / cap(b, best);  // a bucket not seen yet has no figures
  }
  // Repair: move load off overfull pools, the cheapest move (cost ratio) first.
  for (std::size_t iter = 0; iter < 4 * (nb + 1) * np; ++iter) {
    std::size_t p = 0;
    for (std::size_t q = 1; q < np; ++q)
      if (a.utilization[q] > a.utilization[p]) p = q;
    if (a.utilization[p] <= 1 + 1e-12) break;
    double bestRatio = 0;
    std::size_t mb = nb, mq = np;
    for (std::size_t b = 0; b < nb; ++b) {
      if (a.share[b][p] <= 0 || rate[b] <= 0) continue;
      for (std::size_t q = 0; q < np; ++q) {
        if (q == p || a.utilization[q] >= 1 - 1e-12) continue;
        const double ratio = cost(b, q) / cost(b, p);
        if (mb == nb || ratio < bestRatio) {
          bestRatio = ratio;
          mb = b;
          mq = q;
        }
      }
    }
    if (mb == nb) break;  // every other pool full: overloaded whatever the split
    const double move = std::min(
        {a.share[mb][p] * rate[mb], (a.utilization[p] - 1) * cap(mb, p), (1 - a.utilization[mq]) * cap(mb, mq)});
    a.share[mb][p] -= move / rate[mb];
    a.share[mb][mq] += move / rate[mb];
    a.utilization[p] -= move / cap(mb, p);
    a.utilization[mq] += move / cap(mb, mq);
  }
  return a;
}

void RouterPolicy::prepareBuckets() {
  bucketsReady_ = true;
  const int n = sim_->numInstances();
  for (int i = 0; i < n; ++i) pools_ = std::max(pools_, sim_->poolOf(i) + 1);
  if (pools_ < 2)
    throw InputError("policy.router: size-bucket routes between mixed pools; give cluster.pools two or more pools");
  poolInstances_.assign(static_cast<std::size_t>(pools_), 0);
  poolFirst_.assign(static_cast<std::size_t>(pools_), -1);
  for (int i = 0; i < n; ++i) {
    const auto p = static_cast<std::size_t>(sim_->poolOf(i));
    ++poolInstances_[p];
    if (poolFirst_[p] < 0) poolFirst_[p] = i;
  }
  if (poolUsd_.size() != static_cast<std::size_t>(pools_)) {
    poolUsd_.assign(static_cast<std::size_t>(pools_), 1.0);
    for (int p = 0; p < pools_; ++p) {
      const auto& pc = sim_->config().pools;
      poolUsd_[static_cast<std::size_t>(p)] =
          pc.size() > static_cast<std::size_t>(p) ? pc[static_cast<std::size_t>(p)].tp : 1;
    }
  }
  constexpr int nb = kSizeBucketsPerSide * kSizeBucketsPerSide;
  perf_.assign(nb, std::vector<BucketPerf>(static_cast<std::size_t>(pools_)));
  perfReady_.assign(nb, false);
  arrivals_.assign(nb, 0);
  sent_.assign(nb, std::vector<std::int64_t>(static_cast<std::size_t>(pools_), 0));
}

void RouterPolicy::reassign() {
  const double spanS = nsToSeconds(sim_->now() - first_);
  std::vector<double> rate(arrivals_.size(), 0.0);
  // Arrivals per second so far; before a span exists, no load (each bucket
  // to its cheapest pool).
  for (std::size_t b = 0; b < rate.size(); ++b)
    rate[b] = spanS > 0 && total_ >= 2 ? static_cast<double>(arrivals_[b]) / spanS : 0.0;
  assign_ = assignBuckets(rate, perf_, poolInstances_, poolUsd_);
  for (auto& v : sent_) std::fill(v.begin(), v.end(), 0);
}

int RouterPolicy::sizeBucketRoute(const Request& r) {
  if (!bucketsReady_) prepareBuckets();
  const int b = sizeBucket(r.input, r.outputLen());
  const auto bi = static_cast<std::size_t>(b);
  const bool fresh = !perfReady_[bi];
  if (fresh) {
    perfReady_[bi] = true;
    const auto [in, out] = sizeBucketLengths(b);
    const SloSpec& slo = sim_->config().slo;
    const double tpot = slo.tpot_s ? *slo.tpot_s : slo.qoe_tpot_s;
    for (int p = 0; p < pools_; ++p) {
      const Instance& inst = sim_->instance(poolFirst_[static_cast<std::size_t>(p)]);
      const InstanceConfig& c = inst.config();
      perf_[bi][static_cast<std::size_t>(p)] =
          bucketThroughput(inst.cost(), in, out, tpot, static_cast<double>(c.gpuBlocks) * c.blockSize, c.maxNumSeqs);
    }
  }
  if (total_ == 0) first_ = sim_->now();
  ++arrivals_[bi];
  ++total_;
  // The load estimate settles as arrivals come: reassign on each of the
  // first 64 arrivals, then every 32, and on a bucket's first request.
  if (fresh || total_ <= 64 || total_ % 32 == 0) reassign();
  // The pool furthest behind its share of this bucket's requests.
  const auto& share = assign_.share[bi];
  auto& sent = sent_[bi];
  std::int64_t all = 0;
  for (auto s : sent) all += s;
  int pool = 0;
  double most = -1e300;
  for (int p = 0; p < pools_; ++p) {
    const auto pi = static_cast<std::size_t>(p);
    if (share[pi] <= 0) continue;
    const double deficit = share[pi] * static_cast<double>(all + 1) - static_cast<double>(sent[pi]);
    if (deficit > most) {
      most = deficit;
      pool = p;
    }
  }
  ++sent[static_cast<std::size_t>(pool)];
  int best = -1;
  double bestLoad = 0;
  for (int i = 0; i < sim_->numInstances(); ++i) {
    if (sim_->poolOf(i) != pool) continue;
    const double l = score(i);
    if (best < 0 || l < bestLoad) {
      best = i;
      bestLoad = l;
    }
  }
  return best;
}

}  // namespace sl
