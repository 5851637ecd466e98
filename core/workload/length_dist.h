#pragma once
// Token-length distributions (60-cli-formats.md "Workloads"): constant,
// uniform, lognormal (median & p90, or mu & sigma), empirical (a CSV column
// or a JSON-lines field, loaded once), and weighted mixtures; each may clip
// with clipMin / clipMax. Validation happens at construction and throws
// sl::InputError naming the field (`what` given by the caller).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenario/spec.h"
#include "util/rng.h"

namespace sl {

/// z such that P(N(0,1) <= z) = 0.9.
inline constexpr double kZ90 = 1.2815515655446004;

class LengthSampler {
public:
  /// `what` names the field in error messages, e.g. "workload.input_tokens".
  /// Relative empirical paths resolve against `base_dir`.
  explicit LengthSampler(const LengthDist& dist, const std::string& base_dir = ".",
                         const std::string& what = "length");
  LengthSampler(const LengthSampler&) = delete;
  LengthSampler& operator=(const LengthSampler&) = delete;
  LengthSampler(LengthSampler&&) noexcept;
  LengthSampler& operator=(LengthSampler&&) noexcept;
  ~LengthSampler();

  /// One draw, rounded to the nearest integer (halves away from zero) and
  /// clipped by the distribution's own clipMin / clipMax (mixture: the
  /// part's clip, then the mixture's). Never negative (every kind is
  /// validated non-negative). Context-window clipping is the caller's job
  /// (see clipRequestLengths in workload_source.h).
  std::int64_t sample(Rng& rng) const;

  /// Unrounded, unclipped draw (tests, analytics).
  double sampleRaw(Rng& rng) const;

  /// Mean before rounding and clipping (empirical: the data's mean).
  double mean() const;

  /// Top-level mixture access (for joint mixtures across the three length
  /// fields): number of parts (0 when not a mixture), the normalised
  /// cumulative weights, a component pick (one uniform01 draw), and a draw
  /// from part `i` with the part's and then the mixture's clip applied.
  std::size_t mixtureParts() const;
  const std::vector<double>& mixtureCumulative() const;
  std::size_t pickComponent(Rng& rng) const;
  std::int64_t sampleComponent(std::size_t i, Rng& rng) const;

private:
  struct Node;
  std::unique_ptr<Node> root_;
};

/// Lognormal parameters of a LengthDist of kind Lognormal (validated).
struct LognormalParams {
  double mu = 0, sigma = 0;
};
LognormalParams lognormalParams(const LengthDist& d, const std::string& what = "length");

/// Load the numbers of an empirical distribution: CSV (column by header name)
/// or JSON lines (field name); format from the extension (.jsonl/.ndjson/.json
/// = JSON lines) or, failing that, from the first non-blank character ('{').
/// Non-numeric or negative value -> InputError "FILE:LINE: ...".
std::vector<double> loadEmpiricalValues(const std::string& path, const std::string& column);

/// Helpers to build LengthDist values in code (presets, tests).
LengthDist constantDist(double value);
LengthDist uniformDist(double min, double max);
LengthDist lognormalDist(double median, double p90);
LengthDist lognormalMuSigma(double mu, double sigma);
LengthDist empiricalDist(const std::string& path, const std::string& column);
LengthDist mixtureDist(std::vector<LengthDist> parts, std::vector<double> weights);
LengthDist clipped(LengthDist d, std::optional<double> min, std::optional<double> max);

}  // namespace sl
