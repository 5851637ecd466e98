// `plan --explain` (docs/sweeps.md "Deployment search"): one run of a
// deployment, watched, and where its time goes.
#include <algorithm>
#include <cmath>

#include "engine/instance.h"
#include "engine/observer.h"
#include "metrics/request_record.h"
#include "metrics/summary.h"
#include "plan/plan.h"
#include "plan/plan_detail.h"
#include "run/execute.h"
#include "run/run.h"
#include "util/strings.h"

namespace sl::plan {

using detail::attainmentOf;
using detail::statOr;

// ---- explain

namespace {

// Watches one run: each iteration's time split into its decode part (the
// same batch's decode sequences alone, by the instance's cost model) and the
// prefill rest; KV blocks in use, time-weighted; SLO violations per SLO.
class ExplainObserver : public SimObserver {
 public:
  ExplainObserver(int instances, const SloSpec& slo) : perInstance_(static_cast<std::size_t>(instances)), slo_(slo) {}
  void onIteration(const Instance& in, SimTime start, SimTime end) override {
    const double dur = nsToSeconds(end - start);
    BatchShape decodeOnly;
    bool anyPrefill = false;
    for (const BatchEntry& e : in.batch()) {
      if (e.prefill)
        anyPrefill = true;
      else
        addDecodeSeq(decodeOnly, e.r->kvTokens);
    }
    double decode = dur;
    if (anyPrefill) decode = decodeOnly.decode_seqs > 0 ? std::min(dur, in.cost().iterationSeconds(decodeOnly)) : 0.0;
    Busy& b = perInstance_[static_cast<std::size_t>(in.id())];
    b.total += dur;
    b.decode += decode;
    const double cap = static_cast<double>(std::max<std::int64_t>(1, in.config().gpuBlocks));
    const double used = static_cast<double>(in.gpuBlocksUsed()) / cap;
    kvPeak = std::max(kvPeak, used);
    kvWeighted += used * dur;
    kvTime += dur;
  }
  void onFinished(const RequestRecord& rec) override {
    if (const auto t = rec.ttft(); t && slo_.ttft_s && *t > *slo_.ttft_s) ++ttftViolations;
    if (const auto t = rec.tpot(); t && slo_.tpot_s && *t > *slo_.tpot_s) ++tpotViolations;
    if (qoeViolated(rec, slo_)) ++qoeViolations;
  }
  struct Busy {
    double total = 0, decode = 0;
  };
  std::vector<Busy> perInstance_;
  double kvPeak = 0, kvWeighted = 0, kvTime = 0;
  std::int64_t ttftViolations = 0, tpotViolations = 0, qoeViolations = 0;

