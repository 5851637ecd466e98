#pragma once
// Trace replay: format detection and the one dispatch point from a TraceSpec
// to a streaming reader. Formats (60-cli-formats.md "Workloads"):
// servelab (servelab_trace.h) today; azure, burstgpt and mooncake are
// recognised but not readable yet (InputError) -- add their readers in
// openTraceWorkload() in trace_formats.cpp.
#include <memory>
#include <optional>
#include <string>

#include "scenario/spec.h"
#include "workload/workload_source.h"

namespace sl {

/// Options every trace reader honours.
struct TraceOptions {
  double time_scale = 1.0;                  ///< multiply (window-shifted) timestamps
  std::optional<std::int64_t> max_requests; ///< stop after this many requests
  std::optional<double> window_start_s;     ///< keep arrivals in [start, end) of the file's
  std::optional<double> window_end_s;       ///< timeline; kept ones shift so start -> 0
  int max_context = 0;                      ///< > 0: clipRequestLengths to this window
  std::optional<double> duration_s;         ///< stop at the first (scaled) arrival after it
};

TraceOptions traceOptions(const TraceSpec& t, int max_context, std::optional<double> duration_s);

/// Detect the format from the first non-blank line: "servelab", "azure",
/// "burstgpt", "mooncake"; InputError if none matches.
std::string detectTraceFormat(const std::string& path);

/// Open `t.path` (relative to base_dir) with the reader for `t.format`
/// ("auto" detects). Unsupported format -> InputError.
std::unique_ptr<WorkloadSource> openTraceWorkload(const TraceSpec& t, const std::string& base_dir, int max_context,
                                                  std::optional<double> duration_s);

}  // namespace sl
