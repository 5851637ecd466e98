// core/output/TraceRecorder: the policy decision log as instant events in
// trace.json (unit: a hand-made log; end to end: a PASCAL run's trace.json
// against its decisions.csv).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../common/temp_dir.h"
#include "engine/policy_api.h"
#include "policy/pascal/pascal_decisions.h"
#include "engine/decision_log.h"
#include "engine/request.h"
#include "output/trace_recorder.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/csv.h"

namespace sl {
namespace {

using nlohmann::json;

std::vector<json> decisionEvents(const json& doc) {
  std::vector<json> out;
  for (const json& e : doc.at("traceEvents"))
    if (e.value("cat", "") == "decision") out.push_back(e);
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A policy's own decision names reach trace.json (escaped) and
// decisions.csv; a code without a name reads "code N".
TEST(TraceDecisions, PolicyNamesAreEscapedAndUnnamedCodesSaySo) {
  TraceRecorder rec(2, /*requestLimit=*/10);
  DecisionLog log;
  Decision d;
  d.time = 1'000'000;
  d.requestId = 1;
  d.boundary = true;
  d.from = 0;
  d.chosen = d.instance = 1;
  d.selection = 0;
  d.action = 1;
  log.add(d, std::vector<std::int32_t>{0, 1});
  Decision unnamed = d;
  unnamed.action = 7;
  log.add(unnamed, std::vector<std::int32_t>{1});
  const DecisionCodeNames names{{"pool \"P\""}, {"keep", "flip P->D"}};
  const json doc = json::parse(rec.finish(2'000'000'000, &log, &names));
  const std::vector<json> ev = decisionEvents(doc);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["name"], "flip P->D");
  EXPECT_EQ(ev[0]["args"]["reason"], "pool \"P\"; flip P->D");
  EXPECT_EQ(ev[1]["name"], "code 7");
  EXPECT_EQ(log.csv(&names),
            "time_s,request_id,kind,from,chosen,instance,candidates,selection,action\n"
            "0.001000000,1,boundary,0,1,1,0 1,\"pool \"\"P\"\"\",flip P->D\n"
            "0.001000000,1,boundary,0,1,1,1,\"pool \"\"P\"\"\",code 7\n");
  EXPECT_EQ(DecisionLog::reason(d, nullptr), "code 0; code 1");
}

TEST(TraceDecisions, InstantEventsOnTheInstanceTrack) {
  TraceRecorder rec(3, /*requestLimit=*/10);
  DecisionLog log;
  Decision place;
  place.time = 1'500'000;  // 1.5 ms
  place.requestId = 4;
  place.chosen = 1;
  place.instance = 1;
  place.selection = PascalSelection::SloFiltered;
  place.action = PascalAction::Placed;
  const std::vector<std::int32_t> c1 = {0, 1, 2};
  log.add(place, c1);
  Decision boundary;
  boundary.time = 2'000'000'123;
  boundary.requestId = 4;
  boundary.boundary = true;
  boundary.from = 1;
  boundary.chosen = 2;
  boundary.instance = 2;
  boundary.selection = PascalSelection::FallbackRA;
  boundary.action = PascalAction::Migrate;
  const std::vector<std::int32_t> c2 = {0, 2};
  log.add(boundary, c2);
  Decision beyond = place;  // request 10 is past the trace's request limit
  beyond.requestId = 10;
  log.add(beyond, c1);

  const json doc = json::parse(rec.finish(3'000'000'000, &log, &pascalDecisionNames()));
  const std::vector<json> ev = decisionEvents(doc);
  ASSERT_EQ(ev.size(), 2u);
  const std::int64_t tid = rec.decisionsTid();
  EXPECT_GT(tid, 10);  // above every request track (tid = id + 1 <= 10)

  EXPECT_EQ(ev[0]["ph"], "i");
  EXPECT_EQ(ev[0]["s"], "t");
  EXPECT_EQ(ev[0]["name"], "placed");
  EXPECT_EQ(ev[0]["pid"], 2);  // instance 1
  EXPECT_EQ(ev[0]["tid"], tid);
  EXPECT_DOUBLE_EQ(ev[0]["ts"].get<double>(), 1500.0);  // microseconds
  EXPECT_EQ(ev[0]["args"]["request"], 4);
  EXPECT_EQ(ev[0]["args"]["kind"], "placement");
  EXPECT_EQ(ev[0]["args"]["candidates"], json::array({0, 1, 2}));
  EXPECT_EQ(ev[0]["args"]["chosen"], 1);
  EXPECT_EQ(ev[0]["args"]["reason"], "SLO-filtered");

  EXPECT_EQ(ev[1]["name"], "migrate");
  EXPECT_EQ(ev[1]["pid"], 2);  // taken where the request was: instance 1
  EXPECT_DOUBLE_EQ(ev[1]["ts"].get<double>(), 2000000.123);
  EXPECT_EQ(ev[1]["args"]["kind"], "boundary");
  EXPECT_EQ(ev[1]["args"]["from"], 1);
  EXPECT_EQ(ev[1]["args"]["candidates"], json::array({0, 2}));
  EXPECT_EQ(ev[1]["args"]["chosen"], 2);
  EXPECT_EQ(ev[1]["args"]["instance"], 2);
  EXPECT_EQ(ev[1]["args"]["reason"], "fallback r+a; migrate");

  // The track is named once per instance that has decisions.
  int named = 0;
  for (const json& e : doc["traceEvents"])
    if (e["name"] == "thread_name" && e.value("tid", std::int64_t{-1}) == tid) {
      EXPECT_EQ(e["args"]["name"], "decisions");
      EXPECT_EQ(e["pid"], 2);
      ++named;
    }
  EXPECT_EQ(named, 1);
}

TEST(TraceDecisions, NoLogLeavesTheTraceUnchanged) {
  TraceRecorder a(2, 10), b(2, 10);
  DecisionLog empty;
  EXPECT_EQ(a.finish(1000), b.finish(1000, &empty));
  TraceRecorder c(2, 10);
  EXPECT_EQ(a.finish(1000), c.finish(1000, nullptr));
}

Scenario smallRun(const std::string& policy) {
  Scenario s = parseScenario(json::parse(R"({
    "schema_version": 1,
    "cluster": {"instances": 4, "gpu": "h100-96g", "kv_capacity_fraction": 0.5, "preemption": "swap",
                "chunked_prefill": false, "fabric": {"gpus_per_node": 1, "nic_gbps": 100}},
    "model": "r1-distill-qwen-32b",
    "workload": {"preset": "alpaca-reasoning", "arrival": {"process": "poisson", "rate": 6.0}, "requests": 150},
    "policy": {"id": "fcfs"},
    "run": {"seed": 3}
  })"),
                             "test");
  s.policy.id = policy;
  return s;
}

json runAndReadTrace(const Scenario& s, const std::string& dir) {
  auto prepared = prepareRun(s, "trace-test");
  RunOptions opt;
  opt.outDir = dir;
  executeRun(*prepared, opt);
  return json::parse(readFile(dir + "/trace.json"));
}

TEST(TraceDecisions, PascalRunHasOneEventPerDecisionsCsvRow) {
  testutil::TempDir dir("servelab-trace");
  const json doc = runAndReadTrace(smallRun("pascal"), dir.str());
  const std::vector<json> ev = decisionEvents(doc);

  std::ifstream in(dir.str() + "/decisions.csv");
  CsvReader csv(in, "decisions.csv");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  ASSERT_TRUE(csv.next(row));  // header
  ASSERT_EQ(row.front(), "time_s");
  while (csv.next(row)) rows.push_back(row);
  // 150 placements + one boundary decision per request that reasoned.
  ASSERT_GE(rows.size(), 150u);
  ASSERT_EQ(ev.size(), rows.size());

  int placements = 0, boundaries = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // time_s,request_id,kind,from,chosen,instance,candidates,selection,action
    const auto& r = rows[i];
    const json& e = ev[i];
    EXPECT_EQ(e["args"]["request"].get<std::int64_t>(), std::stoll(r[1])) << i;
    EXPECT_EQ(e["args"]["kind"], r[2]);
    EXPECT_EQ(e["args"]["from"].get<int>(), std::stoi(r[3]));
    EXPECT_EQ(e["args"]["chosen"].get<int>(), std::stoi(r[4]));
    EXPECT_EQ(e["args"]["instance"].get<int>(), std::stoi(r[5]));
    std::string cands;
    for (const json& c : e["args"]["candidates"]) {
      if (!cands.empty()) cands += ' ';
      cands += std::to_string(c.get<int>());
    }
    EXPECT_EQ(cands, r[6]);
    EXPECT_EQ(e["name"], r[8]);
    const std::string reason = e["args"]["reason"];
    EXPECT_EQ(reason.rfind(r[7], 0), 0u) << reason;  // starts with the selection
    // trace ts is microseconds, decisions.csv seconds
    EXPECT_NEAR(e["ts"].get<double>() / 1e6, std::stod(r[0]), 1e-9);
    const int track = r[2] == "boundary" ? std::stoi(r[3]) : std::stoi(r[5]);
    EXPECT_EQ(e["pid"].get<int>(), track + 1);
    (r[2] == "boundary" ? boundaries : placements)++;
  }
  EXPECT_EQ(placements, 150);
  EXPECT_GT(boundaries, 0);
}

TEST(TraceDecisions, PoliciesWithoutALogAddNothing) {
  testutil::TempDir dir("servelab-trace");
  const json doc = runAndReadTrace(smallRun("fcfs"), dir.str());
  EXPECT_TRUE(decisionEvents(doc).empty());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "decisions.csv"));
}

// Streamed as the run goes (streamTo), the document is the same bytes as
// built whole (finish): many blocks of ~1 MB, spans still open at the end,
// decisions; and a trace small enough for one block.
TEST(TraceStream, StreamedBytesEqualTheWholeDocument) {
  for (const int requests : {3, 40000}) {
    TraceRecorder whole(3, requests), streamed(3, requests);
    std::ostringstream os;
    streamed.streamTo(os);
    DecisionLog log;
    Request r;
    r.answer = 10;
    for (int i = 0; i < requests; ++i) {
      r.id = i;
      const int inst = i % 3;
      const SimTime t = 1000 * static_cast<SimTime>(i);
      for (TraceRecorder* rec : {&whole, &streamed}) {
        rec->onRequestEvent(RequestEvent::Arrived, r, inst, t);
        rec->onRequestEvent(RequestEvent::FirstScheduled, r, inst, t + 7);
        if (i % 5 != 0) rec->onRequestEvent(RequestEvent::Finished, r, inst, t + 123'456'789);  // else still open
      }
      if (i % 1000 == 0) {
        Decision d;
        d.time = t;
        d.requestId = i;
        d.from = -1;
        d.chosen = d.instance = inst;
        log.add(d, std::vector<std::int32_t>{0, 1, 2});
      }
    }
    const std::string doc = whole.finish(9'000'000'000'000, &log);
    streamed.finishTo(os, 9'000'000'000'000, &log);
    if (requests > 3) {
      EXPECT_GT(doc.size(), std::size_t{8} << 20);  // several blocks
    }
    EXPECT_TRUE(os.str() == doc) << requests << " requests: " << os.str().size() << " bytes streamed, " << doc.size();
    EXPECT_EQ(json::parse(os.str())["traceEvents"].size(), json::parse(doc)["traceEvents"].size());
  }
}

// trace.json is streamed into its temporary in the output folder while the
// run goes; a run refused part-way leaves neither the folder (nor the
// parents it created) nor a temporary behind.
TEST(TraceStream, RunRefusedPartWayLeavesNoFolder) {
  testutil::TempDir dir("servelab-trace");
  const std::string out = dir.str() + "/new/nested";
  auto prepared = prepareRun(smallRun("fcfs"), "trace-test");
  RunOptions opt;
  opt.outDir = out;
  bool called = false;
  opt.progress = [&](double, double) {
    called = true;
    EXPECT_TRUE(std::filesystem::is_directory(out));  // the temporary is being written
    throw std::runtime_error("cancelled");
  };
  EXPECT_THROW(executeRun(*prepared, opt), std::runtime_error);
  EXPECT_TRUE(called);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "new"));
  // An existing folder stays (only what the run created goes).
  std::filesystem::create_directories(out);
  auto again = prepareRun(smallRun("fcfs"), "trace-test");
  EXPECT_THROW(executeRun(*again, opt), std::runtime_error);
  EXPECT_TRUE(std::filesystem::is_directory(out));
  EXPECT_TRUE(std::filesystem::is_empty(out));
}

TEST(TraceDecisions, SameRunSameTrace) {
  testutil::TempDir a("servelab-trace"), b("servelab-trace");
  runAndReadTrace(smallRun("pascal"), a.str());
  runAndReadTrace(smallRun("pascal"), b.str());
  EXPECT_EQ(readFile(a.str() + "/trace.json"), readFile(b.str() + "/trace.json"));
}

}  // namespace
}  // namespace sl
