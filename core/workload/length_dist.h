#pragma once
// Token-length distributions (60-cli-formats.md "Workloads"): constant,
// uniform, lognormal (median & p90, or mu & sigma), exponential (mean),
// empirical (a CSV column or a JSON-lines field, loaded once), and weighted
// mixtures; each may clip with clipMin / clipMax. The same distributions
// give closed-loop think times in seconds (sampleReal). Validation happens at construction and throws
// sl::InputError naming the field (`what` given by the caller).
#include <cstddef>
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

/// Built-in quantile tables (resources/workloads/<id>.json, embedded at build
/// time; docs/workloads.md). An empirical LengthDist whose path is
/// "builtin:<id>" samples the table instead of loading a file; its column
/// is one of
///   input_tokens    inverse-CDF draw of the input-token quantiles
///   output_tokens   inverse-CDF draw of the output-token quantiles
///   reasoning_tokens, answer_tokens
///                   one joint split draw (see splitOutput) and its part;
///                   the synthetic workload draws the two together when
///                   both fields name the same table (joint split).
/// Inverse CDF: u ~ U[0,1); the value is piecewise linear in u between the
/// table's quantile levels, with the curve extended to level 0 at
/// tail_bounds.min and to level 1 at tail_bounds.max.
inline constexpr const char* kBuiltinTablePrefix = "builtin:";

namespace workloaddetail {
/// Text of resources/workloads/<id>.json, or nullptr (generated at build
/// time from core/workload/embedded_workloads.cpp.in).
const char* embeddedWorkloadTable(const std::string& id);
}  // namespace workloaddetail

struct QuantileCurve {
  std::vector<double> levels;  ///< 0, the table's levels..., 1 (strictly increasing)
  std::vector<double> values;  ///< non-decreasing, same size
  double mean = 0;             ///< the table's stated mean
  /// Value at CDF level u (clamped to [0, 1]), linear between levels.
  double at(double u) const;
};

struct WorkloadQuantiles {
  std::string id;
  QuantileCurve input, output, reasoningFraction;
};

/// The embedded table `id`; InputError if there is none or it is malformed.
/// Parsed once, then cached.
const WorkloadQuantiles& builtinWorkloadQuantiles(const std::string& id);

/// One output draw split into reasoning and answer: output = round(output
/// curve at u1) >= 1, fraction = fraction curve at u2 (independent of the
/// output: the table gives marginals only), reasoning = round(fraction x
/// output), answer = output - reasoning; if that leaves answer < 1, answer
/// = 1 and reasoning = output - 1. Two uniform01 draws from `rng`.
struct OutputSplit {
  std::int64_t reasoning = 0, answer = 1;
};
OutputSplit splitOutput(const WorkloadQuantiles& t, Rng& rng);

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

  /// Continuous draw for quantities that are not token counts (closed-loop
  /// think times in seconds): not rounded, uniform over the real [min, max]
  /// (sample() draws whole numbers), clipMin / clipMax applied as given
  /// (mixture: the part's clip, then the mixture's). Never negative.
  double sampleReal(Rng& rng) const;

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

  /// Joint split: true when this sampler is a built-in table's
  /// reasoning_tokens and `answer` the same table's answer_tokens, neither
  /// clipped. Then sampleSplit() gives both from one draw.
  bool jointSplitWith(const LengthSampler& answer) const;
  OutputSplit sampleSplit(Rng& rng) const;

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
/// The values of the last few files parsed are kept with their bytes and
/// reused for the same absolute path, column and bytes (files up to
/// detail::kEmpiricalKeptMaxBytes; larger ones are parsed at every call).
std::vector<double> loadEmpiricalValues(const std::string& path, const std::string& column);
namespace detail {
/// loadEmpiricalValues keeps this many files, each at most this size: with
/// their values the cache stays well under 0.2 GB.
inline constexpr std::size_t kEmpiricalKept = 4;
inline constexpr std::size_t kEmpiricalKeptMaxBytes = std::size_t{16} << 20;
/// How many times loadEmpiricalValues has parsed a file (tests).
std::int64_t empiricalParses();
}  // namespace detail

/// Helpers to build LengthDist values in code (presets, tests).
LengthDist constantDist(double value);
LengthDist uniformDist(double min, double max);
LengthDist lognormalDist(double median, double p90);
LengthDist lognormalMuSigma(double mu, double sigma);
LengthDist exponentialDist(double mean);
LengthDist empiricalDist(const std::string& path, const std::string& column);
LengthDist mixtureDist(std::vector<LengthDist> parts, std::vector<double> weights);
LengthDist clipped(LengthDist d, std::optional<double> min, std::optional<double> max);

}  // namespace sl
