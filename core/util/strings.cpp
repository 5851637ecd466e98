#include "util/strings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

namespace sl {

std::size_t levenshtein(std::string_view a, std::string_view b) {
  if (a.size() < b.size()) std::swap(a, b);  // b is the shorter: one row of |b|+1
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];  // D[i-1][j-1]
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];  // D[i-1][j]
      const std::size_t sub = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({up + 1, row[j - 1] + 1, sub});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> didYouMean(std::string_view word,
                                      const std::vector<std::string>& candidates) {
  const std::string w = toLower(word);
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = levenshtein(w, toLower(c));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

namespace {

std::string nonFinite(double v) {
  if (std::isnan(v)) return "nan";
  return v < 0 ? "-inf" : "inf";
}

// Number of significant digits in a to_chars result ("-1.25e-07" -> 3).
int significantDigits(std::string_view s) {
  int n = 0;
  bool leading = true;
  for (char c : s) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

}  // namespace

std::string formatDouble(double v, int max_precision) {
  if (!std::isfinite(v)) return nonFinite(v);
  if (v == 0) return "0";  // also -0
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string out(buf, r.ptr);
  const int p = std::clamp(max_precision, 1, 17);
  if (significantDigits(out) > p) {
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, p);
    out.assign(buf, r.ptr);
  }
  return out;
}

std::string formatFixed(double v, int decimals) {
  if (!std::isfinite(v)) return nonFinite(v);
  const int d = std::clamp(decimals, 0, 100);
  char buf[512];  // |v| < 1.8e308: at most 309 integer digits + '.' + 100 + sign
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, d);
  std::string out(buf, r.ptr);
  if (!out.empty() && out[0] == '-' &&
      out.find_first_not_of("0.", 1) == std::string::npos) {
    out.erase(0, 1);
  }
  return out;
}

std::string toLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::optional<double> parseDouble(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);  // from_chars rejects a leading '+'
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> parseInt64(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace sl
