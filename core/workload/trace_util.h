#pragma once
// Helpers shared by the CSV trace readers (internal to core/workload).
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "util/csv.h"
#include "util/error.h"
#include "workload/parse_util.h"

namespace sl::detail {

inline std::string lowerTrim(std::string_view s) {
  std::string out(trimView(s));
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Column index of `name` (case-insensitive) in `header`; -1 if absent;
/// InputError "WHERE: duplicate column" if it appears twice.
inline int findColumn(const std::vector<std::string>& header, const std::string& name, const std::string& where) {
  int col = -1;
  const std::string want = lowerTrim(name);
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (lowerTrim(header[i]) != want) continue;
    if (col >= 0) throw InputError(where + ": duplicate column '" + name + "'");
    col = static_cast<int>(i);
  }
  return col;
}

/// Field `col` of `f`, or InputError "WHERE: missing field 'NAME'".
inline const std::string& traceField(const std::vector<std::string>& f, int col, const char* name,
                                     const std::string& where) {
  if (col < 0 || static_cast<std::size_t>(col) >= f.size())
    throw InputError(where + ": missing field '" + name + "' (row has " + std::to_string(f.size()) + " fields)");
  return f[static_cast<std::size_t>(col)];
}

/// A token count: an integer (or integral decimal) in [0, 2^31 - 1].
inline std::int64_t tokenCount(const std::string& s, const char* name, const std::string& where) {
  std::int64_t v = 0;
  if (!parseInt64(s, v)) throw InputError(where + ": " + name + " is not an integer (got \"" + s + "\")");
  if (v < 0) throw InputError(where + ": " + name + " must be >= 0 (got " + std::string(trimView(s)) + ")");
  if (v > std::numeric_limits<std::int32_t>::max())
    throw InputError(where + ": " + name + " is too large (got " + std::string(trimView(s)) + ")");
  return v;
}

}  // namespace sl::detail
