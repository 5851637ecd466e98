// Simulator: inter-instance KV transfers — stop-and-copy migration,
// disaggregated hand-off and live (multi-round) migration (10-engine.md).
#include <algorithm>
#include <cassert>

#include "engine/simulator.h"

namespace sl {

void GlobalPolicy::onPrefillDone(Request& r) {
  // Default disaggregated hand-off: the decode-capable instance with the
  // fewest assigned tokens (lowest index on ties).
  int best = -1;
  for (int i = 0; i < sim_->numInstances(); ++i) {
    const Instance& in = sim_->instance(i);
    if (in.role() == InstanceRole::Prefill) continue;
    if (best < 0 || in.assignedTokens() < sim_->instance(best).assignedTokens()) best = i;
  }
  sim_->handoff(r, best < 0 ? r.instance : best);
}

std::int64_t Simulator::blocksToHold(const Request& r) const {
  const Instance& in = instance(0);
  if (r.prefillDone()) return in.blocksFor(static_cast<std::int64_t>(r.kvTokens) + 1);
  return in.blocksFor(r.prefillTarget);
}

void Simulator::resourcesFor(int src, int dst, int& a, int& b) const {
  const int ns = nodeOf_[static_cast<std::size_t>(src)], nd = nodeOf_[static_cast<std::size_t>(dst)];
  if (ns == nd) {
    a = linkOutRes_[static_cast<std::size_t>(src)];
    b = linkInRes_[static_cast<std::size_t>(dst)];
  } else {
    a = nicRes_[static_cast<std::size_t>(2 * ns)];
    b = nicRes_[static_cast<std::size_t>(2 * nd + 1)];
  }
}

std::int64_t Simulator::newMigration(Request& r, int src, int dst, bool live, bool handoff) {
  std::int64_t id;
  if (!freeMigrations_.empty()) {
    id = freeMigrations_.back();
    freeMigrations_.pop_back();
  } else {
    id = static_cast<std::int64_t>(migrations_.size());
    migrations_.emplace_back();
  }
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  m = Migration{};
  assert(r.migration < 0);  // one transfer per request at a time
  r.migration = static_cast<std::int32_t>(id);
  m.r = &r;
  m.src = src;
  m.dst = dst;
  m.live = live;
  m.handoff = handoff;
  m.active = true;
  return id;
}

bool Simulator::migrate(Request& r, int dst, bool displace) {
  if (r.laneIndex >= 0) [[unlikely]]
    laneSyncMember(r, "migrate");
  if (dst < 0 || dst >= numInstances() || dst == r.instance) return false;
  if (r.state == ReqState::Finished || r.state == ReqState::Migrating || r.state == ReqState::HandoffWait)
    return false;
  if (r.migration >= 0) return false;  // already moving
  // Its copy would wait forever for room the destination can never have.
  if (r.kvTokens > 0 && blocksToHold(r) > instance(dst).cfg_.gpuBlocks) return false;
  bool inIteration = r.batchIndex >= 0;
  if (r.laneIndex >= 0) [[unlikely]] {
    inIteration = instance(r.instance).lane_->stepping();  // a member of the running step
    laneRelease(r, "migrate");  // it moves: its progress is kept eagerly from now on
  }
  const std::int64_t id = newMigration(r, r.instance, dst, false, false);
  migrations_[static_cast<std::size_t>(id)].displace = displace;
  Instance& src = instance(r.instance);
  if (src.busy_ && inIteration) {
    r.pendingMigration = true;  // leaves at the end of the running iteration
    pendingStops_[static_cast<std::size_t>(src.id_)].push_back(id);
    return true;
  }
  beginStopAndCopy(id);
  return true;
}

void Simulator::handoff(Request& r, int dst) {
  assert(r.state == ReqState::HandoffWait);
  if (dst == r.instance || dst < 0) {  // decode where it prefilled
    Instance& in = instance(r.instance);
    setState(r, ReqState::Running);
    enqueueLocal(in, r);
    wake(in.id_);
    return;
  }
  const std::int64_t id = newMigration(r, r.instance, dst, false, true);
  migrations_[static_cast<std::size_t>(id)].queuedSeq = ++queuedSeq_;
  incoming_[static_cast<std::size_t>(dst)].push_back(id);
  tryStartIncoming(dst);
  if (!incoming_[static_cast<std::size_t>(dst)].empty()) resolveWaitCycles();
}

bool Simulator::cancelHandoff(Request& r) {
  if (r.state != ReqState::HandoffWait || r.migration < 0) return false;
  const std::int64_t id = r.migration;
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  auto& q = incoming_[static_cast<std::size_t>(m.dst)];
  const auto it = std::find(q.begin(), q.end(), id);
  if (!m.handoff || it == q.end()) return false;  // its copy has started
  q.erase(it);
  const int dst = m.dst;
  m.active = false;
  m.r = nullptr;
  r.migration = -1;
  freeMigrations_.push_back(id);
  tryStartIncoming(dst);  // the copies queued behind it may fit now
  return true;
}

bool Simulator::retargetHandoff(Request& r, int dst) {
  if (dst < 0 || dst >= numInstances() || !cancelHandoff(r)) return false;
  handoff(r, dst);
  return true;
}

// The request leaves its source's queues and waits (FCFS) for the destination
// to reserve its blocks; its source keeps the KV until the copy ends.
void Simulator::beginStopAndCopy(std::int64_t id) {
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  Request& r = *m.r;
  Instance& src = instance(m.src);
  if (r.kvTokens > 0 && blocksToHold(r) > instance(m.dst).cfg_.gpuBlocks) {
    // It grew (while deferred, or during live rounds) past what the
    // destination can ever hold: the copy would wait forever. It stays.
    if (m.live) {
      cancelLive(r);
    } else {
      r.pendingMigration = false;
      m.active = false;
      m.r = nullptr;
      r.migration = -1;
      freeMigrations_.push_back(id);
    }
    return;
  }
  if (!m.live) {
    removeLocal(src, r);
    m.before = r.state;
    setState(r, ReqState::Migrating);
    notify(RequestEvent::MigrationStart, r, m.src);
    if (r.kvTokens == 0 && r.blocksGpu == 0 && r.blocksCpu == 0) {  // nothing to copy: re-route
      completeMigration(id);
      return;
    }
    const int di = m.dst;  // `m` may move: abandoning resumes requests, policies may migrate
    m.queuedSeq = ++queuedSeq_;
    incoming_[static_cast<std::size_t>(di)].push_back(id);
    tryStartIncoming(di);
    if (!incoming_[static_cast<std::size_t>(di)].empty()) resolveWaitCycles();
    return;
  }
  // Live: final stop-and-copy of the remainder. If the destination lacks the
  // blocks the request grew into meanwhile, the migration is abandoned and the
  // request keeps running on its source (as Llumnix aborts it). Waiting in the
  // destination's queue instead could deadlock: the copies ahead of it may be
  // waiting for the very blocks this migration has reserved.
  Instance& dst = instance(m.dst);
  const std::int64_t need = blocksToHold(r);
  const std::int64_t more = need - m.reserved;
  if (more > dst.freeGpuBlocks()) {
    cancelLive(r);
    return;
  }
  removeLocal(src, r);
  setState(r, ReqState::Migrating);
  notify(RequestEvent::MigrationStart, r, m.src);
  if (more > 0) {
    dst.gpuReserved_ += more;
    m.reserved = need;
    prefixReclaim(dst);
  }
  startFlow(id, r.kvTokens - m.copiedTokens);
}

void Simulator::tryStartIncoming(int di) {
  auto& q = incoming_[static_cast<std::size_t>(di)];
  Instance& dst = instance(di);
  while (!q.empty()) {
    const std::int64_t id = q.front();
    Migration& m = migrations_[static_cast<std::size_t>(id)];
    const std::int64_t need = blocksToHold(*m.r) - m.reserved;
    if (need > dst.freeGpuBlocks() && !(m.displace && !dst.busy_ && displaceFor(dst, *m.r, need))) break;
    dst.gpuReserved_ += std::max<std::int64_t>(0, need);
    m.reserved += std::max<std::int64_t>(0, need);
    prefixReclaim(dst);
    q.erase(q.begin());
    if (m.handoff) {
      setState(*m.r, ReqState::Migrating);
      notify(RequestEvent::MigrationStart, *m.r, m.src);
    }
    startFlow(id, m.r->kvTokens - m.copiedTokens);
  }
}

std::int64_t Simulator::promisedBlocks(int di) const {
  std::int64_t n = 0;
  for (const std::int64_t id : incoming_[static_cast<std::size_t>(di)]) {
    const Migration& m = migrations_[static_cast<std::size_t>(id)];
    n += std::max<std::int64_t>(0, blocksToHold(*m.r) - m.reserved);
  }
  // Deferred stop-and-copies (decided during their source's iteration):
  // a few per source at most, gone at that iteration's end.
  for (const auto& pend : pendingStops_)
    for (const std::int64_t id : pend) {
      const Migration& m = migrations_[static_cast<std::size_t>(id)];
      if (m.active && m.r && m.dst == di && !m.live && m.r->pendingMigration) n += blocksToHold(*m.r);
    }
  return n;
}

// Wait cycles among queued copies (10-engine.md: a stop-and-copy waits FCFS
// at its destination for room). A queued copy holds its request's blocks on
// its source, so copies can wait on each other for ever: A -> B waits for
// blocks on B that a B -> A copy holds while it waits for A. Room on an
// instance eventually comes from everything but the copies stuck waiting to
// leave it (its residents finish, started copies land and finish), so the
// copies that can never start are the greatest set S with: a copy is in S if
// one ahead of it in its destination's queue is, or its need exceeds its
// destination's capacity less the blocks held there by copies of S leaving
// it. Found by elimination from "all queued copies"; the newest stuck
// stop-and-copy is abandoned (its request resumes on its source) until S is
// empty. Hand-offs are never abandoned (they have nowhere to resume).
void Simulator::resolveWaitCycles() {
  const auto n = static_cast<std::size_t>(numInstances());
  std::vector<std::int64_t> held(n, 0);
  std::vector<char> stuck(migrations_.size(), 0);
  for (;;) {
    std::fill(held.begin(), held.end(), 0);
    bool any = false;
    for (const auto& q : incoming_)
      for (const std::int64_t id : q) {
        const Migration& m = migrations_[static_cast<std::size_t>(id)];
        stuck[static_cast<std::size_t>(id)] = 1;
        held[static_cast<std::size_t>(m.src)] += m.r->blocksGpu;
        any = true;
      }
    if (!any) return;
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t d = 0; d < n; ++d)
        for (const std::int64_t id : incoming_[d]) {
          if (!stuck[static_cast<std::size_t>(id)]) continue;
          const Migration& m = migrations_[static_cast<std::size_t>(id)];
          const std::int64_t need = blocksToHold(*m.r) - m.reserved;
          if (need > instances_[d]->cfg_.gpuBlocks - held[d]) break;  // it and all behind it (FCFS)
          stuck[static_cast<std::size_t>(id)] = 0;
          held[static_cast<std::size_t>(m.src)] -= m.r->blocksGpu;
          changed = true;
        }
    }
    std::int64_t victim = -1;
    for (const auto& q : incoming_)
      for (const std::int64_t id : q) {
        const Migration& m = migrations_[static_cast<std::size_t>(id)];
        if (stuck[static_cast<std::size_t>(id)] && !m.handoff &&
            (victim < 0 || m.queuedSeq > migrations_[static_cast<std::size_t>(victim)].queuedSeq))
          victim = id;
      }
    for (const auto& q : incoming_)
      for (const std::int64_t id : q) stuck[static_cast<std::size_t>(id)] = 0;
    if (victim < 0) return;
    abandonStopAndCopy(victim);
  }
}

