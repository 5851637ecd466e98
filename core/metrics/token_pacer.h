#pragma once
// Andes-style QoE of an answer stream (40-metrics.md, "QoE of a token stream").
//
// O(1) state per request, no allocation, no per-token storage. All times are
// integer nanoseconds (SimTime): digest times are exact integers; the two
// areas are accumulated in nanosecond·token units as doubles and only divided
// at the end, so qoe() is a ratio of two areas in the same unit.
//
//   d_1 = max(g_1, t0 + TTFAT*),  d_k = max(g_k, d_{k-1} + TPOT*)
//   ∫D over [t0, d_n] = Σ_{k<=n} (d_n − d_k)        (kept as a running area)
//   ∫E over [t0, d_n] = Σ_{j=0}^{A−1} max(0, T − j·TPOT*),  T = d_n − t0 − TTFAT*
//                     = m·(2T − (m−1)·TPOT*)/2,  m = min(A, ⌊T/TPOT*⌋ + 1)
//   QoE = ∫D / ∫E   (1 when both are 0)
//
// Here g_k is the k-th *answer* token's production time (g_{R+k} in the spec).
#include <cstdint>

#include "util/time.h"

namespace sl {

class TokenPacer {
public:
  TokenPacer() = default;
  /// t0: start of answering (g_R; arrival for R = 0 if TTFT is scored inside
  /// QoE). Targets in ns (e.g. secondsToNs(slo.ttfat_s)); tpotTarget >= 0.
  /// answerLen: A, the number of answer tokens the stream will have.
  TokenPacer(SimTime t0, SimTime ttfatTarget, SimTime tpotTarget, std::int64_t answerLen) {
    reset(t0, ttfatTarget, tpotTarget, answerLen);
  }
  void reset(SimTime t0, SimTime ttfatTarget, SimTime tpotTarget, std::int64_t answerLen);

  /// Record the next answer token, produced at g (non-decreasing). O(1).
  void onToken(SimTime g) {
    ++n_;
    SimTime d;
    if (n_ == 1) {
      d = g > t0_ + ttfat_ ? g : t0_ + ttfat_;
      runStart_ = 1;
      runDigest_ = d;
    } else {
      const SimTime paced = lastDigest_ + tpot_;
      if (g > paced) {  // the stream fell behind the pace: a new paced run starts at g
        d = g;
        runStart_ = n_;
        runDigest_ = g;
      } else {
        d = paced;
      }
      areaD_ += static_cast<double>(n_ - 1) * static_cast<double>(d - lastDigest_);
    }
    lastDigest_ = d;
  }

  /// onToken(g[0]), ..., onToken(g[count - 1]), with identical results (bit
  /// for bit): the area is summed in integers while every partial sum stays
  /// below 2^53 (then the double sums were exact too), else token by token.
  /// The decode lane's replay (engine/decode_lane.h).
  void onTokens(const SimTime* g, std::int64_t count);

  /// Tokens generated but not yet digested by `now` (now >= last token time).
  /// This is PASCAL's "meets pace" signal: > 0 means the user has a buffer.
  std::int64_t buffered(SimTime now) const;

  /// ∫D/∫E over [t0, d_n] with E capped at A. The spec's QoE once the A-th
  /// token has been recorded; 1 before the first token and for A = 0.
  double qoe() const;

  /// Areas in token·seconds (for tests and diagnostics).
  double digestedArea() const { return areaD_ * 1e-9; }
  double expectedArea() const { return expectedAreaNs() * 1e-9; }

  std::int64_t generated() const { return n_; }
  std::int64_t answerLen() const { return answerLen_; }
  bool complete() const { return answerLen_ > 0 && n_ >= answerLen_; }
  /// Digest time of the last recorded token (d_n); -1 before the first.
  SimTime lastDigest() const { return n_ > 0 ? lastDigest_ : -1; }
  SimTime start() const { return t0_; }

private:
  double expectedAreaNs() const;

  SimTime t0_ = 0;
  SimTime ttfat_ = 0;
  SimTime tpot_ = 0;
  SimTime lastDigest_ = 0;  // d_n
  SimTime runDigest_ = 0;   // d_{j0}: start of the current paced run
  double areaD_ = 0;        // ∫D over [t0, d_n], token·ns
  std::int32_t answerLen_ = 0;  // A
  std::int32_t n_ = 0;          // answer tokens recorded
  std::int32_t runStart_ = 0;   // j0 (1-based); d_k = d_{j0} + (k − j0)·TPOT* for k >= j0
};

static_assert(sizeof(TokenPacer) <= 64, "TokenPacer lives in every in-flight request");

}  // namespace sl
