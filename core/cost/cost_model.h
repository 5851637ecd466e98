#pragma once
// Analytic roofline cost model of one serving instance (20-cost-model.md):
// iteration time of a batch on tp GPUs, KV capacity, swap / all-reduce time.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/collectives.h"
#include "cost/moe.h"
#include "cost/presets.h"

namespace sl {

/// Efficiency factors and overheads. Defaults from 20-cost-model.md except
/// eta_w and t_layer_us, refitted to per-operator H100 kernel profiles
/// (docs/cost-model.md "Coefficients and their sources"; the spec's values
/// are resources/profiles/spec-defaults.json). t_step_us and t_seq_us model
/// the vllm-v1 engine generation (resources/engines/).
/// Keys in JSON are the field names (e.g. "eta_c", "t_step_us").
/// How decode attention's time depends on the batch's length mix
/// (`cluster.cost.hetero`; docs/cost-model.md "Heterogeneity").
enum class HeteroMode {
  Kernel,  ///< "kernel" (default): CTAs of a FlashAttention-style decode kernel over SM slots
  Cv,      ///< "cv": the spec's h = min(h_max, 1 + kappa·CV)
};
const char* heteroModeName(HeteroMode m);  ///< "kernel", "cv"
/// "kernel" or "cv"; anything else: InputError "<where>: must be \"kernel\" or \"cv\" (got ...)".
HeteroMode parseHeteroMode(const nlohmann::json& v, const std::string& where);

struct CostCoefficients {
  double eta_c = 0.70;     ///< compute efficiency of linear layers
  double eta_a = 0.55;     ///< compute efficiency of prefill attention
  double eta_w = 0.90;     ///< bandwidth efficiency of the weight read (spec: 0.73)
  double eta_kv = 0.51;    ///< bandwidth efficiency of the decode KV read
  double t_step_us = 126;  ///< per-iteration overhead
  double t_layer_us = 46;  ///< per-layer overhead (spec: 32)
  double t_seq_us = 4.4;   ///< per-sequence overhead
  HeteroMode hetero = HeteroMode::Kernel;  ///< which heterogeneity rule (JSON: a string)
  double kappa = 0.6;      ///< heterogeneity slope: h = min(h_max, 1 + kappa·CV) (cv mode)
  double h_max = 2.1;      ///< heterogeneity cap (cv mode)
  double attn_ctas_per_sm = 2;  ///< kernel mode: decode-attention CTAs resident per SM
  double alpha_hop_us = 1.0;  ///< latency of one all-reduce ring hop
  double activation_reserve_gib = 1.0;            ///< per-GPU activation reserve ...
  double activation_reserve_per_vocab_kib = 1.0;  ///< ... plus this × vocab KiB

