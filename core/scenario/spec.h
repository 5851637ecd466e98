#pragma once
// Plain-data description of one run: the in-memory form of a scenario JSON
// file (60-cli-formats.md). Every field has the default the spec gives, so a
// default-constructed Scenario is the embedded default scenario ("{}").
// Loading, validation and canonical saving live in scenario_io.h.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sl {

/// A token-length distribution. Fields used depend on `kind`.
struct LengthDist {
  enum class Kind { Constant, Uniform, Lognormal, Empirical, Mixture, Exponential };
  Kind kind = Kind::Constant;
  double value = 0;                    // constant
  double mean = 1;                     // exponential (> 0)
  double min = 0, max = 0;             // uniform range
  std::optional<double> median, p90;   // lognormal by quantiles ...
  std::optional<double> mu, sigma;     // ... or by parameters
  std::string path;                    // empirical: CSV or JSON-lines file
  std::string column;                  // empirical: column / field name
  std::vector<LengthDist> parts;       // mixture components ...
  std::vector<double> weights;         // ... and their weights (same size)
  std::optional<double> clipMin, clipMax;  // optional "min"/"max" clip (not for uniform)
};

/// Piecewise-constant rate schedule segment: `rate` req/s for `duration_s`.
struct RateSegment {
  double duration_s = 60;
  double rate = 1;
};

struct ArrivalSpec {
  enum class Process { Poisson, Gamma, Schedule, Closed };
  Process process = Process::Poisson;
  double rate = 5.0;   // req/s (Poisson, Gamma)
  double cv = 1.0;     // Gamma: coefficient of variation of inter-arrival times
  std::vector<RateSegment> schedule;  // Schedule: segments in order; last rate persists
  // Closed: `concurrency` clients, each sending its next request when its
  // previous one leaves the run plus a think time drawn from `think_s` (a
  // length distribution read in seconds; none = 0). docs/workloads.md.
  int concurrency = 1;
  std::optional<LengthDist> think_s;
};

struct TraceSpec {
  std::string path;              // resolved against the scenario file's folder
  std::string format = "auto";   // auto | azure | burstgpt | mooncake | servelab
  double time_scale = 1.0;       // multiply timestamps
  std::optional<std::int64_t> max_requests;
  std::optional<double> window_start_s, window_end_s;  // keep arrivals in [start, end)
  bool lenient = false;          // malformed rows: skip and count instead of an error
};

/// Prompts that share prefixes, for prefix caching (docs/workloads.md
/// "Shared prefixes"): a shared system prompt ahead of each synthetic
/// prompt, and multi-turn sessions over closed-loop clients.
struct PrefixSpec {
  int system_prompt_tokens = 0;  // prepended to every synthetic prompt (a session's first turn)
  int system_prompts = 1;        // distinct system prompts; request (or session) i uses i mod n
  int turns = 1;                 // turns per session (closed loop): prompt = history + new input
};

struct WorkloadSpec {
  std::optional<std::string> preset;  // named length preset (see workload/presets.h)
  ArrivalSpec arrival;
  LengthDist input_tokens;     // defaults set in the constructor below
  LengthDist reasoning_tokens;
  LengthDist answer_tokens;
  std::optional<TraceSpec> trace;
  std::int64_t requests = 2000;
  std::optional<PrefixSpec> prefix;
  WorkloadSpec();
};

struct FabricSpec {
  int gpus_per_node = 8;
  double nic_gbps = 100;        // per node NIC, gigabit/s
  double link_latency_us = 5;   // per transfer start-up latency
};

/// Live migration limits of the engine (docs/engine.md "Transfers").
struct LiveMigrationSpec {
  int max_concurrent = 3;  // live migrations per instance, as source or destination
  int max_rounds = 8;      // pre-copy rounds before the final stop-and-copy
};

