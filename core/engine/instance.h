#pragma once
// One serving instance: a model replica on `tp` GPUs with a paged KV cache,
// a CPU swap space, a local policy and the continuous-batching loop
// (10-engine.md "Instances"). The batch of the running iteration lives here.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "cost/cost_model.h"
#include "engine/decode_lane.h"
#include "engine/policy_api.h"
#include "engine/prefix_cache.h"
#include "engine/request.h"

namespace sl {

class SpeculativeCost;

enum class InstanceRole : std::uint8_t { Both, Prefill, Decode };
const char* roleName(InstanceRole r);

/// Per-instance configuration derived from the scenario.
struct InstanceConfig {
  std::int64_t gpuBlocks = 0;       // KV capacity in blocks
  std::int64_t cpuBlocks = 0;       // swap capacity in blocks
  std::int32_t blockSize = 16;
  std::int64_t watermarkBlocks = 0; // free blocks kept at admission
  bool swapPreemption = true;       // false: recompute
  bool chunkedPrefill = true;
  std::int32_t maxNumSeqs = 256;
  std::int32_t maxBatchedTokens = 8192;
  double kvBytesPerBlock = 0;       // whole-instance bytes of one block (all tp shards)
  double hostLinkBytesPerSec = 64e9;
  bool prefixCaching = false;       // cluster.prefix_caching (engine/prefix_cache.h)
  std::int64_t prefixCpuBlocks = 0; // the cache's CPU tier, blocks (cluster.prefix_cache_cpu_gb)
};

struct BatchEntry {
  Request* r;
  std::int32_t newTokens;  // prefill chunk size, or 1 + k for a decode (k drafts to verify; 0 without speculation)
  bool prefill;
};

class Simulator;

class Instance {
public:
  Instance(int id, const InstanceConfig& cfg, std::unique_ptr<LocalPolicy> policy);

  int id() const { return id_; }
  const InstanceConfig& config() const { return cfg_; }
  LocalPolicy& policy() { return *policy_; }
  const LocalPolicy& policy() const { return *policy_; }

  InstanceRole role() const { return role_; }
  /// The instance's cost model (its pool's GPU, TP and deployment) and GPUs.
  const CostModel& cost() const { return *cost_; }
  int tp() const { return tp_; }
  void setRole(InstanceRole r) { role_ = r; }

  // ---- KV accounting
  std::int64_t gpuBlocksUsed() const { return gpuUsed_; }
  std::int64_t gpuBlocksReserved() const { return gpuReserved_; }
  std::int64_t cpuBlocksUsed() const { return cpuUsed_; }
  std::int64_t freeGpuBlocks() const { return cfg_.gpuBlocks - gpuUsed_ - gpuReserved_; }
  std::int64_t freeCpuBlocks() const { return cfg_.cpuBlocks - cpuUsed_; }
  /// KV footprint (GPU + CPU blocks), PASCAL's and least-KV's load measure.
  std::int64_t kvFootprintBlocks() const { return gpuUsed_ + cpuUsed_; }
  std::int32_t blocksFor(std::int64_t tokens) const {
    // A power-of-two block size (16, the default) divides by a shift: the
    // same quotient for tokens >= 0, without a 64-bit idiv (issue 16).
    if (blockShift_ >= 0) [[likely]]
      return static_cast<std::int32_t>((tokens + cfg_.blockSize - 1) >> blockShift_);
    return static_cast<std::int32_t>((tokens + cfg_.blockSize - 1) / cfg_.blockSize);
  }

  // ---- load counters (for routers and the GUI)
  std::int64_t assignedRequests() const { return assigned_; }
  std::int64_t assignedTokens() const { return assignedTokens_; }  // Σ input + generated
  std::int64_t tokensProduced() const { return tokensProduced_; }

  // ---- O(1) counters a policy can read (kept by the engine as it goes)
  /// Prompt tokens still to prefill, over the requests its local policy holds
  /// (a recompute preemption adds the prompt + generated tokens back).
  std::int64_t queuedPrefillTokens() const { return queuedPrefill_; }
  /// Tokens of the running iteration's requests: their KV plus the tokens
  /// being computed (0 when idle).
  std::int64_t runningTokens() const { return busy_ ? runningTokens_ : 0; }
  /// Mean duration of this instance's iterations that produced decode tokens
  /// and ended in (now - window, now] (SimConfig::counterWindow): the recent
  /// interval between a decoding request's tokens, seconds; 0 when none.
  double recentDecodeIntervalS(SimTime now) const;

  // ---- iteration state
  bool busy() const { return busy_; }
  SimTime iterationStart() const { return iterStart_; }
  SimTime iterationEnd() const { return iterEnd_; }
  /// The running iteration's batch. Members of a lazy decode lane that
  /// step in it are not listed (laneSequences() counts them); a lane runs
  /// only when no observer is attached (engine/decode_lane.h).
  const std::vector<BatchEntry>& batch() const { return batch_; }
  /// Sequences of the running iteration: the batch plus the lane's step.
  std::int32_t batchSequences() const { return static_cast<std::int32_t>(batch_.size()) + laneSeqs_; }
  std::int64_t iterations() const { return iterations_; }

