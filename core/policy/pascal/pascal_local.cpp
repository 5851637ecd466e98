#include "policy/pascal/pascal_local.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "engine/instance.h"
#include "engine/request.h"

namespace sl {

// Request scratch fields while held here: `queue` = kHigh / kLow;
// `policyKey` = quanta used up in its current queue (0: its first quantum, so
// a low-queue request with policyKey 0 counts in a_i); `quantumUsed` = tokens
// of its current quantum (local_rr.h).

namespace {

// Tail of level `level` in [first, last), ordered by quanta used (policyKey).
std::vector<Request*>::iterator levelEnd(std::vector<Request*>::iterator first, std::vector<Request*>::iterator last,
                                         std::int64_t level) {
  return std::upper_bound(first, last, level, [](std::int64_t l, const Request* r) { return l < r->policyKey; });
}

}  // namespace

void PascalLocal::insertFresh(std::int32_t q, Request& r) {
  r.queue = q;
  r.quantumUsed = 0;
  r.policyKey = 0;
  const auto first = queues_.begin() + static_cast<std::ptrdiff_t>(q == kHigh ? 0 : nHigh_);
  const auto last = q == kHigh ? queues_.begin() + static_cast<std::ptrdiff_t>(nHigh_) : queues_.end();
  const auto at = queues_.insert(cfg_.byQuanta ? levelEnd(first, last, 0) : last, &r);
  if (q == kHigh) ++nHigh_;
  const auto p = static_cast<std::size_t>(at - queues_.begin());
  runningBound_ = p < runningBound_ ? runningBound_ + 1 : p + 1;  // it may be running (migrated in)
}

void PascalLocal::enqueue(Request& r) {
  if (!lane_.empty()) laneRecheck_ = true;  // the next iteration looks at the queues anew (buildLane)
  if (r.inReasoning() && r.kvTokens <= cfg_.demoteTokens) {
    insertFresh(kHigh, r);
  } else {  // answering (migrated in, or handed over), or already too large
    insertFresh(kLow, r);
  }
}

bool PascalLocal::erase(std::int32_t q, const Request& r) {
  const auto first = queues_.begin() + static_cast<std::ptrdiff_t>(q == kHigh ? 0 : nHigh_);
  const auto last = q == kHigh ? queues_.begin() + static_cast<std::ptrdiff_t>(nHigh_) : queues_.end();
  const auto it = std::find(first, last, &r);
  if (it == last) return false;
  if (static_cast<std::size_t>(it - queues_.begin()) < runningBound_) --runningBound_;
  queues_.erase(it);
  if (q == kHigh) --nHigh_;
  return true;
}

void PascalLocal::remove(Request& r) {
  if (&r == paceWitness_) paceWitness_ = nullptr;
  if (r.laneIndex >= 0) {
    // The engine removes a request between its iterations (a move out is
    // deferred to the end of the one it is in).
    assert(!lane_.stepping());
    if (lane_.stepping()) {
      lane_.release(r);
      laneStale_ = true;
    } else {
      dissolveLane();
    }
  } else if (!lane_.empty()) {
    laneRecheck_ = true;
  }
  const std::int32_t q = r.queue == kHigh ? kHigh : kLow;
  if (!erase(q, r)) erase(q == kHigh ? kLow : kHigh, r);  // defensive: scratch overwritten elsewhere
}

void PascalLocal::toLow(Request& r) {
  // Erase from high and insert at the tail of low's first level (or of low)
  // in one move: only the requests in between shift.
  const auto it = std::find(queues_.begin(), queues_.begin() + static_cast<std::ptrdiff_t>(nHigh_), &r);
  if (it == queues_.begin() + static_cast<std::ptrdiff_t>(nHigh_)) {
    insertFresh(kLow, r);
    return;
  }
  // Quanta per instance: the quanta it used up here while reasoning carry
  // over (it joins the low queue at that level); per queue: a fresh start.
  const std::int64_t level = cfg_.quantaPerInstance ? r.policyKey : 0;
  r.queue = kLow;
  r.quantumUsed = 0;
  r.policyKey = level;
  const auto lowBegin = queues_.begin() + static_cast<std::ptrdiff_t>(nHigh_);
  const auto to = cfg_.byQuanta ? levelEnd(lowBegin, queues_.end(), level) : queues_.end();
  std::rotate(it, it + 1, to);
  --nHigh_;
  runningBound_ = std::max(runningBound_, static_cast<std::size_t>(to - queues_.begin()));
}

void PascalLocal::leaveHigh(Request& r) {
  if (r.inReasoning()) ++demotions_;  // demotion (§IV-C); else it produced its R-th token: `</think>`
  toLow(r);
}

void PascalLocal::rotate(std::int32_t q, int quantum, bool whole) {
  // rotateExhausted (local_rr.h) on one queue of the vector. Only a request
  // that ran since the last rotation can have used its quantum up, and those
  // lie before runningBound_; `whole` (a quantum was lowered) looks at all.
  const std::size_t begin = q == kHigh ? 0 : nHigh_;
  const std::size_t end = q == kHigh ? nHigh_ : queues_.size();
  const std::size_t scanEnd = whole ? end : std::clamp(runningBound_, begin, end);
#ifndef NDEBUG
  for (std::size_t i = scanEnd; i < end; ++i) assert(queues_[i]->quantumUsed < quantum);
#endif
  scratch_.clear();
  std::size_t kept = begin;
  for (std::size_t i = begin; i < scanEnd; ++i) {
    Request* r = queues_[i];
    if (r->quantumUsed < quantum) queues_[kept++] = r;
    else scratch_.push_back(r);
  }
  if (scratch_.empty()) return;
  const auto at = [&](std::size_t i) { return queues_.begin() + static_cast<std::ptrdiff_t>(i); };
  queues_.erase(at(kept), at(scanEnd));
  std::size_t last = end - scratch_.size(), furthest = 0;
  for (Request* r : scratch_) {
    r->quantumUsed = 0;
    ++r->policyKey;
    const auto it = queues_.insert(cfg_.byQuanta ? levelEnd(at(begin), at(last), r->policyKey) : at(last), r);
    furthest = std::max(furthest, static_cast<std::size_t>(it - queues_.begin()));
    ++last;
  }
  // In [begin, end) a request moved at most scratch_.size() places back, or
  // is one of them; past `end` nothing moved.
  if (runningBound_ > begin)
    runningBound_ = std::max(runningBound_, std::min(end, std::max(runningBound_, furthest + 1) + scratch_.size()));
}

void PascalLocal::schedule(IterationBuilder& b) {
  if (!lane_.empty() && (laneStale_ || !b.laneAllowed())) dissolveLane();
  // (A rotation reads its members' quantumUsed unsynced: none of them has
  // used its quantum up -- the lane's horizon -- so none rotates.)
  if (rotateHigh_ != kRotateNone || cfg_.reasoningQuantum <= 0) {
    rotate(kHigh, cfg_.reasoningQuantum, rotateHigh_ == kRotateAll || cfg_.reasoningQuantum <= 0);
    rotateHigh_ = kRotateNone;
  }
  if (rotateLow_ != kRotateNone || cfg_.answeringQuantum <= 0) {
    rotate(kLow, cfg_.answeringQuantum, rotateLow_ == kRotateAll || cfg_.answeringQuantum <= 0);
    rotateLow_ = kRotateNone;
  }
  if (b.laneAllowed()) {
    if (!lane_.empty() && !laneRecheck_ && stepLane(b)) return;
    if (buildLane(b)) return;
    if (!lane_.empty()) {
      runBesideLane(b);
      return;
    }
  }
  runningBound_ = b.runPrefix(std::span<Request* const>(queues_).first(prefixOrderLength(b)));
}

// ---- the lazy decode lane (pascal_local.h)

std::int64_t PascalLocal::plainSteps(const Request& r) const {
  // Step j (0: the coming one) produces token k = generated + 1 + j; after
  // it kvTokens is kv + 1 + j and quantumUsed is used + 1 + j (onToken's view).
  const std::int64_t g = r.generated, reasoning = r.reasoning;
  std::int64_t n = reasoning + r.answer - g - 1;   // its last token (a finish)
  if (g < reasoning) n = std::min(n, reasoning - g - 1);  // `</think>` (k == R)
  else if (g == reasoning) n = 0;                  // the first answer token (k == R + 1)
  const bool high = r.queue == kHigh;
  const std::int64_t quantum = high ? cfg_.reasoningQuantum : cfg_.answeringQuantum;
  n = std::min(n, quantum - r.quantumUsed - 1);    // the token that uses its quantum up (a rotation)
  if (high) {
    if (g >= reasoning) n = 0;                                           // leaves high at its next token
    n = std::min(n, static_cast<std::int64_t>(cfg_.demoteTokens) - r.kvTokens);  // demotion: kv + 1 + j > D
  }
  return std::max<std::int64_t>(0, n);
}

bool PascalLocal::buildLane(IterationBuilder& b) {
  // What runPrefix would do with these queues when they start with m
  // running requests past their prefill and hold none further on: the m
  // fit (their new blocks fit the free ones; the sequence and token limits)
  // and the request after them, waiting or swapped, does not (its blocks
  // plus the watermark on top of theirs), or the sequence limit stops the
  // prefix there. Then it adds the m decodes in queue order. Here those
  // whose coming tokens are plain (plainSteps) step in the lane; the others
  // (a member whose horizon is now, a landmark, a quantum end...) are added
  // eagerly, in queue order among themselves -- the only order that
  // matters, since a lane token finishes, rotates or moves nothing. No
  // prefix cache (its shared blocks count otherwise).
  const std::size_t size = queues_.size();
  if (size == 0 || b.instance().prefixCache() != nullptr) return false;
  const std::int32_t bs = b.blockSize();
  if (!lane_.empty()) {
    scratch_.clear();
    lane_.takeDue(scratch_);  // members whose horizon is this step: eager from now
    if (!laneRecheck_ && !scratch_.empty()) return stepWithDue(b);
  }
  eager_.clear();
  joining_.clear();
  std::int64_t demand = lane_.blockDemand();
  std::size_t m = 0;
  for (; m < size; ++m) {
    Request* r = queues_[m];
    if (r->state != ReqState::Running) break;
    if (r->laneIndex >= 0) continue;
    if (!r->prefillDone() || r->batchIndex >= 0) return false;
    const std::int64_t h = DecodeLane::steady(*r, bs) && r->lengthWatch < 0 ? plainSteps(*r) : 0;
    if (h > 0) {
      joining_.emplace_back(r, h);
      demand += static_cast<std::int64_t>(r->kvTokens) + 1 > static_cast<std::int64_t>(r->blocksGpu) * bs;
    } else {
      eager_.push_back(r);
      demand += std::max<std::int64_t>(0, b.blocksToRun(*r) - r->blocksGpu);
    }
  }
  if (m == 0 || (joining_.empty() && lane_.empty())) return false;
  for (std::size_t i = m + 1; i < std::min(size, runningBound_); ++i)  // (none runs from runningBound_ on)
    if (queues_[i]->state == ReqState::Running) return false;
  const auto seqs = static_cast<std::int64_t>(m);
  const std::int64_t free = b.freeBlocks();
  if (seqs > b.seqSlotsLeft() || seqs > b.tokenBudgetLeft()) return false;
  cutNeed_ = -1;
  if (m < std::min(size, static_cast<std::size_t>(std::max(0, b.config().maxNumSeqs)))) {
    const Request& cut = *queues_[m];
    cutNeed_ = std::max<std::int64_t>(b.blocksToRun(cut), cut.blocksGpu) + b.config().watermarkBlocks;
  }
  if (!prefixIsTheRunning(demand, free)) return false;
  for (const auto& [r, h] : joining_) lane_.join(*r, bs, lane_.steps() + h);
  runningBound_ = m;
  laneStale_ = false;
  runWithLane(b, eager_);
  return true;
}

bool PascalLocal::prefixIsTheRunning(std::int64_t demand, std::int64_t free) const {
  // The running requests' new blocks fit, and the request after them (if
  // runPrefix looks at it) does not: it would be admitted or swapped in.
  return demand <= free && (cutNeed_ < 0 || demand + cutNeed_ > free);
}

void PascalLocal::runWithLane(IterationBuilder& b, std::span<Request* const> eager) {
  for (Request* r : eager) {
    const bool ok = b.run(*r);  // a decode, or a swap-in (decodeBesideLane)
    assert(ok);
    (void)ok;
  }
  b.runLane();
  nextDue_ = lane_.nextDue();
  laneRecheck_ = !eager.empty();  // their tokens may rotate, move or finish them
}

bool PascalLocal::stepWithDue(IterationBuilder& b) {
  // The queues are as the last buildLane left them: the same m running
  // requests and the same request after them. The members whose horizon is
  // this step (scratch_) are its only eager entries, in queue order.
  if (scratch_.size() > 1) {
    eager_.clear();
    for (Request* r : queues_)  // (pointers only: nothing is read)
      if (std::find(scratch_.begin(), scratch_.end(), r) != scratch_.end()) eager_.push_back(r);
    scratch_.swap(eager_);
  }
  std::int64_t demand = lane_.blockDemand();
  for (const Request* r : scratch_) demand += std::max<std::int64_t>(0, b.blocksToRun(*r) - r->blocksGpu);
  if (lane_.empty() || !prefixIsTheRunning(demand, b.freeBlocks())) return false;
  runWithLane(b, scratch_);
  return true;
}

bool PascalLocal::stepLane(IterationBuilder& b) {
  // The queues are as the last buildLane left them (laneRecheck_ is not
  // set): its test again, with the lane's block demand. The free blocks may
  // have changed meanwhile (a copy out ended, a copy in reserved blocks).
  if (lane_.steps() >= nextDue_) return false;
  if (!prefixIsTheRunning(lane_.blockDemand(), b.freeBlocks())) return false;
  b.runLane();
  return true;
}

void PascalLocal::runBesideLane(IterationBuilder& b) {
  // runPrefix reads the running requests' tokens and blocks: the members
  // are synced (not released). What it would do then:
  //  - a prefill-only iteration that preempts nothing leaves every running
  //    request as it is: the members stay, and step on after it;
  //  - a decode iteration (running decodes and swap-ins, running requests
  //    past the prefix preempted tail first) keeps the members that are
  //    not preempted in the lane, as buildLane's iteration does;
  //  - anything else runs eagerly, without the lane.
  lane_.syncAll();
  const auto order = std::span<Request* const>(queues_).first(prefixOrderLength(b));
  const PrefixPlan plan = b.planPrefix(order);
  if (plan.prefillOnly(b.chunkedPrefill())) {
    laneRecheck_ = true;  // the admitted prompts run next: buildLane looks at the queues anew
    runningBound_ = b.runPlanned(order, plan);
    return;
  }
  if (!decodeBesideLane(b, order, plan)) {
    dissolveLane();  // (the plan stands: the members were synced already)
    runningBound_ = b.runPlanned(order, plan);
  }
}

bool PascalLocal::decodeBesideLane(IterationBuilder& b, std::span<Request* const> order,
                                   const PrefixPlan& plan) {
  if (b.chunkedPrefill() || plan.prompts) return false;
  const auto prefix = order.first(plan.length);
  std::int64_t seqs = 0;
  for (const Request* r : prefix) {
    ++seqs;
    if (r->laneIndex >= 0) continue;
    const bool decode = r->state == ReqState::Running || r->state == ReqState::Swapped;
    if (!decode || !r->prefillDone() || r->batchIndex >= 0) return false;
  }
  // Every entry gets its sequence slot and token (checked before each one
  // is added).
  if (seqs > b.seqSlotsLeft() || seqs > b.tokenBudgetLeft()) return false;
  b.preemptPastPrefix(order, plan);  // (a member among them leaves the lane first)
  // The others run eagerly, in queue order; the lane takes its members' new
  // blocks when it steps, after them. No entry can fail for want of blocks:
  // the plan's test at the prefix's end is that every new block of the
  // prefix, and the watermark once it holds a swap-in, fit the blocks free
  // after the preemptions -- so each swap-in passes its own test (its
  // blocks and the watermark free) whatever came before it.
  eager_.clear();
  for (Request* r : prefix)
    if (r->laneIndex < 0) eager_.push_back(r);
#ifndef NDEBUG
  {
    const std::int64_t bs = b.blockSize();
    std::int64_t free = b.freeBlocks();
    for (const Request* r : prefix) {
      const bool swapIn = r->state == ReqState::Swapped;
      const std::int64_t need = swapIn ? b.blocksToRun(*r) : r->kvTokens + 1 > r->blocksGpu * bs;
      assert(need + (swapIn ? b.config().watermarkBlocks : 0) <= free);
      free -= need;
    }
  }
#endif
  runningBound_ = plan.length;
  runWithLane(b, eager_);
  laneRecheck_ = true;  // the queues changed (preemptions, swap-ins)
  return true;
}

void PascalLocal::dissolveLane() {
  lane_.dissolve();
  laneStale_ = laneRecheck_ = false;
}

void PascalLocal::releaseFromLane(Request& r) {
  // A member starts to move: the lane ends (now, or after the running step,
  // where the engine hands `r` back through laneReturned; it stays queued).
  if (lane_.stepping()) {
    lane_.release(r);
    laneStale_ = true;
  } else {
    dissolveLane();
  }
}

void PascalLocal::laneReturned(std::span<Request* const> /*rs*/) {
  laneStale_ = true;  // (they never left the queues)
}

void PascalLocal::onTokens(std::span<Request* const> rs) {
  if (knobInStep_) [[unlikely]] {
    replayKnobStep(rs);
    return;
  }
  for (Request* r : rs) tokenOf(*r);
}

void PascalLocal::onIterationEnd() {
  if (knobInStep_) [[unlikely]]
    replayKnobStep({});  // a step of lane tokens only (onTokens was not called)
}

void PascalLocal::replayKnobStep(std::span<Request* const> rs) {
  // A knob changed while the lane stepped: the eager path would have looked
  // at every token of that step with the new values (onTokens, in batch
  // order, i.e. queue order). The lane's members and the eager entries `rs`
  // are looked at now, in queue order, before anything reads them.
  knobInStep_ = false;
  scratch_.clear();
  for (Request* r : queues_)
    if (std::find(knobMembers_.begin(), knobMembers_.end(), r) != knobMembers_.end() ||
        std::find(rs.begin(), rs.end(), r) != rs.end())
      scratch_.push_back(r);
  knobMembers_.clear();
  if (!lane_.stepping() && !lane_.empty()) dissolveLane();
  for (Request* r : scratch_) tokenOf(*r);
  scratch_.clear();
}

std::size_t PascalLocal::prefixOrderLength(IterationBuilder& b) const {
#ifndef NDEBUG
  for (std::size_t i = runningBound_; i < queues_.size(); ++i) assert(queues_[i]->state != ReqState::Running);
#endif
  const std::size_t size = queues_.size();
  if (runningBound_ >= size) return size;
  // runPrefix stops at the first request that does not fit: at the latest
  // where the blocks needed so far (counted low: a running request's held
  // blocks, no watermark) exceed the unreserved ones, or at max_num_seqs.
  // The requests past that and past every running one change nothing it
  // does, so they are left out (issue 16).
  const std::int64_t room = b.config().gpuBlocks - b.instance().gpuBlocksReserved();
  const std::size_t cap =
      std::min(size, static_cast<std::size_t>(std::max<std::int32_t>(0, b.config().maxNumSeqs)) + 1);
  std::int64_t need = 0;
  std::size_t n = 0;
  while (n < cap) {
    const Request& r = *queues_[n++];
    need += r.state == ReqState::Running ? r.blocksGpu : b.blocksToRun(r);
    if (need > room) break;
  }
  return std::max(n, runningBound_);
}

std::int64_t PascalLocal::freshAnsweringCount(const Request* except) const {
  std::int64_t n = 0;
  for (const Request* r : lowQueue()) {
    // Ordered by quanta used: the first-quantum requests lead the queue.
    if (cfg_.byQuanta && r->policyKey != 0) break;
    if (r != except && inFirstAnsweringQuantum(*r)) ++n;
  }
  return n;
}

bool PascalLocal::setKnob(const std::string& name, double value) {
  const int v = static_cast<int>(value);
  if (name == "reasoning_quantum") {
    cfg_.reasoningQuantum = v;
    rotateHigh_ = kRotateAll;
  } else if (name == "answering_quantum") {
    cfg_.answeringQuantum = v;
    rotateLow_ = kRotateAll;
  } else if (name == "demote_tokens") {
    cfg_.demoteTokens = v;
  } else if (name == "quanta_per_instance") {
    cfg_.quantaPerInstance = v != 0;  // requests leaving the high queue from now on
  } else {
    return false;
  }
  if (!lane_.empty()) {
    if (!lane_.stepping()) {
      dissolveLane();
    } else if (!knobInStep_) {  // see onIterationEnd
      knobInStep_ = true;
      knobMembers_.clear();
      for (Request* r : queues_)
        if (r->laneIndex >= 0) knobMembers_.push_back(r);
    }
  }
  return true;
}

void PascalLocal::displaceable(const Request& /*incoming*/, std::vector<Request*>& out) const {
  // The engine evicts these between this instance's iterations: the lane
  // ends first (its members' fields synced; the next iteration sees anew).
  assert(!lane_.stepping());
  if (!lane_.empty() && !lane_.stepping()) lane_.dissolve();
  if (!cfg_.byQuanta) return;
  const auto low = lowQueue();
  for (auto it = low.rbegin(); it != low.rend() && (*it)->policyKey > 0; ++it) out.push_back(*it);
}

void PascalLocal::describe(std::vector<QueueView>& out) const {
  const auto high = highQueue(), low = lowQueue();
  out.push_back(QueueView{"reasoning", {high.begin(), high.end()}});
  out.push_back(QueueView{"answering", {low.begin(), low.end()}});
}

}  // namespace sl
