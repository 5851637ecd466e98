#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "util/rng.h"

using sl::Rng;

namespace {

struct Moments {
  double mean = 0, var = 0;
};

template <class F>
Moments moments(F&& draw, int n = 200000) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    s += x;
    s2 += x * x;
  }
  Moments m;
  m.mean = s / n;
  m.var = s2 / n - m.mean * m.mean;
  return m;
}

}  // namespace

// Pinned outputs: if any of these change, every run's results change.
// Update them only on purpose (and say so in the changelog).
TEST(Rng, GoldenRawValues) {
  Rng r(12345);
  const std::uint64_t expected[] = {13720838825685603483ull, 2398916695208396998ull, 17770384849984869256ull,
                                   891717726879801395ull, 10241316046318454344ull};
  for (std::uint64_t e : expected) EXPECT_EQ(r.next(), e);
}

TEST(Rng, GoldenStreamAndHashValues) {
  EXPECT_EQ(sl::fnv1a64(""), 14695981039346656037ull);
  EXPECT_EQ(sl::fnv1a64("a"), 0xaf63dc4c8601ec8cull);  // FNV-1a reference value
  EXPECT_EQ(sl::fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(sl::hashCombine(1, 2), 15039531164227991741ull);
  Rng s = Rng::forStream(1, "arrivals");
  EXPECT_EQ(s.next(), 11503537209300222559ull);
}

TEST(Rng, GoldenSamplerValues) {
  Rng r(2024);
  EXPECT_EQ(r.uniform01(), 0x1.c90e2b427aeep-5);
  EXPECT_EQ(r.below(1000), 693u);
  EXPECT_EQ(r.exponential(2.0), 0x1.324f65c249033p-5);
  EXPECT_EQ(r.normal(), -0x1.25abdd8a7f40bp-1);
  EXPECT_EQ(r.normal(), 0x1.d85498c6c555ep-2);
  EXPECT_EQ(r.lognormal(1.0, 0.5), 0x1.557c3c934cd69p+0);
  EXPECT_EQ(r.gamma(2.5, 1.0), 0x1.68d1be2c93947p+0);
  EXPECT_EQ(r.gamma(0.3, 2.0), 0x1.a736ae9a5e03dp+0);
}

TEST(Rng, SameSeedSameSequenceDifferentSeedDifferent) {
  Rng a(7), b(7), c(8);
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    differ += (x != c.next());
  }
  EXPECT_EQ(differ, 100);
}

TEST(Rng, StreamsAreIndependent) {
  // Different names or seeds give different streams; drawing from one
  // stream never changes another.
  Rng a1 = Rng::forStream(1, "arrivals");
  Rng a2 = Rng::forStream(1, "arrivals");
  Rng in = Rng::forStream(1, "input");
  Rng a3 = Rng::forStream(2, "arrivals");
  for (int i = 0; i < 1000; ++i) in.next();  // heavy use of another stream
  int same_in = 0, same_seed = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto x = a1.next();
    EXPECT_EQ(x, a2.next());
    same_in += (x == in.next());
    same_seed += (x == a3.next());
  }
  EXPECT_EQ(same_in, 0);
  EXPECT_EQ(same_seed, 0);
  // Correlation between two streams' uniforms is ~0.
  Rng u = Rng::forStream(5, "x"), v = Rng::forStream(5, "y");
  double sxy = 0, sx = 0, sy = 0, sxx = 0, syy = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double x = u.uniform01(), y = v.uniform01();
    sx += x, sy += y, sxy += x * y, sxx += x * x, syy += y * y;
  }
  const double cov = sxy / n - (sx / n) * (sy / n);
  const double corr = cov / std::sqrt((sxx / n - sx * sx / n / n) * (syy / n - sy * sy / n / n));
  EXPECT_LT(std::abs(corr), 0.02);
}

TEST(Rng, Uniform01RangeAndResolution) {
  Rng r(3);
  double lo = 1, hi = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    // 53-bit grid: u * 2^53 is an integer.
    ASSERT_EQ(std::floor(u * 0x1.0p53), u * 0x1.0p53);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  EXPECT_LT(lo, 1e-3);
  EXPECT_GT(hi, 1 - 1e-3);
  const auto m = moments([&] { return r.uniform(2.0, 4.0); });
  EXPECT_NEAR(m.mean, 3.0, 0.01);
  EXPECT_NEAR(m.var, 4.0 / 12.0, 0.005);
}

TEST(Rng, BelowIsUnbiasedAndInRange) {
  Rng r(9);
  EXPECT_EQ(r.below(1), 0u);
  std::vector<int> counts(7, 0);
  const int n = 700000;
  for (int i = 0; i < n; ++i) {
    const auto k = r.below(7);
    ASSERT_LT(k, 7u);
    ++counts[k];
  }
  for (int c : counts) EXPECT_NEAR(c, n / 7.0, 5 * std::sqrt(n / 7.0));
  // A modulus near 2^64 where plain `% n` would be very biased.
  const std::uint64_t big = (std::uint64_t{1} << 63) + (std::uint64_t{1} << 62);
  int low_half = 0;
  for (int i = 0; i < 100000; ++i) low_half += r.below(big) < big / 2;
  EXPECT_NEAR(low_half, 50000, 800);
}

TEST(Rng, ExponentialMoments) {
  Rng r(11);
  const auto m = moments([&] { return r.exponential(4.0); });
  EXPECT_NEAR(m.mean, 0.25, 0.25 * 0.01);
  EXPECT_NEAR(m.var, 1.0 / 16, (1.0 / 16) * 0.03);
}

TEST(Rng, NormalMoments) {
  Rng r(12);
  const auto m = moments([&] { return r.normal(3.0, 2.0); });
  EXPECT_NEAR(m.mean, 3.0, 0.015);
  EXPECT_NEAR(m.var, 4.0, 4.0 * 0.02);
  double s3 = 0;
  Rng q(13);
  for (int i = 0; i < 200000; ++i) {
    const double x = q.normal();
    s3 += x * x * x;
  }
  EXPECT_NEAR(s3 / 200000, 0.0, 0.03);  // symmetric
}

TEST(Rng, LognormalMoments) {
  Rng r(14);
  const double mu = 1.0, s = 0.5;
  const auto m = moments([&] { return r.lognormal(mu, s); });
  const double mean = std::exp(mu + s * s / 2);
  const double var = (std::exp(s * s) - 1) * std::exp(2 * mu + s * s);
  EXPECT_NEAR(m.mean, mean, mean * 0.01);
  EXPECT_NEAR(m.var, var, var * 0.04);
}

TEST(Rng, GammaMoments) {
  for (double shape : {0.25, 0.7, 1.0, 2.5, 9.0}) {
    Rng r(15);
    const double scale = 1.5;
    const auto m = moments([&] { return r.gamma(shape, scale); });
    EXPECT_NEAR(m.mean, shape * scale, shape * scale * 0.015) << "shape " << shape;
    EXPECT_NEAR(m.var, shape * scale * scale, shape * scale * scale * 0.05) << "shape " << shape;
  }
}
