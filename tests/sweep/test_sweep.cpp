// core/sweep: spec parsing and errors, 1 vs N threads, shards + merge, merge
// refusals, resume, and the capacity planner on a scenario with a known
// threshold.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../common/temp_dir.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "sweep/capacity.h"
#include "sweep/parallel.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"
#include "util/error.h"

namespace sl::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::TempDir;

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small, fast sweep: 2 policies × 3 rates × 2 seeds = 12 points.
json smallSpec(int requests = 40) {
  json j = json::parse(R"({
    "base": {"cluster": {"instances": 2}, "workload": {"requests": 40}},
    "axes": [
      {"path": "policy.id", "values": ["fcfs", "rr"]},
      {"path": "workload.arrival.rate", "range": {"from": 4, "to": 12, "step": 4}},
      {"path": "run.seed", "values": [1, 2]}
    ],
    "metrics": ["requests.finished", "ttft_s.p99", "slo_attainment", "qoe.violation_rate"]
  })");
  j["base"]["workload"]["requests"] = requests;
  return j;
}

// Expects an InputError whose message contains every one of `parts`.
void expectError(const json& spec, const std::vector<std::string>& parts) {
  try {
    (void)parseSweep(spec, "sw.json", ".");
    ADD_FAILURE() << "no error; wanted one mentioning " << parts.front();
  } catch (const InputError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

TEST(SweepSpec, GridExpandsFirstAxisOutermost) {
  const SweepSpec s = parseSweep(smallSpec(), "sw.json", ".");
  ASSERT_EQ(s.points.size(), 12u);
  ASSERT_EQ(s.axes, (std::vector<std::string>{"policy.id", "workload.arrival.rate", "run.seed"}));
  EXPECT_EQ(s.points[0][0], "fcfs");
  EXPECT_EQ(s.points[0][1], 4);
  EXPECT_EQ(s.points[1][2], 2);   // last axis fastest
  EXPECT_EQ(s.points[2][1], 8);
  EXPECT_EQ(s.points[6][0], "rr");
  EXPECT_TRUE(s.points[5][1].is_number_integer());
  EXPECT_EQ(s.scenarios[7].policy.id, "rr");
  EXPECT_EQ(s.scenarios[7].workload.arrival.rate, 4.0);
  EXPECT_EQ(s.scenarios[7].run.seed, 2u);
  EXPECT_EQ(s.scenarios[7].cluster.instances, 2);
  EXPECT_EQ(s.hash.size(), 16u);
  // The hash covers what runs: same spec, same hash; another value, another hash.
  EXPECT_EQ(parseSweep(smallSpec(), "other-name.json", ".").hash, s.hash);
  EXPECT_NE(parseSweep(smallSpec(41), "sw.json", ".").hash, s.hash);
}

TEST(SweepSpec, RangesPointsSetAndDefaults) {
  json j = json::parse(R"({"base": {}, "set": {"workload.requests": 10},
    "axes": [{"path": "workload.arrival.rate", "range": {"from": 0.5, "to": 1.5, "count": 3}},
             {"path": "slo.ttft_s", "range": {"from": 0.1, "to": 0.35, "step": 0.05}}]})");
  SweepSpec s = parseSweep(j, "sw.json", ".");
  ASSERT_EQ(s.points.size(), 18u);
  EXPECT_EQ(s.points[6][0].get<double>(), 1.0);
  EXPECT_EQ(s.points[5][1].get<double>(), 0.35);  // no 0.35000000000000003
  EXPECT_EQ(s.points[1][1].dump(), "0.15");
  EXPECT_EQ(s.scenarios[0].workload.requests, 10);
  EXPECT_EQ(s.metrics, defaultSweepMetrics());

  j = json::parse(R"({"base": {}, "points": [{"policy.id": "rr", "cluster.instances": 3},
                                            {"policy.id": "fcfs", "cluster.instances": 1}]})");
  s = parseSweep(j, "sw.json", ".");
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.axes, (std::vector<std::string>{"cluster.instances", "policy.id"}));
  EXPECT_EQ(s.scenarios[1].policy.id, "fcfs");
  EXPECT_EQ(s.scenarios[1].cluster.instances, 1);
}

