#pragma once
// Arrow's TTFT predictor (paper §5.3, 30-schedulers.md "Arrow"): the prefill
// time of one prompt of I tokens on an idle instance, t(I) = a + b·I + c·I²,
// fitted at start-up by least squares (Eigen) to "profiling runs" taken from
// the active cost model: the chunked prefill of one prompt (chunks of
// max_num_batched_tokens, each chunk attending to the tokens before it), as
// the paper profiles each instance when the cluster starts. The fit error
// against the profile is kept and reported (policy_report).
#include <cstdint>
#include <vector>

namespace sl {

class CostModel;

struct TtftFit {
  double a = 0, b = 0, c = 0;   // seconds, s/token, s/token²
  double mape = 0;              // mean |fit - profile| / profile over the fit points
  double maxRelError = 0;       // largest |fit - profile| / profile over the fit points
  std::int32_t points = 0;      // profile points used
  std::int32_t maxTokens = 0;   // largest prompt profiled
};

class TtftPredictor {
public:
  TtftPredictor() = default;
  /// Profiles prompts of 2^k·16 tokens and midpoints between them up to
  /// `maxTokens`, chunked by `chunkTokens`, on `cost`, and fits the curve
  /// minimising the relative error (weights 1/t).
  static TtftPredictor fit(const CostModel& cost, std::int32_t maxTokens, std::int32_t chunkTokens);
  /// The profile itself: seconds of the chunked prefill of one `tokens`-long prompt.
  static double profileSeconds(const CostModel& cost, std::int32_t tokens, std::int32_t chunkTokens);

  double predict(double tokens) const { return f_.a + f_.b * tokens + f_.c * tokens * tokens; }
  /// Predicted time left of a prefill of `target` tokens of which `done` are computed.
  double remaining(double target, double done) const {
    if (done <= 0) return predict(target);
    const double left = f_.b * (target - done) + f_.c * (target * target - done * done);
    return left > 0 ? left : 0;
  }
  const TtftFit& fitInfo() const { return f_; }

private:
  TtftFit f_;
};

}  // namespace sl
