// Fingerprints (70-quality.md "Reliability"): every sample scenario has a
// recorded hash of its event trajectory, of its summary (without the version
// string and wall time) and of every output file it writes (requests.csv,
// timeseries.csv, trace.json, decisions.csv, tail_ttft.csv) and of the
// policy's "policy_report" where it writes one, plus a few
// readable key numbers printed beside the hashes so a failure shows what
// moved. Any behaviour change flips one; a deliberate change updates
// fingerprints.json in the same commit, with the reason (regenerate:
// SERVELAB_UPDATE_FINGERPRINTS=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/temp_dir.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/atomic_file.h"
#include "util/rng.h"

namespace fs = std::filesystem;
using namespace sl;

namespace {

const std::string kSamples = std::string(SERVELAB_SOURCE_DIR) + "/samples";
const std::string kTable = std::string(SERVELAB_SOURCE_DIR) + "/tests/samples/fingerprints.json";

std::vector<std::string> sampleFiles() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kSamples))
    if (e.path().extension() == ".json") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Print {
  std::string trajectory, summary;
  std::string policyReport;  // hash of summary.json's "policy_report", "" when the policy has none
  nlohmann::ordered_json files = nlohmann::ordered_json::object();  // output file -> hash
  nlohmann::ordered_json key = nlohmann::ordered_json::object();    // readable figures
};

std::string readBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The figures printed beside the hashes: enough to see what a change moved.
nlohmann::ordered_json keyNumbers(const nlohmann::ordered_json& j) {
  nlohmann::ordered_json k;
  k["events"] = j["events"];
  k["arrived"] = j["requests"]["arrived"];
  k["finished"] = j["requests"]["finished"];
  k["aborted"] = j["aborted"];
  k["preemptions"] = j["preemptions"];
  k["migrations"] = j["migrations"];
  k["ttft_p99_s"] = j["ttft_s"]["p99"];
  k["e2e_p99_s"] = j["e2e_s"]["p99"];
  k["sim_s"] = j["sim_s"];
  return k;
}

Print fingerprintOf(const std::string& file) {
  const Scenario s = loadScenarioFile(kSamples + "/" + file);
  auto run = prepareRun(s, file);
  testutil::TempDir dir("servelab-fingerprint");
  RunOptions opt;  // no wall time
  opt.outDir = dir.str();
  RunResult r = executeRun(*run, opt);
  Print p;
  p.trajectory = fingerprintHex(r.fingerprint);
  // What the summary says, not which build said it.
  nlohmann::ordered_json summary = r.summaryJson;
  summary.erase("wall_s");
  summary.erase("servelab_version");
  // The policy's own report has a hash of its own, so adding one to a
  // policy does not move the summary hash of its runs.
  if (summary.contains("policy_report")) {
    p.policyReport = fingerprintHex(fnv1a64(summary["policy_report"].dump()));
    summary.erase("policy_report");
  }
  p.summary = fingerprintHex(fnv1a64(summary.dump()));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  for (const std::string& n : names)
    if (n != "summary.json") p.files[n] = fingerprintHex(fnv1a64(readBytes(dir.path() / n)));
  p.key = keyNumbers(summary);
  return p;
}

}  // namespace

TEST(Samples, EverySampleHasARecordedFingerprint) {
  const auto files = sampleFiles();
  ASSERT_GE(files.size(), 5u);
  nlohmann::ordered_json table;
  {
    std::ifstream in(kTable);
    if (in) table = nlohmann::ordered_json::parse(in);
  }
  const bool update = std::getenv("SERVELAB_UPDATE_FINGERPRINTS") != nullptr;
  nlohmann::ordered_json fresh = nlohmann::ordered_json::object();
  for (const std::string& f : files) {
    const Print p = fingerprintOf(f);
    fresh[f] = {{"trajectory", p.trajectory}, {"summary", p.summary}};
    if (!p.policyReport.empty()) fresh[f]["policy_report"] = p.policyReport;
    fresh[f]["files"] = p.files;
    fresh[f]["key"] = p.key;
    if (update) continue;
    ASSERT_TRUE(table.contains(f)) << f << " has no fingerprint: run with SERVELAB_UPDATE_FINGERPRINTS=1";
    const auto& want = table[f];
    const std::string moved = "\n  recorded: " + want.value("key", nlohmann::ordered_json()).dump() +
                              "\n  now:      " + p.key.dump();
    EXPECT_EQ(want["trajectory"], p.trajectory) << f << ": event trajectory changed" << moved;
    EXPECT_EQ(want["summary"], p.summary) << f << ": summary changed" << moved;
    EXPECT_EQ(want.value("policy_report", std::string()), p.policyReport) << f << ": policy_report changed";
    EXPECT_EQ(want.value("files", nlohmann::ordered_json::object()), p.files)
        << f << ": output files changed" << moved;
  }
  if (update) writeFileAtomic(kTable, fresh.dump(2) + "\n");
}

TEST(Samples, SameScenarioTwiceIsIdentical) {
  const Print a = fingerprintOf("pascal-baseline-rr.json");
  const Print b = fingerprintOf("pascal-baseline-rr.json");
  EXPECT_EQ(a.trajectory, b.trajectory);
  EXPECT_EQ(a.summary, b.summary);
  EXPECT_EQ(a.files, b.files);
}

TEST(Samples, EverySampleIsCanonicalAfterRoundTrip) {
  for (const std::string& f : sampleFiles()) {
    const Scenario s = loadScenarioFile(kSamples + "/" + f);
    const std::string once = dumpScenario(s);
    const std::string twice = dumpScenario(parseScenario(nlohmann::json::parse(once), f));
    EXPECT_EQ(once, twice) << f;
  }
}
