#pragma once
// Expert parallelism of a mixture-of-experts model (issue 47; docs/cost-model.md
// "Expert parallelism"): how tokens spread over the routed experts (the
// routing model), where the experts live (ep ranks, redundant replicas), the
// load each rank gets for a step of N tokens, and the all-to-all that carries
// tokens to their experts and back when attention runs data parallel.
//
// Everything here is an expectation: a step of N tokens sends N·q_e tokens to
// expert e on average (q_e the chance a token picks e, Σ q_e = k); the
// busiest rank's load is its mean plus z·sd with z = √(2 ln ep), the usual
// estimate of the largest of ep roughly normal loads. Deterministic, so the
// same scenario gives the same times.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sl {

/// How tokens choose among the routed experts (`cluster.moe_routing`).
enum class RoutingKind {
  Balanced,  ///< "balanced": every expert equally likely (the default)
  Zipf,      ///< "zipf": the i-th most popular expert ∝ (i+1)^−skew
  File,      ///< "file": one weight per expert from a histogram file
};
const char* routingKindName(RoutingKind k);

struct RoutingModel {
  RoutingKind kind = RoutingKind::Balanced;
  double skew = 1.0;            ///< zipf exponent (> 0)
  std::vector<double> weights;  ///< file: one non-negative weight per expert, in expert order
  std::string path;             ///< file: where the weights came from (for messages)
};

/// Reads a per-expert histogram: one non-negative number per line, or
/// "expert,load" lines (an optional header line of words is skipped); '#'
/// starts a comment. Expert ids, when given, must be 0..n−1 in order.
/// InputError "PATH:LINE: ..." on anything else, or "PATH: no expert loads".
std::vector<double> readRoutingHistogram(const std::string& path);

/// The chance q_e that one token picks expert e under `r` (Σ q_e = k, each
/// q_e ≤ 1; weights above 1/k are capped and the rest renormalised, since a
/// token picks k distinct experts). Zipf ranks are scattered over the expert
/// ids by a fixed permutation (hot experts are not neighbours), so a
/// contiguous placement does not put them all on one rank.
/// InputError naming `where` when a file histogram has the wrong length or
/// no positive weight.
std::vector<double> expertSelection(const RoutingModel& r, int experts, int k, std::string_view where);

/// Where the experts of one MoE layer live (the same for every layer).
enum class Placement {
  Contiguous,  ///< "contiguous": expert e on rank e / (E / ep), no replicas
  Eplb,        ///< "eplb": DeepSeek's EPLB: replicas for the hottest experts, then greedy packing
};
const char* placementName(Placement p);

/// The expert-parallel layout and the expected load per rank.
class ExpertPlacement {
 public:
  ExpertPlacement() = default;
  /// `q` from expertSelection; E + redundant must divide by ep (checked by
  /// the caller with the field names). Eplb: the `redundant` extra replicas
  /// go one at a time to the expert with the largest load per replica; then
  /// replicas, heaviest first, go to the least-loaded rank with a free slot
  /// ((E + redundant)/ep slots each) that does not hold the same expert.
  ExpertPlacement(const std::vector<double>& q, int ep, int redundant, Placement p);

