#include "policy/cascade/planner.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace sl {

std::vector<std::int64_t> exponentialEdges(std::int64_t base, std::int64_t maxLength) {
  base = std::max<std::int64_t>(1, base);
  std::vector<std::int64_t> e = {0, base};
  while (e.back() < maxLength) e.push_back(e.back() * 2);
  return e;
}

LengthHistogram buildHistogram(const std::vector<std::pair<std::int64_t, std::int64_t>>& requests,
                               const std::vector<std::int64_t>& edges, double population) {
  LengthHistogram h;
  h.edges = edges;
  const int nb = static_cast<int>(edges.size()) - 1;
  h.bucket.assign(static_cast<std::size_t>(std::max(0, nb)), {});
  h.straddling.assign(edges.size(), 0.0);
  double steps = 0;
  for (const auto& [in, out] : requests) steps += static_cast<double>(std::max<std::int64_t>(1, out));
  if (steps <= 0 || nb <= 0) return h;
  const double w = population / steps;
  const double perRequest = population / static_cast<double>(requests.size());
  for (const auto& [in, out0] : requests) {
    const std::int64_t out = std::max<std::int64_t>(1, out0);
    const double I = static_cast<double>(in);
    // Only the buckets [in, in + out) overlaps add anything: from the first
    // whose upper edge is above `in` (the last has none) while its lower
    // edge is below in + out. The others were skipped by `y <= x` anyway.
    const int first = static_cast<int>(std::upper_bound(edges.begin() + 1, edges.begin() + nb, in) - (edges.begin() + 1));
    for (int b = first; b < nb && edges[static_cast<std::size_t>(b)] < in + out; ++b) {
      const std::int64_t x = std::max(in, edges[static_cast<std::size_t>(b)]);
      const std::int64_t y = std::min(in + out, b + 1 == nb ? std::numeric_limits<std::int64_t>::max()
                                                            : edges[static_cast<std::size_t>(b) + 1]);
      if (y <= x) continue;
      const double cnt = static_cast<double>(y - x);
      QoeFeatures& f = h.bucket[static_cast<std::size_t>(b)];
      f.n += w * cnt;
      f.sumI += w * cnt * I;
      f.sumI2 += w * cnt * I * I;
      f.sumL += w * cnt * (static_cast<double>(x + y - 1) / 2.0);
    }
    // A request whose sequence grows across edge k is migrated there once;
    // its share of the population straddles the cut.
    for (int k = first + 1; k < nb; ++k) {  // edges[first + 1] is the first above `in`
      const std::int64_t e = edges[static_cast<std::size_t>(k)];
      if (in + out <= e) break;
      if (in < e) h.straddling[static_cast<std::size_t>(k)] += perRequest;
    }
  }
  return h;
}

void addPrefillLoad(LengthHistogram& h, const std::vector<std::pair<std::int64_t, std::int64_t>>& requests,
                    double rate, const std::function<double(std::int64_t)>& prefillSeconds) {
  const int nb = h.buckets();
  h.prefillLoad.assign(static_cast<std::size_t>(std::max(0, nb)), 0.0);
  if (requests.empty() || nb <= 0 || rate <= 0) return;
  const double perRequest = rate / static_cast<double>(requests.size());
  for (const auto& [in, out] : requests) {
    (void)out;
    // The bucket holding the prompt: the first with edges[b+1] > in.
    int b = 0;
    while (b + 1 < nb && h.edges[static_cast<std::size_t>(b) + 1] <= in) ++b;
    h.prefillLoad[static_cast<std::size_t>(b)] += perRequest * prefillSeconds(in);
  }
}

double prefillSlowdown(double u) {
  if (u <= 0) return 1.0;
  if (u < 0.9) return 1.0 / (1.0 - u);
  return 10.0 + 100.0 * (u - 0.9);
}

std::int64_t& stageCostEvaluations() {
  thread_local std::int64_t n = 0;
  return n;
}

void setInstanceModels(PlanCosts& c, const std::vector<QoeModel>& models) {
  c.prefixD.assign(models.size() + 1, std::array<double, 5>{});
  for (std::size_t i = 0; i < models.size(); ++i)
    for (std::size_t k = 0; k < 5; ++k) c.prefixD[i + 1][k] = c.prefixD[i][k] + models[i].d[k];
}

