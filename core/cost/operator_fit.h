#pragma once
// Per-operator check and refit of the cost model's efficiency factors and
// per-layer overhead (issue 23 item 3; docs/calibration.md "Per-operator
// profiles"). Input: measured GPU kernel times of ONE transformer layer on
// one GPU of a tp group, grouped by what ServeLab's roofline term predicts:
//
//   linear        the layer's GEMMs (QKV, O, gate+up, down) for `tokens` tokens:
//                 max(2·P_l·N / (tp·F·η_c), P_l·dtype / (tp·BW·η_w))
//   prefill_attn  attention of `seqs` prefill chunks, `tokens` new tokens on
//                 `context` cached ones in all (split evenly):
//                 4·q_heads·head_dim·Σ n_j(c_j + n_j/2) / (tp·F·η_a)
//   decode_attn   one new token for each of `seqs` sequences, `context` = Σ L_i:
//                 2·kv_heads·head_dim·dtype·Σ L_i / (tp·BW·η_kv)
//   layer_misc    the layer's small kernels (norms, rope, activation,
//                 residual add) at a few tokens: t_layer
//
// P_l = hidden·(q_heads + 2·kv_heads)·head_dim + q_heads·head_dim·hidden
//       + 3·hidden·intermediate (the same count as ModelSpec::linearParamsPerLayer).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/cost_model.h"
#include "cost/presets.h"

namespace sl {

enum class OperatorGroup { Linear, PrefillAttn, DecodeAttn, LayerMisc };
/// "linear", "prefill_attn", "decode_attn", "layer_misc".
const char* operatorGroupName(OperatorGroup g);

/// One profiled operator group at one shape (a row of the operator CSV).
struct OperatorRow {
  std::string source;  ///< where the number comes from (repo:path)
  std::string model;   ///< model label (free text)
  OperatorGroup group = OperatorGroup::Linear;
  int tp = 1;
  double tokens = 0;   ///< linear/layer_misc: N; prefill_attn: Σ n_j; decode_attn: #seqs
  int seqs = 0;        ///< prefill/decode sequences (0 for linear/layer_misc)
  double context = 0;  ///< prefill: Σ c_j cached before the chunks; decode: Σ L_i
  int hidden = 0, q_heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, dtype_bytes = 2;
  double seconds = 0;  ///< measured kernel time of the group, one layer, one GPU
  std::int64_t line = 0;

  double linearParamsPerLayer() const;
};

/// Reads the CSV (header: source,model,group,tp,tokens,seqs,context,hidden,
/// q_heads,kv_heads,head_dim,intermediate,dtype_bytes,seconds; any order,
/// extra columns ignored; lines starting with '#' are comments). Bad rows
/// throw InputError "NAME:LINE: column: ...".
std::vector<OperatorRow> parseOperatorCsv(std::istream& in, const std::string& name);
std::vector<OperatorRow> readOperatorCsv(const std::string& path);

/// The roofline work of a row at η = 1 (seconds): exactly one of the four
/// is non-zero except for linear rows (compute and weight read).
struct OperatorWork {
  double xc = 0, xw = 0, xa = 0, xkv = 0;
};
OperatorWork operatorWork(const GpuSpec& gpu, const OperatorRow& r);

/// ServeLab's prediction of the row's work under `c` (the table above).
double predictOperator(const GpuSpec& gpu, const CostCoefficients& c, const OperatorRow& r);

/// Relative errors of one group (or sub-group).
struct OperatorGroupError {
  std::string name;  ///< group name; "linear/weight" and "linear/compute" split the linear rows by branch
  std::int64_t rows = 0;
  double medianAbsPct = 0;  ///< median |pred − meas| / meas × 100
  double meanAbsPct = 0;
  double medianSignedPct = 0;  ///< median (pred − meas) / meas × 100: < 0 = ServeLab too fast
};

/// Per-group errors of `predict(row)` against the rows, in group order, with
/// the linear rows also split by the branch `c` puts them on.
std::vector<OperatorGroupError> compareOperators(const GpuSpec& gpu, const CostCoefficients& c,
                                                 const std::vector<OperatorRow>& rows);

/// What the per-operator fit found.
struct OperatorFitReport {
  CostCoefficients coefficients;  ///< the base with η_c, η_w, η_a, η_kv, t_layer refitted
  /// Fixed kernel time per layer of each group (µs), the NNLS intercepts;
  /// t_layer_us = linear + layer_misc + decode_attn ones.
  double linearFixedUs = 0, miscFixedUs = 0, prefillFixedUs = 0, decodeFixedUs = 0;
  /// Errors of the fitted per-layer model (each group's term + its intercept).
  std::vector<OperatorGroupError> fitErrors;
  std::int64_t rows = 0;
  int iterations = 0;
  bool converged = false;
  std::vector<std::string> notes;
  nlohmann::json toJson() const;
};

/// Fits (1/η_c, 1/η_w, 1/η_a, 1/η_kv) and one intercept per group by
/// relative (1/seconds-weighted) non-negative least squares, alternating the
/// linear rows' compute/weight branch assignment as calibrateCostModel does.
/// Only rows of `groups` take part (empty = all groups). t_layer_us becomes
/// the sum of the linear and layer_misc intercepts plus one attention
/// kernel's (decode_attn's, else prefill_attn's): the fixed kernel time of
/// one layer of a step. t_step_us, t_seq_us and the other coefficients stay
/// those of `base`; so does every term without fitted rows (noted).
/// InputError when no row is left.
OperatorFitReport fitOperators(const GpuSpec& gpu, const std::vector<OperatorRow>& rows,
                               const CostCoefficients& base = {}, const std::vector<OperatorGroup>& groups = {});
/// "linear,prefill_attn" → groups; InputError naming `where` on an unknown name.
std::vector<OperatorGroup> parseOperatorGroups(const std::string& list, const std::string& where);

/// [{group, rows, median_abs_pct, mean_abs_pct, median_signed_pct}, ...]
nlohmann::json operatorErrorsJson(const std::vector<OperatorGroupError>& v);

/// Per-group relative errors of arbitrary predictions (same order as rows).
std::vector<OperatorGroupError> operatorErrors(const std::vector<OperatorRow>& rows,
                                               const std::vector<double>& predicted,
                                               const std::vector<char>& computeBranch);

}  // namespace sl
