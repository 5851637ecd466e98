#include "policy/cascade/cascade_global.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cost/cost_model.h"
#include "engine/simulator.h"
#include "engine/snapshot.h"

namespace sl {

namespace {
constexpr std::int32_t kNoBound = std::numeric_limits<std::int32_t>::max();

std::string shortTokens(double v) {
  if (v >= kNoBound) return "∞";
  const auto x = static_cast<std::int64_t>(v);
  if (x >= 1024 && x % 1024 == 0) return std::to_string(x / 1024) + "k";
  if (x >= 1000) {  // e.g. 1.5k
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fk", static_cast<double>(x) / 1000.0);
    return buf;
  }
  return std::to_string(x);
}

}  // namespace

bool CascadeGlobal::movable(const Request& r) {
  return !r.synthetic && r.instance >= 0 && r.state == ReqState::Running && r.prefillDone() && r.migration < 0;
}

CascadeGlobal::CascadeGlobal(CascadeConfig cfg) : cfg_(std::move(cfg)) {}

std::string CascadeGlobal::stageLabel(int s) const {
  // Appended piecewise: GCC 12's -Wrestrict misfires on chained operator+.
  // Only the range, in tokens ("0–5.3k", "5.3k–∞"): the badge of a narrow
  // card has room for little more, and the ranges give the stages' order.
  std::string label = shortTokens(lower(s));
  label.append("–");
  label.append(shortTokens(upper(s)));
  return label;
}

void CascadeGlobal::setBounds(std::size_t stages) {
  bounds_.assign(stages, static_cast<double>(kNoBound));
  uppers_.assign(stages, kNoBound);
}

void CascadeGlobal::setBound(int s, double b) {
  bounds_[static_cast<std::size_t>(s)] = b;
  uppers_[static_cast<std::size_t>(s)] =
      b >= static_cast<double>(kNoBound) ? kNoBound : static_cast<std::int32_t>(std::lround(b));
}

void CascadeGlobal::attach(Simulator& sim) {
  GlobalPolicy::attach(sim);
  const auto n = static_cast<std::size_t>(sim.numInstances());
  stageOf_.assign(n, 0);
  queues_.assign(n, {});
  inboundTokens_.assign(n, 0);
  outgoing_.assign(n, {});
  starvingId_.assign(n, -1);
  starvedAt_.assign(n, 0);
  mayBeStale_.assign(n, 1);
  abortsSeen_.assign(n, 0);
  queuedAt_.clear();
  rounds_.clear();
  freeRounds_.clear();
  rebalancing_.assign(n, 0);
  const double bw = sim.config().nvlinkBytesPerSec > 0 ? sim.config().nvlinkBytesPerSec : sim.config().nicBytesPerSec;
  transferBps_.assign(n, bw);
  asks_.assign(n, 0);
  bids_.assign(n, 0);
  wins_.assign(n, 0);
  cutSecondsPerToken_ = sim.config().kvBytesPerToken / bw;

  profilePools(sim);
  // Stage roles: the pinned stages take their pools' instances, in stage
  // order; otherwise the order is the instances' (the planner may reorder
  // mixed pools).
  order_.resize(n);
  for (std::size_t i = 0; i < n; ++i) order_[i] = static_cast<int>(i);
  pinned_.clear();
  if (!cfg_.poolStage.empty()) {
    const auto stageOfInst = [&](int i) { return cfg_.poolStage[static_cast<std::size_t>(sim.poolOf(i))]; };
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return stageOfInst(a) < stageOfInst(b); });
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = static_cast<std::size_t>(stageOfInst(static_cast<int>(i)) - 1);
      if (pinned_.size() <= s) pinned_.resize(s + 1, 0);
      ++pinned_[s];
    }
  }

  members_.assign(1, {});
  for (int i = 0; i < sim.numInstances(); ++i) members_[0].push_back(i);
  setBounds(1);
  planNow(true);

  if (cfg_.layout == CascadeLayout::Planned && cfg_.replanIntervalS > 0)
    tReplan_ = sim.startTimer("cascade-replan", secondsToNs(cfg_.replanIntervalS));
  if (cfg_.refineIntervalS > 0 && cfg_.layout != CascadeLayout::Single)
    tRefine_ = sim.startTimer("cascade-refine", secondsToNs(cfg_.refineIntervalS));
  if (cfg_.intraStage) tRebalance_ = sim.startTimer("cascade-rebalance", secondsToNs(cfg_.rebalanceIntervalS));
  tPump_ = sim.startTimer("cascade-pump", secondsToNs(cfg_.pumpIntervalS));
}

