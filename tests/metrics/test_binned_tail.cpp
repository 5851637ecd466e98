#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metrics/binned_tail.h"
#include "metrics/summary.h"

namespace sl {
namespace {

TEST(BinnedTail, RuleBoundaries) {
  EXPECT_STREQ(tailRule(4), "");
  EXPECT_STREQ(tailRule(5), "max");
  EXPECT_STREQ(tailRule(9), "max");
  EXPECT_STREQ(tailRule(10), "p90");
  EXPECT_STREQ(tailRule(19), "p90");
  EXPECT_STREQ(tailRule(20), "p95");
  EXPECT_STREQ(tailRule(99), "p95");
  EXPECT_STREQ(tailRule(100), "p99");
}

void addBin(std::vector<std::pair<std::int64_t, double>>& v, std::int64_t lo, int n) {
  // Values n, n-1, ..., 1 (unsorted input) at reasoning lengths spread over the bin.
  for (int i = n; i >= 1; --i) v.emplace_back(lo + (i * 37) % 256, static_cast<double>(i));
}

TEST(BinnedTail, EachRuleAndDroppedBin) {
  std::vector<std::pair<std::int64_t, double>> v;
  addBin(v, 0, 4);      // dropped
  addBin(v, 256, 7);    // max
  addBin(v, 512, 15);   // p90: h = 12.6 -> 13.6
  addBin(v, 768, 50);   // p95: h = 46.55 -> 47.55
  addBin(v, 1280, 100); // p99: h = 98.01 -> 99.01
  const auto bins = binnedTailTtft(v);
  ASSERT_EQ(bins.size(), 4u);
  EXPECT_EQ(bins[0].bin_lo, 256);
  EXPECT_EQ(bins[0].bin_hi, 512);
  EXPECT_EQ(bins[0].n, 7);
  EXPECT_EQ(bins[0].rule, "max");
  EXPECT_DOUBLE_EQ(bins[0].value, 7.0);
  EXPECT_EQ(bins[1].rule, "p90");
  EXPECT_NEAR(bins[1].value, 13.6, 1e-12);
  EXPECT_EQ(bins[2].rule, "p95");
  EXPECT_NEAR(bins[2].value, 47.55, 1e-12);
  EXPECT_EQ(bins[3].bin_lo, 1280);
  EXPECT_EQ(bins[3].n, 100);
  EXPECT_EQ(bins[3].rule, "p99");
  EXPECT_NEAR(bins[3].value, 99.01, 1e-12);

  EXPECT_EQ(binnedTailCsv({bins[0], bins[1]}),
            "bin_lo,bin_hi,n,rule,ttft_s\n256,512,7,max,7.000000\n512,768,15,p90,13.600000\n");
}

TEST(BinnedTail, BinEdgesAndRecords) {
  std::vector<RequestRecord> recs;
  for (int i = 0; i < 5; ++i) {
    RequestRecord r;
    r.finished = true;
    r.arrival = 0;
    r.reasoning = i < 4 ? 255 : 256;  // 4 in bin 0 (dropped), 1 in bin 1
    r.first_visible = secondsToNs(1.0 + i);
    recs.push_back(r);
  }
  EXPECT_TRUE(binnedTailTtft(recs).empty());
  recs[4].reasoning = 0;  // now 5 in bin 0 -> max = 5.0
  RequestRecord unfinished = recs[0];
  unfinished.finished = false;
  unfinished.first_visible = secondsToNs(100);
  recs.push_back(unfinished);  // ignored
  const auto bins = binnedTailTtft(recs);
  ASSERT_EQ(bins.size(), 1u);
  EXPECT_EQ(bins[0].bin_lo, 0);
  EXPECT_EQ(bins[0].bin_hi, 256);
  EXPECT_EQ(bins[0].n, 5);
  EXPECT_NEAR(bins[0].value, 5.0, 1e-12);
}


// The per-bin statistic (selection, not sorting) equals percentileSorted on
// the sorted bin, exactly, for every rule and many bin sizes.
TEST(BinnedTail, SelectionEqualsSortedPercentiles) {
  std::vector<std::pair<std::int64_t, double>> samples;
  std::uint64_t x = 88172645463325252ull;  // xorshift: deterministic data with ties
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const std::int64_t reasoning = static_cast<std::int64_t>((x >> 8) % 40000) % (1 + (i % 97) * 64);
    samples.emplace_back(reasoning, static_cast<double>((x >> 20) % 5000) / 100.0);
  }
  for (int j = 0; j < 7; ++j) samples.emplace_back(900000, 1.5 * j);    // a "max" bin
  for (int j = 0; j < 15; ++j) samples.emplace_back(950000, 0.5 * j);   // a "p90" bin
  const auto bins = binnedTailTtft(samples);
  ASSERT_GT(bins.size(), 20u);
  std::map<std::int64_t, std::vector<double>> ref;
  for (const auto& [r, t] : samples) ref[r / kTailBinWidth].push_back(t);
  std::set<std::string> rules;
  for (const TailBin& b : bins) {
    std::vector<double> v = ref.at(b.bin_lo / kTailBinWidth);
    std::sort(v.begin(), v.end());
    ASSERT_EQ(b.n, static_cast<std::int64_t>(v.size()));
    const double want = b.rule == "max" ? v.back()
                        : b.rule == "p90" ? percentileSorted(v, 0.90)
                        : b.rule == "p95" ? percentileSorted(v, 0.95)
                                          : percentileSorted(v, 0.99);
    EXPECT_EQ(b.value, want) << b.bin_lo << " " << b.rule;
    rules.insert(b.rule);
  }
  EXPECT_EQ(rules.size(), 4u);
}

}  // namespace
}  // namespace sl
