#include "policy/pascal/pascal_local.h"

#include <algorithm>

#include "engine/instance.h"
#include "engine/request.h"
#include "policy/baselines/local_rr.h"

namespace sl {

// Request scratch fields while held here: `queue` = kHigh / kLow;
// `policyKey` = quanta used up in its current queue (0: its first quantum, so
// a low-queue request with policyKey 0 counts in a_i); `quantumUsed` = tokens
// of its current quantum (local_rr.h).

void PascalLocal::enqueue(Request& r) {
  if (r.inReasoning() && r.kvTokens <= cfg_.demoteTokens) {
    r.queue = kHigh;
    enqueueRoundRobin(high_, r, cfg_.byQuanta);
  } else {  // answering (migrated in, or handed over), or already too large
    r.queue = kLow;
    enqueueRoundRobin(low_, r, cfg_.byQuanta);
  }
}

void PascalLocal::remove(Request& r) {
  auto& q = r.queue == kHigh ? high_ : low_;
  if (auto it = std::find(q.begin(), q.end(), &r); it != q.end()) {
    q.erase(it);
    return;
  }
  auto& other = r.queue == kHigh ? low_ : high_;  // defensive: scratch overwritten elsewhere
  if (auto it = std::find(other.begin(), other.end(), &r); it != other.end()) other.erase(it);
}

void PascalLocal::toLow(Request& r) {
  if (auto it = std::find(high_.begin(), high_.end(), &r); it != high_.end()) high_.erase(it);
  r.queue = kLow;
  enqueueRoundRobin(low_, r, cfg_.byQuanta);
}

void PascalLocal::onToken(Request& r) {
  if (r.queue != kHigh) return;
  if (!r.inReasoning()) {  // produced its R-th token: `</think>`
    toLow(r);
  } else if (r.kvTokens > cfg_.demoteTokens) {  // demotion (§IV-C)
    ++demotions_;
    toLow(r);
  }
}

void PascalLocal::schedule(IterationBuilder& b) {
  rotateExhausted(high_, cfg_.reasoningQuantum, cfg_.byQuanta, scratch_);
  rotateExhausted(low_, cfg_.answeringQuantum, cfg_.byQuanta, scratch_);
  order_.clear();
  order_.insert(order_.end(), high_.begin(), high_.end());
  order_.insert(order_.end(), low_.begin(), low_.end());
  b.runPrefix(order_);
}

std::int64_t PascalLocal::freshAnsweringCount(const Request* except) const {
  std::int64_t n = 0;
  for (const Request* r : low_) {
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
  } else if (name == "answering_quantum") {
    cfg_.answeringQuantum = v;
  } else if (name == "demote_tokens") {
    cfg_.demoteTokens = v;
  } else {
    return false;
  }
  return true;
}

void PascalLocal::describe(std::vector<QueueView>& out) const {
  out.push_back(QueueView{"reasoning", {high_.begin(), high_.end()}});
  out.push_back(QueueView{"answering", {low_.begin(), low_.end()}});
}

}  // namespace sl
