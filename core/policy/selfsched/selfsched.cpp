#include "policy/selfsched/selfsched.h"

#include <algorithm>
#include <cmath>

#include "engine/instance.h"
#include "engine/simulator.h"
#include "engine/snapshot.h"
#include "metrics/kendall.h"

namespace sl {

const char* rankModeName(RankMode m) {
  switch (m) {
    case RankMode::PrefillOnly: return "prefill-only";
    case RankMode::RankOnly: return "rank-only";
    case RankMode::LengthOnly: return "length-only";
    case RankMode::Oracle: return "oracle-sjf";
  }
  return "?";
}

int rankPromptOutput(RankMode m) {
  switch (m) {
    case RankMode::PrefillOnly: return 0;
    case RankMode::RankOnly: return 20;
    case RankMode::LengthOnly: return 40;
    case RankMode::Oracle: return 0;
  }
  return 0;
}

// ---------------------------------------------------------------- local

bool SelfSchedLocal::byPriority(const Request* a, const Request* b) {
  // Rank prompts first (they unblock ranking), then promoted requests, then
  // by rank / predicted length (unranked: kUnranked, last), then arrival.
  if (a->synthetic != b->synthetic) return a->synthetic;
  const bool pa = a->queue > 0, pb = b->queue > 0;
  if (pa != pb) return pa;
  if (a->policyKey != b->policyKey) return a->policyKey < b->policyKey;
  return FcfsLocal::byArrival(a, b);
}

bool SelfSchedLocal::inR(const Request& r) {
  // Algorithm 1's R: the rank prompts and the ranked requests; a request
  // waiting for its batch's rank is in Q, not in R (line 4 vs. line 17).
  return !r.synthetic && r.policyKey != kUnranked;
}

std::int32_t& SelfSchedLocal::starveOf(const Request& r) {
  const auto s = static_cast<std::size_t>(r.slot);
  if (starve_.size() <= s) starve_.resize(s + 1, 0);
  return starve_[s];
}

void SelfSchedLocal::enqueue(Request& r) {
  starveOf(r) = 0;  // slots are reused: a request joining starts unstarved
  if (const auto s = static_cast<std::size_t>(r.slot); s < admitted_.size()) admitted_[s] = 0;
  FcfsLocal::enqueue(r);
}

void SelfSchedLocal::promote() {
  // Algorithm 1 lines 10-11: requests of R with starvation >= threshold
  // that are not promoted yet are promoted for quantum_steps iterations,
  // at most max_promotions per iteration ("round"), the most starved first
  // (ties: priority order).
  if (!cfg_.enabled || cfg_.maxPerRound <= 0) return;
  std::vector<Request*> cand;
  auto consider = [&](Request* r) {
    if (inR(*r) && r->queue <= 0 && starveOf(*r) >= cfg_.thresholdSteps) cand.push_back(r);
  };
  for (Request* r : running_) consider(r);
  for (Request* r : queue_) consider(r);
  if (cand.empty()) return;
  std::stable_sort(cand.begin(), cand.end(), [&](const Request* a, const Request* b) {
    const std::int32_t sa = starve_[static_cast<std::size_t>(a->slot)], sb = starve_[static_cast<std::size_t>(b->slot)];
    if (sa != sb) return sa > sb;
    return byPriority(a, b);
  });
  const std::size_t n = std::min(cand.size(), static_cast<std::size_t>(cfg_.maxPerRound));
  for (std::size_t k = 0; k < n; ++k) {
    cand[k]->queue = cfg_.quantumSteps;
    ++promotions_;
  }
}

void SelfSchedLocal::schedule(IterationBuilder& b) {
  promote();
  resort();  // ranks arrive and promotions start or end between iterations
  FcfsLocal::schedule(b);
  if (ridesAlong_ && !b.chunkedPrefill())
    // A prefill-only iteration (vLLM without chunked prefill) leaves running
    // decodes out; a running rank prompt's decode tokens join it anyway, as
    // the engine serving the paper's rank prompts batches them (its 40
    // tokens cost 55 ms in Table 2, not 40 iterations).
    for (Request* r : running_)
      if (r->synthetic && r->state == ReqState::Running && r->prefillDone() && r->batchIndex < 0) b.addDecode(*r);
  // Algorithm 1 lines 13-25: each request of R that runs in this iteration
  // (S) resets its starvation and, when promoted, spends one step of its
  // quantum; every other request of R gains one starvation step.
  auto account = [&](Request* r) {
    if (!inR(*r)) return;
    std::int32_t& st = starveOf(*r);
    if (r->batchIndex >= 0) {
      st = 0;
      if (r->queue > 0) --r->queue;
    } else {
      ++st;
    }
  };
  for (Request* r : running_) account(r);
  for (Request* r : queue_) account(r);
  // Admission stamps (victim_order 2): requests that entered the running set
  // in this iteration get the next stamps, in running order (the order they
  // were admitted in); a preempted one loses its stamp.
  if (victimOrder_ != 2) return;
  for (Request* r : running_) {
    const auto s = static_cast<std::size_t>(r->slot);
    if (admitted_.size() <= s) admitted_.resize(s + 1, 0);
    if (admitted_[s] == 0) admitted_[s] = ++admitSeq_;
  }
  for (Request* r : queue_) {
    const auto s = static_cast<std::size_t>(r->slot);
    if (s < admitted_.size()) admitted_[s] = 0;
  }
}

Request* SelfSchedLocal::pickVictim() {
  // 0: the lowest priority of the queue order (promoted requests are
  // protected); 1: vLLM's max(priority, arrival) with the rank as priority,
  // promotion not part of it; 2: the last admitted (vLLM's FCFS policy,
  // running.pop()).
  if (victimOrder_ == 0) return FcfsLocal::pickVictim();
  Request* v = running_.back();
  for (Request* r : running_) {
    if (victimOrder_ == 1) {
      if (r->synthetic != v->synthetic ? v->synthetic
                                       : (r->policyKey != v->policyKey ? r->policyKey > v->policyKey
                                                                        : FcfsLocal::byArrival(v, r)))
        v = r;
    } else {
      auto st = [&](const Request* x) {
        const auto s = static_cast<std::size_t>(x->slot);
        return s < admitted_.size() && admitted_[s] ? admitted_[s] : std::numeric_limits<std::int64_t>::max();
      };
      if (st(r) > st(v) || (st(r) == st(v) && FcfsLocal::byArrival(v, r))) v = r;
    }
  }
  return v;
}

int SelfSchedLocal::starvation(const Request& r) const {
  const auto s = static_cast<std::size_t>(r.slot);
  return s < starve_.size() ? starve_[s] : 0;
}

bool SelfSchedLocal::setKnob(const std::string& name, double value) {
  if (name == "anti_starvation") cfg_.enabled = value != 0;
  else if (name == "starvation_threshold_steps") cfg_.thresholdSteps = static_cast<int>(value);
  else if (name == "priority_quantum_steps") cfg_.quantumSteps = static_cast<int>(value);
  else if (name == "max_promotions_per_round") cfg_.maxPerRound = static_cast<int>(value);
  else if (name == "preempt_for_priority") preemptForPriority_ = value != 0;
  else if (name == "rank_prompt_rides_along") ridesAlong_ = value != 0;
  else if (name == "victim_order") {
    victimOrder_ = static_cast<int>(value);
    std::fill(admitted_.begin(), admitted_.end(), 0);  // unstamped: admitted last
  }
  else return false;
  return true;
}

// ---------------------------------------------------------------- global

SelfSchedGlobal::SelfSchedGlobal(const SelfSchedConfig& cfg, std::vector<double> outputSample)
    : cfg_(cfg), outputSample_(std::move(outputSample)) {}

const char* SelfSchedGlobal::name() const { return rankModeName(cfg_.mode); }

void SelfSchedGlobal::attach(Simulator& sim) {
  GlobalPolicy::attach(sim);
  const int n = sim.numInstances();
  locals_.assign(static_cast<std::size_t>(n), nullptr);
  for (int i = 0; i < n; ++i) locals_[static_cast<std::size_t>(i)] = dynamic_cast<SelfSchedLocal*>(&sim.instance(i).policy());
  // σ for the target tau-b, on the workload's own output lengths, with the
  // run's seed (stream "selfsched-calibration"): deterministic per scenario.
  if (cfg_.mode != RankMode::Oracle && !outputSample_.empty()) {
    Rng& rng = sim.rng("selfsched-calibration");
    calEps_.resize(outputSample_.size());
    for (double& e : calEps_) e = rng.normal();
    cal_ = calibrateSigma(outputSample_, calEps_, cfg_.targetTau, cfg_.alpha, static_cast<std::size_t>(cfg_.batchSize));
  }
  if (cfg_.neutralRank) neutralKey_ = neutralKey();
}

std::int64_t SelfSchedGlobal::neutralKey() const {
  // The middle of what a rank can be: (B - 1) / 2 for the modes that reveal
  // ranks within a batch, the median output length of the calibration
  // sample for length-only (the oracle ranks at arrival: unused).
  if (cfg_.mode != RankMode::LengthOnly) return std::max(0, cfg_.batchSize - 1) / 2;
  if (outputSample_.empty()) return kUnranked;
  std::vector<double> v = outputSample_;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return static_cast<std::int64_t>(v[v.size() / 2]);
}

int SelfSchedGlobal::leastLoaded() const {
  // The paper ran one engine; with several instances every request (and each
  // rank prompt) goes to the instance with the fewest tokens assigned
  // (prompt + generated of what it holds), ties to the lowest index.
  int best = 0;
  for (int i = 1; i < sim_->numInstances(); ++i)
    if (sim_->instance(i).assignedTokens() < sim_->instance(best).assignedTokens()) best = i;
  return best;
}

int SelfSchedGlobal::route(const Request&) { return leastLoaded(); }

void SelfSchedGlobal::onArrival(Request& r) {
  const double trueLen = static_cast<double>(r.reasoning) + static_cast<double>(r.answer);
  if (cfg_.mode == RankMode::Oracle) {
    r.policyKey = static_cast<std::int64_t>(trueLen);
    r.predicted = static_cast<std::int32_t>(trueLen);
    return;
  }
  r.policyKey = neutralKey_;
  batch_.push_back({sim_->handleOf(r), r.id, trueLen, r.input});
  if (batch_.size() == 1) {
    // The batch closes at T after its oldest request, unless B closes it first.
    const std::uint64_t seq = ++batchSeq_;
    sim_->sendMessage(secondsToNs(cfg_.batchTimeoutS), [this, seq] {
      if (seq == batchSeq_ && !batch_.empty()) closeBatch(false);
    });
  }
  if (static_cast<int>(batch_.size()) >= cfg_.batchSize) closeBatch(true);
}

void SelfSchedGlobal::closeBatch(bool bySize) {
  ++batchSeq_;  // the pending timeout, if any, is for this batch: void it
  Pending p;
  std::int64_t input = cfg_.templateTokens;
  Rng& rng = sim_->rng("selfsched-noise");
  for (const Member& m : batch_) {
    // Each request's prediction, drawn when its batch is ranked (in arrival order).
    const double pred = std::max(1.0, std::round(m.trueLen * std::exp(cal_.sigma * rng.normal())));
    if (!sim_->resolve(m.h)) continue;  // finished before its batch closed (cannot happen with T > 0)
    p.members.push_back(m);
    p.predicted.push_back(pred);
    input += m.input;
  }
  batch_.clear();
  if (p.members.empty()) return;
  ++batches_;
  (bySize ? bySize_ : byTimeout_) += 1;
  members_ += static_cast<std::int64_t>(p.members.size());
  const std::int64_t cap = std::numeric_limits<std::int32_t>::max() / 2;
  const int at = leastLoaded();
  p.prompt = sim_->injectRequest(at, static_cast<std::int32_t>(std::min(input, cap)), rankPromptOutput(cfg_.mode));
  if (promptsAt_.size() <= static_cast<std::size_t>(at)) promptsAt_.resize(static_cast<std::size_t>(at) + 1, 0);
  ++promptsAt_[static_cast<std::size_t>(at)];
  pending_.push_back(std::move(p));
}

void SelfSchedGlobal::onSyntheticDone(const Request& s) {
  const RequestHandle h = sim_->handleOf(s);
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.prompt == h; });
  if (it == pending_.end()) return;
  Pending p = std::move(*it);
  pending_.erase(it);
  // RankOnly / PrefillOnly reveal the order within the batch (ranks 0..n-1,
  // ties by arrival); LengthOnly the predicted lengths themselves.
  std::vector<std::size_t> order(p.members.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p.predicted[a] < p.predicted[b]; });
  std::vector<double> trueLens, preds;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const std::size_t k = order[rank];
    trueLens.push_back(p.members[k].trueLen);
    preds.push_back(p.predicted[k]);
    Request* r = sim_->resolve(p.members[k].h);
    if (!r) continue;
    r->policyKey = cfg_.mode == RankMode::LengthOnly ? static_cast<std::int64_t>(p.predicted[k])
                                                      : static_cast<std::int64_t>(rank);
    r->predicted = static_cast<std::int32_t>(std::min(p.predicted[k], 2e9));
    r->rank = static_cast<std::int32_t>(rank);
    ++ranked_;
  }
  if (trueLens.size() >= 2) {
    const auto gold = servelab::metrics::goldRanking(trueLens, cfg_.alpha);
    if (auto t = servelab::metrics::kendallTauB(gold, preds)) {
      tauSum_ += *t;
      ++tauBatches_;
    }
  }
}

