#pragma once
// The scenario file reader (scenario_io.cpp): the key sets, the field
// checkers that name the offending path, and the Parser whose section
// readers live in scenario_io.cpp (cluster, policy, slo, run) and
// scenario_workload_io.cpp (workload, arrival, trace, length
// distributions). Internal to core/scenario: not part of its API.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/limits.h"
#include "scenario/scenario_io.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl::scenario_detail {

using nlohmann::json;

using Keys = std::vector<std::string>;

// ---- key sets (canonical order) -------------------------------------------

inline const Keys kTopKeys = {"schema_version", "cluster", "model", "workload", "policy", "slo", "run"};
inline const Keys kClusterKeys = {"instances",
                                  "gpu",
                                  "tp",
                                  "model_dtype",
                                  "kv_dtype",
                                  "gpu_memory_utilization",
                                  "kv_capacity_fraction",
                                  "block_size",
                                  "watermark",
                                  "swap_gib",
                                  "preemption",
                                  "chunked_prefill",
                                  "max_num_seqs",
                                  "max_num_batched_tokens",
                                  "fabric",
                                  "live_migration",
                                  "allreduce",
                                  "profile",
                                  "engine",
                                  "frontend",
                                  "prefix_caching",
                                  "prefix_cache_cpu_gb",
                                  "cost",
                                  "ep",
                                  "attention_dp",
                                  "ep_redundant",
                                  "ep_placement",
                                  "moe_routing",
                                  "two_batch_overlap",
                                  "tbo_min_tokens",
                                  "dp_scheduler",
                                  "expert_dtype",
                                  "speculative",
                                  "pools",
                                  "price_usd_per_gpu_hour"};
inline const Keys kPoolKeys = {"gpu", "instances", "tp", "ep", "attention_dp", "price_usd_per_gpu_hour", "role"};
inline const Keys kPoolRoles = {"colocated", "prefill", "decode"};
inline const Keys kSpeculativeKeys = {"method",        "k",        "draft_model", "ngram_us_per_seq", "acceptance",
                                      "request_sigma", "dynamic_k"};
inline const Keys kAcceptanceKeys = {"alpha", "length"};
inline const Keys kDynamicKKeys = {"full_until", "off_from"};
inline const Keys kSpecMethods = {"draft", "eagle", "mtp", "ngram"};
inline const Keys kMoeRoutingKeys = {"kind", "skew", "path"};
inline const Keys kFabricKeys = {"gpus_per_node", "nic_gbps", "link_latency_us"};
inline const Keys kLiveMigrationKeys = {"max_concurrent", "max_rounds"};
inline const Keys kWorkloadKeys = {"preset",        "arrival", "input_tokens", "reasoning_tokens",
                                   "answer_tokens", "trace",   "requests",     "prefix"};
inline const Keys kPrefixKeys = {"system_prompt_tokens", "system_prompts", "turns"};
inline const Keys kArrivalKeys = {"process", "rate", "cv", "schedule", "concurrency", "think_s"};
inline const Keys kSegmentKeys = {"duration_s", "rate"};
inline const Keys kTraceKeys = {"path", "format", "time_scale", "max_requests", "window", "lenient"};
inline const Keys kWindowKeys = {"start_s", "end_s"};
inline const Keys kPolicyKeys = {"id", "router", "knobs", "prefix_weight"};
inline const Keys kSloKeys = {"ttft_s", "tpot_s", "ttfat_s", "qoe_tpot_s", "qoe_threshold"};
inline const Keys kRunKeys = {"seed", "duration_s", "measure", "probe_interval_s", "rolling_window_s",
                              "trace_request_limit"};
inline const Keys kMeasureKeys = {"warmup_s", "window_s"};
inline const Keys kDistKeys = {"dist",  "value", "min",  "max",    "median", "p90",   "mu",
                               "sigma", "mean",  "path", "column", "parts",  "weight"};  // "weight" last

// Fixed sections, for suggesting a key that sits at the wrong level
// (e.g. "workload.rate" -> "workload.arrival.rate").
struct Section {
  const char* path;
  const Keys* keys;
};
inline const Section kSections[] = {
    {"", &kTopKeys},
    {"cluster", &kClusterKeys},
    {"cluster.fabric", &kFabricKeys},
    {"cluster.moe_routing", &kMoeRoutingKeys},
    {"cluster.speculative", &kSpeculativeKeys},
    {"cluster.speculative.dynamic_k", &kDynamicKKeys},
    {"cluster.live_migration", &kLiveMigrationKeys},
    {"workload", &kWorkloadKeys},
    {"workload.arrival", &kArrivalKeys},
    {"workload.trace", &kTraceKeys},
    {"workload.trace.window", &kWindowKeys},
    {"policy", &kPolicyKeys},
    {"slo", &kSloKeys},
    {"run", &kRunKeys},
    {"run.measure", &kMeasureKeys},
};

