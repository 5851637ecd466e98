// Issue 49 item 1 (first part): a cluster of mixed pools — cluster.pools
// parses and round-trips, one pool is today's cluster (same fingerprint),
// each instance is timed by its own pool's cost model (by hand), pools sit
// on nodes of their own, bad pools name their field.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/simulator.h"
#include "policy/arrow/arrow_global.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {

nlohmann::json withCluster(const nlohmann::json& cluster, int requests = 40) {
  return {{"schema_version", 1},
          {"cluster", cluster},
          {"model", "llama-3.1-8b"},
          {"workload",
           {{"arrival", {{"process", "poisson"}, {"rate", 4.0}}},
            {"input_tokens", {{"dist", "constant"}, {"value", 500}}},
            {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
            {"answer_tokens", {{"dist", "constant"}, {"value", 20}}},
            {"requests", requests}}},
          {"policy", {{"id", "fcfs"}, {"router", "round-robin"}}},
          {"run", {{"seed", 5}}}};
}

Scenario parse(const nlohmann::json& j) { return parseScenario(j, "pools.json"); }

std::uint64_t runFingerprint(const Scenario& s) {
  auto run = prepareRun(s, "pools.json");
  while (run->simulator->step()) {
  }
  return run->simulator->fingerprint();
}

}  // namespace

TEST(Pools, ParseAndCanonicalForm) {
  const Scenario s = parse(withCluster(
      {{"pools", {{{"gpu", "h100-sxm-80g"}, {"instances", 2}}, {{"gpu", "a100-80g"}, {"instances", 3}, {"tp", 2}}}}}));
  ASSERT_EQ(s.cluster.pools.size(), 2u);
  EXPECT_EQ(s.cluster.instances, 5);
  EXPECT_EQ(s.cluster.gpu, "h100-sxm-80g");
  EXPECT_EQ(s.cluster.pools[1].tp, 2);
  const std::string dumped = dumpScenario(s);
  EXPECT_NE(dumped.find("\"pools\""), std::string::npos);
  EXPECT_EQ(dumpScenario(parseScenario(nlohmann::json::parse(dumped), "again.json")), dumped);
  // Without pools nothing about them is written.
  EXPECT_EQ(dumpScenario(parse(withCluster({{"instances", 2}}))).find("pools"), std::string::npos);
}

TEST(Pools, BadPoolsNameTheirField) {
  EXPECT_EQ(errorOf([] { parse(withCluster({{"gpu", "a100-80g"}, {"pools", {{{"gpu", "h100-sxm-80g"}}}}})); }),
            "pools.json: cluster.gpu: set per pool when cluster.pools is given (cluster.pools[i].gpu)");
  EXPECT_EQ(errorOf([] {
              parse(withCluster({{"pools", {{{"gpu", "h100-sxm-80g"}}, {{"gpu", "a100-80g"}, {"instances", 0}}}}}));
            }),
            "pools.json: cluster.pools[1].instances: must be between 1 and 4096 (got 0)");
  EXPECT_NE(errorOf([] { parse(withCluster({{"pools", {{{"instances", 2}}}}})); })
                .find("cluster.pools[0]: missing required field 'gpu'"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parse(withCluster({{"pools", nlohmann::json::array()}})); }).find("cluster.pools"),
            std::string::npos);
  const std::string unknown = errorOf([] {
    prepareRun(parse(withCluster({{"pools", {{{"gpu", "h100-sxm-80g"}}, {{"gpu", "a100-90g"}}}}})), "pools.json");
  });
  EXPECT_NE(unknown.find("cluster.pools[1]: "), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("a100-90g"), std::string::npos) << unknown;
  // A pool whose GPUs cannot hold the weights.
  nlohmann::json big = withCluster({{"pools", {{{"gpu", "h100-sxm-80g"}, {"tp", 4}}, {{"gpu", "l40-48g"}}}}});
  big["model"] = "llama-3.1-70b";
  const std::string weights = errorOf([&] { prepareRun(parse(big), "pools.json"); });
  EXPECT_NE(weights.find("cluster.pools[1]: "), std::string::npos) << weights;
}

