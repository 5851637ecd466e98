#include "metrics/kendall.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace servelab::metrics {
namespace {

// Pairs among runs of equal values in an already sorted sequence.
template <typename Eq>
std::int64_t tiedPairs(std::size_t n, Eq equal) {
  std::int64_t pairs = 0, run = 1;
  for (std::size_t i = 1; i <= n; ++i) {
    if (i < n && equal(i - 1, i)) {
      ++run;
    } else {
      pairs += run * (run - 1) / 2;
      run = 1;
    }
  }
  return pairs;
}

// Sorts v ascending; returns the number of inversions (pairs i < j with
// v[i] > v[j]) — strict, so equal values are not counted.
std::int64_t mergeCountInversions(std::vector<double>& v, std::vector<double>& tmp, std::size_t lo,
                                  std::size_t hi) {
  if (hi - lo < 2) return 0;
  std::size_t mid = lo + (hi - lo) / 2;
  std::int64_t inv = mergeCountInversions(v, tmp, lo, mid) + mergeCountInversions(v, tmp, mid, hi);
  std::size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (v[j] < v[i]) {
      inv += static_cast<std::int64_t>(mid - i);
      tmp[k++] = v[j++];
    } else {
      tmp[k++] = v[i++];
    }
  }
  while (i < mid) tmp[k++] = v[i++];
  while (j < hi) tmp[k++] = v[j++];
  std::copy(tmp.begin() + static_cast<std::ptrdiff_t>(lo), tmp.begin() + static_cast<std::ptrdiff_t>(hi),
            v.begin() + static_cast<std::ptrdiff_t>(lo));
  return inv;
}

}  // namespace

KendallCounts kendallCounts(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("kendall: sequences differ in length");
  const std::size_t n = a.size();
  KendallCounts c;
  c.pairs = static_cast<std::int64_t>(n) * static_cast<std::int64_t>(n > 0 ? n - 1 : 0) / 2;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return a[x] != a[y] ? a[x] < a[y] : b[x] < b[y];
  });
  c.tiedA = tiedPairs(n, [&](std::size_t i, std::size_t j) { return a[order[i]] == a[order[j]]; });
  c.tiedBoth = tiedPairs(n, [&](std::size_t i, std::size_t j) {
    return a[order[i]] == a[order[j]] && b[order[i]] == b[order[j]];
  });
  // b in (a, b) order: an inversion is a pair ordered one way by a and the
  // other way by b (pairs tied in a are sorted by b, so never inverted).
  std::vector<double> bs(n), tmp(n);
  for (std::size_t i = 0; i < n; ++i) bs[i] = b[order[i]];
  c.discordant = mergeCountInversions(bs, tmp, 0, n);
  c.tiedB = tiedPairs(n, [&](std::size_t i, std::size_t j) { return bs[i] == bs[j]; });
  c.concordant = c.pairs - c.tiedA - c.tiedB + c.tiedBoth - c.discordant;
  return c;
}

std::optional<double> kendallTauB(const std::vector<double>& a, const std::vector<double>& b) {
  KendallCounts c = kendallCounts(a, b);
  double den = std::sqrt(static_cast<double>(c.pairs - c.tiedA)) * std::sqrt(static_cast<double>(c.pairs - c.tiedB));
  if (c.pairs == 0 || den == 0.0) return std::nullopt;
  return static_cast<double>(c.concordant - c.discordant) / den;
}

std::vector<double> goldRanking(const std::vector<double>& lengths, double alpha) {
  const std::size_t n = lengths.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return lengths[x] < lengths[y]; });
  std::vector<double> rank(n);
  double g = 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) {
      double prev = lengths[order[i - 1]], cur = lengths[order[i]];
      double eps = alpha * (prev + cur) / 2.0;  // 0 when both are 0: tied only if equal
      if (!(std::fabs(cur - prev) <= eps)) g = static_cast<double>(i + 1);
    }
    rank[order[i]] = g;
  }
  return rank;
}

}  // namespace servelab::metrics
