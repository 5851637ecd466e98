#pragma once
// Small helpers shared by the workload readers (internal to core/workload).
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "util/csv.h"

namespace sl::detail {

/// Locale-independent strict parse of a whole (trimmed) field as a double.
inline bool parseDouble(std::string_view s, double& out) {
  s = trimView(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

/// Whole field as an integer; accepts "12" and integral decimals like "12.0".
inline bool parseInt64(std::string_view s, std::int64_t& out) {
  s = trimView(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  if (ec == std::errc() && p == end) return true;
  double d = 0;
  // Range first: converting an out-of-range double to int64 is undefined.
  if (!parseDouble(s, d) || !(d <= 9e18 && d >= -9e18) || d != static_cast<double>(static_cast<std::int64_t>(d)))
    return false;
  out = static_cast<std::int64_t>(d);
  return true;
}

/// A relative path resolves against base_dir (the scenario file's folder).
inline std::string resolvePath(const std::string& path, const std::string& base_dir) {
  std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

/// Shortest round-trip text for a double (for error messages).
inline std::string fmt(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::string("?");
}

}  // namespace sl::detail
