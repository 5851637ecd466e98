// EventQueue: one pop + one push (the "hold" model of a steady event loop)
// at a fixed heap size, as the simulator does for every event.
#include <benchmark/benchmark.h>

#include <vector>

#include "engine/event_queue.h"
#include "util/rng.h"

namespace {

void BM_EventQueueHold(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  sl::Rng rng(7);
  sl::EventQueue q;
  q.reserve(size + 1);
  for (std::size_t i = 0; i < size; ++i)
    q.push(static_cast<sl::SimTime>(rng.below(1'000'000'000)), sl::EventKind::IterationEnd,
           static_cast<std::int64_t>(i));
  // Pre-drawn increments so the RNG is not measured.
  std::vector<sl::SimTime> deltas(4096);
  for (auto& d : deltas) d = static_cast<sl::SimTime>(rng.below(2'000'000'000));
  std::size_t k = 0;
  for (auto _ : state) {
    const sl::Event e = q.pop();
    q.push(e.time + deltas[k++ & 4095], e.kind, e.a);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["heap"] = static_cast<double>(q.size());
}
BENCHMARK(BM_EventQueueHold)->Arg(1 << 10)->Arg(1 << 16);

// Push then pop a burst of n events (heap grows from empty to n and back).
void BM_EventQueueFillDrain(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  sl::Rng rng(9);
  std::vector<sl::SimTime> times(n);
  for (auto& t : times) t = static_cast<sl::SimTime>(rng.below(1'000'000'000));
  sl::EventQueue q;
  q.reserve(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) q.push(times[i], sl::EventKind::Arrival, static_cast<std::int64_t>(i));
    while (!q.empty()) benchmark::DoNotOptimize(q.pop());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_EventQueueFillDrain)->Arg(1 << 10)->Arg(1 << 16);

}  // namespace
