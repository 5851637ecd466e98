#include "plan/plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "cost/cost_model.h"
#include "cost/presets.h"
#include "cost/pricing.h"
#include "engine/instance.h"
#include "engine/observer.h"
#include "metrics/request_record.h"
#include "metrics/summary.h"
#include "plan/plan_detail.h"
#include "policy/registry.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "sweep/parallel.h"
#include "util/csv.h"
#include "util/error.h"
#include "util/rng.h"
#include "util/strings.h"
#include "workload/presets.h"
#include "workload/workload_source.h"

namespace sl::plan {

using detail::attainmentOf;
using detail::statOr;
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string g(double v) {
  return formatDouble(v, 6);
}

bool isPowerOfTwo(int v) {
  return v > 0 && (v & (v - 1)) == 0;
}

// The GPUs a plan may buy: the ones given, else every preset with a price.
std::vector<std::string> planGpus(const PlanOptions& o) {
  if (!o.gpus.empty()) return o.gpus;
  std::vector<std::string> out;
  for (const std::string& id : PresetRegistry::builtin().gpus())
    if (gpuPrice(id)) out.push_back(id);
  return out;
}

double listPrice(const std::string& gpu) {
  const GpuPrice* p = gpuPrice(gpu);
  return p ? p->usdPerGpuHour : kNaN;
}

// The base scenario with one plain pool of `gpu` × tp (no cluster.pools):
// what makeCostModel reads for a pool.
Scenario singlePool(const Scenario& base, const std::string& gpu, int tp) {
  Scenario s = base;
  s.cluster.pools.clear();
  s.cluster.gpu = gpu;
  s.cluster.tp = tp;
  s.cluster.instances = 1;
  return s;
}

// Whether the model fits one instance of `gpu` × tp: "" when it does, else why.
std::string fitError(const Scenario& base, const std::string& gpu, int tp) {
  try {
    const Scenario s = singlePool(base, gpu, tp);
    const auto cost = makeCostModel(s);
    (void)cost->kvCapacityBlocks(s.cluster.gpu_memory_utilization, s.cluster.kv_capacity_fraction,
                                 s.cluster.block_size);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

// Caches fitError per (gpu, tp): the enumeration and the fit step ask often.
class FitCache {
 public:
  explicit FitCache(const Scenario& base) : base_(base) {}
  const std::string& error(const std::string& gpu, int tp) {
    const auto key = std::make_pair(gpu, tp);
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, fitError(base_, gpu, tp)).first;
    return it->second;
  }
  bool fits(const std::string& gpu, int tp) { return error(gpu, tp).empty(); }

 private:
  const Scenario& base_;
  std::map<std::pair<std::string, int>, std::string> cache_;
};

void finishCandidate(Candidate& c) {
  c.gpus = 0;
  c.usdPerHour = 0;
  for (const PoolChoice& p : c.pools) {
    c.gpus += p.instances * p.tp;
    c.usdPerHour += p.instances * p.tp * listPrice(p.gpu);
  }
}

std::string num(double v) {
  return std::isfinite(v) ? g(v) : "";
}
std::string num(const std::optional<double>& v) {
  return v ? num(*v) : "";
}
nlohmann::ordered_json jnum(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr;
}
nlohmann::ordered_json jnum(const std::optional<double>& v) {
  return v ? jnum(*v) : nullptr;
}

// Better winner: (cheaper, then higher attainment, then lower p99 TTFT, then
// lower index) — or with a budget more goodput per dollar first.
bool betterCheapest(const PlanResult& r, std::size_t a, std::size_t b) {
  const Candidate &ca = r.candidates[a], &cb = r.candidates[b];
  const Outcome &oa = r.outcomes[a], &ob = r.outcomes[b];
  if (ca.usdPerHour != cb.usdPerHour) return ca.usdPerHour < cb.usdPerHour;
  if (oa.attainment != ob.attainment) return oa.attainment > ob.attainment;
  const double ta = std::isfinite(oa.ttftP99) ? oa.ttftP99 : 1e300;
  const double tb = std::isfinite(ob.ttftP99) ? ob.ttftP99 : 1e300;
  if (ta != tb) return ta < tb;
  return a < b;
}

Outcome simulate(const Scenario& base, const Candidate& c, double target) {
  Outcome o;
  const Scenario s = candidateScenario(base, c);
  auto prepared = prepareRun(s, "plan: " + c.deployment());
  const RunResult r = executeRun(*prepared, RunOptions{});
  const Summary& m = r.summary;
  o.arrived = m.arrived;
  o.finished = m.finished;
  o.preemptions = m.preemptions;
  o.attainment = attainmentOf(m);
  o.meets = o.attainment >= target;
  o.ttftP50 = statOr(m.ttft_s, m.ttft_s.p50);
  o.ttftP99 = statOr(m.ttft_s, m.ttft_s.p99);
  o.tpotP50 = statOr(m.tpot_s, m.tpot_s.p50);
  o.tpotP99 = statOr(m.tpot_s, m.tpot_s.p99);
  o.tokensPerS = std::isfinite(m.tokens_per_s) ? m.tokens_per_s : 0.0;
  o.goodputRps = std::isfinite(m.goodput_rps) ? m.goodput_rps : 0.0;
  if (const auto it = r.summaryJson.find("cost"); it != r.summaryJson.end()) {
    const auto& cj = *it;
    if (cj.contains("usd_per_million_tokens") && cj["usd_per_million_tokens"].is_number())
      o.usdPerMillionTokens = cj["usd_per_million_tokens"].get<double>();
    if (cj.contains("goodput_per_usd") && cj["goodput_per_usd"].is_number())
      o.goodputPerUsd = cj["goodput_per_usd"].get<double>();
  }
  return o;
}

}  // namespace

const char* kindName(Kind k) {
  switch (k) {
    case Kind::Homogeneous:
      return "homogeneous";
    case Kind::Mixed:
      return "mixed";
    case Kind::Disaggregated:
      return "disaggregated";
  }
  return "?";
}

const char* statusName(Status s) {
  switch (s) {
    case Status::Simulated:
      return "simulated";
    case Status::Unfit:
      return "unfit";
    case Status::Pruned:
      return "pruned";
    case Status::OverBudget:
      return "over-budget";
    case Status::CostBound:
      return "cost-bound";
  }
  return "?";
}

std::string Candidate::deployment() const {
  std::string out;
  for (const PoolChoice& p : pools) {
    if (!out.empty()) out += " + ";
    if (p.role == "prefill")
      out += "P ";
    else if (p.role == "decode")
      out += "D ";
    out += std::to_string(p.instances) + "x " + p.gpu + "/tp" + std::to_string(p.tp);
  }
  return out;
}

void validatePlanOptions(const PlanOptions& o) {
  if (!(o.rate > 0) || !std::isfinite(o.rate)) throw InputError("--rate: must be > 0 req/s (got " + g(o.rate) + ")");
  if (!(o.target > 0 && o.target <= 1)) throw InputError("--target: must be in (0, 1] (got " + g(o.target) + ")");
  if (o.sloTtftS && !(*o.sloTtftS > 0)) throw InputError("--slo-ttft: must be > 0 s (got " + g(*o.sloTtftS) + ")");
  if (o.sloTpotS && !(*o.sloTpotS > 0)) throw InputError("--slo-tpot: must be > 0 s (got " + g(*o.sloTpotS) + ")");
  if (o.budget && !(*o.budget > 0)) throw InputError("--budget: must be > 0 USD per hour (got " + g(*o.budget) + ")");
  if (o.maxGpus < 1 || o.maxGpus > 1024)
    throw InputError("--max-gpus: must be in 1 .. 1024 (got " + std::to_string(o.maxGpus) + ")");
  if (o.tps.empty()) throw InputError("--tp: give at least one tensor-parallel degree");
  for (int tp : o.tps)
    if (!isPowerOfTwo(tp) || tp > 64)
      throw InputError("--tp: " + std::to_string(tp) + " is not a power of two in 1 .. 64");
  if (!o.homogeneous && !o.mixed && !o.disaggregated)
    throw InputError("--kinds: give at least one of homogeneous, mixed, disaggregated");
  const PresetRegistry& reg = PresetRegistry::builtin();
  std::set<std::string> seen;
  for (const std::string& id : o.gpus) {
    try {
      (void)reg.gpu(id);  // unknown: InputError with a did-you-mean and the known ids
    } catch (const InputError& e) {
      throw InputError(std::string("--gpus: ") + e.what());
    }
    if (!gpuPrice(id))
      throw InputError("--gpus: " + id + " has no list price (resources/pricing/), so plan cannot cost it");
    if (!seen.insert(id).second) throw InputError("--gpus: " + id + " is given twice");
  }
  for (const std::string& p : o.policies) {
    try {
      (void)policyInfo(p);
    } catch (const InputError& e) {
      throw InputError(std::string("--policies: ") + e.what());
    }
  }
}

Scenario scenarioAtRate(const Scenario& in, const PlanOptions& o, Demand* demand) {
  Scenario s = in;
  if (o.sloTtftS) s.slo.ttft_s = o.sloTtftS;
  if (o.sloTpotS) s.slo.tpot_s = o.sloTpotS;
  // Every GPU at its list price: a scenario-wide price would make every
  // GPU type cost the same.
  s.cluster.price_usd_per_gpu_hour.reset();
  if (s.workload.preset) {
    applyWorkloadPreset(*s.workload.preset, s.workload);
  }
  const ArrivalSpec::Process proc = s.workload.arrival.process;
  const int maxContext = PresetRegistry::builtin().model(s.model).max_context;
  Demand d;
  if (s.workload.trace) {
    // The trace's own mean rate (time_scale 1, its own window and row cap),
    // then the time_scale that makes it R.
    if (proc == ArrivalSpec::Process::Closed)
      throw InputError("workload.arrival.process: plan sets an arrival rate; a closed loop has none");
    WorkloadSpec w = s.workload;
    w.trace->time_scale = 1.0;
    auto src = makeWorkload(w, s.run.seed, maxContext, s.base_dir, std::nullopt);
    RequestSpec r;
    std::int64_t n = 0;
    SimTime first = 0, last = 0;
    while (src->next(r)) {
      if (n == 0) first = r.arrival;
      last = r.arrival;
      ++n;
    }
    if (n < 2 || last <= first)
      throw InputError("workload.trace: plan needs at least two timestamps apart to scale the trace to --rate");
    d.traceNativeRate = static_cast<double>(n - 1) / nsToSeconds(last - first);
    s.workload.trace->time_scale = d.traceNativeRate / o.rate;
    d.traceTimeScale = s.workload.trace->time_scale;
  } else {
    if (proc == ArrivalSpec::Process::Closed)
      throw InputError("workload.arrival.process: plan sets an arrival rate; a closed loop (\"closed\") has none");
    if (proc == ArrivalSpec::Process::Schedule)
      throw InputError("workload.arrival.process: plan sets one arrival rate; a rate schedule has several");
    s.workload.arrival.rate = o.rate;
  }
  if (demand) {
    // The requests the runs will see: same spec, seed and stop time.
    auto src = makeWorkload(s.workload, s.run.seed, maxContext, s.base_dir, s.run.stopTimeS());
    RequestSpec r;
    double in = 0, out = 0, ctx = 0;
    SimTime last = 0;
    d.minInput = std::numeric_limits<std::int32_t>::max();
    while (src->next(r)) {
      if (s.run.stopTimeS() && nsToSeconds(r.arrival) >= *s.run.stopTimeS()) break;
      ++d.requests;
      const double i = r.input, k = static_cast<double>(r.output());
      in += i;
      out += k;
      ctx += k * i + k * (k - 1) / 2;
      d.minInput = std::min(d.minInput, r.input);
      last = r.arrival;
    }
    if (d.requests == 0) throw InputError("workload: no request arrives at --rate " + g(o.rate));
    d.spanS = s.run.stopTimeS() ? *s.run.stopTimeS() : std::max(nsToSeconds(last), 1e-9);
    d.rate = static_cast<double>(d.requests) / d.spanS;
    d.prefillTokensPerS = in / d.spanS;
    d.decodeTokensPerS = out / d.spanS;
    d.decodeContextPerS = ctx / d.spanS;
    d.meanInput = in / static_cast<double>(d.requests);
    d.meanOutput = out / static_cast<double>(d.requests);
    *demand = d;
  }
  return s;
}

Scenario candidateScenario(const Scenario& base, const Candidate& c) {
  Scenario s = base;
  s.cluster.pools.clear();
  int total = 0;
  for (const PoolChoice& p : c.pools) {
    PoolSpec ps;
    ps.gpu = p.gpu;
    ps.instances = p.instances;
    ps.tp = p.tp;
    ps.role = p.role;
    s.cluster.pools.push_back(ps);
    total += p.instances;
  }
  s.cluster.instances = total;
  s.cluster.gpu = c.pools.front().gpu;
  s.cluster.tp = c.pools.front().tp;
  s.cluster.ep = 1;
  s.cluster.attention_dp = false;
  if (c.policy != base.policy.id) {
    s.policy.id = c.policy;
    s.policy.knobs = nlohmann::json::object();
  }
  return s;
}

std::vector<Candidate> enumerateCandidates(const Scenario& base, const PlanOptions& o) {
  std::vector<Candidate> out;
  const std::vector<std::string> gpus = planGpus(o);
  std::vector<int> tps = o.tps;
  std::sort(tps.begin(), tps.end());
  tps.erase(std::unique(tps.begin(), tps.end()), tps.end());
  std::vector<std::string> policies = o.policies;
  if (policies.empty()) policies.push_back(base.policy.id);
  FitCache fit(base);
  auto add = [&](Kind k, std::vector<PoolChoice> pools, const std::string& policy) {
    Candidate c;
    c.kind = k;
    c.pools = std::move(pools);
    c.policy = policy;
    finishCandidate(c);
    out.push_back(std::move(c));
  };
  if (o.homogeneous)
    for (const std::string& policy : policies)
      for (const std::string& gpu : gpus)
        for (int tp : tps)
          for (int n = 1; n * tp <= o.maxGpus; ++n) add(Kind::Homogeneous, {{gpu, n, tp}}, policy);
  // Mixed and disaggregated pools: each pool's TP independently over the
  // TPs of the list at which the model fits its GPU (a prefill pool may want
  // a higher TP than its decode pool, a big GPU a lower one than a small).
  std::map<std::string, std::vector<int>> fitting;
  for (const std::string& gpu : gpus)
    for (int tp : tps)
      if (fit.fits(gpu, tp)) fitting[gpu].push_back(tp);
  if (o.mixed)
    for (const std::string& policy : policies)
      for (std::size_t a = 0; a < gpus.size(); ++a)
        for (std::size_t b = a + 1; b < gpus.size(); ++b)
          for (int ta : fitting[gpus[a]])
            for (int tb : fitting[gpus[b]])
              for (int na = 1; na * ta + tb <= o.maxGpus; ++na)
                for (int nb = 1; na * ta + nb * tb <= o.maxGpus; ++nb)
                  add(Kind::Mixed, {{gpus[a], na, ta}, {gpus[b], nb, tb}}, policy);
  if (o.disaggregated)
    for (const std::string& gp : gpus)
      for (const std::string& gd : gpus)
        for (int tpP : fitting[gp])
          for (int tpD : fitting[gd])
            for (int np = 1; np * tpP + tpD <= o.maxGpus; ++np)
              for (int nd = 1; np * tpP + nd * tpD <= o.maxGpus; ++nd)
                add(Kind::Disaggregated, {{gp, np, tpP, "prefill"}, {gd, nd, tpD, "decode"}}, "static-pd");
  return out;
}

namespace {

// One instance of pool `p` (its GPU, TP and role): the seconds per second it
// needs for the whole demand of its role, at the cost model's own bounds.
double poolNeed(const Scenario& base, const PoolChoice& p, const Demand& d) {
  const ModelSpec& model = PresetRegistry::builtin().model(base.model);
  const double activeParams = static_cast<double>(model.activeLinearParams());
  // Tokens a decode sequence produces per step, at most (speculation: 1 + k).
  const double perSeqStep = base.cluster.speculative.on ? 1.0 + base.cluster.speculative.k : 1.0;
  const Scenario s = singlePool(base, p.gpu, p.tp);
  const auto cost = makeCostModel(s);
  const std::int64_t blocks =
      cost->kvCapacityBlocks(s.cluster.gpu_memory_utilization, s.cluster.kv_capacity_fraction, s.cluster.block_size);
  const GpuSpec& gpu = cost->gpu();
  const CostCoefficients& k = cost->coefficients();
  const bool fp8 = cost->precision().weights == DType::FP8 && gpu.hasFp8();
  // The cost model's own rooflines with its efficiencies, each term a lower
  // bound of what an iteration costs there (CostModel::iterationSeconds:
  // max(compute, weight read) + decode attention + overheads ...).
  const double peak = p.tp * (fp8 ? std::max(gpu.fp8FlopsPerSec(), gpu.flopsPerSec()) : gpu.flopsPerSec()) * k.eta_c;
  const double bw = p.tp * gpu.hbmBytesPerSec();
  const double computePerToken = 2.0 * activeParams / peak;
  const double stepWeights = activeParams * (fp8 ? 1.0 : model.dtype_bytes) / (bw * k.eta_w);
  const double stepLayers = k.t_layer_us * model.layers * 1e-6;  // never hidden by async scheduling
  const double kvPerToken = static_cast<double>(cost->kvBytesPerToken()) / (bw * k.eta_kv);
  const double kvTokens = static_cast<double>(blocks) * s.cluster.block_size;
  const double bmax = std::max(
      1.0, std::min({static_cast<double>(s.cluster.max_num_seqs), static_cast<double>(s.cluster.max_num_batched_tokens),
                     kvTokens / std::max<std::int32_t>(1, d.minInput)}));
  const bool doPrefill = p.role != "decode", doDecode = p.role != "prefill";
  const double tokens = (doPrefill ? d.prefillTokensPerS : 0.0) + (doDecode ? d.decodeTokensPerS : 0.0);
  const double steps = doDecode ? d.decodeTokensPerS / (bmax * perSeqStep) : 0.0;  // decode steps per second, at least
  return std::max(tokens * computePerToken, steps * stepWeights) + steps * stepLayers +
         (doDecode ? d.decodeContextPerS * kvPerToken : 0.0);
}

// The load of `c` from its pools' needs: Σ n / need by role (colocated pools
// add their capacities), a prefill and a decode pool each carrying its part.
template <class NeedOf>
double loadOf(const Candidate& c, NeedOf&& needOf) {
  double colocated = 0, prefill = 0, decode = 0;
  for (const PoolChoice& p : c.pools) {
    const double perInstance = needOf(p);
    const double share = perInstance > 0 ? p.instances / perInstance : std::numeric_limits<double>::infinity();
    if (p.role == "prefill")
      prefill += share;
    else if (p.role == "decode")
      decode += share;
    else
      colocated += share;
  }
  if (c.kind == Kind::Disaggregated) return std::max(prefill > 0 ? 1 / prefill : 0.0, decode > 0 ? 1 / decode : 0.0);
  return colocated > 0 ? 1 / colocated : 0.0;
}

}  // namespace

double rooflineLoad(const Scenario& base, const Candidate& c, const Demand& d) {
  return loadOf(c, [&](const PoolChoice& p) { return poolNeed(base, p, d); });
}

std::vector<std::size_t> paretoFront(const std::vector<Candidate>& c, const std::vector<Outcome>& o,
                                     const std::vector<std::size_t>& idx) {
  std::vector<std::size_t> front;
  for (std::size_t i : idx) {
    bool dominated = false;
    for (std::size_t j : idx) {
      if (j == i) continue;
      const bool noWorse = c[j].usdPerHour <= c[i].usdPerHour && o[j].attainment >= o[i].attainment;
      const bool better = c[j].usdPerHour < c[i].usdPerHour || o[j].attainment > o[i].attainment;
      if (noWorse && better) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    if (c[a].usdPerHour != c[b].usdPerHour) return c[a].usdPerHour < c[b].usdPerHour;
    if (o[a].attainment != o[b].attainment) return o[a].attainment > o[b].attainment;
    return a < b;
  });
  return front;
}

namespace {

// The candidates to simulate once fit, budget and roofline have spoken:
// homogeneous ones first (phase 1: they set the cost bound), then the rest.
struct ToRun {
  std::vector<std::size_t> phase1, phase2;
};

// Step 1 of every search, sharded or not: the candidates, their fit, budget
// and roofline statuses (r.base and r.demand set).
ToRun prepare(PlanResult& r, const PlanOptions& o) {
  r.candidates = enumerateCandidates(r.base, o);
  if (r.candidates.empty())
    throw InputError("plan: no candidates: no deployment of --gpus × --tp fits in --max-gpus " +
                     std::to_string(o.maxGpus) + " GPUs");
  r.outcomes.assign(r.candidates.size(), Outcome{});
  FitCache fit(r.base);
  std::map<std::tuple<std::string, int, std::string>, double> needs;
  auto needOf = [&](const PoolChoice& p) {
    const auto key = std::make_tuple(p.gpu, p.tp, p.role);
    auto it = needs.find(key);
    if (it == needs.end()) it = needs.emplace(key, poolNeed(r.base, p, r.demand)).first;
    return it->second;
  };
  const double maxLoad = 1.0 / o.target;
  ToRun run;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const Candidate& c = r.candidates[i];
    Outcome& out = r.outcomes[i];
    for (const PoolChoice& p : c.pools)
      if (const std::string& e = fit.error(p.gpu, p.tp); !e.empty()) {
        out.status = Status::Unfit;
        out.reason = e;
        out.boundLoad = kNaN;
        break;
      }
    if (out.status == Status::Unfit) continue;
    out.boundLoad = loadOf(c, needOf);
    if (o.budget && c.usdPerHour > *o.budget) {
      out.status = Status::OverBudget;
      out.reason = "$" + formatFixed(c.usdPerHour, 2) + "/h is over the budget of $" + formatFixed(*o.budget, 2) + "/h";
      continue;
    }
    if (o.prune && out.boundLoad > maxLoad) {
      out.status = Status::Pruned;
      out.reason = "roofline: the demand needs " + formatFixed(100 * out.boundLoad, 0) +
                   " % of its time at the cost model's compute/bandwidth bounds (more than 1/target = " +
                   formatFixed(100 * maxLoad, 0) + " %)";
      continue;
    }
    (c.kind == Kind::Homogeneous ? run.phase1 : run.phase2).push_back(i);
  }
  return run;
}

// Simulates `which` in parallel into r.outcomes (keeping their bound load).
void simulateAll(PlanResult& r, const PlanOptions& o, const std::vector<std::size_t>& which, std::size_t& done,
                 const std::size_t& total, const std::function<void(std::size_t, std::size_t)>& progress,
                 const std::atomic<bool>* cancel) {
  std::mutex mu;
  sweep::parallelFor(
      which.size(), o.jobs,
      [&](std::size_t k) {
        const std::size_t i = which[k];
        Outcome sim = simulate(r.base, r.candidates[i], o.target);
        sim.boundLoad = r.outcomes[i].boundLoad;
        std::lock_guard<std::mutex> lock(mu);
        r.outcomes[i] = sim;
        ++done;
        if (progress) progress(done, total);
      },
      cancel);
}

// The cheapest simulated candidate of `phase1` meeting the target: with it
// known, a mixed or disaggregated candidate that costs more cannot win.
std::optional<double> costBound(const PlanResult& r, const PlanOptions& o, const std::vector<std::size_t>& phase1) {
  if (!o.prune || o.budget) return std::nullopt;
  std::optional<double> best;
  for (std::size_t i : phase1)
    if (r.outcomes[i].status == Status::Simulated && r.outcomes[i].meets &&
        (!best || r.candidates[i].usdPerHour < *best))
      best = r.candidates[i].usdPerHour;
  return best;
}

// Marks the candidates of `phase2` that cost more than `best` as cost-bound;
// returns the others.
std::vector<std::size_t> applyCostBound(PlanResult& r, const std::vector<std::size_t>& phase2, double best) {
  std::vector<std::size_t> keep;
  for (std::size_t i : phase2) {
    if (r.candidates[i].usdPerHour > best) {
      Outcome& out = r.outcomes[i];
      const double load = out.boundLoad;
      out = Outcome{};
      out.status = Status::CostBound;
      out.boundLoad = load;
      out.reason =
          "costs more than $" + formatFixed(best, 2) + "/h, the cheapest homogeneous deployment meeting the target";
    } else {
      keep.push_back(i);
    }
  }
  return keep;
}

// The answer from the outcomes: counts, winner, Pareto front, closest misses.
void finish(PlanResult& r, const PlanOptions& o) {
  r.unfit = r.pruned = r.simulated = r.met = 0;
  r.winner.reset();
  r.closestMisses.clear();
  std::vector<std::size_t> sims;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    switch (r.outcomes[i].status) {
      case Status::Simulated:
        sims.push_back(i);
        break;
      case Status::Unfit:
        ++r.unfit;
        break;
      default:
        ++r.pruned;
        break;
    }
  }
  r.simulated = sims.size();
  for (std::size_t i : sims)
    if (r.outcomes[i].meets) ++r.met;
  for (std::size_t i : sims) {
    const Outcome& oi = r.outcomes[i];
    if (o.budget) {
      // Most goodput per dollar within the budget (every simulated candidate is).
      const double gi = oi.goodputPerUsd.value_or(0);
      if (!r.winner) {
        r.winner = i;
        continue;
      }
      const double gw = r.outcomes[*r.winner].goodputPerUsd.value_or(0);
      if (gi > gw || (gi == gw && betterCheapest(r, i, *r.winner))) r.winner = i;
    } else if (oi.meets && (!r.winner || betterCheapest(r, i, *r.winner))) {
      r.winner = i;
    }
  }
  r.pareto = paretoFront(r.candidates, r.outcomes, sims);
  if (!r.winner || !r.outcomes[*r.winner].meets) {
    std::vector<std::size_t> m = sims;
    std::sort(m.begin(), m.end(), [&](std::size_t a, std::size_t b) {
      if (r.outcomes[a].attainment != r.outcomes[b].attainment)
        return r.outcomes[a].attainment > r.outcomes[b].attainment;
      return betterCheapest(r, a, b);
    });
    if (m.size() > 5) m.resize(5);
    r.closestMisses = m;
  }
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

PlanResult runPlan(const Scenario& in, const PlanOptions& o,
                   const std::function<void(std::size_t, std::size_t)>& progress, const std::atomic<bool>* cancel) {
  const auto t0 = std::chrono::steady_clock::now();
  validatePlanOptions(o);
  PlanResult r;
  r.base = scenarioAtRate(in, o, &r.demand);
  ToRun run = prepare(r, o);
  std::size_t done = 0, total = run.phase1.size() + run.phase2.size();
  simulateAll(r, o, run.phase1, done, total, progress, cancel);
  if (const auto best = costBound(r, o, run.phase1)) {
    run.phase2 = applyCostBound(r, run.phase2, *best);
    total = run.phase1.size() + run.phase2.size();
  }
  simulateAll(r, o, run.phase2, done, total, progress, cancel);
  if (cancel && cancel->load()) throw RunCancelled();
  finish(r, o);
  r.wallS = secondsSince(t0);
  return r;
}

// ---------------------------------------------------------------------------
// Sharding: shard K/N simulates the candidates i with i % N == K.

namespace {

constexpr const char* kShardFormat = "servelab-plan-shard";

nlohmann::ordered_json optionsJson(const PlanOptions& o) {
  nlohmann::ordered_json j;
  j["rate"] = o.rate;
  j["slo_ttft_s"] = jnum(o.sloTtftS);
  j["slo_tpot_s"] = jnum(o.sloTpotS);
  j["target"] = o.target;
  j["gpus"] = o.gpus;
  j["max_gpus"] = o.maxGpus;
  j["tp"] = o.tps;
  j["homogeneous"] = o.homogeneous;
  j["mixed"] = o.mixed;
  j["disaggregated"] = o.disaggregated;
  j["policies"] = o.policies;
  j["budget_usd_per_hour"] = jnum(o.budget);
  j["prune"] = o.prune;
  return j;
}

std::optional<double> optDouble(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<double>();
}

PlanOptions optionsFromJson(const nlohmann::json& j) {
  PlanOptions o;
  o.rate = j.at("rate").get<double>();
  o.sloTtftS = optDouble(j.at("slo_ttft_s"));
  o.sloTpotS = optDouble(j.at("slo_tpot_s"));
  o.target = j.at("target").get<double>();
  o.gpus = j.at("gpus").get<std::vector<std::string>>();
  o.maxGpus = j.at("max_gpus").get<int>();
  o.tps = j.at("tp").get<std::vector<int>>();
  o.homogeneous = j.at("homogeneous").get<bool>();
  o.mixed = j.at("mixed").get<bool>();
  o.disaggregated = j.at("disaggregated").get<bool>();
  o.policies = j.at("policies").get<std::vector<std::string>>();
  o.budget = optDouble(j.at("budget_usd_per_hour"));
  o.prune = j.at("prune").get<bool>();
  return o;
}

double dbl(const nlohmann::json& j) {
  return j.is_null() ? kNaN : j.get<double>();
}

nlohmann::ordered_json demandJson(const Demand& d) {
  return {{"requests", d.requests},
          {"span_s", d.spanS},
          {"rate", d.rate},
          {"prefill_tokens_per_s", d.prefillTokensPerS},
          {"decode_tokens_per_s", d.decodeTokensPerS},
          {"decode_context_per_s", d.decodeContextPerS},
          {"mean_input", d.meanInput},
          {"mean_output", d.meanOutput},
          {"min_input", d.minInput},
          {"trace_time_scale", jnum(d.traceTimeScale)},
          {"trace_native_rate", d.traceNativeRate}};
}

Demand demandFromJson(const nlohmann::json& j) {
  Demand d;
  d.requests = j.at("requests").get<std::int64_t>();
  d.spanS = j.at("span_s").get<double>();
  d.rate = j.at("rate").get<double>();
  d.prefillTokensPerS = j.at("prefill_tokens_per_s").get<double>();
  d.decodeTokensPerS = j.at("decode_tokens_per_s").get<double>();
  d.decodeContextPerS = j.at("decode_context_per_s").get<double>();
  d.meanInput = j.at("mean_input").get<double>();
  d.meanOutput = j.at("mean_output").get<double>();
  d.minInput = j.at("min_input").get<std::int32_t>();
  d.traceTimeScale = optDouble(j.at("trace_time_scale"));
  d.traceNativeRate = j.at("trace_native_rate").get<double>();
  return d;
}

nlohmann::ordered_json outcomeJson(std::size_t i, const Outcome& o) {
  nlohmann::ordered_json j;
  j["index"] = i;
  j["status"] = statusName(o.status);
  if (o.status != Status::Simulated) return j;
  j["attainment"] = o.attainment;
  j["meets"] = o.meets;
  j["ttft_p50_s"] = jnum(o.ttftP50);
  j["ttft_p99_s"] = jnum(o.ttftP99);
  j["tpot_p50_s"] = jnum(o.tpotP50);
  j["tpot_p99_s"] = jnum(o.tpotP99);
  j["tokens_per_s"] = o.tokensPerS;
  j["goodput_rps"] = o.goodputRps;
  j["usd_per_million_tokens"] = jnum(o.usdPerMillionTokens);
  j["goodput_per_usd"] = jnum(o.goodputPerUsd);
  j["arrived"] = o.arrived;
  j["finished"] = o.finished;
  j["preemptions"] = o.preemptions;
  return j;
}

Outcome outcomeFromJson(const nlohmann::json& j, double boundLoad) {
  Outcome o;
  o.boundLoad = boundLoad;
  o.attainment = j.at("attainment").get<double>();
  o.meets = j.at("meets").get<bool>();
  o.ttftP50 = dbl(j.at("ttft_p50_s"));
  o.ttftP99 = dbl(j.at("ttft_p99_s"));
  o.tpotP50 = dbl(j.at("tpot_p50_s"));
  o.tpotP99 = dbl(j.at("tpot_p99_s"));
  o.tokensPerS = j.at("tokens_per_s").get<double>();
  o.goodputRps = j.at("goodput_rps").get<double>();
  o.usdPerMillionTokens = optDouble(j.at("usd_per_million_tokens"));
  o.goodputPerUsd = optDouble(j.at("goodput_per_usd"));
  o.arrived = j.at("arrived").get<std::int64_t>();
  o.finished = j.at("finished").get<std::int64_t>();
  o.preemptions = j.at("preemptions").get<std::int64_t>();
  return o;
}

std::string shardText(int k, int n) {
  return std::to_string(k) + "/" + std::to_string(n);
}

}  // namespace

std::string planShardFileName(int index, int count) {
  return "plan-shard-" + std::to_string(index) + "-of-" + std::to_string(count) + ".json";
}

nlohmann::ordered_json runPlanShard(const Scenario& in, const PlanOptions& o, int index, int count,
                                    const std::function<void(std::size_t, std::size_t)>& progress,
                                    const std::atomic<bool>* cancel, PlanShardReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  validatePlanOptions(o);
  if (count < 1 || index < 0 || index >= count)
    throw InputError("--shard '" + shardText(index, count) + "': expected K/N with 0 <= K < N");
  PlanResult r;
  r.base = scenarioAtRate(in, o, &r.demand);
  const ToRun all = prepare(r, o);
  auto mine = [&](const std::vector<std::size_t>& v) {
    std::vector<std::size_t> out;
    for (std::size_t i : v)
      if (i % static_cast<std::size_t>(count) == static_cast<std::size_t>(index)) out.push_back(i);
    return out;
  };
  ToRun run{mine(all.phase1), mine(all.phase2)};
  const std::vector<std::size_t> share2 = run.phase2;
  std::size_t done = 0, total = run.phase1.size() + run.phase2.size();
  simulateAll(r, o, run.phase1, done, total, progress, cancel);
  // This shard's own cheapest homogeneous candidate meeting the target costs
  // at least the plan's (the cheapest of all shards'): whatever costs more
  // than it is over the plan's bound too. plan-merge applies the plan's.
  if (const auto best = costBound(r, o, run.phase1)) {
    run.phase2 = applyCostBound(r, run.phase2, *best);
    total = run.phase1.size() + run.phase2.size();
  }
  simulateAll(r, o, run.phase2, done, total, progress, cancel);
  if (cancel && cancel->load()) throw RunCancelled();

  nlohmann::ordered_json j;
  j["format"] = kShardFormat;
  j["version"] = 1;
  const nlohmann::ordered_json opt = optionsJson(o);
  const nlohmann::ordered_json base = scenarioToJson(r.base);
  j["plan"] = fingerprintHex(fnv1a64(base.dump(), fnv1a64(opt.dump())));
  j["shard"] = index;
  j["shards"] = count;
  j["options"] = opt;
  j["base"] = base;
  j["demand"] = demandJson(r.demand);
  j["candidates"] = r.candidates.size();
  nlohmann::ordered_json outs = nlohmann::ordered_json::array();
  std::vector<std::size_t> ran = run.phase1;
  ran.insert(ran.end(), share2.begin(), share2.end());
  for (std::size_t i : ran) outs.push_back(outcomeJson(i, r.outcomes[i]));
  j["outcomes"] = outs;
  j["wall_s"] = secondsSince(t0);
  if (report) {
    report->candidates = r.candidates.size();
    report->share = ran.size();
    report->simulated = run.phase1.size() + run.phase2.size();
    report->costBound = share2.size() - run.phase2.size();
    report->wallS = secondsSince(t0);
  }
  return j;
}

PlanResult mergePlanShards(const std::vector<std::pair<std::string, nlohmann::json>>& shards, PlanOptions* options) {
  const auto t0 = std::chrono::steady_clock::now();
  if (shards.empty()) throw InputError("plan-merge: no plan shard given");
  const auto& [firstPath, first] = shards.front();
  auto field = [](const std::string& path, const nlohmann::json& j, const char* key) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key))
      throw InputError(path + ": not a plan shard written by servelab-cli plan --shard (no \"" + key + "\")");
    return j[key];
  };
  for (const auto& [path, j] : shards)
    if (!j.is_object() || !j.contains("format") || j["format"] != kShardFormat)
      throw InputError(path + ": not a plan shard written by servelab-cli plan --shard");
  const std::string hash = field(firstPath, first, "plan").get<std::string>();
  const int count = field(firstPath, first, "shards").get<int>();
  std::map<int, std::size_t> byIndex;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const auto& [path, j] = shards[s];
    if (field(path, j, "plan") != hash)
      throw InputError(path + ": belongs to another plan (scenario + options hash " + j["plan"].dump() + ") than " +
                       firstPath + " (" + hash + "); merge the shards of one plan call");
    const int n = field(path, j, "shards").get<int>(), k = field(path, j, "shard").get<int>();
    if (n != count)
      throw InputError(path + ": shard " + shardText(k, n) + " does not fit " + firstPath + " (" +
                       std::to_string(count) + " shards); merge shards of one --shard K/N split");
    if (k < 0 || k >= n) throw InputError(path + ": shard " + shardText(k, n) + " is not in 0 .. N - 1");
    if (auto it = byIndex.find(k); it != byIndex.end())
      throw InputError("plan-merge: shard " + shardText(k, n) + " appears twice: " + shards[it->second].first +
                       " and " + path);
    byIndex[k] = s;
  }
  for (int k = 0; k < count; ++k)
    if (!byIndex.count(k))
      throw InputError("plan-merge: shard " + shardText(k, count) + " is missing (no " + planShardFileName(k, count) +
                       " in the folders given); run: servelab-cli plan SCENARIO.json ... --shard " +
                       shardText(k, count) + " --out DIR");

  PlanOptions o;
  PlanResult r;
  try {
    o = optionsFromJson(first.at("options"));
    r.base = parseScenario(first.at("base"), firstPath + ": base");
    r.demand = demandFromJson(first.at("demand"));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(firstPath + ": not a plan shard written by servelab-cli plan --shard (" + e.what() + ")");
  }
  validatePlanOptions(o);
  const ToRun run = prepare(r, o);
  std::vector<char> toRun(r.candidates.size(), 0);
  for (std::size_t i : run.phase1) toRun[i] = 1;
  for (std::size_t i : run.phase2) toRun[i] = 2;
  std::vector<char> have(r.candidates.size(), 0);
  double wall = 0;
  for (const auto& [path, j] : shards) {
    const int k = j["shard"].get<int>();
    if (field(path, j, "candidates").get<std::size_t>() != r.candidates.size())
      throw InputError(path + ": lists " + j["candidates"].dump() + " candidates where the plan has " +
                       std::to_string(r.candidates.size()) + "; shards of another servelab-cli version?");
    try {
      wall = std::max(wall, j.at("wall_s").get<double>());
      for (const nlohmann::json& oj : j.at("outcomes")) {
        const std::size_t i = oj.at("index").get<std::size_t>();
        if (i >= r.candidates.size() || !toRun[i] || i % static_cast<std::size_t>(count) != static_cast<std::size_t>(k))
          throw InputError(path + ": candidate " + std::to_string(i) + " is not one shard " + shardText(k, count) +
                           " simulates");
        const std::string status = oj.at("status").get<std::string>();
        if (status == statusName(Status::Simulated)) {
          r.outcomes[i] = outcomeFromJson(oj, r.outcomes[i].boundLoad);
          have[i] = 1;
        } else if (status == statusName(Status::CostBound) && toRun[i] == 2) {
          have[i] = 2;
        } else {
          throw InputError(path + ": candidate " + std::to_string(i) + " has status '" + status + "'");
        }
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path + ": not a plan shard written by servelab-cli plan --shard (" + e.what() + ")");
    }
  }
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (toRun[i] && !have[i]) {
      const int k = static_cast<int>(i % static_cast<std::size_t>(count));
      throw InputError(shards[byIndex[k]].first + ": shard " + shardText(k, count) + " lacks candidate " +
                       std::to_string(i));
    }
  // The plan's cost bound, from every shard's homogeneous candidates: the
  // same statuses as one process gives (a shard may have simulated some that
  // its own, looser bound let through; those are dropped).
  if (const auto best = costBound(r, o, run.phase1)) (void)applyCostBound(r, run.phase2, *best);
  for (std::size_t i : run.phase2)
    if (have[i] == 2 && r.outcomes[i].status != Status::CostBound)
      throw InputError(shards[byIndex[static_cast<int>(i % static_cast<std::size_t>(count))]].first + ": candidate " +
                       std::to_string(i) + " was not simulated, yet it is within the plan's cost bound");
  finish(r, o);
  r.wallS = wall + secondsSince(t0);
  if (options) *options = o;
  return r;
}

