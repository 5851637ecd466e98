// Simulator: construction, the event loop (one event's dispatch), policy
// knobs, messages, timers, roles and drains. The rest of the class is split
// by concept: requests.cpp (the request pool, handles, states), arrival.cpp
// (arrivals, injected requests), lanes.cpp (decode-lane glue), stall.cpp
// (stall guard), iteration.cpp (batches and their end), completion.cpp
// (finish, abort), transfer.cpp (migrations, hand-offs), frontend.cpp
// (serving front end), prefix.cpp (prefix caching), probes.cpp (probe
// samples and snapshots).
#include "engine/simulator.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace sl {

Simulator::Simulator(const SimConfig& cfg, const CostModel& cost, std::unique_ptr<WorkloadSource> workload,
                     std::unique_ptr<GlobalPolicy> global, const LocalPolicyFactory& makeLocal)
    : cfg_(cfg), cost_(cost), workload_(std::move(workload)), global_(std::move(global)),
      rolling_(secondsToNs(cfg.rollingWindowS)) {
  instances_.reserve(static_cast<std::size_t>(cfg.instances));
  // Pools (one when cfg.pools is empty): each pool's instances share its
  // config, cost model and GPUs; a pool starts on a node of its own, and a
  // node holds gpusPerNode / tp of its instances. Transfer resources: per
  // instance an egress and an ingress port (NVLink when the GPU has it, else
  // the host link), and per node a NIC each way.
  std::vector<PoolConfig> pools = cfg.pools;
  if (pools.empty()) pools.push_back({cfg.instances, cfg.instance, cfg.tp, cfg.nvlinkBytesPerSec, &cost});
  int nodes = 0;
  int poolIndex = 0;
  for (const PoolConfig& p : pools) {
    const int perNode = std::max(1, cfg.gpusPerNode / std::max(1, p.tp));
    const double port = p.nvlinkBytesPerSec > 0 ? p.nvlinkBytesPerSec : p.instance.hostLinkBytesPerSec;
    for (int j = 0; j < p.instances; ++j) {
      const int i = static_cast<int>(instances_.size());
      instances_.push_back(std::make_unique<Instance>(i, p.instance, makeLocal(i)));
      Instance& in = *instances_.back();
      in.decodeAhead_ = 1 + (cfg.speculative.on() ? cfg.speculative.k : 0);
      in.cost_ = p.cost ? p.cost : &cost;
      in.specCost_ = p.specCost ? p.specCost.get() : cfg.speculative.cost.get();
      in.tp_ = p.tp;
      nodeOf_.push_back(nodes + j / perNode);
      poolOf_.push_back(poolIndex);
      poolRole_.push_back(p.poolRole);
      if (p.poolRole != InstanceRole::Both) poolRolesGiven_ = true;
      linkOutRes_.push_back(net_.addResource(port));
      linkInRes_.push_back(net_.addResource(port));
    }
    nodes += (p.instances + perNode - 1) / perNode;
    ++poolIndex;
  }
  if (static_cast<int>(instances_.size()) != cfg.instances)
    throw std::logic_error("SimConfig: the pools hold " + std::to_string(instances_.size()) + " instances, not " +
                           std::to_string(cfg.instances));
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

bool Simulator::setPolicyKnob(const std::string& name, double value) {
  bool taken = global_ && global_->setKnob(name, value);
  for (auto& in : instances_) taken = in->policy_->setKnob(name, value) || taken;
  return taken;
}

// ---------------------------------------------------------------- event loop

bool Simulator::step() {
  if (!started_) startLanes();
  if (done_) return false;
  if (allDone()) {
    done_ = true;
    return false;
  }
  if (events_q_.empty()) return stallFallback(false);  // nothing left to move (stall.cpp)
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
