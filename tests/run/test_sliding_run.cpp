// Sliding-window KV in a run (docs/cost-model.md "Sliding-window KV"): the
// capacity counts one window per sequence for at most the run's
// cluster.max_num_seqs sequences, so fewer sequences leave more blocks.
#include <gtest/gtest.h>

#include "engine/simulator.h"
#include "run/run.h"
#include "scenario/scenario_io.h"

using namespace sl;

namespace {

Scenario gptOss(int maxSeqs) {
  const nlohmann::json j = {{"schema_version", 1},
                            {"cluster", {{"gpu", "h200-sxm-141g"}, {"tp", 2}, {"max_num_seqs", maxSeqs}}},
                            {"model", "gpt-oss-120b"},
                            {"workload",
                             {{"arrival", {{"process", "poisson"}, {"rate", 4.0}}},
                              {"input_tokens", {{"dist", "constant"}, {"value", 500}}},
                              {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
                              {"answer_tokens", {{"dist", "constant"}, {"value", 20}}},
                              {"requests", 10}}},
                            {"policy", {{"id", "fcfs"}}},
                            {"run", {{"seed", 1}}}};
  return parseScenario(j, "sliding.json");
}

TEST(SlidingRun, CapacityFollowsMaxNumSeqs) {
  auto a = prepareRun(gptOss(256), "sliding.json");
  auto b = prepareRun(gptOss(64), "sliding.json");
  const std::int64_t blocks256 = a->simulator->instance(0).config().gpuBlocks;
  const std::int64_t blocks64 = b->simulator->instance(0).config().gpuBlocks;
  // The run's cost model is told the cap, and the capacity is the cost
  // model's for that cap (kvCapacityBlocks at the run's utilisation).
  EXPECT_EQ(a->cost->maxSeqs(), 256);
  EXPECT_EQ(b->cost->maxSeqs(), 64);
  // 192 fewer windows (144 tokens of the 18 sliding layers' KV each) leave
  // room for more full-context blocks.
  EXPECT_GT(blocks64, blocks256);
}

}  // namespace
