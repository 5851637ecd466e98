// Trace readers on small hand-written files: Azure, BurstGPT (v1 and v3),
// Mooncake; the shared rules (time base, order, window, time_scale,
// max_requests, duration, lenient) and format auto-detection.
#include <gtest/gtest.h>

#include <sstream>

#include "trace_test_util.h"
#include "workload/azure_trace.h"
#include "workload/burstgpt_trace.h"
#include "workload/mooncake_trace.h"
#include "workload/trace_formats.h"

using namespace sl;
using sl::tracetest::drain;
using sl::tracetest::inputErrorOf;
using sl::tracetest::TempDir;

namespace {

constexpr SimTime kS = kNsPerSecond;

template <class Reader>
std::vector<RequestSpec> readText(const std::string& text, const std::string& name, const TraceOptions& o = {}) {
  Reader rd(std::make_unique<std::istringstream>(text), name, o);
  return drain(rd);
}

template <class Reader>
std::string errorOf(const std::string& text, const std::string& name) {
  return inputErrorOf([&] { readText<Reader>(text, name); });
}

std::string azureErr(const std::string& rows) {
  return errorOf<AzureTraceReader>("TIMESTAMP,ContextTokens,GeneratedTokens\n" + rows, "mem.csv");
}
std::string burstErr(const std::string& rows) {
  return errorOf<BurstGptTraceReader>("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" + rows,
                                      "mem.csv");
}
std::string moonErr(const std::string& rows) { return errorOf<MooncakeTraceReader>(rows, "mem.jsonl"); }

// The same five requests in every format: file times 0, 1, 2, 4, 8 s,
// inputs 10..50, outputs 5..9.
const char* kAzure5 =
    "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
    "2024-02-28 23:59:58.0000000,10,5\r\n"
    "2024-02-28 23:59:59.0000000,20,6\r\n"
    "2024-02-29 00:00:00,30,7\r\n"  // leap day, no fraction
    "2024-02-29 00:00:02.0,40,8\r\n"
    "2024-02-29 00:00:06.000000000,50,9\r\n";
const char* kBurst5 =
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "100,ChatGPT,10,5,15,Conversation log\n"
    "101,ChatGPT,20,6,26,Conversation log\n"
    "102.0,GPT-4,30,7,37,API log\n"
    "104,ChatGPT,40,8,48,Conversation log\n"
    "108,ChatGPT,50,9,59,Conversation log\n";
const char* kMoon5 =
    "{\"timestamp\": 5000, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0]}\n"
    "{\"timestamp\": 6000, \"input_length\": 20, \"output_length\": 6, \"hash_ids\": [0, 1]}\n"
    "{\"timestamp\": 7000, \"input_length\": 30, \"output_length\": 7, \"hash_ids\": [0, 1]}\n"
    "{\"timestamp\": 9000, \"input_length\": 40, \"output_length\": 8, \"hash_ids\": [2]}\n"
    "{\"timestamp\": 13000, \"input_length\": 50, \"output_length\": 9, \"hash_ids\": [3]}\n";

struct Fmt {
  const char* format;
  const char* file;
  const char* text;
};
const Fmt kFormats[] = {{"azure", "t.csv", kAzure5}, {"burstgpt", "t.csv", kBurst5}, {"mooncake", "t.jsonl", kMoon5}};

std::unique_ptr<WorkloadSource> openText(const Fmt& f, const TraceOptions& o) {
  auto in = std::make_unique<std::istringstream>(f.text);
  const std::string fmt = f.format;
  if (fmt == "azure") return std::make_unique<AzureTraceReader>(std::move(in), f.file, o);
  if (fmt == "burstgpt") return std::make_unique<BurstGptTraceReader>(std::move(in), f.file, o);
  return std::make_unique<MooncakeTraceReader>(std::move(in), f.file, o);
}

std::vector<SimTime> arrivals(const std::vector<RequestSpec>& v) {
  std::vector<SimTime> a;
  for (const auto& r : v) a.push_back(r.arrival);
  return a;
}
std::vector<int> inputs(const std::vector<RequestSpec>& v) {
  std::vector<int> a;
  for (const auto& r : v) a.push_back(r.input);
  return a;
}

}  // namespace

