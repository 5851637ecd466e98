#pragma once
// PASCAL's intra-instance scheduler (30-schedulers.md "pascal-local", paper
// §IV-C): two queues, each round-robin with its own token quantum.
//   high ("reasoning"): requests in the reasoning phase (prefill counts as
//                       reasoning, Request::inReasoning());
//   low  ("answering"): requests in the answering phase, demoted reasoning
//                       requests, and requests migrated in.
// Each queue is RR as `rr` is (local_rr.h: by default ordered by quanta used,
// so a request fresh in the low queue is ahead of answering requests on a
// later quantum). Each iteration: rotate exhausted requests, then
// run the longest prefix of (high, low) that fits (IterationBuilder::runPrefix);
// memory pressure therefore preempts from the tail of low first, then of high.
// A request moves high -> low when it produces its R-th token (`</think>`) or
// when its KV (kvTokens) exceeds `demoteTokens` (demotion); it never moves back.
// The moves happen in onToken, i.e. at the end of the iteration that produced
// the token, so the global policy's counters (r_i, a_i) are current when it
// runs Algorithm 2 at the same boundary.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/decode_lane.h"
#include "engine/policy_api.h"
#include "engine/request.h"

namespace sl {

struct PrefixPlan;

struct PascalLocalConfig {
  int reasoningQuantum = 500;  // tokens per turn in the high queue
  int answeringQuantum = 500;  // tokens per turn in the low queue
  int demoteTokens = 5000;     // a reasoning request with more KV tokens goes to the low queue
  bool byQuanta = true;        // RR order by quanta used (paper) or one circular queue (local_rr.h)
  // false (paper, "quantum ... for each queue"): every request enters the
  // low queue fresh. true: quanta used on this instance carry over from the
  // high queue at </think> or demotion; only a migrant arrives fresh.
  bool quantaPerInstance = false;
};

class PascalLocal : public LocalPolicy {
 public:
  static constexpr std::int32_t kHigh = 0;
  static constexpr std::int32_t kLow = 1;

  explicit PascalLocal(const PascalLocalConfig& cfg) : cfg_(cfg) {}
  const char* name() const override { return "pascal-local"; }
  void enqueue(Request& r) override;
  void remove(Request& r) override;
  void schedule(IterationBuilder& b) override;
  void onToken(Request& r) override { tokenOf(r); }
  void onTokens(std::span<Request* const> rs) override;
  std::size_t size() const override { return queues_.size(); }
  void describe(std::vector<QueueView>& out) const override;
  void onIterationEnd() override;
  /// The lazy decode lane (engine/decode_lane.h): when the queues start
  /// with running decodes that all fit and the request after them does not
  /// (runPrefix would run exactly those), the ones whose coming tokens are
  /// plain for the engine and for PASCAL (no landmark, no finish, no
  /// quantum used up, no demotion) step together in the lane, each up to its
  /// horizon (the step before its first such token), and the others run
  /// eagerly. Members keep their places in the queues. A move of a member, a
  /// displacement, a knob change, an observer that is not lane-safe, or
  /// queues runPrefix would treat otherwise dissolve it (issue 27).
  DecodeLane* decodeLane() override { return &lane_; }
  void releaseFromLane(Request& r) override;
  void laneReturned(std::span<Request* const> rs) override;
  /// Brings `r`'s progress fields up to date when it is a lane member: for
  /// readers of its tokens, KV, quantum or pacer (PascalGlobal).
  const Request& synced(const Request& r) const {
    if (r.laneIndex >= 0) [[unlikely]]
      lane_.sync(const_cast<Request&>(r));
    return r;
  }
  /// Lane steps taken on this instance so far (tests, profiling).
  std::int64_t laneSteps() const { return lane_.steps(); }
  /// A migrant joins the low queue fresh: with the by-quanta order the
  /// low-queue requests on a later quantum rank below it (tail first); with
  /// the circular order it joins the very tail and none does.
  void displaceable(const Request& incoming, std::vector<Request*>& out) const override;
  /// Live reasoning_quantum, answering_quantum, demote_tokens (next iteration / next token).
  bool setKnob(const std::string& name, double value) override;

  const PascalLocalConfig& config() const { return cfg_; }
  /// The two queues in RR order (high = reasoning, low = answering).
  std::span<Request* const> highQueue() const { return std::span<Request* const>(queues_).first(nHigh_); }
  std::span<Request* const> lowQueue() const { return std::span<Request* const>(queues_).subspan(nHigh_); }
  /// r_i of Algorithm 2: requests in the high-priority (reasoning) queue.
  std::int64_t reasoningCount() const { return static_cast<std::int64_t>(nHigh_); }
  /// a_i of Algorithm 2: low-queue requests that have not exhausted their
  /// first low-queue quantum (`except` is left out of the count).
  std::int64_t freshAnsweringCount(const Request* except = nullptr) const;
  /// Whether `r` (held by this policy) is still in its first low-queue quantum.
  /// (No sync: a lane member leaves before the token that uses its quantum
  /// up, so its unsynced quantumUsed and its synced one are both below it.)
  bool inFirstAnsweringQuantum(const Request& r) const {
    return r.queue == kLow && r.policyKey == 0 && r.quantumUsed < cfg_.answeringQuantum;
  }
  /// A low-queue request the global policy last found behind its pacer, to
  /// test first next time (null once it left the queue). A cache: no effect
  /// on scheduling.
  const Request* paceWitness() const { return paceWitness_; }
  void setPaceWitness(const Request* r) const { paceWitness_ = r; }
  /// Requests demoted so far (reasoning requests moved to low by KV size).
  std::int64_t demotions() const { return demotions_; }