 private:
  SloSpec slo_;
};

std::string pct(double v) {
  return formatFixed(100 * v, 1) + " %";
}
std::string ms(double v) {
  return std::isfinite(v) ? formatFixed(1000 * v, 1) + " ms" : "n/a";
}

}  // namespace

Explanation explain(const Scenario& s, const std::string& deployment) {
  Explanation x;
  x.deployment = deployment;
  x.sloTtftS = s.slo.ttft_s;
  x.sloTpotS = s.slo.tpot_s;
  auto prepared = prepareRun(s, "plan --explain: " + deployment);
  ExplainObserver obs(prepared->simulator->numInstances(), s.slo);
  prepared->simulator->addObserver(&obs);
  const RunResult r = executeRun(*prepared, RunOptions{});
  const Summary& m = r.summary;
  const Simulator& sim = *prepared->simulator;
  x.arrived = m.arrived;
  x.finished = m.finished;
  x.preemptions = m.preemptions;
  x.attainment = attainmentOf(m);
  x.simS = m.windowed ? m.window_end_s : m.sim_s;
  const double horizon = nsToSeconds(sim.now());
  double total = 0, decode = 0;
  const int pools = std::max<int>(1, static_cast<int>(s.cluster.pools.size()));
  std::vector<double> poolBusy(static_cast<std::size_t>(pools), 0.0), poolInst(static_cast<std::size_t>(pools), 0.0);
  for (int i = 0; i < sim.numInstances(); ++i) {
    const auto& b = obs.perInstance_[static_cast<std::size_t>(i)];
    total += b.total;
    decode += b.decode;
    const auto p = static_cast<std::size_t>(std::min(sim.poolOf(i), pools - 1));
    poolBusy[p] += b.total;
    poolInst[p] += 1;
  }
  x.busyShare = horizon > 0 ? total / (horizon * sim.numInstances()) : 0.0;
  x.decodeShareOfBusy = total > 0 ? decode / total : 0.0;
  x.prefillShareOfBusy = total > 0 ? 1 - x.decodeShareOfBusy : 0.0;
  for (std::size_t p = 0; p < poolBusy.size(); ++p)
    x.poolBusyShare.push_back(horizon > 0 && poolInst[p] > 0 ? poolBusy[p] / (horizon * poolInst[p]) : 0.0);
  x.ttftMean = statOr(m.ttft_s, m.ttft_s.mean);
  x.ttftP99 = statOr(m.ttft_s, m.ttft_s.p99);
  x.tpotP99 = statOr(m.tpot_s, m.tpot_s.p99);
  x.queueingMean = statOr(m.queueing_s, m.queueing_s.mean);
  x.kvPeak = obs.kvPeak;
  x.kvMean = obs.kvTime > 0 ? obs.kvWeighted / obs.kvTime : 0.0;
  x.ttftViolations = obs.ttftViolations;
  x.tpotViolations = obs.tpotViolations;
  x.qoeViolations = obs.qoeViolations;

  // Which constraint binds: the SLO most requests miss when some do (the
  // unfinished count against neither: they are a capacity shortfall), else
  // the one closest to its limit.
  struct Tight {
    double ratio;
    std::string what;
  };
  std::vector<Tight> t;
  if (x.sloTtftS && std::isfinite(x.ttftP99))
    t.push_back({x.ttftP99 / *x.sloTtftS, "the TTFT SLO (p99 " + ms(x.ttftP99) + " against " + ms(*x.sloTtftS) + ")"});
  if (x.sloTpotS && std::isfinite(x.tpotP99))
    t.push_back({x.tpotP99 / *x.sloTpotS, "the TPOT SLO (p99 " + ms(x.tpotP99) + " against " + ms(*x.sloTpotS) + ")"});
  t.push_back({x.kvPeak + (x.preemptions > 0 ? 0.5 : 0.0), "KV memory (peak " + pct(x.kvPeak) + " of the GPU blocks, " +
                                                               std::to_string(x.preemptions) + " preemptions)"});
  t.push_back({x.busyShare, "compute (GPUs busy " + pct(x.busyShare) + " of the time)"});
  const auto it =
      std::max_element(t.begin(), t.end(), [](const Tight& a, const Tight& b) { return a.ratio < b.ratio; });
  x.binding = it->what;
  const std::int64_t unfinished = std::max<std::int64_t>(0, x.arrived - x.finished);
  const std::int64_t worst = std::max({x.ttftViolations, x.tpotViolations, x.qoeViolations, unfinished});
  if (worst > 0) {
    if (worst == x.ttftViolations)
      x.binding = "the TTFT SLO: " + std::to_string(x.ttftViolations) + " requests over " + ms(*x.sloTtftS) + " (p99 " +
                  ms(x.ttftP99) + ")";
    else if (worst == x.tpotViolations)
      x.binding = "the TPOT SLO: " + std::to_string(x.tpotViolations) + " requests over " + ms(*x.sloTpotS) + " (p99 " +
                  ms(x.tpotP99) + ")";
    else if (worst == x.qoeViolations)
      x.binding = "the QoE SLO: " + std::to_string(x.qoeViolations) + " answer streams under QoE " +
                  formatDouble(s.slo.qoe_threshold, 4) + " (token pace " + ms(s.slo.qoe_tpot_s) + ")";
    else
      x.binding = "capacity: " + std::to_string(unfinished) + " requests unfinished by the run's end (GPUs busy " +
                  pct(x.busyShare) + ")";
  }

  auto& L = x.lines;
  L.push_back("deployment: " + deployment + ", policy " + s.policy.id);
  L.push_back("SLO attainment: " + pct(x.attainment) + " (" + std::to_string(m.slo_met) + " of " +
              std::to_string(x.arrived) + " arrived; " + std::to_string(x.finished) + " finished)");
  L.push_back("busy: GPUs iterate " + pct(x.busyShare) + " of the time; of that, prefill " + pct(x.prefillShareOfBusy) +
              ", decode " + pct(x.decodeShareOfBusy));
  if (x.poolBusyShare.size() > 1) {
    std::string line = "  per pool:";
    for (std::size_t p = 0; p < x.poolBusyShare.size(); ++p)
      line +=
          (p ? ", " : " ") + s.cluster.pools[p].gpu + " (" + s.cluster.pools[p].role + ") " + pct(x.poolBusyShare[p]);
    L.push_back(line + " busy");
  }
  if (std::isfinite(x.ttftMean)) {
    const double q = std::isfinite(x.queueingMean) ? x.queueingMean : 0.0;
    L.push_back("TTFT: mean " + ms(x.ttftMean) + " = queueing " + ms(q) + " (" +
                pct(x.ttftMean > 0 ? q / x.ttftMean : 0.0) + ") + service " + ms(x.ttftMean - q) + "; p99 " +
                ms(x.ttftP99));
  }
  L.push_back("TPOT: p99 " + ms(x.tpotP99));
  L.push_back("KV memory: peak " + pct(x.kvPeak) + ", mean " + pct(x.kvMean) + " of the GPU blocks; " +
              std::to_string(x.preemptions) + " preemptions");
  std::string viol = "SLO misses among the run's finished requests (a request may miss several):";
  if (x.sloTtftS) viol += " TTFT " + std::to_string(x.ttftViolations) + ",";
  if (x.sloTpotS) viol += " TPOT " + std::to_string(x.tpotViolations) + ",";
  viol += " QoE " + std::to_string(x.qoeViolations);
  if (x.arrived > x.finished) viol += "; " + std::to_string(x.arrived - x.finished) + " unfinished (misses)";
  L.push_back(viol);
  L.push_back("binding constraint: " + x.binding);
  return x;
}

}  // namespace sl::plan