// ---- shared rules, every format -------------------------------------------------

class EveryFormat : public ::testing::TestWithParam<Fmt> {};

TEST_P(EveryFormat, TimelineStartsAtTheFirstRow) {
  auto src = openText(GetParam(), {});
  const auto v = drain(*src);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(arrivals(v), (std::vector<SimTime>{0, 1 * kS, 2 * kS, 4 * kS, 8 * kS}));
  EXPECT_EQ(inputs(v), (std::vector<int>{10, 20, 30, 40, 50}));
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].id, static_cast<std::int64_t>(i));
    EXPECT_EQ(v[i].reasoning, 0);
    EXPECT_EQ(v[i].answer, static_cast<int>(5 + i));
    EXPECT_EQ(v[i].domain, -1);
  }
  const TraceStats* st = traceStatsOf(*src);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->format, GetParam().format);
  EXPECT_EQ(st->rows, 5);
  EXPECT_EQ(st->emitted, 5);
  EXPECT_EQ(st->skipped(), 0);
  EXPECT_EQ(src->expectedCount(), -1);
}

TEST_P(EveryFormat, TimeScaleHalfHalvesTheGaps) {
  TraceOptions o;
  o.time_scale = 0.5;
  auto src = openText(GetParam(), o);
  EXPECT_EQ(arrivals(drain(*src)), (std::vector<SimTime>{0, kS / 2, 1 * kS, 2 * kS, 4 * kS}));
  o.time_scale = 3;
  src = openText(GetParam(), o);
  EXPECT_EQ(arrivals(drain(*src)), (std::vector<SimTime>{0, 3 * kS, 6 * kS, 12 * kS, 24 * kS}));
}

TEST_P(EveryFormat, WindowKeepsStartToEndAndShifts) {
  TraceOptions o;
  o.window_start_s = 1;
  o.window_end_s = 4;  // [1, 4): the rows at 1 and 2
  auto src = openText(GetParam(), o);
  const auto v = drain(*src);
  EXPECT_EQ(arrivals(v), (std::vector<SimTime>{0, 1 * kS}));
  EXPECT_EQ(inputs(v), (std::vector<int>{20, 30}));
  EXPECT_EQ(v[0].id, 0);
  EXPECT_EQ(traceStatsOf(*src)->before_window, 1);
  // Window, then scale.
  o = {};
  o.window_start_s = 2;
  o.time_scale = 0.5;
  src = openText(GetParam(), o);
  EXPECT_EQ(arrivals(drain(*src)), (std::vector<SimTime>{0, 1 * kS, 3 * kS}));
  // A window past the end: nothing.
  o = {};
  o.window_start_s = 100;
  src = openText(GetParam(), o);
  EXPECT_TRUE(drain(*src).empty());
  EXPECT_EQ(traceStatsOf(*src)->before_window, 5);
}

TEST_P(EveryFormat, MaxRequestsAndDuration) {
  TraceOptions o;
  o.max_requests = 3;
  auto src = openText(GetParam(), o);
  EXPECT_EQ(inputs(drain(*src)), (std::vector<int>{10, 20, 30}));
  RequestSpec r;
  EXPECT_FALSE(src->next(r));  // stays exhausted
  o.max_requests = 0;
  src = openText(GetParam(), o);
  EXPECT_TRUE(drain(*src).empty());
  o = {};
  o.duration_s = 3.5;  // stops at the first arrival after it (4 s)
  src = openText(GetParam(), o);
  EXPECT_EQ(arrivals(drain(*src)), (std::vector<SimTime>{0, 1 * kS, 2 * kS}));
  o.duration_s = 4.0;  // an arrival exactly at the duration is kept
  src = openText(GetParam(), o);
  EXPECT_EQ(drain(*src).size(), 4u);
}

TEST_P(EveryFormat, ContextWindowClipsAndCounts) {
  TraceOptions o;
  o.max_context = 36;  // input 40 -> 35 and answer 1; input 50 likewise; 30+7 = 37 -> reasoning 0, answer 6
  auto src = openText(GetParam(), o);
  const auto v = drain(*src);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[2].input, 30);
  EXPECT_EQ(v[2].answer, 6);
  EXPECT_EQ(v[3].input, 35);
  EXPECT_EQ(v[3].answer, 1);
  EXPECT_EQ(traceStatsOf(*src)->context_clipped, 3);
}

