// Simulator: construction, the request pool and handles, the event loop,
// arrivals, stall detection, messages, roles and timers. The rest of the
// class is split by concept: iteration.cpp (batches and their end),
// completion.cpp (finish, abort), transfer.cpp (migrations, hand-offs),
// probes.cpp (probe samples and snapshots).
#include "engine/simulator.h"

#include "engine/record.h"
#include "metrics/summary.h"

#include <algorithm>
#include <cassert>
#include <cmath>
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

void LocalPolicy::releaseFromLane(Request&) {
  throw std::logic_error(std::string("local policy '") + name() + "' keeps no decode lane but was asked to release a member");
}

void LocalPolicy::laneReturned(std::span<Request* const> rs) {
  if (!rs.empty()) releaseFromLane(*rs.front());
}

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

Simulator::Simulator(const SimConfig& cfg, const CostModel& cost, std::unique_ptr<WorkloadSource> workload,
                     std::unique_ptr<GlobalPolicy> global, const LocalPolicyFactory& makeLocal)
    : cfg_(cfg), cost_(cost), workload_(std::move(workload)), global_(std::move(global)),
      rolling_(secondsToNs(cfg.rollingWindowS)) {
  instances_.reserve(static_cast<std::size_t>(cfg.instances));
  for (int i = 0; i < cfg.instances; ++i)
    instances_.push_back(std::make_unique<Instance>(i, cfg.instance, makeLocal(i)));
  // Transfer resources: per instance an egress and an ingress port (NVLink
  // when the GPU has it, else the host link), and per node a NIC each way.
  const double port = cfg.nvlinkBytesPerSec > 0 ? cfg.nvlinkBytesPerSec : cfg.instance.hostLinkBytesPerSec;
  for (int i = 0; i < cfg.instances; ++i) {
    linkOutRes_.push_back(net_.addResource(port));
    linkInRes_.push_back(net_.addResource(port));
  }
  const int perNode = std::max(1, cfg.gpusPerNode / std::max(1, cfg.tp));
  const int nodes = (cfg.instances + perNode - 1) / perNode;
  for (int n = 0; n < nodes; ++n) {
    nicRes_.push_back(net_.addResource(cfg.nicBytesPerSec));  // egress
    nicRes_.push_back(net_.addResource(cfg.nicBytesPerSec));  // ingress
  }
  incoming_.resize(static_cast<std::size_t>(cfg.instances));
  pendingStops_.resize(static_cast<std::size_t>(cfg.instances));
  poolLabels_.resize(static_cast<std::size_t>(cfg.instances));
  drainWatch_.assign(static_cast<std::size_t>(cfg.instances), 0);
  for (auto& in : instances_) in->counterWindow_ = cfg.counterWindow;
  liveCount_.assign(static_cast<std::size_t>(cfg.instances), 0);
  probeSample_.instances.resize(static_cast<std::size_t>(cfg.instances));
  probeCounts_.resize(static_cast<std::size_t>(cfg.instances));
  global_->attach(*this);
  feedback_ = workload_ && workload_->wantsCompletions();
  frontOn_ = cfg_.frontend.requestPathOn();
  scheduleNextArrival();
  if (cfg_.probeInterval > 0) events_q_.push(cfg_.probeInterval, EventKind::Probe, 0);
  if (global_->tickInterval() > 0) events_q_.push(global_->tickInterval(), EventKind::MonitorTick, 0);
  if (cfg_.stopAt) events_q_.push(*cfg_.stopAt, EventKind::StopRun, 0);
}

Simulator::~Simulator() = default;

Rng& Simulator::rng(const std::string& stream) {
  for (auto& [name, r] : rngs_)
    if (name == stream) return r;
  rngs_.emplace_back(stream, Rng::forStream(cfg_.seed, stream));
  return rngs_.back().second;
}

// ---------------------------------------------------------------- requests

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

// ---------------------------------------------------------------- event loop

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

