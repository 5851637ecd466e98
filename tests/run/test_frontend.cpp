// The serving front end (cost/frontend.h, engine/frontend.cpp; docs/engine.md
// "Serving front end"): tokenisation and streaming costs by hand, the FIFO
// tokeniser queue, open and closed loops through the same path, async
// scheduling as max(CPU, GPU), off = the trajectory without it, the lockstep
// of fixed-length closed-loop clients and what breaks it, presets and bad
// input.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "cost/engine_presets.h"
#include "cost/frontend.h"
#include "engine/observer.h"
#include "engine/request.h"
#include "metrics/request_record.h"
#include "run/execute.h"
#include "run/live_run.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/error.h"
#include "workload/length_dist.h"
#include "workload/list_workload.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {

constexpr SimTime kUs = 1'000;

RequestSpec req(std::int64_t id, SimTime at, std::int32_t input, std::int32_t answer) {
  RequestSpec r;
  r.id = id;
  r.arrival = at;
  r.input = input;
  r.reasoning = 0;
  r.answer = answer;
  return r;
}

Scenario oneInstance() {
  Scenario s;
  s.cluster.instances = 1;
  s.model = "llama-3.1-8b";
  s.run.seed = 3;
  return s;
}

// Engine arrival times (RequestEvent::Arrived) by request id.
struct ArrivalLog final : SimObserver {
  std::map<std::int64_t, SimTime> engineArrival;
  void onRequestEvent(RequestEvent e, const Request& r, int, SimTime t) override {
    if (e == RequestEvent::Arrived) engineArrival[r.id] = t;
  }
};

struct ListRun {
  std::unique_ptr<PreparedRun> run;
  ArrivalLog log;
  std::map<std::int64_t, RequestRecord> records;
};

std::unique_ptr<ListRun> runList(const Scenario& s, std::vector<RequestSpec> reqs) {
  auto out = std::make_unique<ListRun>();
  out->run = prepareRun(s, "test", [&](const WorkloadSpec&, std::uint64_t, int, const std::string&,
                                      std::optional<double>) -> std::unique_ptr<WorkloadSource> {
    return std::make_unique<ListWorkload>(reqs);
  });
  out->run->simulator->addObserver(&out->log);
  out->run->simulator->run();
  for (const RequestRecord& r : out->run->simulator->records()) out->records[r.id] = r;
  return out;
}

FrontEndSpec frontend(const nlohmann::json& j) { return FrontEndSpec::fromJson(j, "test", FrontEndSpec{}); }

// The issue's lockstep setting: Qwen3-32B on one H100 instance at TP 2, 8
// closed-loop clients, 1 024-token prompts, 128-token answers, no think time.
Scenario lockstep() {
  Scenario s;
  s.cluster.instances = 1;
  s.cluster.tp = 2;
  s.model = "qwen3-32b";
  s.workload.arrival.process = ArrivalSpec::Process::Closed;
  s.workload.arrival.concurrency = 8;
  s.workload.input_tokens = constantDist(1024);
  s.workload.reasoning_tokens = constantDist(0);
  s.workload.answer_tokens = constantDist(128);
  s.workload.requests = 160;
  s.policy.id = "fcfs";
  s.run.seed = 1;
  return s;
}

std::vector<double> ttftsMs(const Scenario& s) {
  const auto run = prepareRun(s, "test");
  run->simulator->run();
  run->simulator->sortRecordsById();
  std::vector<double> t;
  for (const RequestRecord& r : run->simulator->records()) t.push_back(*r.ttft() * 1e3);
  return t;
}

}  // namespace

TEST(FrontEnd, ParsesAndNamesBadFields) {
  const FrontEndSpec f = frontend({{"http_us", 300}, {"api_servers", 2}, {"async_scheduling", true}});
  EXPECT_EQ(f.http_us, 300);
  EXPECT_EQ(f.api_servers, 2);
  EXPECT_TRUE(f.async_scheduling);
  EXPECT_TRUE(f.requestPathOn());
  EXPECT_FALSE(FrontEndSpec{}.on());
  EXPECT_NE(errorOf([] { frontend({{"tokenise_us", 1}}); }).find("test.tokenise_us: unknown front-end field: did you mean 'tokenize_us'?"),
            std::string::npos);
  EXPECT_NE(errorOf([] { frontend({{"api_servers", 0}}); }).find("test.api_servers: must be an integer in [1, 4096]"),
            std::string::npos);
  EXPECT_NE(errorOf([] { frontend({{"api_servers", 1.5}}); }).find("test.api_servers"), std::string::npos);
  EXPECT_NE(errorOf([] { frontend({{"stream_us", -1}}); }).find("test.stream_us: must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(errorOf([] { frontend({{"async_scheduling", 1}}); }).find("test.async_scheduling: must be true or false"),
            std::string::npos);
  // Through a scenario: the message names cluster.frontend.<key>.
  Scenario s = parseScenario(nlohmann::json::parse(R"({"cluster": {"frontend": {"http_us": "x"}}})"), "s.json");
  EXPECT_NE(errorOf([&] { prepareRun(s, "s.json"); }).find("s.json: cluster.frontend.http_us: must be a number"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parseScenario(nlohmann::json::parse(R"({"cluster": {"frontend": 3}})"), "s.json"); })
                .find("cluster.frontend"),
            std::string::npos);
}