std::string candidatesCsv(const PlanResult& r) {
  std::set<std::size_t> front(r.pareto.begin(), r.pareto.end());
  std::string s =
      "index,kind,policy,deployment,gpus,usd_per_hour,status,bound_load,attainment,meets_target,ttft_p50_s,"
      "ttft_p99_s,tpot_p50_s,tpot_p99_s,tokens_per_s,goodput_rps,usd_per_million_tokens,goodput_per_usd,"
      "preemptions,pareto,winner,reason\n";
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const Candidate& c = r.candidates[i];
    const Outcome& o = r.outcomes[i];
    const bool sim = o.status == Status::Simulated;
    s += std::to_string(i) + "," + kindName(c.kind) + "," + c.policy + "," + csvQuote(c.deployment()) + "," +
         std::to_string(c.gpus) + "," + formatFixed(c.usdPerHour, 4) + "," + statusName(o.status) + "," +
         num(o.boundLoad) + ",";
    if (sim)
      s += g(o.attainment) + "," + (o.meets ? "1" : "0") + "," + num(o.ttftP50) + "," + num(o.ttftP99) + "," +
           num(o.tpotP50) + "," + num(o.tpotP99) + "," + num(o.tokensPerS) + "," + num(o.goodputRps) + "," +
           num(o.usdPerMillionTokens) + "," + num(o.goodputPerUsd) + "," + std::to_string(o.preemptions) + ",";
    else
      s += ",,,,,,,,,,,";
    s += std::string(front.count(i) ? "1" : "0") + "," + (r.winner && *r.winner == i ? "1" : "0") + "," +
         csvQuote(o.reason) + "\n";
  }
  return s;
}

