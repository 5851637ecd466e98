#include "policy/arrow/arrow_local.h"

#include <algorithm>

#include "engine/instance.h"
#include "engine/request.h"
#include "policy/arrow/ttft_predictor.h"

namespace sl {

// Request::queue is this policy's scratch: which of its counts holds the request.

void ArrowLocal::attachAs(Request& r, std::int32_t state) {
  r.queue = state;
  switch (state) {
    case kUnstarted:
      ++unstarted_;
      sumT_ += r.prefillTarget;
      sumT2_ += static_cast<double>(r.prefillTarget) * r.prefillTarget;
      break;
    case kStarted:
      started_.push_back(&r);
      break;
    case kDecoding:
      ++decoding_;
      break;
    default:
      break;
  }
}

void ArrowLocal::detach(Request& r) {
  switch (r.queue) {
    case kUnstarted:
      --unstarted_;
      sumT_ -= r.prefillTarget;
      sumT2_ -= static_cast<double>(r.prefillTarget) * r.prefillTarget;
      if (unstarted_ == 0) sumT_ = sumT2_ = 0;  // no drift from float sums
      break;
    case kStarted:
      std::erase(started_, &r);
      break;
    case kDecoding:
      --decoding_;
      break;
    default:
      break;
  }
  r.queue = kNone;
}

void ArrowLocal::enqueue(Request& r) {
  r.queue = kNone;
  if (r.prefillDone()) attachAs(r, kDecoding);
  else attachAs(r, r.prefilled > 0 ? kStarted : kUnstarted);
  inner_.enqueue(r);
}

void ArrowLocal::remove(Request& r) {
  detach(r);
  inner_.remove(r);
}

void ArrowLocal::schedule(IterationBuilder& b) {
  inst_ = &b.instance();
  inner_.schedule(b);
  iterDecodes_ = false;
  for (const BatchEntry& e : b.instance().batch()) {
    if (!e.prefill) {
      iterDecodes_ = true;
      continue;
    }
    // A prefill chunk: the request's prefill has begun (or begun again after
    // a recompute preemption dropped its KV).
    if (e.r->queue != kStarted) {
      detach(*e.r);
      attachAs(*e.r, kStarted);
    }
  }
}

void ArrowLocal::onToken(Request& r) {
  if (r.queue == kDecoding) return;
  detach(r);  // its prefill just completed (first output token)
  attachAs(r, kDecoding);
}

void ArrowLocal::onIterationEnd() {
  if (!inst_ || !iterDecodes_) return;
  decodeIters_.emplace_back(inst_->iterationEnd(), inst_->iterationEnd() - inst_->iterationStart());
  iterDecodes_ = false;
  // Bound the memory: nothing older than a minute is ever asked for (the
  // window knob's range ends at 60 s).
  while (!decodeIters_.empty() && decodeIters_.front().first < inst_->iterationEnd() - 60 * kNsPerSecond)
    decodeIters_.pop_front();
}

double ArrowLocal::tokenInterval(SimTime now, SimTime window) const {
  SimTime sum = 0;
  std::int64_t n = 0;
  for (auto it = decodeIters_.rbegin(); it != decodeIters_.rend() && it->first > now - window; ++it) {
    sum += it->second;
    ++n;
  }
  return n ? nsToSeconds(sum) / static_cast<double>(n) : 0.0;
}

double ArrowLocal::prefillDelay(const TtftPredictor& p) const {
  const TtftFit& f = p.fitInfo();
  double d = f.a * static_cast<double>(unstarted_) + f.b * sumT_ + f.c * sumT2_;
  for (const Request* r : started_) d += p.remaining(r->prefillTarget, r->prefilled);
  return std::max(0.0, d);
}

}  // namespace sl
