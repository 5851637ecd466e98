#pragma once
// Sweep specs (SWEEP.json, docs/sweeps.md): a base scenario plus axes over
// any scenario JSON path, as a full grid or as listed points, and the
// summary.json metrics to collect. Loading expands and validates every point
// (the scenario loader and prepareRun: fields, presets, knobs, memory), so a
// bad spec fails with an InputError naming the file and the place before any
// run starts.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/spec.h"
#include "sweep/capacity.h"

namespace sl::sweep {

/// Sweep metrics computed by the capacity planner instead of read from
/// summary.json.
inline constexpr const char* kMetricMaxRate = "capacity.max_rate";
inline constexpr const char* kMetricMinTimeScale = "capacity.min_time_scale";
inline constexpr const char* kMetricMinInstances = "capacity.min_instances";

struct SweepSpec {
  std::string source;                 // file name, prefixes messages
  nlohmann::json baseDoc;             // base scenario document, "set" applied
  std::string baseDir = ".";          // relative paths of the base scenario
  std::vector<std::string> axes;      // scenario JSON paths, in column order
  std::vector<std::vector<nlohmann::json>> points;  // one value per axis; index = row
  std::vector<std::string> metrics;   // summary.json paths or capacity.* metrics
  CapacityOptions capacity;           // for capacity.* metrics
  std::vector<Scenario> scenarios;    // the scenario of every point (validated)
  std::string hash;                   // 16 hex digits over everything that is run

  /// The normalized spec written to an output folder's sweep.json: hash,
  /// axes, points, metrics, capacity options and each point's canonical
  /// scenario is summarized by the hash (base scenario in canonical form).
  nlohmann::ordered_json normalized() const;
};

/// Reads and validates SWEEP.json (see docs/sweeps.md for the format).
SweepSpec loadSweepFile(const std::string& path);
/// Same from a parsed document; `baseDir` resolves a relative "base" path.
SweepSpec parseSweep(const nlohmann::json& j, const std::string& source, const std::string& baseDir);

/// Default metrics when a spec lists none.
const std::vector<std::string>& defaultSweepMetrics();

/// Value of a dot path ("ttft_s.p99") in a summary.json document; null when absent.
nlohmann::ordered_json metricValue(const nlohmann::ordered_json& summary, const std::string& path);

}  // namespace sl::sweep