std::int64_t SelfSchedGlobal::totalPromotions() const {
  std::int64_t n = 0;
  for (const SelfSchedLocal* l : locals_)
    if (l) n += l->promotions();
  return n;
}

bool SelfSchedGlobal::setKnob(const std::string& name, double value) {
  if (name == "batch_size") cfg_.batchSize = static_cast<int>(value);
  else if (name == "batch_timeout_s") cfg_.batchTimeoutS = value;
  else if (name == "target_tau") cfg_.targetTau = value;
  else if (name == "neutral_rank") cfg_.neutralRank = value != 0;
  else return false;
  neutralKey_ = cfg_.neutralRank ? neutralKey() : kUnranked;  // applies to arrivals from now on
  if (name != "batch_timeout_s" && cfg_.mode != RankMode::Oracle && !outputSample_.empty())
    // σ is calibrated per batch of B: a new target or B re-calibrates it, with
    // the start-up's sample and ε (the new σ depends only on the knobs).
    cal_ = calibrateSigma(outputSample_, calEps_, cfg_.targetTau, cfg_.alpha, static_cast<std::size_t>(cfg_.batchSize));
  return true;
}

void SelfSchedGlobal::publishInstance(int i, std::vector<PolicyField>& out) const {
  const auto k = static_cast<std::size_t>(i);
  if (cfg_.mode != RankMode::Oracle)
    out.push_back({"rank prompts", static_cast<double>(k < promptsAt_.size() ? promptsAt_[k] : 0), "prompts",
                   "rank prompts run on this instance so far (each ranks one batch)",
                   "rank prompt: the model ranks a batch"});
  const SelfSchedLocal* l = k < locals_.size() ? locals_[k] : nullptr;
  out.push_back({"promoted", static_cast<double>(l ? l->promotions() : 0), "requests",
                 "anti-starvation promotions on this instance so far", "promoted: waited too long"});
}

