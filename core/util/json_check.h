#pragma once
// Small checks shared by the strict JSON readers outside the scenario parser
// (saved runs, change logs): type names for messages and a non-negative
// integer reader. Errors are InputError naming `at`, the field's path.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace sl {

/// "null", "bool", "number", "string", "array" or "object".
const char* jsonTypeName(const nlohmann::json& v);

/// A JSON integer >= 0; an integral float such as 4.0 is accepted (as in
/// scenarios). InputError "at: …" for a negative, fractional, non-finite or
/// too large value, or another type.
std::int64_t jsonNonNegativeInt(const nlohmann::json& v, const std::string& at);

}  // namespace sl
