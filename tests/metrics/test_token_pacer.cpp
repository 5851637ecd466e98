#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "metrics/token_pacer.h"

namespace sl {
namespace {

constexpr SimTime kTtfat = 250'000'000;  // 0.25 s
constexpr SimTime kTpot = 100'000'000;   // 0.1 s

SimTime s(double sec) { return secondsToNs(sec); }

TEST(TokenPacer, OnPaceIsExactlyOne) {
  TokenPacer p(s(2.0), kTtfat, kTpot, 6);
  // Token k produced exactly when expected, or earlier (the pacer holds it back).
  for (int k = 0; k < 6; ++k) p.onToken(s(2.0) + (k == 0 ? s(0.1) : kTtfat + k * kTpot - s(0.05)));
  EXPECT_TRUE(p.complete());
  EXPECT_EQ(p.qoe(), 1.0);
  EXPECT_NEAR(p.digestedArea(), 0.1 * (5 + 4 + 3 + 2 + 1), 1e-12);
  EXPECT_NEAR(p.expectedArea(), p.digestedArea(), 1e-12);
  EXPECT_EQ(p.lastDigest(), s(2.0) + kTtfat + 5 * kTpot);
}

TEST(TokenPacer, PartialStreamUsesExpectedCurveSoFar) {
  // Before the A-th token, ∫E runs to d_n with m = ⌊T/TPOT*⌋ + 1 < A steps.
  TokenPacer p(0, kTtfat, kTpot, 10);
  for (int k = 0; k < 4; ++k) {
    p.onToken(kTtfat + k * kTpot);
    EXPECT_EQ(p.qoe(), 1.0) << k;
  }
  // T = 0.3 -> m = 4: ∫E = 0.3 + 0.2 + 0.1 + 0 = 0.6
  EXPECT_NEAR(p.expectedArea(), 0.6, 1e-12);
  p.onToken(s(1.0));  // stall: d5 = 1.0, T = 0.75, m = 8
  // ∫E = Σ_{j<8} (0.75 − 0.1j) = 8·0.75 − 0.1·28 = 3.2; ∫D = 0.6 + 4·(1.0 − 0.55) = 2.4
  EXPECT_NEAR(p.expectedArea(), 3.2, 1e-12);
  EXPECT_NEAR(p.digestedArea(), 2.4, 1e-12);
  EXPECT_FALSE(p.complete());
}

TEST(TokenPacer, StallHandComputed) {
  // A = 5, t0 = 0, tokens at 0.1, 0.2, 0.3, 0.9, 1.0.
  // d = 0.25, 0.35, 0.45, 0.9, 1.0
  // ∫D = 0.75 + 0.65 + 0.55 + 0.1 + 0 = 2.05
  // T = 1.0 − 0.25 = 0.75; ∫E = 0.75 + 0.65 + 0.55 + 0.45 + 0.35 = 2.75
  TokenPacer p(0, kTtfat, kTpot, 5);
  const double g[] = {0.1, 0.2, 0.3, 0.9, 1.0};
  for (double t : g) p.onToken(s(t));
  EXPECT_NEAR(p.digestedArea(), 2.05, 1e-9);
  EXPECT_NEAR(p.expectedArea(), 2.75, 1e-9);
  EXPECT_NEAR(p.qoe(), 2.05 / 2.75, 1e-9);
  EXPECT_EQ(p.lastDigest(), s(1.0));
}

TEST(TokenPacer, StallBufferedHandComputed) {
  TokenPacer p(0, kTtfat, kTpot, 5);
  EXPECT_EQ(p.buffered(0), 0);
  p.onToken(s(0.1));
  EXPECT_EQ(p.buffered(s(0.1)), 1);   // d1 = 0.25
  EXPECT_EQ(p.buffered(s(0.25)), 0);
  p.onToken(s(0.2));
  p.onToken(s(0.3));
  EXPECT_EQ(p.buffered(s(0.3)), 2);   // d = 0.25 | 0.35, 0.45
  EXPECT_EQ(p.buffered(s(0.35)), 1);
  EXPECT_EQ(p.buffered(s(0.44)), 1);
  EXPECT_EQ(p.buffered(s(0.45)), 0);
  EXPECT_EQ(p.buffered(s(0.8)), 0);   // starving
  p.onToken(s(0.9));                  // behind pace: digested at once
  EXPECT_EQ(p.buffered(s(0.9)), 0);
}

TEST(TokenPacer, LateFirstToken) {
  // A = 3, tokens at 1.0, 1.05, 1.1: d = 1.0, 1.1, 1.2
  // ∫D = 0.2 + 0.1 = 0.3; T = 0.95, m = 3: ∫E = 0.95 + 0.85 + 0.75 = 2.55
  TokenPacer p(0, kTtfat, kTpot, 3);
  for (double t : {1.0, 1.05, 1.1}) p.onToken(s(t));
  EXPECT_NEAR(p.digestedArea(), 0.3, 1e-9);
  EXPECT_NEAR(p.expectedArea(), 2.55, 1e-9);
  EXPECT_NEAR(p.qoe(), 0.3 / 2.55, 1e-9);
  EXPECT_EQ(p.buffered(s(1.1)), 1);  // token 3 digested at 1.2
}

TEST(TokenPacer, ExpectedCurveCapsAtA) {
  // A = 2, tokens at 0.25 and 3.0: T = 2.75, m = min(2, 28) = 2.
  // ∫E = 2.75 + 2.65 = 5.4; ∫D = 3.0 − 0.25 = 2.75
  TokenPacer p(0, kTtfat, kTpot, 2);
  p.onToken(s(0.25));
  p.onToken(s(3.0));
  EXPECT_NEAR(p.expectedArea(), 5.4, 1e-9);
  EXPECT_NEAR(p.qoe(), 2.75 / 5.4, 1e-9);
}

TEST(TokenPacer, SingleTokenAnswers) {
  TokenPacer onTime(s(5.0), kTtfat, kTpot, 1);
  onTime.onToken(s(5.1));  // digested at 5.25 = t0 + TTFAT*: both areas 0
  EXPECT_EQ(onTime.qoe(), 1.0);
  TokenPacer late(s(5.0), kTtfat, kTpot, 1);
  late.onToken(s(5.5));  // ∫D = 0, ∫E = 0.25
  EXPECT_NEAR(late.expectedArea(), 0.25, 1e-12);
  EXPECT_EQ(late.qoe(), 0.0);
  TokenPacer none(0, kTtfat, kTpot, 0);
  EXPECT_EQ(none.qoe(), 1.0);
  EXPECT_EQ(none.buffered(s(1)), 0);
}

TEST(TokenPacer, ResetAndSize) {
  static_assert(sizeof(TokenPacer) <= 64);
  TokenPacer p(0, kTtfat, kTpot, 2);
  p.onToken(s(3.0));
  p.reset(s(1.0), kTtfat, kTpot, 2);
  EXPECT_EQ(p.generated(), 0);
  EXPECT_EQ(p.lastDigest(), -1);
  p.onToken(s(1.0));
  p.onToken(s(1.1));
  EXPECT_EQ(p.qoe(), 1.0);
}

// ---- brute force ------------------------------------------------------------

struct Stream {
  SimTime t0, ttfat, tpot;
  std::vector<SimTime> g;
};

std::vector<SimTime> digestTimes(const Stream& st) {
  std::vector<SimTime> d;
  for (std::size_t k = 0; k < st.g.size(); ++k) {
    const SimTime lb = k == 0 ? st.t0 + st.ttfat : d.back() + st.tpot;
    d.push_back(std::max(st.g[k], lb));
  }
  return d;
}

double Dat(const std::vector<SimTime>& d, double t) {  // t in ns
  return static_cast<double>(std::upper_bound(d.begin(), d.end(), t,
                                              [](double x, SimTime v) { return x < static_cast<double>(v); }) -
                             d.begin());
}
double Eat(const Stream& st, double t) {
  const double start = static_cast<double>(st.t0 + st.ttfat);
  if (t < start) return 0;
  const double e = 1 + std::floor((t - start) / static_cast<double>(st.tpot));
  return std::min(e, static_cast<double>(st.g.size()));
}

Stream randomStream(std::mt19937_64& rng) {
  auto unif = [&](double a, double b) {
    return a + (b - a) * static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
  };
  Stream st;
  st.t0 = secondsToNs(unif(0, 100));
  st.ttfat = secondsToNs(unif(0.05, 0.5));
  st.tpot = secondsToNs(unif(0.02, 0.2));
  const int A = 1 + static_cast<int>(rng() % 40);
  SimTime t = st.t0 + secondsToNs(unif(0, 0.6));
  for (int k = 0; k < A; ++k) {
    st.g.push_back(t);
    // Mostly fast tokens, some stalls.
    const double gap = (rng() % 5 == 0) ? unif(0.1, 1.5) : unif(0.0, 0.12);
    t += secondsToNs(gap);
  }
  return st;
}

TEST(TokenPacer, ClosedFormMatchesNumericIntegration) {
  std::mt19937_64 rng(12345);
  int below1 = 0;
  for (int iter = 0; iter < 200; ++iter) {
    const Stream st = randomStream(rng);
    const auto A = static_cast<std::int64_t>(st.g.size());
    TokenPacer p(st.t0, st.ttfat, st.tpot, A);
    for (SimTime g : st.g) p.onToken(g);
    const auto d = digestTimes(st);
    ASSERT_EQ(p.lastDigest(), d.back());

    // Exact piecewise-constant integration over all breakpoints.
    std::vector<double> bp{static_cast<double>(st.t0), static_cast<double>(d.back())};
    for (SimTime x : d) bp.push_back(static_cast<double>(x));
    for (std::int64_t j = 0; j < A; ++j) {
      const double x = static_cast<double>(st.t0 + st.ttfat + j * st.tpot);
      if (x < static_cast<double>(d.back())) bp.push_back(x);
    }
    std::sort(bp.begin(), bp.end());
    double exactD = 0, exactE = 0;
    for (std::size_t i = 0; i + 1 < bp.size(); ++i) {
      const double mid = 0.5 * (bp[i] + bp[i + 1]);
      exactD += Dat(d, mid) * (bp[i + 1] - bp[i]) * 1e-9;
      exactE += Eat(st, mid) * (bp[i + 1] - bp[i]) * 1e-9;
    }
    EXPECT_NEAR(p.digestedArea(), exactD, 1e-9 * std::max(1.0, exactD)) << "iter " << iter;
    EXPECT_NEAR(p.expectedArea(), exactE, 1e-9 * std::max(1.0, exactE)) << "iter " << iter;

    // Midpoint rule on a fine grid (h = 50 µs).
    const double h = 50'000;
    double gridD = 0, gridE = 0;
    for (double t = static_cast<double>(st.t0) + h / 2; t < static_cast<double>(d.back()); t += h) {
      gridD += Dat(d, t) * h * 1e-9;
      gridE += Eat(st, t) * h * 1e-9;
    }
    // Each unit jump costs at most h/2 token·ns, the last cell at most A·h.
    const double tol = 3.0 * static_cast<double>(A) * h * 1e-9 + 1e-9;
    EXPECT_NEAR(p.digestedArea(), gridD, tol) << "iter " << iter;
    EXPECT_NEAR(p.expectedArea(), gridE, tol) << "iter " << iter;
    const double q = exactE > 0 ? exactD / exactE : 1.0;
    EXPECT_NEAR(p.qoe(), q, 1e-9) << "iter " << iter;
    EXPECT_LE(p.qoe(), 1.0);
    EXPECT_GE(p.qoe(), 0.0);
    if (p.qoe() < 0.999) ++below1;
  }
  EXPECT_GT(below1, 50);  // the generator really produces stalls
}

TEST(TokenPacer, BufferedMatchesBruteForce) {
  std::mt19937_64 rng(777);
  for (int iter = 0; iter < 200; ++iter) {
    const Stream st = randomStream(rng);
    const auto A = static_cast<std::int64_t>(st.g.size());
    TokenPacer p(st.t0, st.ttfat, st.tpot, A);
    const auto d = digestTimes(st);
    for (std::int64_t n = 1; n <= A; ++n) {
      p.onToken(st.g[static_cast<std::size_t>(n - 1)]);
      const SimTime from = st.g[static_cast<std::size_t>(n - 1)];
      const SimTime to = std::max(from, d[static_cast<std::size_t>(n - 1)]) + 3 * st.tpot;
      for (int q = 0; q < 8; ++q) {
        SimTime now = from + static_cast<SimTime>(rng() % static_cast<std::uint64_t>(to - from + 1));
        if (q == 0) now = from;
        if (q == 1) now = d[static_cast<std::size_t>(n - 1)];
        if (q == 2) now = d[static_cast<std::size_t>(n - 1)] - 1;
        if (now < from) now = from;
        std::int64_t brute = 0;
        for (std::int64_t k = 0; k < n; ++k) brute += d[static_cast<std::size_t>(k)] > now ? 1 : 0;
        ASSERT_EQ(p.buffered(now), brute) << "iter " << iter << " n " << n << " now " << now;
      }
    }
  }
}

// The decode lane replays a request's tokens in one call: same state, same
// area bits as token by token -- on the integer path (small areas) and on
// the fallback (an area past 2^53 ns·tokens, or a product that overflows).
TEST(TokenPacer, OnTokensMatchesTokenByTokenBitForBit) {
  std::mt19937_64 rng(42);
  const auto same = [](const TokenPacer& a, const TokenPacer& b) {
    EXPECT_EQ(a.generated(), b.generated());
    EXPECT_EQ(a.lastDigest(), b.lastDigest());
    EXPECT_EQ(a.buffered(a.lastDigest() + 1), b.buffered(b.lastDigest() + 1));
    // Inside the current paced run (its start and first digest decide these).
    for (const SimTime back : {SimTime{1}, kTpot / 2, 3 * kTpot, 40 * kTpot})
      EXPECT_EQ(a.buffered(a.lastDigest() - back), b.buffered(b.lastDigest() - back));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.digestedArea()), std::bit_cast<std::uint64_t>(b.digestedArea()));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.qoe()), std::bit_cast<std::uint64_t>(b.qoe()));
  };
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t len = 1 + static_cast<std::int64_t>(rng() % 3000);
    // Gaps around the pace, with stalls; some trials with huge gaps (hours)
    // so the area passes 2^53 and the replay must take the fallback.
    const SimTime scale = trial % 10 == 0 ? 3'600'000'000'000 : 60'000'000;
    std::vector<SimTime> g;
    SimTime t = static_cast<SimTime>(rng() % 1'000'000'000);
    for (std::int64_t k = 0; k < len; ++k) {
      t += static_cast<SimTime>(rng() % static_cast<std::uint64_t>(scale)) + (rng() % 50 == 0 ? 2 * scale : 0);
      g.push_back(t);
    }
    TokenPacer one(0, kTtfat, trial % 7 == 0 ? 0 : kTpot, len), many = one;
    std::size_t k = 0;
    while (k < g.size()) {  // in chunks, as a lane syncs now and then
      const std::size_t chunk = std::min<std::size_t>(g.size() - k, 1 + rng() % 400);
      for (std::size_t j = 0; j < chunk; ++j) one.onToken(g[k + j]);
      many.onTokens(g.data() + k, static_cast<std::int64_t>(chunk));
      k += chunk;
      same(one, many);
    }
  }
}

}  // namespace
}  // namespace sl
