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
  for (auto& in : instances_) in->counterWindow_ = cfg.counterWindow;
  liveCount_.assign(static_cast<std::size_t>(cfg.instances), 0);
  probeSample_.instances.resize(static_cast<std::size_t>(cfg.instances));
  global_->attach(*this);

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
  if (h.slot < 0 || static_cast<std::size_t>(h.slot) >= pool_.size() * kChunk) return nullptr;
  const Request& r = pool_[static_cast<std::size_t>(h.slot) / kChunk][static_cast<std::size_t>(h.slot) % kChunk];
  if (r.slot != h.slot || r.generation != h.generation || r.state == ReqState::Finished) return nullptr;
  return &r;
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

void Simulator::releaseRequest(Request* r) {
  freeSlots_.push_back(r->slot);
  r->slot = -1;
  r->state = ReqState::Finished;
}

void Simulator::setState(Request& r, ReqState s) {
  const SimTime dt = now_ - r.stateSince;
  switch (r.state) {
    case ReqState::Swapped: r.swappedTime += dt; r.preemptedTime += dt; break;
    case ReqState::Waiting: if (r.everPreempted) r.preemptedTime += dt; break;
    case ReqState::Migrating: r.migratingTime += dt; break;
    case ReqState::HandoffWait: r.handoffTime += dt; break;
    default: break;
  }
  if (r.state == ReqState::Waiting && s == ReqState::Running) r.everPreempted = false;
  r.state = s;
  r.stateSince = now_;
}

void Simulator::notify(RequestEvent e, const Request& r, int inst) {
  for (SimObserver* o : observers_) o->onRequestEvent(e, r, inst, now_);
}

// ---------------------------------------------------------------- event loop

bool Simulator::step() {
  if (done_) return false;
  if ((workloadDone_ && inFlight_ == 0) || events_q_.empty()) {
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
  }
#ifndef NDEBUG
  // Debug builds check the memory invariants after every event (70-quality.md);
  // the randomized invariant tests check the full set in every build.
  for (const auto& in : instances_) {
    assert(in->gpuUsed_ >= 0 && in->gpuReserved_ >= 0 && in->cpuUsed_ >= 0);
    assert(in->gpuUsed_ + in->gpuReserved_ <= in->cfg_.gpuBlocks);
    assert(in->cpuUsed_ <= in->cfg_.cpuBlocks);
    assert(in->queuedPrefill_ >= 0);
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
    workloadDone_ = true;
    return;
  }
  Request* r = allocRequest();
  r->id = nextSpec_.id;
  r->arrival = std::max(nextSpec_.arrival, now_);
  r->input = std::max(1, nextSpec_.input);
  r->reasoning = std::max(0, nextSpec_.reasoning);
  r->answer = std::max(1, nextSpec_.answer);
  r->domain = nextSpec_.domain;
  r->prefillTarget = r->input;
  r->stateSince = r->arrival;
  events_q_.push(r->arrival, EventKind::Arrival, r->slot);
}