// The whole cluster is idle with copies still queued (stallFallback: the
// stall guard, or an empty event queue): their waits can no longer end by
// themselves -- room they counted on is held by requests that cannot run
// (e.g. swapped residents that need the blocks a waiting copy holds).
// Abandon the newest queued stop-and-copy; the run goes on from its source.
bool Simulator::abandonNewestQueuedCopy() {
  std::int64_t victim = -1;
  for (const auto& q : incoming_)
    for (const std::int64_t id : q) {
      const Migration& m = migrations_[static_cast<std::size_t>(id)];
      if (!m.handoff && (victim < 0 || m.queuedSeq > migrations_[static_cast<std::size_t>(victim)].queuedSeq))
        victim = id;
    }
  if (victim < 0) return false;
  abandonStopAndCopy(victim);
  return true;
}

// A queued stop-and-copy that will never start: it leaves its destination's
// queue and its request resumes on its source, which kept its KV.
void Simulator::abandonStopAndCopy(std::int64_t id) {
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  Request& r = *m.r;
  const int srcId = m.src, dstId = m.dst;
  std::erase(incoming_[static_cast<std::size_t>(dstId)], id);
  const ReqState before = m.before;
  m.active = false;
  m.r = nullptr;
  r.migration = -1;
  freeMigrations_.push_back(id);
  ++migrationsAbandoned_;
  setState(r, before);
  notify(RequestEvent::MigrationEnd, r, srcId);  // "arrived" back where it was
  fingerprint_ = hashCombine(fingerprint_, static_cast<std::uint64_t>(r.id) * 37u + static_cast<std::uint64_t>(srcId));
  enqueueLocal(instance(srcId), r);
  tryStartIncoming(dstId);  // the copies queued behind it may fit now
  wake(srcId);
}

