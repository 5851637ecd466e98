// The PASCAL setting's shared helpers (common.h).
#include "experiments/pascal/common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/request.h"
#include "experiments/grid.h"
#include "metrics/binned_tail.h"
#include "scenario/scenario_io.h"

namespace sl::exp::pascal_impl {

std::int64_t pascalRequests(const ExperimentOptions& o) {
  return o.quick ? kQuickRequests : kFullRequests;
}

std::vector<double> loadRates(const Dataset& d) {
  return {d.low, d.medium, d.high};
}

std::vector<double> sweepRates(const ExperimentOptions& o, const Dataset& d) {
  if (o.quick) return loadRates(d);
  std::vector<double> r;
  for (int k = 1; k <= 8; ++k) r.push_back(k * d.sweepStep);
  return r;
}

std::string loadName(double rate, const Dataset& d) {
  if (rate == d.low) return "low";
  if (rate == d.medium) return "medium";
  if (rate == d.high) return "high";
  return "-";
}


/// The §V grid: `policies` at `rates` on `dataset`.
Grid pascalGrid(const Dataset& dataset, const std::vector<double>& rates, const std::vector<std::string>& policies,
                const ExperimentOptions& o, const ObserverFn& observer) {
  const std::int64_t n = pascalRequests(o);
  return runGrid([&](double rate, const std::string& p) { return pascalScenario(rate, p, n, dataset.preset); }, rates,
                 policies, o, observer);
}

/// 100 * (base - x) / base.
double reductionPct(double base, double x) {
  return base > 0 ? 100.0 * (base - x) / base : std::nan("");
}

double pct(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : std::nan("");
}

std::vector<double> ttfts(const std::vector<RequestRecord>& recs) {
  std::vector<double> v;
  for (const RequestRecord& r : recs)
    if (r.finished)
      if (auto t = r.ttft()) v.push_back(*t);
  std::sort(v.begin(), v.end());
  return v;
}

// ---- common columns ----------------------------------------------------------

Column finishedColumn() {
  return countColumn("finished", [](const Summary& m) { return m.finished; });
}
Column preemptionsColumn() {
  return countColumn("preemptions", [](const Summary& m) { return m.preemptions; });
}
Column migrationsColumn() {
  return countColumn("migrations", [](const Summary& m) { return m.migrations; });
}
Column sloViolationColumn(int decimals) {
  return summaryColumn(
      "slo_violation_pct", [](const Summary& m) { return 100 * m.qoe_violation_rate; }, decimals);
}

}  // namespace sl::exp::pascal_impl