TEST_P(EveryFormat, AutoDetectionAndOpenTraceWorkload) {
  TempDir dir;
  const std::string path = dir.write(GetParam().file, GetParam().text);
  EXPECT_EQ(detectTraceFormat(path), GetParam().format);
  TraceSpec t;
  t.path = GetParam().file;  // relative: resolved against base_dir
  t.time_scale = 0.5;
  t.max_requests = 4;
  auto src = openTraceWorkload(t, dir.str(), 131072, std::nullopt);
  const auto v = drain(*src);
  EXPECT_EQ(arrivals(v), (std::vector<SimTime>{0, kS / 2, 1 * kS, 2 * kS}));
  ASSERT_NE(traceStatsOf(*src), nullptr);
  EXPECT_EQ(traceStatsOf(*src)->format, GetParam().format);
  // The explicit format gives the same.
  t.format = GetParam().format;
  auto again = openTraceWorkload(t, dir.str(), 131072, std::nullopt);
  EXPECT_EQ(drain(*again), v);
  // makeWorkload takes the trace path too.
  WorkloadSpec w;
  w.trace = t;
  auto viaMake = makeWorkload(w, 1, 131072, dir.str(), std::nullopt);
  EXPECT_EQ(drain(*viaMake), v);
}

TEST_P(EveryFormat, StatsHandleOutlivesTheReader) {
  std::shared_ptr<const TraceStats> h;
  {
    auto src = openText(GetParam(), {});
    h = static_cast<TraceReader&>(*src).statsHandle();
    RequestSpec r;
    ASSERT_TRUE(src->next(r));
    EXPECT_EQ(h->emitted, 1);
    drain(*src);
  }
  EXPECT_EQ(h->emitted, 5);
}

INSTANTIATE_TEST_SUITE_P(Traces, EveryFormat, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(info.param.format); });

// ---- Azure --------------------------------------------------------------------------

TEST(AzureTrace, ExactNanosecondsAcrossMidnight) {
  const auto v = readText<AzureTraceReader>(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-12-31 23:59:59.9999999,100,10\n"
      "2024-01-01 00:00:00.0000001,200,20\n"
      "2024-01-01 00:00:01.5,300,30\n"
      "2024-01-01 00:00:02.123456789,1,1\n",
      "mem.csv");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].arrival, 0);
  EXPECT_EQ(v[1].arrival, 200);
  EXPECT_EQ(v[2].arrival, 1'500'000'100);
  EXPECT_EQ(v[3].arrival, 2'123'456'889);  // all nine fraction digits
}

TEST(AzureTrace, ColumnsByNameAnyCaseAnyOrder) {
  const auto v = readText<AzureTraceReader>(
      "generatedtokens,Extra,timestamp,CONTEXTTOKENS\n"
      "7,x,2023-11-16 18:17:03.9799600,4808\n"
      "9,y,2023-11-16 18:17:04.0319600,3180\n",
      "mem.csv");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].input, 4808);
  EXPECT_EQ(v[0].answer, 7);
  EXPECT_EQ(v[1].arrival, 52'000'000);
}

TEST(AzureTrace, ZeroOutputIsRaisedToOneAndCounted) {
  AzureTraceReader rd(std::make_unique<std::istringstream>("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                                           "2023-11-16 18:00:00,10,0\n"
                                                           "2023-11-16 18:00:01,0,4\n"
                                                           "2023-11-16 18:00:02,10,4\n"),
                      "mem.csv");
  const auto v = drain(rd);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].answer, 1);
  EXPECT_EQ(v[1].input, 1);
  EXPECT_EQ(rd.stats().raised_to_one, 2);
  EXPECT_EQ(rd.stats().skipped(), 0);
}

