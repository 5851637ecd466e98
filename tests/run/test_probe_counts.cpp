// The probe's per-instance queued/running counts (issue 27): the engine
// keeps them as counters (Simulator::countProbe at every change of a
// request's state, instance or release) instead of scanning the request
// pool at every probe. Here they are compared with that scan, every few
// events, over samples that route, migrate (Llumnix, PASCAL), hand off
// (disaggregated), preempt (recompute, swap), cache prefixes and run on
// the decode lanes. A change that misses a hook fails here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/simulator.h"
#include "engine/snapshot.h"
#include "run/run.h"
#include "scenario/scenario_io.h"

using namespace sl;

namespace {

struct Case {
  const char* name;
  int requests;        // cap, for a short test
  bool migrates;       // expect migrations or hand-offs
  bool preempts;       // expect preemptions
};

class ProbeCounts : public ::testing::TestWithParam<Case> {};

TEST_P(ProbeCounts, CountersEqualPoolScan) {
  const Case c = GetParam();
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/" + std::string(c.name) + ".json");
  if (s.workload.requests > c.requests) s.workload.requests = c.requests;
  auto p = prepareRun(s, "probe-counts-test");
  Simulator& sim = *p->simulator;
  const auto n = static_cast<std::size_t>(sim.numInstances());
  std::int64_t checks = 0, maxQueued = 0, maxRunning = 0;
  const auto check = [&] {
    // The probe's scan before issue 27 (engine/probes.cpp).
    std::vector<std::int32_t> queued(n, 0), running(n, 0);
    sim.forEachActiveUnsynced([&](const Request& r) {
      if (r.instance < 0 || r.arrival > sim.now()) return;
      if (r.state == ReqState::Running) ++running[static_cast<std::size_t>(r.instance)];
      else if (r.state == ReqState::Waiting || r.state == ReqState::Swapped) ++queued[static_cast<std::size_t>(r.instance)];
    });
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(sim.probeQueued(static_cast<int>(i)), queued[i])
          << c.name << ": instance " << i << " at event " << sim.eventsProcessed();
      ASSERT_EQ(sim.probeRunning(static_cast<int>(i)), running[i])
          << c.name << ": instance " << i << " at event " << sim.eventsProcessed();
      maxQueued = std::max<std::int64_t>(maxQueued, queued[i]);
      maxRunning = std::max<std::int64_t>(maxRunning, running[i]);
    }
    ++checks;
  };
  for (std::int64_t e = 0; sim.step(); ++e) {
    if (e % 7 == 0) check();
    if (::testing::Test::HasFatalFailure()) return;
  }
  check();
  EXPECT_GT(checks, 100);
  EXPECT_GT(maxQueued, 0) << c.name;
  EXPECT_GT(maxRunning, 0) << c.name;
  std::int64_t migrations = 0, preemptions = 0;
  sim.records().forEach([&](const RequestRecord& r) {
    migrations += r.migrations;
    preemptions += r.preemptions;
  });
  // The snapshot's input-token counter (the app's $ per million input
  // tokens): every request's prompt once its first token is out, counted
  // once through preemptions, migrations and hand-offs.
  std::int64_t prefilled = 0;
  const auto addInput = [&](const RequestRecord& r) {
    if (r.first_token != kNoTime) prefilled += r.input;
  };
  sim.records().forEach(addInput);
  for (const RequestRecord& r : sim.inFlightRecords()) addInput(r);
  Snapshot snap;
  sim.fillSnapshot(snap);
  EXPECT_EQ(snap.inputPrefilled, prefilled) << c.name;
  EXPECT_GT(prefilled, 0) << c.name;
  if (c.migrates) {
    EXPECT_GT(migrations + sim.handoffs(), 0) << c.name << ": the case does not exercise migrations";
  }
  if (c.preempts) {
    EXPECT_GT(preemptions, 0) << c.name << ": the case does not exercise preemptions";
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, ProbeCounts,
                         ::testing::Values(Case{"default", 800, false, false},
                                           Case{"llumnix-sharegpt-h20", 1500, true, false},
                                           Case{"pascal-phase-aware", 400, true, false},
                                           Case{"example-split-handoff", 400, true, false},
                                           Case{"recompute-preemption", 800, false, true},
                                           Case{"prefix-sessions", 600, false, false},
                                           Case{"cascade-sharegpt-h20", 600, false, false},
                                           Case{"arrow-burst-8gpu", 400, false, false}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string s = i.param.name;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

}  // namespace
