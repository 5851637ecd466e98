#include "plan/plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>

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
  // The smallest TP of `tps` at which the model fits `gpu`, 0 when none.
  int smallestTp(const std::string& gpu, const std::vector<int>& tps) {
    for (int tp : tps)
      if (fits(gpu, tp)) return tp;
    return 0;
  }

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
  // Mixed and disaggregated pools: each GPU at the smallest TP of the list
  // that holds the model (an instance that just fits, as Mélange buys them).
  if (o.mixed)
    for (const std::string& policy : policies)
      for (std::size_t a = 0; a < gpus.size(); ++a)
        for (std::size_t b = a + 1; b < gpus.size(); ++b) {
          const int ta = fit.smallestTp(gpus[a], tps), tb = fit.smallestTp(gpus[b], tps);
          if (ta == 0 || tb == 0) continue;
          for (int na = 1; na * ta + tb <= o.maxGpus; ++na)
            for (int nb = 1; na * ta + nb * tb <= o.maxGpus; ++nb)
              add(Kind::Mixed, {{gpus[a], na, ta}, {gpus[b], nb, tb}}, policy);
        }
  if (o.disaggregated)
    for (const std::string& gp : gpus)
      for (const std::string& gd : gpus) {
        const int tpP = fit.smallestTp(gp, tps), tpD = fit.smallestTp(gd, tps);
        if (tpP == 0 || tpD == 0) continue;
        for (int np = 1; np * tpP + tpD <= o.maxGpus; ++np)
          for (int nd = 1; np * tpP + nd * tpD <= o.maxGpus; ++nd)
            add(Kind::Disaggregated, {{gp, np, tpP, "prefill"}, {gd, nd, tpD, "decode"}}, "static-pd");
      }
  return out;
}

double rooflineLoad(const Scenario& base, const Candidate& c, const Demand& d) {
  const ModelSpec& model = PresetRegistry::builtin().model(base.model);
  const double activeParams = static_cast<double>(model.activeLinearParams());
  // Tokens a decode sequence produces per step, at most (speculation: 1 + k).
  const double perSeqStep = base.cluster.speculative.on ? 1.0 + base.cluster.speculative.k : 1.0;
  // Σ n / (one instance's seconds per second for the whole demand), by role.
  double colocated = 0, prefill = 0, decode = 0;
  for (const PoolChoice& p : c.pools) {
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
    const double bmax = std::max(1.0, std::min({static_cast<double>(s.cluster.max_num_seqs),
                                                static_cast<double>(s.cluster.max_num_batched_tokens),
                                                kvTokens / std::max<std::int32_t>(1, d.minInput)}));
    const bool doPrefill = p.role != "decode", doDecode = p.role != "prefill";
    const double tokens = (doPrefill ? d.prefillTokensPerS : 0.0) + (doDecode ? d.decodeTokensPerS : 0.0);
    const double steps =
        doDecode ? d.decodeTokensPerS / (bmax * perSeqStep) : 0.0;  // decode steps per second, at least
    const double perInstance = std::max(tokens * computePerToken, steps * stepWeights) + steps * stepLayers +
                               (doDecode ? d.decodeContextPerS * kvPerToken : 0.0);
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

PlanResult runPlan(const Scenario& in, const PlanOptions& o,
                   const std::function<void(std::size_t, std::size_t)>& progress, const std::atomic<bool>* cancel) {
  const auto t0 = std::chrono::steady_clock::now();
  validatePlanOptions(o);
  PlanResult r;
  r.base = scenarioAtRate(in, o, &r.demand);
  r.candidates = enumerateCandidates(r.base, o);
  if (r.candidates.empty())
    throw InputError("plan: no candidates: no deployment of --gpus × --tp fits in --max-gpus " +
                     std::to_string(o.maxGpus) + " GPUs");
  r.outcomes.assign(r.candidates.size(), Outcome{});
  FitCache fit(r.base);
  const double maxLoad = 1.0 / o.target;
  std::vector<std::size_t> phase1, phase2;
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
    out.boundLoad = rooflineLoad(r.base, c, r.demand);
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
    (c.kind == Kind::Homogeneous ? phase1 : phase2).push_back(i);
  }
  std::size_t done = 0, total = phase1.size() + phase2.size();
  std::mutex mu;
  auto runAll = [&](const std::vector<std::size_t>& which) {
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
  };
  runAll(phase1);
  // Cost bound: with the cheapest homogeneous deployment meeting the target
  // known, a mixed or disaggregated one that costs more cannot win.
  if (o.prune && !o.budget) {
    std::optional<double> best;
    for (std::size_t i : phase1)
      if (r.outcomes[i].meets && (!best || r.candidates[i].usdPerHour < *best)) best = r.candidates[i].usdPerHour;
    if (best) {
      std::vector<std::size_t> keep;
      for (std::size_t i : phase2) {
        if (r.candidates[i].usdPerHour > *best) {
          r.outcomes[i].status = Status::CostBound;
          r.outcomes[i].reason = "costs more than $" + formatFixed(*best, 2) +
                                 "/h, the cheapest homogeneous deployment meeting the target";
        } else {
          keep.push_back(i);
        }
      }
      phase2.swap(keep);
      total = phase1.size() + phase2.size();
    }
  }
  runAll(phase2);
  if (cancel && cancel->load()) throw RunCancelled();

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
  // The answer.
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
  r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
