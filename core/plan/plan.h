#pragma once
// Deployment search (`servelab-cli plan`, issue 49 item 3; docs/sweeps.md
// "Deployment search"): for a scenario's model, workload and SLO at an
// arrival rate R, enumerate deployments (GPU type × tensor parallelism ×
// instance count; two GPU types colocated; a prefill pool + a decode pool
// under static-pd), drop those whose model does not fit and those whose
// roofline throughput bound cannot carry R's token demand, simulate the rest
// (in parallel, deterministic, one seed) and answer: the cheapest ($/hour)
// deployment whose SLO attainment reaches the target, or with a budget the
// most goodput per dollar within it. The Pareto front is cost ($/hour, lower
// is better) against SLO attainment (higher is better).
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/spec.h"

namespace sl::plan {

/// What a candidate deploys.
enum class Kind {
  Homogeneous,    ///< one GPU type, one TP, n instances, colocated
  Mixed,          ///< two GPU types colocated (Mélange-style), each at its own TP and count
  Disaggregated,  ///< a prefill pool + a decode pool (roles), policy static-pd
};
const char* kindName(Kind k);  ///< "homogeneous", "mixed", "disaggregated"

struct PoolChoice {
  std::string gpu;
  int instances = 1;
  int tp = 1;
  std::string role = "colocated";  ///< colocated | prefill | decode
  bool operator==(const PoolChoice&) const = default;
};

struct Candidate {
  Kind kind = Kind::Homogeneous;
  std::vector<PoolChoice> pools;
  std::string policy;
  int gpus = 0;           ///< Σ instances × tp
  double usdPerHour = 0;  ///< Σ GPUs × the GPU's list price
  /// "4x h100-sxm-80g/tp2", "2x h100-sxm-80g/tp2 + 3x l40s-48g/tp4",
  /// "P 1x h100-sxm-80g/tp4 + D 2x a100-80g/tp4".
  std::string deployment() const;
};

enum class Status {
  Simulated,
  Unfit,       ///< the model (or its KV) does not fit the GPUs, or the scenario rejects the deployment
  Pruned,      ///< the roofline bound cannot carry the demand
  OverBudget,  ///< --budget: costs more than the budget
  CostBound,   ///< costs more than the cheapest homogeneous deployment meeting the target
};
const char* statusName(Status s);  ///< "simulated", "unfit", "pruned", "over-budget", "cost-bound"

struct Outcome {
  Status status = Status::Simulated;
  std::string reason;  ///< why not simulated ("" when simulated)
  /// Roofline load: the demand's work over what the deployment's peak
  /// compute and bandwidth can do in the same time (> 1: cannot keep up even
  /// at peak); NaN when not computed (unfit).
  double boundLoad = 0;
  // Simulated only:
  double attainment = 0;                                      ///< slo_met / arrived, as the capacity search counts it
  bool meets = false;                                         ///< attainment >= target
  double ttftP50 = 0, ttftP99 = 0, tpotP50 = 0, tpotP99 = 0;  ///< seconds (NaN: none finished)
  double tokensPerS = 0, goodputRps = 0;
  std::optional<double> usdPerMillionTokens, goodputPerUsd;
  std::int64_t arrived = 0, finished = 0, preemptions = 0;
};

struct PlanOptions {
  double rate = 0;                           ///< req/s; replaces workload.arrival.rate (a trace is time-scaled to it)
  std::optional<double> sloTtftS, sloTpotS;  ///< override the scenario's slo
  double target = 0.9;                       ///< SLO attainment to reach, in (0, 1]
  std::vector<std::string> gpus;             ///< empty: every GPU preset with a list price
  int maxGpus = 16;                          ///< GPUs per deployment, at most
  std::vector<int> tps = {1, 2, 4, 8};
  bool homogeneous = true;
  bool mixed = true;
  bool disaggregated = false;
  std::vector<std::string> policies;  ///< colocated kinds; empty: the scenario's
  std::optional<double> budget;       ///< USD per hour: most goodput per dollar within it
  bool prune = true;                  ///< roofline and cost pruning (off: simulate every fitting candidate)
  int jobs = 0;                       ///< threads (<= 0: all cores)
};

/// Throws InputError naming the flag (--rate, --target, --tp, --gpus,
/// --max-gpus, --budget, --slo-ttft, --slo-tpot, --policies) for bad options.
void validatePlanOptions(const PlanOptions& o);

/// What the workload asks of the deployment at the plan's rate, from the
/// very requests the runs see (same seed): arrivals per second, prompt and
/// output tokens per second, and Σ context over decode steps per second
/// (each output token j of a request reads in + j tokens of KV).
struct Demand {
  std::int64_t requests = 0;
  double spanS = 0;  ///< the arrivals' span (the run's stop time when it has one)
  double rate = 0;   ///< requests / spanS
  double prefillTokensPerS = 0, decodeTokensPerS = 0, decodeContextPerS = 0;
  double meanInput = 0, meanOutput = 0;
  std::int32_t minInput = 0;
  std::optional<double> traceTimeScale;  ///< the time_scale that gives the rate (trace workloads)
  double traceNativeRate = 0;            ///< the trace's own mean rate at time_scale 1
};

struct PlanResult {
  Scenario base;  ///< the scenario at the plan's rate and SLO (cluster as given)
  Demand demand;
  std::vector<Candidate> candidates;
  std::vector<Outcome> outcomes;  ///< one per candidate
  std::optional<std::size_t> winner;
  std::vector<std::size_t> pareto;         ///< non-dominated simulated candidates, by cost then attainment
  std::vector<std::size_t> closestMisses;  ///< no winner: highest attainment first (at most 5)
  std::size_t unfit = 0, pruned = 0, simulated = 0, met = 0;
  double wallS = 0;
};

/// The scenario of candidate `c` on `base`: cluster.pools from its pools,
/// policy (knobs kept only for the base's own policy).
Scenario candidateScenario(const Scenario& base, const Candidate& c);

/// The scenario at rate R and the options' SLO (InputError naming the
/// scenario field for a workload without a rate to set: a rate schedule, a
/// closed loop). `demand` (optional) gets the workload's demand.
Scenario scenarioAtRate(const Scenario& s, const PlanOptions& o, Demand* demand = nullptr);

/// Every candidate of the options' space (before fit and pruning), in a
/// fixed order: homogeneous, then mixed, then disaggregated.
std::vector<Candidate> enumerateCandidates(const Scenario& base, const PlanOptions& o);

/// The roofline load of `c` for `d` (see Outcome::boundLoad); InputError when
/// the model does not fit.
double rooflineLoad(const Scenario& base, const Candidate& c, const Demand& d);

/// Runs the search. `progress(done, total)` is called after each simulation
/// (from worker threads, serialised). `cancel`: stop starting runs.
PlanResult runPlan(const Scenario& s, const PlanOptions& o,
                   const std::function<void(std::size_t, std::size_t)>& progress = {},
                   const std::atomic<bool>* cancel = nullptr);

/// Sharded search (`plan --shard K/N` and `plan-merge`, docs/sweeps.md
/// "Sharded plans"). Shard K/N simulates the candidates i with i % N == K
/// that survive fit, budget and roofline; for its mixed and disaggregated
/// ones it uses the cost bound of its own homogeneous share (never lower
/// than the plan's, so it drops nothing the plan would run). The merge
/// applies the plan's bound over every shard's homogeneous results, so a
/// merged plan has the one-process plan's outcomes, winner and front.
struct PlanShardReport {
  std::size_t candidates = 0;  ///< in the whole plan
  std::size_t share = 0;       ///< this shard's candidates to simulate (before its cost bound)
  std::size_t simulated = 0;
  std::size_t costBound = 0;  ///< of the share, over this shard's own bound
  double wallS = 0;
};
/// "plan-shard-K-of-N.json".
std::string planShardFileName(int index, int count);
/// Runs shard `index`/`count`; returns its record (plan-shard-K-of-N.json):
/// the plan's hash (scenario at the rate + options), the options, the base
/// scenario, the demand, and the shard's outcomes.
nlohmann::ordered_json runPlanShard(const Scenario& s, const PlanOptions& o, int index, int count,
                                    const std::function<void(std::size_t, std::size_t)>& progress = {},
                                    const std::atomic<bool>* cancel = nullptr, PlanShardReport* report = nullptr);
/// Merges shard records (path, record): InputError naming the file when one
/// belongs to another plan or another split, when a shard appears twice or
/// one is missing. `options` (optional) gets the plan's options.
PlanResult mergePlanShards(const std::vector<std::pair<std::string, nlohmann::json>>& shards,
                           PlanOptions* options = nullptr);

/// Indices of the non-dominated points among `idx` over (cost ↓, attainment ↑):
/// i is dominated when some j costs no more and attains no less, better in
/// one. Sorted by cost, then attainment descending, then index.
std::vector<std::size_t> paretoFront(const std::vector<Candidate>& c, const std::vector<Outcome>& o,
                                     const std::vector<std::size_t>& idx);

/// candidates.csv: one row per candidate (pruned and unfit ones with their
/// reason). pareto.csv: the front. Deterministic (no wall time).
std::string candidatesCsv(const PlanResult& r);
std::string paretoCsv(const PlanResult& r);
/// plan.json: options, demand, counts, winner (with its scenario), front,
/// closest misses, wall_s.
nlohmann::ordered_json planJson(const PlanResult& r, const PlanOptions& o);

/// Where a deployment's time goes (`plan --explain`), from one run of it.
struct Explanation {
  std::string deployment;
  double attainment = 0;
  double simS = 0;
  // Busy time (iterations) split into decode (the iteration's time with its
  // decode sequences alone) and prefill (the rest), over instance-seconds.
  double busyShare = 0;  ///< Σ iteration time / (instances × simulated time)
  double prefillShareOfBusy = 0, decodeShareOfBusy = 0;
  std::vector<double> poolBusyShare;  ///< per pool
  // TTFT: mean queueing (arrival to first scheduled) against mean TTFT.
  double ttftMean = 0, queueingMean = 0, ttftP99 = 0, tpotP99 = 0;
  // KV memory: peak and time-weighted mean share of GPU blocks in use.
  double kvPeak = 0, kvMean = 0;
  std::int64_t preemptions = 0, finished = 0, arrived = 0;
  /// Finished requests (the whole run's) over each SLO; QoE: a scored
  /// answer stream under slo.qoe_threshold (metrics/summary.h meetsSlo).
  std::int64_t ttftViolations = 0, tpotViolations = 0, qoeViolations = 0;
  std::optional<double> sloTtftS, sloTpotS;
  std::string binding;             ///< which constraint binds, in words
  std::vector<std::string> lines;  ///< the explanation as text
};
Explanation explain(const Scenario& candidate, const std::string& deployment);

}  // namespace sl::plan
