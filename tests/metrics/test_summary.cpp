#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "metrics/summary.h"
#include "util/radix_sort.h"

namespace sl {
namespace {

SimTime s(double sec) { return secondsToNs(sec); }

TEST(Percentiles, KnownArrays) {
  std::vector<double> v{5, 1, 4, 2, 3};
  const LatencyStats st = computeStats(v);
  EXPECT_EQ(st.n, 5);
  EXPECT_DOUBLE_EQ(st.mean, 3.0);
  EXPECT_DOUBLE_EQ(st.p50, 3.0);
  EXPECT_DOUBLE_EQ(st.p90, 4.6);   // h = 3.6
  EXPECT_DOUBLE_EQ(st.p95, 4.8);
  EXPECT_DOUBLE_EQ(st.p99, 4.96);
  EXPECT_DOUBLE_EQ(st.max, 5.0);

  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  const LatencyStats h = computeStats(hundred);
  EXPECT_DOUBLE_EQ(h.p50, 50.5);
  EXPECT_NEAR(h.p99, 99.01, 1e-12);
  EXPECT_NEAR(h.p90, 90.1, 1e-12);

  std::vector<double> one{7};
  const LatencyStats o = computeStats(one);
  EXPECT_EQ(o.p50, 7);
  EXPECT_EQ(o.p99, 7);
  std::vector<double> none;
  EXPECT_EQ(computeStats(none).n, 0);
  EXPECT_TRUE(std::isnan(percentileSorted({}, 0.5)));
}

std::vector<RequestRecord> handBuilt() {
  std::vector<RequestRecord> v;
  RequestRecord r1;  // R = 0, A = 3: ttft 0.5, tpot 0.1, not QoE-scored
  r1.id = 1;
  r1.arrival = 0;
  r1.answer = 3;
  r1.generated = 3;
  r1.finished = true;
  r1.first_token = r1.first_visible = s(0.5);
  r1.last_token = s(0.7);
  r1.queueing = s(0.2);
  v.push_back(r1);
  RequestRecord r2;  // R = 10, A = 2: ttft 1.1, tpot 0.4, ttfat 0.1, reasoning 1.0, qoe 0.9
  r2.id = 2;
  r2.arrival = s(1);
  r2.reasoning = 10;
  r2.answer = 2;
  r2.generated = 12;
  r2.finished = true;
  r2.first_token = s(1.1);
  r2.reasoning_end = s(2.0);
  r2.first_visible = s(2.1);
  r2.last_token = s(2.5);
  r2.blocking = s(0.05);
  r2.qoe = 0.9;
  r2.preemptions = 1;
  v.push_back(r2);
  RequestRecord r3;  // R = 0, A = 1: ttft 0.2, tpot 0, qoe 1
  r3.id = 3;
  r3.arrival = s(2);
  r3.answer = 1;
  r3.generated = 1;
  r3.finished = true;
  r3.first_token = r3.first_visible = r3.last_token = s(2.2);
  r3.qoe = 1.0;
  v.push_back(r3);
  RequestRecord r4;  // in flight at the end
  r4.id = 4;
  r4.arrival = s(3);
  r4.reasoning = 100;
  r4.answer = 50;
  r4.generated = 40;
  r4.first_token = s(3.5);
  r4.preemptions = 2;
  r4.migrations = 1;
  v.push_back(r4);
  return v;
}

TEST(Summary, HandBuiltRecords) {
  SloSpec slo;  // TTFT / TPOT unset, QoE threshold 0.95
  const Summary sm = summarize(handBuilt(), 5, s(10), slo);
  EXPECT_EQ(sm.arrived, 5);
  EXPECT_EQ(sm.finished, 3);
  EXPECT_EQ(sm.in_flight, 2);
  EXPECT_EQ(sm.ttft_s.n, 3);
  EXPECT_NEAR(sm.ttft_s.mean, (0.5 + 1.1 + 0.2) / 3, 1e-12);
  EXPECT_NEAR(sm.ttft_s.p50, 0.5, 1e-12);
  EXPECT_NEAR(sm.ttft_s.max, 1.1, 1e-12);
  EXPECT_NEAR(sm.tpot_s.mean, (0.1 + 0.4 + 0.0) / 3, 1e-12);
  EXPECT_EQ(sm.ttfat_s.n, 1);
  EXPECT_NEAR(sm.ttfat_s.p99, 0.1, 1e-12);
  EXPECT_NEAR(sm.reasoning_s.max, 1.0, 1e-12);
  EXPECT_EQ(sm.blocking_s.n, 1);
  EXPECT_NEAR(sm.blocking_s.mean, 0.05, 1e-12);
  EXPECT_EQ(sm.queueing_s.n, 3);
  EXPECT_NEAR(sm.queueing_s.max, 0.2, 1e-12);
  EXPECT_NEAR(sm.e2e_s.max, 1.5, 1e-12);
  EXPECT_EQ(sm.qoe_n, 2);
  EXPECT_NEAR(sm.qoe_mean, 0.95, 1e-12);
  EXPECT_NEAR(sm.qoe_violation_rate, 0.5, 1e-12);
  // r2 misses the QoE threshold.
  EXPECT_EQ(sm.slo_met, 2);
  EXPECT_NEAR(sm.slo_attainment, 2.0 / 3, 1e-12);
  EXPECT_NEAR(sm.goodput_rps, 0.2, 1e-12);
  EXPECT_EQ(sm.output_tokens, 56);
  EXPECT_NEAR(sm.tokens_per_s, 5.6, 1e-12);
  EXPECT_NEAR(sm.requests_per_s, 0.3, 1e-12);
  EXPECT_EQ(sm.preemptions, 3);
  EXPECT_EQ(sm.migrations, 1);
  EXPECT_DOUBLE_EQ(sm.sim_s, 10.0);
}

// Input tokens count a request once its prefill is done (its first token
// is out): r1..r4 have one, a queued request without one does not.
TEST(Summary, InputTokensCountPrefilledRequests) {
  std::vector<RequestRecord> v = handBuilt();
  for (std::size_t i = 0; i < v.size(); ++i) v[i].input = static_cast<std::int32_t>(100 * (i + 1));
  RequestRecord queued;
  queued.id = 99;
  queued.arrival = s(9.5);
  queued.input = 5000;
  v.push_back(queued);
  SloSpec slo;
  const Summary sm = summarize(v, 6, s(10), slo);
  EXPECT_EQ(sm.input_tokens, 100 + 200 + 300 + 400);
  EXPECT_NEAR(sm.input_tokens_per_s, 1000.0 / 10.0, 1e-12);
  EXPECT_NEAR(summaryToJson(sm)["throughput"]["input_tokens_per_s"].get<double>(), 100.0, 1e-12);
  // A window from 1 s, with r1's 100 prompt tokens prefilled before it.
  MeasureWindow w;
  w.start = s(1);
  w.end = s(10);
  w.arrivedBefore = 1;
  w.inputBefore = 100;
  const Summary ws = summarize(v, 6, s(10), slo, &w);
  EXPECT_EQ(ws.input_tokens, 900);
  EXPECT_NEAR(ws.input_tokens_per_s, 900.0 / 9.0, 1e-12);
}

// A measurement window [1, 10) s over the same records: r1 (finished at
// 0.7 s) is outside it; r2 and r3 finish inside; r4 is in flight at the end.
// The totals at the window's start: 1 arrival (r1), its 3 tokens, 1
// preemption of r2 (before the window), no migration.
TEST(Summary, MeasurementWindowCountsOnlyTheWindow) {
  SloSpec slo;
  MeasureWindow w;
  w.start = s(1);
  w.end = s(10);
  w.arrivedBefore = 1;
  w.tokensBefore = 3;
  w.preemptionsBefore = 1;
  const Summary sm = summarize(handBuilt(), 5, s(10), slo, &w);
  EXPECT_TRUE(sm.windowed);
  EXPECT_EQ(sm.arrived, 4);     // 5 arrived, 1 before the window
  EXPECT_EQ(sm.finished, 2);    // r2, r3
  EXPECT_EQ(sm.in_flight, 2);   // 5 arrived - 3 finished in all: at the end
  EXPECT_EQ(sm.ttft_s.n, 2);
  EXPECT_NEAR(sm.ttft_s.mean, (1.1 + 0.2) / 2, 1e-12);
  EXPECT_EQ(sm.queueing_s.n, 2);
  EXPECT_NEAR(sm.queueing_s.max, 0.0, 1e-12);  // r1's 0.2 s is outside
  EXPECT_EQ(sm.slo_met, 1);     // r3 (r2 misses QoE)
  EXPECT_NEAR(sm.slo_attainment, 0.5, 1e-12);
  EXPECT_EQ(sm.output_tokens, 53);  // 56 in all, 3 before the window
  EXPECT_NEAR(sm.tokens_per_s, 53.0 / 9.0, 1e-12);  // over the window's 9 s, not the run's 10
  EXPECT_NEAR(sm.requests_per_s, 2.0 / 9.0, 1e-12);
  EXPECT_NEAR(sm.goodput_rps, 1.0 / 9.0, 1e-12);
  EXPECT_EQ(sm.preemptions, 2);
  EXPECT_EQ(sm.migrations, 1);
  EXPECT_DOUBLE_EQ(sm.sim_s, 10.0);
  const auto j = summaryToJson(sm);
  ASSERT_TRUE(j.contains("measure"));
  EXPECT_DOUBLE_EQ(j["measure"]["start_s"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["measure"]["end_s"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["measure"]["window_s"].get<double>(), 9.0);
  EXPECT_NE(formatSummaryTable(sm).find("window          [1.000, 10.000) s"), std::string::npos);
  // Without a window: no "measure" key, no window line.
  const Summary plain = summarize(handBuilt(), 5, s(10), slo);
  EXPECT_FALSE(summaryToJson(plain).contains("measure"));
  EXPECT_EQ(formatSummaryTable(plain).find("window "), std::string::npos);
}

// The window's start edge (mutant window-finished-edge): a request whose
// last token is exactly at the window's start finished in the window, one
// finishing 1 ns earlier did not.
TEST(Summary, FinishingExactlyAtTheWindowStartCounts) {
  std::vector<RequestRecord> v;
  for (const SimTime end : {s(1) - 1, s(1)}) {
    RequestRecord r;
    r.id = static_cast<std::int64_t>(v.size());
    r.arrival = s(0.5);
    r.answer = 1;
    r.generated = 1;
    r.finished = true;
    r.first_token = r.first_visible = r.last_token = end;
    r.qoe = 1.0;
    v.push_back(r);
  }
  MeasureWindow w;
  w.start = s(1);
  w.end = s(2);
  w.arrivedBefore = 2;
  w.tokensBefore = 1;
  const Summary sm = summarize(v, 2, s(2), SloSpec{}, &w);
  EXPECT_EQ(sm.finished, 1);
  EXPECT_EQ(sm.ttft_s.n, 1);
  EXPECT_NEAR(sm.ttft_s.max, 0.5, 1e-12);
}

TEST(Summary, SloAttainmentWithTtftAndTpot) {
  const auto recs = handBuilt();
  SloSpec slo;
  slo.qoe_threshold = 0.85;  // every scored QoE passes
  EXPECT_NEAR(summarize(recs, 4, s(10), slo).slo_attainment, 1.0, 1e-12);
  slo.ttft_s = 1.0;  // r2 (1.1) misses
  EXPECT_EQ(summarize(recs, 4, s(10), slo).slo_met, 2);
  slo.ttft_s = 0.4;  // r1 (0.5) and r2 miss
  EXPECT_EQ(summarize(recs, 4, s(10), slo).slo_met, 1);
  slo.ttft_s.reset();
  slo.tpot_s = 0.05;  // r1 (0.1) and r2 (0.4) miss, r3 (0) passes
  const Summary sm = summarize(recs, 4, s(10), slo);
  EXPECT_EQ(sm.slo_met, 1);
  EXPECT_NEAR(sm.slo_attainment, 1.0 / 3, 1e-12);
  EXPECT_NEAR(sm.goodput_rps, 0.1, 1e-12);
  EXPECT_FALSE(meetsSlo(recs[3], SloSpec{}));  // unfinished never counts
}

TEST(Summary, JsonGroupsAndNulls) {
  std::vector<RequestRecord> recs = handBuilt();
  recs.erase(recs.begin() + 1);  // no reasoning request left finished
  const auto j = summaryToJson(summarize(recs, 3, s(4), SloSpec{}));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  const std::vector<std::string> want{"requests", "ttft_s", "tpot_s", "ttfat_s", "reasoning_s",
                                      "e2e_s", "blocking_s", "queueing_s", "qoe", "slo_attainment",
                                      "goodput_rps", "throughput", "preemptions", "migrations", "sim_s"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(j["requests"]["arrived"], 3);
  EXPECT_EQ(j["requests"]["finished"], 2);
  EXPECT_EQ(j["requests"]["in_flight"], 1);
  EXPECT_TRUE(j["ttfat_s"]["mean"].is_null());
  EXPECT_TRUE(j["ttfat_s"]["p99"].is_null());
  EXPECT_EQ(j["ttfat_s"]["n"], 0);
  EXPECT_NEAR(j["ttft_s"]["max"].get<double>(), 0.5, 1e-12);
  std::vector<std::string> statKeys;
  for (auto it = j["ttft_s"].begin(); it != j["ttft_s"].end(); ++it) statKeys.push_back(it.key());
  EXPECT_EQ(statKeys, (std::vector<std::string>{"mean", "p50", "p90", "p95", "p99", "max", "n"}));
  EXPECT_NEAR(j["qoe"]["mean"].get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(j["qoe"]["violation_rate"].get<double>(), 0.0, 1e-12);
  EXPECT_NEAR(j["throughput"]["tokens_per_s"].get<double>(), 44.0 / 4, 1e-12);
  EXPECT_EQ(j["preemptions"], 2);

  const auto empty = summaryToJson(summarize({}, 0, 0, SloSpec{}));
  EXPECT_TRUE(empty["slo_attainment"].is_null());
  EXPECT_TRUE(empty["qoe"]["mean"].is_null());
  EXPECT_TRUE(empty["throughput"]["tokens_per_s"].is_null());
  EXPECT_EQ(empty["requests"]["in_flight"], 0);
}

TEST(Summary, TableHasRowsAndValues) {
  const std::string t = formatSummaryTable(summarize(handBuilt(), 5, s(10), SloSpec{}));
  EXPECT_NE(t.find("metric (ms)"), std::string::npos);
  EXPECT_NE(t.find("ttft"), std::string::npos);
  EXPECT_NE(t.find("1100.0"), std::string::npos);  // ttft max in ms
  EXPECT_NE(t.find("66.67 %"), std::string::npos);  // SLO attainment
  EXPECT_NE(t.find("5.6 tok/s"), std::string::npos);
  EXPECT_NE(t.find("in flight 2"), std::string::npos);
  // Aligned: the header and every metric row have the same width.
  const auto firstNl = t.find('\n');
  const auto secondNl = t.find('\n', firstNl + 1);
  EXPECT_EQ(firstNl, secondNl - firstNl - 1);
}


// sortAscending (the radix sort under computeStats) gives std::sort's order,
// bit for bit, for sizes on both sides of its thresholds and for values
// sharing high bytes (latencies), mixed signs, zeros, infinities, ties.
TEST(Summary, SortAscendingMatchesStdSort) {
  std::mt19937_64 rng(27);
  const auto check = [](std::vector<double> v) {
    std::vector<double> want = v;
    std::sort(want.begin(), want.end());
    sortAscending(v);
    ASSERT_EQ(v.size(), want.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(v[i]), std::bit_cast<std::uint64_t>(want[i])) << "at " << i;
  };
  for (const std::size_t n : {0u, 1u, 2u, 511u, 512u, 513u, 5000u, 100000u}) {
    std::vector<double> lat(n), mixed(n), ties(n);
    std::uniform_int_distribution<std::int64_t> ns(0, 600'000'000'000);
    std::uniform_int_distribution<int> pick(0, 9);
    for (std::size_t i = 0; i < n; ++i) {
      lat[i] = nsToSeconds(ns(rng));
      const double raw = std::bit_cast<double>(rng() & ~(std::uint64_t{0x7FF} << 52)) * 1e300;  // finite
      mixed[i] = pick(rng) == 0 ? std::numeric_limits<double>::infinity()
                 : pick(rng) == 1 ? -std::numeric_limits<double>::infinity()
                                  : raw;
      ties[i] = static_cast<double>(pick(rng)) / 8.0 - 0.5;
    }
    check(lat);
    check(mixed);
    check(ties);
  }
  std::vector<double> down(2000);
  for (std::size_t i = 0; i < down.size(); ++i) down[i] = 1.0 - static_cast<double>(i) * 1e-3;
  check(down);
}


// The summary fills every metric in its first pass when the records are few
// (<= 2^18) and two metrics a pass beyond: both give each metric exactly
// what computeStats gives over that metric's values alone.
TEST(Summary, OnePassAndTwoBufferPathsMatchPerMetricStats) {
  std::mt19937_64 rng(16);
  for (const int n : {3000, 300000}) {
    std::vector<RequestRecord> recs;
    recs.reserve(static_cast<std::size_t>(n));
    std::uniform_int_distribution<std::int64_t> ms(1, 90'000);
    for (int i = 0; i < n; ++i) {
      RequestRecord r;
      r.id = i;
      r.arrival = s(static_cast<double>(i) * 0.01);
      r.answer = static_cast<std::int32_t>(1 + i % 50);
      r.reasoning = i % 4 == 0 ? 100 : 0;
      r.generated = r.answer + r.reasoning;
      r.finished = i % 11 != 0;
      if (r.reasoning > 0) r.reasoning_end = r.arrival + ms(rng) * 1'000'000;
      r.first_visible = (r.reasoning > 0 ? r.reasoning_end : r.arrival) + ms(rng) * 1'000'000;
      r.last_token = r.finished ? r.first_visible + ms(rng) * 1'000'000 : kNoTime;
      r.queueing = ms(rng) * 1'000;
      if (i % 7 == 0) r.blocking = ms(rng) * 1'000'000;
      r.qoe = i % 3 == 0 ? static_cast<double>(ms(rng)) / 90'000.0 : -1.0;
      recs.push_back(r);
    }
    SloSpec slo;
    const Summary sm = summarize(recs, n, s(1e6), slo);
    const auto want = [&](auto get) {
      std::vector<double> v;
      for (const RequestRecord& r : recs)
        if (r.finished)
          if (const std::optional<double> x = get(r)) v.push_back(*x);
      return computeStats(v);
    };
    const auto same = [&](const LatencyStats& a, const LatencyStats& b, const char* what) {
      EXPECT_EQ(a.n, b.n) << what << " n=" << n;
      EXPECT_GT(a.n, 0) << what;
      for (const auto& [x, y] : {std::pair{a.mean, b.mean}, {a.p50, b.p50}, {a.p90, b.p90}, {a.p95, b.p95},
                                {a.p99, b.p99}, {a.max, b.max}})
        EXPECT_EQ(std::bit_cast<std::uint64_t>(x), std::bit_cast<std::uint64_t>(y)) << what << " n=" << n;
    };
    same(sm.ttft_s, want([](const RequestRecord& r) { return r.ttft(); }), "ttft");
    same(sm.tpot_s, want([](const RequestRecord& r) { return r.tpot(); }), "tpot");
    same(sm.ttfat_s, want([](const RequestRecord& r) { return r.ttfat(); }), "ttfat");
    same(sm.reasoning_s, want([](const RequestRecord& r) { return r.reasoningLatency(); }), "reasoning");
    same(sm.e2e_s, want([](const RequestRecord& r) { return r.e2e(); }), "e2e");
    same(sm.blocking_s, want([](const RequestRecord& r) { return r.blockingLatency(); }), "blocking");
    same(sm.queueing_s, want([](const RequestRecord& r) { return std::optional<double>(r.queueingS()); }),
         "queueing");
    const LatencyStats q =
        want([](const RequestRecord& r) { return r.hasQoe() ? std::optional<double>(r.qoe) : std::nullopt; });
    EXPECT_EQ(sm.qoe_n, q.n);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(sm.qoe_mean), std::bit_cast<std::uint64_t>(q.mean)) << n;
  }
}

}  // namespace
}  // namespace sl

// radixSortKeys on its own: std::sort's order for keys whose every byte
// varies, for small integers (most bytes shared, skipped) and for keys
// produced from the buffer's own contents (CascadeInfer's set division).
TEST(Summary, RadixSortKeysMatchesStdSort) {
  std::mt19937_64 rng(5);
  for (const std::size_t n : {0u, 1u, 2u, 3u, 255u, 256u, 4097u}) {
    std::vector<std::uint64_t> wide(n), small(n);
    for (std::size_t i = 0; i < n; ++i) {
      wide[i] = rng();
      small[i] = (rng() % 40000) << 32 | (rng() % 64);  // (length, prompt) keys with ties
    }
    for (const auto& in : {wide, small}) {
      std::vector<std::uint64_t> want = in;
      std::sort(want.begin(), want.end());
      std::vector<std::uint64_t> keys, tmp;
      sl::radixSortKeys(in.size(), [&](std::size_t i) { return in[i]; }, keys, tmp);
      EXPECT_EQ(keys, want) << "n " << n;
      keys = in;
      sl::radixSortKeys(keys.size(), [&](std::size_t i) { return keys[i]; }, keys, tmp);
      EXPECT_EQ(keys, want) << "in place, n " << n;
    }
  }
}
