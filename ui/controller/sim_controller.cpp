#include "ui/controller/sim_controller.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <mutex>

#include "engine/decision_log.h"
#include "engine/policy_api.h"
#include "engine/request.h"
#include "metrics/request_record.h"
#include "util/error.h"

namespace sl::ui {

// Commands (GUI -> worker) and notices (worker -> GUI) cross threads through
// these mutex-guarded queues, and the wake-ups carry no data: Qt's own
// queued-call hand-off is invisible to ThreadSanitizer (Qt is not
// instrumented), so data captured in a queued lambda would read as a race.
struct WorkerNotice {
  enum Kind { Frame, Stopped } kind = Frame;
  std::uint64_t seq = 0;
};

// Runs in the GUI thread: hands every live controller its queued notices.
void drainAllNotices();

struct SimShared {
  std::mutex m;
  std::deque<std::function<void()>> commands;  // under m
  std::vector<WorkerNotice> notices;           // under m
  std::shared_ptr<const LiveFrame> latest = std::make_shared<LiveFrame>();
  std::vector<ProbeSample> probes;
  std::vector<FinishedPoint> finished;
  std::vector<PolicySample> policySamples;
  std::vector<AnimationNote> notes;
  bool pending = false;
};

namespace {

using Clock = std::chrono::steady_clock;
double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Keep the newest `cap` entries of `v`.
template <class T> void keepNewest(std::vector<T>& v, std::size_t cap) {
  if (v.size() > cap) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(cap));
}

// Collects what the charts, the inspector and the animations need while the
// engine runs (worker thread only).
class Collector final : public SimObserver {
public:
  Collector(TimelineStore& store, Simulator& sim)
      : store_(store), policy_(&sim.globalPolicy()), sim_(sim) {}
  void onRequestEvent(RequestEvent e, const Request& r, int instance, SimTime t) override {
    store_.onEvent(e, r, instance, t, sim_.cachedPromptTokens(r));
    AnimationNote n;
    n.time = t;
    n.requestId = r.id;
    n.instance = instance;
    n.afterThink = r.reasoning > 0 && r.generated >= r.reasoning;
    switch (e) {
      case RequestEvent::Preempted:
        n.kind = r.state == ReqState::Swapped ? AnimationNote::Kind::PreemptedSwap
                                              : AnimationNote::Kind::PreemptedRecompute;
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
      default: return;
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
  std::map<std::int64_t, int> migrationSource_;  // requests with a copy in flight
  std::set<std::int64_t> handingOff_;             // requests between HandoffStart and their KV's arrival
};

}  // namespace

// Lives in the worker thread; every method runs there.
class SimWorker : public QObject {
public:
  SimWorker(std::shared_ptr<SimShared> shared, std::shared_ptr<TimelineStore> store, SimController* ctl)
      : shared_(std::move(shared)), store_(std::move(store)), ctl_(ctl) {}

  // The slice timer must be created in the thread that runs it.
  void start() {
    timer_ = new QTimer(this);
    timer_->setSingleShot(true);
    timer_->setTimerType(Qt::PreciseTimer);
    connect(timer_, &QTimer::timeout, this, [this] { slice(); });
  }
  void shutdown() {
    if (timer_) timer_->stop();
    delete timer_;
    timer_ = nullptr;
    run_.reset();
    collector_.reset();
    // The worker's last writes end here; taking the shared mutex publishes
    // them to ~SimController, which takes it after the thread has ended.
    std::lock_guard<std::mutex> lock(shared_->m);
  }

