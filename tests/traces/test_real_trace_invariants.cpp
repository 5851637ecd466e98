// Engine invariants on real-trace replays (70-quality.md "Reliability"):
// the Azure code trace — bursty, long prompts — on a deliberately tiny KV
// cache so that blocking, preemption and (for PASCAL) migration all happen,
// checked while it runs: blocks within capacity and conserved, time never
// going back; at the end every request accounted for with exactly R + A tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "run/run.h"

namespace sl {
namespace {

const std::string kAzureCode = std::string(SERVELAB_SHARED_DIR) + "/traces/azure-2023/AzureLLMInferenceTrace_code.csv";

class RealTraceInvariants : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceInvariants, HoldThroughoutAzureCodeReplay) {
  if (!std::filesystem::exists(kAzureCode)) GTEST_SKIP() << "../shared/traces not present";
  Scenario s;
  s.cluster.instances = 4;
  s.cluster.kv_capacity_fraction = 0.02;  // ~9 K tokens per instance: memory binds
  s.cluster.fabric.gpus_per_node = 2;
  s.model = "llama-3.1-8b";
  s.workload.trace = TraceSpec{};
  s.workload.trace->path = kAzureCode;
  s.workload.trace->max_requests = 3000;
  s.policy.id = GetParam();
  s.policy.router = "least-kv";
  auto run = prepareRun(s, "azure-invariants");
  Simulator& sim = *run->simulator;

  SimTime last = 0;
  std::int64_t steps = 0;
  bool memoryBound = false;  // some instance ran above 80 % of its KV cache
  auto check = [&] {
    std::vector<std::int64_t> gpu(static_cast<std::size_t>(sim.numInstances())), cpu(gpu.size());
    sim.forEachActive([&](const Request& r) {
      if (r.instance < 0) return;
      gpu[static_cast<std::size_t>(r.instance)] += r.blocksGpu;
      cpu[static_cast<std::size_t>(r.instance)] += r.blocksCpu;
    });
    for (int i = 0; i < sim.numInstances(); ++i) {
      const Instance& in = sim.instance(i);
      ASSERT_GE(in.gpuBlocksUsed(), 0);
      memoryBound |= in.gpuBlocksUsed() + in.gpuBlocksReserved() > in.config().gpuBlocks * 8 / 10;
      ASSERT_LE(in.gpuBlocksUsed() + in.gpuBlocksReserved(), in.config().gpuBlocks) << "instance " << i;
      ASSERT_LE(in.cpuBlocksUsed(), in.config().cpuBlocks);
      ASSERT_EQ(in.gpuBlocksUsed(), gpu[static_cast<std::size_t>(i)]) << "GPU blocks not conserved on " << i;
      ASSERT_EQ(in.cpuBlocksUsed(), cpu[static_cast<std::size_t>(i)]) << "CPU blocks not conserved on " << i;
    }
  };
  while (sim.step()) {
    ASSERT_GE(sim.now(), last);
    last = sim.now();
    if (++steps % 97 == 0) check();
    if (HasFatalFailure()) return;
  }
  check();
  EXPECT_FALSE(sim.stalled());
  EXPECT_EQ(sim.arrived(), 3000);
  EXPECT_EQ(sim.arrived(), sim.finishedCount() + sim.inFlight() + sim.aborted());
  EXPECT_EQ(sim.inFlight(), 0);
  if (std::string(GetParam()) == "oracle") {
    EXPECT_EQ(sim.preemptions(), 0);
  } else {
    EXPECT_TRUE(memoryBound) << "the tiny cache should make memory bind";
  }
  std::set<std::int64_t> ids;
  for (const RequestRecord& r : sim.records()) {
    EXPECT_EQ(r.generated, r.reasoning + r.answer) << "request " << r.id;
    EXPECT_TRUE(ids.insert(r.id).second) << "request " << r.id << " finished twice";
  }
  for (int i = 0; i < sim.numInstances(); ++i) {
    EXPECT_EQ(sim.instance(i).gpuBlocksUsed(), 0);
    EXPECT_EQ(sim.instance(i).cpuBlocksUsed(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, RealTraceInvariants, ::testing::Values("fcfs", "rr", "oracle", "pascal"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace sl