/// cluster.moe_routing: {"kind": "balanced" | "zipf" | "file", "skew": s
/// (zipf, > 0), "path": a per-expert histogram (file; relative to the
/// scenario's folder)}.
struct MoeRoutingSpec {
  std::string kind = "balanced";
  double skew = 1.0;
  std::string path;
  bool isDefault() const { return kind == "balanced"; }
};

/// cluster.speculative (issue 48; docs/engine.md "Speculative decoding"):
/// absent = off. Acceptance is one of a preset id (resources/speculative/),
/// a per-position list α_i, or a mean acceptance length τ at this k; unset =
/// the method's default preset.
struct SpeculativeScenario {
  bool on = false;
  std::string method = "eagle";  // draft | eagle | mtp | ngram
  int k = 3;                     // draft tokens per step
  std::string draft_model;       // draft: the draft model's preset id
  double ngram_us_per_seq = 5;   // ngram: CPU lookup per sequence and step
  std::string acceptance_preset;
  std::vector<double> alpha;
  double acceptance_length = 0;  // 0: unset
  double request_sigma = 0;      // per-request spread of logit(α) (0: every request alike)
  // Dynamic k: full k up to `full_until` sequences in the previous step,
  // none from `off_from`, linear between (0 / 0: off).
  int full_until = 0;
  int off_from = 0;
};

/// One pool of a mixed cluster (cluster.pools; issue 49): its GPU, instance
/// count, tensor-parallel degree, (MoE) expert parallelism and role.
struct PoolSpec {
  std::string gpu = "h100-sxm-80g";
  int instances = 1;
  int tp = 1;
  int ep = 1;
  bool attention_dp = false;
  std::optional<double> price_usd_per_gpu_hour;  // unset: cluster's, else the GPU's list price
  // What the pool's instances do (docs/engine.md "Mixed pools"): "colocated"
  // (prefill and decode; the policy decides), or "prefill" / "decode" for a
  // disaggregated policy (static-pd fixes them; Arrow starts from them), or
  // "stage-k" (k = 1, 2, ...) for CascadeInfer: the pool's instances form
  // (part of) stage k, 1 the shortest lengths.
  std::string role = "colocated";
  bool operator==(const PoolSpec&) const = default;
};

