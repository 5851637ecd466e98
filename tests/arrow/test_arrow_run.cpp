// Arrow through the registry and the run pipeline, and random scenarios with
// invariants checked at every event: requests conserved, KV blocks returned,
// the pools consistent with the roles, >= 1 prefill-capable and >= 1
// decode-capable instance at all times, the local counters equal to what
// they stand for; and determinism.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "../common/temp_dir.h"
#include "arrow_test_util.h"
#include "policy/registry.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/csv.h"
#include "util/rng.h"

namespace sl::arrowtest {
namespace {

PolicySpec spec(const std::string& id, nlohmann::json knobs = nlohmann::json::object()) {
  PolicySpec p;
  p.id = id;
  p.router = "round-robin";
  p.knobs = std::move(knobs);
  return p;
}

TEST(ArrowRegistry, FamilyIdsAndKnobs) {
  for (const char* id : {"arrow", "vllm-colocated", "static-pd", "vllm-disaggregated", "distserve"})
    EXPECT_EQ(policyInfo(id).family, "Arrow") << id;
  EXPECT_FALSE(policyInfo("arrow").usesRouter);
  EXPECT_TRUE(policyInfo("vllm-colocated").usesRouter);
  std::vector<std::string> live;
  for (const KnobSpec& k : policyInfo("arrow").knobs) {
    EXPECT_FALSE(k.unit.empty()) << k.name;
    EXPECT_FALSE(k.description.empty()) << k.name;
    EXPECT_LE(k.min, k.def) << k.name;
    EXPECT_GE(k.max, k.def) << k.name;
    if (k.liveSafe) live.push_back(k.name);
  }
  EXPECT_EQ(live, (std::vector<std::string>{"ttft_slo_s", "tpot_slo_s", "monitor_tick_s", "monitor_window_s",
                                            "flip_tpot_ratio", "low_load_ratio", "busy_ratio"}));
  PolicyBundle b = makePolicy(spec("arrow"));
  auto* g = dynamic_cast<ArrowGlobal*>(b.global.get());
  ASSERT_NE(g, nullptr);
  EXPECT_STREQ(g->name(), "arrow");
  EXPECT_EQ(b.chunkedPrefill, std::optional<bool>(true));
  EXPECT_STREQ(makePolicy(spec("static-pd", {{"dispatch", 1}})).global->name(), "static-pd/round-robin");
  EXPECT_STREQ(makePolicy(spec("distserve")).global->name(), "static-pd/minimal-load");
}

TEST(ArrowRegistry, LiveKnobsChangeTheTargets) {
  ArrowRig rig(cfg(1.0, 0.1, 2), 4, {});
  EXPECT_DOUBLE_EQ(rig.global->ttftSlo(), 1.0);
  applyLiveKnob(*rig.sim, "arrow", "ttft_slo_s", 2.5);
  applyLiveKnob(*rig.sim, "arrow", "tpot_slo_s", 0.05);
  applyLiveKnob(*rig.sim, "arrow", "monitor_tick_s", 0.25);
  EXPECT_DOUBLE_EQ(rig.global->ttftSlo(), 2.5);
  EXPECT_DOUBLE_EQ(rig.global->tpotSlo(), 0.05);
  EXPECT_EQ(rig.global->tickInterval(), secondsToNs(0.25));
}

TEST(ArrowStatic, FixedPoolsRoundRobinAndNoFlips) {
  ArrowConfig c = cfg(0.001, 0.001, 2);
  c.mode = ArrowMode::RoundRobin;
  std::vector<RequestSpec> reqs;
  for (int k = 0; k < 8; ++k) reqs.push_back(test::req(k * 0.5, 2000, 40));
  ArrowRig rig(c, 4, reqs);
  rig.sim->run();
  EXPECT_EQ(rig.sim->finishedCount(), 8);
  EXPECT_TRUE(rig.global->flips().empty());  // SLOs missed everywhere: still no flip
  EXPECT_EQ(rig.global->tickInterval(), 0);
  std::map<std::int64_t, std::pair<int, int>> placed;  // id -> (prefill instance, decode instance)
  for (const test::Iter& it : rig.rec.iters)
    for (const test::Entry& e : it.batch) (e.prefill ? placed[e.id].first : placed[e.id].second) = it.instance;
  int onD[4] = {0, 0, 0, 0};
  for (std::int64_t id = 0; id < 8; ++id) {
    EXPECT_EQ(placed[id].first, static_cast<int>(id % 2)) << id;  // P in arrival order: 0, 1, 0, 1 ...
    ++onD[placed[id].second];                                      // D in prefill-completion order: 2, 3, 2, 3 ...
  }
  EXPECT_EQ(onD[2], 4);
  EXPECT_EQ(onD[3], 4);
}

// ---------------------------------------------------------------- invariants

struct Scn {
  int instances = 4;
  InstanceConfig ic;
  ArrowConfig ac;
  std::vector<RequestSpec> reqs;
};

Scn makeScenario(std::uint64_t seed) {
  Rng g = Rng::forStream(seed, "arrow-scenario");
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return lo + static_cast<std::int64_t>(g.below(static_cast<std::uint64_t>(hi - lo + 1))); };
  Scn s;
  s.instances = static_cast<int>(pick(2, 6));
  s.ic = test::tinyInstance(pick(40, 400), 16);
  s.ic.maxNumSeqs = static_cast<std::int32_t>(pick(2, 64));
  s.ic.maxBatchedTokens = static_cast<std::int32_t>(pick(64, 4096));
  s.ic.swapPreemption = g.uniform01() < 0.7;
  s.ic.watermarkBlocks = pick(0, 2);
  const int mode = static_cast<int>(pick(0, 5));
  s.ac.mode = mode <= 3 ? ArrowMode::SloAware : mode == 4 ? ArrowMode::MinimalLoad : ArrowMode::RoundRobin;
  s.ac.prefillInstances = static_cast<int>(pick(0, s.instances));
  s.ac.ttftSloS = 0.001 * static_cast<double>(pick(5, 2000));
  s.ac.tpotSloS = 0.0001 * static_cast<double>(pick(11, 200));
  s.ac.monitorTickS = 0.001 * static_cast<double>(pick(1, 50));
  s.ac.monitorWindowS = 0.001 * static_cast<double>(pick(5, 500));
  s.ac.maxRunningTokens = g.uniform01() < 0.5 ? 0 : pick(50, 5000);
  s.ac.busyRatio = 0.1 * static_cast<double>(pick(0, 10));
  s.ac.profileMaxTokens = 4096;
  const std::int64_t usable = s.ic.gpuBlocks * s.ic.blockSize;
  const int n = static_cast<int>(pick(5, 80));
  double t = 0;
  for (int i = 0; i < n; ++i) {
    if (g.uniform01() < 0.6) t += static_cast<double>(pick(0, 40));
    const std::int64_t maxIn = g.uniform01() < 0.03 ? usable + 40 : std::max<std::int64_t>(1, usable / 3);
    s.reqs.push_back(test::req(t, static_cast<int>(pick(1, maxIn)), static_cast<int>(pick(1, 120))));
  }
  return s;
}

std::string checkStep(const Simulator& sim, const ArrowGlobal& g, std::vector<QueueView>& views) {
  std::ostringstream err;
  const int n = sim.numInstances();
  int counts[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; ++i) {
    const ArrowPool p = g.pool(i);
    ++counts[static_cast<int>(p)];
    if (n > 1) {
      const bool prefillRole = p == ArrowPool::P || p == ArrowPool::DtoP;
      if ((sim.instance(i).role() == InstanceRole::Prefill) != prefillRole) err << "instance " << i << " role/pool; ";
    }
    const auto& L = dynamic_cast<const ArrowLocal&>(sim.instance(i).policy());
    views.clear();
    L.describe(views);
    std::int64_t held = 0, decoding = 0, prefilling = 0;
    for (const QueueView& q : views)
      for (const Request* r : q.requests) {
        ++held;
        (r->prefillDone() || r->queue == 3 ? decoding : prefilling) += 1;
      }
    if (held != L.prefillRequests() + L.decoding())
      err << "instance " << i << " holds " << held << " but counts " << L.prefillRequests() << "+" << L.decoding() << "; ";
    if (decoding != L.decoding()) err << "instance " << i << " decoding " << decoding << " != " << L.decoding() << "; ";
    if (g.prefillDelay(i) < 0) err << "negative delay; ";
  }
  for (ArrowPool p : {ArrowPool::P, ArrowPool::D, ArrowPool::PtoD, ArrowPool::DtoP})
    if (counts[static_cast<int>(p)] != g.poolSize(p)) err << "pool count " << arrowPoolName(p) << "; ";
  if (n > 1) {
    if (g.poolSize(ArrowPool::P) + g.poolSize(ArrowPool::DtoP) < 1) err << "no prefill-capable instance; ";
    if (g.poolSize(ArrowPool::D) + g.poolSize(ArrowPool::PtoD) < 1) err << "no decode-capable instance; ";
  }
  return err.str();
}

TEST(ArrowInvariants, RandomScenarios) {
  std::int64_t flips = 0, handoffs = 0, inPlace = 0, requests = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    const Scn s = makeScenario(seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    ArrowRig rig(s.ac, s.instances, s.reqs, s.ic);
    std::vector<QueueView> views;
    std::int64_t steps = 0;
    while (rig.sim->step()) {
      if (++steps % 7 == 0 || rig.sim->done()) {
        const std::string e = checkStep(*rig.sim, *rig.global, views);
        ASSERT_TRUE(e.empty()) << "step " << steps << ": " << e;
      }
      ASSERT_LT(steps, 5'000'000);
    }
    ASSERT_FALSE(rig.sim->stalled());
    EXPECT_EQ(rig.sim->arrived(), static_cast<std::int64_t>(s.reqs.size()));
    EXPECT_EQ(rig.sim->finishedCount() + rig.sim->aborted(), rig.sim->arrived());
    EXPECT_EQ(rig.sim->inFlight(), 0);
    for (int i = 0; i < s.instances; ++i) {
      const Instance& in = rig.sim->instance(i);
      EXPECT_EQ(in.gpuBlocksUsed(), 0) << i;
      EXPECT_EQ(in.gpuBlocksReserved(), 0) << i;
      EXPECT_EQ(in.cpuBlocksUsed(), 0) << i;
      EXPECT_EQ(rig.global->decodeLoad(i), 0) << i;  // hand-off bookkeeping returned to 0
      EXPECT_EQ(rig.local(i).prefillRequests() + rig.local(i).decoding(), 0) << i;
    }
    EXPECT_EQ(checkStep(*rig.sim, *rig.global, views), "");
    flips += static_cast<std::int64_t>(rig.global->flips().size());
    handoffs += rig.sim->handoffs();
    inPlace += rig.global->decodeCount(DecodeRule::InPlace);
    requests += rig.sim->arrived();
  }
  // The random cases exercise the interesting paths.
  EXPECT_GT(flips, 100);
  EXPECT_GT(handoffs, requests / 4);
  EXPECT_GT(inPlace, 10);
}

// ---------------------------------------------------------------- determinism

TEST(ArrowDeterminism, SameScenarioSameTrajectory) {
  for (std::uint64_t seed : {3u, 17u, 42u}) {
    const Scn s = makeScenario(seed);
    ArrowRig a(s.ac, s.instances, s.reqs, s.ic), b(s.ac, s.instances, s.reqs, s.ic);
    a.sim->run();
    b.sim->run();
    EXPECT_EQ(a.sim->fingerprint(), b.sim->fingerprint()) << seed;
    ASSERT_EQ(a.global->flips().size(), b.global->flips().size());
    for (std::size_t k = 0; k < a.global->flips().size(); ++k) {
      EXPECT_EQ(a.global->flips()[k].time, b.global->flips()[k].time);
      EXPECT_EQ(a.global->flips()[k].instance, b.global->flips()[k].instance);
    }
  }
}

TEST(ArrowDeterminism, SampleRunsTwiceIdentically) {
  const std::string path = std::string(SERVELAB_SOURCE_DIR) + "/samples/arrow-burst-8gpu.json";
  std::string first;
  for (int k = 0; k < 2; ++k) {
    auto run = prepareRun(loadScenarioFile(path), path);
    RunResult res = executeRun(*run, RunOptions{});
    res.summaryJson.erase("wall_s");
    const std::string dump = res.summaryJson.dump();
    if (k == 0) first = dump;
    else EXPECT_EQ(dump, first);
    ASSERT_TRUE(res.summaryJson.contains("policy_report"));
    const auto& rep = res.summaryJson["policy_report"];
    EXPECT_LT(rep["ttft_predictor"]["fit_mape"].get<double>(), 0.15);
    EXPECT_GT(rep["flips"].get<double>(), 0);
    EXPECT_EQ(res.summary.finished, res.summary.arrived);
  }
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Issue 11 item 4: "pool sizes over time … a 'pool sizes' series" in the
// run's files. policy_series.csv holds what the policy publishes at every
// probe: the four pools always sum to the instance count, and the last
// sample agrees with the policy report.
TEST(ArrowOutputs, PoolSizesOverTimeInPolicySeries) {
  testutil::TempDir dir("arrow-outputs");
  const std::string path = std::string(SERVELAB_SOURCE_DIR) + "/samples/arrow-burst-8gpu.json";
  auto run = prepareRun(loadScenarioFile(path), path);
  RunOptions opt;
  opt.outDir = dir.str();
  const RunResult res = executeRun(*run, opt);
  const std::string csv = readFile(dir.str() + "/policy_series.csv");
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "time_s,series,value,unit");
  std::map<std::string, std::map<std::string, double>> byTime;  // time -> series -> value
  std::string lastTime;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    ASSERT_TRUE(splitCsvLine(line, f)) << line;
    ASSERT_EQ(f.size(), 4u) << line;
    byTime[f[0]][f[1]] = std::stod(f[2]);
    lastTime = f[0];
  }
  ASSERT_GT(byTime.size(), 10u);
  for (const auto& [t, v] : byTime) {
    ASSERT_EQ(v.size(), 5u) << t;
    EXPECT_EQ(v.at("pool P") + v.at("pool D") + v.at("pool P→D") + v.at("pool D→P"), 8.0) << t;
  }
  const auto& rep = res.summaryJson["policy_report"];
  EXPECT_GT(rep["flips"].get<double>(), 0);
  // The last probe comes before the end of the run: flips after it are not in it.
  EXPECT_LE(byTime[lastTime].at("flips"), rep["flips"].get<double>());
  EXPECT_GT(byTime[lastTime].at("flips"), 0.0);

