#include "policy/routers.h"

#include <algorithm>
#include <typeinfo>
#include <vector>

#include "cost/cost_model.h"
#include "engine/simulator.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {
namespace {
const std::vector<std::string>& routerIds() {
  static const std::vector<std::string> ids = {"round-robin", "least-loaded",  "least-kv",        "random",
                                               "power-of-two", "prefix-aware", "session-affinity"};
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
  msg += "; known: round-robin, least-loaded, least-kv, random, power-of-two, prefix-aware, session-affinity";
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

}  // namespace sl
