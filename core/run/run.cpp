#include "run/run.h"

#include <algorithm>
#include <cmath>

#include "cost/engine_presets.h"
#include "cost/presets.h"
#include "cost/speculative.h"
#include "util/error.h"
#include "workload/closed_loop.h"
#include "workload/parse_util.h"
#include "workload/presets.h"
#include "workload/servelab_trace.h"
#include "workload/trace_formats.h"
#include "workload/workload_source.h"

namespace sl {

namespace {
// Prefix InputErrors with the scenario's name so the user knows which file.
template <class F> auto withSource(const std::string& source, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    if (msg.rfind(source + ":", 0) == 0) throw;
    throw InputError(source + ": " + msg);
  }
}
}  // namespace

std::unique_ptr<CostModel> makeCostModel(const Scenario& s) {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const GpuSpec& gpu = reg.gpu(s.cluster.gpu);
  const ModelSpec& model = reg.model(s.model);
  CostCoefficients c = gpuCoefficients(gpu);
  if (s.cluster.profile) {
    std::string path = *s.cluster.profile;
    if (!path.empty() && path[0] != '/') path = s.base_dir + "/" + path;
    c = loadCostProfile(path);
  }
  if (s.cluster.engine) c = enginePreset(*s.cluster.engine, "cluster.engine").apply(c);
  c = CostCoefficients::fromJson(s.cluster.cost, "cluster.cost", c);
  Precision precision{parseDType(s.cluster.model_dtype, "cluster.model_dtype"),
                      parseDType(s.cluster.kv_dtype, "cluster.kv_dtype")};
  if (s.cluster.expert_dtype) precision.experts = parseExpertDType(*s.cluster.expert_dtype, "cluster.expert_dtype");
  auto cost = std::make_unique<CostModel>(gpu, model, s.cluster.tp, c, precision,
                                          parseAllReduceMode(s.cluster.allreduce));
  cost->setAsyncScheduling(makeFrontEnd(s).async_scheduling);
  cost->setMaxSeqs(s.cluster.max_num_seqs);  // sliding-window capacity: at most this many windows
  cost->setMoe(makeMoeDeployment(s));
  return cost;
}

MoeDeployment makeMoeDeployment(const Scenario& s) {
  const ClusterSpec& c = s.cluster;
  MoeDeployment d;
  d.ep = c.ep;
  d.attentionDp = c.attention_dp;
  d.redundant = c.ep_redundant;
  d.placement = c.ep_placement ? (*c.ep_placement == "eplb" ? Placement::Eplb : Placement::Contiguous)
                               : (c.ep_redundant > 0 ? Placement::Eplb : Placement::Contiguous);
  const MoeRoutingSpec& r = c.moe_routing;
  d.routing.kind = r.kind == "zipf" ? RoutingKind::Zipf : r.kind == "file" ? RoutingKind::File : RoutingKind::Balanced;
  d.routing.skew = r.skew;
  if (d.routing.kind == RoutingKind::File) {
    std::string path = r.path;
    if (!path.empty() && path[0] != '/') path = s.base_dir + "/" + path;
    d.routing.path = r.path;
    d.routing.weights = readRoutingHistogram(path);
  }
  d.gpusPerNode = c.fabric.gpus_per_node;
  d.nicBytesPerSecPerGpu = c.fabric.nic_gbps * 1e9 / 8.0 / std::max(1, c.fabric.gpus_per_node);
  d.twoBatchOverlap = c.two_batch_overlap;
  d.tboMinTokens = c.tbo_min_tokens;
  d.perRankScheduler = c.dp_scheduler == "per-rank";
  return d;
}

namespace {
// The draft side of cluster.speculative on `cost`'s GPUs.
std::shared_ptr<const SpeculativeCost> makeSpeculativeCost(const Scenario& s, const CostModel& cost) {
  const SpeculativeScenario& sp = s.cluster.speculative;
  SpeculativeSpec spec;
  spec.method = parseSpecMethod(sp.method, "cluster.speculative.method");
  spec.k = sp.k;
  spec.draft_model = sp.draft_model;
  spec.ngram_us_per_seq = sp.ngram_us_per_seq;
  return std::make_shared<SpeculativeCost>(cost, spec, "cluster.speculative");
}
}  // namespace

