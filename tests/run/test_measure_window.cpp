// The measurement window (run.measure, docs/metrics.md "Measurement
// window") on a hand-built run: a window [W, W+L) stops the run exactly where
// run.duration_s = W+L does (same trajectory), and its counts are exact
// differences of two plain runs cut at W and at W+L: arrivals, output
// tokens; finished requests are those of the longer run that finished at or
// after W. The drain after W+L is never simulated.
#include <gtest/gtest.h>

#include "run/execute.h"
#include "run/run.h"
#include "scenario/spec.h"
#include "workload/list_workload.h"

using namespace sl;

namespace {

Scenario handBuilt() {
  Scenario s;
  s.cluster.instances = 2;
  s.model = "llama-3.1-8b";
  s.workload.arrival.rate = 20;
  s.workload.requests = 100000;  // arrivals end with the window, not with the count
  s.workload.input_tokens = LengthDist{};
  s.workload.input_tokens.value = 300;
  s.workload.answer_tokens = LengthDist{};
  s.workload.answer_tokens.value = 200;
  s.slo.ttft_s = 0.5;
  s.run.seed = 7;
  return s;
}

struct Out {
  RunResult res;
  std::vector<RequestRecord> finished;
};

Out runIt(const Scenario& s) {
  auto p = prepareRun(s, "window");
  Out o;
  o.res = executeRun(*p, RunOptions{});
  p->simulator->records().forEach([&](const RequestRecord& r) { o.finished.push_back(r); });
  return o;
}

}  // namespace

TEST(MeasureWindow, ExactCountsAgainstTwoCutRuns) {
  constexpr double kWarm = 4, kLen = 6;
  Scenario windowed = handBuilt();
  windowed.run.measure = MeasureSpec{kWarm, kLen};
  Scenario cutEnd = handBuilt();
  cutEnd.run.duration_s = kWarm + kLen;
  Scenario cutStart = handBuilt();
  cutStart.run.duration_s = kWarm;

  const Out w = runIt(windowed), e = runIt(cutEnd), b = runIt(cutStart);
  // Same stop, same arrivals: the very same trajectory.
  EXPECT_EQ(w.res.fingerprint, e.res.fingerprint);
  EXPECT_EQ(w.res.events, e.res.events);
  const Summary& sw = w.res.summary;
  const Summary& se = e.res.summary;
  const Summary& sb = b.res.summary;
  ASSERT_TRUE(sw.windowed);
  EXPECT_FALSE(se.windowed);
  EXPECT_DOUBLE_EQ(sw.window_start_s, kWarm);
  EXPECT_DOUBLE_EQ(sw.window_end_s, kWarm + kLen);
  EXPECT_DOUBLE_EQ(sw.sim_s, kWarm + kLen);  // stopped at the window's end: no drain

  // Arrivals and tokens: exact differences of the two cut runs.
  EXPECT_GT(sb.arrived, 50);
  EXPECT_EQ(sw.arrived, se.arrived - sb.arrived);
  EXPECT_GT(sw.output_tokens, 0);
  EXPECT_EQ(sw.output_tokens, se.output_tokens - sb.output_tokens);
  EXPECT_DOUBLE_EQ(sw.tokens_per_s, static_cast<double>(sw.output_tokens) / kLen);
  EXPECT_EQ(sw.preemptions, se.preemptions - sb.preemptions);
  EXPECT_EQ(sw.in_flight, se.in_flight);

  // Finished in the window: those of the longer run finishing at or after W.
  std::int64_t inWindow = 0, met = 0;
  for (const RequestRecord& r : e.finished) {
    if (r.last_token < secondsToNs(kWarm)) continue;
    ++inWindow;
    met += r.ttft().value_or(1e9) <= 0.5;
  }
  EXPECT_GT(inWindow, 0);
  EXPECT_LT(inWindow, se.finished);  // some finished during the warm-up
  EXPECT_EQ(sw.finished, inWindow);
  EXPECT_EQ(sw.ttft_s.n, inWindow);
  EXPECT_EQ(sw.slo_met, met);
  EXPECT_DOUBLE_EQ(sw.requests_per_s, static_cast<double>(inWindow) / kLen);
  EXPECT_TRUE(w.res.summaryJson.contains("measure"));
  EXPECT_FALSE(e.res.summaryJson.contains("measure"));
}

// A run that drains before the window opens: the window is empty.
TEST(MeasureWindow, RunEndingBeforeTheWindowMeasuresNothing) {
  Scenario s = handBuilt();
  s.workload.requests = 5;
  s.run.measure = MeasureSpec{500, 10};
  const Out o = runIt(s);
  EXPECT_EQ(o.res.summary.finished, 0);
  EXPECT_EQ(o.res.summary.arrived, 0);
  EXPECT_EQ(o.res.summary.output_tokens, 0);
  EXPECT_EQ(o.res.summary.in_flight, 0);
  EXPECT_DOUBLE_EQ(o.res.summary.tokens_per_s, 0.0);
}

// The window's start edge (mutant window-open-edge): a request arriving
// exactly at W is in the window, one arriving 1 ns before it is not. Four
// short requests at 0, W - 1 ns, W and W + 1 s; the window [W, W + 10 s).
TEST(MeasureWindow, ArrivalExactlyAtTheStartIsInTheWindow) {
  constexpr double kWarm = 2;
  const SimTime w = secondsToNs(kWarm);
  std::vector<RequestSpec> reqs;
  for (const SimTime at : {SimTime{0}, w - 1, w, w + secondsToNs(1)}) {
    RequestSpec r;
    r.id = static_cast<std::int64_t>(reqs.size());
    r.arrival = at;
    r.input = 100;
    r.answer = 20;
    reqs.push_back(r);
  }
  Scenario s = handBuilt();
  s.workload.requests = 4;
  s.run.measure = MeasureSpec{kWarm, 10};
  auto p = prepareRun(s, "window", [&](const WorkloadSpec&, std::uint64_t, int, const std::string&,
                                       std::optional<double>) -> std::unique_ptr<WorkloadSource> {
    return std::make_unique<ListWorkload>(reqs);
  });
  const RunResult res = executeRun(*p, RunOptions{});
  const Summary& sm = res.summary;
  ASSERT_TRUE(sm.windowed);
  EXPECT_EQ(sm.arrived, 2);          // the ones at W and W + 1 s
  EXPECT_EQ(sm.finished, 3);         // and the one at W - 1 ns, finishing after W
  EXPECT_EQ(sm.output_tokens, 3 * 20);
}