// The head copy bound for `dst` lacks room: evict the residents that rank
// below it there, first victim first, as far as its need goes -- or none, if
// all of them would not make room (it then waits, as without displacement).
// Only between `dst`'s iterations (no batch to take them out of).
bool Simulator::displaceFor(Instance& dst, const Request& incoming, std::int64_t need) {
  std::vector<Request*>& victims = scratchVictims_;
  victims.clear();
  dst.policy_->displaceable(incoming, victims);
  std::int64_t room = dst.freeGpuBlocks();
  std::size_t n = 0;
  while (room < need && n < victims.size()) {
    const Request* v = victims[n++];
    // Its cache blocks others share stay held: only private ones count (an
    // unshared cache block it frees becomes evictable, so room is not overestimated).
    if (v->state == ReqState::Running) room += v->blocksGpu - (dst.cache_ ? prefixState(*v).shared : 0);
  }
  if (room < need) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (Request* v = victims[i]; v->state == ReqState::Running) {
      IterationBuilder::evict(*this, dst, *v);
      if (v->blockingStart >= 0) blockingSplit(*v).byMigrant = true;  // blocking breakdown: displaced
      ++displacements_;
      fingerprint_ = hashCombine(fingerprint_, static_cast<std::uint64_t>(v->id) * 41u + static_cast<std::uint64_t>(dst.id_));
    }
  return true;
}

