#pragma once
// Rolling statistics over the completions of the last W seconds (default 30),
// for the time-series probes (40-metrics.md, "Time series"). The window at
// sample time `now` holds completions with time in (now − W, now].
// Storage is a ring buffer that only grows to the peak window population.
// Percentiles (linear interpolation as in summary.h) are exact order
// statistics of the window's TTFT and TPOT values, found in an order index
// kept up to date at every add and eviction in O(1) (OrderIndex below;
// issue 27: partitioning the window at every sample was 13 % of `run --out`
// on the Vidur workload, and the sorted copies that replaced it still ~7 %).
// The index exists only once sample() has been called (runs that never
// sample pay one branch per add).
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

/// The order statistics of a multiset of doubles held in a FIFO (the
/// window's ring slots): a count per value bucket and, per bucket, its
/// members' slots oldest first. Buckets follow the values' order (a
/// monotone map of the bits: 128 per octave from 2^-20 to 2^12, values
/// beyond in the end buckets), so the k-th smallest value is in the bucket
/// where the counts reach k, and is picked exactly among that bucket's few
/// members. Adding the newest member and removing the oldest are O(1); a
/// query walks the counts (64 blocks of 64 buckets) and the one bucket.
class OrderIndex {
public:
  static constexpr int kBuckets = 4096;
  static constexpr int kBlock = 64;
  static int bucketOf(double v);

  /// Empty, for slots 0 .. slots − 1.
  void reset(std::size_t slots);
  /// `slot` (not in the index) holds value v and is the newest member.
  void push(std::int32_t slot, double v);
  /// Removes the oldest member, whose value is v.
  void popOldest(double v);
  /// The k-th and (k+1)-th smallest values (0-based; `next` is left alone
  /// when k is the largest). `value(slot)` reads a member's value.
  template <class ValueOf>
  void at(std::size_t k, ValueOf&& value, double& kth, double& next, std::vector<double>& scratch) const;

private:
  std::vector<std::uint32_t> count_, blockCount_;
  std::vector<std::int32_t> head_, tail_, next_;  // per bucket: oldest / newest slot; per slot: the next newer
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
    tracking_ = false;
  }

private:
  struct Entry {
    SimTime time;
    double ttft, tpot;
    bool sloOk, qoeViolated;
  };
  void evict(SimTime now);
  const Entry& at(std::size_t i) const { return buf_[(head_ + i) % buf_.size()]; }
  /// Index the ring's entries afresh (the first sample; a ring that grew).
  void rebuildIndex();
  double percentile(const OrderIndex& index, double Entry::*field, double p);

  SimTime window_;
  std::vector<Entry> buf_;  // ring buffer, capacity = buf_.size()
  std::size_t head_ = 0, count_ = 0;
  std::int64_t ok_ = 0, viol_ = 0;  // sloOk / qoeViolated entries in the window
  // The order indexes of the TTFT and TPOT values, once a sample asked.
  bool tracking_ = false;
  OrderIndex ttftIndex_, tpotIndex_;
  std::vector<double> scratch_;
};

}  // namespace sl
