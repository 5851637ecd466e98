// Simulator: the serving front end's request path (docs/engine.md "Serving
// front end"). A request the client sends at `sent` reaches the API server
// http_us later (FrontArrival), waits FIFO for one of `api_servers`
// tokenisers, is tokenised (tokenize_us + tokenize_us_per_ktok per 1000
// prompt tokens; FrontDone) and reaches the engine handoff_us later
// (Arrival, whose time is then the request's `arrival`). The way back
// (each token's output delay) is charged where tokens are emitted
// (iteration.cpp) and read by makeRecord and the closed loop. Only runs
// while the front end is on: off, no event of these kinds exists and the
// trajectory is the one without a front end.
#include "engine/simulator.h"

#include <algorithm>

namespace sl {

FrontTimes& Simulator::frontTimes(const Request& r) {
  const auto slot = static_cast<std::size_t>(r.slot);
  if (slot >= frontTimes_.size()) frontTimes_.resize(std::max(slot + 1, 2 * frontTimes_.size()));
  return frontTimes_[slot];
}

void Simulator::onFrontArrival(std::int64_t slot) {
  Request& r = pool_[static_cast<std::size_t>(slot) / kChunk][static_cast<std::size_t>(slot) % kChunk];
  // The client sent it: the next request of an open loop (or a closed
  // loop's look-ahead) is due from here, in the clients' send order.
  pullAfterArrival(slot);
  ++feStats_.requests;
  if (feBusy_ < cfg_.frontend.api_servers) {
    startTokenize(r);
    return;
  }
  feQueue_.push_back(r.slot);
  feStats_.maxWaiting = std::max<std::int64_t>(feStats_.maxWaiting, static_cast<std::int64_t>(feQueue_.size()));
}

void Simulator::startTokenize(Request& r) {
  ++feBusy_;
  events_q_.push(now_ + cfg_.frontend.tokenizeNs(r.input), EventKind::FrontDone, r.slot);
}

void Simulator::onFrontDone(std::int64_t slot) {
  Request& r = pool_[static_cast<std::size_t>(slot) / kChunk][static_cast<std::size_t>(slot) % kChunk];
  --feBusy_;
  if (!feQueue_.empty()) {
    const std::int32_t next = feQueue_.front();
    feQueue_.pop_front();
    startTokenize(pool_[static_cast<std::size_t>(next) / kChunk][static_cast<std::size_t>(next) % kChunk]);
  }
  r.arrival = now_ + secondsToNs(cfg_.frontend.handoff_us * 1e-6);
  r.stateSince = r.arrival;
  const SimTime inbound = r.arrival - frontTimes(r).sent;
  feStats_.inboundSum += inbound;
  feStats_.inboundMax = std::max(feStats_.inboundMax, inbound);
  events_q_.push(r.arrival, EventKind::Arrival, r.slot);
}

}  // namespace sl
