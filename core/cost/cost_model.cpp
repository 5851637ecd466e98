#include "cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

#include "cost/operator_fit.h"
#include "cost/suggest.h"
#include "util/error.h"

namespace sl {

// ------------------------------------------------------------- coefficients

namespace {

struct CoefField {
  const char* key;
  double CostCoefficients::*ptr;
  enum Rule { Positive, NonNegative, AtLeastOne } rule;
  // "hetero" is the one string-valued key: it has no CoefField (ptr unused).
};

const CoefField kFields[] = {
    {"eta_c", &CostCoefficients::eta_c, CoefField::Positive},
    {"eta_a", &CostCoefficients::eta_a, CoefField::Positive},
    {"eta_w", &CostCoefficients::eta_w, CoefField::Positive},
    {"eta_kv", &CostCoefficients::eta_kv, CoefField::Positive},
    {"t_step_us", &CostCoefficients::t_step_us, CoefField::NonNegative},
    {"t_layer_us", &CostCoefficients::t_layer_us, CoefField::NonNegative},
    {"t_seq_us", &CostCoefficients::t_seq_us, CoefField::NonNegative},
    {"kappa", &CostCoefficients::kappa, CoefField::NonNegative},
    {"h_max", &CostCoefficients::h_max, CoefField::AtLeastOne},
    {"attn_ctas_per_sm", &CostCoefficients::attn_ctas_per_sm, CoefField::Positive},
    {"alpha_hop_us", &CostCoefficients::alpha_hop_us, CoefField::NonNegative},
    {"activation_reserve_gib", &CostCoefficients::activation_reserve_gib, CoefField::NonNegative},
    {"activation_reserve_per_vocab_kib", &CostCoefficients::activation_reserve_per_vocab_kib,
     CoefField::NonNegative},
};

constexpr const char* kHeteroKey = "hetero";

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

const std::vector<std::string>& CostCoefficients::keys() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v;
    for (const auto& f : kFields) v.emplace_back(f.key);
    v.emplace_back(kHeteroKey);
    return v;
  }();
  return k;
}

HeteroMode parseHeteroMode(const nlohmann::json& v, const std::string& where) {
  if (v.is_string() && v.get<std::string>() == "kernel") return HeteroMode::Kernel;
  if (v.is_string() && v.get<std::string>() == "cv") return HeteroMode::Cv;
  throw InputError(where + ": must be \"kernel\" or \"cv\" (got " + v.dump() + ")");
}

CostCoefficients CostCoefficients::fromJson(const nlohmann::json& j, std::string_view where,
                                            const CostCoefficients& base) {
  CostCoefficients c = base;
  const std::string w(where);
  if (j.is_null()) return c;
  if (!j.is_object()) throw InputError(w + ": must be an object of cost coefficients");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string place = w + "." + it.key();
    if (it.key() == kHeteroKey) {
      c.hetero = parseHeteroMode(*it, place);
      continue;
    }
    const CoefField* field = nullptr;
    for (const auto& f : kFields)
      if (it.key() == f.key) field = &f;
    if (!field) throw InputError(costdetail::unknownKeyMessage(place, "cost coefficient", it.key(), keys()));
    if (!it->is_number()) throw InputError(place + ": must be a number (got " + it->dump() + ")");
    const double v = it->get<double>();
    const std::string got = " (got " + it->dump() + ")";
    if (!std::isfinite(v)) throw InputError(place + ": must be finite" + got);
    switch (field->rule) {
      case CoefField::Positive:
        if (!(v > 0)) throw InputError(place + ": must be > 0" + got);
        break;
      case CoefField::NonNegative:
        if (!(v >= 0)) throw InputError(place + ": must be >= 0" + got);
        break;
      case CoefField::AtLeastOne:
        if (!(v >= 1)) throw InputError(place + ": must be >= 1" + got);
        break;
    }
    c.*(field->ptr) = v;
  }
  return c;
}

CostCoefficients CostCoefficients::fromJson(const nlohmann::json& j, std::string_view where) {
  return fromJson(j, where, CostCoefficients{});
}

CostCoefficients gpuCoefficients(const GpuSpec& gpu) {
  if (gpu.coefficients.empty()) return CostCoefficients{};
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : gpu.coefficients) j[key] = value;
  return CostCoefficients::fromJson(j, "hardware/" + gpu.id + ".json: coefficients");
}

nlohmann::json CostCoefficients::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : kFields) j[f.key] = this->*(f.ptr);
  j[kHeteroKey] = heteroModeName(hetero);
  return j;
}

const char* heteroModeName(HeteroMode m) { return m == HeteroMode::Cv ? "cv" : "kernel"; }

// ------------------------------------------------------------------ dtypes

