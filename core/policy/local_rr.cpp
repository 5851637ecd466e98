#include "policy/local_rr.h"

#include <algorithm>

#include "engine/instance.h"
#include "engine/request.h"

namespace sl {

void rotateExhausted(std::deque<Request*>& q, int quantum, std::vector<Request*>& scratch) {
  scratch.clear();
  auto keep = std::stable_partition(q.begin(), q.end(), [quantum](const Request* r) {
    return r->quantumUsed < quantum;
  });
  for (auto it = keep; it != q.end(); ++it) {
    (*it)->quantumUsed = 0;
    scratch.push_back(*it);
  }
  q.erase(keep, q.end());
  q.insert(q.end(), scratch.begin(), scratch.end());
}

void RoundRobinLocal::enqueue(Request& r) {
  r.quantumUsed = 0;
  queue_.push_back(&r);
}

void RoundRobinLocal::remove(Request& r) {
  if (auto it = std::find(queue_.begin(), queue_.end(), &r); it != queue_.end()) queue_.erase(it);
}

void RoundRobinLocal::schedule(IterationBuilder& b) {
  rotateExhausted(queue_, quantum_, rotated_);
  order_.assign(queue_.begin(), queue_.end());
  b.runPrefix(order_);
}

void RoundRobinLocal::describe(std::vector<QueueView>& out) const {
  out.push_back(QueueView{"rr", {queue_.begin(), queue_.end()}});
}

}  // namespace sl