  void load(std::shared_ptr<LiveRun> run, int generation, std::uint64_t seq, ChangeLog replay) {
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
    run_.reset();  // the simulator holds a pointer to the collector: drop it first
    store_->clear();
    decisionsSeen_ = 0;
    collector_ = std::make_unique<Collector>(*store_, run->sim());
    run_ = std::move(run);
    run_->sim().addObserver(collector_.get());
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
  void play(std::uint64_t seq) {
    lastSeq_ = seq;
    if (!run_ || run_->sim().done()) return notifyStopped();
    stepTarget_.reset();
    running_ = true;
    startClock();
    anchor();
    resetWindow();
    arm(0);
  }
  void pause(std::uint64_t seq) {
    lastSeq_ = seq;
    running_ = false;
    stopClock();
    stepTarget_.reset();
    publish(true);
  }
  void runTo(SimTime t, std::uint64_t seq) {
    lastSeq_ = seq;
    if (!run_ || run_->sim().done()) return notifyStopped();
    stepTarget_ = t;
    running_ = true;
    startClock();
    resetWindow();
    arm(0);
  }
  void step(std::uint64_t seq) { runTo(clockNs_ + kNsPerSecond, seq); }
  void republish() { publish(true); }
  void setSpeed(double s) {
    speed_ = s;
    anchor();
  }
  void setMode(RunMode m) {
    mode_ = m;
    anchor();
  }
  void setPolicyKnob(const std::string& knob, double value) {
    if (!run_) return;
    try {
      run_->apply(KnobChange{clockNs_, 0, std::string(kKnobPolicyPrefix) + knob, value});
    } catch (const InputError&) {
      return;  // validated by the scenario panel; nothing to report
    }
    publish(true);
  }
  void setRate(double rate) {
    if (!run_ || !run_->rateLive) return;
    if (run_->rate && run_->rate->rate() == rate) return;  // no change, nothing to log
    try {
      run_->apply(KnobChange{clockNs_, 0, kKnobArrivalRate, rate});
    } catch (const InputError&) {
      return;  // the GUI bounds the slider; nothing to report
    }
    publish(true);
  }
  void setClients(int n) {
    if (!run_ || !run_->clients) return;
    if (run_->clients->concurrency() == n) return;  // no change, nothing to log
    try {
      run_->apply(KnobChange{clockNs_, 0, kKnobConcurrency, static_cast<double>(n)});
    } catch (const InputError&) {
      return;  // the GUI bounds the slider; nothing to report
    }
    publish(true);
  }

private:
  bool paced() const { return mode_ == RunMode::Run && speed_ > 0 && !stepTarget_; }
  void anchor() {
    anchorWall_ = Clock::now();
    anchorSim_ = clockNs_;
  }
  void resetWindow() {
    winWall_ = Clock::now();
    winClock_ = clockNs_;
    winEvents_ = run_ ? run_->sim().eventsProcessed() : 0;
  }
  void arm(int ms) {
    if (timer_ && !timer_->isActive()) timer_->start(ms);
  }
  double progress() const {
    if (!run_) return -1;
    const PreparedRun& p = *run_->prepared;
    if (p.scenario.run.duration_s && *p.scenario.run.duration_s > 0)
      return std::clamp(nsToSeconds(clockNs_) / *p.scenario.run.duration_s, 0.0, 1.0);
    if (p.expectedRequests > 0)
      return std::clamp(static_cast<double>(run_->prepared->simulator->finishedCount()) /
                            static_cast<double>(p.expectedRequests), 0.0, 1.0);
    return -1;
  }

  void slice() {
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

  // Simulator::run(t); while a saved run's change is still to come, event by
  // event instead, so that each change is applied exactly at its event
  // boundary (as servelab-cli run replays it), whatever its recorded time.
  // The chunk may then end one event past t (clockNs_ follows sim.now()).
  void advance(SimTime t) {
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

  // Elapsed wall time while playing (pacing sleeps included, pauses not).
  void startClock() {
    if (!playingSince_) playingSince_ = Clock::now();
  }
  void stopClock() {
    if (playingSince_) elapsedBefore_ += secondsBetween(*playingSince_, Clock::now());
    playingSince_.reset();
  }

  void updateRates(Clock::time_point now) {
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

  void publish(bool force) {
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
    // The inspected request's token times move between its events.
    if (const std::int64_t id = store_->watched(); id >= 0)
      run_->sim().forEachActive([&](const Request& r) {
        if (r.id == id) store_->refresh(r);
      });
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
    f->changes = run_->changes;
    f->fingerprint = sim.fingerprint();
    f->preemptions = sim.preemptions();
    f->migrations = sim.migrations();
    bool emitNow = false;
    {
      std::lock_guard<std::mutex> lock(shared_->m);
      shared_->latest = std::move(f);
      emitNow = !shared_->pending;
      shared_->pending = true;
    }
    if (emitNow) notify(WorkerNotice{WorkerNotice::Frame, 0});
  }

  void notifyStopped() { notify(WorkerNotice{WorkerNotice::Stopped, lastSeq_}); }

  void notify(WorkerNotice n) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(shared_->m);
      wake = shared_->notices.empty();
      shared_->notices.push_back(n);
    }
    if (wake) QMetaObject::invokeMethod(ctl_, [] { drainAllNotices(); }, Qt::QueuedConnection);
  }

public:
  /// Run the queued commands (in this worker's thread).
  void drainCommands() {
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard<std::mutex> lock(shared_->m);
      batch.swap(shared_->commands);
    }
    for (auto& c : batch) c();
  }

private:

  std::shared_ptr<SimShared> shared_;
  std::shared_ptr<TimelineStore> store_;
  SimController* ctl_;
  QTimer* timer_ = nullptr;
  std::shared_ptr<LiveRun> run_;
  std::unique_ptr<Collector> collector_;
  ChangeLog replay_;           // a saved run's change log, replayed as the run reaches it
  std::size_t nextReplay_ = 0;
  std::size_t decisionsSeen_ = 0;  // decision-log entries handed to the store
  int generation_ = 0;
  std::uint64_t lastSeq_ = 0;
  bool running_ = false;
  RunMode mode_ = RunMode::Run;
  double speed_ = 1.0;
  SimTime clockNs_ = 0;
  SimTime chunkNs_ = kNsPerSecond / 1000;
  std::optional<SimTime> stepTarget_;
  Clock::time_point anchorWall_ = Clock::now();
  SimTime anchorSim_ = 0;
  Clock::time_point winWall_ = Clock::now();
  SimTime winClock_ = 0;
  std::int64_t winEvents_ = 0;
  double elapsedBefore_ = 0;                        // wall s played before playingSince_
  std::optional<Clock::time_point> playingSince_;  // set while running
  double wallS_ = 0, speedAchieved_ = 0, eventsPerSec_ = 0, etaS_ = -1;

  friend class SimController;
};

// ------------------------------------------------------------------ controller

namespace {

// Which worker runs in which thread: the wake-up call posted to a worker
// captures nothing and finds its worker here (registered before the thread
// starts, removed after it ends, both under the mutex).
std::mutex gWorkersM;
std::map<const QThread*, SimWorker*> gWorkers;
std::vector<SimController*> gControllers;  // under gWorkersM

void drainCurrentWorker() {
  SimWorker* w = nullptr;
  {
    std::lock_guard<std::mutex> lock(gWorkersM);
    auto it = gWorkers.find(QThread::currentThread());
    if (it != gWorkers.end()) w = it->second;
  }
  if (w) w->drainCommands();
}

}  // namespace

void drainAllNotices() {
  std::vector<SimController*> all;
  {
    std::lock_guard<std::mutex> lock(gWorkersM);
    all = gControllers;
  }
  // Controllers live in the GUI thread, as this call does: none can be
  // destroyed while it runs.
  for (SimController* c : all) c->drainNotices();
}

double estimateRemainingSimS(double clockS, std::int64_t expected, std::int64_t arrived, std::int64_t finished,
                             double durationS) {
  if (durationS > 0) return std::max(0.0, durationS - clockS);
  if (expected <= 0 || clockS <= 0) return -1;
  if (finished >= expected) return 0;
  if (finished > 0) return static_cast<double>(expected - finished) * clockS / static_cast<double>(finished);
  // No completion yet: at least the remaining arrivals at their pace so far.
  if (arrived > 0) return static_cast<double>(expected - std::min(arrived, expected)) * clockS / static_cast<double>(arrived);
  return -1;
}

SimController::SimController(QObject* parent)
    : QObject(parent), shared_(std::make_shared<SimShared>()), timelines_(std::make_shared<TimelineStore>()) {
  thread_ = new QThread(this);
  thread_->setObjectName("servelab-sim");
  worker_ = new SimWorker(shared_, timelines_, this);
  worker_->moveToThread(thread_);
  {
    std::lock_guard<std::mutex> lock(gWorkersM);
    gWorkers[thread_] = worker_;
    gControllers.push_back(this);
  }
  thread_->start();
  post([w = worker_] { w->start(); });
}

SimController::~SimController() {
  // Stop mid-run cleanly: the worker finishes its slice (<= ~8 ms), drops the
  // engine in its own thread, then the thread ends.
  post([w = worker_] { w->shutdown(); });
  QMetaObject::invokeMethod(worker_, [] { drainCurrentWorker(); }, Qt::BlockingQueuedConnection);
  thread_->quit();
  thread_->wait();
  // QThread::wait() synchronises through Qt, which ThreadSanitizer cannot
  // see; taking the mutex the worker took last makes every write of the
  // worker thread happen-before the frees below.
  { std::lock_guard<std::mutex> lock(shared_->m); }
  {
    std::lock_guard<std::mutex> lock(gWorkersM);
    gWorkers.erase(thread_);
    std::erase(gControllers, this);
  }
  delete worker_;
}

template <class F> void SimController::post(F&& f) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    wake = shared_->commands.empty();
    shared_->commands.emplace_back(std::forward<F>(f));
  }
  if (wake) QMetaObject::invokeMethod(worker_, [] { drainCurrentWorker(); }, Qt::QueuedConnection);
}

void SimController::drainNotices() {
  std::vector<WorkerNotice> batch;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    batch.swap(shared_->notices);
  }
  for (const WorkerNotice& n : batch) {
    if (n.kind == WorkerNotice::Frame) {
      emit frameReady();
    } else {
      if (n.seq < lastSeq_) continue;  // a newer command is on its way
      running_ = false;
      emit paused();
    }
  }
}

