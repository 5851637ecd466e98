#include "output/timeseries_recorder.h"

#include <cmath>

#include "metrics/request_record.h"

namespace sl {
namespace {
void appendOpt(double v, int decimals, std::string& out) {
  if (std::isfinite(v) && v >= 0) appendFixed(v, decimals, out);
}
}  // namespace

TimeSeriesRecorder::TimeSeriesRecorder(int instances, bool prefixCache, bool speculative)
    : prefixCache_(prefixCache), speculative_(speculative) {
  if (speculative_) lastSpec_.assign(static_cast<std::size_t>(instances), {0, 0});
  csv_ =
      "time_s,arrivals_per_s,completions_per_s,tokens_per_s,in_flight,ttft_p50_s,ttft_p99_s,tpot_p50_s,"
      "tpot_p99_s,slo_attainment,qoe_violation_rate";
  for (int i = 0; i < instances; ++i) {
    const std::string p = ",i" + std::to_string(i) + "_";
    csv_ += p + "gpu_blocks" + p + "cpu_blocks" + p + "queued" + p + "running" + p + "batch" + p + "role";
    if (prefixCache_) csv_ += p + "cached_gpu_blocks" + p + "cached_cpu_blocks";
    if (speculative_) csv_ += p + "spec_k" + p + "acceptance";
  }
  csv_ += '\n';
}

void TimeSeriesRecorder::onProbe(const ProbeSample& s) {
  std::string& o = csv_;
  appendSecondsNs(s.time, o);
  o += ',';
  appendFixed(static_cast<double>(s.arrivals) / s.intervalS, 3, o);
  o += ',';
  appendFixed(static_cast<double>(s.completions) / s.intervalS, 3, o);
  o += ',';
  appendFixed(static_cast<double>(s.tokens) / s.intervalS, 3, o);
  o += ',';
  appendInt(s.inFlight, o);
  for (double v : {s.ttftP50, s.ttftP99, s.tpotP50, s.tpotP99, s.sloAttainment, s.qoeViolationRate}) {
    o += ',';
    appendOpt(v, 6, o);
  }
  for (const ProbeInstance& p : s.instances) {
    for (std::int64_t v : {p.gpuBlocks, p.cpuBlocks, static_cast<std::int64_t>(p.queued),
                           static_cast<std::int64_t>(p.running), static_cast<std::int64_t>(p.batch),
                           static_cast<std::int64_t>(p.role)}) {
      o += ',';
      appendInt(v, o);
    }
    if (prefixCache_)
      for (std::int64_t v : {p.cachedGpuBlocks, p.cachedCpuBlocks}) {
        o += ',';
        appendInt(v, o);
      }
    if (speculative_) {
      // acceptance: accepted / drafted over the interval (empty when nothing was drafted)
      auto& [d0, a0] = lastSpec_[static_cast<std::size_t>(&p - s.instances.data())];
      o += ',';
      appendInt(p.specK, o);
      o += ',';
      if (p.draftedTokens > d0)
        appendFixed(static_cast<double>(p.acceptedTokens - a0) / static_cast<double>(p.draftedTokens - d0), 4, o);
      d0 = p.draftedTokens;
      a0 = p.acceptedTokens;
    }
  }
  o += '\n';
  ++rows_;
}

}  // namespace sl
