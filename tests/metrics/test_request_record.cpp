#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "metrics/request_record.h"

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
