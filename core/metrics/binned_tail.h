#pragma once
// PASCAL's binned tail TTFT (40-metrics.md, "Tail statistics"): requests are
// binned by reasoning length in bins of 256 tokens, [k·256, (k+1)·256); per
// bin the statistic depends on the sample count n:
//   n < 5 -> bin dropped; n < 10 -> max; n < 20 -> p90; n < 100 -> p95; else p99
// (percentiles: linear interpolation, see summary.h).
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "metrics/request_record.h"

namespace sl {

struct TailBin {
  std::int64_t bin_lo = 0;  // inclusive, reasoning tokens
  std::int64_t bin_hi = 0;  // exclusive
  std::int64_t n = 0;
  std::string rule;         // "max" | "p90" | "p95" | "p99"
  double value = 0;         // TTFT, seconds
};

inline constexpr std::int64_t kTailBinWidth = 256;

/// The rule for a bin of n samples; empty when the bin is dropped (n < 5).
const char* tailRule(std::int64_t n);

/// Samples are (reasoning tokens, ttft seconds). Bins ascending by bin_lo.
std::vector<TailBin> binnedTailTtft(std::span<const std::pair<std::int64_t, double>> samples,
                                    std::int64_t binWidth = kTailBinWidth);
/// Over finished records with a TTFT.
std::vector<TailBin> binnedTailTtft(const std::vector<RequestRecord>& records,
                                    std::int64_t binWidth = kTailBinWidth);

/// CSV: header "bin_lo,bin_hi,n,rule,ttft_s" then one row per bin (6 decimals).
std::string binnedTailCsv(const std::vector<TailBin>& bins);

}  // namespace sl