TEST(FrontEnd, EnginePresetCarriesItsFrontEndWithSources) {
  const EnginePreset& p = enginePreset("vllm-v1-serve");
  const FrontEndSpec f = p.applyFrontEnd(FrontEndSpec{});
  EXPECT_EQ(f.tokenize_us_per_ktok, 1000);
  EXPECT_EQ(f.api_servers, 1);
  EXPECT_TRUE(f.async_scheduling);
  // The default generation has none: unset engine = no front end.
  EXPECT_FALSE(enginePreset(defaultEngineId()).applyFrontEnd(FrontEndSpec{}).on());
  // Every front-end field needs its source.
  const nlohmann::json bad = {{"id", "x"}, {"name", "x"}, {"coefficients", {{"t_step_us", 1}}},
                              {"frontend", {{"http_us", 5}}}, {"sources", {{"t_step_us", "a source"}}}};
  EXPECT_NE(errorOf([&] { parseEnginePreset(bad, "x.json"); }).find("x.json: sources.frontend.http_us"),
            std::string::npos);
  // The scenario's fields go on top of the preset's.
  Scenario s = oneInstance();
  s.cluster.engine = "vllm-v1-serve";
  s.cluster.frontend = {{"api_servers", 4}};
  const FrontEndSpec g = makeFrontEnd(s);
  EXPECT_EQ(g.api_servers, 4);
  EXPECT_EQ(g.tokenize_us_per_ktok, 1000);
  EXPECT_TRUE(makeCostModel(s)->asyncScheduling());
}

TEST(FrontEnd, OffIsTheTrajectoryWithoutIt) {
  // All-zero fields given explicitly: the same events, fingerprint and
  // records as no front end at all.
  Scenario a = oneInstance();
  a.workload.requests = 300;
  a.workload.arrival.rate = 30;
  Scenario b = a;
  b.cluster.frontend = {{"http_us", 0}, {"tokenize_us", 0}, {"stream_us", 0}, {"api_servers", 3}};
  const ReplayResult ra = replayRun(a, {});
  const ReplayResult rb = replayRun(b, {});
  EXPECT_EQ(ra.fingerprint, rb.fingerprint);
  EXPECT_EQ(ra.events, rb.events);
  EXPECT_EQ(ra.finished, 300);
  // Turning it on moves the trajectory.
  Scenario c = a;
  c.cluster.frontend = {{"http_us", 100}};
  EXPECT_NE(replayRun(c, {}).fingerprint, ra.fingerprint);
}

TEST(FrontEnd, TokenisationAndStreamingByHand) {
  // One request on an idle instance: the engine runs it exactly as without
  // a front end, later by the inbound path; the client sees each token
  // later by the outbound path.
  //   inbound  = http 1000 + tokenise (500 + 1000 us/ktok x 2000 tok = 2500) + hand-over 200 = 3700 us
  //   outbound = stream 300 + detokenise 50 us x 1 sequence = 350 us
  const std::vector<RequestSpec> one = {req(7, 10 * kUs, 2000, 20)};
  const auto off = runList(oneInstance(), one);
  Scenario s = oneInstance();
  s.cluster.frontend = {{"http_us", 1000},   {"tokenize_us", 500}, {"tokenize_us_per_ktok", 1000},
                        {"handoff_us", 200}, {"stream_us", 300},   {"detokenize_us_per_seq", 50}};
  const auto on = runList(s, one);
  const RequestRecord& a = off->records.at(7);
  const RequestRecord& b = on->records.at(7);
  EXPECT_EQ(on->log.engineArrival.at(7), 10 * kUs + 3700 * kUs);
  EXPECT_EQ(b.arrival, 10 * kUs);  // the client's send time
  EXPECT_EQ(b.first_token, a.first_token + 3700 * kUs + 350 * kUs);
  EXPECT_EQ(b.last_token, a.last_token + 3700 * kUs + 350 * kUs);
  EXPECT_EQ(b.first_visible, b.first_token);
  EXPECT_NEAR(*b.ttft() - *a.ttft(), 4.05e-3, 1e-12);
  EXPECT_NEAR(*b.e2e() - *a.e2e(), 4.05e-3, 1e-12);
  EXPECT_NEAR(*b.tpot(), *a.tpot(), 1e-12);  // a constant delay per token leaves TPOT alone
  const Simulator::FrontEndStats& st = on->run->simulator->frontEndStats();
  EXPECT_EQ(st.requests, 1);
  EXPECT_EQ(st.inboundSum, 3700 * kUs);
  EXPECT_EQ(st.outboundSum, 350 * kUs);
}

