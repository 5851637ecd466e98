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
  // Tokens n+1 .. n+c, relative to d_n: with u_0 = 0 and
  //   u_j = max(u_{j-1}, g_{n+j} − d_n − j·TPOT*),  d_{n+j} = d_n + j·TPOT* + u_j
  // (d_k = max(g_k, d_{k−1} + TPOT*) is a running maximum once the pace is
  // taken out), and token n+j starts a new paced run when u_j > u_{j−1}.
  // The area's terms sum (Abel) to
  //   Σ_{j=1..c} (n+j−1)(d_{n+j} − d_{n+j−1}) = (n+c−1)·D_c − Σ_{j<c} D_j,
  // D_j = d_{n+j} − d_n = j·TPOT* + u_j, so one pass keeps a running maximum
  // and a sum. The terms are integers >= 0: when the exact total stays
  // below 2^53, onToken's partial sums were all exact doubles equal to it,
  // and this is the same number; otherwise token by token, as onToken does.
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  const std::int64_t c = count - i;
  if (c > 0 && areaD_ < static_cast<double>(kExact)) {
    const SimTime* h = g + i;
    std::int64_t u = 0, newRun = 0;
    std::uint64_t sumU = 0;  // (unsigned: a sum that overflows is thrown away below, without UB)
    SimTime paced = lastDigest_;  // d_n + j·TPOT*
    for (std::int64_t j = 0; j < c; ++j) {
      paced += tpot_;
      const std::int64_t v = h[j] - paced;
      newRun = v > u ? j + 1 : newRun;
      u = v > u ? v : u;
      sumU += static_cast<std::uint64_t>(u);
    }
    sumU -= static_cast<std::uint64_t>(u);  // Σ over j < c
    const std::int64_t n = n_;
    std::int64_t Dc = 0, area = 0;
    bool overflow = __builtin_mul_overflow(c, tpot_, &Dc);
    overflow |= __builtin_add_overflow(Dc, u, &Dc);
    overflow |= __builtin_mul_overflow(n + c - 1, Dc, &area);
    // Σ_{j<c} D_j = TPOT*·c(c−1)/2 + Σ u_j <= (c−1)·D_c <= (n+c−1)·D_c: when
    // that product did not overflow, neither did these.
    if (!overflow) area -= tpot_ * (c * (c - 1) / 2) + static_cast<std::int64_t>(sumU);
    overflow |= __builtin_add_overflow(area, static_cast<std::int64_t>(areaD_), &area);
    if (!overflow && area < kExact) {
      if (newRun > 0) {
        runStart_ = static_cast<std::int32_t>(n + newRun);
        runDigest_ = h[newRun - 1];
      }
      n_ = static_cast<std::int32_t>(n + c);
      lastDigest_ += Dc;
      areaD_ = static_cast<double>(area);
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