TEST(SweepSpec, BaseFromFileResolvesAgainstTheSweepFile) {
  TempDir d;
  fs::create_directories(d.path() / "sub");
  d.write("sub/base.json", R"({"cluster": {"instances": 3}})");
  d.write("sub/sweep.json", R"({"base": "base.json", "axes": [{"path": "run.seed", "values": [1, 2]}]})");
  const SweepSpec s = loadSweepFile(d.str() + "/sub/sweep.json");
  EXPECT_EQ(s.scenarios[1].cluster.instances, 3);
  d.write("sub/bad.json", R"({"base": "nope.json", "axes": [{"path": "run.seed", "values": [1]}]})");
  EXPECT_THROW((void)loadSweepFile(d.str() + "/sub/bad.json"), InputError);
}

TEST(SweepSpec, ErrorsNameTheFileAndThePlace) {
  json j = smallSpec();
  j["axes"][1]["path"] = "workload.arival.rate";
  expectError(j, {"sw.json", "point 0", "workload.arival", "did you mean 'workload.arrival'"});
  j = smallSpec();
  j["axes"][1]["range"]["from"] = -4;
  expectError(j, {"sw.json", "point 0", "workload.arrival.rate", "must be > 0"});
  j = smallSpec();
  j["axes"][0]["values"][1] = "fcsf";
  expectError(j, {"sw.json", "point 6", "fcsf"});
  j = smallSpec();
  j["axes"][1]["range"]["step"] = 0;
  expectError(j, {"sw.json", "axes[1].range.step", "must be > 0"});
  j = smallSpec();
  j["axes"][2]["values"] = json::array();
  expectError(j, {"sw.json", "axes[2].values", "non-empty"});
  j = smallSpec();
  j["metrics"][1] = "ttft_s.p98";
  expectError(j, {"sw.json", "metrics[1]", "ttft_s.p98", "did you mean"});
  j = smallSpec();
  j["metrics"][1] = "ttft_s";
  expectError(j, {"metrics[1]", "is a group"});
  j = smallSpec();
  j["axis"] = j["axes"];
  expectError(j, {"sw.json", "unknown field 'axis'", "did you mean 'axes'"});
  j = smallSpec();
  j["points"] = json::array({json::object({{"run.seed", 1}})});
  expectError(j, {"exactly one of 'axes'"});
  j = smallSpec();
  j.erase("base");
  expectError(j, {"missing required field 'base'"});
  j = smallSpec();
  j["capacity"] = {{"target", 1.5}};
  expectError(j, {"sw.json: capacity.target", "(0, 1]"});
  j = smallSpec();
  j["axes"][2]["path"] = "cluster.instances.count";
  expectError(j, {"sw.json", "point 0", "'cluster.instances' is a number, not an object"});
  j = json::parse(R"({"base": {}, "points": [{"run.seed": 1}, {"run.sed": 2}]})");
  expectError(j, {"points[1]", "missing 'run.seed'"});
}

TEST(SweepRun, OneAndManyThreadsAreByteIdentical) {
  TempDir d;
  const SweepSpec s = parseSweep(smallSpec(), "sw.json", ".");
  SweepRunOptions o;
  o.outDir = d.str() + "/one";
  o.jobs = 1;
  const SweepRunReport r1 = runSweep(s, o);
  EXPECT_EQ(r1.ran, 12u);
  EXPECT_TRUE(r1.wroteResults);
  o.outDir = d.str() + "/four";
  o.jobs = 4;
  (void)runSweep(s, o);
  for (const char* f : {"results.csv", "results.json", "sweep.json"})
    EXPECT_EQ(slurp(d.str() + "/one/" + f), slurp(d.str() + "/four/" + f)) << f;
  const std::string csv = slurp(d.str() + "/one/results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,policy.id,workload.arrival.rate,run.seed,requests.finished,ttft_s.p99,slo_attainment,"
            "qoe.violation_rate,fingerprint");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 13);
  // A row matches a standalone run of that point.
  Scenario sc = s.scenarios[7];
  auto prepared = prepareRun(sc);
  const RunResult rr = executeRun(*prepared, RunOptions{});
  EXPECT_NE(csv.find("\n7,rr,4,2,40,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(fingerprintHex(rr.fingerprint)), std::string::npos);
}

TEST(SweepRun, ClosedLoopConcurrencyIsAnAxis) {
  // workload.arrival.concurrency as an axis over a closed-loop base: each
  // point runs that many clients (closed_loop in its summary), and more
  // clients finish the same requests in less simulated time.
  TempDir d;
  json j = json::parse(R"({
    "base": {"cluster": {"instances": 2}, "workload": {"requests": 60,
             "arrival": {"process": "closed", "concurrency": 1, "think_s": {"dist": "exponential", "mean": 0.1}}}},
    "axes": [{"path": "workload.arrival.concurrency", "range": {"from": 2, "to": 16, "step": 14}}],
    "metrics": ["requests.finished", "closed_loop.concurrency", "sim_s"]
  })");
  const SweepSpec s = parseSweep(j, "sw.json", ".");
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.scenarios[1].workload.arrival.concurrency, 16);
  SweepRunOptions o;
  o.outDir = d.str() + "/out";
  o.jobs = 2;
  (void)runSweep(s, o);
  const json res = json::parse(slurp(d.str() + "/out/results.json"));
  const std::string text = res.dump();
  EXPECT_NE(text.find("\"closed_loop.concurrency\":16"), std::string::npos) << text;
  const std::string csv = slurp(d.str() + "/out/results.csv");
  EXPECT_NE(csv.find("\n0,2,60,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,16,60,16,"), std::string::npos) << csv;
  ASSERT_EQ(res["points"].size(), 2u);
  EXPECT_LT(res["points"][1]["metrics"]["sim_s"].get<double>(), res["points"][0]["metrics"]["sim_s"].get<double>());
  // A fractional client count is refused naming the point and the field.
  j["axes"][0] = json::parse(R"({"path": "workload.arrival.concurrency", "values": [2.5]})");
  expectError(j, {"sw.json", "workload.arrival.concurrency"});
}

