#include "policy/registry.h"

#include <cmath>
#include <stdexcept>

#include "cost/pricing.h"
#include "policy/families.h"
#include "policy/routers.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {

void PolicyRegistry::add(PolicyInfo info) {
  if (!info.make) throw std::logic_error("policy '" + info.id + "' registered without a factory");
  for (const PolicyInfo& p : policies_)
    if (p.id == info.id) throw std::logic_error("policy '" + info.id + "' registered twice");
  policies_.push_back(std::move(info));
}

const std::vector<PolicyInfo>& policyCatalog() {
  static const std::vector<PolicyInfo> catalog = [] {
    PolicyRegistry reg;
    registerAllPolicyFamilies(reg);
    return reg.all();
  }();
  return catalog;
}

const PolicyInfo& policyInfo(const std::string& id) {
  std::vector<std::string> ids;
  for (const PolicyInfo& p : policyCatalog()) {
    if (p.id == id) return p;
    ids.push_back(p.id);
  }
  std::string msg = "policy.id: unknown policy '" + id + "'";
  if (auto s = didYouMean(id, ids)) msg += " (did you mean '" + *s + "'?)";
  msg += "; see `servelab-cli presets policies`";
  throw InputError(msg);
}

Knobs::Knobs(const PolicyInfo& info, const nlohmann::json& given) {
  std::vector<std::string> names;
  for (const KnobSpec& k : info.knobs) names.push_back(k.name);
  if (!given.is_null() && !given.is_object()) throw InputError("policy.knobs: expected an object");
  if (given.is_object()) {
    for (auto it = given.begin(); it != given.end(); ++it) {
      bool known = false;
      for (const KnobSpec& k : info.knobs) known |= k.name == it.key();
      if (!known) {
        std::string msg = "policy.knobs." + it.key() + ": unknown knob for policy '" + info.id + "'";
        if (auto s = didYouMean(it.key(), names)) msg += " (did you mean '" + *s + "'?)";
        if (names.empty()) msg += "; it has no knobs";
        throw InputError(msg);
      }
    }
  }
  for (const KnobSpec& k : info.knobs) {
    double v = k.def;
    if (given.is_object() && given.contains(k.name)) {
      const auto& j = given.at(k.name);
      if (!j.is_number()) throw InputError("policy.knobs." + k.name + ": expected a number");
      v = j.get<double>();
      if (!std::isfinite(v) || v < k.min || v > k.max)
        throw InputError("policy.knobs." + k.name + ": must be in [" + formatDouble(k.min) + ", " +
                         formatDouble(k.max) + "] " + k.unit + " (got " + formatDouble(v) + ")");
      if (k.integer && v != std::floor(v))
        throw InputError("policy.knobs." + k.name + ": must be an integer (got " + formatDouble(v) + ")");
    }
    values_.emplace_back(k.name, v);
  }
}

double Knobs::get(const std::string& name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  throw std::logic_error("knob not declared: " + name);
}

namespace {

// size-bucket: each pool's price per instance-hour (its GPUs x the pool's,
// the cluster's or the GPU's list price), checked before anything runs.
std::vector<double> sizeBucketPrices(const Scenario& s) {
  const ClusterSpec& c = s.cluster;
  if (c.pools.size() < 2)
    throw InputError("policy.router: size-bucket routes between mixed pools; give cluster.pools two or more pools");
  std::vector<double> usd;
  for (std::size_t i = 0; i < c.pools.size(); ++i) {
    const PoolSpec& p = c.pools[i];
    double perGpu = 0;
    if (const auto set = p.price_usd_per_gpu_hour ? p.price_usd_per_gpu_hour : c.price_usd_per_gpu_hour)
      perGpu = *set;
    else if (const GpuPrice* g = gpuPrice(p.gpu))
      perGpu = g->usdPerGpuHour;
    else
      throw InputError("cluster.pools[" + std::to_string(i) +
                       "].price_usd_per_gpu_hour: the size-bucket router needs " + "a price for '" + p.gpu +
                       "' (no list price known)");
    usd.push_back(perGpu * p.tp);
  }
  return usd;
}

PolicyBundle buildPolicy(const PolicySpec& spec, const Scenario* scenario) {
  const PolicyInfo& info = policyInfo(spec.id);
  const Knobs knobs(info, spec.knobs);
  PolicyBundle b;
  // The router first, so a bad policy.router is reported before anything is built.
  std::unique_ptr<GlobalPolicy> router;
  if (info.usesRouter) {
    auto rp = std::make_unique<RouterPolicy>(parseRouter(spec.router), spec.prefix_weight);
    if (scenario && parseRouter(spec.router) == RouterKind::SizeBucket) rp->setPoolPrices(sizeBucketPrices(*scenario));
    router = std::move(rp);
  }
  b = info.make(PolicyContext{spec, knobs, scenario});
  if (info.usesRouter && !b.global) b.global = std::move(router);
  return b;
}

}  // namespace

PolicyBundle makePolicy(const PolicySpec& spec) { return buildPolicy(spec, nullptr); }

PolicyBundle makePolicy(const Scenario& scenario) { return buildPolicy(scenario.policy, &scenario); }

void applyLiveKnob(Simulator& sim, const std::string& policyId, const std::string& knob, double value) {
  const PolicyInfo& info = policyInfo(policyId);
  const KnobSpec* spec = nullptr;
  std::vector<std::string> names;
  for (const KnobSpec& k : info.knobs) {
    names.push_back(k.name);
    if (k.name == knob) spec = &k;
  }
  const std::string where = "policy.knobs." + knob;
  if (!spec) {
    const auto hint = didYouMean(knob, names);
    throw InputError(where + ": policy '" + policyId + "' has no such knob" +
                     (hint ? " (did you mean '" + *hint + "'?)" : std::string()));
  }
  if (!spec->liveSafe) throw InputError(where + ": cannot change while a run is going (restart the run)");
  if (!std::isfinite(value) || value < spec->min || value > spec->max)
    throw InputError(where + ": must be in [" + formatDouble(spec->min) + ", " + formatDouble(spec->max) + "] " +
                     spec->unit + " (got " + formatDouble(value) + ")");
  if (spec->integer && value != std::floor(value))
    throw InputError(where + ": must be an integer (got " + formatDouble(value) + ")");
  if (!sim.setPolicyKnob(knob, value))
    throw InputError(where + ": not taken by the running policy");  // a knob the catalog lists but no part reads
}

}  // namespace sl
