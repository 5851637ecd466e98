#pragma once
// Round-robin with a token quantum (30-schedulers.md "rr", PASCAL §II-C and
// §V-A): a request that has produced `quantum` tokens since it was last
// (re)placed starts a new quantum at the tail. Each iteration the running set
// is the longest prefix of the queue that fits in memory; running requests
// outside it are preempted.
//
// Two readings of "goes to the tail" (docs/policies/baselines.md):
//   by quanta (default, the paper's): "requests that finish their quantum are
//     deprioritized ... progressively lower priority as the request consumes
//     more time quanta" (§V-A, §V-B) — the queue is ordered by quanta used,
//     FIFO within a level, so a fresh request is ahead of one on its 3rd quantum;
//   circular (`priority_by_quanta` = 0): one circular queue, new and
//     exhausted requests alike join the very tail.
#include <deque>
#include <vector>

#include "engine/policy_api.h"

namespace sl {

class RoundRobinLocal : public LocalPolicy {
public:
  RoundRobinLocal(int quantum, bool byQuanta) : quantum_(quantum), byQuanta_(byQuanta) {}
  const char* name() const override { return "rr"; }
  void enqueue(Request& r) override;
  void remove(Request& r) override;
  void schedule(IterationBuilder& b) override;
  std::size_t size() const override { return queue_.size(); }
  void describe(std::vector<QueueView>& out) const override;
  int quantum() const { return quantum_; }
  bool byQuanta() const { return byQuanta_; }
  /// Live `quantum` (GUI): takes effect at the next rotation.
  bool setKnob(const std::string& name, double value) override;

private:
  int quantum_;
  bool byQuanta_;
  std::deque<Request*> queue_;
  std::vector<Request*> order_, rotated_;
};

// RR bookkeeping shared by `rr` and `pascal-local`. While a request is held by
// an RR queue, `Request::policyKey` is the number of quanta it has used up in
// that queue and `quantumUsed` the tokens of its current quantum.

/// Append `r` as a fresh request (no quanta used): at the tail, or with
/// `byQuanta` at the tail of the first level (ahead of requests that used quanta).
void enqueueRoundRobin(std::deque<Request*>& q, Request& r, bool byQuanta);
/// Requests that used up their quantum (quantumUsed ≥ quantum) start a new one
/// (quantumUsed = 0, ++policyKey) and go to the tail — with `byQuanta`, the
/// tail of their new level — keeping their relative order.
void rotateExhausted(std::deque<Request*>& q, int quantum, bool byQuanta, std::vector<Request*>& scratch);

}  // namespace sl
