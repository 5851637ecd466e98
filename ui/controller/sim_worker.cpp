// SimWorker: the engine's side of SimController (ui/controller/sim_worker.h).
#include "ui/controller/sim_worker.h"

#include <QTimer>

#include <algorithm>
#include <map>
#include <set>

#include "engine/decision_log.h"
#include "engine/decode_lane.h"
#include "engine/instance.h"
#include "engine/policy_api.h"
#include "engine/request.h"
#include "metrics/request_record.h"
#include "metrics/summary.h"
#include "util/error.h"

namespace sl::ui {

namespace {

using Clock = std::chrono::steady_clock;
double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Keep the newest `cap` entries of `v`.
template <class T> void keepNewest(std::vector<T>& v, std::size_t cap) {
  if (v.size() > cap) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(cap));
}

}  // namespace

// Collects what the charts, the inspector and the animations need while the
// engine runs (worker thread only).
//
// Lane-safe (engine/observer.h, docs/engine.md "Lane-safe observers"), in
// every run mode: it reads probe samples, finished records, and the request
// of each request event -- never a plain decode token's, so never an
// unsynced lane member's (a lane finisher is synced before Finished; a
// member leaves the lane, synced, before it can be preempted) -- plus the
// policy's publishCluster (lanes run only under the plain router, which
// publishes nothing about requests). The worker's other reads sync what
// they read: fillSnapshot syncs the lanes, and the watched request is
// synced alone (SimWorker::publish). So the decode lanes stay on while the
// GUI watches, and what it shows is what the eager path would show.
class SimCollector final : public SimObserver {
public:
 SimCollector(TimelineStore& store, Simulator& sim, const SloSpec& slo)
     : store_(store), policy_(&sim.globalPolicy()), sim_(sim), slo_(slo) {}
 bool laneSafe() const override { return true; }
 void onRequestEvent(RequestEvent e, const Request& r, int instance, SimTime t) override {
   store_.onEvent(e, r, instance, t, sim_.cachedPromptTokens(r));
   AnimationNote n;
   n.time = t;
   n.requestId = r.id;
   n.instance = instance;
   n.afterThink = r.reasoning > 0 && r.generated >= r.reasoning;
   switch (e) {
     case RequestEvent::Preempted:
       n.kind =
           r.state == ReqState::Swapped ? AnimationNote::Kind::PreemptedSwap : AnimationNote::Kind::PreemptedRecompute;
       break;
     case RequestEvent::HandoffStart:
       handingOff_.insert(r.id);  // its next KV copy is the hand-off
       return;
     case RequestEvent::MigrationStart:
       n.kind = AnimationNote::Kind::MigrationStart;
       n.handoff = handingOff_.count(r.id) > 0;
       migrationSource_[r.id] = instance;
       break;
     case RequestEvent::MigrationEnd: {
       n.kind = AnimationNote::Kind::MigrationEnd;
       n.handoff = handingOff_.erase(r.id) > 0;
       if (auto it = migrationSource_.find(r.id); it != migrationSource_.end()) {
         n.other = it->second;
         migrationSource_.erase(it);
       }
       break;
     }
     case RequestEvent::Aborted:
       handingOff_.erase(r.id);
       n.kind = AnimationNote::Kind::Aborted;
       break;
     case RequestEvent::Finished:
       handingOff_.erase(r.id);  // kept in place (a hand-off to itself) or done
       return;
     default:
       return;
   }
   notes.push_back(n);
   if (notes.size() > 2 * SimController::kMaxPendingNotes) keepNewest(notes, SimController::kMaxPendingNotes);
  }
  void onProbe(const ProbeSample& s) override {
    store_.onProbe(s);
    probes.push_back(s);
    // What the policy publishes for the whole cluster, sampled with the
    // probes (publishing is const and cheap: docs/policy-api.md).
    if (policy_) {
      PolicySample ps;
      ps.timeS = nsToSeconds(s.time);
      policy_->publishCluster(ps.fields);
      if (!ps.fields.empty()) policySamples.push_back(std::move(ps));
    }
  }
  void onFinished(const RequestRecord& r) override {
    store_.onFinished(r);
    FinishedPoint p;
    p.finishS = nsToSeconds(r.last_token >= 0 ? r.last_token : r.arrival);
    p.reasoning = static_cast<double>(r.reasoning);
    if (auto t = r.ttft()) p.ttftS = *t;
    if (auto t = r.tpot()) p.tpotS = *t;
    if (auto t = r.e2e()) p.e2eS = *t;
    p.qoe = r.qoe;
    p.sloMet = meetsSlo(r, slo_);
    finished.push_back(p);
  }
  std::vector<ProbeSample> probes;
  std::vector<FinishedPoint> finished;
  std::vector<PolicySample> policySamples;
  std::vector<AnimationNote> notes;

private:
  TimelineStore& store_;
  const GlobalPolicy* policy_;
  const Simulator& sim_;  // cached prompt tokens (prefix caching) for the timelines
  SloSpec slo_;
  std::map<std::int64_t, int> migrationSource_;  // requests with a copy in flight
  std::set<std::int64_t> handingOff_;             // requests between HandoffStart and their KV's arrival
};