const char* dtypeName(DType d) {
  switch (d) {
    case DType::BF16: return "bf16";
    case DType::FP16: return "fp16";
    case DType::FP8: return "fp8";
    case DType::MXFP4:
      return "mxfp4";
  }
  return "bf16";
}

DType parseDType(std::string_view s, std::string_view field) {
  for (DType d : {DType::BF16, DType::FP16, DType::FP8})
    if (s == dtypeName(d)) return d;
  throw InputError(std::string(field) + ": must be one of 'bf16', 'fp16', 'fp8' (got '" +
                   std::string(s) + "')");
}

DType parseExpertDType(std::string_view s, std::string_view field) {
  if (s == "mxfp4") return DType::MXFP4;
  for (DType d : {DType::BF16, DType::FP16, DType::FP8})
    if (s == dtypeName(d)) return d;
  throw InputError(std::string(field) + ": must be one of 'bf16', 'fp16', 'fp8', 'mxfp4' (got '" + std::string(s) +
                   "')");
}

void checkPrecision(const GpuSpec& gpu, const Precision& p, std::string_view weightsField, std::string_view kvField,
                    std::string_view expertsField) {
  if (p.weights == DType::MXFP4 || p.kv == DType::MXFP4)
    throw InputError(std::string(p.weights == DType::MXFP4 ? weightsField : kvField) +
                     ": mxfp4 is only for an MoE model's experts (cluster.expert_dtype)");
  for (const auto& [d, field] : {std::pair{p.weights, weightsField}, std::pair{p.kv, kvField},
                                 std::pair{p.experts.value_or(p.weights), expertsField}})
    if (d == DType::FP8 && !gpu.hasFp8())
      throw InputError(std::string(field) + ": fp8 needs a GPU with FP8 tensor cores; " + gpu.id +
                       " has none (its preset's fp8_tflops is null): use bf16 or another GPU");
}

// ----------------------------------------------------------------- profiles

CostProfile readCostProfile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open cost profile");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(path + ": a cost profile must be a JSON object");
  CostProfile p;
  for (const char* key : {"gpu", "model"}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) throw InputError(path + ": " + key + ": must be a string");
    (std::string(key) == "gpu" ? p.gpu : p.model) = it->get<std::string>();
  }
  auto it = j.find("coefficients");
  if (it == j.end()) throw InputError(path + ": coefficients: missing (a cost profile needs it)");
  p.coefficients = CostCoefficients::fromJson(*it, path + ": coefficients");
  return p;
}

CostCoefficients loadCostProfile(const std::string& path) { return readCostProfile(path).coefficients; }

nlohmann::json costProfileJson(const CostProfile& p) {
  nlohmann::json j = nlohmann::json::object();
  j["gpu"] = p.gpu;
  j["model"] = p.model;
  j["coefficients"] = p.coefficients.toJson();
  return j;
}

void writeCostProfile(const std::string& path, const CostProfile& p) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path + ": cannot write cost profile");
  out << costProfileJson(p).dump(2) << '\n';
  if (!out) throw InputError(path + ": cannot write cost profile");
}

// ---------------------------------------------------------------- CostModel

namespace {
// Skewed routing tabulates its MoE terms over N up to here (cost_model.h).
constexpr double kGridMax = 1 << 22;
}  // namespace

