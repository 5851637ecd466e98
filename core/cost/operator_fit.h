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

// ------------------------------------------------- MoE expert GEMM (issue 47)
//
// One routed expert's FFN GEMMs (gate, up, down: 3·hidden·intermediate
// parameters) on the `tokens` tokens routed to it, one GPU:
//   max(2·3·h·f·N / (F·η_c), 3·h·f·dtype / (BW·η_w))
// the per-expert form of the cost model's expert term (docs/cost-model.md
// "Cost of a MoE layer"). Data: resources/profiles/h100-mixtral-expert-gemm.csv.

/// The three GEMMs of one expert at one token count, summed (a point of the fit).
struct ExpertGemmPoint {
  int tp = 1;         ///< the profile's tp column (the expert itself is not split)
  double tokens = 0;  ///< tokens routed to the expert
  int hidden = 0, intermediate = 0;
  double seconds = 0;  ///< w1 + w2 + w3 kernel time
};

/// Reads the CSV (header: gemm,tokens,tp,hidden,intermediate,latency_ns; '#'
/// lines are comments) and sums expert.w1, expert.w2, expert.w3 of each
/// (tp, tokens). InputError "NAME:LINE: column: ..." on a bad row, or naming
/// the (tp, tokens) that lacks one of the three GEMMs or repeats one.
std::vector<ExpertGemmPoint> parseExpertGemmCsv(std::istream& in, const std::string& name);
std::vector<ExpertGemmPoint> readExpertGemmCsv(const std::string& path);

/// Roofline work of a point at η = 1 (seconds): compute xc, weight read xw.
OperatorWork expertGemmWork(const GpuSpec& gpu, const ExpertGemmPoint& p, double dtypeBytes = 2);
/// max(xc/η_c, xw/η_w).
double predictExpertGemm(const GpuSpec& gpu, double eta_c, double eta_w, const ExpertGemmPoint& p);

struct ExpertGemmFit {
  double eta_c = 0, eta_w = 0;
  std::int64_t points = 0, computePoints = 0;  ///< points fitted, and those on the compute branch
  int iterations = 0;
  bool converged = false;
};
/// Fits (1/η_c, 1/η_w) by relative (1/seconds-weighted) least squares with
/// no intercept, alternating each point's compute/weight branch assignment
/// until it no longer changes. InputError when `points` is empty or one
/// branch gets no point (then its η is not determined by the data).
ExpertGemmFit fitExpertGemm(const GpuSpec& gpu, const std::vector<ExpertGemmPoint>& points);

/// |pred − meas| / meas × 100 over the points: median, mean, max.
struct ExpertGemmError {
  std::int64_t points = 0;
  double medianAbsPct = 0, meanAbsPct = 0, maxAbsPct = 0;
};
ExpertGemmError expertGemmError(const GpuSpec& gpu, double eta_c, double eta_w,
                                const std::vector<ExpertGemmPoint>& points);

/// The expert GEMM fit on H100 (fitExpertGemm on every other tp-1 token
/// count of resources/profiles/h100-mixtral-expert-gemm.csv): η_c 0.7015
/// (the dense 0.70 stands), η_w 0.799.
constexpr double kH100ExpertGemmEtaW = 0.799;
/// Hopper GPU presets (h100-*, h800, h20, h200): the kernels of the H100 fit.
bool isHopperPreset(const GpuSpec& gpu);
/// Weight-read efficiency of the routed experts' GEMMs (docs/cost-model.md
/// "Cost of a MoE layer"): kH100ExpertGemmEtaW on a Hopper preset while the
/// run's η_w is the built-in default (no profile, engine preset or
/// cluster.cost gave a better one); otherwise the run's η_w.
double expertWeightReadEta(const GpuSpec& gpu, const CostCoefficients& c);

}  // namespace sl