  /// The prefix cache (nullptr when cluster.prefix_caching is off).
  const PrefixCache* prefixCache() const { return cache_.get(); }

  // ---- speculative decoding (cluster.speculative; docs/engine.md)
  /// Tokens of KV a decode sequence needs room for in the running (or next)
  /// iteration: 1 + the step's draft length k (1 without speculation).
  std::int32_t decodeAhead() const { return decodeAhead_; }
  /// The draft length of the running iteration (0: no speculation).
  std::int32_t speculativeK() const { return decodeAhead_ - 1; }
  /// decodeAhead() for `r`: never more than the instance could ever hold
  /// for it (a sequence near the whole KV capacity drafts fewer tokens).
  std::int32_t decodeAheadFor(const Request& r) const {
    if (decodeAhead_ <= 1) [[likely]]
      return 1;
    const std::int64_t room = cfg_.gpuBlocks * cfg_.blockSize - r.kvTokens;
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(room, 1, decodeAhead_));
  }
  /// Draft tokens verified and accepted on this instance so far.
  std::int64_t draftedTokens() const { return specDrafted_; }
  std::int64_t acceptedTokens() const { return specAccepted_; }
  /// Sequence-steps that verified drafts (a sequence in a speculative step).
  std::int64_t speculativeSteps() const { return specSteps_; }

 private:
  friend class Simulator;
  friend class IterationBuilder;

  int id_;
  InstanceConfig cfg_;
  int blockShift_ = -1;  // log2(blockSize) when it is a power of two, else -1
  const CostModel* cost_ = nullptr;  // its pool's (set by the Simulator)
  const SpeculativeCost* specCost_ = nullptr;  // its pool's draft side (speculation on)
  int tp_ = 1;
  std::unique_ptr<LocalPolicy> policy_;
  InstanceRole role_ = InstanceRole::Both;

  std::int64_t gpuUsed_ = 0, gpuReserved_ = 0, cpuUsed_ = 0;
  std::int64_t assigned_ = 0, assignedTokens_ = 0, tokensProduced_ = 0;
  std::int64_t queuedPrefill_ = 0, runningTokens_ = 0;
  SimTime counterWindow_ = kNsPerSecond;
  mutable std::deque<std::pair<SimTime, SimTime>> decodeIters_;  // (end, duration), oldest first
  mutable SimTime decodeDurSum_ = 0;

  bool busy_ = false;
  bool wakePending_ = false;
  SimTime iterStart_ = 0, iterEnd_ = 0;
  std::int64_t iterations_ = 0;
  std::vector<BatchEntry> batch_;
  DecodeLane* lane_ = nullptr;  // the local policy's lane, when the run allows lanes
  bool laneOn_ = false;         // new steps allowed (off once an observer attaches)
  std::int32_t laneSeqs_ = 0;   // lane members stepping in the running iteration
  BatchShape shape_{};
  std::int32_t decodeAhead_ = 1;  // 1 + the step's draft length
  std::int64_t specDrafted_ = 0, specAccepted_ = 0, specSteps_ = 0;
  double swapBytes_ = 0;
  int preemptionsThisIter_ = 0;
  std::unique_ptr<PrefixCache> cache_;
};

/// What a local policy uses to build one iteration's batch. Every method
/// keeps the KV accounting exact; a method that returns false changed
/// nothing. Memory for new tokens is taken one block at a time as a
/// sequence crosses a block boundary; admission takes the whole prompt plus
/// the watermark (10-engine.md).
class IterationBuilder;

/// What IterationBuilder::runPrefix would do with an order (planPrefix).
struct PrefixPlan {
  std::size_t length = 0;           // the prefix
  std::size_t runningInPrefix = 0;  // running requests in it ...
  std::size_t runningInOrder = 0;   // ... and in the order (the rest are preempted)
  bool prompts = false;             // it holds a waiting request (a prompt to admit)
  /// Without chunked prefill: the iteration only admits prompts, with no
  /// preemption (no running request decodes or changes).
  bool prefillOnly(bool chunked) const { return !chunked && prompts && runningInPrefix == runningInOrder; }
};

class IterationBuilder {
public:
  IterationBuilder(Simulator& sim, Instance& inst) : sim_(sim), inst_(inst) {}

  Instance& instance() { return inst_; }
  const InstanceConfig& config() const { return inst_.cfg_; }
  SimTime now() const;
  std::int64_t freeBlocks() const { return inst_.freeGpuBlocks(); }
  std::int32_t seqSlotsLeft() const { return inst_.cfg_.maxNumSeqs - inst_.batchSequences(); }
  std::int32_t tokenBudgetLeft() const { return tokenBudget_; }
  /// KV tokens a decode needs room for in this iteration (1 + draft length).
  std::int32_t decodeAhead() const { return inst_.decodeAhead_; }
  bool chunkedPrefill() const { return inst_.cfg_.chunkedPrefill; }
  bool empty() const { return inst_.batch_.empty() && inst_.laneSeqs_ == 0; }
  bool inBatch(const Request& r) const { return r.batchIndex >= 0; }
  int preemptionsThisIteration() const { return inst_.preemptionsThisIter_; }

