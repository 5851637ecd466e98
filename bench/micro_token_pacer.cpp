// TokenPacer::onToken: once per answer token of every request (O(1), no
// allocation). Alternates paced and late tokens so both branches run.
#include <benchmark/benchmark.h>

#include <vector>

#include "metrics/token_pacer.h"
#include "util/rng.h"

namespace {

void BM_TokenPacerOnToken(benchmark::State& state) {
  constexpr sl::SimTime kMs = 1'000'000;
  sl::Rng rng(3);
  std::vector<sl::SimTime> gaps(4096);
  for (auto& g : gaps) g = static_cast<sl::SimTime>(rng.below(200)) * kMs / 2;  // 0-100 ms, TPOT* = 50 ms
  sl::TokenPacer p(0, 250 * kMs, 50 * kMs, std::int64_t{1} << 30);
  sl::SimTime t = 0;
  std::size_t k = 0;
  for (auto _ : state) {
    t += gaps[k++ & 4095];
    p.onToken(t);
  }
  benchmark::DoNotOptimize(p.qoe());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TokenPacerOnToken);

void BM_TokenPacerBuffered(benchmark::State& state) {
  constexpr sl::SimTime kMs = 1'000'000;
  sl::TokenPacer p(0, 250 * kMs, 50 * kMs, 1000);
  for (int i = 0; i < 500; ++i) p.onToken(i * 20 * kMs);
  sl::SimTime now = 10'000 * kMs;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.buffered(now));
    now += kMs;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TokenPacerBuffered);

}  // namespace