TEST(FrontEnd, DetokenisationGrowsWithTheStepsBatch) {
  // Two requests decoded in the same steps: each token's delay is
  // stream + detok x 2 sequences; a lone request's is stream + detok x 1.
  Scenario s = oneInstance();
  s.cluster.frontend = {{"stream_us", 100}, {"detokenize_us_per_seq", 400}};
  const auto two = runList(s, {req(1, 0, 64, 10), req(2, 0, 64, 10)});
  const auto one = runList(s, {req(1, 0, 64, 10)});
  const Simulator::FrontEndStats& st2 = two->run->simulator->frontEndStats();
  EXPECT_EQ(st2.outboundSum, 2 * (100 + 2 * 400) * kUs);
  EXPECT_EQ(one->run->simulator->frontEndStats().outboundSum, (100 + 400) * kUs);
}

TEST(FrontEnd, TokeniserQueueIsFifoOverTheApiServers) {
  // Three 1000-token prompts sent at once; tokenising one takes 1 ms. One
  // API server: they reach the engine 1, 2 and 3 ms later (+ http 50 us);
  // three servers: all after 1 ms.
  const std::vector<RequestSpec> three = {req(0, 0, 1000, 4), req(1, 0, 1000, 4), req(2, 0, 1000, 4)};
  Scenario s = oneInstance();
  s.cluster.frontend = {{"http_us", 50}, {"tokenize_us_per_ktok", 1000}};
  const auto serial = runList(s, three);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(serial->log.engineArrival.at(i), (50 + 1000 * (i + 1)) * kUs) << i;
  EXPECT_EQ(serial->run->simulator->frontEndStats().maxWaiting, 2);
  s.cluster.frontend["api_servers"] = 3;
  const auto parallel = runList(s, three);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(parallel->log.engineArrival.at(i), 1050 * kUs) << i;
  EXPECT_EQ(parallel->run->simulator->frontEndStats().maxWaiting, 0);
}

TEST(FrontEnd, OpenLoopKeepsItsSendTimes) {
  // Poisson arrivals closer together than the HTTP latency: every record's
  // arrival is still its send time from the arrival process (the run
  // without a front end has the same send times).
  Scenario a = oneInstance();
  a.workload.requests = 200;
  a.workload.arrival.rate = 2000;  // mean gap 0.5 ms < http 2 ms
  Scenario b = a;
  b.cluster.frontend = {{"http_us", 2000}, {"tokenize_us_per_ktok", 1}};
  auto sends = [](const Scenario& s) {
    const auto run = prepareRun(s, "test");
    run->simulator->run();
    run->simulator->sortRecordsById();
    std::vector<SimTime> v;
    for (const RequestRecord& r : run->simulator->records()) v.push_back(r.arrival);
    return v;
  };
  const std::vector<SimTime> sa = sends(a), sb = sends(b);
  ASSERT_EQ(sa.size(), 200u);
  EXPECT_EQ(sa, sb);
}

TEST(FrontEnd, ClosedLoopSendsWhenTheClientHasTheLastToken) {
  // One client, no think time: each request is sent when the client has
  // the previous one's last token (engine finish + outbound delay), and
  // reaches the engine after the inbound path.
  Scenario s = oneInstance();
  s.workload.arrival.process = ArrivalSpec::Process::Closed;
  s.workload.arrival.concurrency = 1;
  s.workload.requests = 20;
  s.workload.input_tokens = constantDist(500);
  s.workload.answer_tokens = constantDist(8);
  s.workload.reasoning_tokens = constantDist(0);
  s.cluster.frontend = {{"http_us", 100}, {"tokenize_us_per_ktok", 1000}, {"handoff_us", 30}, {"stream_us", 70}};
  const auto run = prepareRun(s, "test");
  ArrivalLog log;
  run->simulator->addObserver(&log);
  run->simulator->run();
  run->simulator->sortRecordsById();
  const RecordStore& recs = run->simulator->records();
  ASSERT_EQ(recs.size(), 20u);
  for (std::size_t i = 1; i < recs.size(); ++i) {
    const RequestRecord prev = recs[i - 1], cur = recs[i];
    EXPECT_EQ(cur.arrival, prev.last_token) << i;  // the client's view of the last token
    EXPECT_EQ(log.engineArrival.at(cur.id), cur.arrival + (100 + 500 + 30) * kUs) << i;
  }
}