CostModel::CostModel(const GpuSpec& gpu, const ModelSpec& model, int tp, CostCoefficients c,
                     Precision p, AllReduceMode allreduce)
    : gpu_(gpu), model_(model), tp_(tp), c_(c), p_(p), allreduce_(allreduce) {
  if (tp < 1) throw InputError("cluster.tp: must be >= 1 (got " + std::to_string(tp) + ")");
  checkPrecision(gpu_, p_, "cluster.model_dtype", "cluster.kv_dtype");
  // Precision (docs/cost-model.md, "Precision"): fp8 stores the layers' linear
  // weights / the KV cache in 1 byte and runs the linear layers at the FP8
  // peak; embedding, norms and LM head, attention and activations keep the
  // preset's dtype. bf16/fp16 give exactly the preset's numbers.
  const auto bytesOf = [&](DType d) -> std::int64_t { return d == DType::FP8 ? 1 : model_.dtype_bytes; };
  const std::int64_t layerLinear = model_.layerLinearParams();
  if (p_.experts && !model_.isMoe())
    throw InputError("cluster.expert_dtype: " + (model_.name.empty() ? model_.id : model_.name) +
                     " is a dense model (no experts); use cluster.model_dtype");
  const std::int64_t routed = model_.routedExpertParams();
  weightBytes_ = (layerLinear - routed) * bytesOf(p_.weights) +
                 static_cast<std::int64_t>(std::llround(static_cast<double>(routed) * expertBytesPerParam())) +
                 (model_.paramCount() - layerLinear) * model_.dtype_bytes;
  kvBytesPerToken_ = model_.kvBytesPerToken() / model_.dtype_bytes * bytesOf(p_.kv);
  // Sliding-window layers (docs/cost-model.md "Sliding-window KV"): every
  // layer's KV is the same size, so they hold sliding_layers / layers of it.
  const int slidingLayers = model_.sliding_window > 0 ? model_.sliding_layers : 0;
  if (slidingLayers > 0) {
    window_ = model_.sliding_window;
    kvWindowedPerToken_ = kvBytesPerToken_ / model_.layers * slidingLayers;
  }
  const double tpd = tp_;
  const double F = gpu_.flopsPerSec();
  if (model_.isMoe()) keepProb_ = 1.0 - static_cast<double>(model_.experts_per_token) / model_.experts;
  // QKᵀ and PV: 2 FLOPs per multiply-add over the query/key width and the
  // value width (both head_dim; MLA: qk_nope + qk_rope and v_head_dim).
  const auto prefillPerUnit = [&](int layers) {
    return model_.hasMla()
               ? 2.0 * layers * model_.q_heads *
                     (model_.qk_nope_head_dim + model_.qk_rope_head_dim + model_.v_head_dim) / (tpd * F * c_.eta_a)
               : 4.0 * layers * model_.q_heads * model_.head_dim / (tpd * F * c_.eta_a);
  };
  prefillPerUnit_ = prefillPerUnit(model_.layers - slidingLayers);  // the full layers
  prefillSlidePerUnit_ = slidingLayers > 0 ? prefillPerUnit(slidingLayers) : 0.0;
  overheadFixed_ = (c_.t_step_us + c_.t_layer_us * model_.layers) * 1e-6;
  overheadPerSeq_ = c_.t_seq_us * 1e-6;
  cpuFixed_ = c_.t_step_us * 1e-6;
  arBytesPerToken_ = static_cast<double>(model_.hidden) * model_.dtype_bytes;
  ctasPerSeq_ = std::max(1, (model_.kv_heads + tp_ - 1) / tp_);
  slots_ = gpu_.sm_count * c_.attn_ctas_per_sm;
  arSegments_ = CollectiveModel::builtin().segments(allreduce_, tp_, gpu_.intraNodeLinkBytesPerSec(),
                                                    gpu_.nvlink_gbps.has_value());
  if (tp_ > 1 && allreduce_ == AllReduceMode::Ring) {
    const double link = gpu_.intraNodeLinkBytesPerSec();
    const double perLayerAr = 2.0 * model_.layers;
    commPerToken_ = perLayerAr * 2.0 * (tpd - 1) / tpd * model_.hidden * model_.dtype_bytes /
                    (link * 0.5);
    commFixed_ = perLayerAr * 2.0 * (tpd - 1) * c_.alpha_hop_us * 1e-6;
  } else {
    commPerToken_ = 0;
    commFixed_ = 0;
  }
  applyMoe();
}

