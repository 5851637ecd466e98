#include "sample_traces.h"

#include <sstream>
#include <stdexcept>

#include "workload/presets.h"
#include "workload/servelab_trace.h"
#include "workload/workload_source.h"

namespace sl::testing {

namespace {

struct Recipe {
  const char* file;
  const char* preset;
  double rate;
  std::int64_t requests;
  std::uint64_t seed;
};

// Context window of the samples: 32K (a typical reasoning-model deployment).
constexpr int kContext = 32768;

const Recipe kRecipes[] = {
    {"reasoning-200.csv", "alpaca-reasoning", 2.0, 200, 42},
    {"chat-500.csv", "chat", 5.0, 500, 7},
    {"reasoning-mix-300.csv", "reasoning-mix", 1.0, 300, 11},
    {"selfsched-math-200.csv", "selfsched-math", 4.0, 200, 3},
};

}  // namespace

std::vector<SampleTrace> sampleTraces() {
  std::vector<SampleTrace> out;
  for (const auto& r : kRecipes) {
    std::ostringstream d;
    d << "preset " << r.preset << ", Poisson " << r.rate << " req/s, " << r.requests << " requests, seed " << r.seed
      << ", context " << kContext;
    out.push_back({r.file, d.str()});
  }
  return out;
}

std::string sampleTraceCsv(const std::string& file) {
  for (const auto& r : kRecipes) {
    if (file != r.file) continue;
    WorkloadSpec w;
    applyWorkloadPreset(r.preset, w);
    w.arrival.process = ArrivalSpec::Process::Poisson;
    w.arrival.rate = r.rate;
    w.requests = r.requests;
    auto src = makeWorkload(w, r.seed, kContext, ".", std::nullopt);
    std::ostringstream out;
    writeServeLabCsv(*src, out);
    return out.str();
  }
  throw std::invalid_argument("no sample trace " + file);
}

}  // namespace sl::testing
