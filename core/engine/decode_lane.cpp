#include "engine/decode_lane.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace sl {

namespace {
constexpr std::size_t kLogSyncAt = 1024;  // steps kept before every member is synced and the log emptied
}  // namespace

std::size_t DecodeLane::bucketOf(const Request& r) const {
  // The step (mod blockSize) at which r crosses its next block boundary:
  // constant while it is a member (a sync moves both terms by the same).
  const std::int64_t spare = static_cast<std::int64_t>(r.blocksGpu) * blockSize_ - r.kvTokens;
  return static_cast<std::size_t>((r.laneSince + spare) % blockSize_);
}

void DecodeLane::join(Request& r, std::int32_t blockSize, std::int64_t until) {
  assert(steady(r, blockSize) && r.laneIndex < 0 && !stepping_);
  if (blockSize_ == 0) {
    blockSize_ = blockSize;
    buckets_.assign(static_cast<std::size_t>(blockSize), 0);
  }
  r.laneSince = steps_;
  r.laneIndex = static_cast<std::int32_t>(members_.size());
  r.laneTicket = nextTicket_++;
  members_.push_back(&r);
  r.laneBucket = static_cast<std::int32_t>(bucketOf(r));
  ++buckets_[static_cast<std::size_t>(r.laneBucket)];
  const std::int64_t L = static_cast<std::int64_t>(r.kvTokens) + 1;
  s1_ += L;
  s2_ += L * L;
  if (until >= 0) {
    assert(until > steps_ && r.lengthWatch < 0);
    due_.push_back(Due{until, &r, r.laneTicket});
    std::push_heap(due_.begin(), due_.end(), dueLater);
    return;
  }
  const std::int64_t left = static_cast<std::int64_t>(r.reasoning) + r.answer - r.generated;  // >= 1
  finishes_.push_back(Finish{steps_ + left - 1, r.arrival, r.id, &r, r.laneTicket});
  std::push_heap(finishes_.begin(), finishes_.end(), later<Finish>);
  if (r.lengthWatch >= 0) pushWatch(r);
}

std::int64_t DecodeLane::nextDue() {
  while (!due_.empty() && !isMember(*due_.front().r, due_.front().ticket)) {  // left since
    std::pop_heap(due_.begin(), due_.end(), dueLater);
    due_.pop_back();
  }
  return due_.empty() ? std::numeric_limits<std::int64_t>::max() : due_.front().step;
}

void DecodeLane::takeDue(std::vector<Request*>& out) {
  assert(!stepping_);
  while (nextDue() <= steps_) {
    Request* r = due_.front().r;
    assert(due_.front().step == steps_);
    std::pop_heap(due_.begin(), due_.end(), dueLater);
    due_.pop_back();
    leave(*r);
    out.push_back(r);
  }
}

void DecodeLane::pushWatch(Request& r) {
  // With g = r.generated + unsyncedTokens(r) (the synced count; no sync
  // needed): step steps_ + j produces token g + j + 1, and emitToken's test
  // is input + generated >= watch.
  const std::int64_t g = static_cast<std::int64_t>(r.generated) + unsyncedTokens(r);
  const std::int64_t ahead = static_cast<std::int64_t>(r.lengthWatch) - r.input - g - 1;
  watches_.push_back(Watch{steps_ + std::max<std::int64_t>(0, ahead), r.arrival, r.id, &r, r.laneTicket, r.lengthWatch});
  if (batching_) {
    batchPushed_ = true;
    return;
  }
  std::push_heap(watches_.begin(), watches_.end(), later<Watch>);
  // Entries of members that left or were watched anew stay until their step:
  // dropped in one pass once they outnumber the members (bounded memory).
  if (watches_.size() > 2 * members_.size() + 64) rebuildWatches();
}

void DecodeLane::rebuildWatches() {
  std::erase_if(watches_, [&](const Watch& w) { return !isMember(*w.r, w.ticket) || w.r->lengthWatch != w.threshold; });
  std::make_heap(watches_.begin(), watches_.end(), later<Watch>);
}

void DecodeLane::endWatchBatch() {
  assert(batching_);
  batching_ = false;
  if (!batchPushed_) return;
  batchPushed_ = false;
  rebuildWatches();
}

void DecodeLane::rewatch(Request& r) {
  assert(r.laneIndex >= 0);
  if (r.lengthWatch >= 0) pushWatch(r);  // an older entry goes stale (its threshold no longer matches)
}

bool DecodeLane::release(Request& r) {
  assert(r.laneIndex >= 0);
  if (!stepping_) {
    leave(r);
    return true;
  }
  sync(r);
  if (std::find(leaving_.begin(), leaving_.end(), &r) == leaving_.end()) leaving_.push_back(&r);
  return false;
}

