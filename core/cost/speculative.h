#pragma once
// Speculative decoding's cost (issue 48 item 1; docs/cost-model.md
// "Speculative decoding"): each decode step drafts k tokens per sequence,
// then the target verifies k + 1 tokens per sequence in one pass and keeps
// 1 + (accepted) of them.
//
//  - draft:  a separate draft model (its own preset) runs k decode steps on
//            the instance's GPUs;
//  - eagle:  an EAGLE-style head: one decoder layer of the target's width
//            plus the LM head, run once per draft token;
//  - mtp:    DeepSeek-V3's multi-token-prediction module: one more target
//            layer (MoE for an MoE target) plus the shared LM head, once per
//            draft token;
//  - ngram:  prompt lookup on the CPU: a fixed time per sequence and step.
//
// The verify pass is the target's decode step with k extra tokens per
// sequence in its GEMMs (BatchShape::verify_tokens); the KV is read once per
// sequence (k + 1 queries against the same keys), so decode attention does
// not grow. Acceptance is per position: α_i = P(draft token i accepted |
// tokens < i accepted).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cost/cost_model.h"

namespace sl {

enum class SpecMethod { Draft, Eagle, Mtp, Ngram };
const char* specMethodName(SpecMethod m);  ///< "draft", "eagle", "mtp", "ngram"
/// InputError naming `field` for anything but the four names.
SpecMethod parseSpecMethod(std::string_view s, std::string_view field);

struct SpeculativeSpec {
  SpecMethod method = SpecMethod::Eagle;
  int k = 3;                    ///< draft tokens per step, ≥ 1
  std::string draft_model;      ///< draft: the draft model's preset id
  double ngram_us_per_seq = 5;  ///< ngram: CPU lookup per sequence and step
};

/// Expected tokens one step advances a sequence: 1 + Σ_{i=1..k} Π_{j≤i} α_j,
/// with α_j = alpha[j−1] (the last value repeats when alpha is shorter than k).
double expectedTokensPerStep(const std::vector<double>& alpha, int k);
/// The constant per-position acceptance α with 1 + α + … + α^k = τ, the mean
/// acceptance length papers report at draft length k (τ in [1, k + 1]).
double alphaFromAcceptanceLength(double tau, int k);

/// An acceptance preset of resources/speculative/ (docs/cost-model.md
/// "Speculative decoding", each value cited in its file): per-position
/// acceptance α_i by domain ("default", "chat", "code", "math", …).
struct AcceptancePreset {
  std::string id, method, target, source;
  /// (domain, α per position); a domain given as a mean acceptance length τ
  /// at draft length K holds the constant α with 1 + α + … + α^K = τ.
  std::vector<std::pair<std::string, std::vector<double>>> domains;
  /// α of `domain`, else of "default" (nullptr when neither is given).
  const std::vector<double>* alpha(std::string_view domain) const;
};
/// Every embedded preset, in file order.
const std::vector<AcceptancePreset>& acceptancePresets();
/// The preset named `id`; InputError naming `field` (with the known ids) otherwise.
const AcceptancePreset& acceptancePreset(std::string_view id, std::string_view field);
/// A method's default: the preset of that method measured on `model`, else
/// the first of that method (nullptr when the method has none).
const AcceptancePreset* defaultAcceptancePreset(SpecMethod m, std::string_view model);
/// `alpha` stretched to k positions (the last value repeats).
std::vector<double> alphaForK(const std::vector<double>& alpha, int k);

/// The draft side's cost on a target instance (its tp GPUs, its precision
/// and coefficients). InputError naming `where` + ".k", ".draft_model",
/// ".method" for k < 1, an unknown or missing draft model, a draft model at
/// least as large as the target, or mtp on a target that is not an MoE with
/// DeepSeek's MTP (any MoE target is accepted: its layer shape is used).
class SpeculativeCost {
 public:
  SpeculativeCost(const CostModel& target, const SpeculativeSpec& s, std::string_view where = "cluster.speculative");
  const SpeculativeSpec& spec() const { return s_; }
  /// Seconds to draft k tokens for `seqs` decode sequences whose contexts sum
  /// to ctxSum: draft model k steps (without the per-step CPU overhead
  /// t_step, which the target's step pays once); eagle / mtp k passes of
  /// the head (its linear, attention over its own one-layer KV and t_layer);
  /// ngram seqs × ngram_us_per_seq.
  double draftSeconds(int seqs, double ctxSum) const { return draftSeconds(seqs, ctxSum, s_.k); }
  /// The same for a step drafting `k` tokens (dynamic k).
  double draftSeconds(int seqs, double ctxSum, int k) const;
  /// The target's verify step for `b` (its decode sequences each verifying
  /// k extra tokens): b with verify_tokens += k · decode_seqs.
  BatchShape verifyShape(BatchShape b) const { return verifyShape(b, s_.k); }
  BatchShape verifyShape(BatchShape b, int k) const;
  /// Weights the draft side adds to every GPU (bytes): the draft model's
  /// share, the head's layer and LM head (eagle), the MTP layer (mtp); 0 for ngram.
  double draftWeightBytesPerGpu() const;
  /// KV bytes per token the draft side adds per GPU (draft model: its own KV;
  /// eagle / mtp: one layer's).
  double draftKvBytesPerTokenPerGpu() const;

 private:
  const CostModel& target_;
  SpeculativeSpec s_;
  std::unique_ptr<CostModel> draft_;  // draft model, or the one-layer head
};

}  // namespace sl
