// PASCAL through the registry and the run pipeline: knobs, variants,
// determinism, decisions.csv.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "../common/pascal_rig.h"
#include "engine/snapshot.h"
#include "policy/registry.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/error.h"

namespace sl::pascaltest {
namespace {

namespace fs = std::filesystem;

PolicySpec spec(const std::string& id, nlohmann::json knobs = nlohmann::json::object(),
                const std::string& router = "round-robin") {
  PolicySpec p;
  p.id = id;
  p.router = router;
  p.knobs = std::move(knobs);
  return p;
}

TEST(PascalRegistry, CatalogEntries) {
  for (const char* id : {"pascal", "pascal-nomigration", "pascal-nonadaptive"}) {
    const PolicyInfo& p = policyInfo(id);
    EXPECT_EQ(p.family, "PASCAL");
    EXPECT_FALSE(p.usesRouter) << id;
    std::vector<std::string> names;
    for (const KnobSpec& k : p.knobs) {
      names.push_back(k.name);
      const bool flag = k.name == "priority_by_quanta" || k.name == "migrant_displaces" || k.name == "quanta_per_instance";
      EXPECT_EQ(k.unit, flag ? "" : "tokens");
      EXPECT_TRUE(k.integer);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"reasoning_quantum", "answering_quantum", "demote_tokens",
                                               "pace_low_watermark", "headroom_tokens", "priority_by_quanta",
                                               "migrant_displaces", "quanta_per_instance"}));
  }
}

TEST(PascalRegistry, DefaultKnobsAreThePapers) {
  PolicyBundle b = makePolicy(spec("pascal"));
  auto* g = dynamic_cast<PascalGlobal*>(b.global.get());
  ASSERT_NE(g, nullptr);
  EXPECT_STREQ(g->name(), "pascal");  // policy.router is ignored
  EXPECT_EQ(g->config().migration, PascalMigration::Adaptive);
  EXPECT_EQ(g->config().paceLowWatermark, 0);
  EXPECT_EQ(g->config().headroomTokens, 256);
  auto l = b.makeLocal(0);
  auto* pl = dynamic_cast<PascalLocal*>(l.get());
  ASSERT_NE(pl, nullptr);
  EXPECT_EQ(pl->config().reasoningQuantum, 500);
  EXPECT_EQ(pl->config().answeringQuantum, 500);
  EXPECT_EQ(pl->config().demoteTokens, 5000);
  EXPECT_FALSE(b.unlimitedKv);
  EXPECT_FALSE(b.chunkedPrefill.has_value());
}

TEST(PascalRegistry, KnobsReachThePolicy) {
  const nlohmann::json knobs = {{"reasoning_quantum", 7},
                                {"answering_quantum", 9},
                                {"demote_tokens", 1234},
                                {"pace_low_watermark", 2},
                                {"headroom_tokens", 0}};
  for (const auto& [id, mode] :
       {std::pair{"pascal", PascalMigration::Adaptive}, std::pair{"pascal-nomigration", PascalMigration::Never},
        std::pair{"pascal-nonadaptive", PascalMigration::Always}}) {
    SCOPED_TRACE(id);
    PolicyBundle b = makePolicy(spec(id, knobs, "least-kv"));
    auto* g = dynamic_cast<PascalGlobal*>(b.global.get());
    ASSERT_NE(g, nullptr);
    EXPECT_STREQ(g->name(), id);
    EXPECT_EQ(g->config().migration, mode);
    EXPECT_EQ(g->config().paceLowWatermark, 2);
    EXPECT_EQ(g->config().headroomTokens, 0);
    auto l = b.makeLocal(3);
    const auto& lc = dynamic_cast<PascalLocal&>(*l).config();
    EXPECT_EQ(lc.reasoningQuantum, 7);
    EXPECT_EQ(lc.answeringQuantum, 9);
    EXPECT_EQ(lc.demoteTokens, 1234);
  }
  EXPECT_THROW(makePolicy(spec("pascal", {{"reasoning_quantum", 0}})), InputError);
  EXPECT_THROW(makePolicy(spec("pascal", {{"demote_tokens", 1.5}})), InputError);
  EXPECT_THROW(makePolicy(spec("pascal", {{"quantum", 5}})), InputError);
}