TEST(Pools, OnePoolIsTodaysCluster) {
  // The same cluster written as one pool: the same run, event for event.
  const Scenario classic = parse(withCluster({{"instances", 3}, {"gpu", "a100-80g"}, {"tp", 2}}));
  const Scenario pooled = parse(withCluster({{"pools", {{{"gpu", "a100-80g"}, {"instances", 3}, {"tp", 2}}}}}));
  EXPECT_EQ(runFingerprint(classic), runFingerprint(pooled));
}

TEST(Pools, EachInstanceTimedByItsPool) {
  // Round-robin over [H100, H100, A100, A100]: four requests arriving one by
  // one onto idle instances; each one's TTFT is its 500-token prefill on its
  // own pool's GPU, by the cost model, to the nanosecond.
  const Scenario s = parse(withCluster(
      {{"pools", {{{"gpu", "h100-sxm-80g"}, {"instances", 2}}, {{"gpu", "a100-80g"}, {"instances", 2}}}}}, 4));
  auto run = prepareRun(s, "pools.json");
  Simulator& sim = *run->simulator;
  EXPECT_EQ(sim.instance(0).cost().gpu().id, "h100-sxm-80g");
  EXPECT_EQ(sim.instance(3).cost().gpu().id, "a100-80g");
  EXPECT_LT(sim.instance(3).config().gpuBlocks, sim.instance(0).config().gpuBlocks * 2);
  while (sim.step()) {
  }
  BatchShape prefill;
  prefill.prefill_seqs = 1;
  prefill.prefill_tokens = 500;
  prefill.prefill_attn = 500.0 * 250.0;
  std::vector<double> ttft;
  for (const RequestRecord& r : sim.records()) {
    ASSERT_TRUE(r.finished);
    const double want = sim.instance(r.instance).cost().iterationSeconds(prefill);
    EXPECT_NEAR(static_cast<double>(r.first_token - r.arrival), std::round(want * 1e9), 1.0) << r.id;
    ttft.push_back(want);
  }
  ASSERT_EQ(ttft.size(), 4u);
  EXPECT_GT(ttft[2], ttft[0] * 1.5);  // the A100 prefills markedly slower
}

TEST(Pools, EveryPoolStartsANode) {
  // 8 GPUs a node: TP4 instances two a node, TP2 instances four a node.
  const Scenario s = parse(withCluster(
      {{"pools", {{{"gpu", "h100-sxm-80g"}, {"instances", 3}, {"tp", 4}}, {{"gpu", "a100-80g"}, {"instances", 2}, {"tp", 2}}}},
       {"fabric", {{"gpus_per_node", 8}}}}));
  auto run = prepareRun(s, "pools.json");
  const Simulator& sim = *run->simulator;
  const std::vector<int> nodes = {sim.nodeOf(0), sim.nodeOf(1), sim.nodeOf(2), sim.nodeOf(3), sim.nodeOf(4)};
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 1, 2, 2}));
  EXPECT_EQ(sim.instance(4).tp(), 2);
}

