#pragma once
// Running a prepared scenario to the end and writing its outputs
// (60-cli-formats.md "Outputs"): summary.json, requests.csv, timeseries.csv,
// trace.json, each written atomically.
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "metrics/summary.h"
#include "run/run.h"

namespace sl {

inline constexpr const char* kServeLabVersion = "0.1.0";

struct RunOptions {
  std::string outDir;             // empty: write nothing
  bool recordWallTime = false;    // wall_s in summary.json (breaks byte-identical reruns)
  /// Called now and then with (fraction done in [0,1], simulated seconds).
  std::function<void(double, double)> progress;
};

struct RunResult {
  Summary summary;
  nlohmann::ordered_json summaryJson;  // as written to summary.json (wall_s filled in)
  std::uint64_t fingerprint = 0;
  double wallSeconds = 0;
  std::int64_t events = 0;
  bool stalled = false;  // ended because nothing could progress (see Simulator::stalled)
};

RunResult executeRun(PreparedRun& run, const RunOptions& opt);

/// Fingerprint as 16 hex digits.
std::string fingerprintHex(std::uint64_t f);

/// summary.json's "policy_report" object: the policy's figures, keys split
/// at '/' into nested objects, integral values written as integers.
nlohmann::ordered_json policyReportJson(const std::vector<PolicyReportEntry>& entries);

/// summary.json's "trace" object: a trace reader's row counts.
nlohmann::ordered_json traceStatsJson(const TraceStats& t);

}  // namespace sl
