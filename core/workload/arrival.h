#pragma once
// Arrival processes (60-cli-formats.md "Workloads"): Poisson(rate),
// Gamma(rate, cv) renewal process (inter-arrival shape 1/cv^2, scale
// cv^2/rate), and a piecewise-constant rate schedule (non-homogeneous
// Poisson; the last segment's rate persists; a 0-rate segment is allowed).
// Arrival times are kept as an exact double of seconds and rounded to
// integer ns once per arrival, so rounding never accumulates.
#include <memory>
#include <optional>
#include <string>

#include "scenario/spec.h"
#include "util/rng.h"
#include "util/time.h"

namespace sl {

class ArrivalProcess {
public:
  /// Validates `spec` (InputError naming `what`, e.g. "workload.arrival").
  explicit ArrivalProcess(const ArrivalSpec& spec, const std::string& what = "workload.arrival");

  /// Next arrival time in ns (non-decreasing), or nullopt when the process
  /// has ended (a schedule whose last rate is 0).
  std::optional<SimTime> next(Rng& rng);

  /// Next arrival time in seconds, unrounded (nullopt: ended).
  std::optional<double> nextSeconds(Rng& rng);

  /// Whether the process can end by itself (schedule with final rate 0).
  bool finite() const;

private:
  ArrivalSpec spec_;
  double t_ = 0;          // current time, seconds
  std::size_t seg_ = 0;   // schedule: current segment
  double segEnd_ = 0;     // schedule: end of current segment, seconds
  bool ended_ = false;
};

}  // namespace sl
