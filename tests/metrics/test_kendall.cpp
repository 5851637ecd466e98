#include "metrics/kendall.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace servelab::metrics;

namespace {

// The definition, pair by pair (O(n^2)), to check the O(n log n) counts.
KendallCounts bruteForce(const std::vector<double>& a, const std::vector<double>& b) {
  KendallCounts c;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      ++c.pairs;
      bool ta = a[i] == a[j], tb = b[i] == b[j];
      c.tiedA += ta;
      c.tiedB += tb;
      c.tiedBoth += ta && tb;
      if (!ta && !tb) ((a[i] < a[j]) == (b[i] < b[j]) ? c.concordant : c.discordant)++;
    }
  return c;
}

}  // namespace

TEST(Kendall, PerfectAgreementAndReversal) {
  std::vector<double> a{1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(*kendallTauB(a, {10, 20, 30, 40, 50}), 1.0);
  EXPECT_DOUBLE_EQ(*kendallTauB(a, {5, 4, 3, 2, 1}), -1.0);
}

TEST(Kendall, HandComputedWithoutTies) {
  // a = 1 2 3 4, b = 1 3 2 4: pairs (2,3) discordant, the other 5 concordant.
  auto c = kendallCounts({1, 2, 3, 4}, {1, 3, 2, 4});
  EXPECT_EQ(c.pairs, 6);
  EXPECT_EQ(c.concordant, 5);
  EXPECT_EQ(c.discordant, 1);
  EXPECT_NEAR(*kendallTauB({1, 2, 3, 4}, {1, 3, 2, 4}), 4.0 / 6.0, 1e-12);
}

TEST(Kendall, HandComputedWithTiesInBoth) {
  // a = 1 1 2 3, b = 1 2 2 3 (a competition ranking against a gold one):
  // pairs: (0,1) tied in a; (1,2) tied in b; (0,2) (0,3) (1,3) (2,3)
  // concordant. n0 = 6, na = 1, nb = 1: tau-b = 4 / sqrt(5 * 5) = 0.8.
  std::vector<double> a{1, 1, 2, 3}, b{1, 2, 2, 3};
  auto c = kendallCounts(a, b);
  EXPECT_EQ(c.tiedA, 1);
  EXPECT_EQ(c.tiedB, 1);
  EXPECT_EQ(c.tiedBoth, 0);
  EXPECT_EQ(c.concordant, 4);
  EXPECT_EQ(c.discordant, 0);
  EXPECT_NEAR(*kendallTauB(a, b), 0.8, 1e-12);
  // A pair tied in both counts in na and nb: a = b = 1 1 2 -> tau-b = 1.
  EXPECT_DOUBLE_EQ(*kendallTauB({1, 1, 2}, {1, 1, 2}), 1.0);
  // a = 1 1 2 2, b = 2 1 2 1: n0 = 6, na = 2, nb = 2, tied both 0;
  // (0,2): 1<2, 2=2 tied b; (0,3): 1<2, 2>1 disc; (1,2): 1<2, 1<2 conc;
  // (1,3): tied b. nc = 1, nd = 1 -> 0.
  EXPECT_DOUBLE_EQ(*kendallTauB({1, 1, 2, 2}, {2, 1, 2, 1}), 0.0);
}

TEST(Kendall, UndefinedWhenAllTiedOrTooShort) {
  EXPECT_FALSE(kendallTauB({}, {}).has_value());
  EXPECT_FALSE(kendallTauB({1}, {2}).has_value());
  EXPECT_FALSE(kendallTauB({1, 1, 1}, {1, 2, 3}).has_value());  // FCFS-like: one rank for all
  EXPECT_THROW(kendallCounts({1, 2}, {1}), std::invalid_argument);
}

TEST(Kendall, MatchesPairByPairDefinitionOnRandomData) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::size_t n = 1 + rng() % 60;
    int levels = 1 + static_cast<int>(rng() % 8);  // few levels: many ties
    std::vector<double> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<double>(rng() % static_cast<unsigned>(levels));
      b[i] = static_cast<double>(rng() % static_cast<unsigned>(levels + 3));
    }
    auto fast = kendallCounts(a, b), slow = bruteForce(a, b);
    ASSERT_EQ(fast.pairs, slow.pairs);
    ASSERT_EQ(fast.concordant, slow.concordant) << "trial " << trial;
    ASSERT_EQ(fast.discordant, slow.discordant) << "trial " << trial;
    ASSERT_EQ(fast.tiedA, slow.tiedA);
    ASSERT_EQ(fast.tiedB, slow.tiedB);
    ASSERT_EQ(fast.tiedBoth, slow.tiedBoth);
  }
}

TEST(GoldRanking, CompetitionRanksWithRelativeTies) {
  // Sorted: 100, 105 (|5| <= 0.1*102.5: tie), 200, 300, 310 (tie), 1000.
  std::vector<double> L{300, 100, 1000, 105, 310, 200};
  auto g = goldRanking(L, 0.10);
  std::vector<double> want{4, 1, 6, 1, 4, 3};
  EXPECT_EQ(g, want);
  // Zeros tie only with zeros; 0 and a positive length never tie.
  EXPECT_EQ(goldRanking({0, 0, 1}, 0.10), (std::vector<double>{1, 1, 3}));
  // alpha = 0: only equal lengths tie.
  EXPECT_EQ(goldRanking({5, 5, 6}, 0.0), (std::vector<double>{1, 1, 3}));
  // Ties chain along the sorted order (Eq. 4): 100, 109, 118 all rank 1.
  EXPECT_EQ(goldRanking({100, 109, 118}, 0.10), (std::vector<double>{1, 1, 1}));
}

TEST(GoldRanking, TauAgainstGoldOfTheTruthItselfIsOne) {
  std::vector<double> L{120, 30, 31, 800, 400, 60};
  auto gold = goldRanking(L, 0.10);
  EXPECT_DOUBLE_EQ(*kendallTauB(gold, gold), 1.0);
  // A prediction that orders everything right but breaks the 30/31 tie:
  // still discordance-free, slightly below 1 because of the tie mismatch.
  double t = *kendallTauB({5, 1, 2, 20, 10, 3}, gold);
  EXPECT_GT(t, 0.9);
  EXPECT_LT(t, 1.0);
}
