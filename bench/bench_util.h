#pragma once
// Helpers shared by the micro-benchmarks: a Simulator built straight from a
// SimConfig and a fixed request list (no scenario file).
#include <memory>
#include <utility>
#include <vector>

#include "cost/cost_model.h"
#include "cost/presets.h"
#include "engine/simulator.h"
#include "policy/registry.h"
#include "workload/list_workload.h"

namespace sl::bench {

using sl::ListWorkload;  // workload/list_workload.h

inline const CostModel& llama8b() {
  static const CostModel m(PresetRegistry::builtin().gpu("h100-sxm-80g"),
                           PresetRegistry::builtin().model("llama-3.1-8b"), 1);
  return m;
}

/// `n` instances with ample KV (so nothing is preempted), no probes.
inline SimConfig benchConfig(const CostModel& cost, int n) {
  SimConfig c;
  c.instances = n;
  c.instance.gpuBlocks = std::int64_t{1} << 32;
  c.instance.cpuBlocks = 1 << 20;
  c.instance.blockSize = 16;
  c.instance.watermarkBlocks = 0;
  c.instance.maxNumSeqs = 256;
  c.instance.maxBatchedTokens = 8192;
  c.kvBytesPerToken = static_cast<double>(cost.kvBytesPerToken());
  c.instance.kvBytesPerBlock = c.kvBytesPerToken * c.instance.blockSize;
  c.probeInterval = 0;
  return c;
}

/// `count` requests arriving at t = 0 with `input` prompt tokens and answers
/// long enough that none finishes during a benchmark.
inline std::vector<RequestSpec> longRequests(int count, std::int32_t input) {
  std::vector<RequestSpec> v;
  for (int i = 0; i < count; ++i) {
    RequestSpec s;
    s.id = i;
    s.arrival = 0;
    s.input = input + (i % 7) * 64;  // slightly uneven contexts, as in a real batch
    s.reasoning = 0;
    s.answer = 1 << 30;
    v.push_back(s);
  }
  return v;
}

/// A Simulator running `policy` (fcfs + `router`) over `reqs`.
inline std::unique_ptr<Simulator> makeSim(const CostModel& cost, const SimConfig& cfg, std::vector<RequestSpec> reqs,
                                          const std::string& router = "round-robin") {
  PolicySpec ps;
  ps.id = "fcfs";
  ps.router = router;
  PolicyBundle pb = makePolicy(ps);
  return std::make_unique<Simulator>(cfg, cost, std::make_unique<ListWorkload>(std::move(reqs)), std::move(pb.global),
                                     pb.makeLocal);
}

}  // namespace sl::bench