inline const Keys kDistNames = {"constant", "uniform", "lognormal", "empirical", "mixture", "exponential"};
inline const Keys kProcessNames = {"poisson", "gamma", "schedule", "closed"};
// Largest closed-loop client count (a sanity bound, far above any cluster).
inline constexpr std::int64_t kMaxConcurrency = 1000000;
inline const Keys kTraceFormats = {"auto", "azure", "burstgpt", "mooncake", "servelab"};
inline const Keys kAllReduceModes = {"vllm", "nccl", "ring"};  // cost/collectives.h
inline const Keys kPreemptionModes = {"swap", "recompute"};
inline const Keys kEpPlacements = {"contiguous", "eplb"};
inline const Keys kDpSchedulers = {"shared", "per-rank"};        // cost/moe.h
inline const Keys kRoutingKinds = {"balanced", "zipf", "file"};  // cost/moe.h
inline const Keys kDTypes = {"bf16", "fp16", "fp8"};
inline const Keys kExpertDTypes = {"bf16", "fp16", "fp8", "mxfp4"};

inline constexpr int kMaxDistDepth = 8;    // nested mixtures
inline constexpr int kMaxFreeDepth = 64;   // policy.knobs / cluster.cost nesting

inline std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

inline std::string indexed(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

inline std::string quotedList(const Keys& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

inline std::string numText(double v) { return formatDouble(v); }

// Short rendering of an offending JSON value for messages.
inline std::string valueText(const json& v) {
  if (v.is_number_float()) return numText(v.get<double>());
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

inline bool contains(const Keys& keys, std::string_view k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

class Parser {
public:
  explicit Parser(std::string source) : src_(std::move(source)) {}

  Scenario scenario(const json& j) {
    Scenario s;
    if (!j.is_object()) {
      throw InputError(src_ + ": expected a JSON object at the top level, got " + j.type_name());
    }
    // Version first: a newer file would otherwise fail on its new fields.
    if (auto it = j.find("schema_version"); it != j.end()) {
      const std::int64_t v = integer(*it, "schema_version", std::numeric_limits<std::int64_t>::min(),
                                     std::numeric_limits<std::int64_t>::max());
      if (v != 1) {
        fail("schema_version", "unsupported schema version " + std::to_string(v) +
                                   " (this build of ServeLab reads schema_version 1)");
      }
      s.schema_version = 1;
    }
    checkKeys(j, "", kTopKeys);
    if (auto* v = find(j, "cluster")) cluster(*v, "cluster", s.cluster);
    if (auto* v = find(j, "model")) s.model = nonEmptyString(*v, "model");
    if (auto* v = find(j, "workload")) workload(*v, "workload", s.workload);
    if (auto* v = find(j, "policy")) policy(*v, "policy", s.policy);
    if (auto* v = find(j, "slo")) slo(*v, "slo", s.slo);
    if (auto* v = find(j, "run")) run(*v, "run", s.run);
    return s;
  }

private:
  std::string src_;

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw InputError(src_ + ": " + (path.empty() ? std::string() : path + ": ") + msg);
  }

  [[noreturn]] void typeError(const json& v, const std::string& path, const char* expected) const {
    fail(path, std::string("expected ") + expected + ", got " + v.type_name());
  }

  static const json* find(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  // Unknown keys: error with the full path and a "did you mean" hint.
  void checkKeys(const json& obj, const std::string& path, const Keys& allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (contains(allowed, it.key())) continue;
      unknownField(path, it.key(), allowed);
    }
  }

  [[noreturn]] void unknownField(const std::string& path, const std::string& key,
                                 const Keys& allowed) const {
    std::string msg = src_ + ": unknown field '" + child(path, key) + "'";
    // A key that exists, exactly, in one other section is most likely misplaced
    // (workload.rate -> workload.arrival.rate); otherwise look for a typo.
    std::optional<std::string> hint;
    std::vector<std::string> hits;
    for (const auto& sec : kSections) {
      if (contains(*sec.keys, key)) hits.push_back(child(sec.path, key));
    }
    if (hits.size() == 1) {
      hint = hits.front();
    } else if (auto near = didYouMean(key, allowed)) {
      hint = child(path, *near);
    }
    if (hint) msg += " (did you mean '" + *hint + "'?)";
    throw InputError(msg);
  }

  const json& object(const json& v, const std::string& path) const {
    if (!v.is_object()) typeError(v, path, "an object");
    return v;
  }

  double number(const json& v, const std::string& path) const {
    if (!v.is_number()) typeError(v, path, "a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path, "must be a finite number");
    return d;
  }

  double positive(const json& v, const std::string& path) const {
    const double d = number(v, path);
    if (!(d > 0)) fail(path, "must be > 0 (got " + numText(d) + ")");
    return d;
  }

  double nonNegative(const json& v, const std::string& path) const {
    const double d = number(v, path);
    if (!(d >= 0)) fail(path, "must be >= 0 (got " + numText(d) + ")");
    return d;
  }

  std::optional<double> optPositive(const json& v, const std::string& path) const {
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) typeError(v, path, "a number or null");
    return positive(v, path);
  }

  std::int64_t integer(const json& v, const std::string& path, std::int64_t lo,
                       std::int64_t hi) const {
    std::int64_t x = 0;
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        rangeError(path, lo, hi, valueText(v));
      }
      x = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
      x = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      if (!(std::isfinite(d) && d == std::floor(d))) {
        fail(path, "expected an integer, got " + valueText(v));
      }
      if (!(d >= -9.2e18 && d <= 9.2e18)) rangeError(path, lo, hi, valueText(v));
      x = static_cast<std::int64_t>(d);
    } else {
      typeError(v, path, "an integer");
    }
    if (x < lo || x > hi) rangeError(path, lo, hi, std::to_string(x));
    return x;
  }

  [[noreturn]] void rangeError(const std::string& path, std::int64_t lo, std::int64_t hi,
                               const std::string& got) const {
    const bool open_hi = hi == std::numeric_limits<std::int64_t>::max() ||
                         hi == std::numeric_limits<int>::max();
    if (open_hi) fail(path, "must be >= " + std::to_string(lo) + " (got " + got + ")");
    fail(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                   " (got " + got + ")");
  }

  int intField(const json& v, const std::string& path, int lo,
               int hi = std::numeric_limits<int>::max()) const {
    return static_cast<int>(integer(v, path, lo, hi));
  }

  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string()) typeError(v, path, "a string");
    return v.get<std::string>();
  }

  std::string nonEmptyString(const json& v, const std::string& path) const {
    std::string s = string(v, path);
    if (s.empty()) fail(path, "must not be empty");
    return s;
  }

  std::optional<std::string> optNonEmptyString(const json& v, const std::string& path) const {
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) typeError(v, path, "a string or null");
    return nonEmptyString(v, path);
  }

  std::string oneOf(const json& v, const std::string& path, const Keys& names) const {
    std::string s = string(v, path);
    if (contains(names, s)) return s;
    std::string msg = "must be one of " + quotedList(names) + " (got '" + s + "'";
    if (auto near = didYouMean(s, names)) msg += "; did you mean '" + *near + "'?";
    fail(path, msg + ")");
  }

  bool boolean(const json& v, const std::string& path) const {
    if (!v.is_boolean()) typeError(v, path, "true or false");
    return v.get<bool>();
  }

  // Free-form objects are checked by their own modules; only make sure they
  // are objects that can be written back (valid UTF-8 strings).
  json freeObject(const json& v, const std::string& path) const {
    object(v, path);
    // Iterative depth check first: dumping or copying a hostile, deeply nested
    // value would recurse and could overflow the stack.
    std::vector<std::pair<const json*, int>> todo{{&v, 1}};
    while (!todo.empty()) {
      const auto [node, depth] = todo.back();
      todo.pop_back();
      if (depth > kMaxFreeDepth) {
        fail(path, "nested more than " + std::to_string(kMaxFreeDepth) + " levels deep");
      }
      if (node->is_structured()) {
        for (const auto& c : *node) todo.emplace_back(&c, depth + 1);
      }
    }
    try {
      (void)v.dump();
    } catch (const json::exception&) {
      fail(path, "contains a string that is not valid UTF-8");
    }
    return v;
  }

  // ---- sections (scenario_io.cpp; the workload ones in scenario_workload_io.cpp)

  void cluster(const json& v, const std::string& p, ClusterSpec& c) const;
  void speculative(const json& v, const std::string& p, SpeculativeScenario& sp) const;
  void workload(const json& v, const std::string& p, WorkloadSpec& w) const;
  void arrival(const json& v, const std::string& p, ArrivalSpec& a) const;
  TraceSpec trace(const json& v, const std::string& p) const;
  LengthDist dist(const json& v, const std::string& p, bool in_mixture, int depth) const;
  void policy(const json& v, const std::string& p, PolicySpec& pol) const;
  void slo(const json& v, const std::string& p, SloSpec& s) const;
  void run(const json& v, const std::string& p, RunSpec& r) const;
};

}  // namespace sl::scenario_detail