  /// Applies the keys of `j` (a JSON object) on top of `base`. `where` names
  /// the place in errors: unknown key → InputError "<where>.<key>: unknown
  /// cost coefficient: did you mean '...'?". Values must be finite numbers:
  /// eta_* > 0, h_max ≥ 1, attn_ctas_per_sm > 0, all others ≥ 0 (a
  /// least-squares fit may give 0); `hetero` is "kernel" or "cv".
  static CostCoefficients fromJson(const nlohmann::json& j, std::string_view where,
                                   const CostCoefficients& base);
  /// fromJson(j, where, defaults)
  static CostCoefficients fromJson(const nlohmann::json& j, std::string_view where = "cluster.cost");
  /// All keys, canonical (alphabetical) order.
  nlohmann::json toJson() const;
  /// The JSON keys in declaration order.
  static const std::vector<std::string>& keys();
};

/// The built-in defaults with the GPU's own per-operator fit on top
/// (GpuSpec::coefficients; none = the defaults, which are the H100 SXM fit).
/// Every cost model built from presets starts here; a cost profile
/// (cluster.profile) replaces it, an engine preset and cluster.cost apply on top.
CostCoefficients gpuCoefficients(const GpuSpec& gpu);

/// Storage precision of the weights or of the KV cache (the scenario's
/// cluster.model_dtype / cluster.kv_dtype; docs/cost-model.md, "Precision").
/// bf16 and fp16 cost the same (the preset's dtype_bytes, 2 for every
/// preset; the same tensor-core peak); fp8 is 1 byte.
/// MXFP4 (OCP microscaling: 4-bit E2M1 values and one 8-bit scale per 32,
/// 4.25 bits a weight) only for an MoE model's routed experts (gpt-oss ships
/// them so); it is weight-only: the GEMMs run at the bf16 peak.
enum class DType { BF16, FP16, FP8, MXFP4 };
const char* dtypeName(DType d);  ///< "bf16", "fp16", "fp8", "mxfp4"
/// Parses "bf16" | "fp16" | "fp8"; InputError naming `field` otherwise.
DType parseDType(std::string_view s, std::string_view field);
/// parseDType plus "mxfp4" (cluster.expert_dtype).
DType parseExpertDType(std::string_view s, std::string_view field);
struct Precision {
  DType weights = DType::BF16;  ///< the layers' linear weights
  DType kv = DType::BF16;       ///< the KV cache
  /// An MoE model's routed experts (cluster.expert_dtype); unset = `weights`.
  std::optional<DType> experts = std::nullopt;
};
/// InputError naming `weightsField` / `kvField` when `p` asks for fp8 on a
/// GPU without FP8 tensor cores (fp8_tflops null, e.g. a100-40g).
void checkPrecision(const GpuSpec& gpu, const Precision& p, std::string_view weightsField, std::string_view kvField,
                    std::string_view expertsField = "cluster.expert_dtype");

/// A calibrated cost profile file: {"gpu": ..., "model": ..., "coefficients": {...}}.
/// Other top-level keys (fit statistics) are kept out of the way and ignored.
struct CostProfile {
  std::string gpu;    ///< preset id it was fitted for ("" if absent)
  std::string model;  ///< preset id it was fitted for ("" if absent)
  CostCoefficients coefficients;
};

/// Reads a profile; errors (InputError) name the file. Missing coefficients
/// keep their defaults.
CostProfile readCostProfile(const std::string& path);
/// readCostProfile(path).coefficients
CostCoefficients loadCostProfile(const std::string& path);
nlohmann::json costProfileJson(const CostProfile& p);
/// Writes costProfileJson(p) (indented); InputError if the file cannot be written.
void writeCostProfile(const std::string& path, const CostProfile& p);

/// One iteration's batch, summarised. A plain aggregate the engine updates
/// incrementally (see addDecodeSeq / addPrefillChunk).
struct BatchShape {
  int decode_seqs = 0;
  double decode_ctx_sum = 0;    ///< Σ L_i (context length of each decode sequence)
  double decode_ctx_sumsq = 0;  ///< Σ L_i²
  int prefill_seqs = 0;
  double prefill_tokens = 0;    ///< Σ n_j (new tokens of each prefill chunk)
  double prefill_attn = 0;      ///< Σ n_j · (c_j + n_j / 2), c_j = cached tokens
  /// Speculative decoding: draft tokens the step verifies beyond the one
  /// token of each decode sequence (k per sequence; cost/speculative.h). The
  /// GEMMs run over them; the decode KV is still read once per sequence.
  double verify_tokens = 0;
};

/// Tokens the step's GEMMs run over: prefill + one per decode sequence +
/// the speculative tokens verified.
inline double batchTokens(const BatchShape& b) {
  return b.prefill_tokens + b.decode_seqs + b.verify_tokens;
}

inline void addDecodeSeq(BatchShape& b, double ctx) {
  b.decode_seqs += 1;
  b.decode_ctx_sum += ctx;
  b.decode_ctx_sumsq += ctx * ctx;
}
inline void addPrefillChunk(BatchShape& b, double newTokens, double cachedTokens = 0) {
  b.prefill_seqs += 1;
  b.prefill_tokens += newTokens;
  b.prefill_attn += newTokens * (cachedTokens + newTokens / 2);
}
inline BatchShape& operator+=(BatchShape& a, const BatchShape& b) {
  a.decode_seqs += b.decode_seqs;
  a.decode_ctx_sum += b.decode_ctx_sum;
  a.decode_ctx_sumsq += b.decode_ctx_sumsq;
  a.prefill_seqs += b.prefill_seqs;
  a.prefill_tokens += b.prefill_tokens;
  a.prefill_attn += b.prefill_attn;
  a.verify_tokens += b.verify_tokens;
  return a;
}

/// Coefficient of variation of the decode contexts (population sd / mean);
/// 0 with < 2 decode sequences or no context.
double decodeContextCv(const BatchShape& b);

/// Seconds per term of the iteration time; total_s is their sum.
struct CostBreakdown {
  /// max(compute, weight read) of the linear layers; for an MoE model every
  /// linear layer but the routed experts (attention, router, shared and
  /// dense FFNs, LM head), which expert_s holds.
  double linear_s = 0;
  /// MoE: the routed experts' grouped GEMMs, the busiest expert-parallel
  /// rank's max(compute, touched experts' weight read); 0 for a dense model.
  double expert_s = 0;
  /// MoE with data-parallel attention: dispatch + combine all-to-all of
  /// every MoE layer (cost/moe.h AllToAllModel); 0 otherwise.
  double a2a_s = 0;
  double prefill_attn_s = 0;
  double decode_attn_s = 0;   ///< includes the heterogeneity factor h
  double overhead_s = 0;      ///< t_step + t_layer·layers + t_seq·#seqs
  double comm_s = 0;          ///< tensor-parallel all-reduces (2 per layer; none with data-parallel attention)
  /// With async scheduling (CostModel::asyncScheduling): the step's CPU part
  /// (t_step + t_seq·#seqs) hidden behind its GPU part; total_s is the sum of
  /// the terms above minus this. 0 otherwise.
  double overlap_s = 0;
  double total_s = 0;
  double heterogeneity_h = 1;  ///< decode attention time over its bandwidth-bound time
};

class CostModel {
public:
  /// tp ≥ 1, else InputError naming cluster.tp. FP8 in `p` on a GPU
  /// without FP8 (A100): InputError naming cluster.model_dtype / kv_dtype.
  /// `allreduce` picks the tensor-parallel all-reduce model (collectives.h;
  /// `cluster.allreduce`).
  CostModel(const GpuSpec& gpu, const ModelSpec& model, int tp = 1, CostCoefficients c = {},
            Precision p = {}, AllReduceMode allreduce = AllReduceMode::Vllm);
  /// Default (bf16) precision with the given all-reduce model.
  CostModel(const GpuSpec& gpu, const ModelSpec& model, int tp, CostCoefficients c, AllReduceMode allreduce)
      : CostModel(gpu, model, tp, c, Precision{}, allreduce) {}