// The terms the MoE deployment changes (moe_: plain after construction).
// Linear layers as two rooflines, docs/cost-model.md "Mixture of experts":
// every weight but the routed experts (N tokens over those weights), then the
// routed experts as grouped GEMMs on the busiest expert-parallel rank.
void CostModel::applyMoe() {
  const double tpd = tp_;
  const double F = gpu_.flopsPerSec();
  const double Fw = p_.weights == DType::FP8 ? gpu_.fp8FlopsPerSec() : F;
  const double BW = gpu_.hbmBytesPerSec();
  const std::int64_t layerLinear = model_.layerLinearParams();
  const std::int64_t routed = model_.routedExpertParams();  // 0 for a dense model
  const double routedBytes = static_cast<double>(routed) * expertBytesPerParam();
  // A token multiplies every weight but the routed experts; the LM head stays
  // at the bf16 peak (with Fw = F: exactly 2·P/(tp·F·η_c)).
  linComputePerToken_ = 2.0 *
                        (static_cast<double>(layerLinear - routed) * (F / Fw) +
                         static_cast<double>(model_.linearParams() - layerLinear)) /
                        (tpd * F * c_.eta_c);
  const double attnGpus = moe_.attentionDp ? 1.0 : tpd;  // GPUs that share the non-expert weights
  const double otherBytes = static_cast<double>(weightBytes_) - routedBytes;
  linWeights_ = otherBytes / (attnGpus * BW * c_.eta_w);
  const int E = model_.experts;
  weightsPerGpu_ =
      otherBytes / attnGpus + routedBytes * (E > 0 ? (E + moe_.redundant) / static_cast<double>(E) : 1.0) / tpd;
  // MLA under tensor parallelism: each GPU reads the whole latent of every
  // token (replicated); data-parallel attention reads its own sequences' KV.
  // Each GPU reads its own share of the KV (kvSplit: MLA's latent and KV
  // heads fewer than the GPUs are replicated under tensor parallelism).
  decodePerToken_ = static_cast<double>(kvBytesPerTokenFull()) / (kvSplit() * BW * c_.eta_kv);
  decodeSlidePerToken_ = static_cast<double>(kvWindowedPerToken_) / (kvSplit() * BW * c_.eta_kv);
  gridN_.clear();
  gridExpert_.clear();
  gridA2a_.clear();
  gridA2aNormal_.clear();
  remoteNodes_ = 0;
  if (!model_.isMoe()) return;
  const double rankGpus = tpd / moe_.ep;  // each rank's experts are tensor parallel over these
  const double layers = model_.moeLayers();
  // FP8 experts run at the FP8 peak; MXFP4 is weight-only (bf16 peak).
  const double Fe = p_.experts.value_or(p_.weights) == DType::FP8 ? gpu_.fp8FlopsPerSec() : F;
  expertPair_ = layers * 2.0 * static_cast<double>(model_.expertParams()) / (rankGpus * Fe * c_.eta_c);
  expertRead_ =
      layers * static_cast<double>(model_.expertParams()) * expertBytesPerParam() /
      (rankGpus * BW * expertWeightReadEta(gpu_, c_));  // the H100 expert GEMM fit (operator_fit.h)
  a2aBytesPerToken_ = static_cast<double>(model_.experts_per_token) * model_.hidden;
  const std::vector<double> q = expertSelection(moe_.routing, E, model_.experts_per_token, "cluster.moe_routing.path");
  placement_ = ExpertPlacement(q, moe_.ep, moe_.redundant, moe_.placement);
  if (moe_.attentionDp && moe_.ep > moe_.gpusPerNode)
    remoteNodes_ = placement_.expectedRemoteNodes(moe_.gpusPerNode, model_.expert_groups, model_.topk_groups);
  balanced_ = moe_.routing.kind == RoutingKind::Balanced && moe_.redundant == 0;
  if (balanced_) return;
  // Skewed routing: O(E) per N, so tabulate over N (every integer to 64,
  // then steps of 5 %) and interpolate linearly; exact past the grid.
  for (double n = 1; n <= kGridMax; n = n < 64 ? n + 1 : std::ceil(n * 1.05)) gridN_.push_back(n);
  for (double n : gridN_) {
    gridExpert_.push_back(expertSecondsExact(n));
    gridA2a_.push_back(allToAllSecondsExact(n, false));
    gridA2aNormal_.push_back(allToAllSecondsExact(n, true));
  }
}

double CostModel::expertBytesPerParam() const {
  switch (p_.experts.value_or(p_.weights)) {
    case DType::FP8:
      return 1.0;
    case DType::MXFP4:
      return 4.25 / 8;  // 4-bit values + an 8-bit scale per 32
    default:
      return model_.dtype_bytes;
  }
}

void CostModel::setMoe(const MoeDeployment& d) {
  const std::string name = model_.name.empty() ? model_.id : model_.name;
  if (!model_.isMoe()) {
    if (d.ep != 1) throw InputError("cluster.ep: " + name + " is a dense model (no experts to spread); use 1");
    if (d.attentionDp)
      throw InputError("cluster.attention_dp: " + name +
                       " is a dense model; data-parallel attention needs an MoE model with cluster.ep = cluster.tp");
    if (d.redundant) throw InputError("cluster.ep_redundant: " + name + " is a dense model (no experts to replicate)");
    if (d.routing.kind != RoutingKind::Balanced)
      throw InputError("cluster.moe_routing: " + name + " is a dense model (no experts to route to)");
    if (d.twoBatchOverlap)
      throw InputError("cluster.two_batch_overlap: " + name + " is a dense model (no expert all-to-all to hide)");
    moe_ = d;
    return;
  }
  if (d.ep < 1) throw InputError("cluster.ep: must be >= 1 (got " + std::to_string(d.ep) + ")");
  if (tp_ % d.ep != 0)
    throw InputError("cluster.ep: " + std::to_string(d.ep) + " does not divide the instance's " + std::to_string(tp_) +
                     " GPUs (cluster.tp)");
  if (d.redundant < 0) throw InputError("cluster.ep_redundant: must be >= 0 (got " + std::to_string(d.redundant) + ")");
  if ((model_.experts + d.redundant) % d.ep != 0)
    throw InputError("cluster.ep_redundant: " + name + "'s " + std::to_string(model_.experts) + " experts + " +
                     std::to_string(d.redundant) +
                     " redundant do not divide evenly over cluster.ep = " + std::to_string(d.ep) + " ranks");
  if (d.redundant > 0 && d.placement != Placement::Eplb)
    throw InputError("cluster.ep_redundant: replicas need cluster.ep_placement \"eplb\"");
  if (d.attentionDp && d.ep != tp_)
    throw InputError("cluster.attention_dp: needs cluster.ep equal to cluster.tp (" + std::to_string(tp_) +
                     "): the experts spread over every GPU");
  if (d.twoBatchOverlap && (!d.attentionDp || d.ep <= 1))
    throw InputError(
        "cluster.two_batch_overlap: needs cluster.attention_dp with cluster.ep > 1 (it hides the "
        "expert all-to-all, which only data-parallel attention has)");
  if (d.tboMinTokens < 2)
    throw InputError("cluster.tbo_min_tokens: must be >= 2 (got " + std::to_string(d.tboMinTokens) + ")");
  moe_ = d;
  applyMoe();
}

