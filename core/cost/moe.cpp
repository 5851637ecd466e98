#include "cost/moe.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "cost/embedded_presets.h"
#include "util/csv.h"
#include "util/error.h"
#include "util/rng.h"

namespace sl {

const char* routingKindName(RoutingKind k) {
  switch (k) {
    case RoutingKind::Balanced:
      return "balanced";
    case RoutingKind::Zipf:
      return "zipf";
    case RoutingKind::File:
      return "file";
  }
  return "balanced";
}

const char* placementName(Placement p) {
  return p == Placement::Eplb ? "eplb" : "contiguous";
}

namespace {

bool isNumber(std::string_view s, double& out) {
  s = trimView(s);
  if (s.empty()) return false;
  const std::string t(s);
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(out);
}

}  // namespace

std::vector<double> readRoutingHistogram(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open routing histogram");
  CsvReader csv(in, path);
  std::vector<std::string> f;
  std::vector<double> loads;
  bool first = true;
  while (csv.next(f)) {
    if (!f.empty() && !trimView(f[0]).empty() && trimView(f[0])[0] == '#') continue;
    double a = 0, b = 0;
    const bool n0 = !f.empty() && isNumber(f[0], a);
    if (first && !n0) {  // a header line of words
      first = false;
      continue;
    }
    first = false;
    if (f.size() == 1 && n0) {
      b = a;
    } else if (f.size() == 2 && n0 && isNumber(f[1], b)) {
      if (a != static_cast<double>(loads.size()))
        throw InputError(csv.where() + ": expert id " + std::string(trimView(f[0])) + " out of order (expected " +
                         std::to_string(loads.size()) + ")");
    } else {
      throw InputError(csv.where() + ": expected a load, or \"expert,load\"");
    }
    if (b < 0) throw InputError(csv.where() + ": load must be >= 0 (got " + std::string(trimView(f.back())) + ")");
    loads.push_back(b);
  }
  if (loads.empty()) throw InputError(path + ": no expert loads");
  return loads;
}

std::vector<double> expertSelection(const RoutingModel& r, int experts, int k, std::string_view where) {
  const auto E = static_cast<std::size_t>(experts);
  std::vector<double> w(E, 1.0);
  if (r.kind == RoutingKind::Zipf) {
    // Popularity rank i → expert perm[i]: a fixed shuffle, the same for every run.
    std::vector<int> perm(E);
    std::iota(perm.begin(), perm.end(), 0);
    Rng rng = Rng::forStream(0x4d6f45, "moe-zipf-placement");
    for (std::size_t i = E; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
    for (std::size_t i = 0; i < E; ++i) w[perm[i]] = std::pow(static_cast<double>(i + 1), -r.skew);
  } else if (r.kind == RoutingKind::File) {
    if (r.weights.size() != E)
      throw InputError(std::string(where) + ": " + r.path + " has " + std::to_string(r.weights.size()) +
                       " expert loads; the model has " + std::to_string(experts) + " routed experts per layer");
    w = r.weights;
  }
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  if (!(total > 0)) throw InputError(std::string(where) + ": " + r.path + ": every expert load is 0");
  // q_e = k·w_e/Σw, capped at 1 (a token picks k distinct experts): water-fill
  // the excess of capped experts over the others in proportion to their weight.
  std::vector<double> q(E, 0.0);
  std::vector<bool> capped(E, false);
  double budget = k;
  for (int round = 0; round <= experts; ++round) {
    double free = 0;
    for (std::size_t e = 0; e < E; ++e)
      if (!capped[e]) free += w[e];
    bool changed = false;
    for (std::size_t e = 0; e < E; ++e) {
      if (capped[e]) continue;
      q[e] = free > 0 ? budget * w[e] / free : 0.0;
      if (q[e] > 1.0) {
        capped[e] = true;
        q[e] = 1.0;
        budget -= 1.0;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return q;
}

ExpertPlacement::ExpertPlacement(const std::vector<double>& q, int ep, int redundant, Placement p) : q_(q) {
  const int E = static_cast<int>(q.size());
  replicas_.assign(E, 1);
  rankQ_.assign(ep, {});
  rankE_.assign(ep, {});
  if (p == Placement::Contiguous || ep < 1) {
    // Redundant replicas only with EPLB (checked by the caller).
    const int per = E / std::max(1, ep);
    for (int e = 0; e < E; ++e) {
      const int r = std::min(ep - 1, e / std::max(1, per));
      rankQ_[r].push_back(q[e]);
      rankE_[r].push_back(e);
    }
  } else {
    for (int i = 0; i < redundant; ++i) {  // one more replica to the heaviest per replica
      int best = 0;
      for (int e = 1; e < E; ++e)
        if (q[e] / replicas_[e] > q[best] / replicas_[best]) best = e;
      ++replicas_[best];
    }
    struct Rep {
      double q;
      int e;
    };
    std::vector<Rep> reps;
    for (int e = 0; e < E; ++e)
      for (int j = 0; j < replicas_[e]; ++j) reps.push_back({q[e] / replicas_[e], e});
    std::stable_sort(reps.begin(), reps.end(), [](const Rep& a, const Rep& b) { return a.q > b.q; });
    const std::size_t slots = reps.size() / static_cast<std::size_t>(ep);
    std::vector<double> load(ep, 0.0);
    for (const Rep& rep : reps) {
      int best = -1;
      for (int pass = 0; pass < 2 && best < 0; ++pass)  // pass 0: not beside its own replica
        for (int r = 0; r < ep; ++r) {
          if (rankQ_[r].size() >= slots) continue;
          if (pass == 0 && std::find(rankE_[r].begin(), rankE_[r].end(), rep.e) != rankE_[r].end()) continue;
          if (best < 0 || load[r] < load[best]) best = r;
        }
      rankQ_[best].push_back(rep.q);
      rankE_[best].push_back(rep.e);
      load[best] += rep.q;
    }
  }
  share_.assign(ep, 0.0);
  var_.assign(ep, 0.0);
  hit_.assign(ep, 0.0);
  for (int r = 0; r < ep; ++r) {
    double miss = 1.0;
    for (double x : rankQ_[r]) {
      share_[r] += x;
      var_[r] += x * (1.0 - x);
      miss *= 1.0 - x;
    }
    hit_[r] = 1.0 - miss;
  }
  z_ = ep > 1 ? std::sqrt(2.0 * std::log(static_cast<double>(ep))) : 0.0;
}

double ExpertPlacement::rankTouched(int r, double N) const {
  double t = 0;
  for (double x : rankQ_[r]) t += 1.0 - std::pow(1.0 - x, N);
  return t;
}

double ExpertPlacement::imbalance(double N) const {
  if (ranks() <= 1 || N <= 0) return 1.0;
  double total = 0, worst = 0;
  for (int r = 0; r < ranks(); ++r) {
    total += share_[r] * N;
    worst = std::max(worst, share_[r] * N + z_ * std::sqrt(var_[r] * N));
  }
  return total > 0 ? worst / (total / ranks()) : 1.0;
}

namespace {

// e_0 … e_kmax of x (elementary symmetric polynomials).
std::vector<double> elementarySymmetric(const std::vector<double>& x, int kmax) {
  std::vector<double> e(static_cast<std::size_t>(kmax) + 1, 0.0);
  e[0] = 1.0;
  for (double v : x)
    for (int d = kmax; d >= 1; --d) e[d] += e[d - 1] * v;
  return e;
}

double binomial(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  double c = 1.0;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

}  // namespace

std::vector<double> ExpertPlacement::nodeHitChances(int gpn, int groups, int topkGroups) const {
  const int E = experts(), ep = ranks();
  gpn = std::max(1, gpn);
  const int nodes = (ep + gpn - 1) / gpn;
  std::vector<double> hits(static_cast<std::size_t>(nodes), 0.0);
  if (E == 0 || ep == 0) return hits;
  double ksum = 0;
  for (double x : q_) ksum += x;
  const int k = static_cast<int>(std::lround(ksum));
  bool balanced = true;
  for (double x : q_) balanced = balanced && std::abs(x - q_[0]) <= 1e-12 * std::max(1.0, q_[0]);
  int G = groups, M = topkGroups;
  if (G <= 0 || M <= 0 || M >= G || E % G != 0) G = M = 1;
  const int g = E / G;
  // a[e] on node j: the share of e's replicas there.
  std::vector<std::vector<double>> onNode(static_cast<std::size_t>(nodes), std::vector<double>(E, 0.0));
  for (int r = 0; r < ep; ++r)
    for (int e : rankE_[r]) onNode[r / gpn][e] += 1.0 / replicas_[e];
  for (int j = 0; j < nodes; ++j) {
    const std::vector<double>& a = onNode[j];
    double miss = 0;
    if (balanced) {
      // DP over groups: dp[m][d] = Σ over m-subsets of the groups so far of e_d(x over their union).
      std::vector<std::vector<double>> dp(M + 1, std::vector<double>(k + 1, 0.0));
      dp[0][0] = 1.0;
      for (int gi = 0; gi < G; ++gi) {
        std::vector<double> x(a.begin() + gi * g, a.begin() + (gi + 1) * g);
        for (double& v : x) v = 1.0 - v;
        const std::vector<double> eg = elementarySymmetric(x, k);
        for (int m = std::min(M, gi + 1); m >= 1; --m)
          for (int d = k; d >= 0; --d)
            for (int d1 = 0; d1 <= d; ++d1) dp[m][d] += dp[m - 1][d - d1] * eg[d1];
      }
      miss = dp[M][k] / (binomial(G, M) * binomial(M * g, k));
    } else {
      std::vector<double> pi(G, 1.0);
      const double scale = static_cast<double>(G) / M;
      for (int e = 0; e < E; ++e) pi[e / g] *= 1.0 - std::min(1.0, q_[e] * scale) * a[e];
      miss = elementarySymmetric(pi, M)[M] / binomial(G, M);
    }
    hits[j] = std::clamp(1.0 - miss, 0.0, 1.0);
  }
  return hits;
}

double ExpertPlacement::expectedNodes(int gpn, int groups, int topkGroups) const {
  const std::vector<double> h = nodeHitChances(gpn, groups, topkGroups);
  return std::accumulate(h.begin(), h.end(), 0.0);
}

double ExpertPlacement::expectedRemoteNodes(int gpn, int groups, int topkGroups) const {
  const std::vector<double> h = nodeHitChances(gpn, groups, topkGroups);
  if (h.size() <= 1) return 0.0;
  return (1.0 - 1.0 / static_cast<double>(h.size())) * std::accumulate(h.begin(), h.end(), 0.0);
}

double twoBatchOverlapSeconds(double computeHalf, double commHalf, int moeLayers) {
  if (moeLayers <= 0) return 2.0 * (computeHalf + commHalf);
  return 2.0 * std::max(computeHalf, commHalf) + std::min(computeHalf, commHalf) / moeLayers;
}

double tboComputeSlowdown(int sms, bool prefill) {
  if (!prefill || sms <= kDeepEpNormalSms) return 1.0;
  return static_cast<double>(sms) / (sms - kDeepEpNormalSms);
}

// ------------------------------------------------------------ AllToAllModel

namespace {

// t = a·x + L with x the time at the full link; a = 1/η. Least squares on
// relative error: minimise Σ ((a·x + L)/t − 1)².
AllToAllFit fitDomain(const std::string& domain, double linkGbps, const std::vector<std::pair<double, double>>& xt) {
  double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
  for (const auto& [x, t] : xt) {
    const double u = x / t, v = 1.0 / t;
    s11 += u * u;
    s12 += u * v;
    s22 += v * v;
    b1 += u;
    b2 += v;
  }
  double a = 0, L = 0;
  const double det = s11 * s22 - s12 * s12;
  if (det > 0) {
    a = (b1 * s22 - b2 * s12) / det;
    L = (s11 * b2 - s12 * b1) / det;
  }
  if (!(L >= 0)) {  // no negative latency: refit the slope alone
    L = 0;
    a = b1 / s11;
  }
  AllToAllFit f;
  f.domain = domain;
  f.link_gbps = linkGbps;
  f.eta = 1.0 / a;
  f.latency_us = L * 1e6;
  f.points = static_cast<int>(xt.size());
  std::vector<double> err;
  for (const auto& [x, t] : xt) err.push_back(std::abs((a * x + L) / t - 1.0));
  std::sort(err.begin(), err.end());
  if (!err.empty()) {
    f.median_abs_err = err.size() % 2 ? err[err.size() / 2] : 0.5 * (err[err.size() / 2 - 1] + err[err.size() / 2]);
    f.max_abs_err = err.back();
  }
  return f;
}

}  // namespace

AllToAllModel::AllToAllModel() {
  for (const auto& file : costdetail::embeddedAllToAllFiles()) {
    const nlohmann::json j = nlohmann::json::parse(file.text);
    source_ = j.at("source").get<std::string>();
    const double hidden = j.at("hidden").get<double>(), topk = j.at("topk").get<double>();
    const double gpn = j.at("gpus_per_node").get<double>();
    const double nvl = j.at("links_gbps").at("nvlink").get<double>(), nic = j.at("links_gbps").at("rdma").get<double>();
    std::vector<std::pair<double, double>> intra, inter;
    for (const auto& row : j.at("rows")) {
      const std::string op = row.at(1).get<std::string>();
      const double ep = row.at(2).get<double>(), tokens = row.at(3).get<double>();
      const double t = row.at(4).get<double>() * 1e-6;
      const double bytes = tokens * topk * hidden * j.at(op + "_bytes").get<double>();
      if (ep <= gpn)
        intra.emplace_back(bytes * (ep - 1) / ep / (nvl * 1e9), t);
      else
        inter.emplace_back(bytes * (ep - gpn) / ep / (nic * 1e9), t);
    }
    fits_[0] = fitDomain("nvlink", nvl, intra);
    fits_[1] = fitDomain("rdma", nic, inter);
  }
}

const AllToAllModel& AllToAllModel::builtin() {
  static const AllToAllModel m;
  return m;
}

double AllToAllModel::seconds(double bytes, int ep, int gpn, double nvlinkBps, double nicBps) const {
  if (ep <= 1 || bytes <= 0) return 0.0;
  const double e = ep;
  const int local = std::min(ep, std::max(1, gpn));
  const double nvlTime = nvlinkBps > 0 ? bytes * (local - 1) / e / (nvlinkBps * fits_[0].eta) : 0.0;
  if (ep <= gpn) return nvlTime + fits_[0].latency_us * 1e-6;
  const double nicTime = bytes * (e - gpn) / e / (nicBps * fits_[1].eta);
  return std::max(nvlTime, nicTime) + fits_[1].latency_us * 1e-6;
}

double AllToAllModel::dedupSeconds(double tokenBytes, int k, double remoteNodes, int ep, int gpn, double nvlinkBps,
                                   double nicBps) const {
  if (ep <= gpn) return seconds(tokenBytes * k, ep, gpn, nvlinkBps, nicBps);
  if (ep <= 1 || tokenBytes <= 0) return 0.0;
  const double g = std::max(1, gpn);
  const double nvlTime = nvlinkBps > 0 ? tokenBytes * k * (g - 1) / g / (nvlinkBps * fits_[0].eta) : 0.0;
  const double nicTime = tokenBytes * remoteNodes / (nicBps * fits_[1].eta);
  return std::max(nvlTime, nicTime) + fits_[1].latency_us * 1e-6;
}

}  // namespace sl