std::string paretoCsv(const PlanResult& r) {
  std::string s = "usd_per_hour,attainment,ttft_p99_s,tpot_p99_s,gpus,deployment,policy,index\n";
  for (std::size_t i : r.pareto) {
    const Candidate& c = r.candidates[i];
    const Outcome& o = r.outcomes[i];
    s += formatFixed(c.usdPerHour, 4) + "," + g(o.attainment) + "," + num(o.ttftP99) + "," + num(o.tpotP99) + "," +
         std::to_string(c.gpus) + "," + csvQuote(c.deployment()) + "," + c.policy + "," + std::to_string(i) + "\n";
  }
  return s;
}

namespace {
nlohmann::ordered_json candidateJson(const PlanResult& r, std::size_t i) {
  const Candidate& c = r.candidates[i];
  const Outcome& o = r.outcomes[i];
  nlohmann::ordered_json j;
  j["index"] = i;
  j["kind"] = kindName(c.kind);
  j["policy"] = c.policy;
  j["deployment"] = c.deployment();
  nlohmann::ordered_json pools = nlohmann::ordered_json::array();
  for (const PoolChoice& p : c.pools)
    pools.push_back({{"gpu", p.gpu}, {"instances", p.instances}, {"tp", p.tp}, {"role", p.role}});
  j["pools"] = pools;
  j["gpus"] = c.gpus;
  j["usd_per_hour"] = c.usdPerHour;
  j["status"] = statusName(o.status);
  j["bound_load"] = jnum(o.boundLoad);
  if (o.status == Status::Simulated) {
    j["attainment"] = o.attainment;
    j["meets_target"] = o.meets;
    j["ttft_s"] = {{"p50", jnum(o.ttftP50)}, {"p99", jnum(o.ttftP99)}};
    j["tpot_s"] = {{"p50", jnum(o.tpotP50)}, {"p99", jnum(o.tpotP99)}};
    j["tokens_per_s"] = o.tokensPerS;
    j["goodput_rps"] = o.goodputRps;
    j["usd_per_million_tokens"] = jnum(o.usdPerMillionTokens);
    j["goodput_per_usd"] = jnum(o.goodputPerUsd);
    j["preemptions"] = o.preemptions;
  } else {
    j["reason"] = o.reason;
  }
  return j;
}
}  // namespace

