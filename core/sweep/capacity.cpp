#include "sweep/capacity.h"

#include <algorithm>
#include <cmath>

#include "run/execute.h"
#include "run/run.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl::sweep {
namespace {

std::string g(double v) { return formatDouble(v); }

// Rounds a bisection midpoint to 6 significant digits so that reports (and
// sweep rows) show short, reproducible numbers.
double round6(double v) { return *parseDouble(formatDouble(v, 6)); }

CapacityProbe probe(const Scenario& s, double x, double target, const std::string& label) {
  CapacityProbe p;
  p.x = x;
  p.attainment = sloAttainment(s, label);
  p.ok = p.attainment >= target;
  return p;
}

}  // namespace

void validateCapacityOptions(const CapacityOptions& o, const std::string& where) {
  auto bad = [&](const std::string& k, const std::string& rule, double v) {
    throw InputError(where + "." + k + ": must be " + rule + " (got " + g(v) + ")");
  };
  if (!(o.target > 0 && o.target <= 1)) bad("target", "in (0, 1]", o.target);
  if (!(o.rateMin > 0)) bad("rate_min", "> 0", o.rateMin);
  if (!(o.rateMax > o.rateMin)) bad("rate_max", "> rate_min", o.rateMax);
  if (!(o.tolerance > 0 && o.tolerance < 1)) bad("tolerance", "in (0, 1)", o.tolerance);
  if (o.maxInstances < 1 || o.maxInstances > 4096) bad("max_instances", "in 1 .. 4096", o.maxInstances);
}

CapacityOptions parseCapacityOptions(const nlohmann::json& j, const std::string& where) {
  CapacityOptions o;
  if (j.is_null()) return o;
  if (!j.is_object()) throw InputError(where + ": expected an object, got " + j.type_name());
  const std::vector<std::string> keys = {"target", "rate_min", "rate_max", "tolerance", "max_instances"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      std::string msg = where + ": unknown field '" + it.key() + "'";
      if (auto s = didYouMean(it.key(), keys)) msg += " (did you mean '" + *s + "'?)";
      throw InputError(msg);
    }
    if (!it.value().is_number())
      throw InputError(where + "." + it.key() + ": expected a number, got " + it.value().type_name());
  }
  if (j.contains("target")) o.target = j["target"].get<double>();
  if (j.contains("rate_min")) o.rateMin = j["rate_min"].get<double>();
  if (j.contains("rate_max")) o.rateMax = j["rate_max"].get<double>();
  if (j.contains("tolerance")) o.tolerance = j["tolerance"].get<double>();
  if (j.contains("max_instances")) {
    const double v = j["max_instances"].get<double>();
    if (v != std::floor(v)) throw InputError(where + ".max_instances: expected an integer (got " + g(v) + ")");
    o.maxInstances = static_cast<int>(std::clamp(v, -1.0, 1e6));
  }
  validateCapacityOptions(o, where);
  return o;
}

nlohmann::ordered_json capacityOptionsJson(const CapacityOptions& o) {
  return {{"target", o.target}, {"rate_min", o.rateMin}, {"rate_max", o.rateMax}, {"tolerance", o.tolerance},
          {"max_instances", o.maxInstances}};
}

double sloAttainment(const Scenario& s, const std::string& label) {
  auto prepared = prepareRun(s, label);
  const RunResult r = executeRun(*prepared, RunOptions{});
  if (r.summary.arrived <= 0) return 0;
  return static_cast<double>(r.summary.slo_met) / static_cast<double>(r.summary.arrived);
}

RateCapacity maxSustainableRate(const Scenario& base, const CapacityOptions& o, const std::string& label) {
  validateCapacityOptions(o, "capacity");
  RateCapacity out;
  if (base.workload.arrival.process == ArrivalSpec::Process::Closed)
    throw InputError(label + ": capacity search varies an arrival rate or a trace's time_scale; a closed loop "
                             "(workload.arrival.process 'closed') has neither: sweep workload.arrival.concurrency");
  out.traceScale = base.workload.trace.has_value();
  if (!out.traceScale && base.workload.arrival.process == ArrivalSpec::Process::Schedule)
    throw InputError(label + ": capacity search needs workload.arrival.rate (process poisson or gamma) or a "
                             "workload.trace to scale; a rate schedule has no single rate");
  // Load x in req/s for synthetic arrivals; for a trace, x = 1 / time_scale
  // (higher is more load), so the same bisection applies.
  auto scenarioAt = [&](double x) {
    Scenario s = base;
    if (out.traceScale) s.workload.trace->time_scale = round6(1.0 / x);
    else s.workload.arrival.rate = x;
    return s;
  };
  auto run = [&](double x) {
    const Scenario s = scenarioAt(x);
    const double shown = out.traceScale ? s.workload.trace->time_scale : x;
    CapacityProbe p = probe(s, shown, o.target, label + (out.traceScale ? " @ time_scale " : " @ rate ") + g(shown));
    out.probes.push_back(p);
    return p.ok;
  };
  auto record = [&](double x) {
    if (out.traceScale) out.minTimeScale = round6(1.0 / x);
    else out.maxRate = x;
  };
  double lo = o.rateMin, hi = o.rateMax;
  if (run(hi)) {
    record(hi);
    out.atBracketEdge = true;
    return out;
  }
  if (!run(lo)) return out;  // not even the lowest load meets the target
  // Invariant: lo meets the target, hi does not. Bisect in log space.
  while (hi / lo > 1 + o.tolerance) {
    const double mid = round6(std::sqrt(lo * hi));
    if (mid <= lo || mid >= hi) break;
    if (run(mid)) lo = mid;
    else hi = mid;
  }
  record(lo);
  return out;
}

InstanceCapacity minInstances(const Scenario& base, std::optional<double> rate, const CapacityOptions& o,
                              const std::string& label) {
  validateCapacityOptions(o, "capacity");
  InstanceCapacity out;
  auto run = [&](int n) {
    Scenario s = base;
    s.cluster.instances = n;
    if (rate && !s.workload.trace) s.workload.arrival.rate = *rate;
    CapacityProbe p = probe(s, n, o.target, label + " @ " + std::to_string(n) + " instances");
    out.probes.push_back(p);
    return p.ok;
  };
  // Invariant: lo fails (0 instances trivially), hi meets the target.
  int lo = 0, hi = o.maxInstances;
  if (!run(hi)) return out;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (run(mid)) hi = mid;
    else lo = mid;
  }
  out.minInstances = hi;
  return out;
}

namespace {
nlohmann::ordered_json probesJson(const std::vector<CapacityProbe>& ps) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const CapacityProbe& p : ps) a.push_back({{"x", p.x}, {"attainment", p.attainment}, {"ok", p.ok}});
  return a;
}
template <class T>
nlohmann::ordered_json opt(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}
}  // namespace

nlohmann::ordered_json rateCapacityJson(const RateCapacity& r) {
  nlohmann::ordered_json j;
  j["search"] = r.traceScale ? "time_scale" : "rate";
  if (r.traceScale) j["min_time_scale"] = opt(r.minTimeScale);
  else j["max_rate"] = opt(r.maxRate);
  j["at_bracket_edge"] = r.atBracketEdge;
  j["probes"] = probesJson(r.probes);
  return j;
}

nlohmann::ordered_json instanceCapacityJson(const InstanceCapacity& r) {
  nlohmann::ordered_json j;
  j["min_instances"] = opt(r.minInstances);
  j["probes"] = probesJson(r.probes);
  return j;
}

}  // namespace sl::sweep
