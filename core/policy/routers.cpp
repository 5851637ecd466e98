#include "policy/routers.h"

#include <typeinfo>
#include <vector>

#include "engine/simulator.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {
namespace {
const std::vector<std::string>& routerIds() {
  static const std::vector<std::string> ids = {"round-robin", "least-loaded", "least-kv", "random", "power-of-two"};
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
  msg += "; known: round-robin, least-loaded, least-kv, random, power-of-two";
  throw InputError(msg);
}

bool RouterPolicy::progressBlind() const { return typeid(*this) == typeid(RouterPolicy); }

const char* RouterPolicy::name() const { return routerId(kind_); }

std::int64_t RouterPolicy::load(int i) const {
  const Instance& in = sim_->instance(i);
  return kind_ == RouterKind::LeastKv ? in.kvFootprintBlocks() : in.assignedTokens();
}

int RouterPolicy::route(const Request&) {
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
      return load(b) < load(a) || (load(b) == load(a) && b < a) ? b : a;
    }
    case RouterKind::LeastLoaded:
    case RouterKind::LeastKv: {
      int best = 0;
      std::int64_t bestLoad = load(0);
      for (int i = 1; i < n; ++i)
        if (const std::int64_t l = load(i); l < bestLoad) {
          best = i;
          bestLoad = l;
        }
      return best;
    }
  }
  return 0;
}

}  // namespace sl