bool SimController::load(const Scenario& s, QString* error) { return load(s, ChangeLog{}, error); }

bool SimController::load(const Scenario& s, const ChangeLog& replay, QString* error) {
  std::shared_ptr<LiveRun> run;
  try {
    run = prepareLiveRun(s);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  scenario_ = s;
  replay_ = replay;
  loaded_ = true;
  running_ = false;
  const int gen = ++generation_;
  const std::uint64_t seq = ++lastSeq_;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    shared_->probes.clear();
    shared_->finished.clear();
    shared_->policySamples.clear();
    shared_->notes.clear();
  }
  timelines_->clear();
  post([w = worker_, run, gen, seq, replay] { w->load(run, gen, seq, replay); });
  return true;
}

void SimController::play() {
  if (!loaded_) return;
  running_ = true;
  post([w = worker_, seq = ++lastSeq_] { w->play(seq); });
}
void SimController::pause() {
  running_ = false;
  post([w = worker_, seq = ++lastSeq_] { w->pause(seq); });
}
void SimController::togglePlay() { running_ ? pause() : play(); }
void SimController::step() {
  if (!loaded_) return;
  running_ = true;
  post([w = worker_, seq = ++lastSeq_] { w->step(seq); });
}
void SimController::runTo(double simSeconds) {
  if (!loaded_) return;
  running_ = true;
  post([w = worker_, t = secondsToNs(simSeconds), seq = ++lastSeq_] { w->runTo(t, seq); });
}
void SimController::reset() {
  if (loaded_) load(scenario_, replay_);
}
void SimController::refreshWatched() {
  if (!loaded_) return;
  post([w = worker_] { w->republish(); });
}
void SimController::setSpeed(double speed) {
  post([w = worker_, speed] { w->setSpeed(speed); });
}
void SimController::setMode(RunMode m) {
  mode_ = m;
  post([w = worker_, m] { w->setMode(m); });
}
void SimController::setArrivalRate(double rate) {
  post([w = worker_, rate] { w->setRate(rate); });
}
void SimController::setClients(int n) {
  post([w = worker_, n] { w->setClients(n); });
}
void SimController::setPolicyKnob(const QString& knob, double value) {
  post([w = worker_, k = knob.toStdString(), value] { w->setPolicyKnob(k, value); });
}