TEST(Pools, CostMetricsByHand) {
  // 2 H100 (AWS p5 list price 6.88 $/GPU-h, 700 W) + 2 × TP2 A100-80G at a
  // scenario price of 3 $/GPU-h (400 W): 2·6.88 + 4·3 = 25.76 $/h.
  const Scenario s =
      parse(withCluster({{"pools",
                          {{{"gpu", "h100-sxm-80g"}, {"instances", 2}},
                           {{"gpu", "a100-80g"}, {"instances", 2}, {"tp", 2}, {"price_usd_per_gpu_hour", 3.0}}}}}));
  const nlohmann::ordered_json j = costJson(s, 1000.0, 2.0, 4000.0);
  EXPECT_EQ(j["gpus"].get<int>(), 6);
  EXPECT_NEAR(j["usd_per_million_input_tokens"].get<double>(), 25.76 / 3600 / 4000 * 1e6, 1e-9);
  EXPECT_NEAR(j["usd_per_hour"].get<double>(), 25.76, 1e-9);
  EXPECT_NEAR(j["usd_per_million_tokens"].get<double>(), 25.76 / 3600 / 1000 * 1e6, 1e-9);
  EXPECT_NEAR(j["tokens_per_joule"].get<double>(), 1000.0 / (2 * 700 + 4 * 400), 1e-12);
  EXPECT_NEAR(j["goodput_per_usd"].get<double>(), 2.0 * 3600 / 25.76, 1e-9);
  EXPECT_EQ(j["pools"][1]["price_source"].get<std::string>(), "scenario");
  EXPECT_NE(j["pools"][0]["price_source"].get<std::string>().find("p5.48xlarge"), std::string::npos);
  // A GPU without a cited price (H800: China only): no dollar figures.
  const Scenario h800 = parse(withCluster({{"instances", 2}, {"gpu", "h800-80g"}}));
  const nlohmann::ordered_json k = costJson(h800, 1000.0, 2.0);
  EXPECT_TRUE(k["usd_per_hour"].is_null());
  EXPECT_TRUE(k["usd_per_million_tokens"].is_null());
  EXPECT_TRUE(k["usd_per_million_input_tokens"].is_null());
  EXPECT_FALSE(k["tokens_per_joule"].is_null());  // its power is known
  // A price below zero names its field.
  EXPECT_EQ(errorOf([] {
              parse(withCluster({{"price_usd_per_gpu_hour", -1}}));
            }),
            "pools.json: cluster.price_usd_per_gpu_hour: must be >= 0 (got -1)");
}

// ---- pool roles (cluster.pools[].role): prefill on one GPU, decode on another

namespace {

nlohmann::json rolesScenario(const std::string& policy, int requests = 12) {
  nlohmann::json j = withCluster({{"pools",
                                   {{{"gpu", "h100-sxm-80g"}, {"instances", 1}, {"role", "prefill"}},
                                    {{"gpu", "a100-80g"}, {"instances", 2}, {"role", "decode"}}}}},
                                 requests);
  j["workload"]["arrival"]["rate"] = 0.5;  // one request at a time
  j["policy"] = {{"id", policy}};
  return j;
}

}  // namespace

TEST(PoolRoles, ParseAndCanonicalForm) {
  const Scenario s = parse(rolesScenario("static-pd"));
  EXPECT_EQ(s.cluster.pools[0].role, "prefill");
  EXPECT_EQ(s.cluster.pools[1].role, "decode");
  const std::string dumped = dumpScenario(s);
  EXPECT_NE(dumped.find("\"role\": \"decode\""), std::string::npos) << dumped;
  EXPECT_EQ(dumpScenario(parseScenario(nlohmann::json::parse(dumped), "again.json")), dumped);
  // A colocated pool writes no role (today's files keep their bytes).
  EXPECT_EQ(dumpScenario(parse(withCluster({{"pools", {{{"gpu", "a100-80g"}}}}}))).find("role"), std::string::npos);
}

TEST(PoolRoles, StaticPdPrefillsOnOnePoolAndDecodesOnTheOther) {
  // H100 prefills, two A100s decode: every request's first token is the
  // H100's prefill to the nanosecond, its KV then crosses the NIC between
  // the two pools' nodes (latency + bytes / 12.5 GB/s), and it finishes on
  // an A100.
  const Scenario s = parse(rolesScenario("static-pd"));
  auto run = prepareRun(s, "pools.json");
  Simulator& sim = *run->simulator;
  EXPECT_EQ(sim.poolRole(0), InstanceRole::Prefill);
  EXPECT_EQ(sim.poolRole(2), InstanceRole::Decode);
  EXPECT_NE(sim.nodeOf(0), sim.nodeOf(1));
  while (sim.step()) {
  }
  BatchShape prefill;
  prefill.prefill_seqs = 1;
  prefill.prefill_tokens = 500;
  prefill.prefill_attn = 500.0 * 250.0;
  const double h100 = sim.instance(0).cost().iterationSeconds(prefill);
  const double nic = 100e9 / 8, latency = 5e-6;
  const double kvBytes = sim.config().kvBytesPerToken;
  int onDecode = 0;
  for (const RequestRecord& r : sim.records()) {
    ASSERT_TRUE(r.finished) << r.id;
    EXPECT_NEAR(static_cast<double>(r.first_token - r.arrival), std::round(h100 * 1e9), 1.0) << r.id;
    onDecode += r.instance >= 1;
    // The hand-off copies the prompt's KV (and at most the first token's).
    const double t = nsToSeconds(r.migrating);
    EXPECT_GE(t, latency + 500 * kvBytes / nic - 1e-9) << r.id;
    EXPECT_LE(t, latency + 501 * kvBytes / nic + 1e-9) << r.id;
  }
  EXPECT_EQ(onDecode, 12);
  // Inside one pool the same hand-off rides NVLink: much faster.
  nlohmann::json one = withCluster({{"instances", 3}, {"gpu", "h100-sxm-80g"}}, 12);
  one["workload"]["arrival"]["rate"] = 0.5;
  one["policy"] = {{"id", "static-pd"}, {"knobs", {{"prefill_instances", 1}}}};
  auto same = prepareRun(parse(one), "pools.json");
  while (same->simulator->step()) {
  }
  for (const RequestRecord& r : same->simulator->records())
    EXPECT_LT(nsToSeconds(r.migrating), latency + 500 * kvBytes / nic / 5) << r.id;
}

