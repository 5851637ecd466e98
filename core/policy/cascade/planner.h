#pragma once
// CascadeInfer's pipeline planner (paper §4.2): split E instances into stages
// over exponential length buckets, minimising the pipeline quality
//   Σ_stages m·Q^B(stage's sequences / m) + Σ_cuts c(cut),
// where c(cut) = KV volume straddling the cut / bandwidth. Two solvers: the
// exact dynamic programme over instances × cut points (stages implicit), and
// the two-phase heuristic (one instance per stage, then greedy merges of the
// adjacent pair with the largest positive gain, from a max-heap).
// Mixed pools (issue 49): the instances are planned in an order (stages take
// contiguous runs of it) and each has its own model, so a stage costs
// Σ_its instances Q_i^B(stage's sequences / m); pinned stages (pool roles
// "stage-k") keep their instance counts and only the cuts are chosen.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "policy/cascade/qoe_model.h"

namespace sl {

/// The concurrent sequence population over length buckets [edges[b], edges[b+1]).
struct LengthHistogram {
  std::vector<std::int64_t> edges;   // B+1 increasing edges, edges[0] = 0
  std::vector<QoeFeatures> bucket;   // B buckets: n, ΣI, ΣI², ΣL of the sequences in it
  std::vector<double> straddling;    // B+1: sequences that will cross edge b (0 at both ends)
  /// B (or empty: no prefill term): instance-seconds of prefill per second
  /// that the arrivals whose prompt falls in bucket b bring to its stage.
  std::vector<double> prefillLoad;
  int buckets() const { return static_cast<int>(bucket.size()); }
};

/// Edges 0, base, 2·base, 4·base, ... until one reaches maxLength (the last
/// edge is >= maxLength).
std::vector<std::int64_t> exponentialEdges(std::int64_t base, std::int64_t maxLength);

/// The histogram of the steady-state population of requests (input, output)
/// sampled from a workload: each request contributes one sequence-step per
/// decode step at its current length, scaled so that the population is
/// `population` sequences in all (Little's law: arrival rate × decode time).
LengthHistogram buildHistogram(const std::vector<std::pair<std::int64_t, std::int64_t>>& requests,
                               const std::vector<std::int64_t>& edges, double population);

/// Fills h.prefillLoad: `rate` arrivals per second drawn like `requests`,
/// each bringing prefillSeconds(input) of prefill to the stage its prompt is
/// routed to (issue 25: stage 1 took every arrival's prefill, which the
/// decode-only stage cost did not see).
void addPrefillLoad(LengthHistogram& h, const std::vector<std::pair<std::int64_t, std::int64_t>>& requests,
                    double rate, const std::function<double(std::int64_t)>& prefillSeconds);

/// Slow-down of decoding on instances busy u of the time with prefill:
/// 1/(1−u) below u = 0.9, continued linearly above (10 + 100·(u − 0.9)) so
/// that overloaded layouts stay ordered by how overloaded they are.
double prefillSlowdown(double u);

struct PlanCosts {
  QoeModel q;
  double cutSecondsPerToken = 0;  // KV bytes per token / transfer bandwidth
  /// Mixed pools: running sums of D over the instances in planning order
  /// (E+1 entries, the first all 0; setInstanceModels). Empty: every
  /// instance is q (one pool), and a stage costs m · Q^B as before.
  std::vector<std::array<double, 5>> prefixD;
};

/// Gives the planner each instance's model, in planning order (stage s takes
/// the next instances of that order): fills c.prefixD.
void setInstanceModels(PlanCosts& c, const std::vector<QoeModel>& models);

struct Plan {
  std::vector<int> cuts;       // S+1 bucket indices: stage s covers buckets [cuts[s], cuts[s+1])
  std::vector<int> instances;  // S instance counts (sum = E)
  double cost = 0;
  int stages() const { return static_cast<int>(instances.size()); }
};

/// Number of stageCost calls so far (this thread): the planner-cost table's
/// deterministic measure of work. Reset by assigning 0.
std::int64_t& stageCostEvaluations();
/// Cost of a stage over buckets [a, b) with m instances: m · Q^B(population / m),
/// times prefillSlowdown(prefill load of its buckets / m) when h has one.
/// With instance models (c.prefixD) the stage's instances are positions
/// [first, first + m) of the planning order and the cost is
/// Σ_i Q_i^B(population / m) (the stage's population spread evenly, as its
/// routing and bid-ask rebalancing by KV demand spread it).
double stageCost(const LengthHistogram& h, const PlanCosts& c, int a, int b, int m, int first = 0);
/// Cost of cutting at edge k (0 < k < B).
double cutCost(const LengthHistogram& h, const PlanCosts& c, int k);
/// Total cost of a plan (recomputed from its stages and cuts).
double planCost(const LengthHistogram& h, const PlanCosts& c, const Plan& p);

/// Exact DP over (instances used, last cut): O(E²·B²). E >= 1, B >= 1.
Plan planExact(const LengthHistogram& h, const PlanCosts& c, int instances);
/// Two-phase heuristic: phase 1 one instance per stage (a DP over cuts with
/// min(E, B) stages; spare instances go one by one to the stage they help
/// most), phase 2 greedy merges by largest positive gain (max-heap).
Plan planHeuristic(const LengthHistogram& h, const PlanCosts& c, int instances);
/// Pinned stages: stage s keeps perStage[s] instances (the next ones of the
/// planning order); a DP over the cuts chooses each stage's length range
/// (every stage gets >= 1 bucket). Needs 1 <= perStage.size() <= B.
Plan planPinned(const LengthHistogram& h, const PlanCosts& c, const std::vector<int>& perStage);

}  // namespace sl
