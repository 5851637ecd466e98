#pragma once
// CascadeInfer's latency (QoE) model (paper §4.1, 30-schedulers.md
// "CascadeInfer"): the per-request normalized latency of a request in a batch
// of n requests with prompt lengths I_i and current lengths L_i is
//   Q = D0 + D1·n + D2·ΣI + D3·ΣI² + D4·ΣL,
// and the batch quality is Q^B = n·Q. D is fitted by least squares (Eigen)
// from profiling runs of the cost model: buckets of doubling length × batch
// sizes 1, 2, 4, ... up to what the KV memory holds.
#include <array>
#include <cstdint>
#include <vector>

namespace sl {

class CostModel;

/// One batch's load features, summed over its n requests.
struct QoeFeatures {
  double n = 0, sumI = 0, sumI2 = 0, sumL = 0;
  void add(double input, double length) {
    n += 1;
    sumI += input;
    sumI2 += input * input;
    sumL += length;
  }
  QoeFeatures scaled(double f) const { return {n * f, sumI * f, sumI2 * f, sumL * f}; }
};

/// One profiling observation: a request's normalized latency (end-to-end
/// seconds / output tokens) and its batch's average load features.
struct QoeSample {
  QoeFeatures f;
  double q = 0;
};

struct QoeModel {
  std::array<double, 5> d{};  // D0..D4
  /// Q of one request in a batch with features f.
  double predict(const QoeFeatures& f) const { return d[0] + d[1] * f.n + d[2] * f.sumI + d[3] * f.sumI2 + d[4] * f.sumL; }
  /// Q^B = n·Q (Eq. 1); 0 for an empty batch.
  double batch(const QoeFeatures& f) const { return f.n > 0 ? f.n * predict(f) : 0.0; }
};

/// Non-negative least-squares fit of D over the samples (columns scaled for
/// conditioning; every D_k >= 0: no feature lowers the latency).
/// Throws std::invalid_argument with fewer than 5 samples.
QoeModel fitQoe(const std::vector<QoeSample>& samples);
/// Mean over samples of |predict - q| / q.
double meanRelativeError(const QoeModel& m, const std::vector<QoeSample>& samples);
/// Mean over samples of |mean(q of `fit`) - q| / q: the static predictor the
/// paper compares against (Fig. 13).
double staticMeanRelativeError(const std::vector<QoeSample>& fit, const std::vector<QoeSample>& validate);

struct QoeProfileOptions {
  std::int64_t minLength = 128;     // first bucket [minLength, 2·minLength)
  std::int64_t maxLength = 8192;    // last bucket starts below this
  std::int64_t kvTokens = 1 << 20;  // KV capacity of one instance, tokens
  int maxBatch = 256;               // max_num_seqs
  int outputTokens = 128;           // decode steps each profiled request runs
  bool validation = false;          // shifted prompt lengths (a held-out set)
};

/// Profiling runs of the cost model: for each length bucket and batch size,
/// a batch of requests with prompts spread over the bucket is prefilled
/// together and then decodes outputTokens/2, outputTokens and 2·outputTokens steps; each request's
/// normalized latency and lifetime-average features make one sample.
std::vector<QoeSample> profileQoe(const CostModel& cost, const QoeProfileOptions& o);

}  // namespace sl
