#include "workload/trace_formats.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "util/csv.h"
#include "util/error.h"
#include "workload/parse_util.h"
#include "workload/servelab_trace.h"

namespace sl {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has(const std::vector<std::string>& cols, const char* name) {
  return std::find(cols.begin(), cols.end(), std::string(name)) != cols.end();
}

}  // namespace

TraceOptions traceOptions(const TraceSpec& t, int max_context, std::optional<double> duration_s) {
  TraceOptions o;
  o.time_scale = t.time_scale;
  o.max_requests = t.max_requests;
  o.window_start_s = t.window_start_s;
  o.window_end_s = t.window_end_s;
  o.max_context = max_context;
  o.duration_s = duration_s;
  return o;
}

std::string detectTraceFormat(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open trace file");
  std::string line;
  std::int64_t no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!trimView(line).empty()) break;
  }
  const std::string_view t = trimView(line);
  if (t.empty()) throw InputError(path + ": empty trace file");
  if (t.front() == '{') return "mooncake";
  std::vector<std::string> f;
  if (!splitCsvLine(t, f)) throw InputError(path + ":" + std::to_string(no) + ": malformed header line");
  for (auto& s : f) s = lower(std::string(trimView(s)));
  if (has(f, "arrival_s") && has(f, "input_tokens") && has(f, "output_tokens")) return "servelab";
  if (has(f, "timestamp") && has(f, "contexttokens") && has(f, "generatedtokens")) return "azure";
  if (has(f, "timestamp") && has(f, "request tokens") && has(f, "response tokens")) return "burstgpt";
  throw InputError(path + ":" + std::to_string(no) +
                   ": cannot detect the trace format from the header (expected ServeLab "
                   "'arrival_s,input_tokens,output_tokens[,reasoning_tokens][,domain]', Azure, BurstGPT or "
                   "Mooncake JSONL); set workload.trace.format");
}

std::unique_ptr<WorkloadSource> openTraceWorkload(const TraceSpec& t, const std::string& base_dir, int max_context,
                                                  std::optional<double> duration_s) {
  if (t.path.empty()) throw InputError("workload.trace.path: must name a trace file");
  if (!(t.time_scale > 0)) throw InputError("workload.trace.time_scale: must be > 0 (got " + detail::fmt(t.time_scale) + ")");
  if (t.max_requests && *t.max_requests < 0)
    throw InputError("workload.trace.max_requests: must be >= 0 (got " + std::to_string(*t.max_requests) + ")");
  if (t.window_start_s && t.window_end_s && *t.window_end_s < *t.window_start_s)
    throw InputError("workload.trace: window end (" + detail::fmt(*t.window_end_s) + ") is before its start (" +
                     detail::fmt(*t.window_start_s) + ")");
  const std::string path = detail::resolvePath(t.path, base_dir);
  std::string format = t.format;
  if (format == "auto") format = detectTraceFormat(path);
  const TraceOptions opts = traceOptions(t, max_context, duration_s);

  // ---- Trace format dispatch: the one place to add readers. -------------
  if (format == "servelab") return std::make_unique<ServeLabTraceReader>(path, opts);
  if (format == "azure" || format == "burstgpt" || format == "mooncake")
    throw InputError("trace format '" + format + "' is not supported yet (" + path + ")");
  // ------------------------------------------------------------------------
  throw InputError("workload.trace.format: unknown format '" + format +
                   "' (known: auto, azure, burstgpt, mooncake, servelab)");
}

}  // namespace sl