  int ranks() const { return static_cast<int>(rankQ_.size()); }
  int experts() const { return static_cast<int>(q_.size()); }
  /// q_e / replicas_e of each replica on rank r.
  const std::vector<double>& rankReplicaQ(int r) const { return rankQ_[r]; }
  /// Expert id of each replica on rank r (same order as rankReplicaQ).
  const std::vector<int>& rankReplicaExpert(int r) const { return rankE_[r]; }
  /// Replicas of expert e.
  int replicas(int e) const { return replicas_[e]; }
  /// Σ q over rank r's replicas: its expected token-expert pairs per token.
  double rankShare(int r) const { return share_[r]; }
  /// Σ q(1 − q) over rank r's replicas: the variance of its pairs per token.
  double rankVariance(int r) const { return var_[r]; }
  /// Expected replicas of rank r that N tokens touch: Σ 1 − (1 − q)^N.
  double rankTouched(int r, double N) const;
  /// The chance one token sends at least one pair to rank r: 1 − Π (1 − q).
  double rankHit(int r) const { return hit_[r]; }
  /// The largest rank load over the mean one for N tokens, with the
  /// straggler term (mean + z·sd); 1 with one rank.
  double imbalance(double N) const;
  /// z = √(2 ln ep) (0 for one rank).
  double stragglerZ() const { return z_; }
  /// The chance that one token sends at least one of its experts to node j
  /// (ranks r·gpusPerNode … on node r / gpusPerNode), per node. A token picks
  /// `topkGroups` of `groups` contiguous expert groups uniformly (node-limited
  /// routing; groups ≤ 0 or topkGroups ≥ groups: no limit), then its k experts
  /// in them; a replicated expert's token goes to one of its replicas
  /// uniformly. Balanced selection (every q equal): exact, k distinct experts
  /// uniformly: P(miss j) = Σ_T e_k(x over T) / (C(G, M) · C(M·E/G, k)) with
  /// x_e = 1 − (e's replicas on j)/(e's replicas) and e_k the elementary
  /// symmetric polynomial (for one group and x ∈ {0, 1}: C(E − m_j, k)/C(E, k)).
  /// Skewed selection: independent picks at the same marginals inside the
  /// chosen groups, P(miss j) = e_M(π)/C(G, M) with π_g = Π_{e∈g} (1 − min(1,
  /// q_e·G/M)·a_e,j) (an approximation).
  std::vector<double> nodeHitChances(int gpusPerNode, int groups, int topkGroups) const;
  /// Expected distinct nodes a token's experts land on: Σ_j P(hit j).
  double expectedNodes(int gpusPerNode, int groups, int topkGroups) const;
  /// Expected distinct nodes other than the token's own, its GPU uniform over
  /// the ranks: (1 − 1/nodes) · Σ_j P(hit j) (equal nodes).
  double expectedRemoteNodes(int gpusPerNode, int groups, int topkGroups) const;

 private:
  std::vector<double> q_;
  std::vector<int> replicas_;
  std::vector<std::vector<double>> rankQ_;
  std::vector<std::vector<int>> rankE_;
  std::vector<double> share_, var_, hit_;
  double z_ = 0;
};

/// All-to-all dispatch / combine time from DeepEP's published measurements
/// (resources/collectives/deepep-h800.json, embedded): per domain (inside a
/// node over NVLink; across nodes over the NICs) t = bytes / (link · η) + L,
/// with η and L fitted by least squares on the measured rows, then applied
/// at the deployment's own links.
struct AllToAllFit {
  std::string domain;     ///< "nvlink" or "rdma"
  double link_gbps = 0;   ///< the measured link the rows ran on (GB/s per direction)
  double eta = 0;         ///< achieved share of that link
  double latency_us = 0;  ///< fixed part
  int points = 0;
  double median_abs_err = 0;
  double max_abs_err = 0;
};
class AllToAllModel {
 public:
  static const AllToAllModel& builtin();
  const AllToAllFit& nvlink() const { return fits_[0]; }
  const AllToAllFit& rdma() const { return fits_[1]; }
  const std::string& source() const { return source_; }
  /// One dispatch or combine: `bytes` leave each GPU (its tokens × k × hidden ×
  /// element size, local ones included, as DeepEP counts them); of them the
  /// share (min(ep, gpn) − 1)/ep crosses NVLink, (ep − gpn)/ep the NIC (gpn =
  /// GPUs per node); the slower of the two plus its domain's latency.
  double seconds(double bytes, int ep, int gpusPerNode, double nvlinkBytesPerSec, double nicBytesPerSecPerGpu) const;
  /// DeepEP's normal (prefill) kernels across nodes, deduplicated per node:
  /// each token goes over the NIC once to each remote node its experts are
  /// on (`remoteNodes` on average, ExpertPlacement::expectedRemoteNodes) and
  /// is forwarded inside that node over NVLink. `tokenBytes` = a GPU's
  /// tokens × hidden × element size. NIC: tokenBytes · remoteNodes /
  /// (NIC_gpu · η_rdma); NVLink: tokenBytes · k · (gpn − 1)/gpn / (NVLink ·
  /// η_nvl) (the pairs for the own node's other GPUs and the forwarded
  /// ones); the slower plus L_rdma. ep ≤ gpn: seconds(tokenBytes · k, ...).
  double dedupSeconds(double tokenBytes, int k, double remoteNodes, int ep, int gpusPerNode, double nvlinkBytesPerSec,
                      double nicBytesPerSecPerGpu) const;