  const GpuSpec& gpu() const { return gpu_; }
  const ModelSpec& model() const { return model_; }
  int tp() const { return tp_; }
  const CostCoefficients& coefficients() const { return c_; }
  AllReduceMode allReduceMode() const { return allreduce_; }
  const Precision& precision() const { return p_; }
  /// Async scheduling (vLLM V1's --async-scheduling, SGLang's overlap
  /// scheduler; cluster.frontend.async_scheduling): the next step is
  /// scheduled while this one runs on the GPU, so an iteration lasts
  /// max(CPU part, GPU part) instead of their sum. CPU part: t_step +
  /// t_seq·#seqs; GPU part: everything else (docs/cost-model.md).
  void setAsyncScheduling(bool on) { async_ = on; }
  bool asyncScheduling() const { return async_; }

  /// Deploys an MoE model with expert parallelism (docs/cost-model.md
  /// "Expert parallelism"): ep ranks over the tp GPUs, attention tensor or
  /// data parallel, a routing model, EPLB replicas; the all-to-all's links.
  /// InputError naming the field: ep < 1 or not dividing tp (cluster.ep) or
  /// experts + ep_redundant (cluster.ep_redundant); any of it on a dense
  /// model; attention_dp without ep = tp; replicas without eplb placement; a
  /// routing histogram of the wrong length (cluster.moe_routing.path).
  void setMoe(const MoeDeployment& d);
  const MoeDeployment& moe() const { return moe_; }
  /// Where the experts live under setMoe (one rank of every expert when plain).
  const ExpertPlacement& placement() const { return placement_; }
  /// The routed experts' time for a step of N tokens (CostBreakdown::expert_s).
  double expertSeconds(double N) const;
  /// The all-to-all's time for a step of N tokens (CostBreakdown::a2a_s).
  /// `normalKernels` (a step with prefill tokens): DeepEP's normal kernels,
  /// which send a token once to each remote node it needs
  /// (AllToAllModel::dedupSeconds); else the low-latency kernels, one copy per
  /// token-expert pair (AllToAllModel::seconds).
  double allToAllSeconds(double N, bool normalKernels = false) const;
  /// Normal kernels: expected remote nodes per token (0 within one node).
  double remoteNodesPerToken() const { return remoteNodes_; }
  /// Routed experts (replicas counted) that N tokens touch in one MoE layer
  /// under the deployment's routing: Σ over ranks of rankTouched(r, N)
  /// (balanced: expertsTouched(N)). 0 for a dense model.
  double expertReplicasTouched(double N) const;
  /// Bytes of routed-expert weights a step of N tokens reads, all GPUs and
  /// MoE layers: expertReplicasTouched(N) · one expert's bytes · MoE layers.
  double expertWeightBytesRead(double N) const;
  /// Expected token-expert pairs per rank for N tokens (the straggler term
  /// not added): N · rankShare(r). Empty for a dense model.
  std::vector<double> rankLoads(double N) const;