// Not lane-safe (the default): attached when the controller asks for the
// eager path (SimController::setDecodeLanes(false): A/B tests, the bench).
class LaneBlocker final : public SimObserver {};

SimWorker::SimWorker(std::shared_ptr<SimShared> shared, std::shared_ptr<TimelineStore> store, SimController* ctl)
    : shared_(std::move(shared)), store_(std::move(store)), ctl_(ctl) {}

SimWorker::~SimWorker() = default;

void SimWorker::start() {
  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  timer_->setTimerType(Qt::PreciseTimer);
  connect(timer_, &QTimer::timeout, this, [this] { slice(); });
}

void SimWorker::shutdown() {
  if (timer_) timer_->stop();
  delete timer_;
  timer_ = nullptr;
  run_.reset();
  collector_.reset();
  laneBlocker_.reset();
  // The worker's last writes end here; taking the shared mutex publishes
  // them to ~SimController, which takes it after the thread has ended.
  std::lock_guard<std::mutex> lock(shared_->m);
}

void SimWorker::load(std::shared_ptr<LiveRun> run, int generation, std::uint64_t seq, ChangeLog replay, bool lanes) {
  lastSeq_ = seq;
  replay_ = std::move(replay);
  nextReplay_ = 0;
  {
    std::lock_guard<std::mutex> lock(shared_->m);  // nothing of the old run reaches the GUI
    shared_->probes.clear();
    shared_->finished.clear();
    shared_->policySamples.clear();
    shared_->notes.clear();
  }
  run_.reset();  // the simulator holds pointers to the collector and blocker: drop it first
  laneBlocker_.reset();
  store_->clear();
  decisionsSeen_ = 0;
  collector_ = std::make_unique<SimCollector>(*store_, run->sim(), run->prepared->scenario.slo);
  run_ = std::move(run);
  run_->sim().addObserver(collector_.get());
  if (!lanes) {
    laneBlocker_ = std::make_unique<LaneBlocker>();
    run_->sim().addObserver(laneBlocker_.get());
  }
  generation_ = generation;
  clockNs_ = 0;
  chunkNs_ = kNsPerSecond / 1000;
  running_ = false;
  stepTarget_.reset();
  wallS_ = 0;
  elapsedBefore_ = 0;
  playingSince_.reset();
  speedAchieved_ = eventsPerSec_ = 0;
  etaS_ = -1;
  resetWindow();
  publish(true);
}

void SimWorker::play(std::uint64_t seq) {
  lastSeq_ = seq;
  if (!run_ || run_->sim().done()) return notifyStopped();
  stepTarget_.reset();
  running_ = true;
  startClock();
  anchor();
  resetWindow();
  arm(0);
}

void SimWorker::pause(std::uint64_t seq) {
  lastSeq_ = seq;
  running_ = false;
  stopClock();
  stepTarget_.reset();
  publish(true);
}

