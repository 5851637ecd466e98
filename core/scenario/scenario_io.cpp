#include "scenario/scenario_io.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "scenario/limits.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

using Keys = std::vector<std::string>;

// ---- key sets (canonical order) -------------------------------------------

const Keys kTopKeys = {"schema_version", "cluster", "model", "workload", "policy", "slo", "run"};
const Keys kClusterKeys = {"instances",      "gpu",           "tp",
                           "model_dtype",    "kv_dtype",
                           "gpu_memory_utilization",          "kv_capacity_fraction",
                           "block_size",     "watermark",     "swap_gib",
                           "preemption",     "chunked_prefill", "max_num_seqs",
                           "max_num_batched_tokens",          "fabric",
                           "live_migration", "allreduce",     "profile",
                           "engine",
                           "prefix_caching", "prefix_cache_cpu_gb",
                           "cost"};
const Keys kFabricKeys = {"gpus_per_node", "nic_gbps", "link_latency_us"};
const Keys kLiveMigrationKeys = {"max_concurrent", "max_rounds"};
const Keys kWorkloadKeys = {"preset",        "arrival", "input_tokens", "reasoning_tokens",
                            "answer_tokens", "trace",   "requests",     "prefix"};
const Keys kPrefixKeys = {"system_prompt_tokens", "system_prompts", "turns"};
const Keys kArrivalKeys = {"process", "rate", "cv", "schedule", "concurrency", "think_s"};
const Keys kSegmentKeys = {"duration_s", "rate"};
const Keys kTraceKeys = {"path", "format", "time_scale", "max_requests", "window", "lenient"};
const Keys kWindowKeys = {"start_s", "end_s"};
const Keys kPolicyKeys = {"id", "router", "knobs", "prefix_weight"};
const Keys kSloKeys = {"ttft_s", "tpot_s", "ttfat_s", "qoe_tpot_s", "qoe_threshold"};
const Keys kRunKeys = {"seed", "duration_s", "measure", "probe_interval_s", "rolling_window_s",
                       "trace_request_limit"};
const Keys kMeasureKeys = {"warmup_s", "window_s"};
const Keys kDistKeys = {"dist",  "value", "min",  "max",    "median", "p90",   "mu",
                        "sigma", "mean",  "path", "column", "parts",  "weight"};  // "weight" last

// Fixed sections, for suggesting a key that sits at the wrong level
// (e.g. "workload.rate" -> "workload.arrival.rate").
struct Section {
  const char* path;
  const Keys* keys;
};
const Section kSections[] = {
    {"", &kTopKeys},           {"cluster", &kClusterKeys},
    {"cluster.fabric", &kFabricKeys}, {"cluster.live_migration", &kLiveMigrationKeys},
    {"workload", &kWorkloadKeys},
    {"workload.arrival", &kArrivalKeys}, {"workload.trace", &kTraceKeys},
    {"workload.trace.window", &kWindowKeys}, {"policy", &kPolicyKeys},
    {"slo", &kSloKeys},        {"run", &kRunKeys},
    {"run.measure", &kMeasureKeys},
};

const Keys kDistNames = {"constant", "uniform", "lognormal", "empirical", "mixture", "exponential"};
const Keys kProcessNames = {"poisson", "gamma", "schedule", "closed"};
// Largest closed-loop client count (a sanity bound, far above any cluster).
constexpr std::int64_t kMaxConcurrency = 1000000;
const Keys kTraceFormats = {"auto", "azure", "burstgpt", "mooncake", "servelab"};
const Keys kAllReduceModes = {"vllm", "nccl", "ring"};  // cost/collectives.h
const Keys kPreemptionModes = {"swap", "recompute"};
const Keys kDTypes = {"bf16", "fp16", "fp8"};

