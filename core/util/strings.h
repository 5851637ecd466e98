#pragma once
// Small string helpers shared by the loaders and writers: edit distance and
// "did you mean" hints for unknown names, locale-independent number
// formatting and parsing (std::to_chars / std::from_chars, so output is the
// same on every platform and never depends on the C locale).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sl {

/// Levenshtein edit distance (insertions, deletions, substitutions; cost 1).
std::size_t levenshtein(std::string_view a, std::string_view b);

/// The candidate closest to `word` (ASCII case-insensitive Levenshtein),
/// if its distance is at most max(2, word.size() / 3). Ties go to the
/// earliest candidate, so the answer is deterministic. nullopt when nothing
/// is close enough or `candidates` is empty.
std::optional<std::string> didYouMean(std::string_view word,
                                      const std::vector<std::string>& candidates);

/// Shortest decimal text that reads back to exactly `v` (std::to_chars),
/// e.g. 0.1 -> "0.1", 5.0 -> "5", 1e21 -> "1e+21". When the shortest form
/// needs more than `max_precision` significant digits (1..17), it is rounded
/// to `max_precision` significant digits instead (%g style). -0 prints as
/// "0"; NaN as "nan"; infinities as "inf" / "-inf".
std::string formatDouble(double v, int max_precision = 17);

/// Fixed notation with exactly `decimals` digits after the point
/// (std::to_chars, round-half-even on the exact binary value), e.g.
/// formatFixed(2.5, 2) -> "2.50". `decimals` is clamped to [0, 100]. A result
/// that rounds to zero never carries a minus sign ("0.00", not "-0.00").
std::string formatFixed(double v, int decimals);

/// ASCII lower-case copy.
std::string toLower(std::string_view s);

/// `s` without leading/trailing spaces, tabs, CR and LF.
std::string_view trim(std::string_view s);

/// Split on every `sep` (no trimming; "a,,b" -> {"a", "", "b"}; "" -> {""}).
std::vector<std::string_view> split(std::string_view s, char sep);

/// Whole-string number parsing (after trim); nullopt on any junk, overflow,
/// an empty string or a non-finite value ("nan", "inf"). Locale-independent.
std::optional<double> parseDouble(std::string_view s);
std::optional<std::int64_t> parseInt64(std::string_view s);

}  // namespace sl
