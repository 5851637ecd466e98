#include "policy/pascal_local.h"

#include <algorithm>

#include "engine/instance.h"
#include "engine/request.h"

namespace sl {

// Request scratch fields while held here: `queue` = kHigh / kLow;
// `policyKey` = 1 while the request is in its first low-queue quantum (a_i),
// else 0; `quantumUsed` = tokens since it was last (re)placed in its queue.

void PascalLocal::enqueue(Request& r) {
  r.quantumUsed = 0;
  if (r.inReasoning() && r.kvTokens <= cfg_.demoteTokens) {
    r.queue = kHigh;
    r.policyKey = 0;
    high_.push_back(&r);
  } else {  // answering (migrated in, or handed over), or already too large
    r.queue = kLow;
    r.policyKey = 1;
    low_.push_back(&r);
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
  r.quantumUsed = 0;
  r.policyKey = 1;
  low_.push_back(&r);
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

void PascalLocal::rotate(std::deque<Request*>& q, int quantum) {
  scratch_.clear();
  auto keep =
      std::stable_partition(q.begin(), q.end(), [quantum](const Request* r) { return r->quantumUsed < quantum; });
  for (auto it = keep; it != q.end(); ++it) {
    (*it)->quantumUsed = 0;
    (*it)->policyKey = 0;  // its first quantum is over
    scratch_.push_back(*it);
  }
  q.erase(keep, q.end());
  q.insert(q.end(), scratch_.begin(), scratch_.end());
}

void PascalLocal::schedule(IterationBuilder& b) {
  rotate(high_, cfg_.reasoningQuantum);
  rotate(low_, cfg_.answeringQuantum);
  order_.clear();
  order_.insert(order_.end(), high_.begin(), high_.end());
  order_.insert(order_.end(), low_.begin(), low_.end());
  b.runPrefix(order_);
}

bool PascalLocal::inFirstAnsweringQuantum(const Request& r) const {
  return r.queue == kLow && r.policyKey == 1 && r.quantumUsed < cfg_.answeringQuantum;
}

std::int64_t PascalLocal::freshAnsweringCount(const Request* except) const {
  std::int64_t n = 0;
  for (const Request* r : low_)
    if (r != except && inFirstAnsweringQuantum(*r)) ++n;
  return n;
}

void PascalLocal::describe(std::vector<QueueView>& out) const {
  out.push_back(QueueView{"reasoning", {high_.begin(), high_.end()}});
  out.push_back(QueueView{"answering", {low_.begin(), low_.end()}});
}

}  // namespace sl