struct ClusterSpec {
  int instances = 4;
  std::string gpu = "h100-sxm-80g";
  int tp = 1;
  // Storage precision, "bf16" | "fp16" | "fp8" (docs/cost-model.md, "Precision"):
  // of the layers' weights and of the KV cache.
  std::string model_dtype = "bf16";
  std::string kv_dtype = "bf16";
  // An MoE model's routed experts: "bf16" | "fp16" | "fp8" | "mxfp4" (gpt-oss
  // ships MXFP4 experts); unset = model_dtype.
  std::optional<std::string> expert_dtype;
  double gpu_memory_utilization = 0.9;
  double kv_capacity_fraction = 1.0;
  int block_size = 16;
  double watermark = 0.01;
  double swap_gib = 64;
  std::string preemption = "swap";  // swap | recompute
  bool chunked_prefill = true;
  int max_num_seqs = 256;
  int max_num_batched_tokens = 8192;
  FabricSpec fabric;
  LiveMigrationSpec live_migration;
  // Tensor-parallel all-reduce model (cost/collectives.h): vllm (custom
  // all-reduce below 8 MiB, NCCL above; measured), nccl (measured), ring
  // (the analytic ring of 20-cost-model.md).
  std::string allreduce = "vllm";
  std::optional<std::string> profile;  // calibrated cost profile JSON path
  // Engine-generation preset id (resources/engines/, docs/cost-model.md
  // "Engine generations"); unset = the built-in defaults (vllm-v1).
  std::optional<std::string> engine;
  // Serving front end overrides (cost/frontend.h, docs/engine.md "Serving
  // front end"): fields on top of the engine preset's front end (none: off).
  nlohmann::json frontend = nlohmann::json::object();
  // Prefix caching (docs/engine.md "Prefix caching"): reuse of cached KV
  // blocks across requests, and the CPU tier evicted blocks go to (GB,
  // 1e9 bytes per instance; 0: none).
  bool prefix_caching = false;
  double prefix_cache_cpu_gb = 0;
  nlohmann::json cost = nlohmann::json::object();  // cost-model coefficient overrides
  // Expert parallelism of an MoE model (cost/moe.h, docs/cost-model.md
  // "Expert parallelism"): ep ranks over the instance's tp GPUs, attention
  // tensor (false) or data parallel (true, needs ep = tp), EPLB replicas and
  // placement ("contiguous" | "eplb"; unset: eplb when ep_redundant > 0),
  // and how tokens pick experts.
  int ep = 1;
  bool attention_dp = false;
  int ep_redundant = 0;
  std::optional<std::string> ep_placement;
  MoeRoutingSpec moe_routing;
  // Two-batch overlap (cost/moe.h twoBatchOverlapSeconds): steps of at least
  // tbo_min_tokens tokens run as two micro-batches, one's all-to-all hidden
  // under the other's compute; needs attention_dp (on every pool that has pools).
  bool two_batch_overlap = false;
  int tbo_min_tokens = 2;
  // Data-parallel attention's CPU scheduling (cost/moe.h MoeDeployment::
  // perRankScheduler): "shared" (one t_seq per sequence of the instance) or
  // "per-rank" (each DP rank schedules its own sequences in parallel, as
  // SGLang's per-rank schedulers do: t_seq · sequences / ranks).
  std::string dp_scheduler = "shared";
  SpeculativeScenario speculative;
  // Mixed pools (issue 49): when given, the cluster is these pools in order
  // (instances numbered pool by pool) and `instances`, `gpu`, `tp`, `ep`,
  // `attention_dp` above mirror the total and the first pool.
  std::vector<PoolSpec> pools;
  // What a GPU-hour costs (issue 49; docs/metrics.md "Cost"): unset = the
  // GPU preset's cited on-demand price (resources/pricing/).
  std::optional<double> price_usd_per_gpu_hour;
};

struct PolicySpec {
  std::string id = "fcfs";
  std::string router = "least-loaded";
  // prefix-aware router: weight of the cached share of a prompt against
  // the load (policy/routers.h); 0 routes least-loaded.
  double prefix_weight = 1.0;
  nlohmann::json knobs = nlohmann::json::object();
};

struct SloSpec {
  std::optional<double> ttft_s, tpot_s;
  double ttfat_s = 0.25;
  double qoe_tpot_s = 0.1;
  double qoe_threshold = 0.95;
};

/// A measurement window (docs/metrics.md "Measurement window"): metrics
/// count only what happens in [warmup_s, warmup_s + window_s); arrivals and
/// the run stop at the window's end, so the drain is never measured.
struct MeasureSpec {
  double warmup_s = 0;  // >= 0: simulated seconds skipped before the window
  double window_s = 0;  // > 0: the window's length
  double endS() const { return warmup_s + window_s; }
};

struct RunSpec {
  std::uint64_t seed = 1;
  std::optional<double> duration_s;   // stop simulated time; null = run until drained
  std::optional<MeasureSpec> measure; // exclusive with duration_s; null = whole run measured
  /// When the run stops and arrivals end: the window's end, else duration_s.
  std::optional<double> stopTimeS() const { return measure ? std::optional<double>(measure->endS()) : duration_s; }
  double probe_interval_s = 1.0;
  double rolling_window_s = 30.0;
  std::int64_t trace_request_limit = 20000;  // requests drawn in trace.json
};

struct Scenario {
  int schema_version = 1;
  ClusterSpec cluster;
  std::string model = "llama-3.1-8b";
  WorkloadSpec workload;
  PolicySpec policy;
  SloSpec slo;
  RunSpec run;
  std::string base_dir = ".";  // folder relative paths resolve against (not saved)
};

}  // namespace sl