void DecodeLane::removeMember(Request& r) {
  const auto i = static_cast<std::size_t>(r.laneIndex);
  members_[i] = members_.back();
  members_[i]->laneIndex = static_cast<std::int32_t>(i);
  members_.pop_back();
  r.laneIndex = -1;
}

void DecodeLane::leave(Request& r) {
  assert(r.laneIndex >= 0 && !stepping_);
  sync(r);  // (the engine may have released its blocks already: the bucket is the one it joined)
  --buckets_[static_cast<std::size_t>(r.laneBucket)];
  const std::int64_t L = static_cast<std::int64_t>(r.kvTokens) + 1;
  s1_ -= L;
  s2_ -= L * L;
  removeMember(r);  // its heap entry goes stale (the ticket no longer matches)
  if (members_.empty()) {
    finishes_.clear();
    watches_.clear();
    due_.clear();
    s1_ = s2_ = 0;
  }
}

std::vector<Request*> DecodeLane::leaveAll() {
  std::vector<Request*> out(members_.begin(), members_.end());
  dissolve();
  std::sort(out.begin(), out.end(), arrivalOrder);
  return out;
}

void DecodeLane::dissolve() {
  assert(!stepping_);
  syncAll();
  for (Request* r : members_) r->laneIndex = -1;
  members_.clear();
  finishes_.clear();
  watches_.clear();
  due_.clear();
  std::fill(buckets_.begin(), buckets_.end(), 0);
  s1_ = s2_ = 0;
}

std::int64_t DecodeLane::blockDemand() const {
  if (members_.empty()) return 0;
  return buckets_[static_cast<std::size_t>(steps_ % blockSize_)];
}

std::int64_t DecodeLane::endStep(SimTime end, std::vector<Request*>& finishers, std::vector<Request*>& watchers,
                                 std::vector<Request*>& leavers) {
  if (!stepping_) return 0;
  stepping_ = false;
  const auto n = static_cast<std::int64_t>(members_.size());
  log_.push_back(end);
  const std::int64_t done = steps_++;
  // Every L grows by one: Σ(L+1) = Σ L + n, Σ(L+1)² = Σ L² + 2 Σ L + n.
  s2_ += 2 * s1_ + n;
  s1_ += n;
  while (!finishes_.empty() && finishes_.front().step <= done) {
    const Finish f = finishes_.front();
    std::pop_heap(finishes_.begin(), finishes_.end(), later<Finish>);
    finishes_.pop_back();
    if (!isMember(*f.r, f.ticket)) continue;  // left the lane since
    assert(f.step == done);
    sync(*f.r);
    finishers.push_back(f.r);
  }
  while (!watches_.empty() && watches_.front().step <= done) {
    const Watch w = watches_.front();
    std::pop_heap(watches_.begin(), watches_.end(), later<Watch>);
    watches_.pop_back();
    // Left the lane since, or watched anew (or already told) since.
    if (!isMember(*w.r, w.ticket) || w.r->lengthWatch != w.threshold) continue;
    assert(w.step == done);
    sync(*w.r);
    w.r->lengthWatch = -1;
    watchers.push_back(w.r);
  }
  if (!leaving_.empty()) {
    std::sort(leaving_.begin(), leaving_.end(), arrivalOrder);
    for (Request* r : leaving_)
      if (isMember(*r, r->laneTicket)) {  // (one that left since, e.g. finished, is not handed back)
        leave(*r);
        leavers.push_back(r);
      }
    leaving_.clear();
  }
  if (log_.size() >= kLogSyncAt) syncAll();
  return n;
}

void DecodeLane::sync(Request& r) {
  const std::int64_t d = steps_ - r.laneSince;  // steps completed since the last sync
  // A step takes its blocks when it starts (as addDecode does): a step under
  // way has them already, its token not yet.
  const std::int64_t allocated = d + (stepping_ ? 1 : 0);
  const std::int64_t spare = static_cast<std::int64_t>(r.blocksGpu) * blockSize_ - r.kvTokens;
  // Steps j = spare, spare + blockSize, ... (j < allocated) each took one
  // block (spare may be blockSize after a sync within a step that grew it).
  const std::int64_t grown = allocated > spare ? (allocated - 1 - spare) / blockSize_ + 1 : 0;
  r.blocksGpu += static_cast<std::int32_t>(grown);
  if (d <= 0) return;
  const auto di = static_cast<std::int32_t>(d);
  r.generated += di;
  r.kvTokens += di;
  r.quantumUsed += di;
  const SimTime* t = log_.data() + (r.laneSince - logBase_);
  // A member's tokens are all answer tokens past the first, or (PascalLocal)
  // all reasoning tokens before the last: only the former pace the answer.
  if (r.generated - di > r.reasoning) r.pacer.onTokens(t, d);
  r.gLast = t[d - 1];
  r.laneSince = steps_;
}

void DecodeLane::syncAll() {
  for (Request* r : members_) sync(*r);
  logBase_ = steps_;
  log_.clear();
}

}  // namespace sl