  CostBreakdown breakdown(const BatchShape& b) const;
  /// Same as breakdown(b).total_s; no allocation. An empty batch costs 0.
  double iterationSeconds(const BatchShape& b) const;
  /// Decode attention's time over its bandwidth-bound time Σ L · kv / (tp·BW·η_kv):
  /// kernel mode (default) kernelHeterogeneity(); cv mode min(h_max, 1 + kappa ·
  /// CV of decode contexts), 1 with < 2 decode seqs. O(1): only n, Σ L, Σ L².
  double heterogeneity(const BatchShape& b) const;
  /// The kernel rule (docs/cost-model.md "Heterogeneity"): with H = ⌈kv_heads/tp⌉
  /// CTAs per sequence, P = SMs × attn_ctas_per_sm slots, waves w = max(1, n·H/P)
  /// (split-KV fills the slots when n·H < P), ρ = (1 + CV²) / w the longest
  /// sequences' critical path (length-biased mean Σ L²/Σ L) over the per-slot
  /// work: h = max(ρ, 1 + ρ/2 · (1 − 1/w)); 1 with no decode context.
  double kernelHeterogeneity(const BatchShape& b) const;
  /// Data-parallel attention: the busiest rank's decode KV read over the mean
  /// rank's (docs/cost-model.md "Data-parallel ranks' imbalance"). The n
  /// decode sequences spread round-robin over the tp ranks, at most c =
  /// ⌈n/tp⌉ a rank; the busiest rank's Σ L ≈ c·L̄ + z·σ_L·√c with z =
  /// √(2 ln min(n, tp)) (the largest of roughly normal sums, as the expert
  /// straggler), over the mean rank's n·L̄/tp: (tp/n)·(c + z·CV·√c), ≥ 1. 1
  /// without data-parallel attention or decode sequences. O(1).
  double dpRankImbalance(const BatchShape& b) const;
  /// H = ⌈kv_heads / tp⌉ (≥ 1), the CTAs one sequence gives per GPU without split.
  int attentionCtasPerSeq() const { return ctasPerSeq_; }
  /// P: SMs × attn_ctas_per_sm.
  double attentionSlots() const { return slots_; }

