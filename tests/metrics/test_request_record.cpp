#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/request_record.h"
#include "metrics/decimal.h"

namespace sl {
namespace {

SimTime s(double sec) { return secondsToNs(sec); }

RequestRecord reasoningRecord() {
  RequestRecord r;
  r.id = 42;
  r.arrival = s(1.0);
  r.input = 512;
  r.reasoning = 100;
  r.answer = 11;
  r.generated = 111;
  r.domain = 1;
  r.instance = 3;
  r.finished = true;
  r.first_token = s(1.2);
  r.reasoning_end = s(3.0);
  r.first_visible = s(3.3);
  r.last_token = s(4.3);
  r.queueing = s(0.15);
  r.blocking = s(0.25);
  r.preempted = s(0.5);
  r.swapped = s(0.4);
  r.migrating = s(0.05);
  r.preemptions = 2;
  r.migrations = 1;
  r.qoe = 0.875;
  return r;
}

TEST(RequestRecord, DerivedMetrics) {
  const RequestRecord r = reasoningRecord();
  EXPECT_NEAR(*r.ttft(), 2.3, 1e-12);
  EXPECT_NEAR(*r.tpot(), 0.1, 1e-12);
  EXPECT_NEAR(*r.ttfat(), 0.3, 1e-12);
  EXPECT_NEAR(*r.reasoningLatency(), 2.0, 1e-12);
  EXPECT_NEAR(*r.e2e(), 3.3, 1e-12);
  EXPECT_NEAR(*r.normalizedLatency(), 3.3 / 111, 1e-12);
  EXPECT_NEAR(*r.blockingLatency(), 0.25, 1e-12);
}

TEST(RequestRecord, UndefinedMetrics) {
  RequestRecord r;
  r.arrival = s(1);
  r.answer = 1;
  r.first_token = r.first_visible = r.last_token = s(1.5);
  EXPECT_FALSE(r.tpot().has_value());  // not finished
  r.finished = true;
  EXPECT_EQ(*r.tpot(), 0.0);           // single visible token
  EXPECT_NEAR(*r.ttft(), 0.5, 1e-12);
  EXPECT_FALSE(r.ttfat().has_value());  // R = 0
  EXPECT_FALSE(r.reasoningLatency().has_value());
  EXPECT_FALSE(r.blockingLatency().has_value());
  EXPECT_FALSE(r.hasQoe());
  RequestRecord w;  // never got a token
  EXPECT_FALSE(w.ttft().has_value());
  EXPECT_FALSE(w.e2e().has_value());
}

TEST(RequestRecord, SecondsFormatting) {
  std::string o;
  appendSecondsNs(1'234'567'891, o);
  EXPECT_EQ(o, "1.234568");
  o.clear();
  appendSecondsNs(499, o);
  EXPECT_EQ(o, "0.000000");
  o.clear();
  appendSecondsNs(500, o);
  EXPECT_EQ(o, "0.000001");
  o.clear();
  appendSecondsNs(-1'500, o);
  EXPECT_EQ(o, "-0.000002");
  o.clear();
  appendSecondsNs(12 * kNsPerSecond + 50'000, o);
  EXPECT_EQ(o, "12.000050");
  o.clear();
  appendFixed(-0.0000001, 6, o);
  EXPECT_EQ(o, "0.000000");
  o.clear();
  appendFixed(0.1, 6, o);
  EXPECT_EQ(o, "0.100000");
}

// The std::to_chars forms the fast writers replaced (issue 27): the same
// characters for every value.
std::string refInt(std::int64_t v) {
  char buf[24];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}
std::string refSecondsNs(SimTime ns) {
  const bool neg = ns < 0;
  const std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  const std::uint64_t us = mag / 1000 + (mag % 1000 >= 500 ? 1 : 0);
  std::string o = neg && us != 0 ? "-" : "";
  char buf[24];
  o.append(buf, std::to_chars(buf, buf + sizeof buf, us / 1'000'000).ptr);
  o += '.';
  const std::string frac(buf, std::to_chars(buf, buf + sizeof buf, us % 1'000'000).ptr);
  return o + std::string(6 - frac.size(), '0') + frac;
}
std::string refFixed(double v, int decimals) {
  if (!std::isfinite(v)) return "";
  if (v == 0) v = 0;
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (res.ec != std::errc()) res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, decimals);
  std::string_view s(buf, static_cast<std::size_t>(res.ptr - buf));
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-0.") == std::string_view::npos) s.remove_prefix(1);
  return std::string(s);
}

TEST(RequestRecord, FastWritersMatchToChars) {
  std::mt19937_64 rng(27);
  const auto check = [](auto append, const std::string& want, auto v) {
    std::string o = "x";  // appends, keeps what is there
    append(o);
    ASSERT_EQ(o, "x" + want) << v;
  };
  std::vector<std::int64_t> ints = {0, 1, -1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 123456789,
                                    std::numeric_limits<std::int64_t>::max(),
                                    std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::min() + 1};
  for (std::int64_t p = 1; p > 0 && p <= std::numeric_limits<std::int64_t>::max() / 10; p *= 10)
    for (std::int64_t d : {-1, 0, 1}) ints.push_back(p + d), ints.push_back(-(p + d));
  for (int k = 0; k < 200000; ++k) {
    const auto bits = rng();
    ints.push_back(static_cast<std::int64_t>(bits >> (bits % 64)));
  }
  for (std::int64_t v : ints) {
    check([&](std::string& o) { appendInt(v, o); }, refInt(v), v);
    check([&](std::string& o) { appendSecondsNs(v, o); }, refSecondsNs(v), v);
  }
  // Doubles: random magnitudes and bit patterns, exact ties at 6 decimals
  // (odd multiples of 2^-7 .. 2^-12 end in a 5 at the 7th decimal or
  // beyond), values next to them, huge and tiny ones, NaN and infinities.
  std::vector<double> ds = {0.0, -0.0, 0.1, -0.0000001, 0.0000005, 0.0000015, 0.0078125, -0.0078125,
                            1e-300, 5e-324, -5e-324, 9.2e18, 9.3e18, 1e19, 1e55, -1e60, 1e300,
                            std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(), 0x1p63, -0x1p63,
                            std::nextafter(0x1p63, 0.0)};
  for (int k = 1; k < 20000; k += 2)
    for (int sh : {7, 8, 9, 10, 11, 12, 20}) {
      const double t = std::ldexp(static_cast<double>(k), -sh);
      ds.push_back(t);
      ds.push_back(-t);
      ds.push_back(std::nextafter(t, 0.0));
      ds.push_back(std::nextafter(t, 1e9));
    }
  std::uniform_real_distribution<double> expo(-30, 20);
  for (int k = 0; k < 200000; ++k) {
    ds.push_back(std::pow(10.0, expo(rng)) * (k % 2 ? 1 : -1));
    ds.push_back(std::bit_cast<double>(rng()));
  }
  for (double v : ds)
    for (int dec : {0, 1, 3, 6, 9, 12}) check([&](std::string& o) { appendFixed(v, dec, o); }, refFixed(v, dec), v);
  // appendDecimal(ns, 3) is trace.json's microseconds: the double form's text
  // below 4e15 ns.
  for (std::int64_t v : ints)
    if (v > -4'000'000'000'000'000 && v < 4'000'000'000'000'000)
      check([&](std::string& o) { appendDecimal(v, 3, o); }, refFixed(static_cast<double>(v) / 1000.0, 3), v);
  for (std::int64_t v : {std::int64_t{3'999'999'999'999'999}, std::int64_t{-3'999'999'999'999'999},
                         std::int64_t{3'999'999'999'999'500}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{999}})
    check([&](std::string& o) { appendDecimal(v, 3, o); }, refFixed(static_cast<double>(v) / 1000.0, 3), v);
  std::string o;
  appendDecimal(-1234567, 6, o);
  EXPECT_EQ(o, "-1.234567");
  o.clear();
  appendDecimal(42, 0, o);
  EXPECT_EQ(o, "42");
}

TEST(RequestRecord, CsvRow) {
  const std::vector<std::string> domains{"math", "code,x"};
  std::string out;
  appendRequestCsvRow(reasoningRecord(), out, domains);
  EXPECT_EQ(out,
            "42,1.000000,512,100,11,,111,\"code,x\",3,1,"
            "1.200000,3.000000,3.300000,4.300000,"
            "2.300000,0.100000,0.300000,2.000000,0.250000,3.300000,0.029730,"
            "0.150000,0.500000,0.400000,0.050000,0.000000,2,1,0.875000\n");

  RequestRecord inflight;
  inflight.id = 7;
  inflight.arrival = s(2.5);
  inflight.input = 10;
  inflight.answer = 5;
  inflight.predicted = 9;
  out.clear();
  appendRequestCsvRow(inflight, out);
  EXPECT_EQ(out, "7,2.500000,10,0,5,9,0,,,0,,,,,,,,,,,,0.000000,0.000000,0.000000,0.000000,0.000000,0,0,\n");
}

TEST(RequestRecord, HeaderMatchesRowWidth) {
  const std::string h = requestsCsvHeader();
  std::string row;
  appendRequestCsvRow(reasoningRecord(), row);
  EXPECT_EQ(std::count(h.begin(), h.end(), ','), std::count(row.begin(), row.end(), ','));
  EXPECT_EQ(h.rfind("id,arrival_s,", 0), 0u);
  for (const char* col : {"ttft_s", "tpot_s", "ttfat_s", "reasoning_s", "blocking_s", "e2e_s",
                          "normalized_latency_s", "queueing_s", "preempted_s", "swapped_s",
                          "migrating_s", "preemptions", "migrations", "qoe"})
    EXPECT_NE(h.find(col), std::string::npos) << col;
  EXPECT_EQ(h.back(), '\n');
}

}  // namespace
}  // namespace sl
