#include "policy/pascal/pascal_local.h"

#include <algorithm>
#include <cassert>

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
  if (rotateHigh_ != kRotateNone || cfg_.reasoningQuantum <= 0) {
    rotate(kHigh, cfg_.reasoningQuantum, rotateHigh_ == kRotateAll || cfg_.reasoningQuantum <= 0);
    rotateHigh_ = kRotateNone;
  }
  if (rotateLow_ != kRotateNone || cfg_.answeringQuantum <= 0) {
    rotate(kLow, cfg_.answeringQuantum, rotateLow_ == kRotateAll || cfg_.answeringQuantum <= 0);
    rotateLow_ = kRotateNone;
  }
  runningBound_ = b.runPrefix(std::span<Request* const>(queues_).first(prefixOrderLength(b)));
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
  return true;
}

void PascalLocal::displaceable(const Request& /*incoming*/, std::vector<Request*>& out) const {
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