void Simulator::startFlow(std::int64_t id, std::int32_t tokens) {
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  m.flowTokens = std::max(0, tokens);
  m.flowStart = now_;
  m.flow = -2;  // latency phase
  if (Request& r = *m.r; r.blockingStart >= 0 && r.state == ReqState::Migrating) {
    BlockingSplit& b = blockingSplit(r);  // blocking breakdown: from here on, transfer
    if (b.flowSince < 0) b.flowSince = now_;
  }
  events_q_.push(now_ + cfg_.linkLatency, EventKind::FlowStart, id);
}

void Simulator::onFlowStart(std::int64_t id) {
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  // Cancelled meanwhile (the slot may since serve another transfer, whose own
  // start event comes at its own time).
  if (!m.active || m.flow != -2 || now_ != m.flowStart + cfg_.linkLatency) return;
  int a, b;
  resourcesFor(m.src, m.dst, a, b);
  m.flow = net_.start(now_, m.flowTokens * cfg_.kvBytesPerToken, a, b, id);
  scheduleNetworkWake();
}

void Simulator::scheduleNetworkWake() {
  netWakeVersion_ = net_.version();
  const SimTime t = net_.nextFinish();
  if (t != kTimeNever) events_q_.push(std::max(t, now_), EventKind::NetworkUpdate, static_cast<std::int64_t>(netWakeVersion_));
}

