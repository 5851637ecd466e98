#pragma once
// "Did you mean" helpers for unknown preset ids and coefficient keys.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sl::costdetail {

/// Levenshtein edit distance (insert, delete, substitute; each costs 1).
std::size_t editDistance(std::string_view a, std::string_view b);

/// The candidate closest to `query`, or "" when none is reasonably close
/// (distance > max(2, 60 % of the longer string)). Ties go to the earlier
/// candidate, so pass candidates in their stable order.
std::string closestMatch(std::string_view query, const std::vector<std::string>& candidates);

/// "a, b, c"
std::string joinList(const std::vector<std::string>& items);

/// "<place>: unknown <what>: did you mean 'k'? known: a, b, c" (the hint
/// only when one is close): the message for an unknown JSON key.
std::string unknownKeyMessage(const std::string& place, std::string_view what, std::string_view key,
                              const std::vector<std::string>& known);

}  // namespace sl::costdetail
