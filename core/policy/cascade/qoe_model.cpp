#include "policy/cascade/qoe_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cost/calibration.h"
#include "cost/cost_model.h"

namespace sl {

namespace {
std::array<double, 5> row(const QoeFeatures& f) { return {1.0, f.n, f.sumI, f.sumI2, f.sumL}; }
}  // namespace

QoeModel fitQoe(const std::vector<QoeSample>& samples) {
  if (samples.size() < 5) throw std::invalid_argument("fitQoe: needs at least 5 samples");
  const auto rows = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd a(rows, 5);
  Eigen::VectorXd b(rows);
  std::array<double, 5> scale{};  // max |column|, for conditioning
  // Rows weighted by 1/q: the fit minimises the relative error it reports.
  for (Eigen::Index i = 0; i < rows; ++i) {
    const auto r = row(samples[static_cast<std::size_t>(i)].f);
    const double q = samples[static_cast<std::size_t>(i)].q;
    const double w = q > 0 ? 1.0 / q : 1.0;
    for (int k = 0; k < 5; ++k) {
      a(i, k) = w * r[static_cast<std::size_t>(k)];
      scale[static_cast<std::size_t>(k)] = std::max(scale[static_cast<std::size_t>(k)], std::abs(r[static_cast<std::size_t>(k)]));
    }
    b(i) = w * q;
  }
  for (int k = 0; k < 5; ++k) {
    const double s = scale[static_cast<std::size_t>(k)] > 0 ? scale[static_cast<std::size_t>(k)] : 1.0;
    scale[static_cast<std::size_t>(k)] = s;
    a.col(k) /= s;
  }
  // Non-negative least squares (the calibration's Lawson–Hanson solver): the
  // features are collinear (sumL ≈ sumI + generated), and an unconstrained
  // fit traded a negative D4 (total current length) against D2, a model in
  // which longer sequences lower the latency (issue 25).
  const Eigen::VectorXd x = nnls(a, b);
  QoeModel m;
  for (int k = 0; k < 5; ++k) m.d[static_cast<std::size_t>(k)] = x(k) / scale[static_cast<std::size_t>(k)];
  return m;
}

double meanRelativeError(const QoeModel& m, const std::vector<QoeSample>& samples) {
  double s = 0;
  std::size_t n = 0;
  for (const QoeSample& x : samples) {
    if (x.q <= 0) continue;
    s += std::abs(m.predict(x.f) - x.q) / x.q;
    ++n;
  }
  return n ? s / static_cast<double>(n) : 0.0;
}

double staticMeanRelativeError(const std::vector<QoeSample>& fit, const std::vector<QoeSample>& validate) {
  double mean = 0;
  for (const QoeSample& x : fit) mean += x.q;
  mean /= std::max<std::size_t>(1, fit.size());
  double s = 0;
  std::size_t n = 0;
  for (const QoeSample& x : validate) {
    if (x.q <= 0) continue;
    s += std::abs(mean - x.q) / x.q;
    ++n;
  }
  return n ? s / static_cast<double>(n) : 0.0;
}

std::vector<QoeSample> profileQoe(const CostModel& cost, const QoeProfileOptions& o) {
  std::vector<QoeSample> out;
  // Output lengths of 1/4, 1 and 4 times outputTokens: the lifetime-average
  // length then varies apart from the prompt (else ΣL - ΣI is a multiple of
  // n and the least squares are singular).
  for (const int steps : {std::max(1, o.outputTokens / 2), std::max(1, o.outputTokens), std::max(1, 2 * o.outputTokens)})
  for (std::int64_t b = std::max<std::int64_t>(1, o.minLength); b < o.maxLength; b *= 2) {
    for (int n = 1; n <= o.maxBatch; n *= 2) {
      // Memory: the batch's final lengths must fit the KV capacity.
      if (static_cast<double>(n) * static_cast<double>(2 * b + steps) > static_cast<double>(o.kvTokens)) break;
      // Prompts spread over [b, 2b) (validation: a half-step shift).
      std::vector<double> in(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) {
        const double frac = (static_cast<double>(i) + (o.validation ? 0.25 : 0.5)) / static_cast<double>(n);
        in[static_cast<std::size_t>(i)] = std::floor(static_cast<double>(b) * (1.0 + frac));
      }
      // One prefill iteration of the whole batch, then `steps` decode
      // iterations (the batch shape updated in O(1) per step).
      BatchShape pre;
      double sx = 0, sxx = 0;
      for (double x : in) {
        addPrefillChunk(pre, x);
        sx += x;
        sxx += x * x;
      }
      double total = cost.iterationSeconds(pre);
      for (int g = 0; g < steps; ++g) {
        BatchShape dec;
        dec.decode_seqs = n;
        dec.decode_ctx_sum = sx + static_cast<double>(n) * g;
        dec.decode_ctx_sumsq = sxx + 2.0 * g * sx + static_cast<double>(n) * g * g;
        total += cost.iterationSeconds(dec);
      }
      QoeFeatures avg;
      for (double x : in) avg.add(x, x + (steps - 1) / 2.0);
      const double q = total / steps;
      for (int i = 0; i < n; ++i) out.push_back({avg, q});
    }
  }
  return out;
}

}  // namespace sl
