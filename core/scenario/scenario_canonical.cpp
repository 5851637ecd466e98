// Canonical scenario JSON (scenario_io.h: scenarioToJson, dumpScenario):
// every field, the key order of 60-cli-formats.md, optional fields as null.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario_io.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {


ordered_json optNum(const std::optional<double>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json optStr(const std::optional<std::string>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

const char* distName(LengthDist::Kind k) {
  switch (k) {
    case LengthDist::Kind::Constant: return "constant";
    case LengthDist::Kind::Uniform: return "uniform";
    case LengthDist::Kind::Lognormal: return "lognormal";
    case LengthDist::Kind::Empirical: return "empirical";
    case LengthDist::Kind::Mixture: return "mixture";
    case LengthDist::Kind::Exponential: return "exponential";
  }
  return "constant";
}

void distInto(ordered_json& o, const LengthDist& d) {
  o["dist"] = distName(d.kind);
  switch (d.kind) {
    case LengthDist::Kind::Constant:
      o["value"] = d.value;
      break;
    case LengthDist::Kind::Uniform:
      o["min"] = d.min;
      o["max"] = d.max;
      break;
    case LengthDist::Kind::Lognormal:
      if (d.median || d.p90 || !(d.mu || d.sigma)) {
        o["median"] = optNum(d.median);
        o["p90"] = optNum(d.p90);
      } else {
        o["mu"] = optNum(d.mu);
        o["sigma"] = optNum(d.sigma);
      }
      break;
    case LengthDist::Kind::Exponential:
      o["mean"] = d.mean;
      break;
    case LengthDist::Kind::Empirical:
      o["path"] = d.path;
      o["column"] = d.column;
      break;
    case LengthDist::Kind::Mixture: {
      ordered_json parts = ordered_json::array();
      for (std::size_t i = 0; i < d.parts.size(); ++i) {
        ordered_json part = ordered_json::object();
        part["weight"] = i < d.weights.size() ? ordered_json(d.weights[i]) : ordered_json(nullptr);
        distInto(part, d.parts[i]);
        parts.push_back(std::move(part));
      }
      o["parts"] = std::move(parts);
      break;
    }
  }
  if (d.kind != LengthDist::Kind::Uniform) {
    if (d.clipMin) o["min"] = *d.clipMin;
    if (d.clipMax) o["max"] = *d.clipMax;
  }
}

ordered_json distJson(const LengthDist& d) {
  ordered_json o = ordered_json::object();
  distInto(o, d);
  return o;
}

ordered_json freeJson(const json& j) { return ordered_json(j); }

}  // namespace

nlohmann::ordered_json scenarioToJson(const Scenario& s) {
  ordered_json j = ordered_json::object();
  j["schema_version"] = s.schema_version;

  const ClusterSpec& c = s.cluster;
  ordered_json cl = ordered_json::object();
  if (c.pools.empty()) {  // (with pools, they are the pools' and written there)
    cl["instances"] = c.instances;
    cl["gpu"] = c.gpu;
    cl["tp"] = c.tp;
  }
  // Written only when not the default, so older dumps (and every summary.json
  // of a bf16 run) stay byte-identical.
  if (c.model_dtype != "bf16") cl["model_dtype"] = c.model_dtype;
  if (c.kv_dtype != "bf16") cl["kv_dtype"] = c.kv_dtype;
  cl["gpu_memory_utilization"] = c.gpu_memory_utilization;
  cl["kv_capacity_fraction"] = c.kv_capacity_fraction;
  cl["block_size"] = c.block_size;
  cl["watermark"] = c.watermark;
  cl["swap_gib"] = c.swap_gib;
  cl["preemption"] = c.preemption;
  cl["chunked_prefill"] = c.chunked_prefill;
  cl["max_num_seqs"] = c.max_num_seqs;
  cl["max_num_batched_tokens"] = c.max_num_batched_tokens;
  ordered_json fab = ordered_json::object();
  fab["gpus_per_node"] = c.fabric.gpus_per_node;
  fab["nic_gbps"] = c.fabric.nic_gbps;
  fab["link_latency_us"] = c.fabric.link_latency_us;
  cl["fabric"] = std::move(fab);
  ordered_json live = ordered_json::object();
  live["max_concurrent"] = c.live_migration.max_concurrent;
  live["max_rounds"] = c.live_migration.max_rounds;
  cl["live_migration"] = std::move(live);
  // Written only when not the default, so files saved before the field
  // existed (and their summaries) stay byte-identical.
  if (c.allreduce != "vllm") cl["allreduce"] = c.allreduce;
  cl["profile"] = optStr(c.profile);
  // Written only when set, so scenarios without it (and sweep spec hashes
  // over them) read as they did before the key existed.
  if (c.engine) cl["engine"] = *c.engine;
  // Written only when given (the front end arrived later; same reason).
  if (c.frontend.is_object() && !c.frontend.empty()) cl["frontend"] = freeJson(c.frontend);
  // Written only when on (prefix caching arrived later; same reason).
  if (c.prefix_caching) cl["prefix_caching"] = true;
  if (c.prefix_cache_cpu_gb > 0) cl["prefix_cache_cpu_gb"] = c.prefix_cache_cpu_gb;
  cl["cost"] = c.cost.is_null() ? ordered_json::object() : freeJson(c.cost);
  // Expert parallelism (issue 47): written only when not the default (same reason).
  if (c.expert_dtype) cl["expert_dtype"] = *c.expert_dtype;
  if (c.ep != 1 && c.pools.empty()) cl["ep"] = c.ep;
  if (c.attention_dp && c.pools.empty()) cl["attention_dp"] = true;
  if (c.ep_redundant != 0) cl["ep_redundant"] = c.ep_redundant;
  if (c.ep_placement) cl["ep_placement"] = *c.ep_placement;
  if (c.two_batch_overlap) cl["two_batch_overlap"] = true;
  if (c.tbo_min_tokens != 2) cl["tbo_min_tokens"] = c.tbo_min_tokens;
  if (c.dp_scheduler != "shared") cl["dp_scheduler"] = c.dp_scheduler;
  if (!c.moe_routing.isDefault()) {
    ordered_json r = ordered_json::object();
    r["kind"] = c.moe_routing.kind;
    if (c.moe_routing.kind == "zipf") r["skew"] = c.moe_routing.skew;
    if (c.moe_routing.kind == "file") r["path"] = c.moe_routing.path;
    cl["moe_routing"] = std::move(r);
  }
  // Prices (issue 49): written only when given (same reason).
  if (c.price_usd_per_gpu_hour) cl["price_usd_per_gpu_hour"] = *c.price_usd_per_gpu_hour;
  // Mixed pools (issue 49): written only when given (same reason).
  if (!c.pools.empty()) {
    ordered_json arr = ordered_json::array();
    for (const PoolSpec& p : c.pools) {
      ordered_json o = ordered_json::object();
      o["gpu"] = p.gpu;
      o["instances"] = p.instances;
      o["tp"] = p.tp;
      if (p.ep != 1) o["ep"] = p.ep;
      if (p.attention_dp) o["attention_dp"] = true;
      if (p.price_usd_per_gpu_hour) o["price_usd_per_gpu_hour"] = *p.price_usd_per_gpu_hour;
      if (p.role != "colocated") o["role"] = p.role;
      arr.push_back(std::move(o));
    }
    cl["pools"] = std::move(arr);
  }
  // Speculative decoding (issue 48): written only when on (same reason).
  if (c.speculative.on) {
    const SpeculativeScenario& sp = c.speculative;
    ordered_json o = ordered_json::object();
    o["method"] = sp.method;
    o["k"] = sp.k;
    if (!sp.draft_model.empty()) o["draft_model"] = sp.draft_model;
    if (sp.method == "ngram") o["ngram_us_per_seq"] = sp.ngram_us_per_seq;
    if (!sp.acceptance_preset.empty())
      o["acceptance"] = sp.acceptance_preset;
    else if (!sp.alpha.empty())
      o["acceptance"] = ordered_json{{"alpha", sp.alpha}};
    else if (sp.acceptance_length > 0)
      o["acceptance"] = ordered_json{{"length", sp.acceptance_length}};
    if (sp.request_sigma > 0) o["request_sigma"] = sp.request_sigma;
    if (sp.off_from > 0) o["dynamic_k"] = ordered_json{{"full_until", sp.full_until}, {"off_from", sp.off_from}};
    cl["speculative"] = std::move(o);
  }
  j["cluster"] = std::move(cl);

  j["model"] = s.model;

  const WorkloadSpec& w = s.workload;
  ordered_json wl = ordered_json::object();
  wl["preset"] = optStr(w.preset);
  ordered_json ar = ordered_json::object();
  switch (w.arrival.process) {
    case ArrivalSpec::Process::Poisson:
      ar["process"] = "poisson";
      ar["rate"] = w.arrival.rate;
      break;
    case ArrivalSpec::Process::Gamma:
      ar["process"] = "gamma";
      ar["rate"] = w.arrival.rate;
      ar["cv"] = w.arrival.cv;
      break;
    case ArrivalSpec::Process::Schedule: {
      ar["process"] = "schedule";
      ordered_json segs = ordered_json::array();
      for (const auto& seg : w.arrival.schedule) {
        ordered_json o = ordered_json::object();
        o["duration_s"] = seg.duration_s;
        o["rate"] = seg.rate;
        segs.push_back(std::move(o));
      }
      ar["schedule"] = std::move(segs);
      break;
    }
    case ArrivalSpec::Process::Closed:
      ar["process"] = "closed";
      ar["concurrency"] = w.arrival.concurrency;
      ar["think_s"] = w.arrival.think_s ? distJson(*w.arrival.think_s) : ordered_json(nullptr);
      break;
  }
  wl["arrival"] = std::move(ar);
  wl["input_tokens"] = distJson(w.input_tokens);
  wl["reasoning_tokens"] = distJson(w.reasoning_tokens);
  wl["answer_tokens"] = distJson(w.answer_tokens);
  if (w.trace) {
    const TraceSpec& t = *w.trace;
    ordered_json tr = ordered_json::object();
    tr["path"] = t.path;
    tr["format"] = t.format;
    tr["time_scale"] = t.time_scale;
    tr["max_requests"] = t.max_requests ? ordered_json(*t.max_requests) : ordered_json(nullptr);
    if (t.window_start_s || t.window_end_s) {
      ordered_json win = ordered_json::object();
      win["start_s"] = optNum(t.window_start_s);
      win["end_s"] = optNum(t.window_end_s);
      tr["window"] = std::move(win);
    } else {
      tr["window"] = nullptr;
    }
    if (t.lenient) tr["lenient"] = true;  // written only when set (older dumps stay byte-identical)
    wl["trace"] = std::move(tr);
  } else {
    wl["trace"] = nullptr;
  }
  wl["requests"] = w.requests;
  if (w.prefix) {  // written only when set (files saved before the key existed keep their bytes)
    ordered_json px = ordered_json::object();
    px["system_prompt_tokens"] = w.prefix->system_prompt_tokens;
    px["system_prompts"] = w.prefix->system_prompts;
    px["turns"] = w.prefix->turns;
    wl["prefix"] = std::move(px);
  }
  j["workload"] = std::move(wl);

  ordered_json pol = ordered_json::object();
  pol["id"] = s.policy.id;
  pol["router"] = s.policy.router;
  if (s.policy.prefix_weight != 1.0) pol["prefix_weight"] = s.policy.prefix_weight;  // only when set: old files keep their bytes
  pol["knobs"] = s.policy.knobs.is_null() ? ordered_json::object() : freeJson(s.policy.knobs);
  j["policy"] = std::move(pol);

  ordered_json slo = ordered_json::object();
  slo["ttft_s"] = optNum(s.slo.ttft_s);
  slo["tpot_s"] = optNum(s.slo.tpot_s);
  slo["ttfat_s"] = s.slo.ttfat_s;
  slo["qoe_tpot_s"] = s.slo.qoe_tpot_s;
  slo["qoe_threshold"] = s.slo.qoe_threshold;
  j["slo"] = std::move(slo);

  ordered_json run = ordered_json::object();
  run["seed"] = s.run.seed;
  run["duration_s"] = optNum(s.run.duration_s);
  // Written only when set, so scenarios without a window keep their bytes
  // (and their runs their fingerprints).
  if (s.run.measure) {
    ordered_json m = ordered_json::object();
    m["warmup_s"] = s.run.measure->warmup_s;
    m["window_s"] = s.run.measure->window_s;
    run["measure"] = std::move(m);
  }
  run["probe_interval_s"] = s.run.probe_interval_s;
  run["rolling_window_s"] = s.run.rolling_window_s;
  run["trace_request_limit"] = s.run.trace_request_limit;
  j["run"] = std::move(run);
  return j;
}

std::string dumpScenario(const Scenario& s) {
  return scenarioToJson(s).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace sl