TEST(PoolRoles, ArrowStartsFromThePoolsAndProfilesEachPool) {
  // Decode pool first (A100 40 GB: half the memory, its own KV capacity),
  // so the roles, not the instance order, make the split.
  nlohmann::json j = rolesScenario("arrow");
  j["cluster"]["pools"] = {{{"gpu", "a100-40g"}, {"instances", 2}, {"role", "decode"}},
                           {{"gpu", "h100-sxm-80g"}, {"instances", 1}, {"role", "prefill"}}};
  const Scenario s = parse(j);
  auto run = prepareRun(s, "pools.json");
  Simulator& sim = *run->simulator;
  const auto* arrow = dynamic_cast<const ArrowGlobal*>(&sim.globalPolicy());
  ASSERT_NE(arrow, nullptr);
  EXPECT_EQ(arrow->pool(0), ArrowPool::D);
  EXPECT_EQ(arrow->pool(1), ArrowPool::D);
  EXPECT_EQ(arrow->pool(2), ArrowPool::P);
  // Each pool's own profile: the A100 prefills a long prompt slower and holds
  // its own KV capacity.
  EXPECT_GT(arrow->predictor(0).predict(4000), arrow->predictor(2).predict(4000) * 1.5);
  EXPECT_EQ(arrow->kvCapacityTokens(0), sim.instance(0).config().gpuBlocks * sim.instance(0).config().blockSize);
  EXPECT_LT(arrow->kvCapacityTokens(0), arrow->kvCapacityTokens(2));
  while (sim.step()) {
  }
  for (const RequestRecord& r : sim.records()) EXPECT_TRUE(r.finished) << r.id;
}

TEST(PoolRoles, BadRolesNameTheirField) {
  EXPECT_NE(errorOf([] {
              nlohmann::json j = rolesScenario("static-pd");
              j["cluster"]["pools"][0]["role"] = "prefil";
              parse(j);
            }).find("cluster.pools[0].role"),
            std::string::npos);
  // A policy that schedules every instance alike cannot use a role.
  const std::string fcfs = errorOf([] { prepareRun(parse(rolesScenario("fcfs")), "pools.json"); });
  EXPECT_NE(fcfs.find("cluster.pools[0].role: policy 'fcfs' cannot use role 'prefill'"), std::string::npos) << fcfs;
  EXPECT_NE(fcfs.find("static-pd"), std::string::npos) << fcfs;
  // A colocated pool beside prefill / decode pools.
  const std::string mixed = errorOf([] {
    nlohmann::json j = rolesScenario("static-pd");
    j["cluster"]["pools"].push_back({{"gpu", "l40s-48g"}});
    prepareRun(parse(j), "pools.json");
  });
  EXPECT_NE(mixed.find("cluster.pools[2].role: every pool needs a role"), std::string::npos) << mixed;
  // Only one side.
  const std::string oneSide = errorOf([] {
    nlohmann::json j = rolesScenario("static-pd");
    j["cluster"]["pools"][1]["role"] = "prefill";
    prepareRun(parse(j), "pools.json");
  });
  EXPECT_NE(oneSide.find("need both a \"prefill\" and a \"decode\" pool"), std::string::npos) << oneSide;
  // The split knob and roles together.
  const std::string knob = errorOf([] {
    nlohmann::json j = rolesScenario("static-pd");
    j["policy"]["knobs"] = {{"prefill_instances", 2}};
    prepareRun(parse(j), "pools.json");
  });
  EXPECT_NE(knob.find("policy.knobs.prefill_instances"), std::string::npos) << knob;
}

