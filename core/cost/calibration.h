#pragma once
// Fitting the cost model's coefficients to measured iteration times
// (20-cost-model.md "Calibration"; docs/calibration.md explains the method).
//
//   t = t_step + t_layer·layers + t_seq·#seqs
//       + max(u_c·X_c, u_w·X_w) + u_a·X_a + h·u_kv·X_kv + comm(α_hop)
//   h = min(h_max, 1 + κ·CV),   u_x = 1/η_x
//
// is linear in (t_step, t_layer, t_seq, u_c, u_a, u_w, u_kv, q = κ·u_kv, α_hop)
// once each row's max and min are assigned to a branch. The fit alternates
// branch assignment and a relative (1/y-weighted) non-negative least-squares
// solve (Lawson–Hanson on Eigen matrices) until the assignment is stable.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "cost/cost_model.h"
#include "cost/presets.h"

namespace sl {

/// One measured iteration (a row of the measurements CSV).
struct Measurement {
  int tp = 1;
  double prefill_tokens = 0;  ///< Σ n_j: new prompt tokens computed
  int prefill_seqs = 0;       ///< number of prefill chunks
  double cached_tokens = 0;   ///< Σ c_j: context already cached before the chunks
  int decode_seqs = 0;
  double decode_context_sum = 0;  ///< Σ L_i
  double decode_context_cv = 0;   ///< population std / mean of the L_i
  double seconds = 0;             ///< measured iteration time
  std::int64_t line = 0;          ///< CSV line (0 when not read from a file)

  /// The BatchShape the cost model sees. The CSV carries totals only, so the
  /// prefill chunks are taken as equal (n̄ = Σn/k on c̄ = Σc/k cached each:
  /// Σ n_j(c_j + n_j/2) = Σn·(Σc + Σn/2)/k) and Σ L_i² = k·mean²·(1 + CV²).
  BatchShape shape() const;
};

/// Reads the CSV (60-cli-formats.md): a header naming at least tp,
/// prefill_tokens, prefill_seqs, cached_tokens, decode_seqs,
/// decode_context_sum, decode_context_cv, seconds (any order; extra columns
/// ignored). Malformed rows throw InputError "NAME:LINE: ...".
std::vector<Measurement> parseMeasurementsCsv(std::istream& in, const std::string& name);
std::vector<Measurement> readMeasurementsCsv(const std::string& path);
/// The header line and one row, in the column order above ("%.9g" numbers).
std::string measurementsCsvHeader();
std::string measurementCsvRow(const Measurement& m);

struct CalibrationOptions {
  /// Starting point of the branch assignment; also supplies h_max and the
  /// activation reserve (not fitted), the t_step : t_layer split (see
  /// docs/calibration.md: with one model the two are not separately
  /// identifiable), and every term the data does not excite.
  CostCoefficients base{};
  int maxIterations = 20;  ///< branch-assignment rounds
  /// The all-reduce model of the rows' engine. Only `ring` has a fitted
  /// term (α_hop); vllm / nccl take the measured-collective time as known.
  AllReduceMode allreduce = AllReduceMode::Vllm;
};

/// One fitted term, for reports.
struct FittedTerm {
  std::string key;         ///< coefficient key: "t_step_us", "eta_c", "kappa", ...
  std::string unknown;     ///< what the least squares solved for: "t_step", "1/eta_c", "kappa*(1/eta_kv)", ...
  double value = 0;        ///< the coefficient as written to the profile
  double rawValue = 0;     ///< the least-squares unknown (seconds, or 1/η, or κ/η_kv)
  bool identified = true;  ///< false: no row excites it; `value` kept from the base
  /// Mean share of this term in the measured time over the rows (0..1).
  double meanShare = 0;
};

struct CalibrationReport {
  std::vector<FittedTerm> terms;
  /// t_step + t_layer·layers as fitted (µs): the identifiable fixed overhead.
  double fixedOverheadUs = 0;
  double mape = 0;    ///< mean |predicted − measured| / measured over the rows
  double maxApe = 0;  ///< the worst row's relative error
  std::int64_t rows = 0;
  int iterations = 0;                 ///< branch-assignment rounds used
  bool converged = false;             ///< the assignment stopped changing
  std::int64_t computeBoundRows = 0;  ///< rows on the compute branch of t_linear
  std::int64_t cappedRows = 0;        ///< rows whose h hit h_max
  std::vector<std::string> notes;     ///< e.g. terms kept from the base
  nlohmann::json toJson() const;
};

/// Fits the coefficients. `gpu`/`model` give the roofline constants; each
/// row's tp its parallelism. Throws InputError when there are no rows or a
/// row describes an empty batch. The profile's gpu/model are the preset ids.
CostProfile calibrateCostModel(const GpuSpec& gpu, const ModelSpec& model, const std::vector<Measurement>& rows,
                               const CalibrationOptions& opt = {}, CalibrationReport* report = nullptr);

/// Predicted seconds of one row under `c` (CostModel::iterationSeconds).
double predictMeasurement(const GpuSpec& gpu, const ModelSpec& model, const CostCoefficients& c, const Measurement& m,
                          AllReduceMode allreduce = AllReduceMode::Vllm);
/// Mean absolute percentage error (as a fraction) of `c` on `rows`.
double costModelMape(const GpuSpec& gpu, const ModelSpec& model, const CostCoefficients& c,
                     const std::vector<Measurement>& rows, AllReduceMode allreduce = AllReduceMode::Vllm);

/// Lawson–Hanson non-negative least squares: argmin ||A x − b||, x ≥ 0.
/// Columns are scaled to unit norm internally. `iterations` (if given)
/// receives the number of outer iterations used.
Eigen::VectorXd nnls(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, int* iterations = nullptr);

/// Synthetic measurements for tests and samples/calibration/: `count` varied
/// batches (prefill-only, decode-only and mixed; tp cycling through `tps`)
/// timed with `truth` (all-reduce model `allreduce`) and multiplied by (1 + U(−noise, +noise)) from
/// sl::Rng(seed). Deterministic for a given seed.
std::vector<Measurement> synthesizeMeasurements(const GpuSpec& gpu, const ModelSpec& model,
                                                const CostCoefficients& truth, int count, std::uint64_t seed,
                                                double noise = 0.01, const std::vector<int>& tps = {1, 2, 4},
                                                AllReduceMode allreduce = AllReduceMode::Vllm);

}  // namespace sl
