// Synthetic requests (Simulator::injectRequest): work a policy creates (e.g.
// self-scheduling's rank prompts). Real work for the engine, but never user
// traffic: not in arrivals, records, requests.csv, throughput, observer
// events or the user-request fingerprint; their cost is reported apart.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/temp_dir.h"
#include "engine_test_util.h"
#include "run/execute.h"
#include "run/run.h"

namespace sl::enginetest {
namespace {

// Injects, when request 0 arrives, one synthetic request without output
// (64-token prompt) and one with 5 output tokens (32-token prompt) on instance 0.
class Injector : public ScriptedGlobal {
public:
  std::vector<std::pair<std::int64_t, SimTime>> done;  // (id, time)
  std::vector<RequestHandle> handles;
  int route(const Request& r) override {
    if (r.id == 0) {
      handles.push_back(sim_->injectRequest(0, 64, 0));
      handles.push_back(sim_->injectRequest(0, 32, 5));
    }
    return 0;
  }
  void onSyntheticDone(const Request& r) override { done.emplace_back(r.id, sim_->now()); }
};

std::vector<RequestSpec> users() {
  return {spec(0, 0, 40, 3, 6), spec(1, 2 * kMs, 24, 0, 8), spec(2, 4 * kMs, 30, 2, 4)};
}

TEST(Synthetic, DoesRealWorkButNeverCountsAsUserTraffic) {
  const CostModel& cost = llama8b();
  auto g = std::make_unique<Injector>();
  Injector* inj = g.get();
  Harness h(cost, smallConfig(cost, 1, 64), users(), std::move(g));
  h.run();
  // Users: exactly their three requests, everywhere.
  EXPECT_EQ(h.sim->arrived(), 3);
  EXPECT_EQ(h.sim->finishedCount(), 3);
  for (const RequestRecord& r : h.sim->records()) EXPECT_GE(r.id, 0);
  for (const EventRec& e : h.rec.events) EXPECT_GE(e.id, 0) << requestEventName(e.e);
  for (const RequestRecord& r : h.rec.finished) EXPECT_GE(r.id, 0);
  std::int64_t userTokens = 0;
  for (const RequestRecord& r : h.sim->records()) userTokens += r.generated;
  EXPECT_EQ(h.sim->instance(0).tokensProduced(), userTokens);
  // The synthetic ones ran: in batches, to completion, costed apart.
  bool inBatch = false;
  for (const IterRec& it : h.rec.iters)
    for (const EntryRec& e : it.entries) inBatch |= e.id < 0;
  EXPECT_TRUE(inBatch);
  ASSERT_EQ(inj->done.size(), 2u);
  const Simulator::SyntheticCost& c = h.sim->syntheticCost();
  EXPECT_EQ(c.injected, 2);
  EXPECT_EQ(c.completed, 2);
  EXPECT_EQ(c.aborted, 0);
  EXPECT_EQ(c.promptTokens, 64 + 32);
  EXPECT_EQ(c.outputTokens, 5);
  EXPECT_GT(c.gpuSeconds, 0.0);
  SimTime busy = 0;
  for (const IterRec& it : h.rec.iters) busy += it.end - it.start;
  EXPECT_LT(c.gpuSeconds, nsToSeconds(busy));
  for (const RequestHandle& hd : inj->handles) EXPECT_EQ(h.sim->resolve(hd), nullptr);  // gone when done
  // The output-less one completed at the end of the iteration that finished its prefill.
  for (const auto& [id, t] : inj->done) {
    if (id != -1) continue;
    bool atPrefillEnd = false;
    for (const IterRec& it : h.rec.iters)
      for (const EntryRec& e : it.entries) atPrefillEnd |= e.id == -1 && e.prefill && it.end == t;
    EXPECT_TRUE(atPrefillEnd);
  }
}

TEST(Synthetic, DelaysTheUsersItSharesTheInstanceWith) {
  const CostModel& cost = llama8b();
  Harness plain(cost, smallConfig(cost, 1, 64), users());
  plain.run();
  Harness with(cost, smallConfig(cost, 1, 64), users(), std::make_unique<Injector>());
  with.run();
  SimTime a = 0, b = 0;
  for (const RequestRecord& r : plain.sim->records()) a += r.last_token;
  for (const RequestRecord& r : with.sim->records()) b += r.last_token;
  EXPECT_GT(b, a);  // real work: it took iteration time the users had before
  EXPECT_EQ(plain.sim->syntheticCost().injected, 0);
}

TEST(Synthetic, SummaryReportsItsCostAndRequestsCsvHasNoRow) {
  Scenario s;
  s.cluster.instances = 1;
  s.model = "llama-3.1-8b";
  s.workload.requests = 1;  // replaced below by the three users
  auto run = prepareRun(s, "synthetic");
  run->simulator = std::make_unique<Simulator>(run->sim, *run->cost, std::make_unique<ListWorkload>(users()),
                                               std::make_unique<Injector>(), fcfsFactory());
  testutil::TempDir dir("servelab-synthetic");
  RunOptions opt;
  opt.outDir = dir.str();
  const RunResult r = executeRun(*run, opt);
  ASSERT_TRUE(r.summaryJson.contains("synthetic"));
  const auto& sj = r.summaryJson["synthetic"];
  EXPECT_EQ(sj["requests"], 2);
  EXPECT_EQ(sj["completed"], 2);
  EXPECT_EQ(sj["prompt_tokens"], 96);
  EXPECT_EQ(sj["output_tokens"], 5);
  EXPECT_GT(sj["gpu_s"].get<double>(), 0.0);
  EXPECT_EQ(r.summaryJson["requests"]["arrived"], 3);
  EXPECT_EQ(r.summaryJson["requests"]["finished"], 3);
  std::ifstream in(dir.path() / "requests.csv");
  std::string line;
  int rows = -1;  // header
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_NE(line.rfind('-', 0), 0u) << line;
  }
  EXPECT_EQ(rows, 3);
}

}  // namespace
}  // namespace sl::enginetest
