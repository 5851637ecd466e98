#include "policy/arrow/ttft_predictor.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "cost/cost_model.h"

namespace sl {

double TtftPredictor::profileSeconds(const CostModel& cost, std::int32_t tokens, std::int32_t chunkTokens) {
  const std::int32_t chunk = std::max<std::int32_t>(1, chunkTokens);
  double t = 0;
  for (std::int32_t done = 0; done < tokens; done += chunk) {
    const std::int32_t n = std::min(chunk, tokens - done);
    BatchShape b;
    addPrefillChunk(b, n, done);
    t += cost.iterationSeconds(b);
  }
  return t;
}

TtftPredictor TtftPredictor::fit(const CostModel& cost, std::int32_t maxTokens, std::int32_t chunkTokens) {
  maxTokens = std::max<std::int32_t>(maxTokens, 64);
  std::vector<double> xs, ys;
  for (double x = 16; x <= maxTokens; x *= 2) {
    xs.push_back(x);
    if (x * 1.5 <= maxTokens) xs.push_back(x * 1.5);
  }
  if (xs.back() < maxTokens) xs.push_back(maxTokens);
  for (double x : xs) ys.push_back(profileSeconds(cost, static_cast<std::int32_t>(x), chunkTokens));

  // Weighted least squares: rows scaled by 1/y, so the fit minimises the
  // relative error (short and long prompts matter alike to a TTFT SLO).
  const auto n = static_cast<Eigen::Index>(xs.size());
  Eigen::MatrixXd A(n, 3);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double x = xs[static_cast<std::size_t>(i)], w = 1.0 / ys[static_cast<std::size_t>(i)];
    A(i, 0) = w;
    A(i, 1) = w * x;
    A(i, 2) = w * x * x;
    y(i) = 1.0;
  }
  // Columns scaled to unit norm for conditioning (I² reaches ~10^10).
  Eigen::Vector3d scale;
  for (int j = 0; j < 3; ++j) {
    scale(j) = A.col(j).norm();
    if (scale(j) > 0) A.col(j) /= scale(j);
  }
  const Eigen::Vector3d sol = A.colPivHouseholderQr().solve(y);
  TtftPredictor p;
  p.f_.a = scale(0) > 0 ? sol(0) / scale(0) : 0;
  p.f_.b = scale(1) > 0 ? sol(1) / scale(1) : 0;
  p.f_.c = scale(2) > 0 ? sol(2) / scale(2) : 0;
  double sum = 0, worst = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double e = std::abs(p.predict(xs[i]) - ys[i]) / ys[i];
    sum += e;
    worst = std::max(worst, e);
  }
  p.f_.mape = sum / static_cast<double>(xs.size());
  p.f_.maxRelError = worst;
  p.f_.points = static_cast<std::int32_t>(xs.size());
  p.f_.maxTokens = maxTokens;
  return p;
}

}  // namespace sl
