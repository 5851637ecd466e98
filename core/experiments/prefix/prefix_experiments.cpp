// prefix-mooncake: what prefix caching and cache-aware routing buy on the
// Mooncake conversation trace, whose requests share KV blocks (hash_ids).
// Six runs per load: caching off / on x round-robin, prefix-aware,
// session-affinity; the table gives the cache's hit rate and counters and
// TTFT mean / p50 / p99.
#include "experiments/prefix/prefix_experiments.h"

#include "experiments/arrow/arrow_experiments.h"
#include "experiments/table.h"
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

namespace {

ExperimentResult prefixMooncake(const ExperimentOptions& o) {
  const std::vector<std::string> routers = {"round-robin", "prefix-aware", "session-affinity"};
  // Full: the 10-minute clip at its own rate and at twice it; quick: the
  // first 300 requests at twice the rate.
  const std::vector<double> scales = o.quick ? std::vector<double>{0.5} : std::vector<double>{1.0, 0.5};
  const auto maxReq = o.quick ? std::optional<std::int64_t>(300) : std::nullopt;
  ExperimentResult out;
  out.table.columns = {"time_scale", "rate_rps",    "caching",     "router",      "requests",    "hit_rate",
                       "hits",       "evictions",   "offload_hits", "ttft_mean_s", "ttft_p50_s", "ttft_p99_s"};
  std::string csv = "config,time_scale,rate_rps,caching,router,hit_rate,ttft_mean_s,ttft_p50_s,ttft_p99_s\n";
  std::vector<std::string> configs;
  for (double sc : scales)
    for (bool caching : {false, true})
      for (const std::string& router : routers) {
        Scenario s = prefixMooncakeScenario(router, caching, sc, maxReq);
        if (o.seed) s.run.seed = *o.seed;
        const std::string onOff = caching ? "on" : "off";
        const std::string label = router + ", caching " + onOff + " @ time_scale " + formatDouble(sc);
        if (o.onRun) o.onRun(label);
        const RunOutcome r = runInMemory(s, label);
        double rate = 0;
        if (r.records.size() >= 2) {
          const double span = nsToSeconds(r.records.back().arrival - r.records.front().arrival);
          if (span > 0) rate = static_cast<double>(r.records.size() - 1) / span;
        }
        const auto& pc = r.prefixCache;
        const std::string hitRate =
            pc ? num(pc->promptTokens > 0 ? static_cast<double>(pc->cachedTokens) / static_cast<double>(pc->promptTokens)
                                          : 0.0,
                     4)
               : "n/a";
        const Summary& m = r.summary;
        out.table.addRow({formatDouble(sc), num(rate, 3), onOff, router, std::to_string(m.arrived), hitRate,
                          pc ? std::to_string(pc->hits) : "n/a", pc ? std::to_string(pc->evictions) : "n/a",
                          pc ? std::to_string(pc->offloadHits) : "n/a", num(m.ttft_s.mean, 4), num(m.ttft_s.p50, 4),
                          num(m.ttft_s.p99, 4)});
        const std::string config = router + "/" + onOff;
        csv += config + "," + formatDouble(sc) + "," + num(rate, 3) + "," + onOff + "," + router + "," +
               (pc ? hitRate : "0") + "," + num(m.ttft_s.mean, 4) + "," + num(m.ttft_s.p50, 4) + "," +
               num(m.ttft_s.p99, 4) + "\n";
      }
  out.charts.push_back(
      {"prefix_mooncake.csv", csv,
       {{"", "config", {"ttft_p99_s"}, {"time_scale"}, {}, "Mooncake: P99 TTFT by router and caching",
         "P99 TTFT (s)", true},
        {"_mean", "config", {"ttft_mean_s"}, {"time_scale"}, {}, "Mooncake: mean TTFT by router and caching",
         "mean TTFT (s)", true},
        {"_hit_rate", "config", {"hit_rate"}, {"time_scale"}, {}, "Mooncake: prefix-cache hit rate",
         "hit rate (cached / prompt tokens)", true, {}, false, std::make_pair(0.0, 1.0)}}});
  out.notes.push_back(
      "hit_rate = cached prompt tokens / prompt tokens of first admissions (summary.json prefix_cache); n/a: "
      "caching off. Off, prefix-aware routes least-loaded (no cache to read).");
  return out;
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
}

}  // namespace sl::exp
