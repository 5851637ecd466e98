#pragma once
// The configuration of one simulated cluster (run/run.cpp builds it from a
// scenario; engine/simulator.h runs it).
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cost/frontend.h"
#include "cost/speculative.h"
#include "engine/instance.h"
#include "scenario/spec.h"
#include "util/time.h"

namespace sl {

/// The longest draft a step takes (cluster.speculative.k, live changes).
inline constexpr int kMaxSpeculativeK = 16;

/// Speculative decoding in the engine (cluster.speculative; docs/engine.md
/// "Speculative decoding"). Off when `cost` is null.
struct SpeculativeConfig {
  std::shared_ptr<const SpeculativeCost> cost;
  int k = 0;  ///< draft tokens per step at full k
  /// α_i (acceptance of draft token i given tokens < i accepted), for
  /// kMaxSpeculativeK positions (a live k may grow past the scenario's),
  /// by request domain + 1: none, math, code, chat (workload/presets.h).
  std::array<std::vector<double>, 4> alpha;
  double requestSigma = 0;  ///< per-request spread of logit(α), N(0, σ²)
  int fullUntil = 0;        ///< dynamic k: full k up to this many sequences ...
  int offFrom = 0;          ///< ... none from this many (0: dynamic k off)
  bool on() const { return cost != nullptr; }
  /// The step's draft length given the previous step's batch size.
  int stepK(int prevSeqs) const {
    if (offFrom <= 0 || prevSeqs <= fullUntil) return k;
    if (prevSeqs >= offFrom) return 0;
    const double f = static_cast<double>(offFrom - prevSeqs) / static_cast<double>(offFrom - fullUntil);
    return static_cast<int>(f * k + 0.5);
  }
};

/// One pool of a mixed cluster (cluster.pools): its instances' config, GPUs
/// per instance, peer link and cost model (owned by the PreparedRun).
struct PoolConfig {
  int instances = 1;
  InstanceConfig instance;
  int tp = 1;
  double nvlinkBytesPerSec = 0;  // per instance port; 0 = no NVLink (use host link)
  const CostModel* cost = nullptr;
  /// cluster.pools[i].role: Both = colocated (the policy decides), Prefill /
  /// Decode = the pool's fixed side for a disaggregated policy.
  InstanceRole poolRole = InstanceRole::Both;
  /// The draft side on this pool's GPUs (speculation on; null: the run's).
  std::shared_ptr<const SpeculativeCost> specCost = nullptr;
};

struct SimConfig {
  int instances = 4;
  InstanceConfig instance;
  int tp = 1;
  int gpusPerNode = 8;
  double nvlinkBytesPerSec = 0;  // per instance port; 0 = no NVLink (use host link)
  double nicBytesPerSec = 12.5e9;
  SimTime linkLatency = 5'000;   // per transfer start-up
  double kvBytesPerToken = 0;    // whole instance
  SimTime probeInterval = kNsPerSecond;
  double rollingWindowS = 30;
  std::optional<SimTime> stopAt;
  SloSpec slo;
  std::uint64_t seed = 1;
  int liveMaxConcurrent = 3;     // live migrations per instance (as source or destination)
  int liveMaxRounds = 8;
  SimTime counterWindow = kNsPerSecond;  // Instance::recentDecodeIntervalS window
  FrontEndSpec frontend;         // serving front end (all zero: off)
  SpeculativeConfig speculative;  // speculative decoding (off: no cost)
  /// Mixed pools, in instance order (empty: one pool of `instances` ×
  /// `instance` on `tp` GPUs each, costed by the Simulator's cost model).
  /// Each pool starts on a node of its own.
  std::vector<PoolConfig> pools;
};

}  // namespace sl
