#pragma once
// Lazy decode progress (issue 16): the running requests of an instance
// whose every remaining token is a *plain* decode token (not the first, not
// the reasoning end or the first answer token, no length watch, a user
// request) advance together, one token per *step* (an iteration of the
// instance that decoded them), without being touched. The lane keeps what
// the engine needs per iteration in O(1):
//  - the decode shape: Σ L and Σ L² of the context lengths L = kv + 1,
//    kept in integers (the doubles they become are the same bits as the
//    per-request sums: every partial sum is an integer below 2^53);
//  - the block demand: a sequence needs a new KV block every `blockSize`
//    tokens, so members are counted in `blockSize` buckets by the step
//    (mod blockSize) at which they cross a block boundary;
//  - the finishes: a heap by the step that produces the last token;
//  - the length watches (Simulator::watchLength): a heap by the step whose
//    token reaches the threshold (issue 27: a lane-aware global policy may
//    watch and move members; a watched token is a plain token that also
//    tells the policy).
// A member's own fields (generated, kvTokens, blocksGpu, quantumUsed, gLast
// and its answer pacer) are brought up to date -- *synced* -- only when
// something reads it: its finish, a snapshot, forEachActive, resolve(),
// or its leaving the lane. The pacer is replayed from the log of step end
// times (a tight loop over one array), so the QoE is computed token by
// token exactly as before. See docs/engine.md "Lazy decode lane".
//
// PascalLocal's lane (issue 27) also takes reasoning requests (steady(), not
// eligible()): their landmarks, finishes, quantum ends and demotions are
// kept out of its steps by the policy, which dissolves the lane before the
// first step whose token would be one; their synced reasoning tokens do
// not touch the pacer.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/request.h"

namespace sl {

class DecodeLane {
public:
  /// Whether `r`, running with its prefill done and about to decode in the
  /// coming step, may join: all its remaining tokens are plain and its KV
  /// holds less than one spare block beyond its tokens.
  static bool eligible(const Request& r, std::int32_t blockSize) {
    return steady(r, blockSize) && r.generated >= r.reasoning + 1;
  }
  /// eligible() without the phase: `r` may also be reasoning. A policy
  /// whose members reason (PascalLocal) must keep every landmark token (the
  /// reasoning end, the first answer token) out of the lane's steps itself.
  static bool steady(const Request& r, std::int32_t blockSize) {
    const std::int64_t spare = static_cast<std::int64_t>(r.blocksGpu) * blockSize - r.kvTokens;
    return r.state == ReqState::Running && r.prefillDone() && r.scheduled && r.blockingStart < 0 &&
           r.generated >= 1 && !r.synthetic && !r.pendingMigration && r.migration < 0 &&
           r.batchIndex < 0 && spare >= 0 && spare < blockSize;
  }

  std::size_t size() const { return members_.size(); }
  bool empty() const { return members_.empty(); }
  /// The lane's step runs in the current iteration (between beginStep and endStep).
  bool stepping() const { return stepping_; }
  const std::vector<Request*>& members() const { return members_; }
  /// Steps taken so far (iterations that decoded the lane).
  std::int64_t steps() const { return steps_; }

  /// Take `r` (steady(r), and its coming token not a landmark); its decode
  /// token of the coming step is the lane's.
  void join(Request& r, std::int32_t blockSize) { join(r, blockSize, -1); }
  /// The same for a member that must leave before step `until` (a
  /// policy's horizon, PascalLocal): no finish entry (its finish lies past
  /// `until`); takeDue() hands it back when the lane reaches that step.
  void join(Request& r, std::int32_t blockSize, std::int64_t until);
  /// The earliest step a member joined with `until` must leave before
  /// (INT64_MAX when none).
  std::int64_t nextDue();
  /// Members whose `until` is the coming step leave (synced) and are
  /// appended to `out`, in no particular order. Not during a step.
  void takeDue(std::vector<Request*>& out);
  /// `r` leaves (synced first). Not during a step.
  void leave(Request& r);
  /// Every member leaves, synced, in arrival order (then id): FCFS's order.
  std::vector<Request*> leaveAll();
  /// Every member leaves, synced, in no particular order. Not during a step.
  void dissolve();

