// The example family of docs/policy-api.md (policy/example/example_split.h):
// pools by role, hand-off after prefill, live rebalancing on a tick.
#include <gtest/gtest.h>

#include <map>

#include "engine/observer.h"
#include "policy/example/example_split.h"
#include "engine/snapshot.h"
#include "run/execute.h"
#include "run/run.h"

namespace sl::test {
namespace {

struct Events : SimObserver {
  std::map<RequestEvent, std::int64_t> n;
  std::map<std::int64_t, int> arrivedOn;
  void onRequestEvent(RequestEvent e, const Request& r, int inst, SimTime) override {
    ++n[e];
    if (e == RequestEvent::Arrived) arrivedOn[r.id] = inst;
  }
};

Scenario splitScenario(int instances, int prefill) {
  Scenario s;
  s.cluster.instances = instances;
  s.cluster.kv_capacity_fraction = 0.05;
  s.model = "llama-3.1-8b";
  s.workload.requests = 300;
  s.workload.arrival.rate = 20;
  s.policy.id = "example-split";
  s.policy.knobs = {{"prefill_instances", prefill}, {"rebalance_interval_s", 0.2}, {"rebalance_gap", 0.05}};
  return s;
}

TEST(ExampleSplit, PrefillPoolHandsEveryRequestToTheDecodePool) {
  auto run = prepareRun(splitScenario(4, 2), "split");
  Simulator& sim = *run->simulator;
  Events ev;
  sim.addObserver(&ev);
  EXPECT_EQ(sim.instance(0).role(), InstanceRole::Prefill);
  EXPECT_EQ(sim.instance(1).role(), InstanceRole::Prefill);
  EXPECT_EQ(sim.instance(2).role(), InstanceRole::Decode);
  EXPECT_EQ(sim.instance(3).role(), InstanceRole::Decode);
  sim.run();
  EXPECT_EQ(sim.finishedCount() + sim.aborted(), 300);
  for (const auto& [id, inst] : ev.arrivedOn) EXPECT_LT(inst, 2) << "request " << id << " routed to the decode pool";
  // Every request with more than one output token is handed off (the prefill
  // emits the first), and every hand-off copy ends on a decode instance.
  std::int64_t multiToken = 0;
  for (const RequestRecord& r : sim.records()) {
    if (r.reasoning + r.answer > 1) {
      ++multiToken;
      EXPECT_GE(r.instance, 2) << r.id;
    }
  }
  EXPECT_GT(multiToken, 250);
  EXPECT_EQ(ev.n[RequestEvent::HandoffStart], multiToken);
}

TEST(ExampleSplit, DecodePoolIsRebalancedByLiveMigration) {
  auto run = prepareRun(splitScenario(4, 1), "split");
  Simulator& sim = *run->simulator;
  sim.run();
  const auto& policy = dynamic_cast<const ExampleSplit&>(sim.globalPolicy());
  EXPECT_EQ(policy.prefillCount(), 1);
  EXPECT_GT(policy.rebalances(), 0);
  EXPECT_EQ(sim.finishedCount() + sim.aborted(), 300);
  for (int i = 0; i < sim.numInstances(); ++i) EXPECT_EQ(sim.liveMigrations(i), 0) << i;
}

TEST(ExampleSplit, PublishesPoolsFieldsAndAReport) {
  auto run = prepareRun(splitScenario(3, 1), "split");
  Simulator& sim = *run->simulator;
  sim.run(secondsToNs(5));
  Snapshot snap;
  sim.fillSnapshot(snap);
  ASSERT_EQ(snap.instances.size(), 3u);
  EXPECT_EQ(snap.instances[0].poolLabel, "prefill");
  EXPECT_EQ(snap.instances[1].poolLabel, "decode");
  EXPECT_EQ(snap.instances[2].poolLabel, "decode");
  for (const InstanceSnapshot& is : snap.instances) {
    ASSERT_EQ(is.policyFields.size(), 1u);
    EXPECT_EQ(is.policyFields[0].value, static_cast<double>(is.gpuBlocksUsed + is.cpuBlocksUsed));
    EXPECT_EQ(is.policyFields[0].label, "KV");  // its own fields, nothing of PASCAL's
  }
  const auto& policy = dynamic_cast<const ExampleSplit&>(sim.globalPolicy());
  ASSERT_EQ(snap.policySeries.size(), 1u);
  EXPECT_EQ(snap.policySeries[0].label, "rebalances");
  EXPECT_EQ(snap.policySeries[0].value, static_cast<double>(policy.rebalances()));
  sim.run();
  const RunResult r = executeRun(*run, RunOptions{});
  EXPECT_EQ(r.summaryJson["policy_report"].dump(),
            nlohmann::ordered_json({{"prefill_instances", 1}, {"rebalances", policy.rebalances()}}).dump());
  EXPECT_EQ(r.summaryJson["handoffs"].get<std::int64_t>(), run->simulator->handoffs());
}

TEST(ExampleSplit, OneInstanceDoesBoth) {
  auto run = prepareRun(splitScenario(1, 1), "split");
  EXPECT_EQ(run->simulator->instance(0).role(), InstanceRole::Both);
  run->simulator->run();
  EXPECT_EQ(run->simulator->finishedCount() + run->simulator->aborted(), 300);
}

}  // namespace
}  // namespace sl::test