double stageCost(const LengthHistogram& h, const PlanCosts& c, int a, int b, int m, int first) {
  ++stageCostEvaluations();
  QoeFeatures f;
  for (int k = a; k < b; ++k) {
    const QoeFeatures& x = h.bucket[static_cast<std::size_t>(k)];
    f.n += x.n;
    f.sumI += x.sumI;
    f.sumI2 += x.sumI2;
    f.sumL += x.sumL;
  }
  if (f.n <= 0) return 0.0;
  double slow = 1.0;
  if (!h.prefillLoad.empty()) {
    double load = 0;
    for (int k = a; k < b; ++k) load += h.prefillLoad[static_cast<std::size_t>(k)];
    slow = prefillSlowdown(load / m);
  }
  if (c.prefixD.empty()) return static_cast<double>(m) * c.q.batch(f.scaled(1.0 / m)) * slow;
  // Σ_i n·Q_i(g) = n·(Σ_i D_i)·x(g): Q is linear in D.
  QoeModel sum;
  const auto& lo = c.prefixD[static_cast<std::size_t>(first)];
  const auto& hi = c.prefixD[static_cast<std::size_t>(first + m)];
  for (std::size_t k = 0; k < 5; ++k) sum.d[k] = hi[k] - lo[k];
  return sum.batch(f.scaled(1.0 / m)) * slow;
}

double cutCost(const LengthHistogram& h, const PlanCosts& c, int k) {
  return h.straddling[static_cast<std::size_t>(k)] * static_cast<double>(h.edges[static_cast<std::size_t>(k)]) *
         c.cutSecondsPerToken;
}

double planCost(const LengthHistogram& h, const PlanCosts& c, const Plan& p) {
  double s = 0;
  int first = 0;
  for (int i = 0; i < p.stages(); ++i) {
    s += stageCost(h, c, p.cuts[static_cast<std::size_t>(i)], p.cuts[static_cast<std::size_t>(i) + 1],
                   p.instances[static_cast<std::size_t>(i)], first);
    if (i > 0) s += cutCost(h, c, p.cuts[static_cast<std::size_t>(i)]);
    first += p.instances[static_cast<std::size_t>(i)];
  }
  return s;
}

Plan planExact(const LengthHistogram& h, const PlanCosts& c, int E) {
  const int B = h.buckets();
  if (E < 1 || B < 1) throw std::invalid_argument("planExact: needs >= 1 instance and >= 1 bucket");
  constexpr double inf = std::numeric_limits<double>::infinity();
  // f[e][k]: best cost covering buckets [0, k) with e instances; from[e][k] = (e', k').
  std::vector<std::vector<double>> f(static_cast<std::size_t>(E) + 1, std::vector<double>(static_cast<std::size_t>(B) + 1, inf));
  std::vector<std::vector<std::pair<int, int>>> from(static_cast<std::size_t>(E) + 1,
                                                     std::vector<std::pair<int, int>>(static_cast<std::size_t>(B) + 1, {-1, -1}));
  f[0][0] = 0;
  for (int e = 1; e <= E; ++e)
    for (int k = 1; k <= B; ++k)
      for (int e0 = 0; e0 < e; ++e0)
        for (int k0 = 0; k0 < k; ++k0) {
          const double prev = f[static_cast<std::size_t>(e0)][static_cast<std::size_t>(k0)];
          if (prev == inf || (k0 == 0) != (e0 == 0)) continue;
          const double v = prev + stageCost(h, c, k0, k, e - e0, e0) + (k0 > 0 ? cutCost(h, c, k0) : 0.0);
          if (v < f[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)]) {
            f[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)] = v;
            from[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)] = {e0, k0};
          }
        }
  Plan p;
  p.cost = f[static_cast<std::size_t>(E)][static_cast<std::size_t>(B)];
  int e = E, k = B;
  std::vector<int> cuts = {B}, inst;
  while (k > 0) {
    const auto [e0, k0] = from[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)];
    inst.push_back(e - e0);
    cuts.push_back(k0);
    e = e0;
    k = k0;
  }
  std::reverse(cuts.begin(), cuts.end());
  std::reverse(inst.begin(), inst.end());
  p.cuts = cuts;
  p.instances = inst;
  return p;
}

