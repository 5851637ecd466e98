// Simulator::fillSnapshot on 32 instances holding ~100 requests each (the
// GUI's pull, B4's "snapshot publish <= 1 ms"), refilling the same Snapshot
// so a steady GUI's allocations show.
#include <benchmark/benchmark.h>

#include "bench_util.h"
#include "engine/snapshot.h"

namespace {

using namespace sl;

// state.range(0): prefix caching on (1) or off (0): the snapshot's cache
// fields must stay O(1) per instance.
void BM_FillSnapshot32x100(benchmark::State& state) {
  const CostModel& cost = bench::llama8b();
  SimConfig cfg = bench::benchConfig(cost, 32);
  cfg.instance.maxNumSeqs = 64;  // 64 running + ~36 waiting per instance
  cfg.instance.prefixCaching = state.range(0) != 0;
  auto sim = bench::makeSim(cost, cfg, bench::longRequests(32 * 100, 256), "round-robin");
  while (sim->arrived() < 3200 && sim->step()) {
  }
  for (int i = 0; i < 2000 && sim->step(); ++i) {  // let batches form
  }
  Snapshot snap;
  std::int64_t chips = 0;
  for (auto _ : state) {
    sim->fillSnapshot(snap);
    benchmark::DoNotOptimize(snap.instances.data());
  }
  for (const auto& in : snap.instances)
    for (const auto& q : in.queues) chips += static_cast<std::int64_t>(q.requests.size());
  state.counters["instances"] = static_cast<double>(snap.instances.size());
  state.counters["requests"] = static_cast<double>(chips);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FillSnapshot32x100)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
