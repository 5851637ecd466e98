#pragma once
// Arrow's local scheduler (paper §5.4, 30-schedulers.md "decode-first chunked
// prefill"): vLLM's FCFS queue with chunked prefill -- each iteration all
// runnable decodes first, then prefill chunks fill the token budget -- plus
// what Arrow's global scheduler reads from it (its instance monitor):
//  - the prompts still to prefill, as the quadratic predictor needs them
//    (count, Σ target, Σ target² of unstarted prefills; the started ones
//    listed with their progress), so the prefill delay is O(started) to read;
//  - the requests it holds that are decoding (an instance in D→P becomes P
//    when it holds none);
//  - the mean duration of its decode iterations over a window (the token
//    interval), with a window length the policy can change live.
// The FCFS KV-migration queue is the engine's: a hand-off to this instance
// waits FCFS for its blocks (Simulator::handoff) before its copy starts.
#include <cstdint>
#include <deque>
#include <vector>

#include "engine/policy_api.h"
#include "policy/baselines/local_fcfs.h"
#include "util/time.h"

namespace sl {

class Instance;
class TtftPredictor;

class ArrowLocal : public LocalPolicy {
public:
  const char* name() const override { return "arrow-local"; }
  void enqueue(Request& r) override;
  void remove(Request& r) override;
  void schedule(IterationBuilder& b) override;
  void onToken(Request& r) override;
  void onIterationEnd() override;
  std::size_t size() const override { return inner_.size(); }
  void describe(std::vector<QueueView>& out) const override { inner_.describe(out); }

  /// Predicted seconds to finish every prefill it holds (unstarted ones in
  /// full, started ones their remainder).
  double prefillDelay(const TtftPredictor& p) const;
  /// Requests it holds with a prefill still to do.
  std::int64_t prefillRequests() const { return unstarted_ + static_cast<std::int64_t>(started_.size()); }
  /// Requests it holds whose prefill is done (decoding, or preempted while decoding).
  std::int64_t decoding() const { return decoding_; }
  /// Mean duration of its decode iterations that ended in (now - window, now]; 0 if none.
  double tokenInterval(SimTime now, SimTime window) const;

private:
  enum : std::int32_t { kNone = 0, kUnstarted = 1, kStarted = 2, kDecoding = 3 };
  void detach(Request& r);
  void attachAs(Request& r, std::int32_t state);

  FcfsLocal inner_;
  const Instance* inst_ = nullptr;  // known from the first schedule()
  std::int64_t unstarted_ = 0;
  double sumT_ = 0, sumT2_ = 0;     // over unstarted prefills: Σ target, Σ target²
  std::vector<Request*> started_;   // prefills begun, not done
  std::int64_t decoding_ = 0;
  bool iterDecodes_ = false;
  mutable std::deque<std::pair<SimTime, SimTime>> decodeIters_;  // (end, duration)
};

}  // namespace sl