TEST(SweepRun, CostMetricsAreSweepable) {
  // The summary's cost object (docs/metrics.md "Cost") as sweep metrics,
  // over a GPU axis: H100 at its list price (2 instances x 6.88 USD/h), A100
  // at a scenario price; a GPU without a cited price gives null.
  TempDir d;
  json j = json::parse(R"({
    "base": {"cluster": {"instances": 2, "price_usd_per_gpu_hour": null}, "workload": {"requests": 40}},
    "axes": [{"path": "cluster.gpu", "values": ["h100-sxm-80g", "h800-80g"]}],
    "metrics": ["cost.gpus", "cost.usd_per_hour", "cost.usd_per_million_tokens", "cost.goodput_per_usd",
                "cost.tokens_per_joule", "cost.usd_per_million_input_tokens", "throughput.input_tokens_per_s"]
  })");
  const SweepSpec s = parseSweep(j, "sw.json", ".");
  SweepRunOptions o;
  o.outDir = d.str() + "/out";
  (void)runSweep(s, o);
  const json res = json::parse(slurp(d.str() + "/out/results.json"));
  const json& h100 = res["points"][0]["metrics"];
  EXPECT_EQ(h100["cost.gpus"].get<int>(), 2);
  EXPECT_NEAR(h100["cost.usd_per_hour"].get<double>(), 2 * 6.88, 1e-9);
  EXPECT_GT(h100["cost.usd_per_million_tokens"].get<double>(), 0);
  EXPECT_GT(h100["cost.tokens_per_joule"].get<double>(), 0);
  // The whole bill over the input tokens prefilled per second.
  EXPECT_NEAR(h100["cost.usd_per_million_input_tokens"].get<double>(),
              2 * 6.88 / 3600 / h100["throughput.input_tokens_per_s"].get<double>() * 1e6, 1e-9);
  const json& h800 = res["points"][1]["metrics"];  // no cited price
  EXPECT_TRUE(h800["cost.usd_per_hour"].is_null()) << h800.dump();
  EXPECT_GT(h800["cost.tokens_per_joule"].get<double>(), 0);
  // An unknown cost field is refused with a hint.
  j["metrics"] = {"cost.usd_per_hours"};
  expectError(j, {"sw.json", "cost.usd_per_hours", "did you mean 'cost.usd_per_hour'"});
}

