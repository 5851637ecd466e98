#pragma once
// Capacity planner (docs/sweeps.md "Capacity"): for a scenario and an SLO,
//  - the highest sustainable load: the largest arrival rate (Poisson/Gamma
//    `workload.arrival.rate`) or, for trace replay, the smallest trace
//    `time_scale` at which SLO attainment stays >= a target;
//  - the fewest instances (`cluster.instances`) that meet the target at a
//    given rate.
// Attainment here is slo_met / arrived (requests that never finished count
// as misses). Both searches assume attainment falls as load rises (and rises
// with instances) and bisect; every probe is a full deterministic simulation,
// so the answer is deterministic too. Used by `servelab-cli capacity` and as
// the sweep metrics capacity.max_rate / capacity.min_instances.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/spec.h"

namespace sl::sweep {

struct CapacityOptions {
  double target = 0.9;       // SLO attainment to reach, in (0, 1]
  double rateMin = 0.25;     // rate search bracket, req/s (time_scale: 1/rateMax .. 1/rateMin)
  double rateMax = 64;
  double tolerance = 0.02;   // stop when hi/lo <= 1 + tolerance
  int maxInstances = 64;     // instance search bracket: 1 .. maxInstances
};

/// Throws InputError naming `where` for an option out of range.
void validateCapacityOptions(const CapacityOptions& o, const std::string& where);
/// Reads {"target", "rate_min", "rate_max", "tolerance", "max_instances"} (all
/// optional); unknown keys and bad values are InputErrors naming `where`.
CapacityOptions parseCapacityOptions(const nlohmann::json& j, const std::string& where);
nlohmann::ordered_json capacityOptionsJson(const CapacityOptions& o);

/// One simulation of a search.
struct CapacityProbe {
  double x = 0;            // the rate (req/s), time_scale or instance count probed
  double attainment = 0;   // slo_met / arrived (0 when nothing arrived)
  bool ok = false;         // attainment >= target
};

struct RateCapacity {
  bool traceScale = false;          // searched trace time_scale instead of arrival rate
  std::optional<double> maxRate;    // rate search: highest rate probed that met the target
  std::optional<double> minTimeScale;  // trace search: smallest time_scale probed that met it
  bool atBracketEdge = false;       // the target was met at the top of the bracket (the answer is >= it)
  std::vector<CapacityProbe> probes;  // in the order run
};

struct InstanceCapacity {
  std::optional<int> minInstances;  // nullopt: not met even at maxInstances
  std::vector<CapacityProbe> probes;
};

/// SLO attainment of one run of `s` (in memory, nothing written).
double sloAttainment(const Scenario& s, const std::string& label);

/// Highest sustainable load of `s` (its policy, cluster, workload, seed).
/// Throws InputError when the workload has no rate to vary (a rate schedule).
RateCapacity maxSustainableRate(const Scenario& s, const CapacityOptions& o, const std::string& label = "capacity");

/// Fewest instances of `s` meeting the target at `rate` (req/s; for a trace
/// workload the scenario's own time_scale is used and `rate` is ignored).
InstanceCapacity minInstances(const Scenario& s, std::optional<double> rate, const CapacityOptions& o,
                              const std::string& label = "capacity");

nlohmann::ordered_json rateCapacityJson(const RateCapacity& r);
nlohmann::ordered_json instanceCapacityJson(const InstanceCapacity& r);

}  // namespace sl::sweep