Plan planHeuristic(const LengthHistogram& h, const PlanCosts& c, int E) {
  const int B = h.buckets();
  if (E < 1 || B < 1) throw std::invalid_argument("planHeuristic: needs >= 1 instance and >= 1 bucket");
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Phase 1: S = min(E, B) stages of one instance each, best cuts by a DP over cut points.
  const int S = std::min(E, B);
  std::vector<std::vector<double>> g(static_cast<std::size_t>(S) + 1, std::vector<double>(static_cast<std::size_t>(B) + 1, inf));
  std::vector<std::vector<int>> from(static_cast<std::size_t>(S) + 1, std::vector<int>(static_cast<std::size_t>(B) + 1, -1));
  g[0][0] = 0;
  for (int s = 1; s <= S; ++s)
    for (int k = s; k <= B; ++k)
      for (int k0 = s - 1; k0 < k; ++k0) {
        const double prev = g[static_cast<std::size_t>(s) - 1][static_cast<std::size_t>(k0)];
        if (prev == inf) continue;
        const double v = prev + stageCost(h, c, k0, k, 1, s - 1) + (k0 > 0 ? cutCost(h, c, k0) : 0.0);
        if (v < g[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)]) {
          g[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)] = v;
          from[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)] = k0;
        }
      }
  std::vector<int> cuts = {B};
  for (int s = S, k = B; s > 0; --s) {
    k = from[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)];
    cuts.push_back(k);
  }
  std::reverse(cuts.begin(), cuts.end());
  std::vector<int> inst(static_cast<std::size_t>(S), 1);
  // Spare instances (E > B): each to the stage whose cost drops the most (lowest index on ties).
  // With instance models the spare joins the end of the stage and every
  // later stage moves one position along the order (their costs change too).
  const bool mixed = !c.prefixD.empty();
  for (int spare = E - S; spare > 0; --spare) {
    int best = 0;
    double bestGain = -inf;
    std::vector<int> firstOf(static_cast<std::size_t>(S), 0);
    for (int s = 1; s < S; ++s)
      firstOf[static_cast<std::size_t>(s)] =
          firstOf[static_cast<std::size_t>(s) - 1] + inst[static_cast<std::size_t>(s) - 1];
    for (int s = 0; s < S; ++s) {
      const int a = cuts[static_cast<std::size_t>(s)], b = cuts[static_cast<std::size_t>(s) + 1];
      const int m = inst[static_cast<std::size_t>(s)], first = firstOf[static_cast<std::size_t>(s)];
      double gain = stageCost(h, c, a, b, m, first) - stageCost(h, c, a, b, m + 1, first);
      if (mixed)
        for (int t = s + 1; t < S; ++t) {
          const int at = cuts[static_cast<std::size_t>(t)], bt = cuts[static_cast<std::size_t>(t) + 1];
          const int mt = inst[static_cast<std::size_t>(t)], ft = firstOf[static_cast<std::size_t>(t)];
          gain += stageCost(h, c, at, bt, mt, ft) - stageCost(h, c, at, bt, mt, ft + 1);
        }
      if (gain > bestGain) {
        bestGain = gain;
        best = s;
      }
    }
    ++inst[static_cast<std::size_t>(best)];
  }
  // Phase 2: greedy merges of adjacent stages, largest positive gain first.
  // Stages form a linked list; a heap entry is stale when either side changed.
  struct St {
    int a, b, m, prev, next, version;
    bool alive;
    int first;  // position of its first instance in the planning order
  };
  std::vector<St> st;
  for (int s = 0, first = 0; s < S; first += inst[static_cast<std::size_t>(s)], ++s)
    st.push_back({cuts[static_cast<std::size_t>(s)], cuts[static_cast<std::size_t>(s) + 1],
                  inst[static_cast<std::size_t>(s)], s - 1, s + 1 < S ? s + 1 : -1, 0, true, first});
  // A merge is weighed against the pair's best split of the same
  // instances, not phase 1's: with a prefill term the one-instance stages
  // of phase 1 sit far past u = 1, their greedy spare instances leave the
  // pair's loads uneven, and pooling them always looked better, so merges
  // ran on to a single stage (issue 25; CascadePlanner test
  // HeuristicKeepsThePipelineWithPrefillLoad).
  const auto bestSplit = [&](const St& x, const St& y) {
    const int M = x.m + y.m;
    double best = stageCost(h, c, x.a, x.b, x.m, x.first) + stageCost(h, c, y.a, y.b, y.m, y.first);
    int k = x.m;
    for (int j = 1; j < M; ++j) {
      if (j == x.m) continue;
      const double v = stageCost(h, c, x.a, x.b, j, x.first) + stageCost(h, c, y.a, y.b, M - j, x.first + j);
      if (v < best) {
        best = v;
        k = j;
      }
    }
    return std::make_pair(best, k);
  };
  const auto gainOf = [&](int l) {
    const St& x = st[static_cast<std::size_t>(l)];
    const St& y = st[static_cast<std::size_t>(x.next)];
    return bestSplit(x, y).first + cutCost(h, c, y.a) - stageCost(h, c, x.a, y.b, x.m + y.m, x.first);
  };
  using Entry = std::tuple<double, int, int, int, int>;  // gain, -left (lowest index first on ties), left, vl, vr
  std::priority_queue<Entry> heap;
  const auto push = [&](int l) {
    if (l < 0 || st[static_cast<std::size_t>(l)].next < 0) return;
    const int r = st[static_cast<std::size_t>(l)].next;
    heap.emplace(gainOf(l), -l, l, st[static_cast<std::size_t>(l)].version, st[static_cast<std::size_t>(r)].version);
  };
  for (int s = 0; s + 1 < S; ++s) push(s);
  while (!heap.empty()) {
    const auto [gain, negl, l, vl, vr] = heap.top();
    heap.pop();
    (void)negl;
    St& x = st[static_cast<std::size_t>(l)];
    if (!x.alive || x.version != vl || x.next < 0 || st[static_cast<std::size_t>(x.next)].version != vr) continue;
    if (gain <= 0) break;
    St& y = st[static_cast<std::size_t>(x.next)];
    x.b = y.b;
    x.m += y.m;
    x.next = y.next;
    y.alive = false;
    ++x.version;
    if (x.next >= 0) st[static_cast<std::size_t>(x.next)].prev = l;
    push(x.prev);
    push(l);
  }
  // Phase 3: adjacent stages take their best split of their instances
  // until no pair improves (each pass lowers the plan cost).
  for (bool moved = true; moved;) {
    moved = false;
    for (int l = 0; l >= 0 && st[static_cast<std::size_t>(l)].next >= 0; l = st[static_cast<std::size_t>(l)].next) {
      St& x = st[static_cast<std::size_t>(l)];
      St& y = st[static_cast<std::size_t>(x.next)];
      const auto [cost, k] = bestSplit(x, y);
      if (k != x.m && cost < stageCost(h, c, x.a, x.b, x.m, x.first) + stageCost(h, c, y.a, y.b, y.m, y.first)) {
        y.m += x.m - k;
        x.m = k;
        y.first = x.first + k;
        moved = true;
      }
    }
  }
  Plan p;
  p.cuts.push_back(0);
  for (int s = 0; s >= 0; s = st[static_cast<std::size_t>(s)].next) {
    p.cuts.push_back(st[static_cast<std::size_t>(s)].b);
    p.instances.push_back(st[static_cast<std::size_t>(s)].m);
  }
  p.cost = planCost(h, c, p);
  return p;
}