void SimWorker::runTo(SimTime t, std::uint64_t seq) {
  lastSeq_ = seq;
  if (!run_ || run_->sim().done()) return notifyStopped();
  stepTarget_ = t;
  running_ = true;
  startClock();
  resetWindow();
  arm(0);
}

void SimWorker::step(std::uint64_t seq) { runTo(clockNs_ + kNsPerSecond, seq); }

void SimWorker::republish() { publish(true); }

void SimWorker::setSpeed(double s) {
  speed_ = s;
  anchor();
}

void SimWorker::setMode(RunMode m) {
  mode_ = m;
  anchor();
}

void SimWorker::setPolicyKnob(const std::string& knob, double value) {
  if (!run_) return;
  try {
    run_->apply(KnobChange{clockNs_, 0, std::string(kKnobPolicyPrefix) + knob, value});
  } catch (const InputError&) {
    return;  // validated by the scenario panel; nothing to report
  }
  publish(true);
}

void SimWorker::setRate(double rate) {
  if (!run_ || !run_->rateLive) return;
  if (run_->rate && run_->rate->rate() == rate) return;  // no change, nothing to log
  try {
    run_->apply(KnobChange{clockNs_, 0, kKnobArrivalRate, rate});
  } catch (const InputError&) {
    return;  // the GUI bounds the slider; nothing to report
  }
  publish(true);
}

void SimWorker::setClients(int n) {
  if (!run_ || !run_->clients) return;
  if (run_->clients->concurrency() == n) return;  // no change, nothing to log
  try {
    run_->apply(KnobChange{clockNs_, 0, kKnobConcurrency, static_cast<double>(n)});
  } catch (const InputError&) {
    return;  // the GUI bounds the slider; nothing to report
  }
  publish(true);
}

void SimWorker::setSpeculativeK(int k) {
  if (!run_ || !run_->sim().speculative()) return;
  if (speculativeK() == k) return;  // no change, nothing to log
  try {
    run_->apply(KnobChange{clockNs_, 0, kKnobSpeculativeK, static_cast<double>(k)});
  } catch (const InputError&) {
    return;  // the GUI bounds the control; nothing to report
  }
  publish(true);
}

int SimWorker::speculativeK() const {
  if (!run_ || !run_->sim().speculative()) return -1;
  for (auto it = run_->changes.rbegin(); it != run_->changes.rend(); ++it)
    if (it->knob == kKnobSpeculativeK) return static_cast<int>(it->value);
  return run_->prepared->scenario.cluster.speculative.k;
}

bool SimWorker::paced() const { return mode_ == RunMode::Run && speed_ > 0 && !stepTarget_; }

void SimWorker::anchor() {
  anchorWall_ = Clock::now();
  anchorSim_ = clockNs_;
}

void SimWorker::resetWindow() {
  winWall_ = Clock::now();
  winClock_ = clockNs_;
  winEvents_ = run_ ? run_->sim().eventsProcessed() : 0;
}

void SimWorker::arm(int ms) {
  if (timer_ && !timer_->isActive()) timer_->start(ms);
}

double SimWorker::progress() const {
  if (!run_) return -1;
  const PreparedRun& p = *run_->prepared;
  if (p.scenario.run.duration_s && *p.scenario.run.duration_s > 0)
    return std::clamp(nsToSeconds(clockNs_) / *p.scenario.run.duration_s, 0.0, 1.0);
  if (p.expectedRequests > 0)
    return std::clamp(static_cast<double>(run_->prepared->simulator->finishedCount()) /
                          static_cast<double>(p.expectedRequests), 0.0, 1.0);
  return -1;
}

