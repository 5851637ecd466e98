#include "util/json_check.h"

#include <cmath>
#include <limits>

#include "util/error.h"
#include "util/strings.h"

namespace sl {

const char* jsonTypeName(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "bool";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

std::int64_t jsonNonNegativeInt(const nlohmann::json& v, const std::string& at) {
  if (v.is_number_unsigned() || v.is_number_integer()) {
    if (v.is_number_integer() && v.get<std::int64_t>() < 0)
      throw InputError(at + ": must be >= 0 (got " + std::to_string(v.get<std::int64_t>()) + ")");
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw InputError(at + ": too large");
    return v.get<std::int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) throw InputError(at + ": expected an integer, got " + v.dump());
    if (d < 0) throw InputError(at + ": must be >= 0 (got " + formatDouble(d) + ")");
    if (d >= 9.2e18) throw InputError(at + ": too large");
    return static_cast<std::int64_t>(d);
  }
  throw InputError(at + ": expected an integer, got " + jsonTypeName(v));
}

}  // namespace sl