TEST(AzureTrace, MalformedRowsNameFileAndLine) {
  const std::string ok = "2023-11-16 18:00:00,10,5\n";
  EXPECT_EQ(azureErr(ok + "2023-13-16 18:00:01,10,5\n"),
            "mem.csv:3: TIMESTAMP \"2023-13-16 18:00:01\" is not a date-time (month out of range)");
  EXPECT_EQ(azureErr("2023-02-29 00:00:00,1,1\n"),
            "mem.csv:2: TIMESTAMP \"2023-02-29 00:00:00\" is not a date-time (day out of range)");
  EXPECT_EQ(azureErr("2023-11-16 24:00:00,1,1\n"),
            "mem.csv:2: TIMESTAMP \"2023-11-16 24:00:00\" is not a date-time (time of day out of range)");
  EXPECT_EQ(azureErr("2023-11-16 18:00:00+01:00,1,1\n"),
            "mem.csv:2: TIMESTAMP \"2023-11-16 18:00:00+01:00\" is not a date-time (unexpected text after the "
            "seconds (no timezone is allowed))");
  EXPECT_EQ(azureErr("16/11/2023 18:00,1,1\n"),
            "mem.csv:2: TIMESTAMP \"16/11/2023 18:00\" is not a date-time (expected YYYY-MM-DD "
            "HH:MM:SS[.fraction])");
  EXPECT_EQ(azureErr(ok + "\n" + "2023-11-16 18:00:01,abc,5\n"),
            "mem.csv:4: ContextTokens is not an integer (got \"abc\")");
  EXPECT_EQ(azureErr("2023-11-16 18:00:00,-3,5\n"), "mem.csv:2: ContextTokens must be >= 0 (got -3)");
  EXPECT_EQ(azureErr("2023-11-16 18:00:00,3,99999999999\n"),
            "mem.csv:2: GeneratedTokens is too large (got 99999999999)");
  EXPECT_EQ(azureErr("2023-11-16 18:00:00,10\n"), "mem.csv:2: missing field 'GeneratedTokens' (row has 2 fields)");
  EXPECT_EQ(azureErr(ok + "2023-11-16 18:00:02,10,5\n2023-11-16 18:00:01.25,10,5\n"),
            "mem.csv:4: timestamp is 1.25 s into the trace, earlier than the previous row's 2.0 s; trace rows must "
            "be sorted by time");
  EXPECT_EQ(errorOf<AzureTraceReader>("TIMESTAMP,ContextTokens\n", "mem.csv"),
            "mem.csv:1: missing column 'GeneratedTokens' (Azure header: TIMESTAMP,ContextTokens,GeneratedTokens)");
  EXPECT_EQ(errorOf<AzureTraceReader>("TIMESTAMP,ContextTokens,GeneratedTokens,contexttokens\n", "mem.csv"),
            "mem.csv:1: duplicate column 'ContextTokens'");
  EXPECT_EQ(errorOf<AzureTraceReader>("", "mem.csv"), "mem.csv: empty trace file (expected a header line)");
  EXPECT_EQ(inputErrorOf([] { AzureTraceReader("/nonexistent/x.csv"); }), "/nonexistent/x.csv: cannot open trace file");
}

TEST(AzureTrace, LenientSkipsAndCountsMalformedRows) {
  TraceOptions o;
  o.lenient = true;
  AzureTraceReader rd(std::make_unique<std::istringstream>("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                                           "2023-11-16 18:00:00,10,5\n"      // 2 ok
                                                           "2023-11-16 18:00:01,abc,5\n"     // 3 bad number
                                                           "2023-11-16 18:00:02,30,5\n"      // 4 ok
                                                           "2023-11-16 18:00:01,40,5\n"      // 5 unsorted
                                                           "2023-11-16 18:00:03,50\n"        // 6 missing field
                                                           "not a time,60,5\n"               // 7 bad time
                                                           "2023-11-16 18:00:04,70,5\n"),    // 8 ok
                      "mem.csv", o);
  const auto v = drain(rd);
  EXPECT_EQ(inputs(v), (std::vector<int>{10, 30, 70}));
  EXPECT_EQ(arrivals(v), (std::vector<SimTime>{0, 2 * kS, 4 * kS}));
  EXPECT_EQ(rd.stats().rows, 7);
  EXPECT_EQ(rd.stats().malformed, 4);
  EXPECT_EQ(rd.stats().emitted, 3);
  EXPECT_EQ(rd.stats().skipped(), 4);
  EXPECT_EQ(rd.stats().first_malformed, "mem.csv:3: ContextTokens is not an integer (got \"abc\")");
  // Header errors are not rows: still fatal when lenient.
  EXPECT_THROW(AzureTraceReader(std::make_unique<std::istringstream>("TIMESTAMP\n"), "mem.csv", o), InputError);
}