void CascadeGlobal::profilePools(const Simulator& sim) {
  // The latency model: profiling runs of the cost model, least squares; one
  // per pool (issue 49: each pool's GPU, TP and KV capacity), the first's
  // is qoe() and the report's qoe_model/*.
  std::int64_t maxLen = 8192;
  for (const auto& [in, out] : cfg_.prior) maxLen = std::max(maxLen, in + out);
  profiles_.clear();
  profileOf_.assign(static_cast<std::size_t>(sim.numInstances()), 0);
  unfitted_ = false;
  for (int i = 0; i < sim.numInstances(); ++i) {
    const int p = sim.poolOf(i);
    profileOf_[static_cast<std::size_t>(i)] = p;
    if (static_cast<int>(profiles_.size()) > p) continue;
    const InstanceConfig& ic = sim.instance(i).config();
    const CostModel& cost = sim.instance(i).cost();
    PoolProfile pr;
    pr.kvTokens = ic.gpuBlocks * ic.blockSize;
    pr.maxBatch = ic.maxNumSeqs;
    QoeProfileOptions po;
    po.minLength = std::max<std::int64_t>(16, cfg_.bucketBase / 2);
    po.maxLength = maxLen;
    po.kvTokens = pr.kvTokens;
    po.maxBatch = ic.maxNumSeqs;
    po.outputTokens = cfg_.profileOutput;
    std::vector<QoeSample> samples = profileQoe(cost, po);
    if (samples.size() < 5) {  // a small KV memory: shorter buckets and outputs
      po.minLength = 16;
      po.outputTokens = 16;
      samples = profileQoe(cost, po);
    }
    if (samples.size() >= 5) {
      pr.q = fitQoe(samples);
      pr.err = meanRelativeError(pr.q, samples);
    } else {
      // Memory too small to profile even 16-token batches: no model (all
      // D = 0), so the planner keeps one stage and refinement splits at the
      // shortest sequence; reported as qoe_model/unfitted.
      unfitted_ = true;
    }
    profiles_.push_back(pr);
  }
  qoe_ = profiles_.front().q;
  qoeErr_ = profiles_.front().err;
  mixed_ = false;
  for (const PoolProfile& pr : profiles_)
    if (pr.q.d != qoe_.d || pr.kvTokens != profiles_.front().kvTokens || pr.maxBatch != profiles_.front().maxBatch)
      mixed_ = true;
}

std::vector<QoeModel> CascadeGlobal::modelsIn(const std::vector<int>& order) const {
  std::vector<QoeModel> m;
  m.reserve(order.size());
  for (int i : order) m.push_back(qoeOf(i));
  return m;
}

void CascadeGlobal::defaultPinnedLayout() {
  std::vector<std::int32_t> ups;
  std::int64_t u = std::max<std::int64_t>(1, cfg_.bucketBase);
  for (std::size_t s = 1; s < pinned_.size(); ++s, u *= 2)
    ups.push_back(static_cast<std::int32_t>(std::min<std::int64_t>(u, kNoBound - 1)));
  setLayout(pinned_, ups);
}

