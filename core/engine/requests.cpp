// Simulator: the request pool (stable addresses, reused slots, handles that
// go stale), a request's local queue and state changes (with the blocking
// breakdown's accounting, engine/record.h) and the observers' request events.
#include "engine/simulator.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace sl {

const char* reqStateName(ReqState s) {
  switch (s) {
    case ReqState::Waiting: return "waiting";
    case ReqState::Running: return "running";
    case ReqState::Swapped: return "swapped";
    case ReqState::Migrating: return "migrating";
    case ReqState::HandoffWait: return "handoff";
    case ReqState::Finished: return "finished";
  }
  return "?";
}

const char* phaseName(Phase p) {
  switch (p) {
    case Phase::Prefill: return "prefill";
    case Phase::Reasoning: return "reasoning";
    case Phase::Answering: return "answering";
  }
  return "?";
}

const char* requestEventName(RequestEvent e) {
  switch (e) {
    case RequestEvent::Arrived: return "arrived";
    case RequestEvent::FirstScheduled: return "first_scheduled";
    case RequestEvent::Preempted: return "preempted";
    case RequestEvent::Resumed: return "resumed";
    case RequestEvent::ReasoningEnd: return "reasoning_end";
    case RequestEvent::MigrationStart: return "migration_start";
    case RequestEvent::MigrationEnd: return "migration_end";
    case RequestEvent::HandoffStart: return "handoff_start";
    case RequestEvent::Finished: return "finished";
    case RequestEvent::Aborted: return "aborted";
  }
  return "?";
}

Request* Simulator::allocRequest() {
  if (freeSlots_.empty()) {
    const auto base = static_cast<std::int32_t>(pool_.size() * kChunk);
    pool_.push_back(std::make_unique<Request[]>(kChunk));
    if (generationFloor_ > 0)
      for (std::size_t i = 0; i < kChunk; ++i) pool_.back()[i].generation = generationFloor_;
    for (std::size_t i = kChunk; i-- > 0;) freeSlots_.push_back(base + static_cast<std::int32_t>(i));
  }
  const std::int32_t slot = freeSlots_.back();
  freeSlots_.pop_back();
  Request* r = &pool_[static_cast<std::size_t>(slot) / kChunk][static_cast<std::size_t>(slot) % kChunk];
  const std::uint32_t generation = r->generation + 1;  // handles to the slot's last request go stale
  *r = Request{};
  r->slot = slot;
  r->generation = generation;
  return r;
}

Request* Simulator::resolve(RequestHandle h) {
  return const_cast<Request*>(static_cast<const Simulator&>(*this).resolve(h));
}

const Request* Simulator::resolve(RequestHandle h) const {
  const Request* r = peek(h);
  if (r && r->laneIndex >= 0) instances_[static_cast<std::size_t>(r->instance)]->lane_->sync(const_cast<Request&>(*r));
  return r;
}

Request& Simulator::request(RequestHandle h) {
  Request* r = resolve(h);
  if (!r)
    throw std::logic_error("stale request handle (slot " + std::to_string(h.slot) + ", generation " +
                           std::to_string(h.generation) + "): the request has finished");
  return *r;
}

void Simulator::enqueueLocal(Instance& in, Request& r) {
  assert(!r.heldLocally);
  r.heldLocally = true;
  in.queuedPrefill_ += r.prefillTarget - r.prefilled;
  in.policy_->enqueue(r);
}

void Simulator::removeLocal(Instance& in, Request& r) {
  if (r.heldLocally) {
    r.heldLocally = false;
    in.queuedPrefill_ -= r.prefillTarget - r.prefilled;
  }
  in.policy_->remove(r);
}

bool Simulator::releaseIdlePool() {
  std::uint32_t maxGeneration = generationFloor_;
  for (const auto& chunk : pool_)
    for (std::size_t i = 0; i < kChunk; ++i) {
      if (chunk[i].slot >= 0) return false;
      maxGeneration = std::max(maxGeneration, chunk[i].generation);
    }
  generationFloor_ = maxGeneration;
  std::vector<std::unique_ptr<Request[]>>().swap(pool_);
  std::vector<std::int32_t>().swap(freeSlots_);
  return true;
}

void Simulator::releaseRequest(Request* r) {
  countProbe(*r, -1);
  freeSlots_.push_back(r->slot);
  r->slot = -1;
  r->state = ReqState::Finished;
}

void Simulator::openBlocking(Request& r) {
  r.blockingStart = now_;
  const auto slot = static_cast<std::size_t>(r.slot);
  if (slot >= blockingSplits_.size()) blockingSplits_.resize(std::max(slot + 1, 2 * blockingSplits_.size()));
  blockingSplits_[slot] = BlockingSplit{};
}

void Simulator::accountBlocking(Request& r, SimTime t) {
  BlockingSplit& b = blockingSplit(r);
  const SimTime from = std::max(r.stateSince, r.blockingStart);
  if (t > from) {
    switch (r.state) {
      case ReqState::Running: (b.landed ? b.destQueue : b.localQueue) += t - from; break;
      case ReqState::Swapped:
      case ReqState::Waiting: (b.byMigrant ? b.displaced : b.preempted) += t - from; break;
      case ReqState::Migrating: {
        const SimTime f = b.flowSince < 0 ? t : std::clamp(b.flowSince, from, t);
        b.destWait += f - from;
        b.transfer += t - f;
        break;
      }
      default: b.localQueue += t - from; break;  // no other state can hold a request past </think>
    }
  }
}

void Simulator::closeBlocking(Request& r, SimTime t) {
  accountBlocking(r, t);
  r.blocking = t - r.blockingStart;
  r.blockingStart = -1;
  [[maybe_unused]] const BlockingSplit& b = blockingSplit(r);
  assert(b.transfer + b.destWait + b.displaced + b.preempted + b.destQueue + b.localQueue == r.blocking);
}

void Simulator::setState(Request& r, ReqState s) {
  if (r.blockingStart >= 0) [[unlikely]] {
    accountBlocking(r, now_);
    BlockingSplit& b = blockingSplit(r);
    if (r.state == ReqState::Migrating) b.flowSince = -1;
    if (s == ReqState::Running) b.byMigrant = false;
  }
  const SimTime dt = now_ - r.stateSince;
  switch (r.state) {
    case ReqState::Swapped: r.swappedTime += dt; r.preemptedTime += dt; break;
    case ReqState::Waiting: if (r.everPreempted) r.preemptedTime += dt; break;
    case ReqState::Migrating: r.migratingTime += dt; break;
    case ReqState::HandoffWait: r.handoffTime += dt; break;
    default: break;
  }
  if (r.state == ReqState::Waiting && s == ReqState::Running) r.everPreempted = false;
  countProbe(r, -1);
  r.state = s;
  countProbe(r, 1);
  r.stateSince = now_;
}

void Simulator::notify(RequestEvent e, const Request& r, int inst) {
  if (r.synthetic) return;  // observers see user requests only (outputs, GUI timelines)
  for (SimObserver* o : observers_) o->onRequestEvent(e, r, inst, now_);
}

}  // namespace sl
