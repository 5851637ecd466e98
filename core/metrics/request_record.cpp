#include "metrics/request_record.h"

#include <charconv>
#include <cmath>

namespace sl {

void appendInt(std::int64_t v, std::string& out) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

void appendSecondsNs(SimTime ns, std::string& out) {
  const bool neg = ns < 0;
  // Work in unsigned magnitude to stay defined for INT64_MIN.
  std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::uint64_t us = mag / 1000 + (mag % 1000 >= 500 ? 1 : 0);
  if (neg && us != 0) out.push_back('-');
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, us / 1'000'000);
  out.append(buf, res.ptr);
  out.push_back('.');
  const std::uint64_t frac = us % 1'000'000;
  res = std::to_chars(buf, buf + sizeof buf, frac);
  out.append(static_cast<std::size_t>(6 - (res.ptr - buf)), '0');
  out.append(buf, res.ptr);
}

void appendFixed(double v, int decimals, std::string& out) {
  if (!std::isfinite(v)) return;  // blank
  if (v == 0) v = 0;              // no "-0.000000"
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (res.ec != std::errc()) {  // absurdly large: fall back to scientific
    res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, decimals);
  }
  std::string_view s(buf, static_cast<std::size_t>(res.ptr - buf));
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-0.") == std::string_view::npos) s.remove_prefix(1);
  out.append(s);
}

std::string requestsCsvHeader() {
  return "id,arrival_s,input_tokens,reasoning_tokens,answer_tokens,predicted_tokens,"
         "generated_tokens,domain,instance,finished,"
         "first_token_s,reasoning_end_s,first_visible_s,last_token_s,"
         "ttft_s,tpot_s,ttfat_s,reasoning_s,blocking_s,e2e_s,normalized_latency_s,"
         "queueing_s,preempted_s,swapped_s,migrating_s,handoff_wait_s,"
         "preemptions,migrations,qoe\n";
}

namespace {
void timeOrBlank(SimTime t, std::string& out) {
  if (t >= 0) appendSecondsNs(t, out);
}
// RFC 4180: quote a field holding a comma, quote or line break.
void appendCsvField(const std::string& f, std::string& out) {
  if (f.find_first_of(",\"\r\n") == std::string::npos) {
    out += f;
    return;
  }
  out += '"';
  for (char ch : f) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}
void diffOrBlank(bool defined, SimTime a, SimTime b, std::string& out) {
  if (defined) appendSecondsNs(a - b, out);
}
}  // namespace

void appendRequestCsvRow(const RequestRecord& r, std::string& out,
                         std::span<const std::string> domainNames) {
  const char c = ',';
  appendInt(r.id, out); out += c;
  appendSecondsNs(r.arrival, out); out += c;
  appendInt(r.input, out); out += c;
  appendInt(r.reasoning, out); out += c;
  appendInt(r.answer, out); out += c;
  if (r.predicted >= 0) appendInt(r.predicted, out);
  out += c;
  appendInt(r.generated, out); out += c;
  if (r.domain >= 0) {
    if (static_cast<std::size_t>(r.domain) < domainNames.size()) appendCsvField(domainNames[static_cast<std::size_t>(r.domain)], out);
    else appendInt(r.domain, out);
  }
  out += c;
  if (r.instance >= 0) appendInt(r.instance, out);
  out += c;
  out += r.finished ? '1' : '0'; out += c;
  timeOrBlank(r.first_token, out); out += c;
  timeOrBlank(r.reasoning_end, out); out += c;
  timeOrBlank(r.first_visible, out); out += c;
  timeOrBlank(r.last_token, out); out += c;
  // Differences of integer ns are written exactly (not via double).
  diffOrBlank(r.ttft().has_value(), r.first_visible, r.arrival, out); out += c;
  if (auto v = r.tpot()) appendFixed(*v, 6, out);
  out += c;
  diffOrBlank(r.ttfat().has_value(), r.first_visible, r.reasoning_end, out); out += c;
  diffOrBlank(r.reasoningLatency().has_value(), r.reasoning_end, r.arrival, out); out += c;
  if (r.blocking >= 0) appendSecondsNs(r.blocking, out);
  out += c;
  diffOrBlank(r.e2e().has_value(), r.last_token, r.arrival, out); out += c;
  if (auto v = r.normalizedLatency()) appendFixed(*v, 6, out);
  out += c;
  appendSecondsNs(r.queueing, out); out += c;
  appendSecondsNs(r.preempted, out); out += c;
  appendSecondsNs(r.swapped, out); out += c;
  appendSecondsNs(r.migrating, out); out += c;
  appendSecondsNs(r.handoff_wait, out); out += c;
  appendInt(r.preemptions, out); out += c;
  appendInt(r.migrations, out); out += c;
  if (r.hasQoe()) appendFixed(r.qoe, 6, out);
  out += '\n';
}

}  // namespace sl