// ---- BurstGPT -----------------------------------------------------------------------

namespace {
const char* kBurstV1 =
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "10,ChatGPT,100,20,120,Conversation log\n"
    "12.5,GPT-4,0,0,0,Conversation log\n"  // failure: 0 response tokens
    "13,ChatGPT,0,7,7,API log\n"           // 0 request tokens: raised to 1
    "20.25,GPT-4,300,40,340,Conversation log\n"
    "21,GPT-4,55,0,55,API log\n";  // failure with a prompt
const char* kBurstV3 =
    "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "19440110.0,1722ac82-0a46-4bf0-aa08-89794e7a2b3f,43,ChatGPT,100,20,120,Conversation log\n"
    "19440112.5,d5983bf9-4b48-497b-892b-a58995247443,2,GPT-4,0,0,0,Conversation log\n"
    "19440113.0,a5c69b35-4fbc-45e9-955e-18715e376d74,8,ChatGPT,0,7,7,API log\n"
    "19440120.25,\"quoted, id\",8,GPT-4,300,40,340,Conversation log\n"
    "19440121.0,x,1,GPT-4,55,0,55,API log\n";
}  // namespace

TEST(BurstGptTrace, V1AndV3GiveTheSameRequests) {
  BurstGptTraceReader a(std::make_unique<std::istringstream>(kBurstV1), "v1.csv");
  BurstGptTraceReader b(std::make_unique<std::istringstream>(kBurstV3), "v3.csv");
  EXPECT_FALSE(a.v3());
  EXPECT_TRUE(b.v3());
  const auto va = drain(a);
  const auto vb = drain(b);
  ASSERT_EQ(va.size(), 3u);
  EXPECT_EQ(va, vb);
  EXPECT_EQ(arrivals(va), (std::vector<SimTime>{0, 3 * kS, 10 * kS + kS / 4}));
  EXPECT_EQ(inputs(va), (std::vector<int>{100, 1, 300}));
  EXPECT_EQ(va[1].answer, 7);
  EXPECT_EQ(va[2].answer, 40);
  for (const auto* rd : {&a, &b}) {
    EXPECT_EQ(rd->stats().rows, 5);
    EXPECT_EQ(rd->stats().failed, 2);
    EXPECT_EQ(rd->stats().raised_to_one, 1);
    EXPECT_EQ(rd->stats().emitted, 3);
    EXPECT_EQ(rd->stats().skipped(), 2);
  }
}

TEST(BurstGptTrace, ColumnsAreFoundByName) {
  const auto v = readText<BurstGptTraceReader>(
      "Log Type,response tokens,Model,REQUEST TOKENS,timestamp\n"
      "API log,20,ChatGPT,100,5\n"
      "API log,0,ChatGPT,100,6\n"
      "API log,30,ChatGPT,200,7.5\n",
      "mem.csv");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].input, 100);
  EXPECT_EQ(v[0].answer, 20);
  EXPECT_EQ(v[1].arrival, 2 * kS + kS / 2);
}

TEST(BurstGptTrace, FailedFirstRowStillStartsTheTimeline) {
  const auto v = readText<BurstGptTraceReader>(
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
      "50,ChatGPT,10,0,10,Conversation log\n"
      "52,ChatGPT,10,3,13,Conversation log\n",
      "mem.csv");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].arrival, 2 * kS);
}

