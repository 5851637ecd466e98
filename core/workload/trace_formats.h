#pragma once
// Trace replay: format detection, the rules every trace reader shares, and
// the one dispatch point from a TraceSpec to a streaming reader. Formats
// (60-cli-formats.md "Workloads", docs/traces.md):
//   servelab  servelab_trace.h   arrival_s,input_tokens,output_tokens[,reasoning_tokens][,domain]
//   azure     azure_trace.h      TIMESTAMP,ContextTokens,GeneratedTokens
//   burstgpt  burstgpt_trace.h   Timestamp,[Session ID,Elapsed time,]Model,Request tokens,Response tokens,...
//   mooncake  mooncake_trace.h   {"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}
// A new reader derives from TraceReader (below) and plugs into
// openTraceWorkload() in trace_formats.cpp.
#include <cstdint>
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
  bool lenient = false;                     ///< malformed rows: skip and count instead of InputError
};

TraceOptions traceOptions(const TraceSpec& t, int max_context, std::optional<double> duration_s);

/// What a trace reader has seen so far (all counts are rows of the file).
struct TraceStats {
  std::string format;                 ///< "azure", "burstgpt", "mooncake"
  std::int64_t rows = 0;              ///< data rows read (header and blank lines excluded)
  std::int64_t emitted = 0;           ///< requests handed to the simulator
  std::int64_t malformed = 0;         ///< lenient only: malformed or out-of-order rows skipped
  std::int64_t failed = 0;            ///< rows the trace marks as failed requests (BurstGPT: 0 response tokens), skipped
  std::int64_t before_window = 0;     ///< well-formed rows before window.start_s, skipped
  std::int64_t raised_to_one = 0;     ///< rows with 0 input or 0 output tokens, raised to 1 (still emitted)
  std::int64_t context_clipped = 0;   ///< emitted rows shortened by the model's context window
  std::string first_malformed;        ///< lenient: the "FILE:LINE: ..." message of the first skipped row

  /// Rows read but not emitted (malformed + failed + before_window).
  std::int64_t skipped() const { return malformed + failed + before_window; }
};

/// Base of the Azure, BurstGPT and Mooncake readers: the shared rules of
/// docs/traces.md. A subclass only parses rows (readRow); this class
///  - rebases time: the trace timeline is t = timestamp - (first row's
///    timestamp), in integer ns;
///  - checks order: a row earlier than the previous one is malformed;
///  - skips failed rows (counted), applies window, time_scale, max_requests
///    and duration_s exactly as the ServeLab reader does;
///  - raises 0 input/output to 1 (counted), then clipRequestLengths;
///  - lenient: a row whose readRow throws InputError, or that is out of
///    order, is skipped and counted instead of ending the run.
class TraceReader : public WorkloadSource {
public:
  bool next(RequestSpec& out) final;

  const TraceStats& stats() const { return *stats_; }
  /// Shared handle to the live counters: stays valid (and keeps counting)
  /// after the source has been moved into a Simulator.
  std::shared_ptr<const TraceStats> statsHandle() const { return stats_; }
  const std::string& name() const { return name_; }

protected:
  /// One parsed data row. `time_ns` is on the file's own clock (any origin).
  struct Row {
    std::int64_t time_ns = 0;
    std::int64_t input = 0, reasoning = 0, answer = 0;
    std::int32_t domain = -1;
    bool failed = false;           ///< a failed request in the trace: skipped and counted
    std::uint64_t prefix_hash = 0; ///< RequestSpec::prefix_hash
    std::int32_t prefix_blocks = 0;
    std::string where;             ///< "FILE:LINE" (for order errors)
  };

  TraceReader(std::string name, std::string format, const TraceOptions& opts);
  /// Next data row into `row`; false at end of file. A malformed row throws
  /// InputError "FILE:LINE: what" after consuming its line.
  virtual bool readRow(Row& row) = 0;
  /// Called when `row` is emitted as `out` (before next() returns it);
  /// `out.segments` is empty on entry (a reader with prefix identities
  /// fills it).
  virtual void onEmit(const Row& /*row*/, RequestSpec& /*out*/) {}

  const TraceOptions& options() const { return opts_; }

private:
  std::string name_;
  TraceOptions opts_;
  std::shared_ptr<TraceStats> stats_;
  Row row_;
  std::optional<std::int64_t> origin_;
  std::int64_t prev_ = 0;
  std::int64_t windowStartNs_ = 0;
  std::optional<std::int64_t> windowEndNs_, durationNs_;
  bool done_ = false;
};

/// The stats of a trace reader, or nullptr if `src` is not a TraceReader
/// (synthetic workloads, the ServeLab reader).
const TraceStats* traceStatsOf(const WorkloadSource& src);

/// Detect the format from the first non-blank line: "servelab", "azure",
/// "burstgpt", "mooncake"; InputError if none matches.
std::string detectTraceFormat(const std::string& path);

/// Open `t.path` (relative to base_dir) with the reader for `t.format`
/// ("auto" detects). Unsupported format -> InputError.
std::unique_ptr<WorkloadSource> openTraceWorkload(const TraceSpec& t, const std::string& base_dir, int max_context,
                                                  std::optional<double> duration_s);

namespace detail {
/// Exact decimal -> integer count of `unit_ns` units in ns: "19440110.0"
/// with unit 1e9 -> 19440110000000000. Digits with an optional fraction
/// (fraction digits beyond ns precision are truncated). Exponent forms
/// ("1e3") fall back to double rounding. Rejects signs other than a
/// leading '+', empty text and overflow.
bool parseDecimalNs(std::string_view s, std::int64_t unit_ns, std::int64_t& out);
/// "YYYY-MM-DD HH:MM:SS[.fffffffff]" (or a 'T' separator; no timezone) ->
/// ns since 1970-01-01 00:00:00 (proleptic Gregorian, no leap seconds),
/// exact. Returns false with `why` set when malformed.
bool parseDateTimeNs(std::string_view s, std::int64_t& out, std::string& why);
}  // namespace detail

}  // namespace sl