 private:
  /// One output token of `r`: quantum accounting, the </think> move, demotion.
  void tokenOf(Request& r) {
    // The common cases need no call: a low-queue token, a reasoning token.
    if (r.queue != kHigh) {
      if (r.quantumUsed >= cfg_.answeringQuantum) rotateLow_ = std::max(rotateLow_, kRotateRan);
      return;
    }
    if (!r.inReasoning() || r.kvTokens > cfg_.demoteTokens) [[unlikely]] {
      leaveHigh(r);
      return;
    }
    if (r.quantumUsed >= cfg_.reasoningQuantum) rotateHigh_ = std::max(rotateHigh_, kRotateRan);
  }
  void toLow(Request& r);
  /// onToken's rare part: `</think>` or demotion moves `r` to the low queue.
  [[gnu::noinline]] void leaveHigh(Request& r);
  /// Insert `r` into queue `q` as a fresh request (enqueueRoundRobin's rule).
  void insertFresh(std::int32_t q, Request& r);
  /// Take `r` out of queue `q`; false when it is not there.
  bool erase(std::int32_t q, const Request& r);
  /// rotateExhausted's rule on queue `q` (local_rr.h).
  void rotate(std::int32_t q, int quantum, bool whole);
  /// How much of the queues to hand to runPrefix: a prefix of them it treats
  /// exactly as the whole (every running request, and the request it stops at).
  std::size_t prefixOrderLength(IterationBuilder& b) const;

  /// Steps the lane (true) when it may take this iteration, or forms it
  /// from every queued request when they all qualify (the queues as they
  /// are after rotation); false: the caller runs the iteration eagerly.
  bool stepLane(IterationBuilder& b);
  bool buildLane(IterationBuilder& b);
  /// buildLane when only members reached their horizon (in scratch_).
  bool stepWithDue(IterationBuilder& b);
  /// runPrefix's memory test gives exactly the running requests, with
  /// `demand` new blocks for them and cutNeed_ for the request after them.
  bool prefixIsTheRunning(std::int64_t demand, std::int64_t free) const;
  /// The iteration: `eager` entries (queue order), then the lane's step.
  void runWithLane(IterationBuilder& b, std::span<Request* const> eager);
  /// A knob changed during a lane step: that step's tokens (the members'
  /// and the eager entries `rs`) go through tokenOf now, in queue order.
  void replayKnobStep(std::span<Request* const> rs);
  /// The iteration runPrefix makes of the queues when the lane cannot step
  /// (an admission, a preemption, a resume...): the members stay through a
  /// prefill-only iteration that preempts nothing and through a decode
  /// iteration (decodeBesideLane); anything else dissolves the lane first.
  void runBesideLane(IterationBuilder& b);
  /// runBesideLane's decode iteration with the lane; false (nothing done)
  /// when the plan is not one.
  bool decodeBesideLane(IterationBuilder& b, std::span<Request* const> order,
                        const PrefixPlan& plan);
  /// Every member leaves, synced (between steps).
  void dissolveLane();
  /// Steps from now until `r`'s first token that is not plain: a landmark,
  /// its last token, the one that uses its quantum up or demotes it.
  std::int64_t plainSteps(const Request& r) const;

  PascalLocalConfig cfg_;
  // The lane: its members are in queues_ as well, in their places.
  mutable DecodeLane lane_;   // (syncing a member is logically const)
  bool laneStale_ = false;    // a member was released: dissolve before the next iteration
  bool laneRecheck_ = false;  // the queues changed, or eager tokens ran: buildLane looks anew
  std::int64_t nextDue_ = 0;  // a lower bound of lane_.nextDue() (members may have left since)
  std::vector<Request*> eager_;                             // buildLane: decodes added eagerly
  std::vector<std::pair<Request*, std::int64_t>> joining_;  // buildLane: newcomers and their horizons
  std::int64_t cutNeed_ = -1;  // blocks + watermark the request after the members needs (-1: none looked at)
  bool knobInStep_ = false;   // a knob changed during a lane step: its tokens are looked at anew
  std::vector<Request*> knobMembers_;  // that step's members, in queue order
  // Both queues in one vector, high then low: the order schedule() hands to
  // IterationBuilder::runPrefix as it is, with no copy per iteration.
  std::vector<Request*> queues_;
  std::size_t nHigh_ = 0;
  // Whether a queue may hold a request that used its quantum up: only then
  // does schedule() rotate it. Ran: one that ran (onToken saw it); All: a
  // quantum changed, any may have.
  static constexpr std::uint8_t kRotateNone = 0, kRotateRan = 1, kRotateAll = 2;
  std::uint8_t rotateHigh_ = kRotateNone, rotateLow_ = kRotateNone;
  // No request at this position of queues_ or later is running or ran in
  // the last iteration. A queued request runs only in runPrefix, inside the
  // prefix it returns (the new bound), or arrives running through enqueue
  // (the bound moves past it).
  std::size_t runningBound_ = 0;
  std::vector<Request*> scratch_;
  mutable const Request* paceWitness_ = nullptr;
  std::int64_t demotions_ = 0;
};

}  // namespace sl