double CostModel::expertSecondsExact(double N) const {
  if (!model_.isMoe() || N <= 0) return 0.0;
  if (balanced_) {
    // Every rank alike: E/ep experts of q = k/E each.
    const double E = model_.experts, k = model_.experts_per_token, ep = moe_.ep;
    const double pairs = N * k / ep + placement_.stragglerZ() * std::sqrt(N * (E / ep) * (k / E) * (1 - k / E));
    return std::max(expertPair_ * pairs, expertRead_ * (E / ep) * touchedFraction(N));
  }
  double worst = 0;
  for (int r = 0; r < placement_.ranks(); ++r) {
    const double pairs =
        N * placement_.rankShare(r) + placement_.stragglerZ() * std::sqrt(N * placement_.rankVariance(r));
    worst = std::max(worst, std::max(expertPair_ * pairs, expertRead_ * placement_.rankTouched(r, N)));
  }
  return worst;
}

double CostModel::allToAllSecondsExact(double N, bool normalKernels) const {
  if (!model_.isMoe() || !moe_.attentionDp || moe_.ep <= 1 || N <= 0) return 0.0;
  // Each GPU dispatches its N/tp tokens to their k experts (fp8 by default)
  // and gets them back in bf16; the busiest rank receives imbalance × the mean.
  const AllToAllModel& m = AllToAllModel::builtin();
  const double link = gpu_.intraNodeLinkBytesPerSec();
  if (normalKernels && moe_.ep > moe_.gpusPerNode) {  // once per remote node, then NVLink
    const double tokenBytes = N / tp_ * model_.hidden * placement_.imbalance(N);
    const int k = model_.experts_per_token;
    const auto one = [&](double bytes) {
      return m.dedupSeconds(tokenBytes * bytes, k, remoteNodes_, moe_.ep, moe_.gpusPerNode, link,
                            moe_.nicBytesPerSecPerGpu);
    };
    return model_.moeLayers() * (one(moe_.dispatchBytes) + one(2));
  }
  const double perGpu = N / tp_ * a2aBytesPerToken_ * placement_.imbalance(N);
  const double one =
      m.seconds(perGpu * moe_.dispatchBytes, moe_.ep, moe_.gpusPerNode, link, moe_.nicBytesPerSecPerGpu) +
      m.seconds(perGpu * 2, moe_.ep, moe_.gpusPerNode, link, moe_.nicBytesPerSecPerGpu);
  return model_.moeLayers() * one;
}

double CostModel::fromGrid(const std::vector<double>& y, double N) const {
  if (N <= 0) return 0.0;
  if (N <= 1) return y[0] * N;  // fewer than one token (never in a batch)
  const auto it = std::upper_bound(gridN_.begin(), gridN_.end(), N);
  const auto i = static_cast<std::size_t>(it - gridN_.begin());
  if (i >= gridN_.size()) return -1;  // past the grid
  const double n0 = gridN_[i - 1], n1 = gridN_[i];
  return y[i - 1] + (y[i] - y[i - 1]) * (N - n0) / (n1 - n0);
}

double CostModel::expertSeconds(double N) const {
  if (!model_.isMoe() || N <= 0) return 0.0;
  if (gridN_.empty()) return expertSecondsExact(N);
  const double v = fromGrid(gridExpert_, N);
  return v >= 0 ? v : expertSecondsExact(N);
}

double CostModel::allToAllSeconds(double N, bool normalKernels) const {
  if (!moe_.attentionDp || N <= 0) return 0.0;
  const bool normal = normalKernels && moe_.ep > moe_.gpusPerNode;  // within a node the two agree
  if (gridN_.empty()) return allToAllSecondsExact(N, normal);
  const double v = fromGrid(normal ? gridA2aNormal_ : gridA2a_, N);
  return v >= 0 ? v : allToAllSecondsExact(N, normal);
}

