#pragma once
// A saved run (docs/scenario-format.md "Saved runs"): a scenario file with
// one more top-level section, "live_changes", holding the change log of the
// live knob moves made while the run played in the GUI (File ▸ Save run
// as…) and, optionally, where the GUI run stood when it was saved:
//
//   { "schema_version": 1, "cluster": …, …, "run": {"seed": 7, …},
//     "live_changes": {
//       "version": 1,
//       "changes": [{"events": 81234, "time_ns": 30000000000, "time_s": 30.0,
//                    "knob": "policy.answering_quantum", "value": 20.0}, …],
//       "saved_at": {"servelab": "0.1.0", "events": 200000, "sim_s": 90.0,
//                    "fingerprint": "0123456789abcdef"} } }
//
// `servelab-cli run SAVED.json` replays it (run/execute.h executeRun with a
// LiveRun) and checks the fingerprint at saved_at.events.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "run/live_run.h"
#include "scenario/spec.h"

namespace sl {

inline constexpr const char* kLiveChangesKey = "live_changes";
inline constexpr int kLiveChangesVersion = 1;

/// Where the GUI run stood when it was saved.
struct SavedAt {
  std::string servelab;  // the version that saved it ("" = not given)
  std::int64_t events = 0;
  double simS = 0;
  std::uint64_t fingerprint = 0;
};

/// The "live_changes" section.
struct LiveChanges {
  ChangeLog changes;
  std::optional<SavedAt> savedAt;
};

/// Remove the "live_changes" section from a scenario document (call it after
/// --set overrides, before parseScenario) and parse it; nullopt when the
/// document has none. InputError "source: live_changes…: …" for a malformed
/// section (unknown or missing field, wrong type, bad version, a malformed
/// change: changeLogFromJson).
std::optional<LiveChanges> takeLiveChanges(nlohmann::json& doc, const std::string& source);

/// A scenario file that may be a saved run: the scenario (base_dir set) and
/// its live changes (nullopt for a plain scenario), both validated. The
/// errors of loadScenarioFile, plus those of takeLiveChanges and
/// validateLiveChanges.
struct ScenarioFile {
  Scenario scenario;
  std::optional<LiveChanges> live;
};
ScenarioFile loadScenarioOrSavedRun(const std::string& path);

/// The section as written (version, changes, saved_at when set).
nlohmann::ordered_json liveChangesToJson(const LiveChanges& lc);

/// The canonical scenario (dumpScenario) with the "live_changes" section
/// last, 2-space indented, trailing newline.
std::string dumpSavedRun(const Scenario& s, const LiveChanges& lc);

/// Check the changes against the scenario (validateChangeLog), naming
/// "source: live_changes.changes[i]…".
void validateLiveChanges(const Scenario& s, const LiveChanges& lc, const std::string& source);

/// The relative paths of `s` (cluster.profile, workload.trace.path,
/// empirical length distributions, mixtures included) rewritten so that they
/// resolve from folder `toDir` to the files they named from s.base_dir;
/// absolute paths stay. base_dir becomes `toDir`. For saving a scenario into
/// another folder.
void rebaseScenarioPaths(Scenario& s, const std::string& toDir);

}  // namespace sl