TEST(PoolRoles, LoadRoutersWeighEachPoolsSpeed) {
  // One H100 and one L40S (a quarter of its bandwidth): weighed by each
  // GPU's step time (least-kv: by its memory), the load routers put more of
  // the requests on the H100 than counting tokens alone does. Round-robin
  // still alternates.
  const auto placed = [](const std::string& router) {
    nlohmann::json j = withCluster({{"pools", {{{"gpu", "h100-sxm-80g"}}, {{"gpu", "l40s-48g"}}}}}, 200);
    j["workload"]["arrival"]["rate"] = 20.0;
    j["workload"]["answer_tokens"] = {{"dist", "constant"}, {"value", 200}};
    j["policy"]["router"] = router;
    auto run = prepareRun(parse(j), "pools.json");
    while (run->simulator->step()) {
    }
    int onH100 = 0;
    for (const RequestRecord& r : run->simulator->records()) onH100 += r.instance == 0;
    return onH100;
  };
  // Unweighted, the same runs place 140, 134 and 141 of 200 on the H100.
  EXPECT_GE(placed("least-loaded"), 160);
  EXPECT_GE(placed("power-of-two"), 142);
  EXPECT_GE(placed("least-kv"), 152);  // its footprint as a share of 80 GB against 48 GB
  EXPECT_EQ(placed("round-robin"), 100);
}

TEST(PoolRoles, SpeculationRunsOnEachPoolsOwnGpus) {
  // EAGLE k = 3 with every draft accepted (α = 1, so a request's steps do not
  // depend on its id). Round-robin over [H100, A100]: request 1 runs on the
  // A100, and its latencies equal those of the same request alone on a
  // one-pool A100 cluster, draft side and KV room included.
  const auto scenario = [](const nlohmann::json& cluster, int requests) {
    nlohmann::json j = withCluster(cluster, requests);
    j["workload"]["arrival"] = {{"process", "poisson"}, {"rate", 0.05}};
    j["cluster"]["speculative"] = {{"method", "eagle"}, {"k", 3}, {"acceptance", {{"alpha", {1.0}}}}};
    return parse(j);
  };
  const Scenario mixed = scenario({{"pools", {{{"gpu", "h100-sxm-80g"}}, {{"gpu", "a100-80g"}}}}}, 2);
  auto run = prepareRun(mixed, "pools.json");
  Simulator& sim = *run->simulator;
  while (sim.step()) {
  }
  const RequestRecord& onA100 = sim.records()[1];
  ASSERT_EQ(onA100.instance, 1);
  ASSERT_TRUE(onA100.finished);
  const Scenario alone = scenario({{"pools", {{{"gpu", "a100-80g"}}}}}, 1);
  auto ref = prepareRun(alone, "pools.json");
  while (ref->simulator->step()) {
  }
  const RequestRecord& r0 = ref->simulator->records()[0];
  EXPECT_EQ(onA100.first_token - onA100.arrival, r0.first_token - r0.arrival);
  EXPECT_EQ(onA100.last_token - onA100.arrival, r0.last_token - r0.arrival);
  EXPECT_EQ(sim.instance(1).config().gpuBlocks, ref->simulator->instance(0).config().gpuBlocks);
  // The H100's own step is faster than the A100's.
  const RequestRecord& onH100 = sim.records()[0];
  EXPECT_LT(onH100.last_token - onH100.first_token, onA100.last_token - onA100.first_token);
}