double CostModel::expertReplicasTouched(double N) const {
  if (!model_.isMoe() || N <= 0) return 0.0;
  double touched = 0;
  for (int r = 0; r < placement_.ranks(); ++r) touched += placement_.rankTouched(r, N);
  return touched;
}

double CostModel::expertWeightBytesRead(double N) const {
  return expertReplicasTouched(N) * static_cast<double>(model_.expertParams()) * expertBytesPerParam() *
         model_.moeLayers();
}

std::vector<double> CostModel::rankLoads(double N) const {
  std::vector<double> out;
  if (!model_.isMoe()) return out;
  for (int r = 0; r < placement_.ranks(); ++r) out.push_back(N * placement_.rankShare(r));
  return out;
}

double CostModel::commSeconds(double N) const {
  if (tp_ <= 1 || moe_.attentionDp) return 0.0;  // DP attention: all-to-all instead (a2a_s)
  if (allreduce_ == AllReduceMode::Ring) return commPerToken_ * N + commFixed_;
  return 2.0 * model_.layers * allReduceSeconds(arSegments_, N * arBytesPerToken_);
}

double decodeContextCv(const BatchShape& b) {
  if (b.decode_seqs < 2 || b.decode_ctx_sum <= 0) return 0.0;
  const double n = b.decode_seqs;
  const double mean = b.decode_ctx_sum / n;
  const double var = std::max(0.0, b.decode_ctx_sumsq / n - mean * mean);
  return std::sqrt(var) / mean;
}

double CostModel::kernelHeterogeneity(const BatchShape& b) const {
  if (b.decode_seqs < 1 || b.decode_ctx_sum <= 0) return 1.0;
  // Per GPU the kernel runs n·H CTAs (one per sequence and KV head), split
  // along the keys when they do not fill the P slots; w waves. The critical
  // path is the longest sequences' chunk, estimated by the length-biased
  // mean Σ L²/Σ L = L̄(1 + CV²); over the per-slot work W/P = H·Σ L/P it is
  // ρ = (1 + CV²)/w. A greedy list schedule of many waves ends at W/P plus
  // the mean residual of the last CTAs (half a critical chunk); one wave
  // ends with its longest CTA.
  const double n = b.decode_seqs;
  const double w = std::max(1.0, n * ctasPerSeq_ / slots_);
  const double lenBiased = b.decode_ctx_sumsq / b.decode_ctx_sum;  // L̄ (1 + CV²)
  const double rho = lenBiased * n / b.decode_ctx_sum / w;
  // ρ ≥ 1/w (Cauchy–Schwarz); the 1 guards rounding on equal lengths.
  return std::max({1.0, rho, 1.0 + 0.5 * rho * (1.0 - 1.0 / w)});
}

double CostModel::dpRankImbalance(const BatchShape& b) const {
  if (!moe_.attentionDp || tp_ <= 1 || b.decode_seqs < 1 || b.decode_ctx_sum <= 0) return 1.0;
  const double n = b.decode_seqs, tp = tp_;
  const double c = std::ceil(n / tp);
  const double z = std::sqrt(2.0 * std::log(std::min(n, tp)));
  return std::max(1.0, tp / n * (c + z * decodeContextCv(b) * std::sqrt(c)));
}

double CostModel::heterogeneity(const BatchShape& b) const {
  if (c_.hetero == HeteroMode::Kernel) return kernelHeterogeneity(b);
  if (b.decode_seqs < 2 || b.decode_ctx_sum <= 0) return 1.0;
  return std::min(c_.h_max, 1.0 + c_.kappa * decodeContextCv(b));
}

