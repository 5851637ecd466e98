// Simulator: the glue to the lazy decode lanes (engine/decode_lane.h) --
// whether lanes run (an observer that is not lane-safe turns them off),
// syncing their members for readers, and a lane-aware policy's watches and
// moves of members.
#include "engine/simulator.h"

#include <stdexcept>
#include <string>

namespace sl {

void LocalPolicy::releaseFromLane(Request&) {
  throw std::logic_error(std::string("local policy '") + name() + "' keeps no decode lane but was asked to release a member");
}

void LocalPolicy::laneReturned(std::span<Request* const> rs) {
  if (!rs.empty()) releaseFromLane(*rs.front());
}

void Simulator::addObserver(SimObserver* o) {
  observers_.push_back(o);
  if (o->laneSafe()) return;
  syncLanes();
  for (auto& in : instances_) in->laneOn_ = false;
}

void Simulator::startLanes() {
  started_ = true;
  laneAware_ = global_->laneAware();
  if (!global_->progressBlind() && !laneAware_) return;
  if (cfg_.speculative.on()) return;  // a lane steps one token per member (docs/engine.md)
  for (const SimObserver* o : observers_)
    if (!o->laneSafe()) return;
  for (const auto& in : instances_)
    if (in->role_ != InstanceRole::Both) return;
  for (auto& in : instances_) {
    in->lane_ = in->policy_->decodeLane();
    in->laneOn_ = in->lane_ != nullptr;
    anyLane_ = anyLane_ || in->laneOn_;
  }
}

void Simulator::laneSyncMember(Request& r, const char* what) {
  if (!laneAware_) laneViolation(what);
  instances_[static_cast<std::size_t>(r.instance)]->lane_->sync(r);
}

std::int32_t Simulator::generatedNow(const Request& r) const {
  if (r.laneIndex < 0) return r.generated;
  return r.generated + instances_[static_cast<std::size_t>(r.instance)]->lane_->unsyncedTokens(r);
}

void Simulator::laneRewatch(Request& r) {
  if (!laneAware_) laneViolation("watchLength");
  instances_[static_cast<std::size_t>(r.instance)]->lane_->rewatch(r);
}

Simulator::WatchBatch::WatchBatch(Simulator& sim) : sim_(sim) {
  for (const auto& in : sim_.instances_)
    if (in->lane_) in->lane_->beginWatchBatch();
}

Simulator::WatchBatch::~WatchBatch() {
  for (const auto& in : sim_.instances_)
    if (in->lane_) in->lane_->endWatchBatch();
}

void Simulator::laneRelease(Request& r, const char* what) {
  if (!laneAware_) laneViolation(what);
  instances_[static_cast<std::size_t>(r.instance)]->policy_->releaseFromLane(r);
}

void Simulator::laneViolation(const char* what) const {
  throw std::logic_error(std::string("policy '") + global_->name() + "' says it is progress-blind but calls " + what +
                         " on a request whose decode progress is kept lazily");
}

void Simulator::syncLanes() const {
  if (!anyLane_) return;
  for (const auto& in : instances_)
    if (in->lane_) in->lane_->syncAll();
}

}  // namespace sl