  /// Blocks the coming step needs (members crossing a block boundary).
  std::int64_t blockDemand() const;
  /// Σ L and Σ L² of the coming step's context lengths.
  std::int64_t ctxSum() const { return s1_; }
  std::int64_t ctxSumSq() const { return s2_; }

  /// `r` (a member) has a new length watch (`r.lengthWatch`, -1: none): the
  /// step whose token reaches it is found anew (from the lane's steps: no
  /// sync).
  void rewatch(Request& r);
  /// Between begin and end, new watches are only appended: end drops the
  /// stale entries and rebuilds the heap once (a policy re-watching every
  /// member at once, e.g. a moved stage boundary). The entries are the same
  /// as without the batch, less stale ones, so the watches fire alike.
  /// No step ends in between.
  void beginWatchBatch() { batching_ = true; }
  void endWatchBatch();
  /// `r` (a member) must leave: now (true; the caller takes it back), or,
  /// while a step is under way, at that step's end, after its token (false;
  /// endStep hands it back in `leavers`). It is synced first either way.
  bool release(Request& r);

  /// The step runs in this iteration (call after the joins).
  void beginStep() { stepping_ = !members_.empty(); }
  /// The step's tokens were produced at `end`. Appends the members whose
  /// last token it was to `finishers` (synced, still members), and those
  /// whose token reached their length watch to `watchers` (synced, watch
  /// cleared), each in arrival order (then id); the members released during
  /// the step leave (synced) and are appended to `leavers`. Returns the
  /// number of tokens produced.
  std::int64_t endStep(SimTime end, std::vector<Request*>& finishers, std::vector<Request*>& watchers,
                       std::vector<Request*>& leavers);

  /// Bring `r`'s fields up to date (a member).
  void sync(Request& r);
  /// The tokens sync(r) would add to `r.generated` now (a member).
  std::int32_t unsyncedTokens(const Request& r) const { return static_cast<std::int32_t>(steps_ - r.laneSince); }
  /// Sync every member; the step log is then emptied.
  void syncAll();

private:
  struct Finish {
    std::int64_t step;
    SimTime arrival;
    std::int64_t id;
    Request* r;
    std::int64_t ticket;
  };
  struct Watch {
    std::int64_t step;
    SimTime arrival;
    std::int64_t id;
    Request* r;
    std::int64_t ticket;
    std::int32_t threshold;  // the watch it was computed for (a changed watch makes it stale)
  };
  template <class E> static bool later(const E& a, const E& b) {
    if (a.step != b.step) return a.step > b.step;
    if (a.arrival != b.arrival) return a.arrival > b.arrival;
    return a.id > b.id;
  }
  /// `r` is still the member it was when an entry with `ticket` was made:
  /// a member of this lane (not of another instance's lane, which a request
  /// that moved may have joined since), in the same membership.
  bool isMember(const Request& r, std::int64_t ticket) const {
    return r.laneIndex >= 0 && static_cast<std::size_t>(r.laneIndex) < members_.size() &&
           members_[static_cast<std::size_t>(r.laneIndex)] == &r && r.laneTicket == ticket;
  }
  std::size_t bucketOf(const Request& r) const;
  void removeMember(Request& r);
  void pushWatch(Request& r);
  void rebuildWatches();  // drops stale watch entries, re-heaps

  std::vector<Request*> members_;
  std::vector<Finish> finishes_;      // min-heap by (step, arrival, id)
  std::vector<Watch> watches_;        // min-heap by (step, arrival, id); during a watch batch new entries sit unheaped at the end
  bool batching_ = false, batchPushed_ = false;
  struct Due {
    std::int64_t step;
    Request* r;
    std::int64_t ticket;
  };
  static bool dueLater(const Due& a, const Due& b) { return a.step > b.step; }
  std::vector<Due> due_;              // min-heap by step (dueLater): members joined with `until`
  std::vector<Request*> leaving_;     // released during the running step
  std::vector<std::int32_t> buckets_; // per step mod blockSize: members crossing a block boundary
  std::vector<SimTime> log_;          // end times of steps logBase_, logBase_ + 1, ...
  std::int64_t logBase_ = 0;
  std::int64_t steps_ = 0;            // steps completed
  std::int64_t s1_ = 0, s2_ = 0;      // Σ L, Σ L² for the coming step
  std::int64_t nextTicket_ = 1;
  std::int32_t blockSize_ = 0;
  bool stepping_ = false;
};

}  // namespace sl
