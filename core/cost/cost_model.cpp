#include "cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

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
  }
  return "bf16";
}

DType parseDType(std::string_view s, std::string_view field) {
  for (DType d : {DType::BF16, DType::FP16, DType::FP8})
    if (s == dtypeName(d)) return d;
  throw InputError(std::string(field) + ": must be one of 'bf16', 'fp16', 'fp8' (got '" +
                   std::string(s) + "')");
}

void checkPrecision(const GpuSpec& gpu, const Precision& p, std::string_view weightsField,
                    std::string_view kvField) {
  for (const auto& [d, field] : {std::pair{p.weights, weightsField}, std::pair{p.kv, kvField}})
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
  weightBytes_ = layerLinear * bytesOf(p_.weights) + (model_.paramCount() - layerLinear) * model_.dtype_bytes;
  // MoE (docs/cost-model.md "Mixture of experts"): a token multiplies only its
  // experts_per_token routed experts; a step reads the experts its tokens touch.
  const std::int64_t inactive = model_.expertParams() * (model_.experts - model_.experts_per_token) * model_.moeLayers();
  const std::int64_t routedBytes = model_.routedExpertParams() * bytesOf(p_.weights);
  kvBytesPerToken_ = model_.kvBytesPerToken() / model_.dtype_bytes * bytesOf(p_.kv);
  const double tpd = tp_;
  const double F = gpu_.flopsPerSec();
  const double Fw = p_.weights == DType::FP8 ? gpu_.fp8FlopsPerSec() : F;
  const double BW = gpu_.hbmBytesPerSec();
  // The LM head (vocab × hidden) stays at the bf16 peak; with Fw = F this is
  // exactly 2·P_linear / (tp·F·η_c).
  linComputePerToken_ = 2.0 *
                        (static_cast<double>(layerLinear - inactive) * (F / Fw) +
                         static_cast<double>(model_.linearParams() - layerLinear)) /
                        (tpd * F * c_.eta_c);
  linWeights_ = static_cast<double>(weightBytes_ - routedBytes) / (tpd * BW * c_.eta_w);
  if (model_.isMoe()) {
    routedWeights_ = static_cast<double>(routedBytes) / (tpd * BW * c_.eta_w);
    keepProb_ = 1.0 - static_cast<double>(model_.experts_per_token) / model_.experts;
  }
  // QKᵀ and PV: 2 FLOPs per multiply-add over the query/key width and the
  // value width (both head_dim; MLA: qk_nope + qk_rope and v_head_dim).
  prefillPerUnit_ = model_.hasMla()
                        ? 2.0 * model_.layers * model_.q_heads *
                              (model_.qk_nope_head_dim + model_.qk_rope_head_dim + model_.v_head_dim) /
                              (tpd * F * c_.eta_a)
                        : 4.0 * model_.layers * model_.q_heads * model_.head_dim / (tpd * F * c_.eta_a);
  // MLA: each GPU reads the whole latent of every token (replicated, above).
  decodePerToken_ = static_cast<double>(kvBytesPerToken_) / ((model_.hasMla() ? 1.0 : tpd) * BW * c_.eta_kv);
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
}

double CostModel::commSeconds(double N) const {
  if (tp_ <= 1) return 0.0;
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

double CostModel::heterogeneity(const BatchShape& b) const {
  if (c_.hetero == HeteroMode::Kernel) return kernelHeterogeneity(b);
  if (b.decode_seqs < 2 || b.decode_ctx_sum <= 0) return 1.0;
  return std::min(c_.h_max, 1.0 + c_.kappa * decodeContextCv(b));
}

CostBreakdown CostModel::breakdown(const BatchShape& b) const {
  CostBreakdown r;
  const double N = b.prefill_tokens + b.decode_seqs;
  const int seqs = b.decode_seqs + b.prefill_seqs;
  if (N <= 0 && seqs <= 0) return r;
  r.heterogeneity_h = heterogeneity(b);
  r.linear_s = std::max(linComputePerToken_ * N, weightReadSeconds(N));
  r.prefill_attn_s = prefillPerUnit_ * b.prefill_attn;
  r.decode_attn_s = r.heterogeneity_h * decodePerToken_ * b.decode_ctx_sum;
  r.overhead_s = overheadFixed_ + overheadPerSeq_ * seqs;
  r.comm_s = commSeconds(N);
  r.total_s = r.overhead_s + r.linear_s + r.prefill_attn_s + r.decode_attn_s + r.comm_s;
  if (async_) {
    const double cpu = cpuFixed_ + overheadPerSeq_ * seqs;
    r.overlap_s = std::min(cpu, r.total_s - cpu);
    r.total_s -= r.overlap_s;
  }
  return r;
}

double CostModel::iterationSeconds(const BatchShape& b) const {
  const double N = b.prefill_tokens + b.decode_seqs;
  const int seqs = b.decode_seqs + b.prefill_seqs;
  if (N <= 0 && seqs <= 0) return 0.0;
  const double h = heterogeneity(b);
  const double linear = std::max(linComputePerToken_ * N, weightReadSeconds(N));
  const double prefill = prefillPerUnit_ * b.prefill_attn;
  const double decode = h * decodePerToken_ * b.decode_ctx_sum;
  const double overhead = overheadFixed_ + overheadPerSeq_ * seqs;
  const double comm = commSeconds(N);
  const double total = overhead + linear + prefill + decode + comm;
  if (async_) {  // max(CPU part, GPU part)
    const double cpu = cpuFixed_ + overheadPerSeq_ * seqs;
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
  const auto blocks = static_cast<std::int64_t>(std::floor(usable / perBlock * fraction));
  if (blocks < 1)
    throw InputError(model_.name + " on " + std::to_string(tp_) + " \u00d7 " + gpu_.id +
                     ": no room for one KV block (" + fmt("%.3f", usable / 1e9) +
                     " GB per GPU left after weights; a block of " + std::to_string(block_size) +
                     " tokens needs " + fmt("%.3f", perBlock / 1e9) + " GB per GPU)");
  return blocks;
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
