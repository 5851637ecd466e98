#pragma once
// Running a prepared scenario to the end and writing its outputs
// (60-cli-formats.md "Outputs"): summary.json, requests.csv, timeseries.csv,
// trace.json, each written atomically.
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/summary.h"
#include "run/live_run.h"
#include "run/run.h"

namespace sl {

inline constexpr const char* kServeLabVersion = "0.1.0";

/// Which output files a run writes (`--outputs`, docs/cli.md). Groups:
///  - summary:    summary.json, tail_ttft.csv, decisions.csv (built from the
///                finished records and the policy's decision log);
///  - requests:   requests.csv;
///  - timeseries: timeseries.csv, policy_series.csv (probe samples);
///  - trace:      trace.json.
/// Default: all of them (the files every run wrote before issue 27).
struct OutputSet {
  bool summary = true, requests = true, timeseries = true, trace = true;
  bool any() const { return summary || requests || timeseries || trace; }
  bool operator==(const OutputSet&) const = default;
};

/// Parses a comma-separated list of summary, requests, timeseries, trace
/// (or "all"). Throws InputError naming `option` and the bad value
/// (with a did-you-mean) for an unknown, repeated-empty or empty list.
OutputSet parseOutputSet(const std::string& list, const std::string& option = "--outputs");
/// The list back, in canonical order ("summary,requests,timeseries,trace").
std::string outputSetString(const OutputSet& o);

struct RunOptions {
  std::string outDir;             // empty: write nothing
  OutputSet outputs;              // which files go to outDir (default: all)
  bool recordWallTime = false;    // wall_s in summary.json (breaks byte-identical reruns)
  /// Called now and then with (fraction done in [0,1], simulated seconds).
  std::function<void(double, double)> progress;
  /// Where trace.json goes: unset = outDir/trace.json (when outDir is set);
  /// "" = nowhere (the GUI exports results and trace separately).
  std::optional<std::string> tracePath;
  /// Stop once this many events have been processed (-1: the end of the
  /// run): the GUI's export of a run in progress. Unfinished requests are
  /// written as in-flight rows.
  std::int64_t stopAfterEvents = -1;
  /// Live runs: record the fingerprint when the run has processed exactly
  /// this many events (after the changes at that boundary) in
  /// RunResult::fingerprintAtCheck (-1: no check). `servelab-cli run` checks
  /// a saved run against the fingerprint the GUI saved (run/saved_run.h).
  std::int64_t checkAtEvents = -1;
  /// When set and it turns true (e.g. from a SIGINT handler: a lock-free
  /// atomic store is async-signal-safe), the run stops at its next check
  /// (every 65 536 events, and once more before the files are committed)
  /// by throwing RunCancelled: nothing is written, the temporaries and the
  /// folders the run created are removed.
  const std::atomic<bool>* cancel = nullptr;
};

/// Thrown by executeRun when RunOptions::cancel turned true.
class RunCancelled : public std::runtime_error {
public:
  RunCancelled() : std::runtime_error("run cancelled") {}
};

struct RunResult {
  Summary summary;
  nlohmann::ordered_json summaryJson;  // as written to summary.json (wall_s filled in)
  std::uint64_t fingerprint = 0;
  double wallSeconds = 0;
  std::int64_t events = 0;
  bool stalled = false;  // ended because nothing could progress (see Simulator::stalled)
  bool complete = false; // the run reached its end (not stopped by stopAfterEvents)
  std::vector<std::string> files;  // written, in order
  /// Live runs: the live changes applied (fewer than the log's when the run
  /// ended before a change's event count) and the fingerprint at
  /// RunOptions::checkAtEvents (unset when the run never got there).
  std::size_t changesApplied = 0;
  std::optional<std::uint64_t> fingerprintAtCheck;
};

/// Run to the end (or opt.stopAfterEvents) and write the outputs into
/// opt.outDir: summary.json, requests.csv, timeseries.csv, trace.json,
/// tail_ttft.csv (reasoning workloads), decisions.csv (policies that keep
/// one). Everything is built before the first file is written (atomically).
RunResult executeRun(PreparedRun& run, const RunOptions& opt);

/// summary.json's "cost" object (docs/metrics.md "Cost"): GPUs, $/hour,
/// $ per million output and per million input tokens, output tokens per
/// joule at board power and SLO-meeting requests per dollar, from the pools'
/// prices (the scenario's, else the GPU's cited list price; null where none
/// is known). `inputTokensPerS` NaN: no input figure (null).
nlohmann::ordered_json costJson(const Scenario& s, double outputTokensPerS, double goodputRps,
                                double inputTokensPerS = std::numeric_limits<double>::quiet_NaN());

/// summary.json's "prefix_cache" object (docs/metrics.md "Prefix cache").
nlohmann::ordered_json prefixCacheJson(const PrefixCacheStats& s);

/// The same for a run with live changes: each change of `log` is applied at
/// its event boundary (LiveRun::apply), so scenario + seed + log reproduce
/// the GUI run it was recorded from. summary.json gains a "live_changes"
/// array after "scenario" when `log` is not empty (an empty log gives
/// exactly executeRun's files). InputError when a change is refused.
RunResult executeRun(LiveRun& live, const ChangeLog& log, const RunOptions& opt);

/// Fingerprint as 16 hex digits.
std::string fingerprintHex(std::uint64_t f);

/// summary.json's "policy_report" object: the policy's figures, keys split
/// at '/' into nested objects, integral values written as integers.
nlohmann::ordered_json policyReportJson(const std::vector<PolicyReportEntry>& entries);

/// summary.json's "trace" object: a trace reader's row counts.
nlohmann::ordered_json traceStatsJson(const TraceStats& t);

}  // namespace sl