SpeculativeConfig makeSpeculative(const Scenario& s, const CostModel& cost) {
  const SpeculativeScenario& sp = s.cluster.speculative;
  SpeculativeConfig out;
  if (!sp.on) return out;
  out.cost = makeSpeculativeCost(s, cost);
  out.k = sp.k;
  out.requestSigma = sp.request_sigma;
  out.fullUntil = sp.full_until;
  out.offFrom = sp.off_from;
  static const char* const kDomains[4] = {"default", "math", "code", "chat"};  // domain + 1
  if (!sp.alpha.empty() || sp.acceptance_length > 0) {
    const std::vector<double> a =
        !sp.alpha.empty() ? sp.alpha : std::vector<double>{alphaFromAcceptanceLength(sp.acceptance_length, sp.k)};
    for (auto& d : out.alpha) d = alphaForK(a, kMaxSpeculativeK);
  } else {
    // "preset" (each request by its domain) or "preset/domain" (every request that domain's).
    const std::string field = "cluster.speculative.acceptance";
    const std::size_t slash = sp.acceptance_preset.find('/');
    const std::string id = sp.acceptance_preset.substr(0, slash);
    const AcceptancePreset* p =
        !id.empty() ? &acceptancePreset(id, field) : defaultAcceptancePreset(out.cost->spec().method, s.model);
    if (!p)
      throw InputError(field + ": no acceptance preset for method '" + sp.method +
                       "' (resources/speculative/): give {\"alpha\": [...]} or {\"length\": tau}");
    std::string only;
    if (slash != std::string::npos) {
      only = sp.acceptance_preset.substr(slash + 1);
      bool known = false;
      for (const auto& d : p->domains) known = known || d.first == only;
      if (!known) {
        std::string names;
        for (const auto& d : p->domains) names += (names.empty() ? "" : ", ") + d.first;
        throw InputError(field + ": preset '" + id + "' has no domain '" + only + "' (it has: " + names + ")");
      }
    }
    for (std::size_t i = 0; i < 4; ++i) {
      const std::vector<double>* a = p->alpha(only.empty() ? kDomains[i] : only.c_str());
      if (!a) a = &p->domains.front().second;
      out.alpha[i] = alphaForK(*a, kMaxSpeculativeK);
    }
  }
  return out;
}

std::int64_t speculativeKvBlocks(const Scenario& s, const CostModel& cost, const SpeculativeCost& sc) {
  // The draft side's weights come off the KV space, and its KV (a draft
  // model's, a head's one layer) grows every token's bytes.
  const ClusterSpec& c = s.cluster;
  const double usable = cost.usableKvBytesPerGpu(c.gpu_memory_utilization) - sc.draftWeightBytesPerGpu();
  const double perBlock = c.block_size * (cost.kvBytesPerTokenPerGpu() + sc.draftKvBytesPerTokenPerGpu());
  const auto blocks = static_cast<std::int64_t>(std::floor(usable / perBlock * c.kv_capacity_fraction));
  if (blocks < 1)
    throw InputError("cluster.speculative: the draft side's " +
                     std::to_string(static_cast<long long>(std::llround(sc.draftWeightBytesPerGpu() / 1e6))) +
                     " MB of weights per GPU leave no room for one KV block; use a smaller draft model or a larger "
                     "cluster.tp");
  return blocks;
}

FrontEndSpec makeFrontEnd(const Scenario& s) {
  FrontEndSpec f;
  if (s.cluster.engine) f = enginePreset(*s.cluster.engine, "cluster.engine").applyFrontEnd(f);
  return FrontEndSpec::fromJson(s.cluster.frontend, "cluster.frontend", f);
}

