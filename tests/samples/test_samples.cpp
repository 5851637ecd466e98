// Fingerprints (70-quality.md "Reliability"): every sample scenario has a
// recorded hash of its event trajectory and of its summary. Any behaviour
// change flips one; a deliberate change updates fingerprints.json in the same
// commit, with the reason (regenerate: SERVELAB_UPDATE_FINGERPRINTS=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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
};

Print fingerprintOf(const std::string& file) {
  const Scenario s = loadScenarioFile(kSamples + "/" + file);
  auto run = prepareRun(s, file);
  RunOptions opt;  // no outputs, no wall time
  RunResult r = executeRun(*run, opt);
  r.summaryJson.erase("wall_s");
  return {fingerprintHex(r.fingerprint), fingerprintHex(fnv1a64(r.summaryJson.dump()))};
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
    if (update) continue;
    ASSERT_TRUE(table.contains(f)) << f << " has no fingerprint: run with SERVELAB_UPDATE_FINGERPRINTS=1";
    EXPECT_EQ(table[f]["trajectory"], p.trajectory) << f << ": event trajectory changed";
    EXPECT_EQ(table[f]["summary"], p.summary) << f << ": summary changed";
  }
  if (update) writeFileAtomic(kTable, fresh.dump(2) + "\n");
}

TEST(Samples, SameScenarioTwiceIsIdentical) {
  const Print a = fingerprintOf("pascal-baseline-rr.json");
  const Print b = fingerprintOf("pascal-baseline-rr.json");
  EXPECT_EQ(a.trajectory, b.trajectory);
  EXPECT_EQ(a.summary, b.summary);
}

TEST(Samples, EverySampleIsCanonicalAfterRoundTrip) {
  for (const std::string& f : sampleFiles()) {
    const Scenario s = loadScenarioFile(kSamples + "/" + f);
    const std::string once = dumpScenario(s);
    const std::string twice = dumpScenario(parseScenario(nlohmann::json::parse(once), f));
    EXPECT_EQ(once, twice) << f;
  }
}
