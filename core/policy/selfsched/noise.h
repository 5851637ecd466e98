#pragma once
// The self-scheduling predictors' quality model (self-scheduling paper §3.3-
// §3.4, 30-schedulers.md): an LLM's ranking is not simulated; its quality is.
// A predicted output length is true × exp(σ·ε), ε ~ N(0, 1) from the run's
// seed, and σ is chosen so that Kendall's tau-b between the predictions and
// the gold ranking (lengths within α = 10 % of their mean tied) hits the
// mode's target.
#include <vector>

namespace sl {

struct NoiseCalibration {
  double sigma = 0;        // the σ found
  double tau = 0;          // tau-b of the sample at that σ
  std::size_t sample = 0;  // lengths it was calibrated on
};

/// Mean tau-b, over consecutive groups of `group` lengths (a ranking
/// batch: the gold ranking's ties chain along the sorted lengths, so it is
/// only meaningful for a batch, not for a whole run), between
/// goldRanking(group, alpha) and length × exp(sigma × eps) of the same
/// requests. Groups whose tau-b is undefined are skipped; 1 when none is
/// defined.
double noisyTauB(const std::vector<double>& lengths, const std::vector<double>& eps, double sigma, double alpha,
                 std::size_t group);

/// The σ in [0, 20] whose noisyTauB is `target` (bisection to 1e-4 in σ;
/// the same ε for every σ, so the search is deterministic). A target above
/// what σ = 0 reaches gives σ = 0; one below what σ = 20 reaches, σ = 20.
NoiseCalibration calibrateSigma(const std::vector<double>& lengths, const std::vector<double>& eps, double target,
                                double alpha, std::size_t group);

}  // namespace sl