// Pool roles (cluster.pools[].role): prefill / decode only for a policy that
// disaggregates, on every pool, with both sides present; they replace the
// policy's own split knob. "stage-k" only for a policy that plans
// CascadeInfer stages, on every pool, stages 1..S without gaps.
namespace {
void checkStageRoles(const Scenario& s, const PolicyInfo& info, std::size_t firstStage) {
  const auto& pools = s.cluster.pools;
  const auto where = [](std::size_t i) { return "cluster.pools[" + std::to_string(i) + "].role"; };
  const auto isStage = [](const std::string& r) { return r.rfind("stage-", 0) == 0; };
  if (!info.stageRoles) {
    if (firstStage == pools.size()) return;
    std::string users;
    for (const PolicyInfo& p : policyCatalog())
      if (p.stageRoles) users += (users.empty() ? "" : ", ") + p.id;
    throw InputError(where(firstStage) + ": policy '" + s.policy.id + "' cannot use role '" + pools[firstStage].role +
                     "'; stage roles need a policy that plans CascadeInfer stages: " + users);
  }
  std::vector<char> have(pools.size() + 1, 0);
  int stages = 0;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const std::string& r = pools[i].role;
    if (r == "colocated" && firstStage == pools.size()) continue;
    if (r == "colocated") throw InputError(where(i) + ": every pool needs a stage role (\"stage-k\") once one has one");
    if (!isStage(r))
      throw InputError(where(i) + ": policy '" + s.policy.id +
                       "' plans length stages; its pools take \"stage-k\" "
                       "roles, not '" +
                       r + "'");
    // (the parser accepts 1..64; a Scenario built in code may hold anything)
    const std::string digits = r.substr(6);
    const bool number = !digits.empty() && digits.size() <= 2 && digits.front() != '0' &&
                        std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!number)
      throw InputError(where(i) + ": a CascadeInfer stage role is \"stage-k\" with k from 1 to 64 (got '" + r + "')");
    const int k = std::stoi(digits);
    if (static_cast<std::size_t>(k) > pools.size())
      throw InputError(where(i) + ": stage " + std::to_string(k) + " of " + std::to_string(pools.size()) +
                       " pools; number the stages 1, 2, ... without gaps");
    have[static_cast<std::size_t>(k)] = 1;
    stages = std::max(stages, k);
  }
  for (int k = 1; k < stages; ++k)
    if (!have[static_cast<std::size_t>(k)])
      throw InputError(where(firstStage) + ": no pool has role \"stage-" + std::to_string(k) +
                       "\"; number the stages 1.." + std::to_string(stages) + " without gaps");
}

void checkPoolRoles(const Scenario& s) {
  const auto& pools = s.cluster.pools;
  std::size_t firstRole = pools.size(), firstStage = pools.size();
  bool prefill = false, decode = false;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].role == "prefill") prefill = true;
    if (pools[i].role == "decode") decode = true;
    if (pools[i].role != "colocated" && firstRole == pools.size()) firstRole = i;
    if (pools[i].role.rfind("stage-", 0) == 0 && firstStage == pools.size()) firstStage = i;
  }
  if (firstRole == pools.size()) return;
  const auto where = [](std::size_t i) { return "cluster.pools[" + std::to_string(i) + "].role"; };
  const PolicyInfo& info = policyInfo(s.policy.id);
  checkStageRoles(s, info, firstStage);
  if (info.stageRoles) return;
  if (!info.poolRoles) {
    std::string users;
    for (const PolicyInfo& p : policyCatalog())
      if (p.poolRoles) users += (users.empty() ? "" : ", ") + p.id;
    throw InputError(
        where(firstRole) + ": policy '" + s.policy.id + "' cannot use role '" + pools[firstRole].role +
        "' (it schedules every instance alike); prefill / decode pools need a disaggregated policy: " + users);
  }
  for (std::size_t i = 0; i < pools.size(); ++i)
    if (pools[i].role == "colocated")
      throw InputError(where(i) + ": every pool needs a role (\"prefill\" or \"decode\") once one has one");
  if (!prefill || !decode)
    throw InputError(where(firstRole) + ": the pools need both a \"prefill\" and a \"decode\" pool (only " +
                     (prefill ? "prefill" : "decode") + " given)");
  if (s.policy.knobs.contains("prefill_instances"))
    throw InputError("policy.knobs.prefill_instances: not with pool roles (cluster.pools[].role sets the split)");
}
}  // namespace

