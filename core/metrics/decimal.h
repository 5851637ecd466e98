#pragma once
// Exact decimal text of a scaled integer (issue 27: trace.json's
// microseconds from integer ns without going through a double).
#include <cstdint>
#include <string>

namespace sl {

/// `units` / 10^decimals written exactly with `decimals` (0..9) decimals
/// ("-0.001" for -1, 3). For |units| < 4e15 and decimals 3 it is the same
/// text as appendFixed(units / 1000.0, 3): the quotient's double is within
/// far less than half a unit of the last decimal of the exact value.
void appendDecimal(std::int64_t units, int decimals, std::string& out);

}  // namespace sl