void SimWorker::slice() {
  if (!run_ || !running_) return;
  Simulator& sim = run_->sim();
  const auto w0 = Clock::now();
  const auto deadline = w0 + std::chrono::microseconds(8000);
  if (paced()) {
    SimTime target = anchorSim_ + static_cast<SimTime>(speed_ * secondsBetween(anchorWall_, w0) * 1e9);
    // Falling behind by more than a quarter second: drop the debt, so the
    // display stays live and "speed achieved" tells the truth.
    const SimTime slack = static_cast<SimTime>(speed_ * 0.25e9);
    if (target - clockNs_ > slack) {
      target = clockNs_ + slack;
      anchorSim_ = clockNs_;
      anchorWall_ = w0;
    }
    const SimTime sub = std::max<SimTime>(1000, static_cast<SimTime>(speed_ * 1e6));  // 1 ms of wall
    while (clockNs_ < target && !sim.done()) {
      const SimTime next = std::min(target, clockNs_ + sub);
      advance(next);
      clockNs_ = sim.done() ? sim.now() : std::max(next, sim.now());
      if (Clock::now() > deadline) break;
    }
  } else {
    // As fast as possible, in chunks of simulated time sized to ~2000
    // events so the wall bound holds without peeking at the event queue.
    const SimTime limit = stepTarget_.value_or(kTimeNever);
    while (clockNs_ < limit && !sim.done()) {
      const std::int64_t before = sim.eventsProcessed();
      const SimTime next = limit - clockNs_ < chunkNs_ ? limit : clockNs_ + chunkNs_;
      advance(next);
      // At the end, the engine's own end time (summary.json's sim_s), not
      // the end of the chunk that found it (which depends on wall timing).
      clockNs_ = sim.done() ? sim.now() : std::max(next, sim.now());
      const std::int64_t n = sim.eventsProcessed() - before;
      if (n < 500) chunkNs_ = std::min<SimTime>(chunkNs_ * 2, 60 * kNsPerSecond);
      else if (n > 4000) chunkNs_ = std::max<SimTime>(chunkNs_ / 2, 1000);
      if (Clock::now() > deadline) break;
    }
  }
  const auto w1 = Clock::now();
  wallS_ += secondsBetween(w0, w1);
  updateRates(w1);

  bool stopped = false;
  if (sim.done()) {
    running_ = false;
    stopped = true;
  } else if (stepTarget_ && clockNs_ >= *stepTarget_) {
    running_ = false;
    stepTarget_.reset();
    stopped = true;
  }
  if (stopped) stopClock();
  publish(stopped);
  if (stopped) return notifyStopped();
  // Paced and caught up: sleep a little instead of spinning.
  const bool caughtUp = paced() && clockNs_ >= anchorSim_ + static_cast<SimTime>(
                                                             speed_ * secondsBetween(anchorWall_, Clock::now()) * 1e9);
  arm(caughtUp ? 4 : 0);
}

void SimWorker::advance(SimTime t) {
  Simulator& sim = run_->sim();
  while (nextReplay_ < replay_.size()) {
    while (nextReplay_ < replay_.size() && sim.eventsProcessed() >= replay_[nextReplay_].events) {
      try {
        run_->apply(replay_[nextReplay_]);
      } catch (const InputError&) {
        // validated against the scenario when the file was opened
      }
      ++nextReplay_;
    }
    if (nextReplay_ >= replay_.size()) break;
    if (sim.now() >= t || !sim.step()) return;
  }
  sim.run(t);
}

void SimWorker::startClock() {
  if (!playingSince_) playingSince_ = Clock::now();
}

void SimWorker::stopClock() {
  if (playingSince_) elapsedBefore_ += secondsBetween(*playingSince_, Clock::now());
  playingSince_.reset();
}

void SimWorker::updateRates(Clock::time_point now) {
  const double dt = secondsBetween(winWall_, now);
  if (dt < 0.5) return;
  const std::int64_t ev = run_->sim().eventsProcessed();
  speedAchieved_ = nsToSeconds(clockNs_ - winClock_) / dt;
  eventsPerSec_ = static_cast<double>(ev - winEvents_) / dt;
  const PreparedRun& pr = *run_->prepared;
  const double left = estimateRemainingSimS(nsToSeconds(clockNs_), pr.expectedRequests, run_->sim().arrived(),
                                            run_->sim().finishedCount(), pr.scenario.run.duration_s.value_or(0));
  etaS_ = left >= 0 && speedAchieved_ > 0 ? left / speedAchieved_ : -1;
  resetWindow();
}

