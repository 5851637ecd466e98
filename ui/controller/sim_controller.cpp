// SimController: the GUI-side facade; its worker (the engine's side) is in
// sim_worker.{h,cpp}.
#include "ui/controller/sim_controller.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>

#include <algorithm>
#include <map>
#include <mutex>

#include "ui/controller/sim_worker.h"
#include "workload/parse_util.h"

namespace sl::ui {

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

QString nameTraceField(const Scenario& s, const QString& message) {
  if (!s.workload.trace || message.contains("workload.trace")) return message;
  // The reader names the file it could not read ("PATH: cannot open trace
  // file", "PATH:3: malformed …"): say which field named it (issue 50).
  const QString path = QString::fromStdString(detail::resolvePath(s.workload.trace->path, s.base_dir));
  const qsizetype at = message.indexOf(path + ":");
  if (path.isEmpty() || at < 0) return message;
  return message.left(at) + "workload.trace.path: " + message.mid(at);
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
    if (error) *error = nameTraceField(s, QString::fromStdString(e.what()));
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
  post([w = worker_, run, gen, seq, replay, lanes = lanes_] { w->load(run, gen, seq, replay, lanes); });
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
void SimController::setSpeculativeK(int k) {
  post([w = worker_, k] { w->setSpeculativeK(k); });
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
