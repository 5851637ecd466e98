#include "workload/trace_formats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>

#include "util/csv.h"
#include "util/error.h"
#include "workload/azure_trace.h"
#include "workload/burstgpt_trace.h"
#include "workload/mooncake_trace.h"
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


bool mulAdd(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t& out) {  // a*b + c, no overflow
  std::int64_t m = 0;
  if (__builtin_mul_overflow(a, b, &m)) return false;
  return !__builtin_add_overflow(m, c, &out);
}

// Days from 1970-01-01 to y-m-d (proleptic Gregorian), H. Hinnant's algorithm.
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool leapYear(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

}  // namespace

namespace detail {

bool parseDecimalNs(std::string_view s, std::int64_t unit_ns, std::int64_t& out) {
  s = trimView(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  if (s.find_first_of("eE") != std::string_view::npos) {  // exponent form: double rounding
    double v = 0;
    if (!parseDouble(s, v) || !std::isfinite(v) || v < 0) return false;
    const double ns = v * static_cast<double>(unit_ns);
    if (!(ns < 9.2e18)) return false;
    out = std::llround(ns);
    return true;
  }
  std::size_t i = 0;
  std::int64_t whole = 0;
  bool digits = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (!mulAdd(whole, 10, s[i] - '0', whole)) return false;
    digits = true;
  }
  std::int64_t frac = 0;  // in ns
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::int64_t scale = unit_ns;  // ns value of one unit at the previous digit position
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      digits = true;
      if (scale >= 10) {  // digits beyond ns precision are truncated
        scale /= 10;
        frac += (s[i] - '0') * scale;
      }
    }
  }
  if (!digits || i != s.size()) return false;
  return mulAdd(whole, unit_ns, frac, out);
}

bool parseDateTimeNs(std::string_view s, std::int64_t& out, std::string& why) {
  s = trimView(s);
  // Fixed part: YYYY-MM-DD HH:MM:SS (19 characters).
  auto num = [&](std::size_t pos, std::size_t len, std::int64_t& v) {
    if (pos + len > s.size()) return false;
    v = 0;
    for (std::size_t k = pos; k < pos + len; ++k) {
      if (s[k] < '0' || s[k] > '9') return false;
      v = v * 10 + (s[k] - '0');
    }
    return true;
  };
  std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (s.size() < 19 || !num(0, 4, y) || s[4] != '-' || !num(5, 2, mo) || s[7] != '-' || !num(8, 2, d) ||
      (s[10] != ' ' && s[10] != 'T') || !num(11, 2, h) || s[13] != ':' || !num(14, 2, mi) || s[16] != ':' ||
      !num(17, 2, se)) {
    why = "expected YYYY-MM-DD HH:MM:SS[.fraction]";
    return false;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12) {
    why = "month out of range";
    return false;
  }
  const std::int64_t mdays = kDays[mo - 1] + (mo == 2 && leapYear(y) ? 1 : 0);
  if (d < 1 || d > mdays) {
    why = "day out of range";
    return false;
  }
  if (h > 23 || mi > 59 || se > 59) {
    why = "time of day out of range";
    return false;
  }
  std::int64_t frac = 0;
  std::size_t i = 19;
  if (i < s.size()) {
    if (s[i] != '.') {
      why = "unexpected text after the seconds (no timezone is allowed)";
      return false;
    }
    ++i;
    std::int64_t scale = kNsPerSecond;
    const std::size_t first = i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
      if (scale >= 10) {
        scale /= 10;
        frac += (s[i] - '0') * scale;
      }
    if (i == first || i != s.size()) {
      why = "malformed fractional seconds (no timezone is allowed)";
      return false;
    }
  }
  const std::int64_t days = daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const std::int64_t secs = days * 86400 + h * 3600 + mi * 60 + se;
  if (!mulAdd(secs, kNsPerSecond, frac, out)) {
    why = "date out of range";
    return false;
  }
  return true;
}

}  // namespace detail

TraceOptions traceOptions(const TraceSpec& t, int max_context, std::optional<double> duration_s) {
  TraceOptions o;
  o.time_scale = t.time_scale;
  o.max_requests = t.max_requests;
  o.window_start_s = t.window_start_s;
  o.window_end_s = t.window_end_s;
  o.max_context = max_context;
  o.duration_s = duration_s;
  o.lenient = t.lenient;
  return o;
}

// ---- TraceReader: the shared rules ------------------------------------------

TraceReader::TraceReader(std::string name, std::string format, const TraceOptions& opts)
    : name_(std::move(name)), opts_(opts), stats_(std::make_shared<TraceStats>()) {
  stats_->format = std::move(format);
  if (!(opts_.time_scale > 0) || !std::isfinite(opts_.time_scale))
    throw InputError(name_ + ": trace time_scale must be a finite number > 0 (got " + detail::fmt(opts_.time_scale) +
                     ")");
  if (opts_.window_start_s) windowStartNs_ = secondsToNs(*opts_.window_start_s);
  if (opts_.window_end_s) windowEndNs_ = secondsToNs(*opts_.window_end_s);
  if (opts_.duration_s) durationNs_ = secondsToNs(*opts_.duration_s);
}