void SelfSchedGlobal::publishCluster(std::vector<PolicyField>& out) const {
  if (cfg_.mode == RankMode::Oracle) {
    out.push_back({"promotions", static_cast<double>(totalPromotions()), "requests",
                   "anti-starvation promotions so far"});
    return;
  }
  out.push_back({"rank prompts", static_cast<double>(batches_), "prompts", "ranking batches closed so far"});
  out.push_back({"waiting rank", static_cast<double>(batch_.size() + [&] {
                   std::size_t n = 0;
                   for (const Pending& p : pending_) n += p.members.size();
                   return n;
                 }()),
                 "requests", "requests not ranked yet (open batch + batches whose rank prompt runs)"});
  out.push_back({"promotions", static_cast<double>(totalPromotions()), "requests",
                 "anti-starvation promotions so far"});
}

void SelfSchedGlobal::report(std::vector<PolicyReportEntry>& out) const {
  out.push_back({"mode", static_cast<double>(static_cast<int>(cfg_.mode))});
  out.push_back({"promotions", static_cast<double>(totalPromotions())});
  if (cfg_.mode == RankMode::Oracle) return;
  out.push_back({"noise/target_tau_b", cfg_.targetTau});
  out.push_back({"noise/sigma", cal_.sigma});
  out.push_back({"noise/calibration_tau_b", cal_.tau});
  out.push_back({"noise/calibration_sample", static_cast<double>(cal_.sample)});
  out.push_back({"tau_b/achieved_mean_per_batch", meanBatchTau()});
  out.push_back({"batches/closed", static_cast<double>(batches_)});
  out.push_back({"batches/closed_by_size", static_cast<double>(bySize_)});
  out.push_back({"batches/closed_by_timeout", static_cast<double>(byTimeout_)});
  out.push_back({"batches/mean_size", batches_ ? static_cast<double>(members_) / static_cast<double>(batches_) : 0.0});
  out.push_back({"ranked_requests", static_cast<double>(ranked_)});
}

}  // namespace sl
