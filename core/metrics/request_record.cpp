#include "metrics/request_record.h"
#include "metrics/decimal.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

namespace sl {

namespace {

// ---- raw writers: each writes at `p` (room assumed) and returns the end.
// They give the same characters as the std::to_chars forms they replace
// (tests/metrics/test_request_record.cpp compares them over many values).

// Two decimal digits per step.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

int decimalDigits(std::uint64_t v) {
  int n = 1;
  for (;;) {
    if (v < 10) return n;
    if (v < 100) return n + 1;
    if (v < 1000) return n + 2;
    if (v < 10000) return n + 3;
    v /= 10000;
    n += 4;
  }
}

// Exactly `width` digits of v (v < 10^width, leading zeros written).
char* writeDigits(std::uint64_t v, int width, char* p) {
  char* q = p + width;
  while (q - p >= 2) {
    const auto pair = static_cast<std::size_t>(v % 100) * 2;
    v /= 100;
    q -= 2;
    q[0] = kDigitPairs[pair];
    q[1] = kDigitPairs[pair + 1];
  }
  if (q != p) *p = static_cast<char>('0' + v);
  return p + width;
}

char* writeUint(std::uint64_t v, char* p) { return writeDigits(v, decimalDigits(v), p); }

char* writeInt(std::int64_t v, char* p) {
  if (v < 0) {
    *p++ = '-';
    return writeUint(0 - static_cast<std::uint64_t>(v), p);
  }
  return writeUint(static_cast<std::uint64_t>(v), p);
}

constexpr std::size_t kMaxInt = 20;      // "-9223372036854775808"
constexpr std::size_t kMaxSeconds = 28;  // "-9223372036854.775808"

char* writeSecondsNs(SimTime ns, char* p) {
  // Below half a microsecond either way: "0.000000" (requests.csv's zero
  // intervals, most of its preempted/swapped/migrating/handoff columns).
  if (ns > -500 && ns < 500) {
    std::memcpy(p, "0.000000", 8);
    return p + 8;
  }
  const bool neg = ns < 0;
  // Work in unsigned magnitude to stay defined for INT64_MIN.
  const std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  const std::uint64_t us = mag / 1000 + (mag % 1000 >= 500 ? 1 : 0);
  if (neg && us != 0) *p++ = '-';
  p = writeUint(us / 1'000'000, p);
  *p++ = '.';
  return writeDigits(us % 1'000'000, 6, p);
}

__extension__ typedef unsigned __int128 U128;

constexpr std::uint64_t kPow10[] = {1,      10,      100,      1000,      10000,
                                    100000, 1000000, 10000000, 100000000, 1000000000};
constexpr int kFastDecimals = 9;
constexpr std::size_t kMaxFast = 1 + 19 + 1 + kFastDecimals;

// v (finite, not -0) with `decimals` (0..kFastDecimals) decimals, rounded
// as std::to_chars(fixed) rounds: the exact binary value to nearest, a tie
// to even. nullptr when |v| >= 2^63 (the caller falls back to to_chars).
char* writeFixedFast(double v, int decimals, char* p) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const bool neg = (bits >> 63) != 0;
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
  int e = -1074;  // v = ±m · 2^e
  if (biased != 0) {
    m |= std::uint64_t{1} << 52;
    e = biased - 1075;
  }
  const std::uint64_t scale = kPow10[decimals];
  U128 q;  // round(|v| · 10^decimals)
  if (e >= 0) {
    if (e > 10) return nullptr;  // |v| >= 2^63
    q = static_cast<U128>(m << e) * scale;
  } else {
    const U128 n = static_cast<U128>(m) * scale;  // < 2^83
    const int s = -e;
    if (s >= 100) {
      q = 0;  // n < 2^83 < half of 2^s: rounds to 0
    } else {
      q = n >> s;
      const U128 rem = n - (q << s);
      const U128 half = static_cast<U128>(1) << (s - 1);
      if (rem > half || (rem == half && (q & 1) != 0)) ++q;
    }
  }
  if (neg && q != 0) *p++ = '-';  // to_chars' "-0.000…" is written without the sign
  std::uint64_t whole, frac;
  if ((q >> 64) == 0) {  // the usual case: 64-bit division, not a 128-bit call
    const auto q64 = static_cast<std::uint64_t>(q);
    whole = q64 / scale;
    frac = q64 % scale;
  } else {
    whole = static_cast<std::uint64_t>(q / scale);
    frac = static_cast<std::uint64_t>(q % scale);
  }
  p = writeUint(whole, p);
  if (decimals == 0) return p;
  *p++ = '.';
  return writeDigits(frac, decimals, p);
}

void appendFixedSlow(double v, int decimals, std::string& out) {
  char buf[64];  // too small for a fixed |v| >= ~1e55: scientific then
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (res.ec != std::errc()) {  // absurdly large: fall back to scientific
    res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, decimals);
  }
  std::string_view s(buf, static_cast<std::size_t>(res.ptr - buf));
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-0.") == std::string_view::npos) s.remove_prefix(1);
  out.append(s);
}

}  // namespace

void appendInt(std::int64_t v, std::string& out) {
  char buf[kMaxInt];
  out.append(buf, writeInt(v, buf));
}