bool TraceReader::next(RequestSpec& out) {
  if (done_) return false;
  if (opts_.max_requests && stats_->emitted >= *opts_.max_requests) {
    done_ = true;
    return false;
  }
  TraceStats& st = *stats_;
  for (;;) {
    Row& r = row_;
    r = Row{};
    bool got = false;
    try {
      got = readRow(r);
    } catch (const InputError& e) {
      if (!opts_.lenient) throw;
      ++st.rows;
      ++st.malformed;
      if (st.first_malformed.empty()) st.first_malformed = e.what();
      continue;
    }
    if (!got) {
      done_ = true;
      return false;
    }
    ++st.rows;
    std::int64_t fromOrigin = 0;
    if (origin_ && __builtin_sub_overflow(r.time_ns, *origin_, &fromOrigin)) {
      // Years apart (e.g. 1729 vs 2024): the distance does not fit int64 ns.
      const std::string msg = r.where + ": timestamp is too far (about 292 years or more) from the first row's";
      if (!opts_.lenient) throw InputError(msg);
      ++st.malformed;
      if (st.first_malformed.empty()) st.first_malformed = msg;
      continue;
    }
    if (origin_ && r.time_ns < prev_) {
      const std::string msg = r.where + ": timestamp is " + formatSecondsExact(fromOrigin) +
                              " s into the trace, earlier than the previous row's " +
                              formatSecondsExact(prev_ - *origin_) + " s; trace rows must be sorted by time";
      if (!opts_.lenient) throw InputError(msg);
      ++st.malformed;
      if (st.first_malformed.empty()) st.first_malformed = msg;
      continue;
    }
    if (!origin_) origin_ = r.time_ns;
    prev_ = r.time_ns;
    if (r.failed) {
      ++st.failed;
      continue;
    }
    const std::int64_t rel = r.time_ns - *origin_;  // file timeline, >= 0
    if (rel < windowStartNs_) {
      ++st.before_window;
      continue;
    }
    if (windowEndNs_ && rel >= *windowEndNs_) {
      done_ = true;  // sorted: nothing later can fall inside
      return false;
    }
    const std::int64_t shifted = rel - windowStartNs_;
    const double scaled = static_cast<double>(shifted) * opts_.time_scale;
    if (opts_.time_scale != 1.0 && !(scaled < 9.2e18))  // int64 ns ends at ~9.22e18
      throw InputError(r.where + ": arrival time after time_scale " + detail::fmt(opts_.time_scale) +
                       " is too large (simulated time ends at about 9.2e9 s)");
    const SimTime t = opts_.time_scale == 1.0 ? shifted : static_cast<SimTime>(std::llround(scaled));
    if (durationNs_ && t > *durationNs_) {
      done_ = true;
      return false;
    }
    if (r.input < 1 || r.answer + r.reasoning < 1) ++st.raised_to_one;
    out.id = st.emitted++;
    out.arrival = t;
    const std::int64_t in = std::max<std::int64_t>(r.input, 1);
    const std::int64_t an = std::max<std::int64_t>(r.answer, 1);
    clipRequestLengths(in, r.reasoning, an, opts_.max_context, out);
    if (out.input != in || out.reasoning != r.reasoning || out.answer != an) ++st.context_clipped;
    out.domain = r.domain;
    out.prefix_blocks = r.prefix_blocks;
    out.prefix_hash = r.prefix_hash;
    out.segments.clear();
    out.session = -1;
    onEmit(r, out);
    return true;
  }
}

const TraceStats* traceStatsOf(const WorkloadSource& src) {
  const auto* t = dynamic_cast<const TraceReader*>(&src);
  return t ? &t->stats() : nullptr;
}

// ---- detection and dispatch ---------------------------------------------------

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
                   "'arrival_s,input_tokens,output_tokens[,reasoning_tokens][,domain]', Azure "
                   "'TIMESTAMP,ContextTokens,GeneratedTokens', BurstGPT 'Timestamp,...,Request tokens,Response "
                   "tokens,...' or Mooncake JSONL); set workload.trace.format");
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
  if (format == "azure") return std::make_unique<AzureTraceReader>(path, opts);
  if (format == "burstgpt") return std::make_unique<BurstGptTraceReader>(path, opts);
  if (format == "mooncake") return std::make_unique<MooncakeTraceReader>(path, opts);
  // ------------------------------------------------------------------------
  throw InputError("workload.trace.format: unknown format '" + format +
                   "' (known: auto, azure, burstgpt, mooncake, servelab)");
}

}  // namespace sl
