#pragma once
// vLLM's default local scheduler (30-schedulers.md "fcfs"): one queue in
// arrival order; running requests keep running; when one needs a block and
// none is free, the most recently arrived running request is preempted;
// waiting requests are admitted in order while memory allows, never skipped.
// `decode-first` is the same queue discipline with chunked prefill forced on
// (decodes first, then prefill chunks fill the token budget), as vLLM's V1
// engine and Arrow's local scheduler run it.
#include <deque>
#include <vector>

#include "engine/decode_lane.h"
#include "engine/policy_api.h"

namespace sl {

class FcfsLocal : public LocalPolicy {
public:
  /// Strict weak order of the queues: which request goes first.
  using Order = bool (*)(const Request*, const Request*);
  /// Arrival order (then id): vLLM's FCFS.
  static bool byArrival(const Request* a, const Request* b);

  /// `order` other than arrival makes this vLLM's *priority* discipline
  /// (self-scheduling's local part): the same queues and rules, sorted by
  /// that order; the lowest-priority running request is the victim.
  explicit FcfsLocal(Order order = &FcfsLocal::byArrival) : order_(order) {}
  const char* name() const override { return "fcfs"; }
  void enqueue(Request& r) override;
  void remove(Request& r) override;
  void schedule(IterationBuilder& b) override;
  std::size_t size() const override { return running_.size() + lane_.size() + queue_.size(); }
  void describe(std::vector<QueueView>& out) const override;
  /// vLLM's FCFS in arrival order keeps plain decodes in a lazy lane
  /// (engine/decode_lane.h); the priority variants and subclasses do not.
  DecodeLane* decodeLane() override;
  void releaseFromLane(Request& r) override;
  void laneReturned(std::span<Request* const> rs) override;

protected:
  /// Re-sort both queues (after keys the order reads have changed).
  void resort();
  /// The running request a request that needs a block preempts: the last of
  /// running_ (the lowest priority in `order_`; FCFS: the latest arrival).
  /// The priority discipline may pick by another key (vLLM's victim rules).
  virtual Request* pickVictim() { return running_.back(); }
  /// Priority preemption (30-schedulers.md "priority"; vLLM's priority
  /// policy): when the waiting head cannot be admitted, running requests of
  /// strictly lower priority are preempted, lowest first, until it fits
  /// (each by the instance's preemption mode, swap or recompute). Off in
  /// vLLM's FCFS; the priority discipline turns it on.
  bool preemptForPriority_ = false;
  std::vector<Request*> running_;  // KV on GPU, in `order_`
  std::deque<Request*> queue_;     // waiting + swapped, in `order_`

private:
  void requeueFront(Request* r);
  /// Priority preemption for the head of queue_ (see preemptForPriority_);
  /// true when it preempted. Only when freeing every lower-priority running
  /// request would make room: a head that can never fit preempts nobody.
  bool preemptForHead(IterationBuilder& b);
  /// The lane's step in this iteration when every running request's decode
  /// and prefill chunk fits (memory, sequence and token limits): eligible
  /// requests join, the lane steps, and false is returned otherwise (nothing
  /// changed; the caller takes the lane's members back into running_).
  bool stepLane(IterationBuilder& b);
  /// Every lane member back into running_, in order.
  void leaveLane();
  Order order_;
  DecodeLane lane_;  // running requests past their prefill, advanced lazily; disjoint from running_
};

}  // namespace sl