Plan planPinned(const LengthHistogram& h, const PlanCosts& c, const std::vector<int>& perStage) {
  const int B = h.buckets();
  const int S = static_cast<int>(perStage.size());
  if (S < 1 || S > B) throw std::invalid_argument("planPinned: needs 1 <= stages <= buckets");
  constexpr double inf = std::numeric_limits<double>::infinity();
  // g[s][k]: best cost of stages [0, s) covering buckets [0, k).
  std::vector<std::vector<double>> g(static_cast<std::size_t>(S) + 1,
                                     std::vector<double>(static_cast<std::size_t>(B) + 1, inf));
  std::vector<std::vector<int>> from(static_cast<std::size_t>(S) + 1,
                                     std::vector<int>(static_cast<std::size_t>(B) + 1, -1));
  g[0][0] = 0;
  for (int s = 1, first = 0; s <= S; first += perStage[static_cast<std::size_t>(s) - 1], ++s)
    for (int k = s; k <= B - (S - s); ++k)
      for (int k0 = s - 1; k0 < k; ++k0) {
        const double prev = g[static_cast<std::size_t>(s) - 1][static_cast<std::size_t>(k0)];
        if (prev == inf) continue;
        const double v = prev + stageCost(h, c, k0, k, perStage[static_cast<std::size_t>(s) - 1], first) +
                         (k0 > 0 ? cutCost(h, c, k0) : 0.0);
        if (v < g[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)]) {
          g[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)] = v;
          from[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)] = k0;
        }
      }
  Plan p;
  p.cuts = {B};
  for (int s = S, k = B; s > 0; --s) {
    k = from[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)];
    p.cuts.push_back(k);
  }
  std::reverse(p.cuts.begin(), p.cuts.end());
  p.instances = perStage;
  p.cost = planCost(h, c, p);
  return p;
}

}  // namespace sl
