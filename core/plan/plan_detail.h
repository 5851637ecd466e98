#pragma once
// Helpers shared by plan.cpp (the search) and plan_explain.cpp (--explain).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "metrics/summary.h"

namespace sl::plan::detail {

/// `v` when the statistic has samples, NaN otherwise.
inline double statOr(const LatencyStats& s, double v) {
  return s.n > 0 ? v : std::numeric_limits<double>::quiet_NaN();
}

/// SLO attainment as the capacity search counts it (sweep::sloAttainment:
/// slo_met / arrived, so requests that never finish are misses), over
/// max(arrived, finished): in a measurement window the requests finishing in
/// it may outnumber those arriving in it (a backlog from the warm-up).
inline double attainmentOf(const Summary& m) {
  const std::int64_t n = std::max(m.arrived, m.finished);
  return n > 0 ? static_cast<double>(m.slo_met) / static_cast<double>(n) : 0.0;
}

}  // namespace sl::plan::detail