TEST(BurstGptTrace, MalformedRowsNameFileAndLine) {
  EXPECT_EQ(burstErr("-5,ChatGPT,10,3,13,Conversation log\n"),
            "mem.csv:2: Timestamp is not a number of seconds >= 0 (got \"-5\")");
  EXPECT_EQ(burstErr("5,ChatGPT,10,3,13,x\nabc,ChatGPT,10,3,13,x\n"),
            "mem.csv:3: Timestamp is not a number of seconds >= 0 (got \"abc\")");
  EXPECT_EQ(burstErr("5,ChatGPT,10,n/a,13,x\n"), "mem.csv:2: Response tokens is not an integer (got \"n/a\")");
  EXPECT_EQ(burstErr("5,ChatGPT,10.5,3,13,x\n"), "mem.csv:2: Request tokens is not an integer (got \"10.5\")");
  EXPECT_EQ(burstErr("5,ChatGPT,10\n"), "mem.csv:2: missing field 'Response tokens' (row has 3 fields)");
  EXPECT_EQ(burstErr("5,ChatGPT,10,3,13,x\n4,ChatGPT,10,3,13,x\n"),
            "mem.csv:3: timestamp is -1.0 s into the trace, earlier than the previous row's 0.0 s; trace rows "
            "must be sorted by time");
  EXPECT_EQ(errorOf<BurstGptTraceReader>("Timestamp,Model,Request tokens\n", "mem.csv"),
            "mem.csv:1: missing column 'Response tokens' (BurstGPT header: Timestamp,[Session ID,Elapsed "
            "time,]Model,Request tokens,Response tokens,Total tokens,Log Type)");
}

TEST(BurstGptTrace, LenientCountsMalformedAndFailedApart) {
  TraceOptions o;
  o.lenient = true;
  BurstGptTraceReader rd(std::make_unique<std::istringstream>(
                             "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                             "5,ChatGPT,10,3,13,x\n"
                             "6,ChatGPT,10,0,10,x\n"
                             "7,ChatGPT,ten,3,13,x\n"
                             "8,ChatGPT,\"unterminated,3,13,x\n"),
                         "mem.csv", o);
  const auto v = drain(rd);
  EXPECT_EQ(v.size(), 1u);
  EXPECT_EQ(rd.stats().failed, 1);
  EXPECT_EQ(rd.stats().malformed, 2);
  EXPECT_EQ(rd.stats().first_malformed, "mem.csv:4: Request tokens is not an integer (got \"ten\")");
}

// ---- Mooncake -----------------------------------------------------------------------

