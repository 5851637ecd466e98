#include "policy/selfsched/noise.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "metrics/kendall.h"

namespace sl {

double noisyTauB(const std::vector<double>& lengths, const std::vector<double>& eps, double sigma, double alpha,
                 std::size_t group) {
  if (eps.size() < lengths.size()) throw std::invalid_argument("noisyTauB: fewer noise draws than lengths");
  group = std::max<std::size_t>(group, 2);
  double sum = 0;
  std::size_t n = 0;
  std::vector<double> len, pred;
  for (std::size_t at = 0; at + group <= lengths.size(); at += group) {
    len.assign(lengths.begin() + static_cast<std::ptrdiff_t>(at), lengths.begin() + static_cast<std::ptrdiff_t>(at + group));
    pred.resize(group);
    for (std::size_t i = 0; i < group; ++i) pred[i] = len[i] * std::exp(sigma * eps[at + i]);
    if (auto t = servelab::metrics::kendallTauB(servelab::metrics::goldRanking(len, alpha), pred)) {
      sum += *t;
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : 1.0;
}

NoiseCalibration calibrateSigma(const std::vector<double>& lengths, const std::vector<double>& eps, double target,
                                double alpha, std::size_t group) {
  NoiseCalibration c;
  c.sample = lengths.size();
  double lo = 0, hi = 20;
  const double atLo = noisyTauB(lengths, eps, lo, alpha, group);
  if (atLo <= target) {
    c.sigma = lo;
    c.tau = atLo;
    return c;
  }
  const double atHi = noisyTauB(lengths, eps, hi, alpha, group);
  if (atHi >= target) {
    c.sigma = hi;
    c.tau = atHi;
    return c;
  }
  while (hi - lo > 1e-4) {
    const double mid = 0.5 * (lo + hi);
    if (noisyTauB(lengths, eps, mid, alpha, group) > target) lo = mid;
    else hi = mid;
  }
  c.sigma = 0.5 * (lo + hi);
  c.tau = noisyTauB(lengths, eps, c.sigma, alpha, group);
  return c;
}

}  // namespace sl
