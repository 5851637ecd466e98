#pragma once
// GPU, model and fabric presets (20-cost-model.md). The data lives in
// resources/{hardware,models,fabric}/*.json and is embedded into core_cost at
// build time, so PresetRegistry::builtin() works from any directory.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sl {

/// One GPU type. Units as in the preset files: TFLOP/s (10^12), TB/s
/// (10^12 B/s), GiB (2^30 B), GB/s per direction (10^9 B/s). Every file
/// names its public source (datasheet) in "source".
struct GpuSpec {
  std::string id;
  std::string name;
  double bf16_tflops = 0;               ///< dense bf16 peak
  std::optional<double> fp8_tflops;     ///< dense FP8 peak; none = no FP8 tensor cores
  double hbm_tbps = 0;                  ///< HBM bandwidth, TB/s
  double hbm_gib = 0;                   ///< HBM size, GiB
  /// Scale-up link (NVLink, or AMD xGMI) GB/s per direction, all of the
  /// GPU's links together; none = no such link.
  std::optional<double> nvlink_gbps;
  /// GB/s per direction between one pair of GPUs when the scale-up links
  /// form a direct mesh (xGMI: one link per peer); none = switched (NVSwitch,
  /// a pair gets nvlink_gbps).
  std::optional<double> peer_link_gbps;
  double host_link_gbps = 0;            ///< host (PCIe) link GB/s per direction
  /// Streaming multiprocessors (AMD: compute units): the slots the decode
  /// attention kernel's CTAs are scheduled over (docs/cost-model.md,
  /// "Heterogeneity"). Every preset file sets it; 132 (H100 SXM) here only
  /// for hand-built specs.
  int sm_count = 132;
  std::string source;                   ///< where the figures come from
  /// Cost coefficients fitted on this GPU's own per-operator data (the
  /// preset's optional "coefficients" object: a subset of eta_c, eta_w,
  /// eta_a, eta_kv, t_layer_us), applied on top of the built-in defaults
  /// (which are the H100 SXM fit); empty = the defaults. See
  /// gpuCoefficients() in cost/cost_model.h and docs/cost-model.md.
  std::vector<std::pair<std::string, double>> coefficients;
  std::string coefficients_source;      ///< the data and command of that fit

  double flopsPerSec() const { return bf16_tflops * 1e12; }
  bool hasFp8() const { return fp8_tflops.has_value(); }
  /// Dense FP8 peak in FLOP/s, 0 when the GPU has no FP8.
  double fp8FlopsPerSec() const { return fp8_tflops ? *fp8_tflops * 1e12 : 0.0; }
  double hbmBytesPerSec() const { return hbm_tbps * 1e12; }
  double hbmBytes() const { return hbm_gib * 1073741824.0; }
  /// NVLink bytes/s per direction, 0 when the GPU has no NVLink.
  double nvlinkBytesPerSec() const { return nvlink_gbps ? *nvlink_gbps * 1e9 : 0.0; }
  /// Bytes/s per direction between two GPUs over the scale-up links: the
  /// mesh's per-peer link when there is one, else nvlinkBytesPerSec().
  double peerLinkBytesPerSec() const {
    return nvlink_gbps && peer_link_gbps ? *peer_link_gbps * 1e9 : nvlinkBytesPerSec();
  }
  double hostLinkBytesPerSec() const { return host_link_gbps * 1e9; }
  /// The link tensor-parallel collectives use: NVLink, else the host link.
  double intraNodeLinkBytesPerSec() const {
    return nvlink_gbps ? nvlinkBytesPerSec() : hostLinkBytesPerSec();
  }
};

/// One model architecture, numbers as in its published config. Parameter
/// count and KV bytes per token are derived, never typed in.
struct ModelSpec {
  std::string id;
  std::string name;                      ///< display name, e.g. "Llama-3.1-70B"
  std::vector<std::string> aliases;      ///< other ids accepted by PresetRegistry::model
  int layers = 0;
  int hidden = 0;
  int q_heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int intermediate = 0;
  int vocab = 0;
  bool tied_embeddings = false;
  int dtype_bytes = 2;
  int max_context = 0;
  double published_params_b = 0;         ///< published total, billions (tests only)
  double published_active_params_b = 0;  ///< MoE: published active parameters, billions (tests only)
  std::string source;                    ///< where the figures come from ("" if not given)