TEST(FrontEnd, AsyncSchedulingTakesTheLongerOfCpuAndGpu) {
  Scenario s = oneInstance();
  const auto sync = makeCostModel(s);
  s.cluster.frontend = {{"async_scheduling", true}};
  const auto async = makeCostModel(s);
  ASSERT_TRUE(async->asyncScheduling());
  const CostCoefficients& c = sync->coefficients();
  for (int seqs : {1, 8, 256}) {
    BatchShape b;
    for (int i = 0; i < seqs; ++i) addDecodeSeq(b, 1000);
    const double cpu = (c.t_step_us + c.t_seq_us * seqs) * 1e-6;
    const double total = sync->iterationSeconds(b);
    EXPECT_NEAR(async->iterationSeconds(b), std::max(cpu, total - cpu), 1e-15) << seqs;
    const CostBreakdown br = async->breakdown(b);
    EXPECT_NEAR(br.total_s, async->iterationSeconds(b), 1e-15);
    EXPECT_NEAR(br.overlap_s, std::min(cpu, total - cpu), 1e-15);
  }
  // A CPU-bound step (an absurd t_seq): the CPU part sets the time.
  s.cluster.cost = {{"t_seq_us", 1000}};
  BatchShape b;
  for (int i = 0; i < 100; ++i) addDecodeSeq(b, 10);
  EXPECT_NEAR(makeCostModel(s)->iterationSeconds(b), (c.t_step_us + 1000 * 100) * 1e-6, 1e-12);
}

TEST(FrontEnd, DeterministicWhenOn) {
  Scenario s = lockstep();
  s.cluster.engine = "vllm-v1-serve";
  s.workload.answer_tokens = uniformDist(96, 160);
  const ReplayResult a = replayRun(s, {});
  const ReplayResult b = replayRun(s, {});
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.finished, 160);
}

// docs/workloads.md "Closed loops in lockstep": the runs behind its table.
TEST(FrontEnd, LockstepOfFixedLengthClientsAndWhatBreaksIt) {
  // No front end: the 8 clients send at the same nanosecond, forever; every
  // request is prefilled in one 8 192-token batch: one TTFT for all.
  const std::vector<double> off = ttftsMs(lockstep());
  ASSERT_EQ(off.size(), 160u);
  EXPECT_NEAR(*std::min_element(off.begin(), off.end()), *std::max_element(off.begin(), off.end()), 1e-6);
  EXPECT_GT(off.front(), 400);
  // vLLM's serial tokeniser: the first prompt of each cohort reaches an idle
  // engine and is prefilled alone; the other 7 arrive during that step and
  // go together. The split is a fixed point: it repeats every cycle.
  Scenario serve = lockstep();
  serve.cluster.engine = "vllm-v1-serve";
  const std::vector<double> on = ttftsMs(serve);
  for (std::size_t cycle = 1; cycle < 20; ++cycle) {
    const auto first = on.begin() + static_cast<std::ptrdiff_t>(cycle * 8);
    std::vector<double> c(first, first + 8);
    std::sort(c.begin(), c.end());
    EXPECT_LT(c[0], 100) << cycle;            // the one prefilled alone
    EXPECT_GT(c[1], 400) << cycle;            // the seven behind it
    EXPECT_NEAR(c[1], c[7], 1e-6) << cycle;   // ... together
  }
  // Eight tokenisers: the cohort arrives together again: one TTFT for all.
  serve.cluster.frontend = {{"api_servers", 8}};
  const std::vector<double> par = ttftsMs(serve);
  EXPECT_NEAR(*std::min_element(par.begin() + 8, par.end()), *std::max_element(par.begin() + 8, par.end()), 1e-6);
  // Answer lengths with variance break the lock (with or without a front
  // end): most requests no longer wait behind a cohort's prefill.
  for (const bool fe : {false, true}) {
    Scenario v = lockstep();
    if (fe) v.cluster.engine = "vllm-v1-serve";
    v.workload.answer_tokens = uniformDist(96, 160);
    std::vector<double> t = ttftsMs(v);
    std::sort(t.begin(), t.end());
    EXPECT_LT(t[t.size() / 2], 150) << fe;
  }
}
