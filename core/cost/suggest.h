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

}  // namespace sl::costdetail
