#pragma once
// Rolling statistics over the completions of the last W seconds (default 30),
// for the time-series probes (40-metrics.md, "Time series"). The window at
// sample time `now` holds completions with time in (now − W, now].
// Storage is a ring buffer that only grows to the peak window population;
// percentiles use std::nth_element on a reused scratch buffer (linear
// interpolation as in summary.h), so sampling allocates nothing after warm-up.
#include <cstdint>
#include <limits>
#include <vector>

#include "util/time.h"

namespace sl {

struct RollingSample {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::int64_t n = 0;  // completions in the window; all values NaN when 0
  double ttft_p50 = kNaN, ttft_p99 = kNaN;
  double tpot_p50 = kNaN, tpot_p99 = kNaN;
  double slo_attainment = kNaN;      // share with sloOk
  double qoe_violation_rate = kNaN;  // share with qoeViolated
};

class RollingWindow {
public:
  explicit RollingWindow(SimTime window = 30 * kNsPerSecond) : window_(window) {}

  /// One completion at `time` (non-decreasing across calls), seconds values.
  void add(SimTime time, double ttft, double tpot, bool sloOk, bool qoeViolated);
  /// Evicts entries with time <= now − W and returns the window's statistics.
  RollingSample sample(SimTime now);

  std::int64_t size() const { return static_cast<std::int64_t>(count_); }
  SimTime window() const { return window_; }
  void clear() { head_ = count_ = 0; }

private:
  struct Entry {
    SimTime time;
    double ttft, tpot;
    bool sloOk, qoeViolated;
  };
  void evict(SimTime now);
  const Entry& at(std::size_t i) const { return buf_[(head_ + i) % buf_.size()]; }
  double percentile(double p);  // over scratch_[0..count_)

  SimTime window_;
  std::vector<Entry> buf_;  // ring buffer, capacity = buf_.size()
  std::size_t head_ = 0, count_ = 0;
  std::vector<double> scratch_;
};

}  // namespace sl