std::shared_ptr<const LiveFrame> SimController::latest() {
  std::lock_guard<std::mutex> lock(shared_->m);
  return shared_->latest;
}
std::shared_ptr<const LiveFrame> SimController::takeFrame() {
  std::lock_guard<std::mutex> lock(shared_->m);
  shared_->pending = false;
  return shared_->latest;
}
std::vector<ProbeSample> SimController::takeProbes() {
  std::vector<ProbeSample> out;
  std::lock_guard<std::mutex> lock(shared_->m);
  out.swap(shared_->probes);
  return out;
}
std::vector<FinishedPoint> SimController::takeFinished() {
  std::vector<FinishedPoint> out;
  std::lock_guard<std::mutex> lock(shared_->m);
  out.swap(shared_->finished);
  return out;
}

std::vector<PolicySample> SimController::takePolicySamples() {
  std::vector<PolicySample> out;
  std::lock_guard<std::mutex> lock(shared_->m);
  out.swap(shared_->policySamples);
  return out;
}

std::vector<AnimationNote> SimController::takeNotes() {
  std::vector<AnimationNote> out;
  std::lock_guard<std::mutex> lock(shared_->m);
  out.swap(shared_->notes);
  return out;
}

bool SimController::waitIdle(int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (running_ && t.elapsed() < timeoutMs) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  return !running_;
}

}  // namespace sl::ui