void Simulator::onArrival(std::int64_t slot) {
  Request& r = pool_[static_cast<std::size_t>(slot) / kChunk][static_cast<std::size_t>(slot) % kChunk];
  ++arrived_;
  ++inFlight_;
  ++probeArrivals_;
  scheduleNextArrival();
  global_->onArrival(r);
  const int dst = global_->route(r);
  // A policy bug, not user input: never silently reroute (docs/engine.md).
  if (dst < 0 || dst >= numInstances())
    throw std::logic_error(std::string("policy '") + global_->name() + "' routed request " + std::to_string(r.id) +
                           " to instance " + std::to_string(dst) + " of " + std::to_string(numInstances()));
  Instance& in = instance(dst);
  r.instance = dst;
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

void Simulator::wake(int i) {
  Instance& in = instance(i);
  if (in.busy_ || in.wakePending_) return;
  in.wakePending_ = true;
  events_q_.push(now_, EventKind::InstanceWake, i);
}

// ---------------------------------------------------------------- iterations

void Simulator::startIteration(Instance& in) {
  if (in.busy_ || in.policy_->size() == 0) return;
  in.batch_.clear();
  in.swapBytes_ = 0;
  in.preemptionsThisIter_ = 0;
  IterationBuilder b(*this, in);
  b.tokenBudget_ = in.cfg_.maxBatchedTokens;
  in.policy_->schedule(b);
  if (in.batch_.empty()) {
    // Nothing can run (memory held by transfers, or only requests that cannot
    // fit). A lone request that can never grow further is aborted so the
    // instance cannot deadlock.
    if (in.gpuUsed_ > 0 && in.gpuReserved_ == 0 && in.batch_.empty()) {
      Request* stuck = nullptr;
      bool othersHoldGpu = false;
      forEachActive([&](const Request& q) {
        if (q.instance != in.id_ || q.state == ReqState::Migrating) return;
        if (q.state == ReqState::Running && q.blocksGpu == in.gpuUsed_) stuck = const_cast<Request*>(&q);
        else if (q.blocksGpu > 0) othersHoldGpu = true;
      });
      if (stuck && !othersHoldGpu && b.blocksToRun(*stuck) > in.cfg_.gpuBlocks) abortRequest(in, *stuck);
    } else if (in.gpuUsed_ == 0 && in.gpuReserved_ == 0) {
      // Memory is empty and still nothing runs: a request that cannot fit even
      // an empty instance (grown past capacity, then swapped out or dropped
      // for recompute) would block it forever. Abort it and carry on.
      std::vector<Request*> never;  // rare path
      forEachActive([&](const Request& q) {
        if (q.instance == in.id_ && (q.state == ReqState::Waiting || q.state == ReqState::Swapped) &&
            q.arrival <= now_ && b.extraBlocksToRun(q) > in.cfg_.gpuBlocks)
          never.push_back(const_cast<Request*>(&q));
      });
      for (Request* q : never) abortRequest(in, *q);
      if (!never.empty()) wake(in.id_);
    }
    return;
  }
  BatchShape shape{};
  in.runningTokens_ = 0;
  for (const BatchEntry& e : in.batch_) {
    const Request& r = *e.r;
    in.runningTokens_ += static_cast<std::int64_t>(r.kvTokens) + e.newTokens;
    if (e.prefill) {
      ++shape.prefill_seqs;
      shape.prefill_tokens += e.newTokens;
      shape.prefill_attn += static_cast<double>(e.newTokens) * (r.prefilled + e.newTokens / 2.0);
    } else {
      const double L = static_cast<double>(r.kvTokens) + 1.0;
      ++shape.decode_seqs;
      shape.decode_ctx_sum += L;
      shape.decode_ctx_sumsq += L * L;
    }
  }
  double secs = cost_.iterationSeconds(shape);
  if (in.swapBytes_ > 0) secs += in.swapBytes_ / in.cfg_.hostLinkBytesPerSec;
  const SimTime dur = std::max<SimTime>(1, secondsToNs(secs));
  in.shape_ = shape;
  in.busy_ = true;
  in.iterStart_ = now_;
  in.iterEnd_ = now_ + dur;
  ++in.iterations_;
  events_q_.push(in.iterEnd_, EventKind::IterationEnd, in.id_);
}

void Simulator::emitToken(Instance& in, Request& r, std::vector<Request*>& boundary) {
  ++r.generated;
  ++in.tokensProduced_;
  ++in.assignedTokens_;
  ++probeTokens_;
  const std::int32_t k = r.generated;
  if (k == 1) r.gFirst = now_;
  if (k <= r.reasoning) {
    if (k == r.reasoning) {
      r.gReasoningEnd = now_;
      r.blockingStart = now_;
      r.pacer = TokenPacer(now_, secondsToNs(cfg_.slo.ttfat_s), secondsToNs(cfg_.slo.qoe_tpot_s), r.answer);
      boundary.push_back(&r);
    }
  } else {
    if (k == r.reasoning + 1) {
      r.gFirstVisible = now_;
      if (r.reasoning == 0) r.pacer = TokenPacer(now_, secondsToNs(cfg_.slo.ttfat_s), secondsToNs(cfg_.slo.qoe_tpot_s), r.answer);
    }
    r.pacer.onToken(now_);
  }
  r.gLast = now_;
  ++r.quantumUsed;
  if (r.lengthWatch >= 0 && static_cast<std::int64_t>(r.input) + r.generated >= r.lengthWatch) {
    r.lengthWatch = -1;
    lengthHits_.push_back(&r);
  }
  in.policy_->onToken(r);
}

void Simulator::endIteration(Instance& in) {
  in.busy_ = false;
  std::vector<Request*>& boundary = scratchBoundary_;
  boundary.clear();
  std::vector<Request*>& prefillDone = pendingMoves_;
  prefillDone.clear();
  lengthHits_.clear();
  bool decoded = false;
  for (const BatchEntry& e : in.batch_) {
    Request& r = *e.r;
    r.batchIndex = -1;
    if (e.prefill) {
      r.prefilled += e.newTokens;
      in.queuedPrefill_ -= e.newTokens;
      r.kvTokens += e.newTokens;
      if (!r.prefillDone()) continue;
      emitToken(in, r, boundary);
      if (in.role_ == InstanceRole::Prefill && !r.finished()) prefillDone.push_back(&r);
    } else {
      r.kvTokens += 1;
      decoded = true;
      emitToken(in, r, boundary);
    }
  }
  if (decoded) {
    in.decodeIters_.emplace_back(now_, in.iterEnd_ - in.iterStart_);
    in.decodeDurSum_ += in.iterEnd_ - in.iterStart_;
    (void)in.recentDecodeIntervalS(now_);  // drops what left the window: O(1) amortized
  }
  for (SimObserver* o : observers_) o->onIteration(in, in.iterStart_, in.iterEnd_);
  // Completions first (they free memory), then phase-boundary decisions.
  for (const BatchEntry& e : in.batch_)
    if (e.r->finished()) finish(in, *e.r);
  in.batch_.clear();
  for (Request* r : boundary) {
    if (r->state == ReqState::Finished || r->slot < 0) continue;
    notify(RequestEvent::ReasoningEnd, *r, in.id_);
    global_->onReasoningEnd(*r);
  }
  for (Request* r : prefillDone) {
    if (r->state != ReqState::Running) continue;
    cancelLive(*r);  // a live copy started at its reasoning end: the hand-off moves it instead
    removeLocal(in, *r);
    setState(*r, ReqState::HandoffWait);
    notify(RequestEvent::HandoffStart, *r, in.id_);
    global_->onPrefillDone(*r);
  }
  // Length thresholds (watchLength) reached in this iteration, in batch order.
  for (std::size_t k = 0; k < lengthHits_.size(); ++k) {
    Request* r = lengthHits_[k];
    if (r->state == ReqState::Finished || r->slot < 0) continue;
    global_->onLengthReached(*r);
  }
  in.policy_->onIterationEnd();
  global_->onIterationEnd(in.id_);
  // Stop-and-copy moves requested while the request was in this iteration:
  // this instance's deferred ones, in transfer-id order (as a scan of every
  // transfer would visit them), without scanning the others.
  auto& pend = pendingStops_[static_cast<std::size_t>(in.id_)];
  if (!pend.empty()) {
    std::vector<std::int64_t>& ids = scratchIds_;
    ids.assign(pend.begin(), pend.end());
    pend.clear();
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (const std::int64_t id : ids) {
      const Migration& m = migrations_[static_cast<std::size_t>(id)];
      if (!m.active || !m.r || m.src != in.id_ || !m.r->pendingMigration) continue;  // done or cancelled
      if (m.flow < 0 && (!m.live || m.finalCopy)) {
        m.r->pendingMigration = false;
        beginStopAndCopy(id);
      } else {
        pend.push_back(id);  // not due yet: looked at again at a later iteration end
      }
    }
  }
  tryStartIncoming(in.id_);
  startIteration(in);
}

void Simulator::finish(Instance& in, Request& r) {
  cancelLive(r);
  in.gpuUsed_ -= r.blocksGpu;
  in.cpuUsed_ -= r.blocksCpu;
  r.blocksGpu = r.blocksCpu = 0;
  --in.assigned_;
  in.assignedTokens_ -= static_cast<std::int64_t>(r.input) + r.generated;
  removeLocal(in, r);
  setState(r, ReqState::Finished);
  --inFlight_;
  ++probeCompletions_;
  RequestRecord rec = makeRecord(r, true);
  fingerprint_ = hashCombine(hashCombine(fingerprint_, static_cast<std::uint64_t>(r.id)),
                             static_cast<std::uint64_t>(r.gLast));
  rolling_.add(now_, rec.ttft().value_or(0.0), rec.tpot().value_or(0.0), meetsSlo(rec, cfg_.slo),
               qoeViolated(rec, cfg_.slo));
  notify(RequestEvent::Finished, r, in.id_);
  global_->onFinished(r);
  for (SimObserver* o : observers_) o->onFinished(rec);
  records_.push_back(rec);
  releaseRequest(&r);
}

void Simulator::abortRequest(Instance& in, Request& r) {
  in.gpuUsed_ -= r.blocksGpu;
  in.cpuUsed_ -= r.blocksCpu;
  r.blocksGpu = r.blocksCpu = 0;
  --in.assigned_;
  in.assignedTokens_ -= static_cast<std::int64_t>(r.input) + r.generated;
  if (r.state != ReqState::Waiting || r.firstScheduled >= 0 || in.policy_->size() > 0) removeLocal(in, r);
  setState(r, ReqState::Finished);
  --inFlight_;
  ++aborted_;
  notify(RequestEvent::Aborted, r, in.id_);
  releaseRequest(&r);
  tryStartIncoming(in.id_);  // copies waiting for the memory it held
}

std::vector<RequestRecord> Simulator::inFlightRecords() const {
  std::vector<RequestRecord> out;
  forEachActive([&](const Request& r) {
    if (r.arrival <= now_ && r.instance >= 0) out.push_back(makeRecord(r, false));
  });
  std::sort(out.begin(), out.end(), [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  return out;
}

// ---------------------------------------------------------------- stall detection

// Nothing is running, moving or due, yet requests are in flight: only a
// periodic tick could still change anything. Two such ticks in a row end the
// run (as "stalled") instead of ticking forever.
bool Simulator::idleWithWork() const {
  if (inFlight_ == 0 || !workloadDone_) return false;
  for (const auto& in : instances_)
    if (in->busy_ || in->wakePending_) return false;
  if (!net_.flows().empty()) return false;
  for (const Migration& m : migrations_)
    if (m.active && m.flow == -2) return false;
  if (messages_.size() > freeMessages_.size()) return false;
  return true;
}

void Simulator::checkStall() {
  if (!idleWithWork()) {
    stallChecks_ = 0;
    return;
  }
  if (++stallChecks_ >= 2) {
    stalled_ = true;
    done_ = true;
  }
}

// ---------------------------------------------------------------- probes

void Simulator::probe() {
  ProbeSample& s = probeSample_;
  s.time = now_;
  s.intervalS = nsToSeconds(cfg_.probeInterval);
  s.arrivals = probeArrivals_;
  s.completions = probeCompletions_;
  s.tokens = probeTokens_;
  s.inFlight = inFlight_;
  probeArrivals_ = probeCompletions_ = probeTokens_ = 0;
  const RollingSample st = rolling_.sample(now_);
  s.ttftP50 = st.ttft_p50;
  s.ttftP99 = st.ttft_p99;
  s.tpotP50 = st.tpot_p50;
  s.tpotP99 = st.tpot_p99;
  s.sloAttainment = st.slo_attainment;
  s.qoeViolationRate = st.qoe_violation_rate;
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const Instance& in = *instances_[i];
    ProbeInstance& p = s.instances[i];
    p.gpuBlocks = in.gpuUsed_;
    p.cpuBlocks = in.cpuUsed_;
    p.gpuCapacity = in.cfg_.gpuBlocks;
    p.batch = static_cast<std::int32_t>(in.batch_.size());
    p.role = static_cast<std::int32_t>(in.role_);
    p.queued = 0;
    p.running = 0;
  }
  forEachActive([&](const Request& r) {
    if (r.instance < 0 || r.arrival > now_) return;
    ProbeInstance& p = s.instances[static_cast<std::size_t>(r.instance)];
    if (r.state == ReqState::Running) ++p.running;
    else if (r.state == ReqState::Waiting || r.state == ReqState::Swapped) ++p.queued;
  });
  for (SimObserver* o : observers_) o->onProbe(s);
}

// ---------------------------------------------------------------- snapshot

void Simulator::fillSnapshot(Snapshot& s) const {
  s.now = now_;
  s.arrived = arrived_;
  s.finished = static_cast<std::int64_t>(records_.size());
  s.inFlight = inFlight_;
  s.events = events_;
  s.instances.resize(instances_.size());
  std::vector<QueueView> views;
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const Instance& in = *instances_[i];
    InstanceSnapshot& is = s.instances[i];
    is.id = in.id_;
    is.role = static_cast<std::uint8_t>(in.role_);
    is.gpuBlocksUsed = in.gpuUsed_;
    is.gpuBlocksReserved = in.gpuReserved_;
    is.gpuBlocks = in.cfg_.gpuBlocks;
    is.cpuBlocksUsed = in.cpuUsed_;
    is.cpuBlocks = in.cfg_.cpuBlocks;
    is.batchSize = static_cast<std::int32_t>(in.batch_.size());
    is.busy = in.busy_;
    is.tokensProduced = in.tokensProduced_;
    views.clear();
    in.policy_->describe(views);
    is.monitor = MonitorSnapshot{};
    if (global_) is.monitor.present = global_->monitor(static_cast<int>(i), is.monitor);
    is.queues.resize(views.size());
    for (std::size_t q = 0; q < views.size(); ++q) {
      is.queues[q].name = views[q].name;
      auto& chips = is.queues[q].requests;
      chips.clear();
      for (const Request* r : views[q].requests)
        chips.push_back(RequestChip{r->id, static_cast<std::uint8_t>(r->phase()),
                                    static_cast<std::uint8_t>(r->state), r->kvTokens, r->batchIndex >= 0});
    }
  }
  s.transfers.clear();
  for (const Migration& m : migrations_) {
    if (!m.active || !m.r) continue;
    TransferSnapshot t;
    t.requestId = m.r->id;
    t.src = m.src;
    t.dst = m.dst;
    t.live = m.live;
    t.progress = m.flow >= 0 ? std::max(0.0, net_.progress(m.flow, now_)) : 0.0;
    s.transfers.push_back(t);
  }
  s.decisions = 0;
  s.recentDecisions.clear();
  if (const DecisionLog* log = global_ ? global_->decisionLog() : nullptr) {
    const auto& e = log->entries();
    s.decisions = static_cast<std::int64_t>(e.size()) + log->dropped();
    const std::size_t from = e.size() > Snapshot::kRecentDecisions ? e.size() - Snapshot::kRecentDecisions : 0;
    for (std::size_t k = from; k < e.size(); ++k) s.recentDecisions.push_back({e[k], DecisionLog::reason(e[k])});
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

void Simulator::setRole(int i, InstanceRole role) {
  instance(i).role_ = role;
  wake(i);
}

}  // namespace sl