  // Each flip with its reason: one "instance" row per pool change in
  // decisions.csv and one instant event in trace.json, the same count as
  // the report's.
  const int flips = static_cast<int>(rep["flips"].get<double>());
  std::istringstream dec(readFile(dir.str() + "/decisions.csv"));
  std::getline(dec, line);
  EXPECT_EQ(line, "time_s,request_id,kind,from,chosen,instance,candidates,selection,action");
  int rows = 0;
  std::map<std::string, int> reasons;
  while (std::getline(dec, line)) {
    std::vector<std::string> f;
    ASSERT_TRUE(splitCsvLine(line, f)) << line;
    ASSERT_EQ(f.size(), 9u) << line;
    EXPECT_EQ(f[1], "-1");
    EXPECT_EQ(f[2], "instance");
    EXPECT_EQ(f[3], f[5]);
    EXPECT_TRUE(f[7] == "to P" || f[7] == "to D" || f[7] == "to P→D" || f[7] == "to D→P") << f[7];
    ++reasons[f[8]];
    ++rows;
  }
  EXPECT_EQ(rows, flips);
  for (const auto& [why, n] : reasons) {
    const std::string key = "flips_by_reason/" + why;
    ASSERT_TRUE(rep["flips_by_reason"].contains(why)) << why;
    EXPECT_EQ(n, static_cast<int>(rep["flips_by_reason"][why].get<double>())) << key;
  }
  const std::string trace = readFile(dir.str() + "/trace.json");
  int instant = 0;
  for (std::size_t at = trace.find("\"kind\":\"instance\""); at != std::string::npos;
       at = trace.find("\"kind\":\"instance\"", at + 1))
    ++instant;
  EXPECT_EQ(instant, flips);
}

}  // namespace
}  // namespace sl::arrowtest
