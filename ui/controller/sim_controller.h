#pragma once
// The simulation runs on a worker QThread; the GUI never touches engine
// state (50-gui.md "Threading"). SimController is the GUI-side facade: its
// commands are queued to the worker, which runs the engine in slices bounded
// by ~8 ms of wall time and by the pacing target (t0 + speed × wall elapsed).
// After a slice the worker publishes an immutable LiveFrame (latest wins),
// appends probe samples and finished-request points to pending buffers, and
// emits the dataless frameReady() only if no frame is pending. The GUI pulls.
#include <QObject>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/observer.h"
#include "engine/snapshot.h"
#include "ui/inspector/inspector_store.h"
#include "run/live_run.h"

class QThread;

namespace sl::ui {

/// OMNeT++-style run modes: Run animates at the chosen speed; Fast and
/// Express run as fast as possible with the display refreshed a few times per
/// second (Fast) or about twice a second, counters and the cluster view
/// without animation, the charts on a CPU budget (Express; MainWindow::pull).
enum class RunMode { Run, Fast, Express };

/// One finished request, for the TTFT-vs-reasoning scatter.
struct FinishedPoint {
  double finishS = 0;
  double reasoning = 0;
  double ttftS = -1;
  double tpotS = -1;
  double e2eS = -1;
  double qoe = -1;
  bool sloMet = false;  // meets every SLO the scenario sets (metrics/summary.h meetsSlo)
};

/// The running policy's cluster-level values at one probe
/// (GlobalPolicy::publishCluster), for the "policy" chart.
struct PolicySample {
  double timeS = 0;
  std::vector<PolicyField> fields;
};

/// A notable engine event for animation and lecture callouts (preemptions,
/// migrations, aborts), queued for the GUI like the probe samples.
struct AnimationNote {
  enum class Kind : std::uint8_t { PreemptedSwap, PreemptedRecompute, MigrationStart, MigrationEnd, Aborted };
  Kind kind = Kind::PreemptedSwap;
  SimTime time = 0;
  std::int64_t requestId = 0;
  int instance = -1;       // where it happened (source for MigrationStart, destination for MigrationEnd)
  int other = -1;          // MigrationEnd: the source instance
  bool afterThink = false; // the request had produced all its reasoning tokens (</think>)
  bool handoff = false;    // the KV copy of a disaggregated hand-off (prefill → decode), not a migration
};

/// What the GUI sees of the run; immutable once published.
struct LiveFrame {
  Snapshot snapshot;
  int generation = 0;          // bumped by load/reset: the GUI clears its history
  double clockS = 0;           // simulated clock (>= snapshot.now)
  double speedAchieved = 0;    // simulated s per wall s, recent
  double eventsPerSec = 0;     // recent
  double wallS = 0;            // wall time the engine spent computing (busy)
  double elapsedS = 0;         // wall time elapsed while playing (pauses excluded)
  bool running = false;
  bool done = false;
  bool stalled = false;
  RunMode mode = RunMode::Run;
  double progress = -1;        // 0..1 for finite runs, -1 unknown
  double etaS = -1;            // wall seconds left, -1 unknown
  double arrivalRate = 0;      // current (live) rate, req/s
  bool rateLive = false;
  int clients = 0;             // closed loop: current client count
  bool clientsLive = false;    // the scenario is a closed loop
  int specK = -1;              // speculative decoding's draft length now (0: off; -1: the run has no speculation)
  bool specLive = false;       // the scenario has cluster.speculative: the live k control applies
  ChangeLog changes;
  std::uint64_t fingerprint = 0;
  std::int64_t preemptions = 0, migrations = 0;  // engine totals so far (compare mode)
  std::int64_t laneSteps = 0;  // decode-lane steps so far, all instances (0: the eager path; docs/engine.md)
};

/// Simulated seconds left in a run at `clockS`, for the ETA; -1 unknown. A
/// run with `durationS` > 0 stops there. Otherwise it ends when the last of
/// `expected` requests finishes: the unfinished ones at the completion pace
/// of the run so far (finished / clockS), which counts an overloaded run's
/// backlog (the old ETA extrapolated the last half second of progress and
/// said 47 s left at t = 164 of ~560 s, issue 29); before any completion,
/// the remaining arrivals at their pace so far (a lower bound).
/// A load error about the trace file (the reader names only the file) with
/// the field that named it: "… workload.trace.path: PATH: cannot open trace
/// file". Other messages are returned as they are.
QString nameTraceField(const Scenario& s, const QString& message);

double estimateRemainingSimS(double clockS, std::int64_t expected, std::int64_t arrived, std::int64_t finished,
                             double durationS = 0);

class SimWorker;
struct SimShared;

class SimController : public QObject {
  Q_OBJECT
public:
  explicit SimController(QObject* parent = nullptr);
  ~SimController() override;