// The reasoning quantum knob changes the schedule: two reasoning requests on
// an instance with room for one. With the default quantum request 0 keeps
// running and request 1 waits swapped out; with quantum 2 they take turns
// (each turn swaps the other out).
TEST(PascalRegistry, ReasoningQuantumKnobChangesTheSchedule) {
  struct Out {
    std::vector<std::int64_t> ids;
    std::int64_t preemptions;
    SimTime last0, last1;
  };
  auto runWith = [](int quantum) {
    PolicyBundle b = makePolicy(spec("pascal", {{"reasoning_quantum", quantum}}));
    InstanceConfig ic = test::tinyInstance(4, 4);  // 16 tokens; one request grows to 13
    Simulator sim(test::tinySim(ic, 1), test::tinyCost(),
                  std::make_unique<test::ListWorkload>(std::vector<RequestSpec>{rq(0, 4, 8, 1), rq(0, 4, 8, 1)}),
                  std::move(b.global), b.makeLocal);
    test::Recorder rec;
    sim.addObserver(&rec);
    sim.run();
    EXPECT_EQ(sim.finishedCount(), 2);
    Out o;
    for (const auto& it : rec.iters)
      for (const auto& e : it.batch) o.ids.push_back(e.id);
    o.preemptions = sim.preemptions();
    for (const RequestRecord& r : sim.records()) (r.id == 0 ? o.last0 : o.last1) = r.last_token;
    return o;
  };
  const Out q2 = runWith(2);
  const Out q500 = runWith(500);
  EXPECT_NE(q2.ids, q500.ids);
  EXPECT_GT(q2.preemptions, q500.preemptions);
  EXPECT_LT(q500.last0, q500.last1);
}

const char* kScenario = R"({
  "schema_version": 1,
  "cluster": {"instances": 3, "gpu": "h100-96g", "kv_capacity_fraction": 0.05, "preemption": "swap",
              "chunked_prefill": false, "fabric": {"gpus_per_node": 1, "nic_gbps": 100}},
  "model": "r1-distill-qwen-32b",
  "workload": {"preset": "alpaca-reasoning", "arrival": {"process": "poisson", "rate": 6.0}, "requests": 120},
  "policy": {"id": "pascal"},
  "run": {"seed": 7}
})";

RunResult runScenario(const std::string& id, std::uint64_t seed, const std::string& outDir = "") {
  nlohmann::json j = nlohmann::json::parse(kScenario);
  j["policy"]["id"] = id;
  j["run"]["seed"] = seed;
  const Scenario s = parseScenario(j, "test");
  auto run = prepareRun(s, "test");
  RunOptions opt;
  opt.outDir = outDir;
  return executeRun(*run, opt);
}

TEST(PascalRun, SameSeedSameFingerprint) {
  const RunResult a = runScenario("pascal", 7);
  const RunResult b = runScenario("pascal", 7);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  nlohmann::ordered_json ja = a.summaryJson, jb = b.summaryJson;
  ja.erase("wall_s");
  jb.erase("wall_s");
  EXPECT_EQ(ja.dump(), jb.dump());
  EXPECT_FALSE(a.stalled);
  const RunResult c = runScenario("pascal", 8);
  EXPECT_NE(a.fingerprint, c.fingerprint);
}

TEST(PascalRun, VariantsRunToCompletionAndDiffer) {
  std::vector<std::uint64_t> prints;
  for (const char* id : {"pascal", "pascal-nomigration", "pascal-nonadaptive"}) {
    SCOPED_TRACE(id);
    const RunResult r = runScenario(id, 7);
    EXPECT_FALSE(r.stalled);
    EXPECT_EQ(r.summaryJson["requests"]["finished"].get<std::int64_t>() + r.summaryJson["aborted"].get<std::int64_t>(),
              120)
        << r.summaryJson.dump(2);
    prints.push_back(r.fingerprint);
  }
  EXPECT_NE(prints[0], prints[1]);
  EXPECT_NE(prints[0], prints[2]);
}