constexpr int kMaxDistDepth = 8;    // nested mixtures
constexpr int kMaxFreeDepth = 64;   // policy.knobs / cluster.cost nesting

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string indexed(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string quotedList(const Keys& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

std::string numText(double v) { return formatDouble(v); }

// Short rendering of an offending JSON value for messages.
std::string valueText(const json& v) {
  if (v.is_number_float()) return numText(v.get<double>());
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

bool contains(const Keys& keys, std::string_view k) {
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

  // ---- sections -------------------------------------------------------------

  void cluster(const json& v, const std::string& p, ClusterSpec& c) const {
    object(v, p);
    checkKeys(v, p, kClusterKeys);
    if (auto* x = find(v, "instances")) c.instances = intField(*x, child(p, "instances"), 1, kMaxInstances);
    if (auto* x = find(v, "gpu")) c.gpu = nonEmptyString(*x, child(p, "gpu"));
    if (auto* x = find(v, "tp")) c.tp = intField(*x, child(p, "tp"), 1);
    if (auto* x = find(v, "model_dtype")) c.model_dtype = oneOf(*x, child(p, "model_dtype"), kDTypes);
    if (auto* x = find(v, "kv_dtype")) c.kv_dtype = oneOf(*x, child(p, "kv_dtype"), kDTypes);
    if (auto* x = find(v, "gpu_memory_utilization")) {
      const std::string q = child(p, "gpu_memory_utilization");
      c.gpu_memory_utilization = number(*x, q);
      if (!(c.gpu_memory_utilization > 0 && c.gpu_memory_utilization <= 1)) {
        fail(q, "must be in (0, 1] (got " + numText(c.gpu_memory_utilization) + ")");
      }
    }
    if (auto* x = find(v, "kv_capacity_fraction")) {
      const std::string q = child(p, "kv_capacity_fraction");
      c.kv_capacity_fraction = number(*x, q);
      if (!(c.kv_capacity_fraction > 0 && c.kv_capacity_fraction <= 1)) {
        fail(q, "must be in (0, 1] (got " + numText(c.kv_capacity_fraction) + ")");
      }
    }
    if (auto* x = find(v, "block_size")) {
      const std::string q = child(p, "block_size");
      const int b = intField(*x, q, std::numeric_limits<int>::min());
      if (b < 1 || b > 256 || (b & (b - 1)) != 0) {
        fail(q, "must be a power of two from 1 to 256 (got " + std::to_string(b) + ")");
      }
      c.block_size = b;
    }
    if (auto* x = find(v, "watermark")) {
      const std::string q = child(p, "watermark");
      c.watermark = number(*x, q);
      if (!(c.watermark >= 0 && c.watermark < 1)) {
        fail(q, "must be in [0, 1) (got " + numText(c.watermark) + ")");
      }
    }
    if (auto* x = find(v, "swap_gib")) c.swap_gib = nonNegative(*x, child(p, "swap_gib"));
    if (auto* x = find(v, "preemption")) {
      c.preemption = oneOf(*x, child(p, "preemption"), kPreemptionModes);
    }
    if (auto* x = find(v, "allreduce")) c.allreduce = oneOf(*x, child(p, "allreduce"), kAllReduceModes);
    if (auto* x = find(v, "chunked_prefill")) {
      c.chunked_prefill = boolean(*x, child(p, "chunked_prefill"));
    }
    if (auto* x = find(v, "max_num_seqs")) c.max_num_seqs = intField(*x, child(p, "max_num_seqs"), 1);
    if (auto* x = find(v, "max_num_batched_tokens")) {
      c.max_num_batched_tokens = intField(*x, child(p, "max_num_batched_tokens"), 1);
    }
    if (auto* x = find(v, "fabric")) {
      const std::string q = child(p, "fabric");
      object(*x, q);
      checkKeys(*x, q, kFabricKeys);
      if (auto* y = find(*x, "gpus_per_node")) {
        c.fabric.gpus_per_node = intField(*y, child(q, "gpus_per_node"), 1);
      }
      if (auto* y = find(*x, "nic_gbps")) c.fabric.nic_gbps = positive(*y, child(q, "nic_gbps"));
      if (auto* y = find(*x, "link_latency_us")) {
        c.fabric.link_latency_us = nonNegative(*y, child(q, "link_latency_us"));
      }
    }
    if (auto* x = find(v, "live_migration")) {
      const std::string q = child(p, "live_migration");
      object(*x, q);
      checkKeys(*x, q, kLiveMigrationKeys);
      if (auto* y = find(*x, "max_concurrent")) {
        c.live_migration.max_concurrent = intField(*y, child(q, "max_concurrent"), 1);
      }
      if (auto* y = find(*x, "max_rounds")) c.live_migration.max_rounds = intField(*y, child(q, "max_rounds"), 1);
    }
    if (auto* x = find(v, "profile")) c.profile = optNonEmptyString(*x, child(p, "profile"));
    if (auto* x = find(v, "engine")) c.engine = optNonEmptyString(*x, child(p, "engine"));
    if (auto* x = find(v, "prefix_caching")) c.prefix_caching = boolean(*x, child(p, "prefix_caching"));
    if (auto* x = find(v, "prefix_cache_cpu_gb")) {
      c.prefix_cache_cpu_gb = nonNegative(*x, child(p, "prefix_cache_cpu_gb"));
      if (c.prefix_cache_cpu_gb > 0 && !c.prefix_caching)
        fail(child(p, "prefix_cache_cpu_gb"), "needs cluster.prefix_caching: true (it is the prefix cache's CPU tier)");
    }
    if (auto* x = find(v, "cost")) c.cost = freeObject(*x, child(p, "cost"));
  }

  void workload(const json& v, const std::string& p, WorkloadSpec& w) const {
    object(v, p);
    checkKeys(v, p, kWorkloadKeys);
    if (auto* x = find(v, "preset")) w.preset = optNonEmptyString(*x, child(p, "preset"));
    if (auto* x = find(v, "arrival")) arrival(*x, child(p, "arrival"), w.arrival);
    if (auto* x = find(v, "input_tokens")) w.input_tokens = dist(*x, child(p, "input_tokens"), false, 0);
    if (auto* x = find(v, "reasoning_tokens")) {
      w.reasoning_tokens = dist(*x, child(p, "reasoning_tokens"), false, 0);
    }
    if (auto* x = find(v, "answer_tokens")) {
      w.answer_tokens = dist(*x, child(p, "answer_tokens"), false, 0);
    }
    if (auto* x = find(v, "trace")) {
      if (x->is_null()) {
        w.trace.reset();
      } else {
        w.trace = trace(*x, child(p, "trace"));
      }
    }
    if (auto* x = find(v, "requests")) {
      w.requests = integer(*x, child(p, "requests"), 1, std::numeric_limits<std::int64_t>::max());
    }
    // A closed loop ignores a trace's timestamps (its lengths are taken in
    // trace order), so the fields that act on timestamps would do nothing.
    if (w.arrival.process == ArrivalSpec::Process::Closed && w.trace) {
      const std::string q = child(p, "trace");
      const std::string why = "acts on the trace's timestamps, which a closed loop (workload.arrival.process "
                              "'closed') ignores; remove it or use an open-loop arrival process";
      if (w.trace->time_scale != 1.0) fail(child(q, "time_scale"), why);
      if (w.trace->window_start_s || w.trace->window_end_s) fail(child(q, "window"), why);
    }
    if (auto* x = find(v, "prefix")) {
      const std::string q = child(p, "prefix");
      if (x->is_null()) {
        w.prefix.reset();
      } else {
        object(*x, q);
        checkKeys(*x, q, kPrefixKeys);
        PrefixSpec ps;
        if (auto* y = find(*x, "system_prompt_tokens"))
          ps.system_prompt_tokens = intField(*y, child(q, "system_prompt_tokens"), 0);
        if (auto* y = find(*x, "system_prompts")) ps.system_prompts = intField(*y, child(q, "system_prompts"), 1);
        if (auto* y = find(*x, "turns")) ps.turns = intField(*y, child(q, "turns"), 1);
        if (ps.system_prompt_tokens > 0 && w.trace)
          fail(child(q, "system_prompt_tokens"), "applies to synthetic prompts only (a trace brings its own; "
                                                 "Mooncake's hash_ids name its prefixes)");
        if (ps.turns > 1 && w.arrival.process != ArrivalSpec::Process::Closed)
          fail(child(q, "turns"), "multi-turn sessions need closed-loop clients (workload.arrival.process "
                                  "\"closed\"): a turn follows its previous turn's answer");
        w.prefix = ps;
      }
    }
  }

  void arrival(const json& v, const std::string& p, ArrivalSpec& a) const {
    object(v, p);
    checkKeys(v, p, kArrivalKeys);
    std::string process = "poisson";
    if (auto* x = find(v, "process")) process = oneOf(*x, child(p, "process"), kProcessNames);
    const Keys allowed = process == "poisson"  ? Keys{"process", "rate"}
                         : process == "gamma"  ? Keys{"process", "rate", "cv"}
                         : process == "closed" ? Keys{"process", "concurrency", "think_s"}
                                               : Keys{"process", "schedule"};
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!contains(allowed, it.key())) {
        fail(child(p, it.key()), "not used by process '" + process + "' (its fields: " +
                                     quotedList(allowed) + ")");
      }
    }
    a.process = process == "poisson"  ? ArrivalSpec::Process::Poisson
                : process == "gamma"  ? ArrivalSpec::Process::Gamma
                : process == "closed" ? ArrivalSpec::Process::Closed
                                      : ArrivalSpec::Process::Schedule;
    if (a.process == ArrivalSpec::Process::Closed) {
      const json* n = find(v, "concurrency");
      if (!n) fail(p, "process 'closed' needs 'concurrency' (the number of clients, an integer >= 1)");
      a.concurrency = static_cast<int>(integer(*n, child(p, "concurrency"), 1, kMaxConcurrency));
      a.think_s.reset();
      if (auto* x = find(v, "think_s"); x && !x->is_null()) a.think_s = dist(*x, child(p, "think_s"), false, 0);
    }
    if (auto* x = find(v, "rate")) a.rate = positive(*x, child(p, "rate"));
    if (auto* x = find(v, "cv")) a.cv = positive(*x, child(p, "cv"));
    if (a.process == ArrivalSpec::Process::Schedule) {
      const std::string q = child(p, "schedule");
      const json* x = find(v, "schedule");
      if (!x) fail(p, "process 'schedule' needs a 'schedule' list of {\"duration_s\", \"rate\"}");
      if (!x->is_array()) typeError(*x, q, "an array");
      if (x->empty()) fail(q, "must have at least one segment");
      a.schedule.clear();
      bool any_positive = false;
      for (std::size_t i = 0; i < x->size(); ++i) {
        const json& seg = (*x)[i];
        const std::string sp = indexed(q, i);
        object(seg, sp);
        checkKeys(seg, sp, kSegmentKeys);
        const json* d = find(seg, "duration_s");
        const json* r = find(seg, "rate");
        if (!d) fail(sp, "missing required field 'duration_s'");
        if (!r) fail(sp, "missing required field 'rate'");
        RateSegment s;
        s.duration_s = positive(*d, child(sp, "duration_s"));
        s.rate = nonNegative(*r, child(sp, "rate"));
        any_positive = any_positive || s.rate > 0;
        a.schedule.push_back(s);
      }
      if (!any_positive) fail(q, "at least one segment needs a rate > 0");
    } else {
      a.schedule.clear();
    }
  }

  TraceSpec trace(const json& v, const std::string& p) const {
    object(v, p);
    checkKeys(v, p, kTraceKeys);
    TraceSpec t;
    const json* path = find(v, "path");
    if (!path) fail(p, "missing required field 'path'");
    t.path = nonEmptyString(*path, child(p, "path"));
    if (auto* x = find(v, "format")) t.format = oneOf(*x, child(p, "format"), kTraceFormats);
    if (auto* x = find(v, "time_scale")) t.time_scale = positive(*x, child(p, "time_scale"));
    if (auto* x = find(v, "max_requests"); x && !x->is_null()) {
      t.max_requests = integer(*x, child(p, "max_requests"), 1,
                               std::numeric_limits<std::int64_t>::max());
    }
    if (auto* x = find(v, "window"); x && !x->is_null()) {
      const std::string q = child(p, "window");
      if (!x->is_object()) typeError(*x, q, "an object or null");
      checkKeys(*x, q, kWindowKeys);
      if (auto* y = find(*x, "start_s"); y && !y->is_null()) {
        const std::string r = child(q, "start_s");
        if (!y->is_number()) typeError(*y, r, "a number or null");
        t.window_start_s = nonNegative(*y, r);
      }
      if (auto* y = find(*x, "end_s"); y && !y->is_null()) {
        const std::string r = child(q, "end_s");
        if (!y->is_number()) typeError(*y, r, "a number or null");
        t.window_end_s = positive(*y, r);
      }
      if (t.window_start_s && t.window_end_s && !(*t.window_end_s > *t.window_start_s)) {
        fail(child(q, "end_s"), "must be > start_s (got " + numText(*t.window_end_s) +
                                    " <= " + numText(*t.window_start_s) + ")");
      }
    }
    if (auto* x = find(v, "lenient")) t.lenient = boolean(*x, child(p, "lenient"));
    return t;
  }

  LengthDist dist(const json& v, const std::string& p, bool in_mixture, int depth) const {
    object(v, p);
    if (depth > kMaxDistDepth) fail(p, "mixtures nested too deeply");
    // Keys that exist in no distribution at all: unknown field with a hint.
    const Keys& all = kDistKeys;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!contains(all, it.key()) || (it.key() == "weight" && !in_mixture)) {
        Keys cands = all;
        if (!in_mixture) cands.pop_back();  // "weight"
        unknownField(p, it.key(), cands);
      }
    }
    const json* dn = find(v, "dist");
    if (!dn) {
      fail(p, "missing required field 'dist' (one of " + quotedList(kDistNames) + ")");
    }
    const std::string name = oneOf(*dn, child(p, "dist"), kDistNames);
    Keys allowed;
    LengthDist d;
    if (name == "constant") {
      d.kind = LengthDist::Kind::Constant;
      allowed = {"dist", "value", "min", "max"};
    } else if (name == "uniform") {
      d.kind = LengthDist::Kind::Uniform;
      allowed = {"dist", "min", "max"};
    } else if (name == "lognormal") {
      d.kind = LengthDist::Kind::Lognormal;
      allowed = {"dist", "median", "p90", "mu", "sigma", "min", "max"};
    } else if (name == "empirical") {
      d.kind = LengthDist::Kind::Empirical;
      allowed = {"dist", "path", "column", "min", "max"};
    } else if (name == "exponential") {
      d.kind = LengthDist::Kind::Exponential;
      allowed = {"dist", "mean", "min", "max"};
    } else {
      d.kind = LengthDist::Kind::Mixture;
      allowed = {"dist", "parts", "min", "max"};
    }
    if (in_mixture) allowed.push_back("weight");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!contains(allowed, it.key())) {
        fail(child(p, it.key()),
             "not used by dist '" + name + "' (its fields: " + quotedList(allowed) + ")");
      }
    }
    auto required = [&](const char* key) -> const json& {
      const json* x = find(v, key);
      if (!x) fail(p, "dist '" + name + "' needs field '" + key + "'");
      return *x;
    };

    switch (d.kind) {
      case LengthDist::Kind::Constant:
        d.value = nonNegative(required("value"), child(p, "value"));
        break;
      case LengthDist::Kind::Uniform: {
        d.min = nonNegative(required("min"), child(p, "min"));
        d.max = nonNegative(required("max"), child(p, "max"));
        if (d.max < d.min) {
          fail(child(p, "max"), "must be >= min (got " + numText(d.max) + " < " +
                                    numText(d.min) + ")");
        }
        break;
      }
      case LengthDist::Kind::Lognormal: {
        const bool q = find(v, "median") || find(v, "p90");
        const bool m = find(v, "mu") || find(v, "sigma");
        if (q == m) {
          fail(p, "dist 'lognormal' needs either 'median' and 'p90' or 'mu' and 'sigma'");
        }
        if (q) {
          d.median = positive(required("median"), child(p, "median"));
          d.p90 = number(required("p90"), child(p, "p90"));
          if (!(*d.p90 > *d.median)) {
            fail(child(p, "p90"), "must be > median (got " + numText(*d.p90) + " <= " +
                                      numText(*d.median) + ")");
          }
        } else {
          d.mu = number(required("mu"), child(p, "mu"));
          d.sigma = positive(required("sigma"), child(p, "sigma"));
        }
        break;
      }
      case LengthDist::Kind::Exponential:
        d.mean = positive(required("mean"), child(p, "mean"));
        break;
      case LengthDist::Kind::Empirical:
        d.path = nonEmptyString(required("path"), child(p, "path"));
        if (auto* x = find(v, "column")) d.column = string(*x, child(p, "column"));
        break;
      case LengthDist::Kind::Mixture: {
        const std::string q = child(p, "parts");
        const json& parts = required("parts");
        if (!parts.is_array()) typeError(parts, q, "an array");
        if (parts.empty()) fail(q, "must have at least one part");
        for (std::size_t i = 0; i < parts.size(); ++i) {
          const std::string pp = indexed(q, i);
          const json& part = parts[i];
          LengthDist sub = dist(part, pp, true, depth + 1);
          const json* w = find(part, "weight");
          if (!w) fail(pp, "missing required field 'weight'");
          d.weights.push_back(positive(*w, child(pp, "weight")));
          d.parts.push_back(std::move(sub));
        }
        break;
      }
    }
    if (d.kind != LengthDist::Kind::Uniform) {
      if (auto* x = find(v, "min")) d.clipMin = nonNegative(*x, child(p, "min"));
      if (auto* x = find(v, "max")) d.clipMax = positive(*x, child(p, "max"));
      if (d.clipMin && d.clipMax && *d.clipMax < *d.clipMin) {
        fail(child(p, "max"), "must be >= min (got " + numText(*d.clipMax) + " < " +
                                  numText(*d.clipMin) + ")");
      }
    }
    return d;
  }

  void policy(const json& v, const std::string& p, PolicySpec& pol) const {
    object(v, p);
    checkKeys(v, p, kPolicyKeys);
    if (auto* x = find(v, "id")) pol.id = nonEmptyString(*x, child(p, "id"));
    if (auto* x = find(v, "router")) pol.router = nonEmptyString(*x, child(p, "router"));
    if (auto* x = find(v, "prefix_weight")) pol.prefix_weight = nonNegative(*x, child(p, "prefix_weight"));
    if (auto* x = find(v, "knobs")) pol.knobs = freeObject(*x, child(p, "knobs"));
  }

  void slo(const json& v, const std::string& p, SloSpec& s) const {
    object(v, p);
    checkKeys(v, p, kSloKeys);
    if (auto* x = find(v, "ttft_s")) s.ttft_s = optPositive(*x, child(p, "ttft_s"));
    if (auto* x = find(v, "tpot_s")) s.tpot_s = optPositive(*x, child(p, "tpot_s"));
    if (auto* x = find(v, "ttfat_s")) s.ttfat_s = positive(*x, child(p, "ttfat_s"));
    if (auto* x = find(v, "qoe_tpot_s")) s.qoe_tpot_s = positive(*x, child(p, "qoe_tpot_s"));
    if (auto* x = find(v, "qoe_threshold")) {
      const std::string q = child(p, "qoe_threshold");
      s.qoe_threshold = number(*x, q);
      if (!(s.qoe_threshold > 0 && s.qoe_threshold <= 1)) {
        fail(q, "must be in (0, 1] (got " + numText(s.qoe_threshold) + ")");
      }
    }
  }

  void run(const json& v, const std::string& p, RunSpec& r) const {
    object(v, p);
    checkKeys(v, p, kRunKeys);
    if (auto* x = find(v, "seed")) {
      const std::string q = child(p, "seed");
      if (x->is_number_unsigned()) {
        r.seed = x->get<std::uint64_t>();
      } else {
        // Negative, fractional or non-numbers fail here with a clear message.
        r.seed = static_cast<std::uint64_t>(
            integer(*x, q, 0, std::numeric_limits<std::int64_t>::max()));
      }
    }
    if (auto* x = find(v, "duration_s")) r.duration_s = optPositive(*x, child(p, "duration_s"));
    if (auto* x = find(v, "measure"); x && !x->is_null()) {
      const std::string q = child(p, "measure");
      if (!x->is_object()) typeError(*x, q, "an object or null");
      checkKeys(*x, q, kMeasureKeys);
      MeasureSpec m;
      if (auto* y = find(*x, "warmup_s")) m.warmup_s = nonNegative(*y, child(q, "warmup_s"));
      const json* w = find(*x, "window_s");
      if (!w) fail(q, "missing required field 'window_s'");
      m.window_s = positive(*w, child(q, "window_s"));
      if (r.duration_s) {
        fail(q, "set either run.measure or run.duration_s, not both (the run stops at the window's end)");
      }
      r.measure = m;
    }
    if (auto* x = find(v, "probe_interval_s")) {
      r.probe_interval_s = positive(*x, child(p, "probe_interval_s"));
    }
    if (auto* x = find(v, "rolling_window_s")) {
      r.rolling_window_s = positive(*x, child(p, "rolling_window_s"));
    }
    if (auto* x = find(v, "trace_request_limit")) {
      r.trace_request_limit = integer(*x, child(p, "trace_request_limit"), 0,
                                      std::numeric_limits<std::int64_t>::max());
    }
  }
};


