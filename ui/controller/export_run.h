#pragma once
// File → Export of the current run (50-gui.md "Files and sessions"): the
// run's outputs as `servelab-cli run --out` writes them (summary.json,
// requests.csv, timeseries.csv, tail_ttft.csv, decisions.csv) and its
// Chrome/Perfetto trace (trace.json). The GUI's worker is never touched: the
// run is replayed headless from (scenario, seed, change log) up to the event
// count the GUI shows by the run module itself (core/run executeRun with the
// change log), so the files are those `servelab-cli run` writes for the same
// scenario, or for the run saved with File ▸ Save run as…. Qt-free.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "run/execute.h"
#include "run/live_run.h"

namespace sl::ui {

struct ExportRunOptions {
  std::string resultsDir;  // write the results files here ("" = none)
  /// Which files go to resultsDir (`--outputs`): by default all but the
  /// trace, which File ▸ Export ▸ Trace… writes on its own (tracePath).
  OutputSet outputs{true, true, true, false};
  std::string tracePath;   // write trace.json here ("" = none; else it goes there, not to resultsDir)
  /// Replay this many events (-1: to the end of the run).
  std::int64_t events = -1;
  /// Called now and then from the replaying thread with the fraction done.
  std::function<void(double)> progress;
  /// When it turns true the replay stops (RunCancelled) and nothing is
  /// written (RunOptions::cancel).
  const std::atomic<bool>* cancel = nullptr;
};

struct ExportRunResult {
  std::vector<std::string> files;  // written, in order
  std::int64_t events = 0;         // replayed
  std::int64_t arrived = 0;
  std::int64_t finished = 0;
  std::uint64_t fingerprint = 0;
  bool complete = false;           // the run reached its end
};

/// Replay and write (each file atomically, after everything is built).
/// InputError for an invalid scenario or change log; std::runtime_error when
/// a file cannot be written; RunCancelled (run/execute.h) when cancelled.
/// Touches nothing of the GUI: the window runs it on a thread of its own.
ExportRunResult exportRun(const Scenario& s, const ChangeLog& log, const ExportRunOptions& opt);

}  // namespace sl::ui