TEST(SweepRun, ShardsMergeByteIdenticalToUnsharded) {
  TempDir d;
  const SweepSpec s = parseSweep(smallSpec(), "sw.json", ".");
  SweepRunOptions o;
  o.outDir = d.str() + "/all";
  (void)runSweep(s, o);
  std::vector<std::string> dirs;
  for (int k = 0; k < 5; ++k) {  // 5 shards of 12 points: uneven on purpose
    o.outDir = d.str() + "/s" + std::to_string(k);
    o.shard = Shard{k, 5};
    const SweepRunReport r = runSweep(s, o);
    EXPECT_EQ(r.points, k < 2 ? 3u : 2u);
    EXPECT_FALSE(r.wroteResults);
    dirs.push_back(o.outDir);
  }
  const MergeReport m = mergeSweep(dirs, d.str() + "/merged");
  EXPECT_EQ(m.points, 12u);
  EXPECT_EQ(m.shards, 5);
  for (const char* f : {"results.csv", "results.json", "sweep.json"})
    EXPECT_EQ(slurp(d.str() + "/all/" + f), slurp(d.str() + "/merged/" + f)) << f;

  // Shards sharing one folder (the Kubernetes layout) merge the same way.
  for (int k = 0; k < 3; ++k) {
    o.outDir = d.str() + "/shared";
    o.shard = Shard{k, 3};
    (void)runSweep(s, o);
  }
  (void)mergeSweep({d.str() + "/shared"}, d.str() + "/shared");
  EXPECT_EQ(slurp(d.str() + "/all/results.csv"), slurp(d.str() + "/shared/results.csv"));
}

void expectMergeError(const std::vector<std::string>& dirs, const std::string& out, const std::string& part) {
  try {
    (void)mergeSweep(dirs, out);
    ADD_FAILURE() << "merge accepted; wanted an error with " << part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out + "/results.csv")) << "merge wrote results despite the error";
}

TEST(SweepMerge, RefusesMismatchedMissingAndDuplicateShards) {
  TempDir d;
  const SweepSpec s = parseSweep(smallSpec(), "sw.json", ".");
  const SweepSpec other = parseSweep(smallSpec(41), "sw.json", ".");
  auto shard = [&](const SweepSpec& spec, int k, int n, const std::string& name) {
    SweepRunOptions o;
    o.outDir = d.str() + "/" + name;
    o.shard = Shard{k, n};
    (void)runSweep(spec, o);
    return o.outDir;
  };
  const std::string a0 = shard(s, 0, 3, "a0"), a1 = shard(s, 1, 3, "a1"), a2 = shard(s, 2, 3, "a2");
  const std::string out = d.str() + "/out";
  expectMergeError({a0, a1}, out, "shard 2/3 is missing");
  expectMergeError({a0, a1, a2, a1}, out, "shard 1/3 appears twice");
  const std::string b2 = shard(other, 2, 3, "b2");
  expectMergeError({a0, a1, b2}, out, "belongs to another sweep");
  const std::string c1 = shard(s, 1, 2, "c1");
  expectMergeError({a0, a1, a2, c1}, out, "does not fit");
  // A point record also present in another shard's folder.
  fs::copy_file(a1 + "/points/000001.json", a0 + "/points/000001.json");
  expectMergeError({a0, a1, a2}, out, "point 1 appears twice");
  fs::remove(a0 + "/points/000001.json");
  // A missing and a half-written point record.
  fs::rename(a2 + "/points/000005.json", d.str() + "/p5");
  expectMergeError({a0, a1, a2}, out, "point 5 missing");
  std::ofstream(a2 + "/points/000005.json") << "{\"sweep\": \"" << s.hash << "\", \"poi";
  expectMergeError({a0, a1, a2}, out, "point 5 not valid JSON");
  fs::rename(d.str() + "/p5", a2 + "/points/000005.json");
  expectMergeError({d.str() + "/nowhere"}, out, "not a sweep output folder");
  (void)mergeSweep({a0, a1, a2}, out);
  EXPECT_TRUE(fs::exists(out + "/results.csv"));
  // A folder of another sweep is never overwritten.
  SweepRunOptions o;
  o.outDir = a0;
  EXPECT_THROW((void)runSweep(other, o), InputError);
}

