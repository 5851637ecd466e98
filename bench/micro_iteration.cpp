// One iteration of a 256-sequence decode batch through a real Simulator on
// one instance: endIteration (256 tokens emitted, pacer and policy updates)
// + the next startIteration (FCFS schedule through IterationBuilder, the
// BatchShape, CostModel::iterationSeconds, the event push). This is exactly
// what Simulator::step() does for an IterationEnd event in steady decode.
#include <benchmark/benchmark.h>

#include <stdexcept>

#include "bench_util.h"
#include "cost/cost_model.h"

namespace {

using namespace sl;

void BM_DecodeIteration256(benchmark::State& state) {
  const CostModel& cost = bench::llama8b();
  auto sim = bench::makeSim(cost, bench::benchConfig(cost, 1), bench::longRequests(256, 512));
  // Warm up: arrivals and the chunked prefills of all 256 prompts.
  for (int i = 0; i < 10'000; ++i) {
    const Instance& in = sim->instance(0);
    bool allDecode = in.batch().size() == 256;
    for (const BatchEntry& e : in.batch()) allDecode = allDecode && !e.prefill;
    if (allDecode && sim->arrived() == 256) break;
    sim->step();
  }
  const Instance& in = sim->instance(0);
  if (in.batch().size() != 256) state.SkipWithError("warm-up did not reach a 256-sequence decode batch");
  for (auto _ : state) {
    if (!sim->step()) {
      state.SkipWithError("simulation ended");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * 256);  // tokens
  state.counters["batch"] = static_cast<double>(in.batch().size());
}
BENCHMARK(BM_DecodeIteration256);

void BM_CostModelIterationSeconds(benchmark::State& state) {
  const CostModel& cost = bench::llama8b();
  BatchShape b;
  for (int i = 0; i < 256; ++i) addDecodeSeq(b, 512 + (i % 7) * 64);
  double sum = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(b);
    sum += cost.iterationSeconds(b);
    b.decode_ctx_sum += 1;  // a different batch each time
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CostModelIterationSeconds);

void BM_CostModelBreakdown(benchmark::State& state) {
  const CostModel cost(PresetRegistry::builtin().gpu("h100-sxm-80g"), PresetRegistry::builtin().model("llama-3.1-70b"),
                       4);
  BatchShape b;
  for (int i = 0; i < 64; ++i) addDecodeSeq(b, 1024 + i * 16);
  addPrefillChunk(b, 2048, 4096);
  for (auto _ : state) {
    benchmark::DoNotOptimize(b);
    benchmark::DoNotOptimize(cost.breakdown(b));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CostModelBreakdown);

}  // namespace
