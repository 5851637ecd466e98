#include "cost/speculative.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "cost/embedded_presets.h"
#include "cost/presets.h"
#include "util/error.h"
#include "util/strings.h"

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

const std::vector<double>* AcceptancePreset::alpha(std::string_view domain) const {
  for (const auto& [name, a] : domains)
    if (name == domain) return &a;
  for (const auto& [name, a] : domains)
    if (name == "default") return &a;
  return nullptr;
}

namespace {
std::vector<std::pair<std::string, std::string>>& methodDefaults() {  // (method, preset id), from the files
  static std::vector<std::pair<std::string, std::string>> d;
  return d;
}
}  // namespace

const std::vector<AcceptancePreset>& acceptancePresets() {
  static const std::vector<AcceptancePreset> presets = [] {
    std::vector<AcceptancePreset> out;
    for (const auto& file : costdetail::embeddedSpeculativeFiles()) {
      const std::string where = std::string("resources/") + file.path;
      try {
        const nlohmann::json j = nlohmann::json::parse(file.text);
        for (const auto& p : j.at("presets")) {
          AcceptancePreset a;
          a.id = p.at("id").get<std::string>();
          a.method = p.at("method").get<std::string>();
          a.target = p.value("target", std::string());
          a.source = p.value("source", std::string());
          for (const auto& [name, d] : p.at("domains").items()) {
            std::vector<double> alpha;
            if (d.contains("alpha")) {
              alpha = d.at("alpha").get<std::vector<double>>();
            } else {
              // A mean length measured at an unstated draft length cannot
              // give a per-position α: the domain is left out.
              if (d.at("at_k").is_null()) continue;
              const double tau = d.at("acceptance_length").get<double>();
              const int k = d.at("at_k").get<int>();
              alpha.push_back(alphaFromAcceptanceLength(tau, k));
            }
            if (alpha.empty()) throw std::runtime_error(a.id + "." + name + ": no acceptance");
            for (const double x : alpha)
              if (!(x >= 0 && x <= 1)) throw std::runtime_error(a.id + "." + name + ": acceptance outside [0, 1]");
            a.domains.emplace_back(name, std::move(alpha));
          }
          if (!a.domains.empty()) out.push_back(std::move(a));
        }
        if (j.contains("method_defaults"))
          for (const auto& [m, id] : j.at("method_defaults").items())
            methodDefaults().emplace_back(m, id.get<std::string>());
      } catch (const std::exception& e) {  // a build-time resource: a broken file is a bug
        throw std::logic_error(where + ": " + e.what());
      }
    }
    return out;
  }();
  return presets;
}

const AcceptancePreset& acceptancePreset(std::string_view id, std::string_view field) {
  std::vector<std::string> ids;
  for (const AcceptancePreset& p : acceptancePresets()) {
    if (p.id == id) return p;
    ids.push_back(p.id);
  }
  std::string msg = std::string(field) + ": unknown acceptance preset '" + std::string(id) + "'";
  if (auto near = didYouMean(std::string(id), ids)) msg += " (did you mean '" + *near + "'?)";
  msg += "; known:";
  for (const std::string& k : ids) msg += " " + k;
  throw InputError(msg);
}

const AcceptancePreset* defaultAcceptancePreset(SpecMethod m, std::string_view model) {
  const std::vector<AcceptancePreset>& all = acceptancePresets();
  const std::string method = specMethodName(m);
  for (const AcceptancePreset& p : all)  // measured on this model (the file's order: chain before tree)
    if (p.method == method && p.target == model) return &p;
  for (const auto& [dm, id] : methodDefaults())
    if (dm == method)
      for (const AcceptancePreset& p : all)
        if (p.id == id) return &p;
  for (const AcceptancePreset& p : all)
    if (p.method == method) return &p;
  return nullptr;
}

std::vector<double> alphaForK(const std::vector<double>& alpha, int k) {
  std::vector<double> out;
  for (int i = 0; i < k && !alpha.empty(); ++i)
    out.push_back(alpha[std::min<std::size_t>(static_cast<std::size_t>(i), alpha.size() - 1)]);
  return out;
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

double SpeculativeCost::draftSeconds(int seqs, double ctxSum, int k) const {
  if (seqs <= 0 || k <= 0) return 0.0;
  if (s_.method == SpecMethod::Ngram) return seqs * s_.ngram_us_per_seq * 1e-6;
  const double stepCpu = draft_->coefficients().t_step_us * 1e-6;
  double total = 0;
  for (int j = 0; j < k; ++j) {  // draft token j: every sequence one token further
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

BatchShape SpeculativeCost::verifyShape(BatchShape b, int k) const {
  b.verify_tokens += static_cast<double>(k) * b.decode_seqs;
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
