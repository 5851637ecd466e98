#include "metrics/binned_tail.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "metrics/summary.h"

namespace sl {

const char* tailRule(std::int64_t n) {
  if (n < 5) return "";
  if (n < 10) return "max";
  if (n < 20) return "p90";
  if (n < 100) return "p95";
  return "p99";
}

namespace {

// percentileSorted's value (linear interpolation) without sorting: the two
// order statistics it reads, by selection (O(n); the live chart recomputes
// the tail of hundreds of thousands of requests several times a second).
double percentileBySelection(std::vector<double>& v, double p) {
  const std::size_t n = v.size();
  const double h = static_cast<double>(n - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double a = v[lo];
  if (lo + 1 >= n) return a;
  const double b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return a + (h - static_cast<double>(lo)) * (b - a);
}

}  // namespace

std::vector<TailBin> binnedTailTtft(std::span<const std::pair<std::int64_t, double>> samples,
                                    std::int64_t binWidth) {
  if (binWidth <= 0) binWidth = kTailBinWidth;
  std::map<std::int64_t, std::vector<double>> bins;
  for (const auto& [reasoning, ttft] : samples) {
    const std::int64_t r = std::max<std::int64_t>(0, reasoning);
    bins[r / binWidth].push_back(ttft);
  }
  std::vector<TailBin> out;
  for (auto& [idx, vals] : bins) {
    const auto n = static_cast<std::int64_t>(vals.size());
    const std::string rule = tailRule(n);
    if (rule.empty()) continue;
    double v = 0;
    if (rule == "p90") v = percentileBySelection(vals, 0.90);
    else if (rule == "p95") v = percentileBySelection(vals, 0.95);
    else if (rule == "p99") v = percentileBySelection(vals, 0.99);
    else v = *std::max_element(vals.begin(), vals.end());
    out.push_back(TailBin{idx * binWidth, (idx + 1) * binWidth, n, rule, v});
  }
  return out;
}

std::vector<TailBin> binnedTailTtft(const std::vector<RequestRecord>& records, std::int64_t binWidth) {
  std::vector<std::pair<std::int64_t, double>> samples;
  samples.reserve(records.size());
  for (const auto& r : records) {
    if (!r.finished) continue;
    if (auto t = r.ttft()) samples.emplace_back(r.reasoning, *t);
  }
  return binnedTailTtft(samples, binWidth);
}

std::string binnedTailCsv(const std::vector<TailBin>& bins) {
  std::string out = "bin_lo,bin_hi,n,rule,ttft_s\n";
  for (const auto& b : bins) {
    appendInt(b.bin_lo, out);
    out += ',';
    appendInt(b.bin_hi, out);
    out += ',';
    appendInt(b.n, out);
    out += ',';
    out += b.rule;
    out += ',';
    appendFixed(b.value, 6, out);
    out += '\n';
  }
  return out;
}

}  // namespace sl