  // ---- memory
  /// Whole instance, at the KV dtype: 2 · layers · kv_heads · head_dim · (1 for
  /// fp8, else dtype_bytes).
  std::int64_t kvBytesPerToken() const { return kvBytesPerToken_; }
  /// KV bytes a GPU of the tp group holds per token: its 1/tp share of the
  /// heads; with MLA the whole latent (every head reads the same one, so
  /// tensor parallelism replicates it, as vLLM does).
  /// With more GPUs than KV heads (tp > kv_heads) each GPU keeps one whole
  /// head (vLLM replicates KV heads): 1/kv_heads of the bytes. With
  /// data-parallel attention each GPU keeps whole tokens of its own
  /// sequences: 1/tp of the instance's tokens, MLA or not.
  double kvBytesPerTokenPerGpu() const { return static_cast<double>(kvBytesPerToken()) / kvSplit(); }
  // Sliding-window attention (ModelSpec::sliding_window; docs/cost-model.md
  // "Sliding-window KV"). Without a window: kvBytesPerTokenFull() =
  // kvBytesPerToken(), kvBytesPerTokenWindowed() = 0.
  /// Bytes per token of the layers that keep the whole context (whole instance).
  std::int64_t kvBytesPerTokenFull() const { return kvBytesPerToken_ - kvWindowedPerToken_; }
  /// Bytes per token of the sliding-window layers (whole instance).
  std::int64_t kvBytesPerTokenWindowed() const { return kvWindowedPerToken_; }
  /// Tokens a sliding layer keeps of a sequence of `tokens` under a paged
  /// cache of `block_size` (vLLM V1's SlidingWindowManager): the blocks from
  /// the one holding token tokens − W + 1 on, ⌈t/bs⌉ − ⌊max(0, t − W + 1)/bs⌋
  /// blocks, at most ⌈(W + bs − 2)/bs⌉; times block_size. `tokens` rounded up
  /// to blocks without a window.
  std::int64_t windowTokensHeld(std::int64_t tokens, int block_size) const;
  /// KV bytes (whole instance) one sequence of `tokens` holds in whole
  /// blocks: ⌈t/bs⌉·bs tokens on the full layers + windowTokensHeld on the
  /// sliding ones.
  double kvBytesForContext(std::int64_t tokens, int block_size) const;
  /// The most sequences that hold KV at once (cluster.max_num_seqs; default
  /// 256, vLLM's): with a sliding window, kvCapacityBlocks counts on at most
  /// this many windows.
  void setMaxSeqs(int n) { maxSeqs_ = n; }
  int maxSeqs() const { return maxSeqs_; }
  /// Whole instance: the layers' linear weights at the model dtype (1 B for
  /// fp8); embedding, norms and LM head stay at dtype_bytes.
  std::int64_t weightBytes() const { return weightBytes_; }
  /// MoE: routed experts a step of N tokens touches in each MoE layer under
  /// balanced routing, E·(1 − (1 − k/E)^N); 0 for a dense model.
  double expertsTouched(double N) const { return model_.isMoe() ? model_.experts * touchedFraction(N) : 0.0; }
  /// One GPU's share: every weight but the routed experts over tp (whole on
  /// every GPU with data-parallel attention), plus the routed experts and
  /// their EPLB replicas, (E + ep_redundant)/E of them, over tp.
  double weightBytesPerGpu() const { return weightsPerGpu_; }
  /// activation_reserve_gib GiB + activation_reserve_per_vocab_kib KiB × vocab.
  double activationReserveBytes() const;
  /// HBM × util − weights / tp − activation reserve (may be ≤ 0).
  double usableKvBytesPerGpu(double gpu_memory_utilization) const;
  /// ⌊usable / (block_size · kv bytes per token / tp) · kv_capacity_fraction⌋
  /// blocks per instance. With a sliding window the tokens T that fit are the
  /// larger of usable / all layers' bytes and (usable − maxSeqs · W' · the
  /// sliding layers' bytes) / the full layers' bytes, W' = ⌈(W + bs − 2)/bs⌉·bs
  /// the most a sequence's window holds: ≤ maxSeqs sequences of Σ t ≤ T tokens
  /// then fit (docs/cost-model.md "Sliding-window KV"). InputError when the weights do not fit ("Llama-3.1-70B
  /// needs 141 GB of weights; 1 × h100-sxm-80g offers 76 GB usable ...: use
  /// tp ≥ 2") or no block fits; also for util / fraction outside (0, 1] or
  /// block_size < 1.
  std::int64_t kvCapacityBlocks(double gpu_memory_utilization, double kv_capacity_fraction,
                                int block_size) const;