nlohmann::ordered_json planJson(const PlanResult& r, const PlanOptions& o) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json opt;
  opt["rate"] = o.rate;
  opt["target"] = o.target;
  opt["slo_ttft_s"] = jnum(r.base.slo.ttft_s);
  opt["slo_tpot_s"] = jnum(r.base.slo.tpot_s);
  opt["gpus"] = planGpus(o);
  opt["tp"] = o.tps;
  opt["max_gpus"] = o.maxGpus;
  nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
  if (o.homogeneous) kinds.push_back("homogeneous");
  if (o.mixed) kinds.push_back("mixed");
  if (o.disaggregated) kinds.push_back("disaggregated");
  opt["kinds"] = kinds;
  opt["policies"] = o.policies.empty() ? std::vector<std::string>{r.base.policy.id} : o.policies;
  opt["budget_usd_per_hour"] = jnum(o.budget);
  opt["prune"] = o.prune;
  j["options"] = opt;
  const Demand& d = r.demand;
  j["demand"] = {{"requests", d.requests},
                 {"span_s", d.spanS},
                 {"rate", d.rate},
                 {"prefill_tokens_per_s", d.prefillTokensPerS},
                 {"decode_tokens_per_s", d.decodeTokensPerS},
                 {"mean_input", d.meanInput},
                 {"mean_output", d.meanOutput},
                 {"trace_time_scale", jnum(d.traceTimeScale)}};
  j["counts"] = {{"candidates", r.candidates.size()},
                 {"unfit", r.unfit},
                 {"pruned", r.pruned},
                 {"simulated", r.simulated},
                 {"met", r.met}};
  j["objective"] = o.budget ? "most goodput per dollar within the budget" : "cheapest $/hour meeting the target";
  if (r.winner) {
    nlohmann::ordered_json w = candidateJson(r, *r.winner);
    w["scenario"] = scenarioToJson(candidateScenario(r.base, r.candidates[*r.winner]));
    j["winner"] = w;
  } else {
    j["winner"] = nullptr;
  }
  nlohmann::ordered_json front = nlohmann::ordered_json::array();
  for (std::size_t i : r.pareto) front.push_back(candidateJson(r, i));
  j["pareto"] = front;
  nlohmann::ordered_json misses = nlohmann::ordered_json::array();
  for (std::size_t i : r.closestMisses) misses.push_back(candidateJson(r, i));
  j["closest_misses"] = misses;
  j["wall_s"] = r.wallS;
  return j;
}

}  // namespace sl::plan
