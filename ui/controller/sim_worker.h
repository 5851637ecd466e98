#pragma once
// SimController's worker (internal to ui/controller): runs the engine in
// slices on the worker thread, paced or as fast as possible, and publishes
// LiveFrames and the collected probes, finished requests, policy samples and
// animation notes into SimShared for the GUI thread to take. Every method of
// SimWorker runs in the worker thread. Commands and notices cross threads
// through SimShared's mutex-guarded queues, and the wake-ups carry no data:
// Qt's own queued-call hand-off is invisible to ThreadSanitizer (Qt is not
// instrumented), so data captured in a queued lambda would read as a race.
#include <QObject>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "ui/controller/sim_controller.h"

class QTimer;

namespace sl::ui {

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

class SimCollector;  // the worker's SimObserver (sim_worker.cpp)
class LaneBlocker;   // keeps the decode lanes off when asked (sim_worker.cpp)

// Lives in the worker thread; every method runs there.
class SimWorker : public QObject {
public:
  using Clock = std::chrono::steady_clock;

  SimWorker(std::shared_ptr<SimShared> shared, std::shared_ptr<TimelineStore> store, SimController* ctl);
  ~SimWorker() override;

  // The slice timer must be created in the thread that runs it.
  void start();
  void shutdown();
  /// `lanes` false: the engine's decode lanes stay off (the eager path).
  void load(std::shared_ptr<LiveRun> run, int generation, std::uint64_t seq, ChangeLog replay, bool lanes);
  void play(std::uint64_t seq);
  void pause(std::uint64_t seq);
  void runTo(SimTime t, std::uint64_t seq);
  void step(std::uint64_t seq);
  void republish();
  void setSpeed(double s);
  void setMode(RunMode m);
  void setPolicyKnob(const std::string& knob, double value);
  void setRate(double rate);
  void setClients(int n);
  void setSpeculativeK(int k);
  /// Run the queued commands (in this worker's thread).
  void drainCommands();

private:
  bool paced() const;
  void anchor();
  void resetWindow();
  void arm(int ms);
  double progress() const;
  /// Speculative decoding's draft length in force (the last "speculative_k"
  /// change, else the scenario's k); -1 when the run has none.
  int speculativeK() const;
  void slice();
  // Simulator::run(t); while a saved run's change is still to come, event by
  // event instead, so that each change is applied exactly at its event
  // boundary (as servelab-cli run replays it), whatever its recorded time.
  // The chunk may then end one event past t (clockNs_ follows sim.now()).
  void advance(SimTime t);
  // Elapsed wall time while playing (pacing sleeps included, pauses not).
  void startClock();
  void stopClock();
  void updateRates(Clock::time_point now);
  void publish(bool force);
  void notifyStopped();
  void notify(WorkerNotice n);

  std::shared_ptr<SimShared> shared_;
  std::shared_ptr<TimelineStore> store_;
  SimController* ctl_;
  QTimer* timer_ = nullptr;
  std::shared_ptr<LiveRun> run_;
  std::unique_ptr<SimCollector> collector_;
  std::unique_ptr<LaneBlocker> laneBlocker_;
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

}  // namespace sl::ui
