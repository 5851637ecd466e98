// prefix-mooncake: what prefix caching and cache-aware routing buy on the
// Mooncake conversation trace, whose requests share KV blocks (hash_ids).
// Six runs per load: caching off / on x round-robin, prefix-aware,
// session-affinity; the table gives the cache's hit rate and counters and
// TTFT mean / p50 / p99.
#include "experiments/prefix/prefix_experiments.h"

#include <algorithm>
#include <functional>

#include "experiments/arrow/arrow_experiments.h"
#include "experiments/table.h"
#include "scenario/scenario_io.h"
#include "util/strings.h"

namespace sl::exp {

namespace {

const ArrowTrace& mooncakeClip() {
  for (const ArrowTrace& t : arrowTraces())
    if (t.key == "mooncake") return t;
  throw std::logic_error("prefix-mooncake: Arrow's mooncake trace entry is missing");
}

}  // namespace

Scenario prefixMooncakeScenario(const std::string& router, bool caching, double timeScale,
                                std::optional<std::int64_t> maxRequests) {
  // Arrow's vllm-colocated setting, split into 8 TP 1 replicas so that the
  // router has a choice to make.
  Scenario s = arrowScenario(mooncakeClip(), "vllm-colocated", timeScale, 8, maxRequests);
  s.cluster.instances = 8;
  s.cluster.tp = 1;
  s.cluster.prefix_caching = caching;
  s.policy.router = router;
  return s;
}

/// prefix-sessions' scenario: the same 8 replicas on a synthetic workload
/// with shared prefixes. "system-prompt": Poisson at `rate`, each prompt
/// after one of 4 system prompts of 2 048 tokens; "sessions": 64 closed-loop
/// users (think time exp. mean 2 s), 4 turns a session, each turn's prompt =
/// the history + a new input.
Scenario prefixSyntheticScenario(const std::string& workload, const std::string& router, bool caching,
                                 std::int64_t requests) {
  nlohmann::json w = {{"input_tokens", {{"dist", "lognormal"}, {"median", 256}, {"p90", 1024}}},
                      {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
                      {"answer_tokens", {{"dist", "lognormal"}, {"median", 192}, {"p90", 768}}},
                      {"requests", requests}};
  if (workload == "system-prompt") {
    w["arrival"] = {{"process", "poisson"}, {"rate", 32.0}};
    w["prefix"] = {{"system_prompt_tokens", 2048}, {"system_prompts", 4}};
  } else if (workload == "sessions") {
    w["arrival"] = {{"process", "closed"},
                    {"concurrency", 64},
                    {"think_s", {{"dist", "exponential"}, {"mean", 2}, {"max", 20}}}};
    w["prefix"] = {{"turns", 4}};
  } else {
    throw std::logic_error("prefixSyntheticScenario: unknown workload " + workload);
  }
  nlohmann::json cluster = {{"instances", 8},       {"gpu", "h800-80g"},         {"tp", 1},
                            {"chunked_prefill", true}, {"max_num_batched_tokens", 8192}};
  if (caching) cluster["prefix_caching"] = true;
  const nlohmann::json j = {{"schema_version", 1},
                            {"cluster", cluster},
                            {"model", "llama-3.1-8b"},
                            {"workload", w},
                            {"policy", {{"id", "vllm-colocated"}, {"router", router}}},
                            {"run", {{"seed", 1}}}};
  return parseScenario(j, "prefix-sessions (" + workload + ")");
}

namespace {

/// One workload of a caching x router grid: its label (the table's first
/// column) and the scenario for (router, caching).
struct GridLoad {
  std::string label;
  std::function<Scenario(const std::string& router, bool caching)> scenario;
};

/// Caching off / on x round-robin, prefix-aware, session-affinity on each
/// load: hit rate and counters, TTFT mean / p50 / p99; one chart CSV.
ExperimentResult cachingByRouter(const std::vector<GridLoad>& loads, const std::string& loadColumn,
                                 const std::string& chartName, const std::string& what, const ExperimentOptions& o) {
  const std::vector<std::string> routers = {"round-robin", "prefix-aware", "session-affinity"};
  ExperimentResult out;
  out.table.columns = {loadColumn, "rate_rps",    "caching",     "router",      "requests",    "hit_rate",
                       "hits",       "evictions",   "offload_hits", "ttft_mean_s", "ttft_p50_s", "ttft_p99_s"};
  std::string csv = "config," + loadColumn + ",rate_rps,caching,router,hit_rate,ttft_mean_s,ttft_p50_s,ttft_p99_s\n";
  for (const GridLoad& load : loads)
    for (bool caching : {false, true})
      for (const std::string& router : routers) {
        Scenario s = load.scenario(router, caching);
        if (o.seed) s.run.seed = *o.seed;
        const std::string onOff = caching ? "on" : "off";
        const std::string label = router + ", caching " + onOff + " @ " + loadColumn + " " + load.label;
        if (o.onRun) o.onRun(label);
        const RunOutcome r = runInMemory(s, label);
        double rate = 0;
        if (r.records.size() >= 2) {
          std::int64_t first = r.records.front().arrival, last = first;
          for (const RequestRecord& rec : r.records) {
            first = std::min<std::int64_t>(first, rec.arrival);
            last = std::max<std::int64_t>(last, rec.arrival);
          }
          const double span = nsToSeconds(last - first);
          if (span > 0) rate = static_cast<double>(r.records.size() - 1) / span;
        }
        const auto& pc = r.prefixCache;
        const std::string hitRate =
            pc ? num(pc->promptTokens > 0 ? static_cast<double>(pc->cachedTokens) / static_cast<double>(pc->promptTokens)
                                          : 0.0,
                     4)
               : "n/a";
        const Summary& m = r.summary;
        out.table.addRow({load.label, num(rate, 3), onOff, router, std::to_string(m.arrived), hitRate,
                          pc ? std::to_string(pc->hits) : "n/a", pc ? std::to_string(pc->evictions) : "n/a",
                          pc ? std::to_string(pc->offloadHits) : "n/a", num(m.ttft_s.mean, 4), num(m.ttft_s.p50, 4),
                          num(m.ttft_s.p99, 4)});
        csv += router + "/" + onOff + "," + load.label + "," + num(rate, 3) + "," + onOff + "," + router + "," +
               (pc ? hitRate : "0") + "," + num(m.ttft_s.mean, 4) + "," + num(m.ttft_s.p50, 4) + "," +
               num(m.ttft_s.p99, 4) + "\n";
      }
  out.charts.push_back(
      {chartName, csv,
       {{"", "config", {"ttft_p99_s"}, {loadColumn}, {}, what + ": P99 TTFT by router and caching", "P99 TTFT (s)",
         true},
        {"_mean", "config", {"ttft_mean_s"}, {loadColumn}, {}, what + ": mean TTFT by router and caching",
         "mean TTFT (s)", true},
        {"_hit_rate", "config", {"hit_rate"}, {loadColumn}, {}, what + ": prefix-cache hit rate",
         "hit rate (cached / prompt tokens)", true, {}, false, std::make_pair(0.0, 1.0)}}});
  out.notes.push_back(
      "hit_rate = cached prompt tokens / prompt tokens of first admissions (summary.json prefix_cache); n/a: "
      "caching off. Off, prefix-aware routes least-loaded (no cache to read), and so does session-affinity when "
      "requests have no session.");
  return out;
}

ExperimentResult prefixMooncake(const ExperimentOptions& o) {
  // Full: the 10-minute clip at its own rate and at twice it; quick: the
  // first 300 requests at twice the rate.
  const std::vector<double> scales = o.quick ? std::vector<double>{0.5} : std::vector<double>{1.0, 0.5};
  const auto maxReq = o.quick ? std::optional<std::int64_t>(300) : std::nullopt;
  std::vector<GridLoad> loads;
  for (double sc : scales)
    loads.push_back({formatDouble(sc), [sc, maxReq](const std::string& router, bool caching) {
                       return prefixMooncakeScenario(router, caching, sc, maxReq);
                     }});
  return cachingByRouter(loads, "time_scale", "prefix_mooncake.csv", "Mooncake", o);
}

ExperimentResult prefixSessions(const ExperimentOptions& o) {
  const std::int64_t n = o.quick ? 300 : 3000;
  std::vector<GridLoad> loads;
  for (const char* wl : {"system-prompt", "sessions"})
    loads.push_back({wl, [wl, n](const std::string& router, bool caching) {
                       return prefixSyntheticScenario(wl, router, caching, n);
                     }});
  return cachingByRouter(loads, "workload", "prefix_sessions.csv", "Shared-prefix workloads", o);
}

}  // namespace

void addPrefixExperiments(std::vector<Experiment>& out) {
  out.push_back({"prefix-mooncake", "Prefix caching",
                 "Mooncake trace: hit rate and TTFT, caching off/on x round-robin, prefix-aware, session-affinity",
                 "8 vLLM replicas (vllm-colocated, TP 1) on Arrow's testbed (8 x h800-80g, llama-3.1-8b, chunked "
                 "prefill 8192) replaying the Mooncake clip (first 10 min, hash_ids as the shared blocks) at "
                 "time_scale 1 and 0.5, prefix caching off and on, under round-robin, prefix-aware and "
                 "session-affinity routing: hit rate, hits, evictions, TTFT mean/p50/p99. --quick: first 300 "
                 "requests at time_scale 0.5.",
                 prefixMooncake});
  out.push_back({"prefix-sessions", "Prefix caching",
                 "System prompts and multi-turn sessions: hit rate and TTFT, caching off/on x three routers",
                 "The same 8 vLLM replicas (8 x h800-80g, llama-3.1-8b, TP 1, chunked prefill 8192) on two "
                 "synthetic shared-prefix workloads: 'system-prompt' (Poisson 32 req/s, 4 system prompts of 2048 "
                 "tokens) and 'sessions' (64 closed-loop users, 4 turns a session): caching off and on under "
                 "round-robin, prefix-aware and session-affinity routing. 3000 requests each; --quick: 300.",
                 prefixSessions});
}

}  // namespace sl::exp