void SimWorker::publish(bool force) {
  if (!run_) return;
  std::vector<ProbeSample> probes;
  std::vector<FinishedPoint> finished;
  std::vector<PolicySample> policySamples;
  std::vector<AnimationNote> notes;
  if (collector_) {
    probes.swap(collector_->probes);
    finished.swap(collector_->finished);
    policySamples.swap(collector_->policySamples);
    notes.swap(collector_->notes);
  }
  // The policy's new decisions join their requests' timelines, named by the policy.
  const GlobalPolicy& policy = run_->sim().globalPolicy();
  if (const DecisionLog* log = policy.decisionLog(); log && log->size() > decisionsSeen_) {
    const std::span<const Decision> all(log->entries());
    store_->onDecisions(all.subspan(decisionsSeen_), policy.decisionCodeNames());
    decisionsSeen_ = all.size();
  }
  // The inspected request's token times move between its events. Found
  // without syncing the lanes (id and state are lane-exact), then synced
  // alone (resolve syncs a lane member): a publish per slice stays O(pool),
  // not O(every lane member's pacer replay).
  if (const std::int64_t id = store_->watched(); id >= 0) {
    Simulator& sim = run_->sim();
    std::optional<RequestHandle> watched;
    sim.forEachActiveUnsynced([&](const Request& r) {
      if (r.id == id) watched = sim.handleOf(r);
    });
    if (watched)
      if (const Request* r = sim.resolve(*watched)) store_->refresh(*r);
  }
  bool wantFrame = force;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    auto move = [](auto& from, auto& to) {
      if (to.empty()) to.swap(from);
      else to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    };
    move(probes, shared_->probes);
    move(finished, shared_->finished);
    move(policySamples, shared_->policySamples);
    move(notes, shared_->notes);
    keepNewest(shared_->notes, SimController::kMaxPendingNotes);
    wantFrame = wantFrame || !shared_->pending;
  }
  if (!wantFrame) return;
  auto f = std::make_shared<LiveFrame>();
  Simulator& sim = run_->sim();
  sim.fillSnapshot(f->snapshot);
  f->generation = generation_;
  f->clockS = nsToSeconds(clockNs_);
  f->speedAchieved = running_ ? speedAchieved_ : 0;
  f->eventsPerSec = running_ ? eventsPerSec_ : 0;
  f->wallS = wallS_;
  f->elapsedS = elapsedBefore_ + (playingSince_ ? secondsBetween(*playingSince_, Clock::now()) : 0.0);
  f->running = running_;
  f->done = sim.done();
  f->stalled = sim.stalled();
  f->mode = mode_;
  f->progress = progress();
  f->etaS = running_ ? etaS_ : -1;
  f->rateLive = run_->rateLive;
  f->arrivalRate = run_->rate ? run_->rate->rate() : 0;
  f->clientsLive = run_->clients != nullptr;
  f->clients = run_->clients ? run_->clients->concurrency() : 0;
  f->specLive = sim.speculative();
  f->specK = speculativeK();
  f->changes = run_->changes;
  f->fingerprint = sim.fingerprint();
  f->preemptions = sim.preemptions();
  f->migrations = sim.migrations();
  for (int i = 0; i < sim.numInstances(); ++i)
    if (const DecodeLane* lane = sim.instance(i).policy().decodeLane()) f->laneSteps += lane->steps();
  bool emitNow = false;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    shared_->latest = std::move(f);
    emitNow = !shared_->pending;
    shared_->pending = true;
  }
  if (emitNow) notify(WorkerNotice{WorkerNotice::Frame, 0});
}

void SimWorker::notifyStopped() { notify(WorkerNotice{WorkerNotice::Stopped, lastSeq_}); }

void SimWorker::notify(WorkerNotice n) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    wake = shared_->notices.empty();
    shared_->notices.push_back(n);
  }
  if (wake) QMetaObject::invokeMethod(ctl_, [] { drainAllNotices(); }, Qt::QueuedConnection);
}

void SimWorker::drainCommands() {
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    batch.swap(shared_->commands);
  }
  for (auto& c : batch) c();
}

}  // namespace sl::ui
