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

#include "engine/policy_api.h"

namespace sl {

class FcfsLocal : public LocalPolicy {
public:
  const char* name() const override { return "fcfs"; }
  void enqueue(Request& r) override;
  void remove(Request& r) override;
  void schedule(IterationBuilder& b) override;
  std::size_t size() const override { return running_.size() + queue_.size(); }
  void describe(std::vector<QueueView>& out) const override;

private:
  void requeueFront(Request* r);
  std::vector<Request*> running_;  // KV on GPU, arrival order
  std::deque<Request*> queue_;     // waiting + swapped, arrival order
};

}  // namespace sl