 private:
  AllToAllModel();
  AllToAllFit fits_[2];
  std::string source_;
};

/// SMs DeepEP's normal (prefill) kernels take while they run: the default
/// of deep_ep.Buffer.num_sms (20; deepseek-ai/DeepEP deep_ep/buffer.py). The
/// low-latency (decode) kernels send and receive by RDMA without holding SMs
/// in flight, so they take none while overlapped.
inline constexpr int kDeepEpNormalSms = 20;

/// Two-batch overlap (SGLang --enable-two-batch-overlap; DeepSeek's
/// inference system, docs/cost-model.md "Two-batch overlap"): the batch is
/// split into two micro-batches of half the tokens and sequences; in every
/// MoE layer one micro-batch's dispatch / combine runs while the other
/// computes. `computeHalf`: one micro-batch's GPU work but the all-to-all
/// (every layer), already slowed by the SMs the communication holds;
/// `commHalf`: its all-to-all (dispatch + combine, every MoE layer). Per
/// layer the compute stream runs both micro-batches' compute and the
/// communication both all-to-alls, so the step lasts the larger of the two
/// streams, plus the shorter one's share of one layer that cannot overlap
/// (the first compute before any all-to-all, the last combine after it):
/// max(2·C, 2·M) + min(C, M) / moeLayers. 0 layers: 2·C + 2·M.
double twoBatchOverlapSeconds(double computeHalf, double commHalf, int moeLayers);

/// The compute slowdown while the all-to-all runs beside it: sms / (sms −
/// kDeepEpNormalSms) when the batch has prefill tokens (DeepEP's normal
/// kernels), else 1 (low-latency kernels). 1 when sms ≤ kDeepEpNormalSms.
double tboComputeSlowdown(int sms, bool prefill);

/// An MoE model's deployment on an instance's tp GPUs (cluster.ep,
/// cluster.attention_dp, cluster.ep_redundant, cluster.ep_placement,
/// cluster.moe_routing) plus the links its all-to-all uses.
struct MoeDeployment {
  int ep = 1;                ///< expert-parallel ranks; divides tp; each rank's experts are TP over tp/ep GPUs
  bool attentionDp = false;  ///< attention (and dense layers) data parallel over the tp GPUs (needs ep = tp)
  int redundant = 0;         ///< extra expert replicas (EPLB)
  Placement placement = Placement::Contiguous;
  RoutingModel routing;
  int dispatchBytes = 1;               ///< bytes per hidden value in dispatch (fp8, as DeepEP); combine is 2
  int gpusPerNode = 8;                 ///< for the all-to-all's NVLink / NIC split
  double nicBytesPerSecPerGpu = 50e9;  ///< the fabric's NIC bandwidth per GPU
  /// Two-batch overlap (cluster.two_batch_overlap; needs attentionDp): a step
  /// of at least tboMinTokens tokens runs as two micro-batches, one's
  /// all-to-all under the other's compute (twoBatchOverlapSeconds).
  bool twoBatchOverlap = false;
  int tboMinTokens = 2;
  /// With attentionDp: each of the tp DP ranks schedules its own sequences
  /// in parallel (cluster.dp_scheduler "per-rank"), so the per-sequence CPU
  /// cost is t_seq · sequences / tp; false: t_seq · sequences ("shared").
  bool perRankScheduler = false;

  /// Nothing but the defaults (balanced routing, ep 1, attention TP).
  bool isPlain() const {
    return ep == 1 && !attentionDp && redundant == 0 && placement == Placement::Contiguous &&
           routing.kind == RoutingKind::Balanced;
  }
};

}  // namespace sl
