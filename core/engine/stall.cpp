// Simulator: the stall guard. A run whose requests can no longer progress
// must end instead of ticking forever; stallFallback is the one place that
// decides what happens then.
#include "engine/simulator.h"

namespace sl {

// Nothing is running, moving or due, yet requests are in flight: only a
// periodic tick could still change anything. Two such ticks in a row fall
// back (stallFallback) instead of ticking forever.
bool Simulator::idleWithWork() const {
  if (inFlight_ == 0 && syntheticInFlight_ == 0) return false;
  if (feInFlight_ > 0) return false;  // requests on their way through the front end
  // Open loop: arrivals still to come can change things. A closed loop only
  // issues requests on completions, so it can stall with its clients waiting
  // (checked last, below: whether a client's request is still to arrive).
  if (!workloadDone_ && !feedback_) return false;
  for (const auto& in : instances_)
    if (in->busy_ || in->wakePending_) return false;
  if (!net_.flows().empty()) return false;
  for (const Migration& m : migrations_)
    if (m.active && m.flow == -2) return false;
  if (messages_.size() > freeMessages_.size()) return false;
  if (!workloadDone_) {  // closed loop: a request not yet arrived (never routed) is progress to come
    bool pending = false;
    forEachActive([&](const Request& r) { pending = pending || (r.instance < 0 && !r.synthetic); });
    if (pending) return false;
  }
  return true;
}

// A periodic tick (probe, monitor tick, timer): the second one in a row that
// finds the cluster idle with work falls back (stallFallback).
void Simulator::checkStall() {
  if (!idleWithWork()) {
    stallChecks_ = 0;
    return;
  }
  if (++stallChecks_ >= 2) stallFallback(true);
}

// The idle-stall fallback, for both ways a run finds nothing left to move
// while requests are in flight: the event queue ran dry (step), or the stall
// guard's second idle tick in a row (`tick`, checkStall). Copies queued at
// their destinations may be waiting on each other: the newest queued
// stop-and-copy is abandoned (transfer.cpp) and the run goes on (true).
// With none to abandon the run ends (false); after idle ticks as stalled().
bool Simulator::stallFallback(bool tick) {
  if (abandonNewestQueuedCopy()) {
    if (tick) stallChecks_ = 0;
    return true;
  }
  if (tick) stalled_ = true;
  done_ = true;
  return false;
}

}  // namespace sl
