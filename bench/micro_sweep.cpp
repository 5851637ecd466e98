// Sweep throughput (issue 14; docs/performance.md "Sweep throughput"): the
// 36-point PASCAL sample sweep (3 policies × 6 rates × 2 seeds, 300 requests
// per point) on 1 and 2 threads.
//  - BM_SweepCompute: the points on the thread pool in memory (runPoint via
//    parallelFor), i.e. what the worker threads themselves deliver;
//  - BM_SweepRun: the whole `sweep` (runSweep): also one fsync'ed, renamed
//    record per point and results.csv/json.
// items_per_second = points per second.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "sweep/parallel.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

namespace {

const sl::sweep::SweepSpec& spec() {
  static const sl::sweep::SweepSpec s =
      sl::sweep::loadSweepFile(std::string(SERVELAB_SOURCE_DIR) + "/samples/sweeps/pascal-policies-rates-seeds.json");
  return s;
}

void BM_SweepCompute(benchmark::State& state) {
  const auto& s = spec();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    sl::sweep::parallelFor(s.points.size(), threads, [&](std::size_t i) {
      benchmark::DoNotOptimize(sl::sweep::runPoint(s, i).fingerprint);
    });
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.points.size()));
}
BENCHMARK(BM_SweepCompute)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_SweepRun(benchmark::State& state) {
  const auto& s = spec();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("servelab-bench-sweep-" + std::to_string(::getpid()));
  sl::sweep::SweepRunOptions o;
  o.outDir = dir.string();
  o.jobs = static_cast<int>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
    benchmark::DoNotOptimize(sl::sweep::runSweep(s, o).ran);
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.points.size()));
}
BENCHMARK(BM_SweepRun)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
