#include "policy/baselines/local_rr.h"

#include <algorithm>

#include "engine/instance.h"
#include "engine/request.h"

namespace sl {

namespace {

// Tail of level `level` in a queue ordered by quanta used (policyKey).
std::deque<Request*>::iterator levelEnd(std::deque<Request*>& q, std::int64_t level) {
  return std::upper_bound(q.begin(), q.end(), level,
                          [](std::int64_t l, const Request* r) { return l < r->policyKey; });
}

}  // namespace

void enqueueRoundRobin(std::deque<Request*>& q, Request& r, bool byQuanta) {
  r.quantumUsed = 0;
  r.policyKey = 0;
  if (byQuanta)
    q.insert(levelEnd(q, 0), &r);
  else
    q.push_back(&r);
}

void rotateExhausted(std::deque<Request*>& q, int quantum, bool byQuanta, std::vector<Request*>& scratch) {
  scratch.clear();
  auto keep = std::stable_partition(q.begin(), q.end(), [quantum](const Request* r) {
    return r->quantumUsed < quantum;
  });
  if (keep == q.end()) return;
  for (auto it = keep; it != q.end(); ++it) {
    (*it)->quantumUsed = 0;
    ++(*it)->policyKey;
    scratch.push_back(*it);
  }
  q.erase(keep, q.end());
  if (!byQuanta) {
    q.insert(q.end(), scratch.begin(), scratch.end());
    return;
  }
  // The rest of the queue is still ordered by level; each rotated request
  // joins the tail of its new level, in its old order.
  for (Request* r : scratch) q.insert(levelEnd(q, r->policyKey), r);
}

void RoundRobinLocal::enqueue(Request& r) {
  enqueueRoundRobin(queue_, r, byQuanta_);
}

void RoundRobinLocal::remove(Request& r) {
  if (auto it = std::find(queue_.begin(), queue_.end(), &r); it != queue_.end()) queue_.erase(it);
}

void RoundRobinLocal::schedule(IterationBuilder& b) {
  rotateExhausted(queue_, quantum_, byQuanta_, rotated_);
  order_.assign(queue_.begin(), queue_.end());
  b.runPrefix(order_);
}

bool RoundRobinLocal::setKnob(const std::string& name, double value) {
  if (name != "quantum") return false;
  quantum_ = static_cast<int>(value);
  return true;
}

void RoundRobinLocal::describe(std::vector<QueueView>& out) const {
  out.push_back(QueueView{"rr", {queue_.begin(), queue_.end()}});
}

}  // namespace sl
