#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <algorithm>
#include <vector>

#include "metrics/rolling.h"
#include "metrics/summary.h"

namespace sl {
namespace {

// The sample's percentiles equal those of the window's values sorted afresh
// (bit for bit).
void expectExactPercentiles(const RollingSample& s, std::vector<double> ttft, std::vector<double> tpot) {
  std::sort(ttft.begin(), ttft.end());
  std::sort(tpot.begin(), tpot.end());
  EXPECT_EQ(s.ttft_p50, percentileSorted(ttft, 0.50));
  EXPECT_EQ(s.ttft_p99, percentileSorted(ttft, 0.99));
  EXPECT_EQ(s.tpot_p50, percentileSorted(tpot, 0.50));
  EXPECT_EQ(s.tpot_p99, percentileSorted(tpot, 0.99));
}

TEST(RollingWindow, EvictsOldEntries) {
  RollingWindow w(30 * kNsPerSecond);
  EXPECT_EQ(w.sample(0).n, 0);
  EXPECT_TRUE(std::isnan(w.sample(0).ttft_p50));
  // One completion per second at t = 1..40; ttft = t/10, tpot = t/100.
  for (int t = 1; t <= 40; ++t)
    w.add(t * kNsPerSecond, t / 10.0, t / 100.0, t % 2 == 0, t % 4 == 0);
  // Window (10, 40]: t = 11..40.
  RollingSample s = w.sample(40 * kNsPerSecond);
  EXPECT_EQ(s.n, 30);
  EXPECT_NEAR(s.ttft_p50, 2.55, 1e-12);               // median of 1.1..4.0
  EXPECT_NEAR(s.ttft_p99, 1.1 + 0.1 * 29 * 0.99, 1e-12);
  EXPECT_NEAR(s.tpot_p50, 0.255, 1e-12);
  EXPECT_NEAR(s.slo_attainment, 0.5, 1e-12);
  EXPECT_NEAR(s.qoe_violation_rate, 8.0 / 30, 1e-12);  // 12,16,...,40
  // Later sample: window (25, 55] holds t = 26..40.
  s = w.sample(55 * kNsPerSecond);
  EXPECT_EQ(s.n, 15);
  EXPECT_NEAR(s.ttft_p50, 3.3, 1e-12);
  s = w.sample(70 * kNsPerSecond);  // t = 40 evicted (40 <= 70 - 30)
  EXPECT_EQ(s.n, 0);
  EXPECT_EQ(w.size(), 0);
  w.add(71 * kNsPerSecond, 9, 0.5, true, false);  // ring reuse after full drain
  s = w.sample(71 * kNsPerSecond);
  EXPECT_EQ(s.n, 1);
  EXPECT_EQ(s.ttft_p99, 9);
  EXPECT_EQ(s.slo_attainment, 1.0);
}

TEST(RollingWindow, MatchesSortedPercentiles) {
  std::mt19937_64 rng(99);
  RollingWindow w(5 * kNsPerSecond);
  std::vector<std::pair<SimTime, double>> all;
  SimTime t = 0;
  for (int i = 0; i < 2000; ++i) {
    t += static_cast<SimTime>(rng() % 50'000'000);
    const double v = static_cast<double>(rng() % 100000) / 1000.0;
    w.add(t, v, v / 10, true, false);
    all.emplace_back(t, v);
    if (i % 97 == 0) {
      const SimTime now = t + static_cast<SimTime>(rng() % 1'000'000'000);
      const RollingSample s = w.sample(now);
      std::vector<double> in;
      for (const auto& [tt, vv] : all)
        if (tt > now - 5 * kNsPerSecond && tt <= now) in.push_back(vv);
      ASSERT_EQ(s.n, static_cast<std::int64_t>(in.size()));
      const LatencyStats st = computeStats(in);
      EXPECT_DOUBLE_EQ(s.ttft_p50, st.p50);
      EXPECT_DOUBLE_EQ(s.ttft_p99, st.p99);
      EXPECT_NEAR(s.tpot_p99, st.p99 / 10, 1e-12);
    }
  }
}

// Issue 27: the order index kept between samples gives exactly (bit for
// bit) the percentiles of the window sorted afresh, with duplicates, bursts
// of adds between samples, samples that find nothing new, and a window that
// empties.
TEST(RollingWindow, IncrementalPercentilesAreExact) {
  std::mt19937_64 rng(7);
  RollingWindow w(3 * kNsPerSecond);
  std::vector<std::tuple<SimTime, double, double, bool>> all;
  SimTime t = 0, lastNow = 0;
  int samples = 0;
  for (int i = 0; i < 20000; ++i) {
    // Mostly dense completions, sometimes a gap longer than the window.
    t += (i % 3000 == 2999) ? 5 * kNsPerSecond : static_cast<SimTime>(rng() % 20'000'000);
    const double ttft = static_cast<double>(rng() % 500) / 64.0;  // many duplicates
    const double tpot = static_cast<double>(rng() % 100000) * 1e-6;
    const bool ok = rng() % 3 != 0;
    w.add(t, ttft, tpot, ok, !ok);
    all.emplace_back(t, ttft, tpot, ok);
    // Bursts: every sample point is followed by up to 3 000 adds without one.
    const bool burst = (i / 1000) % 7 == 3;
    if (burst ? i % 1000 == 999 : i % 13 == 0) {
      // Sample times never go back (evictions are final).
      lastNow = std::max(lastNow, t + static_cast<SimTime>(rng() % 2'000'000'000));
      const SimTime now = lastNow;
      const RollingSample s = w.sample(now);
      if (rng() % 4 == 0) (void)w.sample(now);  // a sample with no change since the last
      std::vector<double> a, b;
      std::int64_t okN = 0;
      for (const auto& [tt, x, y, o] : all)
        if (tt > now - 3 * kNsPerSecond && tt <= now) {
          a.push_back(x);
          b.push_back(y);
          okN += o ? 1 : 0;
        }
      ASSERT_EQ(s.n, static_cast<std::int64_t>(a.size()));
      if (a.empty()) continue;
      expectExactPercentiles(s, a, b);
      EXPECT_EQ(s.slo_attainment, static_cast<double>(okN) / static_cast<double>(a.size()));
      ++samples;
    }
  }
  EXPECT_GT(samples, 500);
}

// The order index's buckets follow the values' order everywhere, the end
// buckets included (values below 2^-20 or above 2^12, zero, negatives).
TEST(RollingWindow, OrderIndexBucketsAreMonotone) {
  std::mt19937_64 rng(3);
  std::vector<double> v = {-1e300, -2.5, -0.0, 0.0, 1e-300, 1e-7, 0.5, 1.0, 4095.0, 4096.0, 1e6, 1e300};
  for (int i = 0; i < 20000; ++i) v.push_back(std::ldexp(static_cast<double>(rng() % 1000000) / 1e6, static_cast<int>(rng() % 80) - 40));
  std::sort(v.begin(), v.end());
  for (std::size_t i = 1; i < v.size(); ++i) {
    ASSERT_LE(OrderIndex::bucketOf(v[i - 1]), OrderIndex::bucketOf(v[i])) << v[i - 1] << " " << v[i];
    ASSERT_GE(OrderIndex::bucketOf(v[i]), 0);
    ASSERT_LT(OrderIndex::bucketOf(v[i]), OrderIndex::kBuckets);
  }
  // 128 buckets an octave: 1.0 and 1.0078125 (1 + 2^-7) differ by one.
  EXPECT_EQ(OrderIndex::bucketOf(1.0078125) - OrderIndex::bucketOf(1.0), 1);
}

// Values spread over many octaves (most buckets and blocks empty, the
// k-th and the (k+1)-th often in buckets far apart, values in the clamped
// end buckets) and values crowded into one bucket.
TEST(RollingWindow, OrderIndexExactOverSparseAndCrowdedBuckets) {
  {
    // 1.0 and 2.0 begin blocks of 64 buckets with an empty block between:
    // the (k+1)-th is found past the empty block, at its next block's start.
    RollingWindow two(kNsPerSecond);
    two.add(1, 1.0, 2.0, true, false);
    two.add(2, 2.0, 1.0, true, false);
    const RollingSample s = two.sample(2);
    EXPECT_EQ(s.ttft_p50, 1.5);
    EXPECT_EQ(s.tpot_p50, 1.5);
    EXPECT_EQ(s.ttft_p99, 1.99);
  }
  std::mt19937_64 rng(11);
  RollingWindow w(2 * kNsPerSecond);
  std::vector<std::tuple<SimTime, double, double>> all;
  SimTime t = 0;
  int samples = 0;
  for (int i = 0; i < 6000; ++i) {
    t += static_cast<SimTime>(rng() % 30'000'000);
    const double wide = std::ldexp(1.0 + static_cast<double>(rng() % 1000) / 1000.0, static_cast<int>(rng() % 90) - 45);
    const double crowded = 0.01 + static_cast<double>(rng() % 7) * 1e-9;  // one bucket, duplicates
    w.add(t, wide, crowded, true, false);
    all.emplace_back(t, wide, crowded);
    if (i % 17 == 0) {
      const RollingSample s = w.sample(t);
      std::vector<double> a, b;
      for (const auto& [tt, x, y] : all)
        if (tt > t - 2 * kNsPerSecond && tt <= t) {
          a.push_back(x);
          b.push_back(y);
        }
      ASSERT_EQ(s.n, static_cast<std::int64_t>(a.size()));
      expectExactPercentiles(s, std::move(a), std::move(b));
      ++samples;
    }
  }
  EXPECT_GT(samples, 300);
}

}  // namespace
}  // namespace sl