void appendSecondsNs(SimTime ns, std::string& out) {
  char buf[kMaxSeconds];
  out.append(buf, writeSecondsNs(ns, buf));
}

void appendDecimal(std::int64_t units, int decimals, std::string& out) {
  char buf[kMaxFast];
  char* p = buf;
  const std::uint64_t mag = units < 0 ? 0 - static_cast<std::uint64_t>(units) : static_cast<std::uint64_t>(units);
  if (units < 0) *p++ = '-';
  const auto write = [&](std::uint64_t scale) {
    p = writeUint(mag / scale, p);
    if (decimals > 0) {
      *p++ = '.';
      p = writeDigits(mag % scale, decimals, p);
    }
  };
  if (decimals == 3) write(1000);  // trace.json's microseconds: divisions by a constant
  else write(kPow10[decimals]);
  out.append(buf, p);
}

void appendFixed(double v, int decimals, std::string& out) {
  if (!std::isfinite(v)) return;  // blank
  if (v == 0) v = 0;              // no "-0.000000"
  if (decimals >= 0 && decimals <= kFastDecimals) {
    char buf[kMaxFast];
    if (char* end = writeFixedFast(v, decimals, buf)) {
      out.append(buf, end);
      return;
    }
  }
  appendFixedSlow(v, decimals, out);
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

// One row is built in a stack buffer and appended once (issue 27: per-field
// std::string appends were most of requests.csv's formatting time). Every
// field below has a bounded width except a domain name and a fixed-point
// value of |v| >= 2^63, which flush the buffer and append directly.
class RowWriter {
public:
  explicit RowWriter(std::string& out) : out_(out) {}
  ~RowWriter() { flush(); }
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;

  void comma() { ch(','); }
  void ch(char c) { *room(1) = c; ++p_; }
  void integer(std::int64_t v) { p_ = writeInt(v, room(kMaxInt)); }
  void seconds(SimTime ns) { p_ = writeSecondsNs(ns, room(kMaxSeconds)); }
  void timeOrBlank(SimTime t) {
    if (t >= 0) seconds(t);
  }
  void diffOrBlank(bool defined, SimTime a, SimTime b) {
    if (defined) seconds(a - b);
  }
  void fixed6(double v) {
    if (!std::isfinite(v)) return;
    if (v == 0) v = 0;
    if (char* end = writeFixedFast(v, 6, room(kMaxFast))) {
      p_ = end;
      return;
    }
    flush();
    appendFixedSlow(v, 6, out_);
  }
  void field(const std::string& f) {
    flush();
    appendCsvField(f, out_);
  }
  void flush() {
    out_.append(buf_, p_);
    p_ = buf_;
  }

private:
  // Room for `n` more characters.
  char* room(std::size_t n) {
    if (static_cast<std::size_t>(buf_ + sizeof buf_ - p_) < n) flush();
    return p_;
  }
  std::string& out_;
  char buf_[512];
  char* p_ = buf_;
};
}  // namespace

void appendRequestCsvRow(const RequestRecord& r, std::string& out,
                         std::span<const std::string> domainNames) {
  RowWriter w(out);
  w.integer(r.id); w.comma();
  w.seconds(r.arrival); w.comma();
  w.integer(r.input); w.comma();
  w.integer(r.reasoning); w.comma();
  w.integer(r.answer); w.comma();
  if (r.predicted >= 0) w.integer(r.predicted);
  w.comma();
  w.integer(r.generated); w.comma();
  if (r.domain >= 0) {
    if (static_cast<std::size_t>(r.domain) < domainNames.size()) w.field(domainNames[static_cast<std::size_t>(r.domain)]);
    else w.integer(r.domain);
  }
  w.comma();
  if (r.instance >= 0) w.integer(r.instance);
  w.comma();
  w.ch(r.finished ? '1' : '0'); w.comma();
  w.timeOrBlank(r.first_token); w.comma();
  w.timeOrBlank(r.reasoning_end); w.comma();
  w.timeOrBlank(r.first_visible); w.comma();
  w.timeOrBlank(r.last_token); w.comma();
  // Differences of integer ns are written exactly (not via double).
  w.diffOrBlank(r.ttft().has_value(), r.first_visible, r.arrival); w.comma();
  if (auto v = r.tpot()) w.fixed6(*v);
  w.comma();
  w.diffOrBlank(r.ttfat().has_value(), r.first_visible, r.reasoning_end); w.comma();
  w.diffOrBlank(r.reasoningLatency().has_value(), r.reasoning_end, r.arrival); w.comma();
  if (r.blocking >= 0) w.seconds(r.blocking);
  w.comma();
  w.diffOrBlank(r.e2e().has_value(), r.last_token, r.arrival); w.comma();
  if (auto v = r.normalizedLatency()) w.fixed6(*v);
  w.comma();
  w.seconds(r.queueing); w.comma();
  w.seconds(r.preempted); w.comma();
  w.seconds(r.swapped); w.comma();
  w.seconds(r.migrating); w.comma();
  w.seconds(r.handoff_wait); w.comma();
  w.integer(r.preemptions); w.comma();
  w.integer(r.migrations); w.comma();
  if (r.hasQoe()) w.fixed6(r.qoe);
  w.ch('\n');
}

}  // namespace sl
