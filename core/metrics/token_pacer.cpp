#include "metrics/token_pacer.h"

#include <algorithm>

namespace sl {

void TokenPacer::reset(SimTime t0, SimTime ttfatTarget, SimTime tpotTarget, std::int64_t answerLen) {
  t0_ = t0;
  ttfat_ = std::max<SimTime>(0, ttfatTarget);
  tpot_ = std::max<SimTime>(0, tpotTarget);
  lastDigest_ = 0;
  runDigest_ = 0;
  areaD_ = 0;
  answerLen_ = static_cast<std::int32_t>(std::max<std::int64_t>(0, answerLen));
  n_ = 0;
  runStart_ = 0;
}

void TokenPacer::onTokens(const SimTime* g, std::int64_t count) {
  std::int64_t i = 0;
  if (n_ == 0 && count > 0) onToken(g[i++]);
  // The terms (n - 1)·(d_n − d_{n−1}) are integers >= 0, so the partial sums
  // only grow: when the last one is below 2^53 every one was, each product
  // and each double addition was exact, and the integer sum is the same
  // number as the double one.
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (i < count && areaD_ < static_cast<double>(kExact)) {
    std::int64_t n = n_, runStart = runStart_;
    SimTime last = lastDigest_, runDigest = runDigest_;
    auto acc = static_cast<std::int64_t>(areaD_);
    bool overflow = false;
    for (std::int64_t j = i; j < count; ++j) {
      ++n;
      const SimTime paced = last + tpot_;
      const SimTime gj = g[j];
      const bool behind = gj > paced;  // a new paced run starts at g
      const SimTime d = behind ? gj : paced;
      runStart = behind ? n : runStart;
      runDigest = behind ? gj : runDigest;
      std::int64_t term;
      overflow |= __builtin_mul_overflow(n - 1, d - last, &term);
      overflow |= __builtin_add_overflow(acc, term, &acc);
      last = d;
    }
    if (!overflow && acc < kExact) {
      n_ = static_cast<std::int32_t>(n);
      runStart_ = static_cast<std::int32_t>(runStart);
      lastDigest_ = last;
      runDigest_ = runDigest;
      areaD_ = static_cast<double>(acc);
      return;
    }
  }
  for (; i < count; ++i) onToken(g[i]);
}

std::int64_t TokenPacer::buffered(SimTime now) const {
  if (n_ == 0) return 0;
  // Tokens before the current run have d_k <= d_{j0-1} < g_{j0} <= now.
  const std::int64_t inRun = static_cast<std::int64_t>(n_) - runStart_ + 1;
  std::int64_t digestedInRun = 0;
  if (now >= runDigest_) {
    digestedInRun = tpot_ > 0 ? (now - runDigest_) / tpot_ + 1 : inRun;
    digestedInRun = std::min(digestedInRun, inRun);
  }
  return inRun - digestedInRun;
}

double TokenPacer::expectedAreaNs() const {
  if (n_ == 0) return 0;
  const SimTime T = lastDigest_ - t0_ - ttfat_;  // >= 0 since d_n >= d_1 >= t0 + TTFAT*
  if (T <= 0) return 0;
  const std::int64_t A = std::max<std::int64_t>(answerLen_, n_);
  const std::int64_t m = tpot_ > 0 ? std::min<std::int64_t>(A, T / tpot_ + 1) : A;
  // Σ_{j=0}^{m-1} (T − j·TPOT*) = m·(2T − (m−1)·TPOT*)/2; the bracket is an exact int64.
  const SimTime bracket = 2 * T - (m - 1) * tpot_;
  return static_cast<double>(m) * static_cast<double>(bracket) * 0.5;
}

double TokenPacer::qoe() const {
  // Both areas in token·ns: for on-pace streams they are the same integer, so
  // the ratio is exactly 1.
  const double e = expectedAreaNs();
  if (e <= 0) return 1.0;
  return std::min(1.0, areaD_ / e);
}

}  // namespace sl