CostBreakdown CostModel::breakdown(const BatchShape& b) const {
  CostBreakdown r;
  const double N = batchTokens(b);
  const int seqs = b.decode_seqs + b.prefill_seqs;
  if (N <= 0 && seqs <= 0) return r;
  r.heterogeneity_h = heterogeneity(b);
  r.linear_s = std::max(linComputePerToken_ * N, linWeights_);
  r.expert_s = expertSeconds(N);
  const bool normalA2a = b.prefill_tokens > 0;  // DeepEP's normal kernels (cost/moe.h)
  r.a2a_s = allToAllSeconds(N, normalA2a);
  r.prefill_attn_s = prefillAttnSeconds(b);
  r.decode_attn_s = r.heterogeneity_h * dpRankImbalance(b) * decodeReadSeconds(b);
  // Data-parallel attention with per-rank schedulers: each rank's own sequences, in parallel.
  const double seqShare = moe_.attentionDp && moe_.perRankScheduler ? static_cast<double>(seqs) / tp_ : seqs;
  r.overhead_s = overheadFixed_ + overheadPerSeq_ * seqShare;
  r.comm_s = commSeconds(N);
  if (moe_.twoBatchOverlap && N >= moe_.tboMinTokens) {
    // Two micro-batches of N/2 (cost/moe.h twoBatchOverlapSeconds): the terms
    // are both halves' (compute slowed by the SMs DeepEP's normal kernels
    // hold), a2a_s the all-to-all the compute does not hide.
    const double sigma = tboComputeSlowdown(gpu_.sm_count, b.prefill_tokens > 0);
    const double linH = std::max(linComputePerToken_ * N / 2, linWeights_), expH = expertSeconds(N / 2);
    const double C = sigma * (linH + expH + (r.prefill_attn_s + r.decode_attn_s) / 2);
    r.linear_s = 2 * sigma * linH;
    r.expert_s = 2 * sigma * expH;
    r.prefill_attn_s *= sigma;
    r.decode_attn_s *= sigma;
    r.a2a_s = twoBatchOverlapSeconds(C, allToAllSeconds(N / 2, normalA2a), model_.moeLayers()) - 2 * C;
  }
  r.total_s = r.overhead_s + r.linear_s + r.expert_s + r.a2a_s + r.prefill_attn_s + r.decode_attn_s + r.comm_s;
  if (async_) {
    const double cpu = cpuFixed_ + overheadPerSeq_ * seqShare;
    r.overlap_s = std::min(cpu, r.total_s - cpu);
    r.total_s -= r.overlap_s;
  }
  return r;
}

double CostModel::iterationSeconds(const BatchShape& b) const {
  const double N = batchTokens(b);
  const int seqs = b.decode_seqs + b.prefill_seqs;
  if (N <= 0 && seqs <= 0) return 0.0;
  const double h = heterogeneity(b);
  const double prefill = prefillAttnSeconds(b);
  const double decode = h * decodeReadSeconds(b) * (moe_.attentionDp ? dpRankImbalance(b) : 1.0);
  const double seqShare =
      moe_.attentionDp && moe_.perRankScheduler ? static_cast<double>(seqs) / tp_ : seqs;  // as in breakdown()
  const double overhead = overheadFixed_ + overheadPerSeq_ * seqShare;
  double total = 0;
  if (moe_.twoBatchOverlap && N >= moe_.tboMinTokens) {  // as in breakdown()
    const double sigma = tboComputeSlowdown(gpu_.sm_count, b.prefill_tokens > 0);
    const double C =
        sigma * (std::max(linComputePerToken_ * N / 2, linWeights_) + expertSeconds(N / 2) + (prefill + decode) / 2);
    total = overhead + twoBatchOverlapSeconds(C, allToAllSeconds(N / 2, b.prefill_tokens > 0), model_.moeLayers()) +
            commSeconds(N);
  } else {
    const double linear = std::max(linComputePerToken_ * N, linWeights_) +
                          (model_.isMoe() ? expertSeconds(N) + allToAllSeconds(N, b.prefill_tokens > 0) : 0.0);
    total = overhead + linear + prefill + decode + commSeconds(N);
  }
  if (async_) {  // max(CPU part, GPU part)
    const double cpu = cpuFixed_ + overheadPerSeq_ * seqShare;
    return std::max(cpu, total - cpu);
  }
  return total;
}

double CostModel::activationReserveBytes() const {
  return c_.activation_reserve_gib * 1073741824.0 +
         c_.activation_reserve_per_vocab_kib * 1024.0 * model_.vocab;
}

double CostModel::usableKvBytesPerGpu(double util) const {
  return gpu_.hbmBytes() * util - weightBytesPerGpu() - activationReserveBytes();
}