  // ---- links
  double hostLinkBytesPerSec() const { return gpu_.hostLinkBytesPerSec(); }  ///< per GPU
  double nvlinkBytesPerSec() const { return gpu_.nvlinkBytesPerSec(); }      ///< 0 if none
  /// Between one pair of GPUs (KV transfers): less than nvlinkBytesPerSec()
  /// on a direct mesh (MI300X xGMI), equal on NVSwitch; 0 if none.
  double peerLinkBytesPerSec() const { return gpu_.peerLinkBytesPerSec(); }
  /// Time to copy `bytes` of an instance's KV to/from host memory: each of
  /// the tp GPUs moves its 1/tp share over its own host link in parallel.
  double swapSeconds(double bytes) const;
  /// One all-reduce of `bytes` on the instance's tp GPUs; 0 when tp = 1.
  /// vllm / nccl: the measured-collective fits of collectives.h at this GPU's
  /// link (NVLink, host link if none); ring: 2(tp−1)/tp · bytes / (link · 0.5)
  /// + 2(tp−1) · α_hop (20-cost-model.md).
  double allreduceSeconds(double bytes) const;
  /// Which implementation carries a message of `bytes`: "nccl", "one-shot",
  /// "two-shot", "ring"; "" when tp = 1.
  const char* allreduceImpl(double bytes) const;
  /// Bytes of one all-reduce for N batched tokens: N · hidden · activation bytes.
  double allreduceBytes(double tokens) const { return tokens * arBytesPerToken_; }
  /// All-reduces per iteration: 2 per layer (attention output, MLP output).
  int allreducesPerIteration() const { return 2 * model_.layers; }

private:
  GpuSpec gpu_;
  ModelSpec model_;
  int tp_;
  CostCoefficients c_;
  Precision p_;
  AllReduceMode allreduce_;
  std::vector<AllReduceSegment> arSegments_;  // vllm / nccl, tp > 1
  double arBytesPerToken_;     // hidden · 2 bytes (activations stay 16-bit)
  std::int64_t kvBytesPerToken_;
  std::int64_t weightBytes_;
  // Precomputed per-batch constants (seconds).
  double linComputePerToken_;  // 2·(P_layers·F/F_w + P_head) / (tp·F·η_c), F_w the weights' peak
  double linWeights_;          // W / (tp·BW·η_w); MoE: every weight but the routed experts (÷1 with DP attention)
  double keepProb_ = 1;        // MoE: 1 − k/E, the chance one token leaves a given expert untouched
  /// The share of the routed experts N tokens touch under balanced routing, 1 − (1 − k/E)^N.
  double touchedFraction(double N) const { return 1.0 - std::pow(keepProb_, N); }
  // MoE (setMoe): per MoE layer and pair / touched replica, on one rank's tp/ep GPUs.
  MoeDeployment moe_;
  ExpertPlacement placement_;
  bool balanced_ = true;                              // routing balanced, no replicas: every rank alike, closed forms
  double expertPair_ = 0;                             // seconds of one token-expert pair's GEMMs, all MoE layers
  double expertRead_ = 0;                             // seconds to read one expert's weights, all MoE layers
  double weightsPerGpu_ = 0;                          // weightBytesPerGpu()
  double a2aBytesPerToken_ = 0;                       // dispatch: k · hidden · dispatch bytes (combine: 2 bytes)
  std::vector<double> gridN_, gridExpert_, gridA2a_;  // skewed routing: the terms tabulated over N
  std::vector<double> gridA2aNormal_;                 // the same, normal kernels
  double remoteNodes_ = 0;                            // ExpertPlacement::expectedRemoteNodes
  void applyMoe();                                    // (re)computes the members above from moe_
  double expertBytesPerParam() const;
  /// How many ways an instance's KV splits over its GPUs (kvBytesPerTokenPerGpu).
  double kvSplit() const {
    if (moe_.attentionDp) return tp_;
    if (model_.hasMla()) return 1;
    return tp_ > model_.kv_heads && model_.kv_heads > 0 ? model_.kv_heads : tp_;
  }                 // the routed experts' dtype: 2 (bf16), 1 (fp8), 0.53125 (mxfp4)
  double expertSecondsExact(double N) const;
  double allToAllSecondsExact(double N, bool normalKernels) const;
  double fromGrid(const std::vector<double>& y, double N) const;
  double prefillPerUnit_;      // 4·layers·q_heads·head_dim / (tp·F·η_a)
  double decodePerToken_;      // kv_bytes / (tp·BW·η_kv); with a window the full layers' bytes only
  double decodeSlidePerToken_ = 0;       // the sliding layers' kv_bytes / (tp·BW·η_kv)
  double prefillSlidePerUnit_ = 0;       // prefillPerUnit_'s share of the sliding layers (prefillPerUnit_: the others)
  double window_ = 0;                    // sliding_window tokens (0: none)
  std::int64_t kvWindowedPerToken_ = 0;  // kvBytesPerTokenWindowed()
  int maxSeqs_ = 256;                    // setMaxSeqs
  /// Decode attention's bandwidth-bound seconds before h: the full layers read
  /// Σ L, the sliding ones min(Σ L, n·W) (= Σ min(L, W) when every context is
  /// on one side of W, else an upper bound).
  double decodeReadSeconds(const BatchShape& b) const {
    if (window_ <= 0) return decodePerToken_ * b.decode_ctx_sum;
    return decodePerToken_ * b.decode_ctx_sum +
           decodeSlidePerToken_ * std::min(b.decode_ctx_sum, window_ * b.decode_seqs);
  }
  /// Prefill attention's seconds: the sliding layers attend over at most W
  /// keys per new token, min(Σ n(c + n/2), W · Σ n).
  double prefillAttnSeconds(const BatchShape& b) const {
    if (window_ <= 0) return prefillPerUnit_ * b.prefill_attn;
    return prefillPerUnit_ * b.prefill_attn +
           prefillSlidePerUnit_ * std::min(b.prefill_attn, window_ * b.prefill_tokens);
  }
  double overheadFixed_;       // t_step + t_layer·layers
  double cpuFixed_;            // t_step (the CPU part of overheadFixed_)
  bool async_ = false;         // setAsyncScheduling
  double overheadPerSeq_;      // t_seq
  double commPerToken_;        // ring: 2·layers · 2(tp−1)/tp · hidden·dtype / (link·0.5)
  double commFixed_;           // ring: 2·layers · 2(tp−1)·α_hop
  int ctasPerSeq_;             // ⌈kv_heads / tp⌉
  double slots_;               // sm_count · attn_ctas_per_sm
  double commSeconds(double N) const;
};

}  // namespace sl
