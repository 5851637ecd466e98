#pragma once
// Rolling statistics over the completions of the last W seconds (default 30),
// for the time-series probes (40-metrics.md, "Time series"). The window at
// sample time `now` holds completions with time in (now − W, now].
// Storage is a ring buffer that only grows to the peak window population.
// Percentiles (linear interpolation as in summary.h) come from the window's
// TTFT and TPOT values kept sorted between samples: a sample merges in the
// values added since the last one and takes out those evicted, O(window +
// k log k) for k changes instead of partitioning the whole window four
// times (issue 27: that was 13 % of `run --out` on the Vidur workload; the
// changes are placed by binary search and block copies, applyChanges). The
// sorted copies exist only once sample() has been called (runs that never
// sample pay one branch per add), and are rebuilt from the ring when the
// changes since the last sample outnumber the window (bounded memory).
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
  void clear() {
    head_ = count_ = 0;
    ok_ = viol_ = 0;
    dropSorted();
  }

private:
  struct Entry {
    SimTime time;
    double ttft, tpot;
    bool sloOk, qoeViolated;
  };
  void evict(SimTime now);
  const Entry& at(std::size_t i) const { return buf_[(head_ + i) % buf_.size()]; }
  /// Forget the sorted copies (rebuilt from the ring at the next sample).
  void dropSorted();
  /// Bring the sorted copies up to the ring's content.
  void updateSorted();

  SimTime window_;
  std::vector<Entry> buf_;  // ring buffer, capacity = buf_.size()
  std::size_t head_ = 0, count_ = 0;
  std::int64_t ok_ = 0, viol_ = 0;  // sloOk / qoeViolated entries in the window
  // The window's values sorted as of the last sample (`tracking_`), and the
  // values added / evicted since then.
  bool tracking_ = false;
  std::vector<double> ttftSorted_, tpotSorted_;
  std::vector<double> addTtft_, addTpot_, delTtft_, delTpot_;
  std::vector<double> scratch_;
};

}  // namespace sl