std::int64_t CostModel::kvCapacityBlocks(double util, double fraction, int block_size) const {
  if (!(util > 0 && util <= 1))
    throw InputError("cluster.gpu_memory_utilization: must be in (0, 1] (got " + fmt("%g", util) + ")");
  if (!(fraction > 0 && fraction <= 1))
    throw InputError("cluster.kv_capacity_fraction: must be in (0, 1] (got " + fmt("%g", fraction) + ")");
  if (block_size < 1)
    throw InputError("cluster.block_size: must be >= 1 (got " + std::to_string(block_size) + ")");
  const double usable = usableKvBytesPerGpu(util);
  const double weights = static_cast<double>(weightBytes_);
  if (usable <= 0) {
    const double offerPerGpu = gpu_.hbmBytes() * util - activationReserveBytes();
    std::string msg = model_.name + " needs " + fmt("%.0f", weights / 1e9) + " GB of weights; " +
                      std::to_string(tp_) + " \u00d7 " + gpu_.id + " offers " +
                      fmt("%.0f", std::max(0.0, offerPerGpu) * tp_ / 1e9) + " GB usable (" +
                      fmt("%g", gpu_.hbm_gib) + " GiB \u00d7 " + fmt("%.2f", util) + " per GPU, minus " +
                      fmt("%.1f", activationReserveBytes() / 1e9) + " GB activation reserve each)";
    if (offerPerGpu > 0) {
      const auto need = static_cast<int>(std::ceil(weights / offerPerGpu));
      msg += ": use tp \u2265 " + std::to_string(std::max(need, tp_ + 1));
    } else {
      msg += ": raise cluster.gpu_memory_utilization or lower the activation reserve";
    }
    throw InputError(msg);
  }
  const double perBlock = static_cast<double>(block_size) * kvBytesPerTokenPerGpu();
  auto blocks = static_cast<std::int64_t>(std::floor(usable / perBlock * fraction));
  if (window_ > 0) {
    // Σ t ≤ T tokens over at most maxSeqs sequences need T · full + Σ min(t,
    // W') · sliding ≤ T · full + min(T, maxSeqs · W') · sliding bytes.
    const double full = static_cast<double>(kvBytesPerTokenFull()) / kvSplit();
    const double sliding = static_cast<double>(kvWindowedPerToken_) / kvSplit();
    // The most a window holds: ⌈(W + bs − 2)/bs⌉ blocks (hold(t) above at
    // t − W + 1 ≡ bs − 1 mod bs), = ⌈(W − 1)/bs⌉ + 1 for the presets' W.
    const double heldW = std::ceil((window_ + block_size - 2) / block_size) * block_size;
    const double windows = std::max(0, maxSeqs_) * heldW * sliding;
    // The bound above: `blocks` (every layer keeps the whole context), or
    // maxSeqs full windows and the rest for the full layers, the larger.
    if (usable > windows) {
      const double t = full > 0 ? (usable - windows) / (static_cast<double>(block_size) * full)
                                : std::max(0, maxSeqs_) * double(model_.max_context) / block_size;
      blocks = std::max(blocks, static_cast<std::int64_t>(std::floor(t * fraction)));
    }
  }
  if (blocks < 1)
    throw InputError(model_.name + " on " + std::to_string(tp_) + " \u00d7 " + gpu_.id +
                     ": no room for one KV block (" + fmt("%.3f", usable / 1e9) +
                     " GB per GPU left after weights; a block of " + std::to_string(block_size) +
                     " tokens needs " + fmt("%.3f", perBlock / 1e9) + " GB per GPU)");
  return blocks;
}

std::int64_t CostModel::windowTokensHeld(std::int64_t tokens, int block_size) const {
  if (tokens <= 0 || block_size < 1) return 0;
  const std::int64_t bs = block_size;
  const std::int64_t blocks = (tokens + bs - 1) / bs;
  if (window_ <= 0) return blocks * bs;
  const auto W = static_cast<std::int64_t>(window_);
  const std::int64_t skipped = std::max<std::int64_t>(0, tokens - W + 1) / bs;  // freed: wholly before the window
  return (blocks - skipped) * bs;
}

double CostModel::kvBytesForContext(std::int64_t tokens, int block_size) const {
  if (tokens <= 0 || block_size < 1) return 0.0;
  const std::int64_t bs = block_size;
  const double whole = static_cast<double>((tokens + bs - 1) / bs * bs);
  return whole * static_cast<double>(kvBytesPerTokenFull()) +
         static_cast<double>(windowTokensHeld(tokens, block_size)) * static_cast<double>(kvWindowedPerToken_);
}

double CostModel::swapSeconds(double bytes) const {
  if (bytes <= 0) return 0.0;
  return bytes / (tp_ * hostLinkBytesPerSec());
}

double CostModel::allreduceSeconds(double bytes) const {
  if (tp_ <= 1 || bytes <= 0) return 0.0;
  if (allreduce_ != AllReduceMode::Ring) return allReduceSeconds(arSegments_, bytes);
  const double tpd = tp_;
  return 2.0 * (tpd - 1) / tpd * bytes / (gpu_.intraNodeLinkBytesPerSec() * 0.5) +
         2.0 * (tpd - 1) * c_.alpha_hop_us * 1e-6;
}

const char* CostModel::allreduceImpl(double bytes) const {
  if (tp_ <= 1) return "";
  if (allreduce_ == AllReduceMode::Ring) return "ring";
  return sl::allReduceImpl(arSegments_, bytes);
}

}  // namespace sl
