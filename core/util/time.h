#pragma once
// Simulated time: an integer count of nanoseconds. Costs computed in floating
// point are rounded once, when an event is scheduled (10-engine.md).
#include <cmath>
#include <cstdint>

namespace sl {

using SimTime = std::int64_t;  // nanoseconds since simulation start

inline constexpr SimTime kNsPerSecond = 1'000'000'000;
inline constexpr SimTime kTimeNever = INT64_MAX;

inline SimTime secondsToNs(double s) { return static_cast<SimTime>(std::llround(s * 1e9)); }
inline constexpr double nsToSeconds(SimTime t) { return static_cast<double>(t) * 1e-9; }

}  // namespace sl