  /// GPU blocks `r` needs resident to run in this iteration.
  std::int64_t blocksToRun(const Request& r) const;
  /// Extra free blocks `r` needs to run now (0 if it already holds them;
  /// includes the watermark for an admission).
  std::int64_t extraBlocksToRun(const Request& r) const;

  /// Running request with prefill complete: one decode token. Inline: the
  /// one call every decode token makes (issue 16).
  inline bool addDecode(Request& r);
  /// Running request with prefill incomplete: next chunk (whole remainder
  /// without chunked prefill).
  bool addPrefillChunk(Request& r);
  /// Waiting request: allocate its prompt (+ watermark) and add its first chunk.
  bool admit(Request& r);
  /// Swapped request: copy its KV back (time added to this iteration) and run it.
  bool resume(Request& r);
  /// Add `r` in whatever way its state needs (decode, chunk, admit, resume).
  /// Inline for its common case, a decode (issue 16: one call per token).
  bool run(Request& r) {
    if (r.state == ReqState::Running && r.prefillDone()) [[likely]]
      return addDecode(r);
    return runOther(r);
  }
  /// Evict a Running request (swap, or recompute when swap is off or full).
  void preempt(Request& r);
  /// The same eviction of a Running request that is in no batch (between
  /// iterations of `inst`): a migrant displacing it (Simulator::migrate).
  static void evict(Simulator& sim, Instance& inst, Request& r);

  /// Whether this instance's local policy may use its decode lane in this
  /// run (engine/decode_lane.h): no observer, a progress-blind global policy.
  bool laneAllowed() const { return inst_.laneOn_; }
  std::int32_t blockSize() const { return inst_.cfg_.blockSize; }
  /// The lane's step runs in this iteration: its block demand is taken
  /// (the caller checked it fits: blockDemand() <= freeBlocks()) and its
  /// members count against the sequence and token limits.
  void runLane();

  /// Run the longest prefix of `order` that fits in GPU memory and the
  /// iteration's limits; running requests outside the prefix are preempted,
  /// tail first (RR, PASCAL, priority). Without chunked prefill, an iteration
  /// that admits new prompts is prefill-only. Returns the prefix length.
  /// The same as runPlanned(order, planPrefix(order)).
  std::size_t runPrefix(std::span<Request* const> order) { return runPlanned(order, planPrefix(order)); }
  /// What runPrefix(order) would do, found without changing anything.
  PrefixPlan planPrefix(std::span<Request* const> order) const;
  /// runPrefix with its plan (planPrefix(order), nothing changed since).
  std::size_t runPlanned(std::span<Request* const> order, const PrefixPlan& plan);
  /// runPlanned's first part: the running requests of `order` past the
  /// plan's prefix are preempted, tail first; a lane member among them
  /// leaves its lane first.
  void preemptPastPrefix(std::span<Request* const> order, const PrefixPlan& plan);

private:
  friend class Simulator;
  void addEntry(Request& r, std::int32_t tokens, bool prefill);
  /// addDecode's rare part: the next token starts a new KV block.
  bool growForNextToken(Request& r);
  /// run() for anything but a decode.
  bool runOther(Request& r);
  bool allocate(Request& r, std::int64_t blocks);
  /// Blocks of `r` shared through the prefix cache (0 when it is off):
  /// preempting `r` need not free them.
  std::int64_t pinnedBlocks(const Request& r) const;

  Simulator& sim_;
  Instance& inst_;
  std::int32_t tokenBudget_ = 0;
};

inline bool IterationBuilder::addDecode(Request& r) {
  if (r.state != ReqState::Running || !r.prefillDone() || r.batchIndex >= 0) return false;
  // A speculative step verifies 1 + k tokens per sequence: they count
  // against the token budget and need their KV slots (the entry's tokens).
  const std::int32_t ahead = inst_.decodeAheadFor(r);
  if (seqSlotsLeft() <= 0 || tokenBudget_ < ahead) return false;
  // The next token's KV fits the blocks held (kvTokens + 1 <= blocks *
  // blockSize, i.e. blocksToRun(r) <= blocksGpu) in all but one token per
  // block: no division on the common path (issue 16).
  if (static_cast<std::int64_t>(r.kvTokens) + ahead > static_cast<std::int64_t>(r.blocksGpu) * inst_.cfg_.blockSize &&
      !growForNextToken(r)) [[unlikely]]
    return false;
  if (!r.scheduled || r.blockingStart >= 0) [[unlikely]] {  // timeline bookkeeping: addEntry
    addEntry(r, ahead, false);
    return true;
  }
  // addEntry's common case, inline: what every decode token does.
  r.batchIndex = static_cast<std::int32_t>(inst_.batch_.size());
  inst_.batch_.push_back(BatchEntry{&r, ahead, false});
  tokenBudget_ -= ahead;
  return true;
}

}  // namespace sl
