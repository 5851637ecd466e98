#pragma once
// A read-only picture of the cluster for the GUI, filled on request by
// Simulator::fillSnapshot(Snapshot&) const. Vectors are reused between
// fills, so a steady GUI allocates nothing per frame. Taking a snapshot
// never changes the simulation.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/decision_log.h"
#include "util/time.h"

namespace sl {

struct RequestChip {
  std::int64_t id = 0;
  std::uint8_t phase = 0;  // Phase
  std::uint8_t state = 0;  // ReqState
  std::int32_t kvTokens = 0;
  bool inBatch = false;
  bool synthetic = false;      // injected by the policy (a rank prompt): real work, no user request
  std::int32_t rank = -1;      // Request::rank (-1: none)
  std::int32_t predicted = -1; // Request::predicted output length (-1: none)
  std::int32_t generated = 0;  // output tokens so far (the inspector's progress while paused)
};

struct QueueSnapshot {
  std::string name;
  std::vector<RequestChip> requests;
};

/// A named value a policy publishes (GlobalPolicy::publishInstance for an
/// instance card, publishCluster for a cluster-level series the GUI charts).
/// Generic: the GUI renders whatever the running policy publishes.
struct PolicyField {
  std::string label;    // short, e.g. "r"
  double value = 0;
  std::string unit;     // "", "requests", "blocks", "tokens", "s", "bool" (0/1) ...
  std::string tooltip;  // what it means, one line
  /// Per-instance counters only: when the value grows between two snapshots,
  /// lecture mode calls it out on the card ("3 requests: <callout>"); empty: never.
  std::string callout = {};
};

/// One of the latest placement / </think> decisions.
struct DecisionSnapshot {
  Decision decision;
  std::string reason;  // "SLO-filtered; migrate" (DecisionLog::reason)
};

/// An instance's prefix cache (cluster.prefix_caching; docs/engine.md
/// "Prefix caching"). All zero, `on` false, when caching is off.
struct PrefixCacheSnapshot {
  bool on = false;
  std::int64_t gpuFreeBlocks = 0;  // cached GPU blocks no request references: free memory kept as cache
  std::int64_t gpuBlocks = 0;      // every cached GPU block, referenced or free
  std::int64_t cpuBlocks = 0;      // blocks in the CPU tier
  std::int64_t cpuCapacity = 0;    // the CPU tier's size in blocks (0: no tier)
  std::int64_t promptTokens = 0;   // prompt tokens of first admissions here
  std::int64_t cachedTokens = 0;   // of those, served from the cache (hit rate = cached / prompt)
  std::int64_t hits = 0;           // first admissions with at least one cached block
  std::int64_t evictions = 0;      // GPU blocks evicted
  std::int64_t offloadHits = 0;    // blocks loaded back from the CPU tier on a hit
};

/// An MoE instance's latest step (issue 47 item 4): the cost model's split of
/// its time and the expected token-expert pairs each expert-parallel rank got
/// (cost/moe.h: expectations from the routing model, not sampled routes).
struct MoeStepSnapshot {
  double tokens = 0;              // N: tokens in the step (prefill + decode)
  std::vector<double> rankPairs;  // expected pairs per EP rank (empty: dense model)
  double stragglerPairs = 0;      // the busiest rank's, with the sqrt(2 ln ep) sd term
  double expertsTouched = 0;      // distinct experts per MoE layer the step reads
  double attentionS = 0, expertS = 0, allToAllS = 0, commS = 0, otherS = 0;  // the step's split (seconds)
};

struct SpeculativeSnapshot {
  std::int32_t k = -1;  ///< -1: speculation off
  std::int64_t drafted = 0, accepted = 0, steps = 0;
  bool on() const { return k >= 0; }
};

struct InstanceSnapshot {
  int id = 0;
  std::uint8_t role = 0;  // InstanceRole
  std::int64_t gpuBlocksUsed = 0, gpuBlocksReserved = 0, gpuBlocks = 0;
  std::int64_t cpuBlocksUsed = 0, cpuBlocks = 0;
  std::int32_t batchSize = 0;
  bool busy = false;
  std::int64_t tokensProduced = 0;
  std::vector<QueueSnapshot> queues;
  std::string poolLabel;              // the policy's pool for this instance ("" = none)
  std::vector<PolicyField> policyFields;  // what the policy publishes for this instance
  PrefixCacheSnapshot cache;              // the prefix cache (off: all zero)
  MoeStepSnapshot moe;                    // MoE models only (dense: empty)
  /// Speculative decoding (cluster.speculative; off: specK = -1): the draft
  /// length of the instance's current (or last) step and its totals so far
  /// (a viewer diffs them between frames for recent rates).
  SpeculativeSnapshot spec;
};

struct TransferSnapshot {
  std::int64_t requestId = 0;
  int src = 0, dst = 0;
  double progress = 0;  // 0..1
  bool live = false;
};

struct Snapshot {
  SimTime now = 0;
  std::int64_t arrived = 0, finished = 0, inFlight = 0;
  std::int64_t inputPrefilled = 0;  // prompt tokens of the requests whose first token is out (the run's so far)
  std::int64_t events = 0;
  std::vector<InstanceSnapshot> instances;
  std::vector<TransferSnapshot> transfers;
  std::vector<PolicyField> policySeries;         // cluster-level values the policy publishes now
  std::int64_t decisions = 0;                    // decisions logged so far
  std::vector<DecisionSnapshot> recentDecisions;  // the latest ones, oldest first
  static constexpr std::size_t kRecentDecisions = 16;
};

}  // namespace sl