TEST(PascalRun, WritesDecisionsCsv) {
  const fs::path dir = fs::temp_directory_path() / ("servelab-pascal-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  runScenario("pascal", 7, dir.string());
  std::ifstream in(dir / "decisions.csv");
  ASSERT_TRUE(in.good());
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "time_s,request_id,kind,from,chosen,instance,candidates,selection,action");
  int rows = 0, placements = 0;
  for (std::string line; std::getline(in, line);) {
    ++rows;
    placements += line.find(",placement,") != std::string::npos;
  }
  EXPECT_EQ(placements, 120);
  EXPECT_GT(rows, 120);
  fs::remove_all(dir);
  // A policy without a log writes none.
  runScenario("fcfs", 7, dir.string());
  EXPECT_FALSE(fs::exists(dir / "decisions.csv"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sl::pascaltest

namespace sl::pascaltest {
namespace {

// The generic path (docs/policy-api.md): PASCAL publishes its monitor as
// named fields, its decision codes as a name table, and a policy_report.
TEST(PascalPublish, FieldsMirrorTheMonitorAndTheReportCountsDecisions) {
  Scenario s = loadScenarioFile(std::string(SERVELAB_SOURCE_DIR) + "/samples/pascal-phase-aware.json");
  s.workload.requests = 300;
  auto run = prepareRun(s, "publish");
  Simulator& sim = *run->simulator;
  sim.run(secondsToNs(60));
  Snapshot snap;
  sim.fillSnapshot(snap);
  const auto& pascal = dynamic_cast<const PascalGlobal&>(sim.globalPolicy());
  for (const InstanceSnapshot& is : snap.instances) {
    const PascalInstanceStatus st = pascal.status(is.id);
    ASSERT_EQ(is.policyFields.size(), 4u);
    EXPECT_EQ(is.policyFields[0].label, "on pace");
    EXPECT_EQ(is.policyFields[0].value, st.onPace ? 1.0 : 0.0);
    EXPECT_EQ(is.policyFields[1].value, static_cast<double>(st.reasoning));
    EXPECT_EQ(is.policyFields[2].value, static_cast<double>(st.freshAnswering));
    EXPECT_EQ(is.policyFields[3].value, static_cast<double>(st.footprint));
    for (const PolicyField& f : is.policyFields) EXPECT_FALSE(f.tooltip.empty()) << f.label;
  }
  ASSERT_EQ(snap.policySeries.size(), 2u);
  // Every code PASCAL logs has a name in its table (no "code N" fallback).
  const DecisionCodeNames* names = sim.globalPolicy().decisionCodeNames();
  ASSERT_NE(names, nullptr);
  ASSERT_FALSE(snap.recentDecisions.empty());
  for (const DecisionSnapshot& d : snap.recentDecisions)
    EXPECT_EQ(d.reason, DecisionLog::reason(d.decision, names));
  std::int64_t moved = 0, stayed = 0;
  for (const Decision& d : sim.globalPolicy().decisionLog()->entries()) {
    EXPECT_EQ(DecisionLog::reason(d, names).find("code "), std::string::npos);
    if (d.boundary) (d.action == PascalAction::Migrate ? moved : stayed) += 1;
  }
  EXPECT_EQ(snap.policySeries[0].value, static_cast<double>(moved));
  EXPECT_EQ(snap.policySeries[1].value, static_cast<double>(stayed));

  sim.run();
  const RunResult r = executeRun(*run, RunOptions{});
  ASSERT_TRUE(r.summaryJson.contains("policy_report"));
  const auto& rep = r.summaryJson["policy_report"];
  std::int64_t boundary = 0, all = 0;
  for (const Decision& d : sim.globalPolicy().decisionLog()->entries()) {
    boundary += d.boundary;
    ++all;
  }
  EXPECT_EQ(rep["boundary_migrated"].get<std::int64_t>() + rep["boundary_stayed"].get<std::int64_t>(), boundary);
  EXPECT_GE(rep["boundary_migrated"].get<std::int64_t>(), r.summaryJson["migrations"].get<std::int64_t>());
  std::int64_t byReason = 0;
  for (const auto& [reason, n] : rep["decisions_by_reason"].items()) byReason += n.get<std::int64_t>();
  EXPECT_EQ(byReason, all);
}

TEST(PascalPublish, PolicyReportJsonNestsAtSlashes) {
  const auto j = policyReportJson({{"a", 1}, {"g/x", 2.5}, {"g/y", 3}, {"g/h/z", 4}});
  EXPECT_EQ(j.dump(), R"({"a":1,"g":{"x":2.5,"y":3,"h":{"z":4}}})");
}

}  // namespace
}  // namespace sl::pascaltest