  /// Prepare `s` (on the calling thread, so errors come back at once) and
  /// hand it to the worker, paused at t = 0. False + `error` on an invalid scenario.
  bool load(const Scenario& s, QString* error = nullptr);
  /// The same, replaying `replay` (a saved run's change log, already
  /// validated against `s`): each change is applied at its event boundary as
  /// the run reaches it, so the run is the saved one (same fingerprint), and
  /// Reset replays it again. Live changes made meanwhile are applied too.
  bool load(const Scenario& s, const ChangeLog& replay, QString* error = nullptr);
  const Scenario& scenario() const { return scenario_; }
  /// The change log being replayed (empty for a plain scenario).
  const ChangeLog& replayLog() const { return replay_; }
  /// Whether the engine may run its lazy decode lanes (docs/engine.md "Lazy
  /// decode lane"; the default, on): the worker's observer is lane-safe, so
  /// the GUI watches without forcing the eager path. Off keeps them off,
  /// for A/B checks (same results either way) and the bench's baseline.
  /// Takes effect at the next load or reset.
  void setDecodeLanes(bool on) { lanes_ = on; }
  bool decodeLanes() const { return lanes_; }
  bool loaded() const { return loaded_; }

  void play();
  void pause();
  void togglePlay();
  /// Advance one simulated second, then pause.
  void step();
  /// Back to t = 0 with the loaded scenario (the change log is cleared; a
  /// saved run's log is replayed again).
  void reset();
  /// Simulated seconds per wall second; <= 0 or infinity = as fast as possible.
  void setSpeed(double speed);
  /// Bring the watched request's timeline (TimelineStore::setWatched) up to
  /// date now and publish a frame: the worker refreshes it on its own only
  /// while the run goes on, so one picked while paused would show its
  /// progress at its latest event.
  void refreshWatched();
  void setMode(RunMode m);
  /// Live arrival rate (req/s): applied at the next event boundary and logged.
  void setArrivalRate(double rate);
  /// Live closed-loop client count: applied at the next event boundary and
  /// logged as "concurrency" (ignored unless the scenario is a closed loop).
  void setClients(int n);
  /// Live speculative-decoding draft length (0 = off, up to 16): applied
  /// from the next engine step on, logged as "speculative_k" (ignored unless
  /// the scenario has cluster.speculative).
  void setSpeculativeK(int k);
  /// Live policy knob (a live-safe knob of the loaded policy): applied at the
  /// next event boundary and logged as "policy.<knob>"; refused values are
  /// dropped (the scenario panel validates first).
  void setPolicyKnob(const QString& knob, double value);
  /// Run unpaced until the simulated clock reaches `t` (or the run ends), then pause.
  void runTo(double simSeconds);
  bool isRunning() const { return running_; }
  RunMode mode() const { return mode_; }

  /// Latest frame (never null after construction).
  std::shared_ptr<const LiveFrame> latest();
  /// Take the latest frame and mark it consumed (re-arms frameReady).
  std::shared_ptr<const LiveFrame> takeFrame();
  std::vector<ProbeSample> takeProbes();
  std::vector<FinishedPoint> takeFinished();
  /// The policy's published series since the last call, one sample per probe
  /// (none when the policy publishes nothing).
  std::vector<PolicySample> takePolicySamples();
  /// Notable events since the last call (at most kMaxPendingNotes are kept).
  std::vector<AnimationNote> takeNotes();
  static constexpr std::size_t kMaxPendingNotes = 4096;
  /// Per-request timelines and per-instance histories of the current run
  /// (thread-safe; cleared by load/reset).
  TimelineStore& timelines() const { return *timelines_; }

  /// Block (running the event loop) until the worker is paused or done, up to `timeoutMs`.
  bool waitIdle(int timeoutMs);

signals:
  /// Dataless: a new frame is ready (emitted only when none is pending).
  void frameReady();
  /// The worker stopped by itself (end of run, end of a step or runTo).
  void paused();

private:
  /// Worker notices (a frame is ready; the worker stopped), queued under the
  /// shared mutex; the queued wake-up call carries no data.
  void drainNotices();
  friend void drainAllNotices();
  friend class SimWorker;
  template <class F> void post(F&& f);
  std::uint64_t lastSeq_ = 0;  // last command sent; stale "stopped" notices are ignored
  QThread* thread_ = nullptr;
  SimWorker* worker_ = nullptr;
  std::shared_ptr<SimShared> shared_;
  std::shared_ptr<TimelineStore> timelines_;
  Scenario scenario_;
  bool loaded_ = false;
  bool lanes_ = true;
  ChangeLog replay_;
  bool running_ = false;
  RunMode mode_ = RunMode::Run;
  int generation_ = 0;
};

}  // namespace sl::ui
