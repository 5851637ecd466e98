#pragma once
// Round-robin with a token quantum (30-schedulers.md "rr", PASCAL §II-C):
// one circular queue; a request that has produced `quantum` tokens since it
// was last (re)placed goes to the tail. Each iteration the running set is the
// longest prefix of the queue that fits in memory; running requests outside
// it are preempted.
#include <deque>
#include <vector>

#include "engine/policy_api.h"

namespace sl {

class RoundRobinLocal : public LocalPolicy {
public:
  explicit RoundRobinLocal(int quantum) : quantum_(quantum) {}
  const char* name() const override { return "rr"; }
  void enqueue(Request& r) override;
  void remove(Request& r) override;
  void schedule(IterationBuilder& b) override;
  std::size_t size() const override { return queue_.size(); }
  void describe(std::vector<QueueView>& out) const override;
  int quantum() const { return quantum_; }

private:
  int quantum_;
  std::deque<Request*> queue_;
  std::vector<Request*> order_, rotated_;
};

/// Rotate exhausted requests (quantumUsed ≥ quantum) to the tail, in order.
void rotateExhausted(std::deque<Request*>& q, int quantum, std::vector<Request*>& scratch);

}  // namespace sl