TEST(MooncakeTrace, ReadsRowsAndKeepsHashIds) {
  MooncakeTraceReader rd(std::make_unique<std::istringstream>(
                             "{\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2]}\n"
                             "{\"timestamp\": 1500, \"input_length\": 10, \"output_length\": 0, \"hash_ids\": []}\r\n"
                             "\n"
                             "{\"output_length\": 5, \"input_length\": 20, \"timestamp\": 3000, \"extra\": {\"a\": 1}}\n"
                             "{\"timestamp\": 3000.5, \"input_length\": 20, \"output_length\": 5, \"hash_ids\": [0, 7]}\n"),
                         "mem.jsonl");
  RequestSpec r;
  ASSERT_TRUE(rd.next(r));
  EXPECT_EQ(r.arrival, 0);
  EXPECT_EQ(r.input, 6758);
  EXPECT_EQ(r.answer, 500);
  EXPECT_EQ(r.reasoning, 0);
  EXPECT_EQ(r.prefix_blocks, 3);
  const std::vector<std::int64_t> ids{0, 1, 2};
  EXPECT_EQ(r.prefix_hash, hashMooncakeIds(ids));
  EXPECT_NE(r.prefix_hash, 0u);
  EXPECT_EQ(rd.lastHashIds(), ids);
  ASSERT_TRUE(rd.next(r));
  EXPECT_EQ(r.arrival, 1'500'000'000);
  EXPECT_EQ(r.answer, 1);  // 0 raised to 1
  EXPECT_EQ(r.prefix_blocks, 0);
  EXPECT_EQ(r.prefix_hash, 0u);
  EXPECT_TRUE(rd.lastHashIds().empty());
  ASSERT_TRUE(rd.next(r));
  EXPECT_EQ(r.arrival, 3 * kS);
  EXPECT_EQ(r.input, 20);
  EXPECT_EQ(r.prefix_blocks, 0);  // no hash_ids field
  ASSERT_TRUE(rd.next(r));
  EXPECT_EQ(r.arrival, 3 * kS + 500'000);  // fractional ms, exact
  EXPECT_EQ(r.id, 3);
  EXPECT_EQ(rd.lastHashIds(), (std::vector<std::int64_t>{0, 7}));
  EXPECT_FALSE(rd.next(r));
  EXPECT_EQ(rd.stats().raised_to_one, 1);
  EXPECT_EQ(rd.stats().rows, 4);
}

TEST(MooncakeTrace, HashDependsOnOrderAndContent) {
  const std::vector<std::int64_t> a{0, 1, 2}, b{0, 2, 1}, c{0, 1}, e{};
  EXPECT_NE(hashMooncakeIds(a), hashMooncakeIds(b));
  EXPECT_NE(hashMooncakeIds(a), hashMooncakeIds(c));
  EXPECT_EQ(hashMooncakeIds(a), hashMooncakeIds(std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(hashMooncakeIds(e), 0u);
}

TEST(MooncakeTrace, MalformedRowsNameFileAndLine) {
  const std::string ok = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n";
  EXPECT_EQ(moonErr(ok + "{\"timestamp\": 1,\n"), "mem.jsonl:2: not a JSON object (malformed JSON)");
  EXPECT_EQ(moonErr(ok + "\n[1, 2]\n"), "mem.jsonl:3: not a JSON object");
  EXPECT_EQ(moonErr("{\"timestamp\": 1, \"input_length\": 5}\n"), "mem.jsonl:1: missing field \"output_length\"");
  EXPECT_EQ(moonErr("{\"input_length\": 5, \"output_length\": 5}\n"), "mem.jsonl:1: missing field \"timestamp\"");
  EXPECT_EQ(moonErr("{\"timestamp\": -1, \"input_length\": 5, \"output_length\": 5}\n"),
            "mem.jsonl:1: \"timestamp\" must be a number of milliseconds >= 0 (got -1)");
  EXPECT_EQ(moonErr("{\"timestamp\": \"0\", \"input_length\": 5, \"output_length\": 5}\n"),
            "mem.jsonl:1: \"timestamp\" must be a number of milliseconds >= 0 (got \"0\")");
  EXPECT_EQ(moonErr("{\"timestamp\": 0, \"input_length\": 5.5, \"output_length\": 5}\n"),
            "mem.jsonl:1: \"input_length\" must be an integer >= 0 (got 5.5)");
  EXPECT_EQ(moonErr("{\"timestamp\": 0, \"input_length\": -5, \"output_length\": 5}\n"),
            "mem.jsonl:1: \"input_length\" must be >= 0 (got -5)");
  EXPECT_EQ(moonErr("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": [1, \"x\"]}\n"),
            "mem.jsonl:1: \"hash_ids\" must be a list of integers (got \"x\")");
  EXPECT_EQ(moonErr("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": 3}\n"),
            "mem.jsonl:1: \"hash_ids\" must be a list of integers");
  EXPECT_EQ(moonErr("{\"timestamp\": 3000, \"input_length\": 5, \"output_length\": 5}\n"
                    "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n"),
            "mem.jsonl:2: timestamp is -3.0 s into the trace, earlier than the previous row's 0.0 s; trace rows "
            "must be sorted by time");
}

TEST(MooncakeTrace, LenientSkipsAndCounts) {
  TraceOptions o;
  o.lenient = true;
  MooncakeTraceReader rd(std::make_unique<std::istringstream>(
                             "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": [9]}\n"
                             "{\"timestamp\": 1,\n"
                             "garbage\n"
                             "{\"timestamp\": 2, \"input_length\": 6, \"output_length\": 5}\n"),
                         "mem.jsonl", o);
  const auto v = drain(rd);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].arrival, 2'000'000);
  EXPECT_EQ(v[1].id, 1);
  EXPECT_EQ(rd.stats().malformed, 2);
  EXPECT_EQ(rd.stats().first_malformed, "mem.jsonl:2: not a JSON object (malformed JSON)");
}

// ---- detection, parsing helpers, dispatch -------------------------------------------

TEST(TraceDetect, FromTheFirstLine) {
  TempDir dir;
  EXPECT_EQ(detectTraceFormat(dir.write("a.txt", "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n")), "azure");
  EXPECT_EQ(detectTraceFormat(dir.write("b.txt", "\n\nTimestamp,Session ID,Elapsed time,Model,Request tokens,"
                                                 "Response tokens,Total tokens,Log Type\n")),
            "burstgpt");
  EXPECT_EQ(detectTraceFormat(dir.write("c.txt", "  {\"timestamp\": 0}\n")), "mooncake");
  EXPECT_EQ(detectTraceFormat(dir.write("d.txt", "arrival_s,input_tokens,output_tokens\n")), "servelab");
  const std::string bad = dir.write("e.csv", "time,in,out\n");
  EXPECT_EQ(inputErrorOf([&] { detectTraceFormat(bad); }).rfind(bad + ":1: cannot detect the trace format", 0), 0u);
  const std::string empty = dir.write("f.csv", "\n\n");
  EXPECT_EQ(inputErrorOf([&] { detectTraceFormat(empty); }), empty + ": empty trace file");
  // Servelab sources are not TraceReaders (no stats).
  TraceSpec t;
  t.path = dir.write("g.csv", "arrival_s,input_tokens,output_tokens\n0,1,1\n");
  auto src = openTraceWorkload(t, "", 100, std::nullopt);
  EXPECT_EQ(traceStatsOf(*src), nullptr);
  t.format = "nope";
  EXPECT_EQ(inputErrorOf([&] { openTraceWorkload(t, "", 100, std::nullopt); }),
            "workload.trace.format: unknown format 'nope' (known: auto, azure, burstgpt, mooncake, servelab)");
}

TEST(TraceParse, DecimalSecondsAreExact) {
  std::int64_t v = 0;
  ASSERT_TRUE(detail::parseDecimalNs("19440110.0", kNsPerSecond, v));
  EXPECT_EQ(v, 19'440'110 * kS);
  ASSERT_TRUE(detail::parseDecimalNs("0.000000001", kNsPerSecond, v));
  EXPECT_EQ(v, 1);
  ASSERT_TRUE(detail::parseDecimalNs(" 1.0000000019 ", kNsPerSecond, v));
  EXPECT_EQ(v, 1'000'000'001);  // below 1 ns: truncated
  ASSERT_TRUE(detail::parseDecimalNs("0.1", kNsPerSecond, v));
  EXPECT_EQ(v, 100'000'000);
  ASSERT_TRUE(detail::parseDecimalNs(".5", kNsPerSecond, v));
  EXPECT_EQ(v, 500'000'000);
  ASSERT_TRUE(detail::parseDecimalNs("1e3", kNsPerSecond, v));
  EXPECT_EQ(v, 1000 * kS);
  ASSERT_TRUE(detail::parseDecimalNs("3000.5", 1'000'000, v));
  EXPECT_EQ(v, 3'000'500'000);
  for (const char* bad : {"", "-1", "1.2.3", "abc", "1,5", ".", "99999999999999999999"})
    EXPECT_FALSE(detail::parseDecimalNs(bad, kNsPerSecond, v)) << bad;
}

TEST(TraceParse, DateTimesAreExact) {
  std::int64_t a = 0, b = 0;
  std::string why;
  ASSERT_TRUE(detail::parseDateTimeNs("1970-01-01 00:00:00", a, why));
  EXPECT_EQ(a, 0);
  ASSERT_TRUE(detail::parseDateTimeNs("2023-11-16 18:17:03.9799600", a, why));
  EXPECT_EQ(a, 1'700'158'623'979'960'000);  // date -u -d '2023-11-16 18:17:03' +%s = 1700158623
  ASSERT_TRUE(detail::parseDateTimeNs("2000-02-28T00:00:00", a, why));
  ASSERT_TRUE(detail::parseDateTimeNs("2000-03-01 00:00:00", b, why));
  EXPECT_EQ(b - a, 2 * 86400 * kS);  // 2000 is a leap year
  ASSERT_TRUE(detail::parseDateTimeNs("1900-02-28 00:00:00", a, why));
  ASSERT_TRUE(detail::parseDateTimeNs("1900-03-01 00:00:00", b, why));
  EXPECT_EQ(b - a, 86400 * kS);  // 1900 is not
  EXPECT_FALSE(detail::parseDateTimeNs("2023-11-16 18:17:03.", a, why));
  EXPECT_FALSE(detail::parseDateTimeNs("2023-11-16 18:17:03.12Z", a, why));
  EXPECT_FALSE(detail::parseDateTimeNs("2023-11-16", a, why));
  EXPECT_FALSE(detail::parseDateTimeNs("2023-04-31 00:00:00", a, why));
  EXPECT_EQ(why, "day out of range");
}
