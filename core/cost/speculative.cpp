#include "cost/speculative.h"

#include <algorithm>
#include <cmath>

#include "cost/presets.h"
#include "util/error.h"

namespace sl {

const char* specMethodName(SpecMethod m) {
  switch (m) {
    case SpecMethod::Draft:
      return "draft";
    case SpecMethod::Eagle:
      return "eagle";
    case SpecMethod::Mtp:
      return "mtp";
    case SpecMethod::Ngram:
      return "ngram";
  }
  return "eagle";
}

SpecMethod parseSpecMethod(std::string_view s, std::string_view field) {
  for (SpecMethod m : {SpecMethod::Draft, SpecMethod::Eagle, SpecMethod::Mtp, SpecMethod::Ngram})
    if (s == specMethodName(m)) return m;
  throw InputError(std::string(field) + ": must be one of 'draft', 'eagle', 'mtp', 'ngram' (got '" + std::string(s) +
                   "')");
}

double expectedTokensPerStep(const std::vector<double>& alpha, int k) {
  double tokens = 1, run = 1;
  for (int i = 0; i < k && !alpha.empty(); ++i) {
    run *= alpha[std::min<std::size_t>(static_cast<std::size_t>(i), alpha.size() - 1)];
    tokens += run;
  }
  return tokens;
}

double alphaFromAcceptanceLength(double tau, int k) {
  if (k < 1 || !(tau > 1)) return 0.0;
  if (tau >= k + 1) return 1.0;
  // 1 + α + … + α^k rises with α: bisect.
  double lo = 0, hi = 1;
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    double sum = 1, p = 1;
    for (int i = 0; i < k; ++i) sum += (p *= mid);
    (sum < tau ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

namespace {

// The one-layer head an EAGLE draft or an MTP module is: one decoder layer of
// the target's shape (dense for eagle, the target's MoE layer for mtp) and
// the LM head (tied here so the vocab matrix is counted once: the head's
// embedding is the target's).
ModelSpec oneLayerHead(const ModelSpec& t, SpecMethod m) {
  ModelSpec h = t;
  h.id = t.id + "-" + specMethodName(m) + "-head";
  h.name = t.name + " " + specMethodName(m) + " head";
  h.layers = 1;
  h.tied_embeddings = true;
  if (m == SpecMethod::Eagle) {  // a dense layer of the target's dense width
    h.experts = h.experts_per_token = h.shared_experts = h.expert_intermediate = 0;
    h.dense_layers = 0;
    if (h.intermediate <= 0) h.intermediate = 4 * h.hidden;
  } else {
    h.dense_layers = 0;
    h.moe_layer_step = 1;
  }
  return h;
}

}  // namespace

SpeculativeCost::SpeculativeCost(const CostModel& target, const SpeculativeSpec& s, std::string_view where)
    : target_(target), s_(s) {
  const std::string w(where);
  if (s.k < 1) throw InputError(w + ".k: must be >= 1 (got " + std::to_string(s.k) + ")");
  const ModelSpec& tm = target.model();
  switch (s.method) {
    case SpecMethod::Draft: {
      if (s.draft_model.empty()) throw InputError(w + ".draft_model: needed with method \"draft\" (a model preset id)");
      const ModelSpec& dm = PresetRegistry::builtin().model(s.draft_model);
      if (dm.paramCount() >= tm.paramCount())
        throw InputError(w + ".draft_model: " + dm.name + " (" + std::to_string(dm.paramCount() / 1000000) +
                         " M parameters) is not smaller than the target " + tm.name + " (" +
                         std::to_string(tm.paramCount() / 1000000) + " M)");
      if (dm.vocab != tm.vocab)
        throw InputError(w + ".draft_model: " + dm.name + " has a vocabulary of " + std::to_string(dm.vocab) +
                         " tokens, the target " + tm.name + " " + std::to_string(tm.vocab) +
                         ": a draft model must share the target's tokenizer");
      draft_ = std::make_unique<CostModel>(target.gpu(), dm, target.tp(), target.coefficients(), target.precision(),
                                           target.allReduceMode());
      break;
    }
    case SpecMethod::Mtp:
      if (!tm.isMoe())
        throw InputError(w + ".method: mtp needs a model with multi-token-prediction modules (DeepSeek-V3/R1); " +
                         tm.name + " has none: use eagle, draft or ngram");
      [[fallthrough]];
    case SpecMethod::Eagle: {
      draft_ = std::make_unique<CostModel>(target.gpu(), oneLayerHead(tm, s.method), target.tp(), target.coefficients(),
                                           target.precision(), target.allReduceMode());
      if (s.method == SpecMethod::Mtp) draft_->setMoe(target.moe());
      break;
    }
    case SpecMethod::Ngram:
      if (!(s.ngram_us_per_seq >= 0)) throw InputError(w + ".ngram_us_per_seq: must be >= 0");
      break;
  }
}

double SpeculativeCost::draftSeconds(int seqs, double ctxSum) const {
  if (seqs <= 0) return 0.0;
  if (s_.method == SpecMethod::Ngram) return seqs * s_.ngram_us_per_seq * 1e-6;
  const double stepCpu = draft_->coefficients().t_step_us * 1e-6;
  double total = 0;
  for (int j = 0; j < s_.k; ++j) {  // draft token j: every sequence one token further
    BatchShape b;
    b.decode_seqs = seqs;
    b.decode_ctx_sum = ctxSum + static_cast<double>(j) * seqs;
    const double mean = b.decode_ctx_sum / seqs;
    b.decode_ctx_sumsq = mean * mean * seqs;  // the heterogeneity of the target's step is not redrawn
    const CostBreakdown r = draft_->breakdown(b);
    double t = r.total_s - stepCpu;
    if (s_.method != SpecMethod::Draft) t -= draft_->coefficients().t_seq_us * 1e-6 * seqs;  // inside the target's step
    total += std::max(0.0, t);
  }
  return total;
}

BatchShape SpeculativeCost::verifyShape(BatchShape b) const {
  b.verify_tokens += static_cast<double>(s_.k) * b.decode_seqs;
  return b;
}

double SpeculativeCost::draftWeightBytesPerGpu() const {
  if (!draft_) return 0.0;
  if (s_.method == SpecMethod::Draft) return draft_->weightBytesPerGpu();
  // The head's layer and LM head; the LM head is the target's own for mtp
  // (shared), so only its layer adds memory there.
  const ModelSpec& h = draft_->model();
  const double lmHead = static_cast<double>(h.vocab) * h.hidden * h.dtype_bytes / target_.tp();
  return s_.method == SpecMethod::Mtp ? draft_->weightBytesPerGpu() - lmHead : draft_->weightBytesPerGpu();
}

double SpeculativeCost::draftKvBytesPerTokenPerGpu() const {
  return draft_ ? draft_->kvBytesPerTokenPerGpu() : 0.0;
}

}  // namespace sl