std::string readWholeFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path + ": cannot read scenario file: is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(path + ": cannot open scenario file" +
                     (std::filesystem::exists(path, ec) ? std::string(" (permission denied?)")
                                                        : std::string(": no such file")));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read scenario file");
  return ss.str();
}

// nlohmann's parse_error carries the byte count read so far (1-based position
// of the last character read); turn it into line:column for the message.
std::pair<std::size_t, std::size_t> lineColumn(const std::string& text, std::size_t byte) {
  const std::size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

std::string parseReason(const std::string& what) {
  // "[json.exception.parse_error.101] parse error at line 3, column 14: syntax error ..."
  std::string r = what;
  if (auto pos = r.find("] "); pos != std::string::npos) r = r.substr(pos + 2);
  if (auto pos = r.find("column "); pos != std::string::npos) {
    if (auto colon = r.find(": ", pos); colon != std::string::npos) r = r.substr(colon + 2);
  } else if (r.rfind("parse error: ", 0) == 0) {
    r = r.substr(13);
  }
  return r;
}

}  // namespace

Scenario parseScenario(const nlohmann::json& j, const std::string& source_name) {
  return Parser(source_name).scenario(j);
}

nlohmann::json loadJsonFile(const std::string& path) {
  const std::string text = readWholeFile(path);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, col] = lineColumn(text, e.byte);
    throw InputError(path + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": JSON syntax error: " + parseReason(e.what()));
  }
}

std::string scenarioBaseDir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Scenario loadScenarioFile(const std::string& path) {
  Scenario s = parseScenario(loadJsonFile(path), path);
  s.base_dir = scenarioBaseDir(path);
  return s;
}


void validateScenario(const Scenario& s, const std::string& source_name) {
  json j;
  try {
    j = json(scenarioToJson(s));
  } catch (const json::exception& e) {
    throw InputError(source_name + ": " + e.what());
  }
  (void)parseScenario(j, source_name);
}


}  // namespace sl
