#include "cost/presets.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "cost/embedded_presets.h"
#include "cost/suggest.h"
#include "util/error.h"

namespace sl {

// ---------------------------------------------------------------- ModelSpec

int ModelSpec::moeLayers() const {
  if (!isMoe()) return 0;
  const int rest = layers - dense_layers;
  return rest <= 0 ? 0 : (rest + moe_layer_step - 1) / moe_layer_step;
}

std::int64_t ModelSpec::kvBytesPerToken() const {
  if (hasMla()) return std::int64_t{layers} * (kv_lora_rank + qk_rope_head_dim) * dtype_bytes;
  return std::int64_t{2} * layers * kv_heads * head_dim * dtype_bytes;
}

std::int64_t ModelSpec::attentionParamsPerLayer() const {
  const std::int64_t h = hidden, hd = head_dim;
  if (!hasMla()) return h * (q_heads + 2 * std::int64_t{kv_heads}) * hd + std::int64_t{q_heads} * hd * h;
  const std::int64_t qk = qk_nope_head_dim + qk_rope_head_dim;
  const std::int64_t q = q_lora_rank > 0 ? h * q_lora_rank + std::int64_t{q_lora_rank} * q_heads * qk
                                         : h * q_heads * qk;
  const std::int64_t kv = h * (kv_lora_rank + qk_rope_head_dim) +
                          std::int64_t{kv_lora_rank} * q_heads * (qk_nope_head_dim + v_head_dim);
  return q + kv + std::int64_t{q_heads} * v_head_dim * h;
}

std::int64_t ModelSpec::linearParamsPerLayer() const {
  return attentionParamsPerLayer() + 3 * std::int64_t{hidden} * intermediate;
}

std::int64_t ModelSpec::layerLinearParams() const {
  const int moe = moeLayers();
  const std::int64_t moeLayer = attentionParamsPerLayer() + std::int64_t{hidden} * experts +
                                expertParams() * (experts + shared_experts);
  return linearParamsPerLayer() * (layers - moe) + moeLayer * moe;
}

std::int64_t ModelSpec::linearParams() const {
  return layerLinearParams() + std::int64_t{vocab} * hidden;
}

std::int64_t ModelSpec::activeLinearParams() const {
  return linearParams() - expertParams() * (experts - experts_per_token) * moeLayers();
}

std::int64_t ModelSpec::paramCount() const {
  const std::int64_t embedding = std::int64_t{vocab} * hidden;
  const std::int64_t norms = (2 * std::int64_t{hidden} + (hasMla() ? q_lora_rank + kv_lora_rank : 0)) * layers;
  const std::int64_t lmHead = tied_embeddings ? 0 : embedding;
  return embedding + layerLinearParams() + norms + hidden /* final norm */ + lmHead;
}

std::int64_t ModelSpec::activeParamCount() const {
  return paramCount() - expertParams() * (experts - experts_per_token) * moeLayers();
}

std::int64_t ModelSpec::weightBytes() const { return paramCount() * dtype_bytes; }

// ------------------------------------------------------------------ parsing

namespace {

using nlohmann::json;

struct FileReader {
  const std::string& file;  // e.g. "resources/hardware/x.json"
  const json& j;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(file + ": " + key + ": " + what);
  }
  const json& need(const std::string& key) const {
    auto it = j.find(key);
    if (it == j.end()) fail(key, "missing required field");
    return *it;
  }
  std::string str(const std::string& key) const {
    const json& v = need(key);
    if (!v.is_string() || v.get<std::string>().empty()) fail(key, "must be a non-empty string");
    return v.get<std::string>();
  }
  double positive(const std::string& key) const {
    const json& v = need(key);
    if (!v.is_number()) fail(key, "must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d <= 0) fail(key, "must be > 0 (got " + v.dump() + ")");
    return d;
  }
  int positiveInt(const std::string& key) const {
    const json& v = need(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0 ||
        v.get<std::int64_t>() > 1'000'000'000)
      fail(key, "must be a positive integer (got " + v.dump() + ")");
    return static_cast<int>(v.get<std::int64_t>());
  }
  /// An integer in [lo, hi]; otherwise "KEY: must be WHAT (got V)".
  int intIn(const std::string& key, std::int64_t lo, std::int64_t hi, const std::string& what) const {
    const json& v = need(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      fail(key, "must be " + what + " (got " + v.dump() + ")");
    return static_cast<int>(v.get<std::int64_t>());
  }
  int order() const {
    auto it = j.find("order");
    if (it == j.end()) return 1'000'000;
    if (!it->is_number_integer()) fail("order", "must be an integer");
    return it->get<int>();
  }
  void checkKeys(const std::vector<std::string>& allowed) const {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::string msg = "unknown field";
      const std::string hint = costdetail::closestMatch(it.key(), allowed);
      if (!hint.empty()) msg += ": did you mean '" + hint + "'?";
      fail(it.key(), msg);
    }
  }
};

GpuSpec parseGpu(const FileReader& r) {
  r.checkKeys({"id", "name", "order", "bf16_tflops", "fp8_tflops", "hbm_tbps", "hbm_gib",
               "nvlink_gbps", "peer_link_gbps", "host_link_gbps", "sm_count", "source",
               "coefficients", "coefficients_source"});
  GpuSpec g;
  g.id = r.str("id");
  g.name = r.str("name");
  g.bf16_tflops = r.positive("bf16_tflops");
  // Required, null for a GPU without FP8 tensor cores (so no file forgets it).
  if (!r.need("fp8_tflops").is_null()) g.fp8_tflops = r.positive("fp8_tflops");
  g.hbm_tbps = r.positive("hbm_tbps");
  g.hbm_gib = r.positive("hbm_gib");
  if (!r.need("nvlink_gbps").is_null()) g.nvlink_gbps = r.positive("nvlink_gbps");
  if (auto it = r.j.find("peer_link_gbps"); it != r.j.end() && !it->is_null()) {
    if (!g.nvlink_gbps) r.fail("peer_link_gbps", "needs nvlink_gbps (a GPU without scale-up links has no peer link)");
    g.peer_link_gbps = r.positive("peer_link_gbps");
    if (*g.peer_link_gbps > *g.nvlink_gbps) r.fail("peer_link_gbps", "must be <= nvlink_gbps");
  }
  g.host_link_gbps = r.positive("host_link_gbps");
  g.sm_count = r.positiveInt("sm_count");
  g.source = r.str("source");
  // Per-GPU fit: only the keys a per-operator profile can fit, each with the
  // data it came from (coefficients_source), so no number is unsourced.
  if (auto it = r.j.find("coefficients"); it != r.j.end()) {
    if (!it->is_object() || it->empty()) r.fail("coefficients", "must be a non-empty object");
    static const std::vector<std::string> fittable = {"eta_c", "eta_w", "eta_a", "eta_kv", "t_layer_us"};
    const std::string where = r.file + ": coefficients";
    const FileReader sub{where, *it};
    sub.checkKeys(fittable);
    for (const std::string& k : fittable)
      if (it->contains(k)) g.coefficients.emplace_back(k, sub.positive(k));
    g.coefficients_source = r.str("coefficients_source");
  } else if (r.j.contains("coefficients_source")) {
    r.fail("coefficients_source", "goes with a \"coefficients\" object");
  }
  return g;
}

// The optional architecture variants of a model preset: "moe", "mla",
// "sliding_window" (issue 47 item 1). Each is an object whose fields are all
// required, checked against the rest of the model.
void parseModelVariants(const FileReader& r, ModelSpec& m) {
  const auto object = [&](const char* key) -> const json* {
    auto it = r.j.find(key);
    if (it == r.j.end()) return nullptr;
    if (!it->is_object()) r.fail(key, "must be an object");
    return &*it;
  };
  std::vector<std::string> wheres;  // keeps each sub-reader's file name alive
  wheres.reserve(3);
  if (const json* o = object("moe")) {
    const FileReader x{wheres.emplace_back(r.file + ": moe"), *o};
    x.checkKeys({"experts", "experts_per_token", "shared_experts", "expert_intermediate", "dense_layers",
                 "moe_layer_step", "expert_groups", "topk_groups"});
    m.experts = x.positiveInt("experts");
    m.experts_per_token = x.positiveInt("experts_per_token");
    if (m.experts_per_token > m.experts) x.fail("experts_per_token", "must be <= experts (" + std::to_string(m.experts) + ")");
    m.shared_experts = x.intIn("shared_experts", 0, 1024, "an integer >= 0");
    m.expert_intermediate = x.positiveInt("expert_intermediate");
    m.dense_layers = x.intIn("dense_layers", 0, m.layers - 1, "an integer in [0, layers)");
    m.moe_layer_step = x.positiveInt("moe_layer_step");
    if (o->contains("expert_groups") || o->contains("topk_groups")) {
      m.expert_groups = x.positiveInt("expert_groups");
      if (m.experts % m.expert_groups != 0)
        x.fail("expert_groups", "must divide experts (" + std::to_string(m.experts) + ")");
      m.topk_groups = x.intIn("topk_groups", 1, m.expert_groups, "an integer in [1, expert_groups]");
      if (m.topk_groups * (m.experts / m.expert_groups) < m.experts_per_token)
        x.fail("topk_groups", "its groups hold fewer experts than experts_per_token");
    }
  } else if (r.j.contains("published_active_params_b")) {
    r.fail("published_active_params_b", "goes with a \"moe\" object");
  }
  if (m.isMoe()) m.published_active_params_b = r.positive("published_active_params_b");
  if (const json* o = object("mla")) {
    const FileReader x{wheres.emplace_back(r.file + ": mla"), *o};
    x.checkKeys({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
    m.q_lora_rank = x.intIn("q_lora_rank", 0, 1'000'000, "an integer >= 0, 0 = no query compression");
    m.kv_lora_rank = x.positiveInt("kv_lora_rank");
    m.qk_nope_head_dim = x.positiveInt("qk_nope_head_dim");
    m.qk_rope_head_dim = x.positiveInt("qk_rope_head_dim");
    m.v_head_dim = x.positiveInt("v_head_dim");
  }
  if (const json* o = object("sliding_window")) {
    const FileReader x{wheres.emplace_back(r.file + ": sliding_window"), *o};
    x.checkKeys({"tokens", "layers"});
    m.sliding_window = x.positiveInt("tokens");
    m.sliding_layers = x.positiveInt("layers");
    if (m.sliding_layers > m.layers) x.fail("layers", "must be <= the model's layers (" + std::to_string(m.layers) + ")");
  }
}

ModelSpec parseModel(const FileReader& r) {
  r.checkKeys({"id", "name", "order", "aliases", "layers", "hidden", "q_heads", "kv_heads",
               "head_dim", "intermediate", "vocab", "tied_embeddings", "dtype_bytes",
               "max_context", "published_params_b", "published_active_params_b", "moe", "mla",
               "sliding_window", "source"});
  // "source": where the architecture figures come from (documentation only).
  if (auto it = r.j.find("source"); it != r.j.end() && !it->is_string()) r.fail("source", "must be a string");
  ModelSpec m;
  m.id = r.str("id");
  m.name = r.str("name");
  if (auto it = r.j.find("aliases"); it != r.j.end()) {
    if (!it->is_array()) r.fail("aliases", "must be an array of strings");
    for (const auto& a : *it) {
      if (!a.is_string()) r.fail("aliases", "must be an array of strings");
      m.aliases.push_back(a.get<std::string>());
    }
  }
  m.layers = r.positiveInt("layers");
  m.hidden = r.positiveInt("hidden");
  m.q_heads = r.positiveInt("q_heads");
  m.kv_heads = r.positiveInt("kv_heads");
  m.head_dim = r.positiveInt("head_dim");
  m.intermediate = r.positiveInt("intermediate");
  m.vocab = r.positiveInt("vocab");
  const json& tied = r.need("tied_embeddings");
  if (!tied.is_boolean()) r.fail("tied_embeddings", "must be true or false");
  m.tied_embeddings = tied.get<bool>();
  m.dtype_bytes = r.positiveInt("dtype_bytes");
  m.max_context = r.positiveInt("max_context");
  m.published_params_b = r.positive("published_params_b");
  if (auto it = r.j.find("source"); it != r.j.end()) m.source = it->get<std::string>();
  parseModelVariants(r, m);
  return m;
}

FabricPreset parseFabric(const FileReader& r) {
  r.checkKeys({"id", "name", "order", "kind", "gpus_per_node", "nic_gbps", "link_latency_us"});
  FabricPreset f;
  f.id = r.str("id");
  f.name = r.str("name");
  f.kind = r.str("kind");
  if (f.kind != "nic" && f.kind != "nvlink") r.fail("kind", "must be \"nic\" or \"nvlink\"");
  f.gpus_per_node = r.positiveInt("gpus_per_node");
  f.nic_gbps = r.positive("nic_gbps");
  f.link_latency_us = r.positive("link_latency_us");
  return f;
}

template <class T>
void sortByOrder(std::vector<std::pair<int, T>>& items, std::vector<T>& out) {
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.id < b.second.id;
  });
  for (auto& [o, t] : items) out.push_back(std::move(t));
}

template <class T>
std::vector<std::string> idsOf(const std::vector<T>& v) {
  std::vector<std::string> ids;
  ids.reserve(v.size());
  for (const auto& x : v) ids.push_back(x.id);
  return ids;
}

[[noreturn]] void unknownPreset(const char* kind, std::string_view id,
                                const std::vector<std::string>& known,
                                const std::vector<std::string>& candidates) {
  std::string msg = std::string("unknown ") + kind + " preset '" + std::string(id) + "'";
  const std::string hint = costdetail::closestMatch(id, candidates);
  if (!hint.empty()) msg += ": did you mean '" + hint + "'?";
  msg += " known: " + costdetail::joinList(known);
  throw InputError(msg);
}

}  // namespace

// ----------------------------------------------------------- PresetRegistry

PresetRegistry::PresetRegistry(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::pair<int, GpuSpec>> gpus;
  std::vector<std::pair<int, ModelSpec>> models;
  std::vector<std::pair<int, FabricPreset>> fabrics;
  std::set<std::string> gpuIds, modelIds, fabricIds;
  for (const auto& [path, text] : files) {
    const std::string file = "resources/" + path;
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      throw InputError(file + ": invalid JSON: " + e.what());
    }
    if (!j.is_object()) throw InputError(file + ": must be a JSON object");
    const FileReader r{file, j};
    auto dup = [&](std::set<std::string>& ids, const std::string& id) {
      if (!ids.insert(id).second) r.fail("id", "duplicate preset id '" + id + "'");
    };
    if (path.rfind("hardware/", 0) == 0) {
      auto g = parseGpu(r);
      dup(gpuIds, g.id);
      gpus.emplace_back(r.order(), std::move(g));
    } else if (path.rfind("models/", 0) == 0) {
      auto m = parseModel(r);
      dup(modelIds, m.id);
      for (const auto& a : m.aliases) dup(modelIds, a);
      models.emplace_back(r.order(), std::move(m));
    } else if (path.rfind("fabric/", 0) == 0) {
      auto f = parseFabric(r);
      dup(fabricIds, f.id);
      fabrics.emplace_back(r.order(), std::move(f));
    } else {
      throw InputError(file + ": not under hardware/, models/ or fabric/");
    }
  }
  sortByOrder(gpus, gpus_);
  sortByOrder(models, models_);
  sortByOrder(fabrics, fabrics_);
}

const PresetRegistry& PresetRegistry::builtin() {
  static const PresetRegistry reg = [] {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& f : costdetail::embeddedPresetFiles()) files.emplace_back(f.path, f.text);
    return PresetRegistry(files);
  }();
  return reg;
}

