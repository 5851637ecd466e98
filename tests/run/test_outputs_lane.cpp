// Output files on the fast path (issue 27): the recorders behind
// timeseries.csv, policy_series.csv and trace.json are lane-safe, so a run
// with --out keeps its decode lanes (engine/decode_lane.h). Every file it
// writes must be the same bytes as with the lanes forced off (a watcher that
// is not lane-safe attached, as the GUI's bridge is), for the FCFS and
// PASCAL samples (the ones whose lanes run). Also: --outputs (parseOutputSet) and what
// each group writes.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "engine/instance.h"
#include "engine/observer.h"
#include "engine/simulator.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/error.h"

using namespace sl;
namespace fs = std::filesystem;

namespace {

// Not lane-safe (the default): attaching it turns every lane off.
struct LaneBlocker : SimObserver {};

struct Ran {
  std::map<std::string, std::string> files;  // name -> bytes
  std::int64_t laneSteps = 0;
  std::uint64_t fingerprint = 0;
};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Ran runTo(const Scenario& s, const std::string& dir, bool lanes, const OutputSet& outputs = {}) {
  fs::remove_all(dir);
  auto p = prepareRun(s, "lane-test");
  LaneBlocker blocker;
  if (!lanes) p->simulator->addObserver(&blocker);
  RunOptions opt;
  opt.outDir = dir;
  opt.outputs = outputs;
  const RunResult r = executeRun(*p, opt);
  Ran out;
  out.fingerprint = r.fingerprint;
  for (const auto& e : fs::directory_iterator(dir)) out.files[e.path().filename().string()] = readFile(e.path());
  Simulator& sim = *p->simulator;
  for (int i = 0; i < sim.numInstances(); ++i)
    if (const DecodeLane* lane = sim.instance(i).policy().decodeLane()) out.laneSteps += lane->steps();
  return out;
}

std::string tmpDir(const std::string& name) { return ::testing::TempDir() + "servelab_lane_out_" + name; }

Scenario sample(const std::string& name) {
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/" + name + ".json");
  // Short enough for a unit test, long enough for thousands of lane steps.
  if (s.workload.requests > 600) s.workload.requests = 600;
  return s;
}

class OutputsLane : public ::testing::TestWithParam<const char*> {};

TEST_P(OutputsLane, FilesWithLanesOnEqualLanesOff) {
  const std::string name = GetParam();
  const Scenario s = sample(name);
  const Ran lazy = runTo(s, tmpDir(name + "_on"), true);
  const Ran eager = runTo(s, tmpDir(name + "_off"), false);
  EXPECT_EQ(eager.laneSteps, 0);
  EXPECT_GT(lazy.laneSteps, 0) << name << ": the lanes never ran with the recorders attached";
  EXPECT_EQ(lazy.fingerprint, eager.fingerprint);
  ASSERT_EQ(lazy.files.size(), eager.files.size());
  for (const auto& [file, bytes] : eager.files) {
    ASSERT_TRUE(lazy.files.count(file)) << name << ": " << file << " missing with lanes on";
    // EXPECT_TRUE, not EXPECT_EQ: a diff of megabytes would drown the log.
    EXPECT_TRUE(lazy.files.at(file) == bytes) << name << ": " << file << " differs with lanes on";
  }
  for (const char* f : {"summary.json", "requests.csv", "timeseries.csv", "trace.json"})
    EXPECT_TRUE(eager.files.count(f)) << name << ": " << f << " not written";
  fs::remove_all(tmpDir(name + "_on"));
  fs::remove_all(tmpDir(name + "_off"));
}

// FCFS with the plain router (lanes run), including prefix caching, a closed
// loop, a trace workload and a rate schedule.
INSTANTIATE_TEST_SUITE_P(FcfsSamples, OutputsLane,
                         ::testing::Values("default", "routing-power-of-two", "pascal-baseline-fcfs",
                                           "pascal-char-reasoning-fcfs", "selfsched-math-fcfs", "prefix-system-prompt",
                                           "prefix-sessions", "closed-loop-chat-think", "rate-schedule-tp2-70b",
                                           "trace-azure-random-router"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// PASCAL (its own global policy and PascalLocal's lane; decisions.csv and
// policy_series.csv too), with and without migration, multi-node.
INSTANTIATE_TEST_SUITE_P(PascalSamples, OutputsLane,
                         ::testing::Values("pascal-phase-aware", "pascal-ablation-nomigration",
                                           "pascal-ablation-nonadaptive", "pascal-multinode"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(OutputSet, ParsesGroupsAndAll) {
  EXPECT_EQ(parseOutputSet("all"), OutputSet{});
  EXPECT_EQ(parseOutputSet("summary,requests,timeseries,trace"), OutputSet{});
  const OutputSet s = parseOutputSet("requests,summary");
  EXPECT_TRUE(s.summary);
  EXPECT_TRUE(s.requests);
  EXPECT_FALSE(s.timeseries);
  EXPECT_FALSE(s.trace);
  EXPECT_EQ(outputSetString(s), "summary,requests");
  EXPECT_EQ(outputSetString(parseOutputSet("trace")), "trace");
}

TEST(OutputSet, BadValuesNameTheOptionAndTheValue) {
  try {
    parseOutputSet("summary,timeserie");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--outputs"), std::string::npos) << m;
    EXPECT_NE(m.find("'timeserie'"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'timeseries'"), std::string::npos) << m;
  }
  EXPECT_THROW(parseOutputSet(""), InputError);
  EXPECT_THROW(parseOutputSet("summary,"), InputError);
  EXPECT_THROW(parseOutputSet("csv"), InputError);
}

// Each group writes its files and only those, the same bytes as a full
// run's; summary and requests alone attach nothing, so the lanes run.
TEST(OutputSet, GroupsWriteTheirFilesOnly) {
  const Scenario s = sample("pascal-baseline-fcfs");
  const Ran full = runTo(s, tmpDir("full"), true);
  ASSERT_TRUE(full.files.count("tail_ttft.csv"));  // a reasoning workload
  const std::map<std::string, std::vector<std::string>> groups = {
      {"summary", {"summary.json", "tail_ttft.csv"}},
      {"requests", {"requests.csv"}},
      {"timeseries", {"timeseries.csv"}},
      {"trace", {"trace.json"}},
      {"summary,requests", {"summary.json", "tail_ttft.csv", "requests.csv"}},
  };
  for (const auto& [list, want] : groups) {
    const Ran r = runTo(s, tmpDir("group"), true, parseOutputSet(list));
    EXPECT_EQ(r.fingerprint, full.fingerprint) << list;
    EXPECT_GT(r.laneSteps, 0) << list;
    EXPECT_EQ(r.files.size(), want.size()) << list;
    for (const std::string& f : want) {
      ASSERT_TRUE(r.files.count(f)) << list << ": " << f;
      EXPECT_TRUE(r.files.at(f) == full.files.at(f)) << list << ": " << f << " differs from the full run's";
    }
  }
  fs::remove_all(tmpDir("full"));
  fs::remove_all(tmpDir("group"));
}

// A cancelled run writes nothing and leaves no folder it created behind,
// whichever groups it writes (the folder was left behind when trace.json
// was not among them: only the trace's path made the run track it).
TEST(OutputSet, CancelledRunLeavesNoFolder) {
  // Short runs (under 65 536 events: the cancel is found at the last check,
  // before the commit, once the files are built) and a long one.
  Scenario s = sample("pascal-baseline-fcfs");
  s.workload.requests = 200;
  Scenario longer = sample("pascal-baseline-fcfs");
  for (const std::string list : {"all", "summary", "requests", "timeseries", "summary,requests", "long"}) {
    const std::string parent = tmpDir("cancelled");
    fs::remove_all(parent);
    const std::string dir = parent + "/deeper/out";
    auto p = prepareRun(list == "long" ? longer : s, "cancel-test");
    const std::atomic<bool> cancel{true};
    RunOptions opt;
    opt.outDir = dir;
    opt.outputs = parseOutputSet(list == "long" ? "summary,requests" : list);
    opt.cancel = &cancel;
    EXPECT_THROW(executeRun(*p, opt), RunCancelled) << list;
    EXPECT_FALSE(fs::exists(parent)) << list << ": " << dir << " or a folder above it is left";
  }
}

}  // namespace