TEST(SweepRun, ResumeRunsOnlyWhatIsMissing) {
  TempDir d;
  const SweepSpec s = parseSweep(smallSpec(), "sw.json", ".");
  SweepRunOptions o;
  o.outDir = d.str() + "/ref";
  (void)runSweep(s, o);
  o.outDir = d.str() + "/r";
  (void)runSweep(s, o);
  // As if killed: results and manifest never written, two records missing,
  // one truncated mid-write, one left by a different sweep.
  for (const char* f : {"results.csv", "results.json", "shard-0-of-1.json", "points/000003.json",
                        "points/000010.json"})
    fs::remove(o.outDir + "/" + f);
  const std::string rec = slurp(o.outDir + "/points/000004.json");
  std::ofstream(o.outDir + "/points/000004.json", std::ios::trunc) << rec.substr(0, rec.size() / 2);
  std::string foreign = slurp(o.outDir + "/points/000006.json");
  foreign.replace(foreign.find(s.hash), s.hash.size(), "0123456789abcdef");
  std::ofstream(o.outDir + "/points/000006.json", std::ios::trunc) << foreign;
  o.resume = true;
  o.jobs = 3;
  std::size_t lastDone = 0;
  o.progress = [&](std::size_t done, std::size_t total) {
    EXPECT_EQ(total, 12u);
    lastDone = done;
  };
  const SweepRunReport r = runSweep(s, o);
  EXPECT_EQ(r.reused, 8u);
  EXPECT_EQ(r.ran, 4u);
  EXPECT_EQ(lastDone, 12u);
  EXPECT_EQ(slurp(d.str() + "/ref/results.csv"), slurp(o.outDir + "/results.csv"));
  EXPECT_EQ(slurp(d.str() + "/ref/results.json"), slurp(o.outDir + "/results.json"));
  // Resuming a finished sweep runs nothing.
  EXPECT_EQ(runSweep(s, o).ran, 0u);
}

TEST(SweepRun, KeepRunsWritesEachPointsOutputs) {
  TempDir d;
  json j = smallSpec(20);
  j["axes"] = json::parse(R"([{"path": "run.seed", "values": [1, 2]}])");
  const SweepSpec s = parseSweep(j, "sw.json", ".");
  SweepRunOptions o;
  o.outDir = d.str();
  o.keepRuns = true;
  (void)runSweep(s, o);
  for (const char* f : {"summary.json", "requests.csv", "timeseries.csv", "trace.json"})
    EXPECT_TRUE(fs::exists(d.str() + "/runs/000001/" + f)) << f;
}

TEST(Parallel, RunsEveryItemOnceAndRethrows) {
  std::vector<int> hits(100, 0);
  parallelFor(100, 4, [&](std::size_t i) { ++hits[i]; });
  for (int h : hits) EXPECT_EQ(h, 1);
  EXPECT_THROW(parallelFor(10, 3, [](std::size_t i) { if (i == 4) throw InputError("x"); }), InputError);
  EXPECT_THROW((void)parseShard("4/4"), InputError);
  EXPECT_THROW((void)parseShard("1"), InputError);
  EXPECT_EQ(parseShard("3/4").index, 3);
  EXPECT_EQ(shardPoints(10, Shard{1, 4}), (std::vector<std::size_t>{1, 5, 9}));
}

// A scenario with a threshold known in advance: one instance serving one
// request at a time (max_num_seqs 1), identical requests of service time S
// (measured alone), arrivals exactly d = 1 s · time_scale apart. For d >= S
// nobody waits; for d < S request k waits k·(S − d). With a TTFT SLO of
// (lone TTFT + margin) request k meets it iff k·(S − d) <= margin, so with N
// requests and a target of (N − m)/N the smallest sustainable time_scale is
// (S − margin/(N − m − 1)) / 1 s.
TEST(Capacity, FindsTheKnownThresholdOfAQueue) {
  TempDir d;
  const int n = 20;
  std::string csv = "arrival_s,input_tokens,output_tokens\n";
  for (int k = 0; k < n; ++k) csv += std::to_string(k) + ".0,256,64\n";
  d.write("t.csv", csv);
  Scenario s = parseScenario(json::parse(R"({"cluster": {"instances": 1, "max_num_seqs": 1},
      "workload": {"trace": {"path": "t.csv"}}})"), "q.json");
  s.base_dir = d.str();
  // Service time and TTFT of a lone request.
  Scenario lone = s;
  lone.workload.trace->max_requests = 1;
  auto prepared = prepareRun(lone);
  const RunResult r = executeRun(*prepared, RunOptions{});
  const double service = r.summary.e2e_s.max, ttft0 = r.summary.ttft_s.max;
  ASSERT_GT(service, 0.05);
  const double margin = 0.2 * service;
  s.slo.ttft_s = ttft0 + margin;
  CapacityOptions o;
  o.target = 0.9;  // 18 of 20 requests: k <= 17
  o.tolerance = 0.01;
  o.rateMin = 0.5;  // time_scale 0.05 .. 2
  o.rateMax = 20;
  const double expected = (service - margin / 17.0) / 1.0;
  const RateCapacity c = maxSustainableRate(s, o);
  ASSERT_TRUE(c.traceScale);
  ASSERT_TRUE(c.minTimeScale) << rateCapacityJson(c).dump();
  EXPECT_NEAR(*c.minTimeScale, expected, expected * 0.02) << rateCapacityJson(c).dump();
  EXPECT_GE(*c.minTimeScale, expected * 0.999);  // never below the true threshold
  // The same system by instances: at time_scale 0.6·S, one instance falls
  // behind (everyone after the first waits); two keep up (the least-loaded
  // router alternates, so each sees a request every 1.2·S).
  s.workload.trace->time_scale = 0.6 * service;
  s.slo.ttft_s = ttft0 + 0.05 * service;
  const InstanceCapacity ic = minInstances(s, std::nullopt, o);
  ASSERT_TRUE(ic.minInstances) << instanceCapacityJson(ic).dump();
  EXPECT_EQ(*ic.minInstances, 2) << instanceCapacityJson(ic).dump();
}