void Simulator::onNetworkUpdate() {
  scratchTags_.clear();
  net_.collectFinished(now_, scratchTags_);
  const std::vector<std::int64_t> done = scratchTags_;  // callbacks may start new flows
  scheduleNetworkWake();
  for (std::int64_t id : done) onFlowDone(id);
}

void Simulator::onFlowDone(std::int64_t id) {
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  if (!m.active) return;
  Request& r = *m.r;
  const double bytes = m.flowTokens * cfg_.kvBytesPerToken;
  for (SimObserver* o : observers_) o->onTransfer(r, m.src, m.dst, m.flowStart, now_, bytes);
  m.flow = -1;
  m.copiedTokens += m.flowTokens;
  if (!m.live || m.finalCopy) {
    completeMigration(id);
    return;
  }
  // Live round finished: copy what was produced meanwhile, or hand over.
  ++m.round;
  const std::int32_t remainder = r.kvTokens - m.copiedTokens;
  if (remainder < instance(m.src).cfg_.blockSize || m.round >= cfg_.liveMaxRounds) {
    m.finalCopy = true;
    // (A lane member released in the running step gets its token at the step's end, as a batch entry.)
    const bool inIteration = r.batchIndex >= 0 || (r.laneIndex >= 0 && instance(m.src).lane_->stepping());
    if (instance(m.src).busy_ && inIteration) {
      r.pendingMigration = true;
      pendingStops_[static_cast<std::size_t>(m.src)].push_back(id);
    } else {
      beginStopAndCopy(id);
    }
  } else {
    startFlow(id, remainder);
  }
}

void Simulator::completeMigration(std::int64_t id) {
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  Request& r = *m.r;
  Instance& src = instance(m.src);
  Instance& dst = instance(m.dst);
  releaseGpu(src, r);  // with prefix caching its computed blocks stay cached on the source
  src.cpuUsed_ -= r.blocksCpu;
  --src.assigned_;
  src.assignedTokens_ -= static_cast<std::int64_t>(r.input) + r.generated;
  dst.gpuReserved_ -= m.reserved;
  dst.gpuUsed_ += m.reserved;
  r.blocksGpu = static_cast<std::int32_t>(m.reserved);
  r.blocksCpu = 0;
  ++dst.assigned_;
  dst.assignedTokens_ += static_cast<std::int64_t>(r.input) + r.generated;
  countProbe(r, -1);
  r.instance = m.dst;
  countProbe(r, 1);
  if (m.handoff) {
    ++handoffsDone_;  // counted apart: a hand-off is the disaggregated path, not a migration
  } else {
    ++r.migrations;
    ++migrationsDone_;
  }
  if (m.live) {
    --liveCount_[static_cast<std::size_t>(m.src)];
    --liveCount_[static_cast<std::size_t>(m.dst)];
  }
  m.active = false;
  m.r = nullptr;
  r.migration = -1;
  freeMigrations_.push_back(id);
  // A request without KV (never ran, or dropped for recompute) arrives waiting.
  setState(r, r.blocksGpu > 0 || r.kvTokens > 0 ? ReqState::Running : ReqState::Waiting);
  if (r.blockingStart >= 0) blockingSplit(r).landed = true;  // blocking breakdown: at its destination
  if (r.state == ReqState::Waiting && r.blocksGpu > 0) {
    dst.gpuUsed_ -= r.blocksGpu;
    r.blocksGpu = 0;
  }
  notify(RequestEvent::MigrationEnd, r, m.dst);
  fingerprint_ = hashCombine(fingerprint_, static_cast<std::uint64_t>(r.id) * 31u + static_cast<std::uint64_t>(m.dst));
  enqueueLocal(dst, r);
  // The hook may start a transfer (migrations_ may grow): `m` is not used after it.
  const int srcId = m.src, dstId = m.dst;
  global_->onMigrationDone(r, srcId, dstId);
  tryStartIncoming(srcId);
  wake(dstId);
  wake(srcId);
  checkDrained(srcId);  // its last request may just have left
}

