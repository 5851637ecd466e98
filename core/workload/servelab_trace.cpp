#include "workload/servelab_trace.h"

#include <cmath>
#include <limits>

#include "util/error.h"
#include "workload/parse_util.h"

namespace sl {

using detail::fmt;

ServeLabTraceReader::ServeLabTraceReader(const std::string& path, const TraceOptions& opts)
    : ServeLabTraceReader(std::make_unique<std::ifstream>(path, std::ios::binary), path, opts) {}

ServeLabTraceReader::ServeLabTraceReader(std::unique_ptr<std::istream> in, const std::string& name,
                                         const TraceOptions& opts)
    : in_(std::move(in)), csv_(*in_, name), opts_(opts) {
  stats_->format = "servelab";
  if (!*in_) throw InputError(name + ": cannot open trace file");
  readHeader();
}

void ServeLabTraceReader::readHeader() {
  if (!csv_.next(fields_)) throw InputError(csv_.name() + ": empty trace file (expected a header line)");
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const std::string h(trimView(fields_[i]));
    int* slot = nullptr;
    if (h == "arrival_s") slot = &colArrival_;
    else if (h == "input_tokens") slot = &colInput_;
    else if (h == "output_tokens") slot = &colOutput_;
    else if (h == "reasoning_tokens") slot = &colReasoning_;
    else if (h == "domain") slot = &colDomain_;
    if (!slot) continue;  // extra columns are ignored
    if (*slot >= 0) throw InputError(csv_.where() + ": duplicate column '" + h + "'");
    *slot = static_cast<int>(i);
  }
  for (auto [col, name] : {std::pair{colArrival_, "arrival_s"}, std::pair{colInput_, "input_tokens"},
                           std::pair{colOutput_, "output_tokens"}})
    if (col < 0)
      throw InputError(csv_.where() + ": missing column '" + name +
                       "' (ServeLab header: arrival_s,input_tokens,output_tokens[,reasoning_tokens][,domain])");
}