std::unique_ptr<PreparedRun> prepareRun(const Scenario& in, const std::string& source,
                                        const WorkloadFactory& workloadFactory) {
  return withSource(source, [&] {
    auto run = std::make_unique<PreparedRun>();
    run->scenario = in;
    Scenario& s = run->scenario;
    if (s.workload.preset) applyWorkloadPreset(*s.workload.preset, s.workload);
    try {
      run->cost = makeCostModel(s);
    } catch (const InputError& e) {
      if (s.cluster.pools.empty()) throw;
      throw InputError(std::string("cluster.pools[0]: ") + e.what());
    }
    run->gpu = run->cost->gpu();
    run->model = run->cost->model();
    const CostModel& cost = *run->cost;

    PolicyBundle policy = makePolicy(s);
    run->policyName = s.policy.id;

    SimConfig& c = run->sim;
    c.instances = s.cluster.instances;
    c.tp = s.cluster.tp;
    c.kvBytesPerToken = static_cast<double>(cost.kvBytesPerToken());
    // One instance's configuration on `pc`'s GPUs (tp of them): KV capacity
    // (errors when the weights do not fit), then the oracle's "unlimited"
    // memory: far more blocks than any run can use.
    const auto fillInstance = [&](InstanceConfig& ic, const CostModel& pc, int tp, const SpeculativeCost* sc) {
      ic.blockSize = s.cluster.block_size;
      ic.gpuBlocks =
          pc.kvCapacityBlocks(s.cluster.gpu_memory_utilization, s.cluster.kv_capacity_fraction, s.cluster.block_size);
      if (sc) ic.gpuBlocks = speculativeKvBlocks(s, pc, *sc);
      if (policy.unlimitedKv) ic.gpuBlocks = std::int64_t{1} << 40;
      ic.kvBytesPerBlock = c.kvBytesPerToken * s.cluster.block_size;
      ic.cpuBlocks = static_cast<std::int64_t>(std::floor(s.cluster.swap_gib * 1073741824.0 / ic.kvBytesPerBlock));
      ic.watermarkBlocks =
          static_cast<std::int64_t>(std::floor(s.cluster.watermark * static_cast<double>(ic.gpuBlocks)));
      if (policy.unlimitedKv) ic.watermarkBlocks = 0;
      ic.swapPreemption = s.cluster.preemption == "swap";
      ic.chunkedPrefill = policy.chunkedPrefill.value_or(s.cluster.chunked_prefill);
      ic.maxNumSeqs = s.cluster.max_num_seqs;
      ic.maxBatchedTokens = s.cluster.max_num_batched_tokens;
      ic.prefixCaching = s.cluster.prefix_caching;
      ic.prefixCpuBlocks =
          static_cast<std::int64_t>(std::floor(s.cluster.prefix_cache_cpu_gb * 1e9 / ic.kvBytesPerBlock));
      // The host link of each of the instance's tp GPUs works in parallel.
      ic.hostLinkBytesPerSec = pc.hostLinkBytesPerSec() * tp;
    };
    if (s.cluster.speculative.on) c.speculative = makeSpeculative(s, cost);
    fillInstance(c.instance, cost, s.cluster.tp, c.speculative.cost.get());
    c.nvlinkBytesPerSec = cost.peerLinkBytesPerSec() * s.cluster.tp;  // one pair of GPUs
    // Mixed pools (issue 49): each pool's own cost model (its GPU, TP and
    // expert parallelism) and instance configuration; the first pool's cost
    // model is the run's (what policies read through Simulator::cost()).
    for (std::size_t i = 0; i < s.cluster.pools.size(); ++i) {
      const PoolSpec& ps = s.cluster.pools[i];
      const std::string where = "cluster.pools[" + std::to_string(i) + "]";
      PoolConfig pool;
      pool.instances = ps.instances;
      pool.tp = ps.tp;
      const CostModel* pc = &cost;
      try {
        if (i > 0) {
          Scenario one = s;
          one.cluster.gpu = ps.gpu;
          one.cluster.tp = ps.tp;
          one.cluster.ep = ps.ep;
          one.cluster.attention_dp = ps.attention_dp;
          run->poolCosts.push_back(makeCostModel(one));
          pc = run->poolCosts.back().get();
          // Speculation: the draft side on this pool's GPUs (its time and
          // its weights' and KV's room come off this pool's memory).
          if (c.speculative.on()) pool.specCost = makeSpeculativeCost(s, *pc);
        }
        fillInstance(pool.instance, *pc, ps.tp, pool.specCost ? pool.specCost.get() : c.speculative.cost.get());
      } catch (const InputError& e) {
        throw InputError(where + ": " + e.what());
      }
      pool.cost = pc;
      pool.nvlinkBytesPerSec = pc->peerLinkBytesPerSec() * ps.tp;
      pool.poolRole = ps.role == "prefill"  ? InstanceRole::Prefill
                      : ps.role == "decode" ? InstanceRole::Decode
                                            : InstanceRole::Both;
      c.pools.push_back(pool);
    }
    checkPoolRoles(s);
    c.gpusPerNode = s.cluster.fabric.gpus_per_node;
    c.nicBytesPerSec = s.cluster.fabric.nic_gbps * 1e9 / 8.0;
    c.linkLatency = secondsToNs(s.cluster.fabric.link_latency_us * 1e-6);
    c.liveMaxConcurrent = s.cluster.live_migration.max_concurrent;
    c.liveMaxRounds = s.cluster.live_migration.max_rounds;
    c.probeInterval = secondsToNs(s.run.probe_interval_s);
    c.rollingWindowS = s.run.rolling_window_s;
    if (const auto stop = s.run.stopTimeS()) c.stopAt = secondsToNs(*stop);
    c.slo = s.slo;
    c.seed = s.run.seed;
    c.frontend = makeFrontEnd(s);

    std::unique_ptr<WorkloadSource> workload;
    try {
      workload = workloadFactory
                     ? workloadFactory(s.workload, s.run.seed, run->model.max_context, s.base_dir, s.run.stopTimeS())
                     : makeWorkload(s.workload, s.run.seed, run->model.max_context, s.base_dir, s.run.stopTimeS());
    } catch (const InputError& e) {
      // A trace reader names the file it could not read ("PATH: cannot open
      // trace file", "PATH:3: …"): say which field named it (issue 50).
      const std::string msg = e.what();
      const std::string path = s.workload.trace ? detail::resolvePath(s.workload.trace->path, s.base_dir) : "";
      if (path.empty() || msg.rfind(path + ":", 0) != 0) throw;
      throw InputError("workload.trace.path: " + msg);
    }
    run->expectedRequests = workload->expectedCount();
    const WorkloadSource* lengths = workload.get();  // a closed loop reads a trace's lengths through it
    if (const auto* loop = dynamic_cast<const ClosedLoopWorkload*>(lengths)) lengths = &loop->lengthSource();
    if (const auto* reader = dynamic_cast<const TraceReader*>(lengths)) run->traceStats = reader->statsHandle();
    if (const auto* reader = dynamic_cast<const ServeLabTraceReader*>(lengths))
      run->traceStats = reader->statsHandle();
    run->simulator = std::make_unique<Simulator>(c, *run->cost, std::move(workload), std::move(policy.global),
                                                 policy.makeLocal);
    return run;
  });
}

}  // namespace sl