bool Simulator::migrateLive(Request& r, int dst) {
  if (r.laneIndex >= 0) [[unlikely]]
    laneSyncMember(r, "migrateLive");
  if (dst < 0 || dst >= numInstances() || dst == r.instance) return false;
  if (r.state != ReqState::Running || !r.prefillDone()) return false;
  const int src = r.instance;
  if (liveCount_[static_cast<std::size_t>(src)] >= cfg_.liveMaxConcurrent ||
      liveCount_[static_cast<std::size_t>(dst)] >= cfg_.liveMaxConcurrent)
    return false;
  if (r.migration >= 0) return false;
  Instance& d = instance(dst);
  const std::int64_t need = blocksToHold(r);
  if (need > d.freeGpuBlocks()) return false;
  if (r.laneIndex >= 0) [[unlikely]]
    laneRelease(r, "migrateLive");  // it moves: its progress is kept eagerly from now on
  const std::int64_t id = newMigration(r, src, dst, true, false);
  Migration& m = migrations_[static_cast<std::size_t>(id)];
  d.gpuReserved_ += need;
  m.reserved = need;
  prefixReclaim(d);
  ++liveCount_[static_cast<std::size_t>(src)];
  ++liveCount_[static_cast<std::size_t>(dst)];
  startFlow(id, r.kvTokens);
  return true;
}

// A live migration whose request finished or was preempted on its source is
// abandoned: the destination's reservation is released. So is a stop-and-copy
// still deferred to the end of the iteration in which the request finished.
void Simulator::cancelLive(Request& r) {
  // The request's one transfer (Request::migration): O(1), no scan.
  if (r.migration < 0 || r.state == ReqState::Migrating) return;
  const auto i = static_cast<std::size_t>(r.migration);
  Migration& m = migrations_[i];
  assert(m.active && m.r == &r);
  if (!m.live) {
    if (!r.pendingMigration || m.flow >= 0 || m.reserved > 0) return;
    r.pendingMigration = false;
    m.active = false;
    m.r = nullptr;
    r.migration = -1;
    freeMigrations_.push_back(static_cast<std::int64_t>(i));
    return;
  }
  if (m.flow >= 0) {
    net_.cancel(now_, m.flow);
    scheduleNetworkWake();
  }
  auto& q = incoming_[static_cast<std::size_t>(m.dst)];
  std::erase(q, static_cast<std::int64_t>(i));
  instance(m.dst).gpuReserved_ -= m.reserved;
  --liveCount_[static_cast<std::size_t>(m.src)];
  --liveCount_[static_cast<std::size_t>(m.dst)];
  r.pendingMigration = false;
  m.active = false;
  m.r = nullptr;
  r.migration = -1;
  freeMigrations_.push_back(static_cast<std::int64_t>(i));
  wake(m.dst);
}

}  // namespace sl
