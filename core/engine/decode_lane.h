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
//  - the finishes: a heap by the step that produces the last token.
// A member's own fields (generated, kvTokens, blocksGpu, quantumUsed, gLast
// and its answer pacer) are brought up to date -- *synced* -- only when
// something reads it: its finish, a snapshot, forEachActive, resolve(),
// or its leaving the lane. The pacer is replayed from the log of step end
// times (a tight loop over one array), so the QoE is computed token by
// token exactly as before. See docs/engine.md "Lazy decode lane".
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
    const std::int64_t spare = static_cast<std::int64_t>(r.blocksGpu) * blockSize - r.kvTokens;
    return r.state == ReqState::Running && r.prefillDone() && r.scheduled && r.blockingStart < 0 &&
           r.generated >= 1 && r.generated >= r.reasoning + 1 && r.lengthWatch < 0 && !r.synthetic &&
           !r.pendingMigration && r.migration < 0 && r.batchIndex < 0 && spare >= 0 && spare < blockSize;
  }

  std::size_t size() const { return members_.size(); }
  bool empty() const { return members_.empty(); }
  /// The lane's step runs in the current iteration (between beginStep and endStep).
  bool stepping() const { return stepping_; }
  const std::vector<Request*>& members() const { return members_; }
  /// Steps taken so far (iterations that decoded the lane).
  std::int64_t steps() const { return steps_; }

  /// Take `r` (eligible(r)); its decode token of the coming step is the lane's.
  void join(Request& r, std::int32_t blockSize);
  /// `r` leaves (synced first). Not during a step.
  void leave(Request& r);
  /// Every member leaves, synced, in arrival order (then id): FCFS's order.
  std::vector<Request*> leaveAll();

  /// Blocks the coming step needs (members crossing a block boundary).
  std::int64_t blockDemand() const;
  /// Σ L and Σ L² of the coming step's context lengths.
  std::int64_t ctxSum() const { return s1_; }
  std::int64_t ctxSumSq() const { return s2_; }

  /// The step runs in this iteration (call after the joins).
  void beginStep() { stepping_ = !members_.empty(); }
  /// The step's tokens were produced at `end`. Appends the members whose
  /// last token it was to `finishers` (synced, still members), in arrival
  /// order (then id). Returns the number of tokens produced.
  std::int64_t endStep(SimTime end, std::vector<Request*>& finishers);

  /// Bring `r`'s fields up to date (a member).
  void sync(Request& r);
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
  static bool later(const Finish& a, const Finish& b) {
    if (a.step != b.step) return a.step > b.step;
    if (a.arrival != b.arrival) return a.arrival > b.arrival;
    return a.id > b.id;
  }
  std::size_t bucketOf(const Request& r) const;
  void removeMember(Request& r);

  std::vector<Request*> members_;
  std::vector<Finish> finishes_;      // min-heap by (step, arrival, id)
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
