#include "policy/baselines/local_fcfs.h"

#include <algorithm>
#include <iterator>
#include <typeinfo>

#include "engine/instance.h"
#include "engine/request.h"

namespace sl {
namespace {
// Inserts `r` after every entry that does not order after it: the running
// list and the queue stay sorted, ties in insertion order.
template <class Seq, class Order> void insertSorted(Seq& v, Request* r, Order order) {
  v.insert(std::upper_bound(v.begin(), v.end(), r, order), r);
}
}  // namespace

bool FcfsLocal::byArrival(const Request* a, const Request* b) {
  return arrivalOrder(a, b);
}

void FcfsLocal::resort() {
  std::stable_sort(running_.begin(), running_.end(), order_);
  std::stable_sort(queue_.begin(), queue_.end(), order_);
}

void FcfsLocal::enqueue(Request& r) {
  if (r.state == ReqState::Running) {
    insertSorted(running_, &r, order_);
  } else {
    // Keep the queue in arrival order (migrated-in requests may be older).
    insertSorted(queue_, &r, order_);
  }
}

void FcfsLocal::remove(Request& r) {
  if (r.laneIndex >= 0) {
    lane_.leave(r);
    return;
  }
  if (auto it = std::find(running_.begin(), running_.end(), &r); it != running_.end()) {
    running_.erase(it);
    return;
  }
  if (auto it = std::find(queue_.begin(), queue_.end(), &r); it != queue_.end()) queue_.erase(it);
}

void FcfsLocal::requeueFront(Request* r) {
  insertSorted(queue_, r, order_);
}

DecodeLane* FcfsLocal::decodeLane() {
  return typeid(*this) == typeid(FcfsLocal) && order_ == &FcfsLocal::byArrival ? &lane_ : nullptr;
}

void FcfsLocal::releaseFromLane(Request& r) {
  if (lane_.release(r)) insertSorted(running_, &r, order_);
}

void FcfsLocal::laneReturned(std::span<Request* const> rs) {
  for (Request* r : rs) insertSorted(running_, r, order_);
}

void FcfsLocal::leaveLane() {
  if (lane_.empty()) return;
  const std::vector<Request*> back = lane_.leaveAll();
  std::vector<Request*> merged;
  merged.reserve(running_.size() + back.size());
  std::merge(running_.begin(), running_.end(), back.begin(), back.end(), std::back_inserter(merged), order_);
  running_.swap(merged);
}

bool FcfsLocal::stepLane(IterationBuilder& b) {
  // What the generic passes below would do with the lane's members in
  // running_: each running request decodes (or runs its prefill chunk)
  // without a preemption, when all of them fit at once. Then the order in
  // which they are added changes nothing but the batch order, which the
  // engine restores for the finishers (the only readers of that order).
  std::int64_t demand = lane_.blockDemand();
  std::int64_t seqs = static_cast<std::int64_t>(lane_.size());
  for (const Request* r : running_) {
    if (r->state != ReqState::Running || r->batchIndex >= 0) return false;
    ++seqs;
    demand += b.extraBlocksToRun(*r);
  }
  if (seqs > b.seqSlotsLeft() || seqs > b.tokenBudgetLeft() || demand > b.freeBlocks()) return false;
  const std::int32_t bs = b.blockSize();
  std::size_t keep = 0;
  for (Request* r : running_) {
    if (DecodeLane::eligible(*r, bs)) lane_.join(*r, bs);
    else running_[keep++] = r;
  }
  running_.resize(keep);
  b.runLane();
  return true;
}

bool FcfsLocal::preemptForHead(IterationBuilder& b) {
  Request* head = queue_.front();
  const auto maxSeqs = static_cast<std::size_t>(b.config().maxNumSeqs);
  auto fits = [&] {
    return b.extraBlocksToRun(*head) <= b.freeBlocks() && running_.size() + lane_.size() < maxSeqs;
  };
  if (fits()) return false;
  // Blocks the head could have: free ones plus those of every running
  // request it outranks (running_ is in priority order: they are its tail).
  std::int64_t reachable = b.freeBlocks();
  std::size_t lower = 0;
  for (auto it = running_.rbegin(); it != running_.rend() && order_(head, *it); ++it, ++lower)
    reachable += (*it)->blocksGpu;
  if (lower == 0 || reachable < b.extraBlocksToRun(*head)) return false;
  bool any = false;
  while (!fits() && !running_.empty() && order_(head, running_.back())) {
    Request* victim = running_.back();  // the lowest-priority running request
    b.preempt(*victim);
    running_.pop_back();
    requeueFront(victim);
    any = true;
  }
  return any;
}

void FcfsLocal::schedule(IterationBuilder& b) {
  bool preempted = false;
  // Without chunked prefill (vLLM V0) an iteration that can admit the head
  // prompt(s) is prefill-only; resumes of swapped requests come first. As in
  // vLLM, running sequences count against max_num_seqs, so admission stops
  // when running + admitted reaches it.
  if (!b.chunkedPrefill() && !queue_.empty() && queue_.front()->state == ReqState::Waiting) {
    const auto maxSeqs = static_cast<std::size_t>(b.config().maxNumSeqs);
    auto admitWaiting = [&] {
      bool admitted = false;
      while (!queue_.empty() && queue_.front()->state == ReqState::Waiting &&
             running_.size() + lane_.size() < maxSeqs && b.admit(*queue_.front())) {
        Request* r = queue_.front();
        queue_.pop_front();
        insertSorted(running_, r, order_);
        admitted = true;
      }
      return admitted;
    };
    if (admitWaiting()) return;
    // vLLM V0's priority preemption runs when no prefill could be scheduled;
    // the head is admitted in a later iteration (none admits after a
    // preemption) -- unless the preemption emptied the running set, when
    // this iteration would have nothing else to run: then it is admitted now.
    if (preemptForPriority_ && !queue_.empty() && queue_.front()->state == ReqState::Waiting) {
      preempted = preemptForHead(b);
      if (preempted && running_.empty() && lane_.empty() && admitWaiting()) return;
    }
  }

  // The lazy lane steps when everything fits; otherwise its members go
  // back into running_ and the passes below decide as always.
  if (!b.laneAllowed() || !stepLane(b)) leaveLane();

  // Running requests in arrival order; decodes first, then prefill chunks.
  // The prefill pass only when the decode pass saw a running request still
  // in its prefill: pass 0 visits every request that stays in running_, and
  // none enters it or starts a new prefill there (issue 16).
  bool anyPrefill = false;
  // Pass 0's common case, a running request past its prefill that gets its
  // decode token, without the generic loop's checks (issue 16); anything
  // else falls through to the generic loop below from that request on.
  // Fetched ahead, the first kAhead at once: other instances ran since
  // these were last touched (cache misses bound B2 and B5; issue 16).
  constexpr std::size_t kAhead = 12;
  std::size_t start = 0;
  for (std::size_t i = 0; i < std::min(running_.size(), kAhead); ++i) __builtin_prefetch(running_[i], 1);
  for (const std::size_t n = running_.size(); start < n; ++start) {
    if (start + kAhead < n) __builtin_prefetch(running_[start + kAhead], 1);
    Request& r = *running_[start];
    if (r.batchIndex >= 0) continue;
    if (!r.prefillDone()) {
      anyPrefill = true;
      continue;
    }
    if (r.state != ReqState::Running || !b.addDecode(r)) break;
  }
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1 && !anyPrefill) break;
    for (std::size_t i = pass == 0 ? start : 0; i < running_.size(); ++i) {
      Request* r = running_[i];
      if (r->batchIndex >= 0) continue;
      if (r->prefillDone() != (pass == 0)) {
        anyPrefill = true;
        continue;
      }
      // A running request past its prefill decodes: what run() would call.
      while (!(pass == 0 && r->state == ReqState::Running ? b.addDecode(*r) : b.run(*r))) {
        if (b.seqSlotsLeft() <= 0 || b.tokenBudgetLeft() <= 0) goto admit;  // limits, not memory
        if (b.extraBlocksToRun(*r) <= b.freeBlocks()) break;              // cannot run for another reason
        Request* victim = pickVictim();
        if (victim->batchIndex >= 0 && victim != r) {
          // Only requests already batched remain: preempt r itself.
          victim = r;
        }
        b.preempt(*victim);
        running_.erase(std::find(running_.begin(), running_.end(), victim));
        requeueFront(victim);
        preempted = true;
        if (victim == r) {
          --i;
          break;
        }
      }
    }
  }
