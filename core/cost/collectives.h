#pragma once
// Tensor-parallel all-reduce time from public measurements (docs/cost-model.md
// "Tensor-parallel communication"). Two measured data sets, embedded from
// resources/collectives/ at build time:
//  - NCCL all-reduce on one 8 × H100 SXM node (per size, tp 2/4/8);
//  - vLLM's custom all-reduce kernels (one-shot and two-shot over NVLink
//    peer-to-peer), tp 2/4/8.
// Each (implementation, tp, size regime) gets a latency floor α plus size over
// an achieved bus bandwidth, fitted by non-negative least squares on relative
// error:  t = α + f · bytes / busbw, with f = 2(tp−1)/tp for NCCL and two-shot
// (reduce-scatter + all-gather) and f = tp−1 for one-shot (each GPU reads
// every peer's whole buffer). The bus bandwidth is kept as a fraction η of the
// measured node's NVLink rate, so another GPU's all-reduce runs at η × its own
// link; α does not scale.
#include <string>
#include <string_view>
#include <vector>

namespace sl {

/// Which all-reduce a tensor-parallel instance uses (`cluster.allreduce`).
enum class AllReduceMode {
  Vllm,  ///< vLLM: custom all-reduce below its buffer size (8 MiB), NCCL above
  Nccl,  ///< NCCL for every message
  Ring,  ///< the analytic ring of 20-cost-model.md: 2(tp−1)/tp·b/(link·0.5) + 2(tp−1)·α_hop
};

/// "vllm" | "nccl" | "ring"; InputError naming `where` otherwise.
AllReduceMode parseAllReduceMode(std::string_view s, std::string_view where = "cluster.allreduce");
const char* allReduceModeName(AllReduceMode m);

/// One fitted line: messages in [lo_bytes, hi_bytes) of one implementation on tp GPUs.
struct AllReduceFit {
  std::string impl;        ///< "nccl", "one-shot" or "two-shot"
  int tp = 0;
  double lo_bytes = 0;
  double hi_bytes = 0;     ///< +inf for the last NCCL regime
  double alpha_s = 0;      ///< latency floor, seconds
  double eta = 0;          ///< achieved bus bandwidth / the measured node's link (0: latency only)
  double busbw_gbps = 0;   ///< η × the measured link, GB/s (0: latency only)
  double factor = 0;       ///< f in t = α + f·bytes/busbw
  int points = 0;          ///< measured points in the regime
  double median_abs_err = 0;  ///< |predicted/measured − 1| over those points
  double max_abs_err = 0;
};

/// A piece of the all-reduce time for one instance, ready to evaluate:
/// bytes < hi_bytes → fixed_s + per_byte_s · bytes.
struct AllReduceSegment {
  double hi_bytes = 0;
  double fixed_s = 0;
  double per_byte_s = 0;
  const char* impl = "";  ///< "nccl", "one-shot", "two-shot" (static storage)
};

class CollectiveModel {
public:
  /// Fitted once from the embedded resources/collectives/*.json.
  static const CollectiveModel& builtin();

  /// The piecewise all-reduce time of a tp-GPU instance whose GPUs talk over
  /// `linkBytesPerSec` per direction (NVLink, else the host link). A tp the
  /// data lacks uses the nearest measured one (ties: the larger). vLLM's
  /// custom all-reduce needs NVLink between all GPUs or tp = 2 (as vLLM
  /// checks) and a tp it has kernels for (2, 4, 6, 8). Empty for tp ≤ 1 and
  /// for AllReduceMode::Ring (CostModel computes that itself).
  std::vector<AllReduceSegment> segments(AllReduceMode mode, int tp, double linkBytesPerSec, bool nvlink) const;

  const std::vector<AllReduceFit>& fits() const { return fits_; }
  const std::string& ncclSource() const { return ncclSource_; }
  const std::string& customSource() const { return customSource_; }
  double customMaxBytes() const { return customMax_; }
  double referenceLinkBytesPerSec() const { return refLink_; }

private:
  CollectiveModel();
  std::vector<AllReduceFit> fits_;
  std::string ncclSource_, customSource_;
  double customMax_ = 0;
  double refLink_ = 0;
};

/// Evaluates a segment list (CollectiveModel::segments): 0 when empty or bytes ≤ 0.
double allReduceSeconds(const std::vector<AllReduceSegment>& segs, double bytes);
/// The implementation a message of `bytes` uses ("" when segs is empty).
const char* allReduceImpl(const std::vector<AllReduceSegment>& segs, double bytes);

}  // namespace sl
