// Live changes and saved runs (core/run/live_run.h, saved_run.h): the change
// log's JSON form is strict and names the place of every error; a saved run
// (scenario + "live_changes") round-trips; executeRun with a change log
// reproduces replayRun, writes the files executeRun writes when the log is
// empty, and records the fingerprint a saved run is checked against.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../common/temp_dir.h"
#include "run/execute.h"
#include "run/live_run.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "util/error.h"

using namespace sl;

namespace {

Scenario rrScenario(std::int64_t requests = 300) {
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/pascal-baseline-rr.json");
  s.workload.requests = requests;
  return s;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The message of the InputError `f` throws ("" when it throws none).
template <class F> std::string errorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

ChangeLog parse(const std::string& text) { return changeLogFromJson(nlohmann::json::parse(text), "log"); }

}  // namespace

TEST(ChangeLogJson, RoundTripsExactly) {
  const ChangeLog log = {{30'000'000'001, 1234, "arrival_rate", 12.345678901234567},
                         {30'000'000'001, 1234, "policy.quantum", 20},
                         {61'500'000'000, 99999, "arrival_rate", 0.1}};
  const nlohmann::json j = nlohmann::json::parse(changeLogToJson(log).dump());
  EXPECT_EQ(changeLogFromJson(j), log);
  EXPECT_DOUBLE_EQ(j[0]["time_s"].get<double>(), 30.000000001);
  EXPECT_EQ(j[1]["events"].get<std::int64_t>(), 1234);
}

TEST(ChangeLogJson, RefusesMalformedEntriesNamingThePlace) {
  EXPECT_EQ(errorOf([] { parse(R"({"a": 1})"); }), "log: expected an array of changes, got object");
  EXPECT_EQ(errorOf([] { parse(R"([3])"); }), "log[0]: expected an object {events, time_ns, knob, value}, got number");
  EXPECT_EQ(errorOf([] { parse(R"([{"events": 1, "time_ns": 0, "knob": "arrival_rate"}])"); }),
            "log[0]: missing required field 'value'");
  EXPECT_EQ(errorOf([] { parse(R"([{"events": 1, "time_ns": 0, "knob": "arrival_rate", "valeu": 3, "value": 2}])"); }),
            "log[0]: unknown field 'valeu' (did you mean 'value'?)");
  EXPECT_EQ(errorOf([] { parse(R"([{"events": -1, "time_ns": 0, "knob": "arrival_rate", "value": 2}])"); }),
            "log[0].events: must be >= 0 (got -1)");
  EXPECT_EQ(errorOf([] { parse(R"([{"events": 1.5, "time_ns": 0, "knob": "arrival_rate", "value": 2}])"); }),
            "log[0].events: expected an integer, got 1.5");
  EXPECT_EQ(errorOf([] { parse(R"([{"events": 1, "time_ns": 0, "knob": "arrival_rate", "value": "2"}])"); }),
            "log[0].value: expected a number, got string");
  EXPECT_EQ(errorOf([] { parse(R"([{"events": 1, "time_ns": 0, "knob": 7, "value": 2}])"); }),
            "log[0].knob: expected a string, got number");
  // Out of order: events or times going back.
  EXPECT_EQ(errorOf([] {
              parse(R"([{"events": 10, "time_ns": 5, "knob": "arrival_rate", "value": 2},
                        {"events": 9, "time_ns": 6, "knob": "arrival_rate", "value": 3}])");
            }),
            "log[1].events: 9 is before the previous change's 10 (changes are listed in the order they were made)");
  EXPECT_NE(errorOf([] {
              parse(R"([{"events": 10, "time_ns": 5, "knob": "arrival_rate", "value": 2},
                        {"events": 10, "time_ns": 4, "knob": "arrival_rate", "value": 3}])");
            }).find("log[1].time_ns: 4 is before"),
            std::string::npos);
  // time_s is for reading; a hand edit that disagrees with time_ns is refused.
  EXPECT_NE(errorOf([] {
              parse(R"([{"events": 1, "time_ns": 30000000000, "time_s": 60, "knob": "arrival_rate", "value": 2}])");
            }).find("log[0].time_s: 60 disagrees with time_ns 30000000000 (30 s)"),
            std::string::npos);
  EXPECT_EQ(errorOf([] {
              parse(R"([{"events": 1, "time_ns": 30000000000, "time_s": 30, "knob": "arrival_rate", "value": 2}])");
            }),
            "");
}

TEST(ChangeLogValidate, ChecksKnobsAgainstTheScenario) {
  const Scenario rr = rrScenario();
  auto check = [](const Scenario& s, KnobChange c) { return errorOf([&] { validateChangeLog(s, {c}, "c"); }); };
  EXPECT_EQ(check(rr, {0, 0, "policy.quantum", 20}), "");
  EXPECT_EQ(check(rr, {0, 0, "arrival_rate", 3.5}), "");
  EXPECT_EQ(check(rr, {0, 0, "policy.quantm", 20}), "c[0].knob: policy 'rr' has no knob 'quantm' (did you mean 'policy.quantum'?)");
  EXPECT_EQ(check(rr, {0, 0, "policy.priority_by_quanta", 1}),
            "c[0].knob: policy knob 'priority_by_quanta' cannot change while a run is going");
  EXPECT_NE(check(rr, {0, 0, "policy.quantum", 0}).find("c[0].value: quantum must be in [1, 1000000]"), std::string::npos);
  EXPECT_EQ(check(rr, {0, 0, "policy.quantum", 2.5}), "c[0].value: quantum must be an integer (got 2.5)");
  EXPECT_EQ(check(rr, {0, 0, "arrival_rate", 0}), "c[0].value: an arrival rate must be > 0 req/s (got 0)");
  EXPECT_EQ(check(rr, {0, 0, "speed", 1}), "c[0].knob: unknown knob 'speed' (expected 'arrival_rate', 'concurrency' or 'policy.<knob>')");
  Scenario sched = rr;
  sched.workload.arrival.process = ArrivalSpec::Process::Schedule;
  sched.workload.arrival.schedule = {RateSegment{60, 2}};
  EXPECT_EQ(check(sched, {0, 0, "arrival_rate", 3}),
            "c[0].knob: 'arrival_rate' changes need Poisson or Gamma arrivals (this workload has a rate schedule)");
  EXPECT_EQ(check(sched, {0, 0, "policy.quantum", 30}), "");  // policy knobs need no live rate
}

TEST(SavedRunFile, SectionRoundTripsAndIsStrict) {
  const Scenario s = rrScenario();
  LiveChanges lc;
  lc.changes = {{5'000'000'000, 1000, "arrival_rate", 6}, {9'000'000'000, 2000, "policy.quantum", 40}};
  lc.savedAt = SavedAt{"0.1.0", 2500, 10.25, 0x0123456789abcdefULL};
  const std::string text = dumpSavedRun(s, lc);
  // The scenario part is the canonical scenario; the section comes last.
  EXPECT_EQ(text.rfind(dumpScenario(s).substr(0, dumpScenario(s).size() - 3), 0), 0u);
  nlohmann::json doc = nlohmann::json::parse(text);
  const auto back = takeLiveChanges(doc, "f.json");
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(doc.contains("live_changes"));  // taken out of the document
  EXPECT_EQ(back->changes, lc.changes);
  ASSERT_TRUE(back->savedAt.has_value());
  EXPECT_EQ(back->savedAt->events, 2500);
  EXPECT_EQ(back->savedAt->fingerprint, 0x0123456789abcdefULL);
  EXPECT_EQ(dumpSavedRun(parseScenario(doc, "f.json"), *back), text);

  nlohmann::json plain = nlohmann::json::parse(dumpScenario(s));
  EXPECT_FALSE(takeLiveChanges(plain, "p.json").has_value());

  auto bad = [&](const std::string& section) {
    nlohmann::json d = nlohmann::json::parse(dumpScenario(s));
    d["live_changes"] = nlohmann::json::parse(section);
    return errorOf([&] { takeLiveChanges(d, "f.json"); });
  };
  EXPECT_EQ(bad("[]"), "f.json: live_changes: expected an object {version, changes, saved_at}, got array");
  EXPECT_EQ(bad(R"({"changes": []})"), "f.json: live_changes: missing required field 'version'");
  EXPECT_EQ(bad(R"({"version": 2, "changes": []})"),
            "f.json: live_changes.version: unsupported version 2 (this build of ServeLab reads version 1)");
  EXPECT_EQ(bad(R"({"version": 1, "change": []})"), "f.json: live_changes: unknown field 'change' (did you mean 'changes'?)");
  EXPECT_EQ(bad(R"({"version": 1, "changes": [{"events": 1, "time_ns": 0, "knob": "arrival_rate"}]})"),
            "f.json: live_changes.changes[0]: missing required field 'value'");
  EXPECT_EQ(bad(R"({"version": 1, "changes": [], "saved_at": {"events": 3, "fingerprint": "xyz"}})"),
            "f.json: live_changes.saved_at.fingerprint: expected 16 hex digits (as summary.json writes it), got 'xyz'");
  EXPECT_NE(bad(R"({"version": 1, "changes": [{"events": 9, "time_ns": 0, "knob": "arrival_rate", "value": 2}],
                   "saved_at": {"events": 3, "fingerprint": "0123456789abcdef"}})")
                .find("f.json: live_changes.changes[0].events: 9 is after saved_at.events 3"),
            std::string::npos);
}

TEST(SavedRunFile, LoadsAFileAndChecksItsKnobs) {
  testutil::TempDir tmp;
  const Scenario s = rrScenario();
  LiveChanges lc;
  lc.changes = {{1'000'000'000, 100, "policy.quantum", 2e6}};  // out of range
  const std::string path = tmp.write("run.json", dumpSavedRun(s, lc));
  EXPECT_NE(errorOf([&] { loadScenarioOrSavedRun(path); }).find(path + ": live_changes.changes[0].value: quantum must be in"),
            std::string::npos);
  lc.changes[0].value = 40;
  const std::string ok = tmp.write("ok.json", dumpSavedRun(s, lc));
  const ScenarioFile f = loadScenarioOrSavedRun(ok);
  ASSERT_TRUE(f.live.has_value());
  EXPECT_EQ(f.live->changes, lc.changes);
  EXPECT_EQ(f.scenario.base_dir, tmp.str());
  EXPECT_FALSE(loadScenarioOrSavedRun(SERVELAB_SOURCE_DIR "/samples/default.json").live.has_value());
}

TEST(SavedRunFile, RebasesRelativePathsToTheNewFolder) {
  Scenario s;
  s.base_dir = "/data/scenarios";
  s.workload.trace = TraceSpec{};
  s.workload.trace->path = "../traces/t.csv";
  s.cluster.profile = "/abs/profile.json";
  LengthDist emp;
  emp.kind = LengthDist::Kind::Empirical;
  emp.path = "lens.csv";
  LengthDist mix;
  mix.kind = LengthDist::Kind::Mixture;
  mix.parts = {emp};
  mix.weights = {1};
  s.workload.answer_tokens = mix;
  rebaseScenarioPaths(s, "/data/runs/today");
  EXPECT_EQ(s.workload.trace->path, "../../traces/t.csv");
  EXPECT_EQ(*s.cluster.profile, "/abs/profile.json");
  EXPECT_EQ(s.workload.answer_tokens.parts[0].path, "../../scenarios/lens.csv");
  EXPECT_EQ(s.base_dir, "/data/runs/today");
}

// executeRun with an empty change log writes exactly what executeRun writes.
TEST(LiveExecute, EmptyLogGivesThePlainRunsFiles) {
  testutil::TempDir tmp;
  const Scenario s = rrScenario();
  RunOptions a;
  a.outDir = (tmp.path() / "plain").string();
  auto plain = prepareRun(s, "s");
  const RunResult rp = executeRun(*plain, a);
  RunOptions b;
  b.outDir = (tmp.path() / "live").string();
  auto live = prepareLiveRun(s, "s");
  ASSERT_NE(live->rate, nullptr);  // Poisson: the live-rate wrapper is in place
  const RunResult rl = executeRun(*live, {}, b);
  EXPECT_EQ(rl.fingerprint, rp.fingerprint);
  EXPECT_TRUE(rl.complete);
  ASSERT_EQ(rl.files.size(), rp.files.size());
  ASSERT_GE(rp.files.size(), 4u);
  for (std::size_t i = 0; i < rp.files.size(); ++i) {
    const auto name = std::filesystem::path(rp.files[i]).filename();
    EXPECT_EQ(std::filesystem::path(rl.files[i]).filename(), name);
    EXPECT_EQ(slurp(rl.files[i]), slurp(rp.files[i])) << name;
  }
}

// Changes applied by executeRun give replayRun's trajectory; the fingerprint
// at a chosen event count is recorded; summary.json lists the changes.
TEST(LiveExecute, ReplaysChangesAndRecordsTheCheck) {
  const Scenario s = rrScenario();
  // Record a run the way the GUI does: apply changes while stepping.
  auto rec = prepareLiveRun(s, "rec");
  while (rec->sim().eventsProcessed() < 3000 && rec->sim().step()) {}
  rec->apply({rec->sim().now() + 1000, 0, "arrival_rate", 9.5});
  while (rec->sim().eventsProcessed() < 6000 && rec->sim().step()) {}
  rec->apply({rec->sim().now(), 0, "policy.quantum", 37});
  while (rec->sim().eventsProcessed() < 8000 && rec->sim().step()) {}
  const std::uint64_t at8000 = rec->sim().fingerprint();
  while (rec->sim().step()) {}
  const ChangeLog log = rec->changes;
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].events, 3000);

  RunOptions opt;
  opt.checkAtEvents = 8000;
  auto live = prepareLiveRun(s, "replay");
  const RunResult r = executeRun(*live, log, opt);
  EXPECT_EQ(r.fingerprint, rec->sim().fingerprint());
  EXPECT_EQ(r.fingerprint, replayRun(s, log).fingerprint);
  EXPECT_EQ(r.changesApplied, 2u);
  ASSERT_TRUE(r.fingerprintAtCheck.has_value());
  EXPECT_EQ(*r.fingerprintAtCheck, at8000);
  EXPECT_EQ(changeLogFromJson(r.summaryJson.at("live_changes")), log);
  // Without the changes the run is another one.
  EXPECT_NE(replayRun(s, {}).fingerprint, r.fingerprint);

  // Stopping early (the GUI's export of a run in progress).
  RunOptions early;
  early.stopAfterEvents = 5000;
  auto part = prepareLiveRun(s, "part");
  const RunResult rp = executeRun(*part, log, early);
  EXPECT_EQ(rp.events, 5000);
  EXPECT_FALSE(rp.complete);
  EXPECT_EQ(rp.changesApplied, 1u);
  EXPECT_EQ(rp.fingerprint, replayRun(s, log, 5000).fingerprint);
}

// A trace workload has no live rate but takes live policy knobs, and keeps
// its trace counters (the plain prepareRun path).
TEST(LiveExecute, TraceWorkloadsTakePolicyKnobs) {
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/trace-burstgpt-rr.json");
  s.policy.id = "rr";
  s.policy.knobs = nlohmann::json::object();
  auto live = prepareLiveRun(s, "t");
  EXPECT_FALSE(live->rateLive);
  EXPECT_EQ(live->rate, nullptr);
  EXPECT_NE(live->prepared->traceStats, nullptr);
  EXPECT_NE(errorOf([&] { live->apply({0, 0, "arrival_rate", 3}); }), "");
  live->apply({0, 0, "policy.quantum", 64});
  EXPECT_EQ(live->changes.size(), 1u);
}
