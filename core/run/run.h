#pragma once
// Scenario -> a ready Simulator: resolves presets, the cost model and its
// coefficients, KV capacity, the policy and the workload. Every user error is
// an InputError raised here, before anything runs or is written.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cost/cost_model.h"
#include "engine/simulator.h"
#include "policy/registry.h"
#include "scenario/spec.h"

namespace sl {

struct TraceStats;  // workload/trace_formats.h

struct PreparedRun {
  Scenario scenario;             // after the workload preset has been applied
  GpuSpec gpu;
  ModelSpec model;
  std::unique_ptr<CostModel> cost;                    // the first pool's (the whole cluster's without cluster.pools)
  std::vector<std::unique_ptr<CostModel>> poolCosts;  // cluster.pools[1...]'s
  SimConfig sim;
  std::string policyName;
  std::unique_ptr<Simulator> simulator;
  std::int64_t expectedRequests = -1;
  /// Trace workloads read by a TraceReader (azure, burstgpt, mooncake): the
  /// reader's live counters, taken before the source moves into the
  /// Simulator (final once the run has ended). nullptr otherwise.
  std::shared_ptr<const TraceStats> traceStats;
};

/// Builds the run's workload; same arguments as makeWorkload. prepareRun uses
/// makeWorkload unless given one (the GUI wraps it in a LiveRateWorkload,
/// workload/live_rate.h, for its live arrival-rate slider).
using WorkloadFactory = std::function<std::unique_ptr<WorkloadSource>(
    const WorkloadSpec&, std::uint64_t seed, int maxContext, const std::string& baseDir,
    std::optional<double> durationS)>;

/// `source` names the scenario in messages (file path or "scenario").
std::unique_ptr<PreparedRun> prepareRun(const Scenario& s, const std::string& source = "scenario",
                                        const WorkloadFactory& workloadFactory = {});

/// The engine's speculative decoding from cluster.speculative (off when
/// absent): the draft side's cost on `cost`, the acceptance per domain.
SpeculativeConfig makeSpeculative(const Scenario& s, const CostModel& cost);
/// KV blocks per instance with the draft side's weights and KV in memory.
std::int64_t speculativeKvBlocks(const Scenario& s, const CostModel& cost, const SpeculativeCost& sc);

/// Build only the cost model of a scenario's cluster (for `cost` and checks);
/// its async scheduling is the front end's (makeFrontEnd).
std::unique_ptr<CostModel> makeCostModel(const Scenario& s);

/// The scenario's serving front end: the engine preset's (cluster.engine),
/// then cluster.frontend's fields on top; all zero (off) when neither sets
/// any. InputError naming cluster.frontend.<key> for bad fields.
FrontEndSpec makeFrontEnd(const Scenario& s);
/// The scenario's expert-parallel deployment (cluster.ep, attention_dp,
/// ep_redundant, ep_placement, moe_routing; the fabric's GPUs per node and
/// NIC share per GPU for the all-to-all). Reads a routing histogram file
/// (InputError naming the file and line).
MoeDeployment makeMoeDeployment(const Scenario& s);

}  // namespace sl
