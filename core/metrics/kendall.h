// Kendall's tau-b with ties (self-scheduling paper §3.3, Eq. 1) and the
// paper's gold ranking with relative-threshold ties (§3.4, Eqs. 2–4).
//
//   tau_b = (n_c − n_d) / sqrt((n_0 − n_a)(n_0 − n_b))
//
// n_0 = n(n−1)/2 pairs, n_a / n_b the pairs tied in a / in b. Computed in
// O(n log n) (Knight's algorithm: sort by (a, b), count ties, then count the
// discordant pairs as the swaps of a merge sort on b). Used to calibrate the
// self-scheduling predictors' noise and to report the tau-b a run achieved.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace servelab::metrics {

// Pair counts behind tau-b, all over the n(n−1)/2 pairs.
struct KendallCounts {
  std::int64_t pairs = 0;         // n_0
  std::int64_t concordant = 0;    // n_c
  std::int64_t discordant = 0;    // n_d
  std::int64_t tiedA = 0;         // n_a: tied in a (whether or not tied in b)
  std::int64_t tiedB = 0;         // n_b: tied in b
  std::int64_t tiedBoth = 0;      // tied in both
};

// Counts for two equally long sequences (throws std::invalid_argument when
// the lengths differ).
KendallCounts kendallCounts(const std::vector<double>& a, const std::vector<double>& b);

// tau-b in [−1, 1]; nullopt when it is undefined (fewer than two items, or
// every pair tied in a or in b: the denominator is 0).
std::optional<double> kendallTauB(const std::vector<double>& a, const std::vector<double>& b);

// The paper's gold ranking: sort by length; adjacent items are tied when
// |L(i) − L(i−1)| ≤ alpha · (L(i−1) + L(i)) / 2 (two zeros only when equal);
// competition ("1224") ranks, returned in the input order. Ties chain along
// the sorted order, as Eq. 4 assigns g(i) = g(i−1).
std::vector<double> goldRanking(const std::vector<double>& lengths, double alpha);

}  // namespace servelab::metrics