bool Simulator::step() {
  if (!started_) startLanes();
  if (done_) return false;
  if (events_q_.empty() && !allDone() && abandonNewestQueuedCopy())
    return true;  // nothing else could move: a wait no cycle check saw (transfer.cpp)
  if (allDone() || events_q_.empty()) {
    done_ = true;
    return false;
  }
  const Event e = events_q_.pop();
  assert(e.time >= now_);
  now_ = e.time;
  ++events_;
  fingerprint_ = hashCombine(hashCombine(hashCombine(fingerprint_, static_cast<std::uint64_t>(e.time)),
                                         static_cast<std::uint64_t>(e.kind)),
                             static_cast<std::uint64_t>(e.a));
  switch (e.kind) {
    case EventKind::Arrival: onArrival(e.a); break;
    case EventKind::InstanceWake: {
      // Requests arriving at this same instant join this iteration: let the
      // pending arrivals of `now` go first (each pushes the next one).
      if (!events_q_.empty() && events_q_.top().time == now_ && events_q_.top().kind == EventKind::Arrival) {
        events_q_.push(now_, EventKind::InstanceWake, e.a);
        break;
      }
      Instance& in = instance(static_cast<int>(e.a));
      in.wakePending_ = false;
      if (!in.busy_) startIteration(in);
      break;
    }
    case EventKind::IterationEnd: endIteration(instance(static_cast<int>(e.a))); break;
    case EventKind::FlowStart: onFlowStart(e.a); break;
    case EventKind::NetworkUpdate:
      if (static_cast<std::uint64_t>(e.a) == netWakeVersion_) onNetworkUpdate();
      break;
    case EventKind::MonitorTick:
      checkStall();
      if (done_) return false;
      global_->onTick();
      events_q_.push(now_ + global_->tickInterval(), EventKind::MonitorTick, 0);
      break;
    case EventKind::Message: {
      auto fn = std::move(messages_[static_cast<std::size_t>(e.a)]);
      messages_[static_cast<std::size_t>(e.a)] = nullptr;
      freeMessages_.push_back(e.a);
      if (fn) fn();
      break;
    }
    case EventKind::Probe:
      // The tick itself always happens (it is part of the trajectory); the
      // sample is only computed for someone watching (profile: 12 % of B2).
      if (!observers_.empty()) probe();
      checkStall();
      if (done_) return false;
      events_q_.push(now_ + cfg_.probeInterval, EventKind::Probe, 0);
      break;
    case EventKind::StopRun: done_ = true; return false;
    case EventKind::Timer: onTimerEvent(e.a); break;
    case EventKind::FrontArrival: onFrontArrival(e.a); break;
    case EventKind::FrontDone: onFrontDone(e.a); break;
  }
#ifndef NDEBUG
  // Debug builds check the memory invariants after every event (70-quality.md);
  // the randomized invariant tests check the full set in every build.
  for (const auto& in : instances_) {
    assert(in->gpuUsed_ >= 0 && in->gpuReserved_ >= 0 && in->cpuUsed_ >= 0);
    assert(in->gpuUsed_ + in->gpuReserved_ <= in->cfg_.gpuBlocks);
    assert(in->cpuUsed_ <= in->cfg_.cpuBlocks);
    assert(in->queuedPrefill_ >= 0);
    assert(!in->cache_ || in->gpuUsed_ + in->gpuReserved_ + in->cache_->evictableGpu() <= in->cfg_.gpuBlocks);
  }
#endif
  return true;
}

void Simulator::run(SimTime until) {
  while (!done_) {
    if (!events_q_.empty() && events_q_.top().time > until) break;
    if (!step()) break;
  }
}

// ---------------------------------------------------------------- arrivals

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

// ---------------------------------------------------------------- stall detection

// Nothing is running, moving or due, yet requests are in flight: only a
// periodic tick could still change anything. Two such ticks in a row end the
// run (as "stalled") instead of ticking forever.
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

void Simulator::checkStall() {
  if (!idleWithWork()) {
    stallChecks_ = 0;
    return;
  }
  if (++stallChecks_ >= 2) {
    if (abandonNewestQueuedCopy()) {  // copies waiting on each other: free one (transfer.cpp)
      stallChecks_ = 0;
      return;
    }
    stalled_ = true;
    done_ = true;
  }
}

bool Simulator::setPolicyKnob(const std::string& name, double value) {
  bool taken = global_ && global_->setKnob(name, value);
  for (auto& in : instances_) taken = in->policy_->setKnob(name, value) || taken;
  return taken;
}

// ---------------------------------------------------------------- messages, roles

void Simulator::sendMessage(SimTime delay, std::function<void()> fn) {
  std::int64_t slot;
  if (!freeMessages_.empty()) {
    slot = freeMessages_.back();
    freeMessages_.pop_back();
    messages_[static_cast<std::size_t>(slot)] = std::move(fn);
  } else {
    slot = static_cast<std::int64_t>(messages_.size());
    messages_.push_back(std::move(fn));
  }
  events_q_.push(now_ + std::max<SimTime>(0, delay), EventKind::Message, slot);
}

// ---------------------------------------------------------------- timers

int Simulator::startTimer(const std::string& name, SimTime period) {
  if (period <= 0) throw std::logic_error("timer '" + name + "': period must be > 0");
  Timer t;
  t.name = name;
  t.period = period;
  t.due = now_ + period;
  t.active = true;
  timers_.push_back(std::move(t));
  const int id = static_cast<int>(timers_.size()) - 1;
  events_q_.push(timers_.back().due, EventKind::Timer, id);
  return id;
}

void Simulator::stopTimer(int id) { timers_.at(static_cast<std::size_t>(id)).active = false; }

void Simulator::setTimerPeriod(int id, SimTime period) {
  if (period <= 0) throw std::logic_error("timer '" + timerName(id) + "': period must be > 0");
  timers_.at(static_cast<std::size_t>(id)).period = period;
}

void Simulator::onTimerEvent(std::int64_t id) {
  Timer& t = timers_[static_cast<std::size_t>(id)];
  if (!t.active || t.due != now_) return;  // stopped
  checkStall();  // a timer is a tick too: a stalled run must not tick forever
  if (done_) return;
  t.due = now_ + t.period;
  events_q_.push(t.due, EventKind::Timer, id);
  global_->onTimer(static_cast<int>(id));
}

bool Simulator::drained(int i) const {
  const Instance& in = instance(i);
  return !in.busy_ && in.policy_->size() == 0 && in.assigned_ == 0 && incoming_[static_cast<std::size_t>(i)].empty() &&
         liveCount_[static_cast<std::size_t>(i)] == 0;
}

void Simulator::watchDrain(int i) {
  drainWatch_.at(static_cast<std::size_t>(i)) = 1;
  checkDrained(i);
}

void Simulator::checkDrained(int i) {
  if (!drainWatch_[static_cast<std::size_t>(i)] || !drained(i)) return;
  drainWatch_[static_cast<std::size_t>(i)] = 0;
  global_->onInstanceDrained(i);
}

void Simulator::setRole(int i, InstanceRole role) {
  instance(i).role_ = role;
  wake(i);
}

}  // namespace sl