std::vector<std::pair<std::int64_t, std::int64_t>> CascadeGlobal::lengthSample() const {
  // Issue 25: a sample of *finished* requests is biased to short ones under
  // overload (long ones have not finished yet), which collapsed the layout.
  // The sample is the last arrivals instead, each counted once: finished
  // ones with their output length; those still running with what they have
  // generated, raised to the mean output of the finished requests that got
  // at least as far (their expected length given they are this long; the
  // count itself if none did); those not started with the finished mean.
  std::vector<std::int64_t> done;  // finished outputs, ascending
  for (const ArrivalSample& a : arrivals_)
    if (a.out >= 0) done.push_back(a.out);
  std::sort(done.begin(), done.end());
  std::vector<double> suffix(done.size() + 1, 0.0);  // suffix sums of done
  for (std::size_t i = done.size(); i-- > 0;) suffix[i] = suffix[i + 1] + static_cast<double>(done[i]);
  const auto expectedGiven = [&](std::int64_t g) -> std::int64_t {
    const auto it = std::lower_bound(done.begin(), done.end(), std::max<std::int64_t>(g, 1));
    const auto k = static_cast<std::size_t>(it - done.begin());
    if (k == done.size()) return std::max<std::int64_t>(g, 1);
    return std::max<std::int64_t>(g, std::llround(suffix[k] / static_cast<double>(done.size() - k)));
  };
  std::vector<std::int64_t> generated(arrivals_.size(), -1);
  if (!arrivals_.empty()) {
    const std::int64_t first = arrivals_.front().id;
    sim_->forEachActive([&](const Request& r) {
      if (r.synthetic || r.id < first) return;
      if (const std::ptrdiff_t i = arrivalIndex(r.id); i >= 0) generated[static_cast<std::size_t>(i)] = r.generated;
    });
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  out.reserve(arrivals_.size());
  for (std::size_t i = 0; i < arrivals_.size(); ++i) {
    const ArrivalSample& a = arrivals_[i];
    if (a.out >= 0) out.emplace_back(a.in, a.out);
    else if (generated[i] >= 0) out.emplace_back(a.in, expectedGiven(generated[i]));
    else if (!done.empty()) out.emplace_back(a.in, expectedGiven(0));
  }
  return out;
}

void CascadeGlobal::planNow(bool startup) {
  const int E = sim_->numInstances();
  const auto samples = startup ? cfg_.prior : lengthSample();
  double rate = cfg_.priorRate;
  if (!startup) {
    const double span = nsToSeconds(sim_->now() - lastReplan_);
    rate = span > 0 ? static_cast<double>(arrivalsSinceReplan_) / span : 0.0;
    lastReplan_ = sim_->now();
    arrivalsSinceReplan_ = 0;
  }
  const bool pinned = !pinned_.empty() && cfg_.layout == CascadeLayout::Planned;
  if (cfg_.layout == CascadeLayout::Single || E < 2 || samples.size() < 20 || rate <= 0 || unfitted_) {
    if (startup) {
      if (pinned)
        defaultPinnedLayout();
      else
        setLayout({E}, {});
    }
    return;
  }
  std::int64_t maxLen = 1;
  double meanOut = 0;
  for (const auto& [in, out] : samples) {
    maxLen = std::max(maxLen, in + out);
    meanOut += static_cast<double>(std::max<std::int64_t>(1, out));
  }
  meanOut /= static_cast<double>(samples.size());
  edges_ = exponentialEdges(cfg_.bucketBase, maxLen);
  // Pinned stages need a bucket each: finer buckets when there are more stages.
  const auto S = static_cast<std::int64_t>(pinned_.size());
  for (std::int64_t base = cfg_.bucketBase; pinned && static_cast<std::int64_t>(edges_.size()) - 1 < S && base > 1;)
    edges_ = exponentialEdges(base /= 2, maxLen);
  if (pinned && static_cast<std::int64_t>(edges_.size()) - 1 < S) {
    if (startup) defaultPinnedLayout();
    return;
  }
  // Little's law: population = rate · mean output · time per token, where the
  // time per token is the model's Q at that population spread over E instances.
  const LengthHistogram unit = buildHistogram(samples, edges_, 1.0);
  QoeFeatures perSeq;
  for (const QoeFeatures& f : unit.bucket) {
    perSeq.n += f.n;
    perSeq.sumI += f.sumI;
    perSeq.sumI2 += f.sumI2;
    perSeq.sumL += f.sumL;
  }
  const InstanceConfig& ic = sim_->instance(0).config();
  const double meanLen = perSeq.n > 0 ? perSeq.sumL / perSeq.n : 1.0;
  const double capPerInstance = std::min<double>(ic.maxNumSeqs, static_cast<double>(ic.gpuBlocks * ic.blockSize) / std::max(1.0, meanLen));
  // Mixed pools: the capacity is the instances' sum and the time per token
  // the mean model's (the population spread evenly over them).
  double capacity = capPerInstance * E;
  QoeModel qMean = qoe_;
  if (mixed_) {
    capacity = 0;
    qMean = QoeModel{};
    for (int i = 0; i < E; ++i) {
      const PoolProfile& pr = profiles_[static_cast<std::size_t>(profileOf_[static_cast<std::size_t>(i)])];
      capacity += std::min<double>(pr.maxBatch, static_cast<double>(pr.kvTokens) / std::max(1.0, meanLen));
      for (std::size_t k = 0; k < 5; ++k) qMean.d[k] += pr.q.d[k] / E;
    }
  }
  double t = std::max(1e-4, qMean.predict(perSeq));
  double pop = 0;
  for (int it = 0; it < 20; ++it) {
    pop = std::min(rate * meanOut * t, capacity);
    t = std::max(1e-4, qMean.predict(perSeq.scaled(pop / E)));
  }
  pop = std::max(pop, static_cast<double>(E));
  if (cfg_.layout == CascadeLayout::Chain) {
    // One instance per stage, boundaries at equal-population quantiles of the
    // sequence lengths (finer than the exponential buckets allow).
    std::vector<std::pair<double, double>> w;  // (length, weight)
    for (const auto& [in, out0] : samples) {
      const double out = static_cast<double>(std::max<std::int64_t>(1, out0));
      for (int k = 0; k < 8; ++k) w.emplace_back(static_cast<double>(in) + (k + 0.5) * out / 8.0, out / 8.0);
    }
    std::sort(w.begin(), w.end());
    double total = 0;
    for (const auto& x : w) total += x.second;
    std::vector<std::int32_t> ups;
    double acc = 0;
    std::size_t j = 0;
    for (int s = 1; s < E; ++s) {
      const double target = total * s / E;
      while (j < w.size() && acc + w[j].second < target) acc += w[j++].second;
      const auto u = static_cast<std::int32_t>(std::lround(j < w.size() ? w[j].first : w.back().first));
      if (ups.empty() ? u > 0 : u > ups.back()) ups.push_back(u);
    }
    std::vector<int> inst(ups.size() + 1, 1);
    inst.back() += E - static_cast<int>(inst.size());
    plan_ = Plan{};
    plan_.instances = inst;
    setLayout(inst, ups);
    ++replans_;
    return;
  }
  LengthHistogram h = buildHistogram(samples, edges_, pop);
  // Prefill arrivals (knob prefill_term): each prompt's prefill time (the
  // cost model's, on top of one decode sequence sharing the iteration) at
  // the arrival rate. Off by default: see docs/policies/cascade.md.
  if (cfg_.prefillTerm) {
    const CostModel& cost = sim_->cost();
    BatchShape oneDecode;
    addDecodeSeq(oneDecode, meanLen);
    const double base = cost.iterationSeconds(oneDecode);
    addPrefillLoad(h, samples, rate, [&](std::int64_t in) {
      BatchShape b = oneDecode;
      addPrefillChunk(b, static_cast<double>(in));
      return std::max(0.0, cost.iterationSeconds(b) - base);
    });
  }
  PlanCosts pc{qoe_, cutSecondsPerToken_, {}};
  const auto solve = [&](const PlanCosts& c) {
    return cfg_.exactPlanner ? planExact(h, c, E) : planHeuristic(h, c, E);
  };
  if (pinned) {
    // Stage roles: the stages keep their pools' instances; only the cuts move.
    setInstanceModels(pc, modelsIn(order_));
    plan_ = planPinned(h, pc, pinned_);
  } else if (!mixed_) {
    plan_ = solve(pc);
  } else {
    // Mixed pools, no roles: stages are contiguous runs of an order of the
    // pools (each pool's instances together; pools of equal profiles count
    // as one); the planner tries every order of up to 5 such pools (the pool
    // order and its reverse beyond) and keeps the cheapest plan (the first
    // on ties).
    std::vector<int> classOf(profiles_.size()), pools;
    for (std::size_t p = 0; p < profiles_.size(); ++p) {
      classOf[p] = static_cast<int>(p);
      for (std::size_t r = 0; r < p; ++r)
        if (profiles_[r].q.d == profiles_[p].q.d && profiles_[r].kvTokens == profiles_[p].kvTokens &&
            profiles_[r].maxBatch == profiles_[p].maxBatch) {
          classOf[p] = classOf[r];
          break;
        }
      if (classOf[p] == static_cast<int>(p)) pools.push_back(static_cast<int>(p));
    }
    std::vector<std::vector<int>> orders;
    if (pools.size() <= 5) {
      do orders.push_back(pools);
      while (std::next_permutation(pools.begin(), pools.end()));
    } else {
      orders.push_back(pools);
      orders.emplace_back(pools.rbegin(), pools.rend());
    }
    bool first = true;
    for (const std::vector<int>& po : orders) {
      std::vector<int> order;
      for (int p : po)
        for (int i = 0; i < E; ++i)
          if (classOf[static_cast<std::size_t>(profileOf_[static_cast<std::size_t>(i)])] == p) order.push_back(i);
      PlanCosts c = pc;
      setInstanceModels(c, modelsIn(order));
      Plan cand = solve(c);
      if (first || cand.cost < plan_.cost) {
        plan_ = std::move(cand);
        order_ = std::move(order);
        pc = std::move(c);
        first = false;
      }
    }
  }
  planCosts_ = pc;
  applyPlan(plan_, h);
  ++replans_;
}

void CascadeGlobal::applyPlan(const Plan& p, const LengthHistogram& h) {
  std::vector<std::int32_t> ups;
  for (int s = 1; s < p.stages(); ++s)
    ups.push_back(static_cast<std::int32_t>(h.edges[static_cast<std::size_t>(p.cuts[static_cast<std::size_t>(s)])]));
  setLayout(p.instances, ups);
}

void CascadeGlobal::setLayout(const std::vector<int>& perStage, const std::vector<std::int32_t>& uppers) {
  const int S = static_cast<int>(perStage.size());
  members_.assign(static_cast<std::size_t>(S), {});
  setBounds(static_cast<std::size_t>(S));
  int i = 0;
  for (int s = 0; s < S; ++s) {
    if (s + 1 < S) setBound(s, uppers[static_cast<std::size_t>(s)]);
    for (int k = 0; k < perStage[static_cast<std::size_t>(s)] && i < sim_->numInstances(); ++k, ++i) {
      const int inst = order_[static_cast<std::size_t>(i)];
      members_[static_cast<std::size_t>(s)].push_back(inst);
      stageOf_[static_cast<std::size_t>(inst)] = s;
    }
    std::sort(members_[static_cast<std::size_t>(s)].begin(), members_[static_cast<std::size_t>(s)].end());
  }
  for (int s = 0; s < S; ++s) {
    boundaryLog_.push_back({sim_->now(), s, upper(s)});
    const std::string label = stageLabel(s);
    for (int m : members_[static_cast<std::size_t>(s)]) sim_->setPoolLabel(m, label);
  }
  const Simulator::WatchBatch batch(*sim_);
  sim_->forEachActive([&](const Request& r) {
    if (!r.synthetic && r.instance >= 0) armWatch(const_cast<Request&>(r));
  });
}

int CascadeGlobal::stageForLength(std::int64_t len) const {
  for (int s = 0; s + 1 < stages(); ++s)
    if (len < upper(s)) return s;
  return stages() - 1;
}

void CascadeGlobal::armWatch(Request& r) {
  sim_->watchLength(r, watchThreshold(r.instance >= 0 ? stageOf(r.instance) : stageForLength(r.input)));
}

double CascadeGlobal::demand(int i) const {
  return static_cast<double>(sim_->instance(i).assignedTokens() + inboundTokens_[static_cast<std::size_t>(i)]);
}

void CascadeGlobal::onArrival(Request& r) {
  ++arrivalsSinceReplan_;
  if (!r.synthetic) {
    arrivals_.push_back({r.id, r.input, -1});
    if (arrivals_.size() > kLengthSample) arrivals_.pop_front();
  }
  sim_->watchLength(r, watchThreshold(stageForLength(r.input)));
}

int CascadeGlobal::route(const Request& r) {
  const auto& m = members(stageForLength(r.input));
  int best = m.front();
  for (int i : m)
    if (demand(i) < demand(best)) best = i;
  return best;
}

void CascadeGlobal::onLengthReached(Request& r) {
  if (r.synthetic || r.instance < 0) return;
  const int s = stageOf(r.instance);
  const std::int64_t len = static_cast<std::int64_t>(r.input) + r.generated;
  if (s + 1 >= stages()) return;
  if (len < upper(s)) {  // the boundary moved up since the watch was set
    armWatch(r);
    return;
  }
  if (asked_.count(r.id)) return;
  ask(r, members(std::max(s + 1, stageForLength(len))), true);
}

void CascadeGlobal::onFinished(const Request& r) {
  markStale(r.id);
  asked_.erase(r.id);
  if (r.synthetic || arrivals_.empty()) return;
  if (const std::ptrdiff_t i = arrivalIndex(r.id); i >= 0) arrivals_[static_cast<std::size_t>(i)].out = r.outputLen();
}

std::ptrdiff_t CascadeGlobal::arrivalIndex(std::int64_t id) const {
  if (arrivals_.empty() || id < arrivals_.front().id) return -1;
  // Arrival ids are usually consecutive: position id − first, checked, else a search.
  const auto guess = static_cast<std::size_t>(id - arrivals_.front().id);
  if (guess < arrivals_.size() && arrivals_[guess].id == id) return static_cast<std::ptrdiff_t>(guess);
  const auto it = std::lower_bound(arrivals_.begin(), arrivals_.end(), id,
                                   [](const ArrivalSample& a, std::int64_t x) { return a.id < x; });
  return it != arrivals_.end() && it->id == id ? it - arrivals_.begin() : -1;
}

void CascadeGlobal::onTimer(int timer) {
  if (timer == tPump_) pumpAll();
  else if (timer == tRefine_) refineNow();
  else if (timer == tRebalance_) rebalanceNow();
  else if (timer == tReplan_) planNow(false);
}

void CascadeGlobal::rebalanceNow() {
  // The overloaded instances, in stage and member order. Their picks are
  // independent (an ask marks only its sender and the sender's request), so
  // one scan of the active requests finds every pick.
  std::vector<int> senders;
  for (int s = 0; s < stages(); ++s) {
    const auto& m = members(s);
    if (m.size() < 2) continue;
    double mean = 0;
    for (int i : m) mean += demand(i);
    mean /= static_cast<double>(m.size());
    if (mean <= 0) continue;
    for (int i : m)
      if (!rebalancing_[static_cast<std::size_t>(i)] && demand(i) >= (1 + cfg_.rebalanceThreshold) * mean)
        senders.push_back(i);
  }
  if (senders.empty()) return;
  std::vector<char> overloaded(static_cast<std::size_t>(sim_->numInstances()), 0);
  for (int i : senders) overloaded[static_cast<std::size_t>(i)] = 1;
  // The longest movable sequence not already on its way: relieves the most demand.
  std::vector<const Request*> pick(overloaded.size(), nullptr);
  sim_->forEachActive([&](const Request& r) {
    if (r.instance < 0 || !overloaded[static_cast<std::size_t>(r.instance)] || !movable(r) || asked_.count(r.id)) return;
    const Request*& p = pick[static_cast<std::size_t>(r.instance)];
    if (!p || r.kvTokens > p->kvTokens || (r.kvTokens == p->kvTokens && r.id < p->id)) p = &r;
  });
  for (int i : senders)
    if (const Request* p = pick[static_cast<std::size_t>(i)]) ask(const_cast<Request&>(*p), members(stageOf(i)), false);
}

bool CascadeGlobal::setKnob(const std::string& name, double value) {
  if (name == "refine_interval_s") {
    cfg_.refineIntervalS = value;
    if (tRefine_ >= 0 && value > 0) sim_->setTimerPeriod(tRefine_, secondsToNs(value));
  } else if (name == "ema_alpha") cfg_.emaAlpha = value;
  else if (name == "starve_limit") cfg_.starveLimit = static_cast<int>(value);
  else if (name == "migration_cap") cfg_.migrationCap = static_cast<int>(value);
  else if (name == "message_latency_s") cfg_.messageLatencyS = value;
  else if (name == "rebalance_threshold") cfg_.rebalanceThreshold = value;
  else return false;
  return true;
}

void CascadeGlobal::publishInstance(int i, std::vector<PolicyField>& out) const {
  // The stage and its length range are the card's badge (setPoolLabel).
  out.push_back({"demand", demand(i), "tokens", "KV demand: tokens held plus tokens on their way in"});
  out.push_back({"inq", static_cast<double>(queues_[static_cast<std::size_t>(i)].size()), "requests",
                 "requests won by bid-ask, waiting in this receiver's priority queue"});
  // Bid-ask as it happens (lecture mode calls out each counter's growth):
  // the sender asks, the candidates bid, the winner queues the request.
  const auto k = static_cast<std::size_t>(i);
  out.push_back({"asked", static_cast<double>(asks_[k]), "requests",
                 "bid-ask rounds this instance started as a sender (a hand-over or a rebalancing move)",
                 "asked for a receiver (bid-ask)"});
  out.push_back({"bids", static_cast<double>(bids_[k]), "bids",
                 "bids this instance sent as a candidate receiver: its KV demand and earliest start",
                 "bid: its load and earliest start"});
  out.push_back({"won", static_cast<double>(wins_[k]), "requests",
                 "bids this instance won: the request joined its priority queue", "won a bid: takes the request"});
}

void CascadeGlobal::publishCluster(std::vector<PolicyField>& out) const {
  for (int s = 0; s + 1 < stages(); ++s) {
    std::string label = "b", tip = "boundary between stage ";
    label.append(std::to_string(s + 1));
    tip.append(std::to_string(s + 1));
    tip.append(" and the next");
    out.push_back({label, static_cast<double>(upper(s)), "tokens", tip});
  }
  out.push_back({"handovers", static_cast<double>(handovers_), "migrations", "inter-stage hand-overs started"});
  out.push_back({"rebalances", static_cast<double>(rebalances_), "migrations", "intra-stage rebalancing migrations started"});
}

void CascadeGlobal::report(std::vector<PolicyReportEntry>& out) const {
  out.push_back({"qoe_model/mean_relative_error", qoeErr_});
  if (unfitted_) out.push_back({"qoe_model/unfitted", 1});
  static const char* dk[] = {"qoe_model/D0", "qoe_model/D1", "qoe_model/D2", "qoe_model/D3", "qoe_model/D4"};
  for (int k = 0; k < 5; ++k) out.push_back({dk[k], qoe_.d[static_cast<std::size_t>(k)]});
  // The later pools' models (mixed pools; the keys above are the first's).
  for (std::size_t p = 1; p < profiles_.size(); ++p) {
    const std::string pre = "pool" + std::to_string(p) + "/";
    out.push_back({pre + "qoe_model/mean_relative_error", profiles_[p].err});
    for (std::size_t k = 0; k < 5; ++k) out.push_back({pre + dk[k], profiles_[p].q.d[k]});
  }
  out.push_back({"stages", static_cast<double>(stages())});
  for (int s = 0; s < stages(); ++s) {
    std::string key = "stage";
    key.append(std::to_string(s + 1));
    out.push_back({key + "/instances", static_cast<double>(members(s).size())});
    if (profiles_.size() > 1)  // mixed pools: how many of the stage's instances each pool gives
      for (std::size_t p = 0; p < profiles_.size(); ++p) {
        const auto n = std::count_if(members(s).begin(), members(s).end(), [&](int i) {
          return profileOf_[static_cast<std::size_t>(i)] == static_cast<int>(p);
        });
        if (n > 0) out.push_back({key + "/pool" + std::to_string(p) + "_instances", static_cast<double>(n)});
      }
    if (s + 1 < stages()) out.push_back({key + "/upper_tokens", static_cast<double>(upper(s))});
  }
  out.push_back({"plan_cost", plan_.cost});
  out.push_back({"replans", static_cast<double>(replans_)});
  out.push_back({"handovers", static_cast<double>(handovers_)});
  out.push_back({"rebalances", static_cast<double>(rebalances_)});
  out.push_back({"bid_rounds", static_cast<double>(bidRounds_)});
  out.push_back({"refinements", static_cast<double>(refinements_)});
  out.push_back({"refinements_frozen", static_cast<double>(frozen_)});
  out.push_back({"receiver_skips", static_cast<double>(skips_)});
  out.push_back({"starvations", static_cast<double>(starvations_)});
  out.push_back({"migrations_refused", static_cast<double>(refused_)});
  out.push_back({"handed_back", static_cast<double>(reasks_)});
}

}  // namespace sl
