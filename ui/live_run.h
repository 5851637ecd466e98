#pragma once
// The GUI's view of one run, without Qt: a PreparedRun whose workload sits
// behind a LiveRateWorkload, plus the change log of live knob moves. A run is
// reproducible from (scenario, seed, change log): replayRun() re-applies each
// change at the same event boundary (the number of events processed before
// it) and the same simulated time.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run.h"
#include "workload/live_rate.h"

namespace sl::ui {

/// One live change: applied after `events` events, at simulated time `time`.
struct KnobChange {
  SimTime time = 0;
  std::int64_t events = 0;
  std::string knob;  // "arrival_rate" (req/s) or "policy.<knob>" (a live-safe policy knob)
  double value = 0;
  bool operator==(const KnobChange&) const = default;
};
using ChangeLog = std::vector<KnobChange>;

inline constexpr const char* kKnobArrivalRate = "arrival_rate";
/// Prefix of a policy knob change: "policy.answering_quantum".
inline constexpr const char* kKnobPolicyPrefix = "policy.";

nlohmann::ordered_json changeLogToJson(const ChangeLog& log);
ChangeLog changeLogFromJson(const nlohmann::json& j);  // InputError on a malformed log

/// Whether the live arrival-rate control applies (synthetic Poisson or Gamma
/// arrivals; not traces or rate schedules).
bool liveRateSupported(const Scenario& s);

struct LiveRun {
  std::unique_ptr<PreparedRun> prepared;
  LiveRateWorkload* rate = nullptr;  // owned by the simulator
  bool rateLive = false;             // liveRateSupported(scenario)
  ChangeLog changes;

  Simulator& sim() { return *prepared->simulator; }
  /// Apply `c` now (at the current event boundary) and append it to the log.
  /// `c.events` is overwritten with the simulator's event count. InputError
  /// for an unknown knob, one not safe mid-run, or a value it refuses
  /// (policy knobs: applyLiveKnob in core/policy/registry.h).
  void apply(KnobChange c);
};

/// prepareRun with the live workload wrapper. InputError as prepareRun.
std::unique_ptr<LiveRun> prepareLiveRun(const Scenario& s, const std::string& source = "scenario");

struct ReplayResult {
  std::uint64_t fingerprint = 0;
  std::int64_t events = 0;
  std::int64_t finished = 0;
  SimTime now = 0;
};

/// Re-run `s` applying `log`; stops after `stopAfterEvents` events (-1: the
/// end of the run).
ReplayResult replayRun(const Scenario& s, const ChangeLog& log, std::int64_t stopAfterEvents = -1);

}  // namespace sl::ui