const GpuSpec& PresetRegistry::gpu(std::string_view id) const {
  for (const auto& g : gpus_)
    if (g.id == id) return g;
  unknownPreset("GPU", id, gpus(), gpus());
}

const ModelSpec& PresetRegistry::model(std::string_view id) const {
  for (const auto& m : models_) {
    if (m.id == id) return m;
    for (const auto& a : m.aliases)
      if (a == id) return m;
  }
  std::vector<std::string> candidates;
  for (const auto& m : models_) {
    candidates.push_back(m.id);
    candidates.insert(candidates.end(), m.aliases.begin(), m.aliases.end());
  }
  unknownPreset("model", id, models(), candidates);
}

const FabricPreset& PresetRegistry::fabric(std::string_view id) const {
  for (const auto& f : fabrics_)
    if (f.id == id) return f;
  unknownPreset("fabric", id, fabrics(), fabrics());
}

bool PresetRegistry::hasGpu(std::string_view id) const {
  return std::any_of(gpus_.begin(), gpus_.end(), [&](const auto& g) { return g.id == id; });
}
bool PresetRegistry::hasModel(std::string_view id) const {
  return std::any_of(models_.begin(), models_.end(), [&](const auto& m) {
    return m.id == id || std::find(m.aliases.begin(), m.aliases.end(), id) != m.aliases.end();
  });
}
bool PresetRegistry::hasFabric(std::string_view id) const {
  return std::any_of(fabrics_.begin(), fabrics_.end(), [&](const auto& f) { return f.id == id; });
}

std::vector<std::string> PresetRegistry::gpus() const { return idsOf(gpus_); }
std::vector<std::string> PresetRegistry::models() const { return idsOf(models_); }
std::vector<std::string> PresetRegistry::fabrics() const { return idsOf(fabrics_); }

}  // namespace sl
