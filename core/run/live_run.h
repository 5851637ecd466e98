#pragma once
// A run with live changes, without Qt: a PreparedRun whose workload sits
// behind a LiveRateWorkload (when the scenario's arrival rate can change
// live), plus the change log of live knob moves (the GUI's rate slider and
// live policy knobs). A run is reproducible from (scenario, seed, change
// log): replayRun() and executeRun(LiveRun&, …) (run/execute.h) re-apply each
// change at the same event boundary (the number of events processed before
// it) and the same simulated time. The GUI (ui/sim_controller), its exports
// (ui/export_run) and `servelab-cli run SAVED.json` (run/saved_run.h) share
// this code.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run.h"
#include "workload/closed_loop.h"
#include "workload/live_rate.h"

namespace sl {

/// One live change: applied after `events` events, at simulated time `time`.
struct KnobChange {
  SimTime time = 0;
  std::int64_t events = 0;
  std::string knob;  // "arrival_rate" (req/s), "concurrency" (closed-loop clients), "speculative_k" or "policy.<knob>"
  double value = 0;
  bool operator==(const KnobChange&) const = default;
};
using ChangeLog = std::vector<KnobChange>;

inline constexpr const char* kKnobArrivalRate = "arrival_rate";
/// Closed-loop client count (an integer >= 1): raising it adds clients at
/// once, lowering it retires clients as their current requests finish.
inline constexpr const char* kKnobConcurrency = "concurrency";
/// Speculative decoding's draft length (an integer in [0, 16]; 0 = off)
/// from the next step on; needs cluster.speculative.
inline constexpr const char* kKnobSpeculativeK = "speculative_k";
/// Prefix of a policy knob change: "policy.answering_quantum".
inline constexpr const char* kKnobPolicyPrefix = "policy.";

/// The log as a JSON array of {"events", "time_ns", "time_s", "knob",
/// "value"} (docs/scenario-format.md "Saved runs").
nlohmann::ordered_json changeLogToJson(const ChangeLog& log);
/// The inverse, strict: InputError naming `where[i].field` for a missing,
/// unknown or mistyped field, a negative count or time, a non-finite value,
/// a `time_s` that disagrees with `time_ns`, or entries out of order (events
/// and times never decrease). Knob names and values are checked against a
/// scenario by validateChangeLog.
ChangeLog changeLogFromJson(const nlohmann::json& j, const std::string& where = "change log");

/// Whether the live arrival-rate control applies (synthetic Poisson or Gamma
/// arrivals; not traces or rate schedules).
bool liveRateSupported(const Scenario& s);
/// Whether the live client count applies (workload.arrival.process closed).
bool liveClientsSupported(const Scenario& s);

/// Check every change against scenario `s` before anything runs: an
/// `arrival_rate` change needs a live rate (liveRateSupported) and a finite
/// rate > 0; a `concurrency` change a closed loop and an integer in
/// [1, 1000000]; a `policy.<knob>` change a live-safe knob of s.policy.id, in its
/// range (an integer for integer knobs). InputError naming `where[i]`.
void validateChangeLog(const Scenario& s, const ChangeLog& log, const std::string& where = "change log");

struct LiveRun {
  std::unique_ptr<PreparedRun> prepared;
  LiveRateWorkload* rate = nullptr;  // owned by the simulator; null when the rate is not live
  bool rateLive = false;             // liveRateSupported(scenario)
  ClosedLoopWorkload* clients = nullptr;  // owned by the simulator; null unless a closed loop
  ChangeLog changes;

  Simulator& sim() { return *prepared->simulator; }
  /// Apply `c` now (at the current event boundary) and append it to the log.
  /// `c.events` is overwritten with the simulator's event count and `c.time`
  /// raised to the simulator's clock if it is behind. InputError for an
  /// unknown knob, one not safe mid-run, or a value it refuses (policy
  /// knobs: applyLiveKnob in core/policy/registry.h).
  void apply(KnobChange c);
};

/// prepareRun with the live workload wrapper (only when liveRateSupported:
/// other workloads, traces included, are built exactly as prepareRun builds
/// them, so their trace counters stay; a closed loop is reached directly for
/// its client count). Until a rate change the run is
/// identical to prepareRun's (same fingerprint). InputError as prepareRun.
std::unique_ptr<LiveRun> prepareLiveRun(const Scenario& s, const std::string& source = "scenario");

/// Step `live` until it ends or has processed `stopAfterEvents` events (-1:
/// no limit), applying the changes of `log` from `*next` on at their event
/// boundaries (`*next` is advanced). Returns false once the run has ended
/// (Simulator::step returned false).
bool stepWithChanges(LiveRun& live, const ChangeLog& log, std::size_t& next, std::int64_t stopAfterEvents = -1);

struct ReplayResult {
  std::uint64_t fingerprint = 0;
  std::int64_t events = 0;
  std::int64_t finished = 0;
  SimTime now = 0;
};

/// Re-run `s` applying `log`; stops after `stopAfterEvents` events (-1: the
/// end of the run).
ReplayResult replayRun(const Scenario& s, const ChangeLog& log, std::int64_t stopAfterEvents = -1);

}  // namespace sl