// The rate search brackets the threshold it reports: attainment meets the
// target at the answer and misses it just above.
TEST(Capacity, RateAnswerIsATightBracket) {
  Scenario s = parseScenario(json::parse(R"({"cluster": {"instances": 1},
      "workload": {"requests": 150}, "slo": {"ttft_s": 0.5}})"), "r.json");
  CapacityOptions o;
  o.target = 0.9;
  o.tolerance = 0.05;
  o.rateMin = 1;
  o.rateMax = 256;
  const RateCapacity c = maxSustainableRate(s, o);
  ASSERT_TRUE(c.maxRate) << rateCapacityJson(c).dump();
  EXPECT_FALSE(c.atBracketEdge);
  // The answer was probed and met the target; a probe just above it failed.
  bool okAtAnswer = false, failJustAbove = false;
  for (const CapacityProbe& p : c.probes) {
    if (p.x == *c.maxRate && p.ok) okAtAnswer = true;
    if (!p.ok && p.x > *c.maxRate && p.x <= *c.maxRate * (1 + o.tolerance) * 1.001) failJustAbove = true;
  }
  EXPECT_TRUE(okAtAnswer) << rateCapacityJson(c).dump();
  EXPECT_TRUE(failJustAbove) << rateCapacityJson(c).dump();
  Scenario at = s;
  at.workload.arrival.rate = *c.maxRate;
  EXPECT_GE(sloAttainment(at, "at"), 0.9);
  // A rate schedule has no single rate to search.
  Scenario sched = s;
  sched.workload.arrival.process = ArrivalSpec::Process::Schedule;
  sched.workload.arrival.schedule = {RateSegment{10, 2}};
  EXPECT_THROW((void)maxSustainableRate(sched, o), InputError);
}

// The capacity planner as sweep metrics: the same answers as calling it
// directly on each point's scenario.
TEST(Capacity, SweepMetricsMatchTheDirectSearch) {
  json j = json::parse(R"({"base": {"cluster": {"instances": 1}, "workload": {"requests": 80},
                                    "slo": {"ttft_s": 0.5}},
    "axes": [{"path": "policy.id", "values": ["fcfs", "rr"]}],
    "metrics": ["capacity.max_rate", "capacity.min_instances", "slo_attainment"],
    "capacity": {"target": 0.9, "rate_min": 1, "rate_max": 128, "tolerance": 0.05, "max_instances": 8}})");
  j["base"]["workload"]["arrival"] = {{"rate", 100}};
  const SweepSpec s = parseSweep(j, "sw.json", ".");
  for (std::size_t i = 0; i < 2; ++i) {
    const PointResult p = runPoint(s, i);
    const RateCapacity r = maxSustainableRate(s.scenarios[i], s.capacity);
    const InstanceCapacity n = minInstances(s.scenarios[i], std::nullopt, s.capacity);
    ASSERT_TRUE(r.maxRate && n.minInstances);
    EXPECT_EQ(p.metrics[0].get<double>(), *r.maxRate);
    EXPECT_EQ(p.metrics[1].get<int>(), *n.minInstances);
    EXPECT_GT(*n.minInstances, 1) << "max rate of 1 instance " << *r.maxRate;  // the point rate is above it
  }
  // A trace workload has no rate: its metric is capacity.min_time_scale.
  TempDir d;
  d.write("t.csv", "arrival_s,input_tokens,output_tokens\n0.0,100,10\n1.0,100,10\n");
  json t = j;
  t["base"]["workload"] = {{"trace", {{"path", d.str() + "/t.csv"}}}};
  expectError(t, {"sw.json", "point 0", "capacity.min_time_scale"});
}

}  // namespace
}  // namespace sl::sweep