bool ServeLabTraceReader::next(RequestSpec& out) {
  if (done_) return false;
  if (opts_.max_requests && emitted_ >= *opts_.max_requests) {
    done_ = true;
    return false;
  }
  const double start = opts_.window_start_s.value_or(0.0);
  for (;;) {
    if (!csv_.next(fields_)) {
      done_ = true;
      return false;
    }
    ++stats_->rows;
    const std::string where = csv_.where();
    const double prevBefore = prevArrival_;
    const bool havePrevBefore = havePrev_;
    try {
    auto field = [&](int col, const char* name) -> const std::string& {
      if (static_cast<std::size_t>(col) >= fields_.size())
        throw InputError(where + ": missing field '" + name + "' (row has " + std::to_string(fields_.size()) +
                         " fields)");
      return fields_[static_cast<std::size_t>(col)];
    };
    auto integer = [&](int col, const char* name, std::int64_t lo) {
      const std::string& s = field(col, name);
      std::int64_t v = 0;
      if (!detail::parseInt64(s, v)) throw InputError(where + ": " + name + " is not an integer (got \"" + s + "\")");
      if (v < lo) throw InputError(where + ": " + name + " must be >= " + std::to_string(lo) + " (got " + s + ")");
      if (v > std::numeric_limits<std::int32_t>::max())
        throw InputError(where + ": " + name + " is too large (got " + s + ")");
      return v;
    };

    const std::string& as = field(colArrival_, "arrival_s");
    double a = 0;
    if (!detail::parseDouble(as, a) || !std::isfinite(a))
      throw InputError(where + ": arrival_s is not a number (got \"" + as + "\")");
    if (a < 0) throw InputError(where + ": arrival_s must be >= 0 (got " + as + ")");
    if (havePrev_ && a < prevArrival_)
      throw InputError(where + ": arrival_s " + as + " is earlier than the previous row's (" + fmt(prevArrival_) +
                       "); trace rows must be sorted by arrival time");
    prevArrival_ = a;
    havePrev_ = true;

    const std::int64_t input = integer(colInput_, "input_tokens", 1);
    const std::int64_t output = integer(colOutput_, "output_tokens", 1);
    std::int64_t reasoning = 0;
    if (colReasoning_ >= 0) reasoning = integer(colReasoning_, "reasoning_tokens", 0);
    if (output - reasoning < 1)
      throw InputError(where + ": output_tokens (" + std::to_string(output) + ") must exceed reasoning_tokens (" +
                       std::to_string(reasoning) + "): the answer needs at least 1 token");
    std::int32_t domain = -1;
    if (colDomain_ >= 0 && static_cast<std::size_t>(colDomain_) < fields_.size() &&
        !trimView(fields_[static_cast<std::size_t>(colDomain_)]).empty()) {
      const std::string& ds = fields_[static_cast<std::size_t>(colDomain_)];
      std::int64_t d = 0;
      if (!detail::parseInt64(ds, d) || d < -1 || d > std::numeric_limits<std::int32_t>::max())
        throw InputError(where + ": domain must be an integer >= -1 or empty (got \"" + ds + "\")");
      domain = static_cast<std::int32_t>(d);
    }
    row_ = Row{a, input, output, reasoning, domain};
    } catch (const InputError& e) {
      if (!opts_.lenient) throw;
      // --lenient: skip the malformed row, count it, keep the first message.
      prevArrival_ = prevBefore;
      havePrev_ = havePrevBefore;
      if (stats_->malformed++ == 0) stats_->first_malformed = e.what();
      continue;
    }
    const double a = row_.arrival;
    const std::int64_t input = row_.input, output = row_.output, reasoning = row_.reasoning;
    const std::int32_t domain = row_.domain;

    // Window on the file's own timeline, then shift and scale.
    if (opts_.window_start_s && a < *opts_.window_start_s) {
      ++skipped_;
      ++stats_->before_window;
      continue;
    }
    if (opts_.window_end_s && a >= *opts_.window_end_s) {
      done_ = true;  // sorted: nothing later can fall inside
      return false;
    }
    const double scaled_s = (a - start) * opts_.time_scale;
    if (!(scaled_s < 9.2e9))  // int64 ns ends at ~9.22e9 s (292 years)
      throw InputError(where + ": arrival_s " + fmt(a) + " is too large (simulated time ends at about 9.2e9 s)");
    const SimTime t = secondsToNs(scaled_s);
    if (opts_.duration_s && t > secondsToNs(*opts_.duration_s)) {
      done_ = true;
      return false;
    }
    out.id = emitted_++;
    ++stats_->emitted;
    out.arrival = t;
    clipRequestLengths(input, reasoning, output - reasoning, opts_.max_context, out);
    out.domain = domain;
    return true;
  }
}

std::string formatSecondsExact(SimTime ns) {
  std::string sign;
  if (ns < 0) {
    sign = "-";
    ns = -ns;
  }
  const SimTime whole = ns / kNsPerSecond;
  std::string frac = std::to_string(ns % kNsPerSecond);
  frac.insert(0, 9 - frac.size(), '0');
  while (frac.size() > 1 && frac.back() == '0') frac.pop_back();
  return sign + std::to_string(whole) + "." + frac;
}

std::string serveLabCsvRow(const RequestSpec& r) {
  std::string s = formatSecondsExact(r.arrival);
  s += ',';
  s += std::to_string(r.input);
  s += ',';
  s += std::to_string(r.output());
  s += ',';
  s += std::to_string(r.reasoning);
  s += ',';
  if (r.domain >= 0) s += std::to_string(r.domain);
  return s;
}

void writeServeLabCsv(WorkloadSource& src, std::ostream& out) {
  out << "arrival_s,input_tokens,output_tokens,reasoning_tokens,domain\n";
  RequestSpec r;
  while (src.next(r)) out << serveLabCsvRow(r) << '\n';
}

}  // namespace sl
