// The real public traces under ../shared/traces (SERVELAB_SHARED_DIR):
// each replays through its reader with the documented row counts and
// statistics, and through a full simulation with every request accounted
// for. Skipped cleanly when the folder is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "run/execute.h"
#include "run/run.h"
#include "trace_test_util.h"
#include "workload/mooncake_trace.h"
#include "workload/trace_formats.h"

using namespace sl;

namespace {

const std::string kTraces = std::string(SERVELAB_SHARED_DIR) + "/traces";

std::string tracePath(const std::string& rel) { return kTraces + "/" + rel; }

#define SKIP_IF_ABSENT(rel)                                                                   \
  do {                                                                                        \
    if (!std::filesystem::exists(tracePath(rel))) GTEST_SKIP() << tracePath(rel) << " absent"; \
  } while (0)

struct Replay {
  std::vector<RequestSpec> reqs;
  TraceStats stats;
  std::string format;
  std::int64_t median(int RequestSpec::*f) const {
    std::vector<int> v;
    for (const auto& r : reqs) v.push_back(r.*f);
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  std::int64_t sum(int RequestSpec::*f) const {
    std::int64_t s = 0;
    for (const auto& r : reqs) s += r.*f;
    return s;
  }
};

Replay replay(const std::string& rel) {
  TraceSpec t;
  t.path = rel;
  auto src = openTraceWorkload(t, kTraces, 131072, std::nullopt);
  Replay out;
  out.reqs = tracetest::drain(*src);
  const TraceStats* st = traceStatsOf(*src);
  EXPECT_NE(st, nullptr);
  if (st) out.stats = *st;
  for (std::size_t i = 0; i < out.reqs.size(); ++i) {
    EXPECT_EQ(out.reqs[i].id, static_cast<std::int64_t>(i));
    if (i) {
      EXPECT_GE(out.reqs[i].arrival, out.reqs[i - 1].arrival);
    }
    EXPECT_EQ(out.reqs[i].reasoning, 0);
    EXPECT_GE(out.reqs[i].input, 1);
    EXPECT_GE(out.reqs[i].answer, 1);
  }
  if (!out.reqs.empty()) {
    EXPECT_EQ(out.reqs.front().arrival, 0);
  }
  return out;
}

}  // namespace

// ---- readers ------------------------------------------------------------------------

TEST(RealTraces, AzureCode) {
  SKIP_IF_ABSENT("azure-2023/AzureLLMInferenceTrace_code.csv");
  const Replay r = replay("azure-2023/AzureLLMInferenceTrace_code.csv");
  EXPECT_EQ(r.stats.format, "azure");
  EXPECT_EQ(r.stats.rows, 8819);
  EXPECT_EQ(r.stats.emitted, 8819);
  EXPECT_EQ(r.stats.skipped(), 0);
  EXPECT_EQ(r.stats.raised_to_one, 0);
  EXPECT_EQ(r.reqs.back().arrival, 3'435'948'056'000);  // 18:17:03.9799600 -> 19:14:19.9280160
  EXPECT_EQ(r.median(&RequestSpec::input), 1469);       // "median ~1.5 K"
  EXPECT_EQ(r.median(&RequestSpec::answer), 13);
  EXPECT_EQ(r.sum(&RequestSpec::input), 18'059'974);
  EXPECT_EQ(r.sum(&RequestSpec::answer), 245'896);
  // Extremely bursty: 67 requests within one second somewhere.
  std::size_t best = 0;
  for (std::size_t i = 0, j = 0; i < r.reqs.size(); ++i) {
    while (r.reqs[i].arrival - r.reqs[j].arrival >= kNsPerSecond) ++j;
    best = std::max(best, i - j + 1);
  }
  EXPECT_GE(best, 60u);
}

TEST(RealTraces, AzureConv) {
  SKIP_IF_ABSENT("azure-2023/AzureLLMInferenceTrace_conv.csv");
  const Replay r = replay("azure-2023/AzureLLMInferenceTrace_conv.csv");
  EXPECT_EQ(r.stats.rows, 19366);
  EXPECT_EQ(r.stats.emitted, 19366);
  EXPECT_EQ(r.reqs.back().arrival, 3'501'721'937'000);
  EXPECT_EQ(r.median(&RequestSpec::input), 1020);
  EXPECT_EQ(r.median(&RequestSpec::answer), 129);
  int maxAnswer = 0;
  for (const auto& q : r.reqs) maxAnswer = std::max(maxAnswer, q.answer);
  EXPECT_EQ(maxAnswer, 1000);  // "capped at 1,000"
  EXPECT_EQ(r.sum(&RequestSpec::input), 22'361'870);
  EXPECT_EQ(r.sum(&RequestSpec::answer), 4'088'665);
}

TEST(RealTraces, BurstGptV1) {
  SKIP_IF_ABSENT("burstgpt/burstgpt_slice.csv");
  const Replay r = replay("burstgpt/burstgpt_slice.csv");
  EXPECT_EQ(r.stats.format, "burstgpt");
  EXPECT_EQ(r.stats.rows, 400);
  EXPECT_EQ(r.stats.failed, 17);
  EXPECT_EQ(r.stats.emitted, 383);
  EXPECT_EQ(r.stats.malformed, 0);
  EXPECT_EQ(r.reqs.back().arrival, 37'269 * kNsPerSecond);  // 5 s -> 37274 s
  EXPECT_EQ(r.sum(&RequestSpec::input), 208'189);
  EXPECT_EQ(r.sum(&RequestSpec::answer), 110'612);
}

TEST(RealTraces, BurstGptV3) {
  SKIP_IF_ABSENT("burstgpt/burstgpt3_slice.csv");
  const Replay r = replay("burstgpt/burstgpt3_slice.csv");
  EXPECT_EQ(r.stats.rows, 400);
  EXPECT_EQ(r.stats.failed, 1);
  EXPECT_EQ(r.stats.emitted, 399);
  EXPECT_EQ(r.reqs.back().arrival, 41'453 * kNsPerSecond);  // 19440110 s -> 19481563 s
  EXPECT_EQ(r.sum(&RequestSpec::input), 246'941);
  EXPECT_EQ(r.sum(&RequestSpec::answer), 68'350);
}

TEST(RealTraces, Mooncake) {
  SKIP_IF_ABSENT("mooncake/conversation_trace.jsonl");
  const Replay r = replay("mooncake/conversation_trace.jsonl");
  EXPECT_EQ(r.stats.format, "mooncake");
  EXPECT_EQ(r.stats.rows, 12031);
  EXPECT_EQ(r.stats.emitted, 12031);
  EXPECT_EQ(r.stats.context_clipped, 0);  // longest: 126195 + output <= 131072
  EXPECT_EQ(r.reqs.back().arrival, 3'536'999'000'000);
  EXPECT_EQ(r.sum(&RequestSpec::input), 144'793'823);  // mean ~12 K
  EXPECT_EQ(r.median(&RequestSpec::input), 6909);
  EXPECT_EQ(r.median(&RequestSpec::answer), 350);
  EXPECT_EQ(r.sum(&RequestSpec::answer), 4'122'048);
  std::int64_t blocks = 0;
  for (const auto& q : r.reqs) {
    blocks += q.prefix_blocks;
    EXPECT_EQ(q.prefix_blocks, (q.input + 511) / 512);  // one id per 512-token block
    EXPECT_NE(q.prefix_hash, 0u);
  }
  EXPECT_EQ(blocks, 288'500);
  // The first row's ids are 0..13.
  std::vector<std::int64_t> ids(14);
  for (int i = 0; i < 14; ++i) ids[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(r.reqs.front().prefix_hash, hashMooncakeIds(ids));
  // Arrivals are quantised to ~3 s buckets: 1,180 distinct times, up to 28 requests share one.
  std::int64_t distinct = 0, run = 0, maxRun = 0;
  for (std::size_t i = 0; i < r.reqs.size(); ++i) {
    if (i == 0 || r.reqs[i].arrival != r.reqs[i - 1].arrival) {
      ++distinct;
      run = 0;
    }
    maxRun = std::max(maxRun, ++run);
  }
  EXPECT_EQ(distinct, 1180);
  EXPECT_EQ(maxRun, 28);
}

// ---- full simulation replays ------------------------------------------------------------

namespace {

struct SimCase {
  const char* name;
  const char* rel;
  std::int64_t expectArrived;
  int instances;
};

const SimCase kSims[] = {
    {"AzureCode", "azure-2023/AzureLLMInferenceTrace_code.csv", 8819, 8},
    {"AzureConv", "azure-2023/AzureLLMInferenceTrace_conv.csv", 19366, 8},
    {"BurstGptV1", "burstgpt/burstgpt_slice.csv", 383, 2},
    {"BurstGptV3", "burstgpt/burstgpt3_slice.csv", 399, 2},
    {"Mooncake", "mooncake/conversation_trace.jsonl", 12031, 8},
};

}  // namespace

class RealTraceSim : public ::testing::TestWithParam<SimCase> {};

TEST_P(RealTraceSim, EveryRequestIsAccountedFor) {
  const SimCase& c = GetParam();
  SKIP_IF_ABSENT(c.rel);
  Scenario s;
  s.cluster.instances = c.instances;
  s.cluster.gpu = "h100-sxm-80g";
  s.model = "llama-3.1-8b";
  s.workload.trace = TraceSpec{};
  s.workload.trace->path = c.rel;
  s.base_dir = kTraces;
  s.run.probe_interval_s = 10.0;
  auto run = prepareRun(s, "real-trace");
  const RunResult res = executeRun(*run, RunOptions{});
  const Summary& m = res.summary;
  const std::int64_t aborted = res.summaryJson["aborted"].get<std::int64_t>();
  EXPECT_EQ(m.arrived, c.expectArrived);
  EXPECT_EQ(m.arrived, m.finished + m.in_flight + aborted);
  EXPECT_EQ(m.finished, c.expectArrived);  // no duration limit: the cluster drains the trace
  EXPECT_EQ(m.in_flight, 0);
  EXPECT_FALSE(res.stalled);
  EXPECT_GT(m.ttft_s.p50, 0.0);
  EXPECT_GE(m.ttft_s.p99, m.ttft_s.p50);
  std::cout << "[ " << c.name << " ] arrived " << m.arrived << " finished " << m.finished << " ttft p50 "
            << m.ttft_s.p50 << " s p99 " << m.ttft_s.p99 << " s, sim " << m.sim_s << " s, wall " << res.wallSeconds
            << " s\n";
}

INSTANTIATE_TEST_SUITE_P(Traces, RealTraceSim, ::testing::ValuesIn(kSims),
                         [](const auto& info) { return std::string(info.param.name); });