admit:
  if (preempted) return;  // vLLM admits nothing in an iteration that preempted
  while (!queue_.empty()) {
    Request* r = queue_.front();
    // Without chunked prefill a prompt is admitted only in a prefill-only
    // iteration (above); vLLM V0 schedules no prefill at all while a request
    // is swapped out, so an iteration that resumes swapped requests stays
    // decode-only and the waiting prompt behind them waits.
    if (!b.chunkedPrefill() && r->state == ReqState::Waiting) break;
    if (!b.run(*r)) {
      // With chunked prefill, a waiting head that does not fit preempts
      // lower-priority running requests and is admitted in a later
      // iteration, or now when nothing else is left to run.
      if (!(preemptForPriority_ && r->state == ReqState::Waiting && preemptForHead(b) && b.empty() && b.run(*r)))
        break;  // no skipping: later requests wait behind the head
    }
    queue_.pop_front();
    insertSorted(running_, r, order_);
  }
}

void FcfsLocal::describe(std::vector<QueueView>& out) const {
  QueueView run{"running", {running_.begin(), running_.end()}};
  if (!lane_.empty()) {  // the lane's members belong to the running queue, in order
    std::vector<Request*> lane(lane_.members().begin(), lane_.members().end());
    std::sort(lane.begin(), lane.end(), order_);
    run.requests.clear();
    std::merge(running_.begin(), running_.end(), lane.begin(), lane.end(), std::back_inserter(run.requests), order_);
  }
  QueueView wait{"waiting", {queue_.begin(), queue_.end()}};
  out.push_back(std::move(run));
  out.push_back(std::move(wait));
}

}  // namespace sl
