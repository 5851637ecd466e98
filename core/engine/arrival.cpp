// Simulator: arrivals -- pulling requests from the workload (open loop: each
// arrival pulls the next; closed loop: completions hand out follow-ups),
// routing them and waking their instance, and requests a policy injects
// (synthetic).
#include "engine/simulator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sl {

void Simulator::scheduleNextArrival() {
  if (!workload_ || !workload_->next(nextSpec_)) {
    // A closed loop's next() == false only means "nothing to issue now".
    if (!feedback_ || workload_->finished()) workloadDone_ = true;
    return;
  }
  const std::int32_t slot = pushArrival(nextSpec_);
  if (feedback_) lookaheadSlot_ = slot;
}

std::int32_t Simulator::pushArrival(const RequestSpec& spec) {
  Request* r = allocRequest();
  r->id = spec.id;
  r->arrival = std::max(spec.arrival, now_);
  r->input = std::max(1, spec.input);
  r->reasoning = std::max(0, spec.reasoning);
  r->answer = std::max(1, spec.answer);
  r->domain = spec.domain;
  r->prefillTarget = r->input;
  r->stateSince = r->arrival;
  prefixOnArrival(*r, &spec);
  if (frontOn_) {  // the client sends it; the engine sees it after the front end (frontend.cpp)
    // An open loop pulls its next request when the previous one reaches the
    // API server, http_us after its send: the next send may lie up to that
    // much in the past and keeps its time.
    const SimTime http = secondsToNs(cfg_.frontend.http_us * 1e-6);
    FrontTimes& ft = frontTimes(*r);
    ft = FrontTimes{};
    ft.sent = std::max(spec.arrival, now_ - http);
    r->arrival = ft.sent;
    r->stateSince = ft.sent;
    ++feInFlight_;
    events_q_.push(ft.sent + http, EventKind::FrontArrival, r->slot);
    return r->slot;
  }
  events_q_.push(r->arrival, EventKind::Arrival, r->slot);
  return r->slot;
}

void Simulator::clientRequestDone(std::int64_t id, SimTime at) {
  if (workload_->onRequestDone(id, at, nextSpec_)) {
    pushArrival(nextSpec_);  // the follow-up, beside next()'s look-ahead
    return;
  }
  pollWorkload();  // the source may be over now
}

void Simulator::pollWorkload() {
  if (feedback_ && lookaheadSlot_ < 0 && !workloadDone_) scheduleNextArrival();
}

void Simulator::pullAfterArrival(std::int64_t slot) {
  // Open loop: every arrival is next()'s look-ahead and pulls the next one.
  // A closed loop's follow-ups (clientRequestDone) do not.
  if (!feedback_) {
    scheduleNextArrival();
  } else if (slot == lookaheadSlot_) {
    lookaheadSlot_ = -1;
    scheduleNextArrival();
  }
}

void Simulator::onArrival(std::int64_t slot) {
  Request& r = pool_[static_cast<std::size_t>(slot) / kChunk][static_cast<std::size_t>(slot) % kChunk];
  ++arrived_;
  ++inFlight_;
  ++probeArrivals_;
  if (frontOn_) {
    --feInFlight_;  // it pulled the next request when it reached the API server
  } else {
    pullAfterArrival(slot);
  }
  global_->onArrival(r);
  const int dst = global_->route(r);
  // A policy bug, not user input: never silently reroute (docs/engine.md).
  if (dst < 0 || dst >= numInstances())
    throw std::logic_error(std::string("policy '") + global_->name() + "' routed request " + std::to_string(r.id) +
                           " to instance " + std::to_string(dst) + " of " + std::to_string(numInstances()));
  Instance& in = instance(dst);
  r.instance = dst;
  countProbe(r, 1);
  ++in.assigned_;
  in.assignedTokens_ += r.input;
  fingerprint_ = hashCombine(fingerprint_, static_cast<std::uint64_t>(dst));
  notify(RequestEvent::Arrived, r, dst);
  // A prompt that cannot be admitted even by an empty instance would block it
  // forever (vLLM rejects it the same way). One that fits but later outgrows
  // the cache is aborted by startIteration when it runs alone.
  if (in.blocksFor(r.input) + in.cfg_.watermarkBlocks > in.cfg_.gpuBlocks) {
    abortRequest(in, r);
    return;
  }
  enqueueLocal(in, r);
  wake(dst);
}

RequestHandle Simulator::injectRequest(int i, std::int32_t input, std::int32_t output) {
  if (i < 0 || i >= numInstances())
    throw std::logic_error("injectRequest: no instance " + std::to_string(i) + " of " + std::to_string(numInstances()));
  Request* r = allocRequest();
  ++synthetic_.injected;
  r->id = -synthetic_.injected;
  r->synthetic = true;
  r->arrival = now_;
  r->input = std::max(1, input);
  r->reasoning = 0;
  r->answer = std::max(0, output);
  r->prefillTarget = r->input;
  r->stateSince = now_;
  r->instance = i;
  countProbe(*r, 1);
  prefixOnArrival(*r, nullptr);
  Instance& in = instance(i);
  ++in.assigned_;
  in.assignedTokens_ += r->input;
  ++syntheticInFlight_;
  if (in.blocksFor(r->input) + in.cfg_.watermarkBlocks > in.cfg_.gpuBlocks) {  // can never fit: as for users
    const RequestHandle h = handleOf(*r);
    abortRequest(in, *r);
    return h;
  }
  enqueueLocal(in, *r);
  wake(i);
  return handleOf(*r);
}

void Simulator::wake(int i) {
  Instance& in = instance(i);
  if (in.busy_ || in.wakePending_) return;
  in.wakePending_ = true;
  events_q_.push(now_, EventKind::InstanceWake, i);
}

}  // namespace sl