  // Mixture of experts (issue 47; the preset's "moe" object; docs/cost-model.md
  // "Mixture of experts"). experts == 0: a dense model, every field below 0.
  int experts = 0;              ///< routed experts per MoE layer
  int experts_per_token = 0;    ///< routed experts each token is sent to (top-k)
  int shared_experts = 0;       ///< experts every token goes through
  int expert_intermediate = 0;  ///< FFN width of one expert (routed and shared alike)
  int dense_layers = 0;         ///< leading layers with a dense FFN of `intermediate`
  int moe_layer_step = 1;       ///< after those, every step-th layer is MoE, the others dense
  /// Node-limited (group-limited) routing (DeepSeek-V3 config n_group /
  /// topk_group): the experts split into `expert_groups` contiguous groups and
  /// a token picks its experts inside `topk_groups` of them. 0: no limit.
  int expert_groups = 0;
  int topk_groups = 0;
  // Multi-head latent attention (DeepSeek; the preset's "mla" object).
  // kv_lora_rank == 0: none. The KV cache holds kv_lora_rank + qk_rope_head_dim
  // values per token and layer (one latent for all heads).
  int q_lora_rank = 0;          ///< 0: queries projected directly
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  // Sliding-window attention (the preset's "sliding_window" object): this many
  // of the layers attend to the last `sliding_window` tokens only and keep
  // only those in the KV cache (CostModel::kvBytesForContext, kvCapacityBlocks,
  // the decode read and prefill attention; docs/cost-model.md "Sliding-window KV").
  int sliding_window = 0;
  int sliding_layers = 0;

  bool isMoe() const { return experts > 0; }
  bool hasMla() const { return kv_lora_rank > 0; }
  /// Layers whose FFN is a mixture of experts (0 for a dense model).
  int moeLayers() const;
  /// KV bytes per token: 2 (K and V) · layers · kv_heads · head_dim ·
  /// dtype_bytes; with MLA layers · (kv_lora_rank + qk_rope_head_dim) · dtype_bytes.
  std::int64_t kvBytesPerToken() const;
  /// The attention projections of one layer: hidden·(q_heads + 2·kv_heads)·head_dim
  /// + q_heads·head_dim·hidden; with MLA the low-rank q, kv and output projections.
  std::int64_t attentionParamsPerLayer() const;
  /// A dense layer's linear weights: attention + 3·hidden·intermediate.
  std::int64_t linearParamsPerLayer() const;
  /// One expert's weights (gate, up, down): 3·hidden·expert_intermediate.
  std::int64_t expertParams() const { return std::int64_t{3} * hidden * expert_intermediate; }
  /// Every routed expert of every MoE layer (0 for a dense model).
  std::int64_t routedExpertParams() const { return expertParams() * experts * moeLayers(); }
  /// All layers' linear weights: dense layers as linearParamsPerLayer(); MoE
  /// layers attention + router (hidden·experts) + routed and shared experts.
  std::int64_t layerLinearParams() const;
  /// Parameters that take part in per-token matmuls: all layers' linear
  /// weights plus the LM head (vocab × hidden, also when tied).
  std::int64_t linearParams() const;
  /// The linear weights one token multiplies: the routed experts counted
  /// experts_per_token times a MoE layer (= linearParams() for a dense model).
  std::int64_t activeLinearParams() const;
  /// Embedding + layers (linear + 2 RMSNorms, + MLA's two latent norms) +
  /// final norm + LM head unless tied.
  std::int64_t paramCount() const;
  /// paramCount() with only the experts a token uses (dense: paramCount()).
  std::int64_t activeParamCount() const;
  /// paramCount() · dtype_bytes.
  std::int64_t weightBytes() const;
};

/// Inter-instance fabric preset (resources/fabric/). Named FabricPreset
/// because sl::FabricSpec is the scenario's cluster.fabric section; the
/// fields map onto it one to one.
struct FabricPreset {
  std::string id;
  std::string name;
  std::string kind = "nic";      ///< "nic" or "nvlink"
  int gpus_per_node = 8;
  double nic_gbps = 100;         ///< gigabit/s per node (arrow-nvlink: 3200 = 400 GB/s)
  double link_latency_us = 5;

  double bytesPerSec() const { return nic_gbps * 1e9 / 8.0; }
};

/// Lookup of presets by id. Unknown ids throw sl::InputError with a
/// did-you-mean hint and the list of known ids.
class PresetRegistry {
public:
  /// The presets embedded from resources/ at build time.
  static const PresetRegistry& builtin();

  /// Builds a registry from (path, JSON text) pairs; path is relative to
  /// resources/ ("hardware/x.json", "models/x.json", "fabric/x.json") and
  /// picks the kind. Throws sl::InputError naming the file and field.
  explicit PresetRegistry(const std::vector<std::pair<std::string, std::string>>& files);

  const GpuSpec& gpu(std::string_view id) const;
  const ModelSpec& model(std::string_view id) const;  ///< id or alias
  const FabricPreset& fabric(std::string_view id) const;

  bool hasGpu(std::string_view id) const;
  bool hasModel(std::string_view id) const;
  bool hasFabric(std::string_view id) const;

  /// Ids in a stable order (each file's "order" field, then id); the first
  /// is the default (h100-sxm-80g for GPUs).
  std::vector<std::string> gpus() const;
  std::vector<std::string> models() const;
  std::vector<std::string> fabrics() const;

  const std::vector<GpuSpec>& allGpus() const { return gpus_; }
  const std::vector<ModelSpec>& allModels() const { return models_; }
  const std::vector<FabricPreset>& allFabrics() const { return fabrics_; }

private:
  std::vector<GpuSpec> gpus_;
  std::vector<ModelSpec> models_;
  std::vector<FabricPreset> fabrics_;
};

}  // namespace sl
