#include "cli/commands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/interrupt.h"
#include "cli/progress.h"
#include "cost/cost_report.h"
#include "cost/engine_presets.h"
#include "cost/presets.h"
#include "cost/speculative.h"
#include "policy/registry.h"
#include "policy/routers.h"
#include "run/execute.h"
#include "run/run.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "util/error.h"
#include "util/strings.h"
#include "workload/presets.h"
#include "workload/trace_formats.h"

namespace sl::cli {

Scenario loadWithOverrides(const ScenarioArgs& a, std::optional<LiveChanges>* live, const char* ignoredBy) {
  nlohmann::json doc = loadJsonFile(a.path);
  for (const std::string& s : a.sets) applySetOverride(doc, s);
  // A saved run (docs/scenario-format.md "Saved runs"): its live_changes
  // section is checked however it is used.
  std::optional<LiveChanges> lc = takeLiveChanges(doc, a.path);
  Scenario s = parseScenario(doc, a.path);
  s.base_dir = scenarioBaseDir(a.path);
  if (a.seed) s.run.seed = *a.seed;
  if (lc) validateLiveChanges(s, *lc, a.path);
  if (live) {
    *live = std::move(lc);
  } else if (lc && !lc->changes.empty()) {
    std::fprintf(stderr, "servelab-cli: warning: %s is a saved run: %s runs its scenario without its %zu live "
                         "change(s) (servelab-cli run replays them)\n",
                 a.path.c_str(), ignoredBy ? ignoredBy : "this command", lc->changes.size());
  }
  return s;
}

namespace {

// One line with a trace reader's counts (docs/traces.md).
std::string traceStatsLine(const TraceStats& t) {
  std::string s = "trace (" + t.format + "): " + std::to_string(t.rows) + " rows read, " +
                  std::to_string(t.emitted) + " requests emitted, " + std::to_string(t.skipped()) +
                  " skipped (" + std::to_string(t.malformed) + " malformed, " + std::to_string(t.failed) +
                  " failed, " + std::to_string(t.before_window) + " before the window)";
  if (t.raised_to_one) s += ", " + std::to_string(t.raised_to_one) + " raised to 1 token";
  if (t.context_clipped) s += ", " + std::to_string(t.context_clipped) + " clipped to the context window";
  if (!t.first_malformed.empty()) s += "; first malformed row: " + t.first_malformed;
  return s;
}

// --lenient: skip malformed trace rows (counted) instead of failing.
void applyLenient(const RunArgs& a, Scenario& s) {
  if (!a.lenient) return;
  if (!s.workload.trace) {
    std::fprintf(stderr, "servelab-cli: warning: --lenient ignored: %s has no workload.trace\n",
                 a.scenario.path.c_str());
    return;
  }
  s.workload.trace->lenient = true;
}

/// `traceLine`: print the trace reader's counts (stdout, or stderr when
/// stdout carries JSON). `live`: a saved run's live changes, replayed at
/// their event counts; `checkAt`: the event count whose fingerprint to record
/// (-1: none).
// --outputs, checked before anything runs: InputError (exit 2) naming the
// bad value, or --outputs without --out.
OutputSet outputsOf(const RunArgs& a) {
  if (a.outputs.empty()) return {};
  if (a.out.empty()) throw InputError("--outputs: only with --out DIR (nothing is written without it)");
  return parseOutputSet(a.outputs);
}

RunResult runOne(const Scenario& s, const std::string& source, const std::string& out, const OutputSet& outputs,
                 bool quiet,
                 bool recordWallTime, bool traceLine = false, bool jsonOut = false,
                 const LiveChanges* live = nullptr, std::int64_t checkAt = -1) {
  std::unique_ptr<LiveRun> liveRun;
  std::unique_ptr<PreparedRun> plain;
  if (live) liveRun = prepareLiveRun(s, source);
  else plain = prepareRun(s, source);
  PreparedRun* prepared = live ? liveRun->prepared.get() : plain.get();
  ProgressBar bar(!quiet);
  RunOptions opt;
  opt.outDir = out;
  opt.outputs = outputs;
  opt.recordWallTime = recordWallTime;
  opt.progress = [&bar](double f, double simS) { bar.update(f, simS); };
  opt.checkAtEvents = checkAt;
  opt.cancel = &interruptFlag();
  InterruptScope interrupts;
  RunResult r = live ? executeRun(*liveRun, live->changes, opt) : executeRun(*prepared, opt);
  bar.done();
  if (r.stalled)
    std::fprintf(stderr, "servelab-cli: warning: %s (policy %s) stalled with %lld requests in flight: nothing could "
                         "run any more\n", source.c_str(), s.policy.id.c_str(),
                 static_cast<long long>(r.summary.in_flight));
  // The counts are in summary.json "trace" too: --quiet prints them only
  // when rows were skipped, as a warning on stderr.
  if (traceLine && prepared->traceStats) {
    const TraceStats& t = *prepared->traceStats;
    if (!quiet) {
      const std::string line = traceStatsLine(t) + "\n";
      std::fputs(line.c_str(), jsonOut ? stderr : stdout);
      std::fflush(jsonOut ? stderr : stdout);
    } else if (t.skipped() > 0) {
      std::fprintf(stderr, "servelab-cli: warning: %s\n", traceStatsLine(t).c_str());
    }
  }
  return r;
}

std::string fmt(double v, int decimals = 3) {
  if (!std::isfinite(v)) return "-";
  return formatFixed(v, decimals);
}

// The output files a run wrote (their names, in the order of docs: the
// optional ones only when the run had them, those --outputs left out never),
// comma-separated. From the run itself, not the folder, which may hold files
// of an earlier run.
std::string writtenFiles(const RunResult& r) {
  std::string list;
  for (const std::string& path : r.files) {
    if (!list.empty()) list += ',';
    list += std::filesystem::path(path).filename().string();
  }
  return list;
}

}  // namespace

int cmdRun(const RunArgs& a) {
  const OutputSet outputs = outputsOf(a);
  std::optional<LiveChanges> live;
  Scenario s = loadWithOverrides(a.scenario, &live);
  applyLenient(a, s);
  // A saved run is checked against the fingerprint the GUI saved, unless an
  // option changed the scenario (then it is another run on purpose).
  const bool changed = !a.scenario.sets.empty() || a.scenario.seed || a.lenient;
  const std::int64_t checkAt = live && live->savedAt && !changed ? live->savedAt->events : -1;
  const RunResult r = runOne(s, a.scenario.path, a.out, outputs, a.quiet, a.recordWallTime, true, a.json,
                             live ? &*live : nullptr, checkAt);
  std::string liveLine;
  if (live) {
    const std::string& path = a.scenario.path;
    if (r.changesApplied < live->changes.size()) {
      const KnobChange& c = live->changes[r.changesApplied];
      std::fprintf(stderr, "servelab-cli: warning: %s: live_changes.changes[%zu] and later were never applied: the "
                           "run ended after %lld events, before event %lld\n",
                   path.c_str(), r.changesApplied, static_cast<long long>(r.events), static_cast<long long>(c.events));
    }
    liveLine = "live changes: " + std::to_string(r.changesApplied) + " of " + std::to_string(live->changes.size()) +
               " applied at their event counts (saved run)\n";
    if (checkAt >= 0) {
      const SavedAt& at = *live->savedAt;
      const std::string saved = fingerprintHex(at.fingerprint);
      const std::string by = at.servelab.empty() ? std::string() : " (saved by ServeLab " + at.servelab + ")";
      if (!r.fingerprintAtCheck) {
        std::fprintf(stderr, "servelab-cli: warning: %s: this run does not reproduce the saved one: it ended after "
                             "%lld events, before saved_at.events %lld%s\n",
                     path.c_str(), static_cast<long long>(r.events), static_cast<long long>(at.events), by.c_str());
      } else if (*r.fingerprintAtCheck != at.fingerprint) {
        std::fprintf(stderr, "servelab-cli: warning: %s: this run does not reproduce the saved one: at event %lld its "
                             "fingerprint is %s, the saved run's is %s%s\n",
                     path.c_str(), static_cast<long long>(at.events), fingerprintHex(*r.fingerprintAtCheck).c_str(),
                     saved.c_str(), by.c_str());
      } else {
        liveLine += "reproduces the saved run: fingerprint " + saved + " at event " + std::to_string(at.events) +
                    " (t = " + fmt(at.simS, 1) + " s)\n";
      }
    } else if (live->savedAt) {
      liveLine += "not checked against the saved run: --set, --seed or --lenient changed the scenario\n";
    }
  }
  if (a.json) {
    std::cout << r.summaryJson.dump(2) << "\n";
  } else if (!a.quiet) {
    std::cout << "ServeLab " << kServeLabVersion << " — " << a.scenario.path << "  (policy " << s.policy.id
              << ", seed " << s.run.seed << ")\n"
              << formatSummaryTable(r.summary) << "fingerprint " << fingerprintHex(r.fingerprint) << ", "
              << r.events << " events, wall " << fmt(r.wallSeconds, 2) << " s\n" << liveLine;
    if (!a.out.empty()) std::cout << "wrote " << a.out << "/{" << writtenFiles(r) << "}\n";
  }
  return 0;
}

int cmdCompare(const RunArgs& a, const std::vector<std::string>& policies) {
  if (policies.empty()) throw InputError("--policies: give at least one policy id, e.g. fcfs,rr");
  const OutputSet outputs = outputsOf(a);
  Scenario base = loadWithOverrides(a.scenario, nullptr, "compare");
  applyLenient(a, base);
  for (std::size_t i = 0; i < policies.size(); ++i) {
    (void)policyInfo(policies[i]);  // fail before running anything
    if (std::find(policies.begin(), policies.begin() + static_cast<std::ptrdiff_t>(i), policies[i]) !=
        policies.begin() + static_cast<std::ptrdiff_t>(i))
      throw InputError("--policies: '" + policies[i] + "' is listed twice (each policy once, e.g. fcfs,rr)");
  }
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  std::vector<Summary> sums;
  for (const std::string& p : policies) {
    Scenario s = base;
    s.policy.id = p;
    s.policy.knobs = nlohmann::json::object();
    if (p == base.policy.id) s.policy.knobs = base.policy.knobs;
    const std::string out = a.out.empty() ? "" : a.out + "/" + p;
    RunResult r = runOne(s, a.scenario.path, out, outputs, a.quiet, a.recordWallTime, p == policies.front(), a.json);
    runs.push_back({{"policy", p}, {"summary", r.summaryJson}});
    sums.push_back(r.summary);
  }
  if (a.json) {
    std::cout << nlohmann::ordered_json{{"runs", runs}}.dump(2) << "\n";
    return 0;
  }
  if (a.quiet) return 0;
  // Side-by-side table; deltas in % against the first policy.
  struct Row {
    const char* name;
    double (*get)(const Summary&);
    int decimals = 3;  // counts: 0
  };
  const Row rows[] = {
      {"TTFT p50 (s)", [](const Summary& s) { return s.ttft_s.p50; }},
      {"TTFT p99 (s)", [](const Summary& s) { return s.ttft_s.p99; }},
      {"TPOT p50 (s)", [](const Summary& s) { return s.tpot_s.p50; }},
      {"TPOT p99 (s)", [](const Summary& s) { return s.tpot_s.p99; }},
      {"E2E p50 (s)", [](const Summary& s) { return s.e2e_s.p50; }},
      {"QoE mean", [](const Summary& s) { return s.qoe_mean; }},
      {"QoE violation", [](const Summary& s) { return s.qoe_violation_rate; }},
      {"SLO attainment", [](const Summary& s) { return s.slo_attainment; }},
      {"tokens/s", [](const Summary& s) { return s.tokens_per_s; }, 1},
      {"preemptions", [](const Summary& s) { return static_cast<double>(s.preemptions); }, 0},
      {"migrations", [](const Summary& s) { return static_cast<double>(s.migrations); }, 0},
  };
  std::printf("%-16s", "metric");
  for (const std::string& p : policies) std::printf(" %18s", p.c_str());
  std::printf("\n");
  for (const Row& row : rows) {
    std::printf("%-16s", row.name);
    const double ref = row.get(sums[0]);
    for (std::size_t i = 0; i < sums.size(); ++i) {
      const double v = row.get(sums[i]);
      std::string cell = fmt(v, row.decimals);
      if (i > 0 && std::isfinite(v) && std::isfinite(ref) && ref != 0)
        cell += " (" + std::string(v >= ref ? "+" : "") + fmt((v - ref) / std::fabs(ref) * 100, 1) + "%)";
      std::printf(" %18s", cell.c_str());
    }
    std::printf("\n");
  }
  // Cost (summary.json's `cost`, docs/metrics.md "Cost"): the cluster's
  // price is the same for every policy; what a token and a request meeting
  // the SLO cost is not. "-" where a GPU has no known price.
  const struct {
    const char* name;
    const char* key;
    int decimals;
  } costRows[] = {{"USD/hour", "usd_per_hour", 2},
                  {"USD/Mtok (out)", "usd_per_million_tokens", 3},
                  {"USD/Mtok (in)", "usd_per_million_input_tokens", 3},
                  {"goodput/USD", "goodput_per_usd", 1}};
  for (const auto& row : costRows) {
    std::printf("%-16s", row.name);
    const auto value = [&](std::size_t i) {
      const auto& c = runs[i]["summary"]["cost"];
      return c.contains(row.key) && c[row.key].is_number() ? c[row.key].get<double>() : std::nan("");
    };
    const double ref = value(0);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double v = value(i);
      std::string cell = std::isfinite(v) ? fmt(v, row.decimals) : "-";
      if (i > 0 && std::isfinite(v) && std::isfinite(ref) && ref != 0 && v != ref)
        cell += " (" + std::string(v >= ref ? "+" : "") + fmt((v - ref) / std::fabs(ref) * 100, 1) + "%)";
      std::printf(" %18s", cell.c_str());
    }
    std::printf("\n");
  }
  // Abandoned stop-and-copies (summary.json's `migrations_abandoned`, written
  // only when nonzero): a row only when some run has one.
  bool anyAbandoned = false;
  for (const auto& run : runs) anyAbandoned = anyAbandoned || run["summary"].contains("migrations_abandoned");
  if (anyAbandoned) {
    std::printf("%-16s", "migr. abandoned");
    for (const auto& run : runs)
      std::printf(" %18s", std::to_string(run["summary"].value("migrations_abandoned", std::int64_t{0})).c_str());
    std::printf("\n");
  }
  return 0;
}

int cmdValidate(const ScenarioArgs& a, bool printCanonical) {
  std::optional<LiveChanges> live;
  const Scenario s = loadWithOverrides(a, &live);
  auto prepared = prepareRun(s, a.path);  // checks presets, knobs, capacity, workload files
  if (printCanonical) {
    std::cout << (live ? dumpSavedRun(s, *live) : dumpScenario(s));
  } else {
    std::cout << a.path << ": OK — ";
    if (s.cluster.pools.empty()) {
      std::cout << s.cluster.instances << " × " << s.cluster.gpu << " (tp " << s.cluster.tp << "), "
                << prepared->model.name << ", policy " << s.policy.id << ", KV capacity "
                << prepared->sim.instance.gpuBlocks * s.cluster.block_size << " tokens per instance";
    } else {  // mixed pools: each with its GPU, TP, role and KV capacity
      for (std::size_t i = 0; i < s.cluster.pools.size(); ++i) {
        const PoolSpec& p = s.cluster.pools[i];
        std::cout << (i ? " + " : "") << p.instances << " × " << p.gpu << " (tp " << p.tp
                  << (p.role != "colocated" ? ", " + p.role : "") << ", KV "
                  << prepared->sim.pools[i].instance.gpuBlocks * s.cluster.block_size << " tokens)";
      }
      std::cout << ", " << prepared->model.name << ", policy " << s.policy.id;
    }
    if (live) std::cout << "; a saved run with " << live->changes.size() << " live change(s)";
    std::cout << "\n";
  }
  return 0;
}

int cmdPresets(const std::string& what, bool json) {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const std::vector<std::string> kinds = {"gpus",    "models",  "policies", "workloads",
                                          "routers", "fabrics", "engines",  "acceptance"};
  if (!what.empty() && std::find(kinds.begin(), kinds.end(), what) == kinds.end()) {
    std::string msg = "presets: unknown kind '" + what + "'";
    if (auto s = didYouMean(what, kinds)) msg += " (did you mean '" + *s + "'?)";
    throw InputError(msg + "; one of gpus, models, policies, workloads, routers, fabrics, engines, acceptance");
  }
  nlohmann::ordered_json j;
  auto want = [&](const char* k) { return what.empty() || what == k; };
  if (want("gpus")) {
    auto& arr = j["gpus"] = nlohmann::ordered_json::array();
    for (const GpuSpec& g : reg.allGpus()) {
      const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nullptr; };
      arr.push_back({{"id", g.id},
                     {"name", g.name},
                     {"bf16_tflops", g.bf16_tflops},
                     {"fp8_tflops", opt(g.fp8_tflops)},
                     {"hbm_tbps", g.hbm_tbps},
                     {"hbm_gib", g.hbm_gib},
                     {"nvlink_gbps", opt(g.nvlink_gbps)},
                     {"peer_link_gbps", opt(g.peer_link_gbps)},
                     {"host_link_gbps", g.host_link_gbps},
                     {"source", g.source}});
      if (!g.coefficients.empty()) {
        nlohmann::ordered_json c = nlohmann::ordered_json::object();
        for (const auto& [key, value] : g.coefficients) c[key] = value;
        arr.back()["coefficients"] = c;
        arr.back()["coefficients_source"] = g.coefficients_source;
      }
      if (!json) {
        const std::string fp8 = g.fp8_tflops ? std::to_string(std::lround(*g.fp8_tflops)) : "-";
        std::printf("gpu       %-22s %-34s %6.0f TFLOP/s bf16 %5s fp8 %5.2f TB/s %4.0f GiB%s\n", g.id.c_str(),
                    g.name.c_str(), g.bf16_tflops, fp8.c_str(), g.hbm_tbps, g.hbm_gib,
                    g.coefficients.empty() ? "" : "  (own per-operator fit)");
      }
    }
  }
  if (want("models")) {
    auto& arr = j["models"] = nlohmann::ordered_json::array();
    for (const ModelSpec& m : reg.allModels()) {
      arr.push_back({{"id", m.id}, {"name", m.name}, {"params_b", m.paramCount() / 1e9},
                     {"kv_bytes_per_token", m.kvBytesPerToken()}, {"max_context", m.max_context},
                     {"source", m.source}});
      if (m.isMoe()) {
        arr.back()["active_params_b"] = m.activeParamCount() / 1e9;
        arr.back()["moe"] = {{"experts", m.experts}, {"experts_per_token", m.experts_per_token},
                             {"shared_experts", m.shared_experts}, {"moe_layers", m.moeLayers()}};
      }
      if (m.hasMla()) arr.back()["attention"] = "mla";
      if (!json) {
        std::string note;
        if (m.isMoe()) {
          char active[32];
          std::snprintf(active, sizeof active, "%.2f", m.activeParamCount() / 1e9);
          note = "  MoE " + std::to_string(m.experts_per_token) + "/" + std::to_string(m.experts) + " experts, " +
                 active + " B active";
        }
        if (m.hasMla()) note += ", MLA";
        std::printf("model     %-22s %-34s %6.2f B params %7lld KiB KV/token%s\n", m.id.c_str(), m.name.c_str(),
                    m.paramCount() / 1e9, static_cast<long long>(m.kvBytesPerToken() / 1024), note.c_str());
      }
    }
  }
  if (want("fabrics")) {
    auto& arr = j["fabrics"] = nlohmann::ordered_json::array();
    for (const FabricPreset& f : reg.allFabrics()) {
      arr.push_back({{"id", f.id}, {"name", f.name}, {"nic_gbps", f.nic_gbps}, {"gpus_per_node", f.gpus_per_node}});
      if (!json) std::printf("fabric    %-22s %s\n", f.id.c_str(), f.name.c_str());
    }
  }
  if (want("engines")) {
    auto& arr = j["engines"] = nlohmann::ordered_json::array();
    for (const EnginePreset& e : enginePresets()) {
      arr.push_back({{"id", e.id}, {"name", e.name}, {"default", e.isDefault}, {"coefficients", e.coefficients},
                     {"frontend", e.frontend}, {"sources", e.sources}});
      if (!json)
        std::printf("engine    %-22s %s%s: %s%s%s\n", e.id.c_str(), e.name.c_str(), e.isDefault ? " (default)" : "",
                    e.coefficients.dump().c_str(), e.frontend.empty() ? "" : ", front end ",
                    e.frontend.empty() ? "" : e.frontend.dump().c_str());
    }
  }
  if (want("acceptance")) {  // speculative decoding's acceptance presets (cluster.speculative.acceptance)
    auto& arr = j["acceptance"] = nlohmann::ordered_json::array();
    for (const AcceptancePreset& p : acceptancePresets()) {
      nlohmann::ordered_json domains = nlohmann::ordered_json::object();
      std::string text;
      for (const auto& [name, alpha] : p.domains) {
        domains[name] = alpha;
        text += " " + name + " " + formatFixed(expectedTokensPerStep(alpha, static_cast<int>(alpha.size())), 2);
      }
      arr.push_back(
          {{"id", p.id}, {"method", p.method}, {"target", p.target}, {"alpha", domains}, {"source", p.source}});
      if (!json)
        std::printf("acceptance %-32s %-5s on %s; tokens a step at its length:%s\n", p.id.c_str(), p.method.c_str(),
                    p.target.c_str(), text.c_str());
    }
  }
  if (want("policies")) {
    auto& arr = j["policies"] = nlohmann::ordered_json::array();
    for (const PolicyInfo& p : policyCatalog()) {
      nlohmann::ordered_json knobs = nlohmann::ordered_json::array();
      for (const KnobSpec& k : p.knobs)
        knobs.push_back({{"name", k.name}, {"unit", k.unit}, {"min", k.min}, {"max", k.max}, {"default", k.def},
                         {"description", k.description}});
      arr.push_back({{"id", p.id}, {"family", p.family}, {"description", p.description}, {"knobs", knobs}});
      if (!json) {
        std::printf("policy    %-22s [%s] %s\n", p.id.c_str(), p.family.c_str(), p.description.c_str());
        for (const KnobSpec& k : p.knobs)
          std::printf("            knob %-16s default %g %s, range [%g, %g]: %s\n", k.name.c_str(), k.def,
                      k.unit.c_str(), k.min, k.max, k.description.c_str());
      }
    }
  }
  if (want("routers")) {
    auto& arr = j["routers"] = nlohmann::ordered_json::array();
    for (RouterKind k : {RouterKind::RoundRobin, RouterKind::LeastLoaded, RouterKind::LeastKv, RouterKind::Random,
                         RouterKind::PowerOfTwo, RouterKind::PrefixAware, RouterKind::SessionAffinity}) {
      arr.push_back(routerId(k));
      if (!json) std::printf("router    %s\n", routerId(k));
    }
  }
  if (want("workloads")) {
    auto& arr = j["workloads"] = nlohmann::ordered_json::array();
    for (const auto& [id, desc] : workloadPresets()) {
      arr.push_back({{"id", id}, {"description", desc}});
      if (!json) std::printf("workload  %-22s %s\n", id.c_str(), desc.c_str());
    }
  }
  if (json) std::cout << j.dump(2) << "\n";
  return 0;
}

int cmdCost(const CostArgs& a) {
  if (a.allreduceFit) {
    if (a.json) std::cout << allReduceFitJson().dump(2) << "\n";
    else std::cout << formatAllReduceFit();
    return 0;
  }
  const PresetRegistry& reg = PresetRegistry::builtin();
  CostCoefficients c = gpuCoefficients(reg.gpu(a.gpu));
  if (a.profile) c = loadCostProfile(*a.profile);
  const EnginePreset* engine = a.engine ? &enginePreset(*a.engine, "--engine") : nullptr;
  if (engine) c = engine->apply(c);
  if (a.hetero) c.hetero = parseHeteroMode(*a.hetero, "--hetero");
  Precision precision{parseDType(a.modelDtype, "--model-dtype"), parseDType(a.kvDtype, "--kv-dtype")};
  if (a.expertDtype) precision.experts = parseExpertDType(*a.expertDtype, "--expert-dtype");
  checkPrecision(reg.gpu(a.gpu), precision, "--model-dtype", "--kv-dtype", "--expert-dtype");
  CostModel model(reg.gpu(a.gpu), reg.model(a.model), a.tp, c, precision,
                  parseAllReduceMode(a.allreduce, "--allreduce"));
  if (engine) model.setAsyncScheduling(engine->applyFrontEnd(FrontEndSpec{}).async_scheduling);
  {
    MoeDeployment d;
    d.ep = a.ep;
    d.attentionDp = a.attentionDp;
    d.redundant = a.epRedundant;
    if (a.epPlacement && *a.epPlacement != "eplb" && *a.epPlacement != "contiguous")
      throw InputError("--ep-placement: must be \"contiguous\" or \"eplb\" (got \"" + *a.epPlacement + "\")");
    d.placement =
        (a.epPlacement ? *a.epPlacement == "eplb" : a.epRedundant > 0) ? Placement::Eplb : Placement::Contiguous;
    const std::string& r = a.routing;
    if (r.rfind("zipf:", 0) == 0) {
      d.routing.kind = RoutingKind::Zipf;
      char* end = nullptr;
      d.routing.skew = std::strtod(r.c_str() + 5, &end);
      if (end == r.c_str() + 5 || *end || !(d.routing.skew > 0))
        throw InputError("--routing: zipf needs a skew > 0, e.g. zipf:1.2 (got \"" + r + "\")");
    } else if (r.rfind("file:", 0) == 0) {
      d.routing.kind = RoutingKind::File;
      d.routing.path = r.substr(5);
      d.routing.weights = readRoutingHistogram(d.routing.path);
    } else if (r != "balanced") {
      throw InputError("--routing: must be balanced, zipf:SKEW or file:PATH (got \"" + r + "\")");
    }
    if (a.gpusPerNode < 1) throw InputError("--gpus-per-node: must be >= 1");
    if (!(a.nicGbps > 0)) throw InputError("--nic-gbps: must be > 0");
    d.gpusPerNode = a.gpusPerNode;
    d.nicBytesPerSecPerGpu = a.nicGbps * 1e9 / 8.0 / a.gpusPerNode;
    model.setMoe(d);
  }
  std::optional<std::string_view> pf, dc;
  if (a.prefill) pf = *a.prefill;
  if (a.decode) dc = *a.decode;
  const BatchShape batch = parseCostBatch(pf, dc);
  CostReportOptions o;
  o.gpu_memory_utilization = a.gpuMemoryUtilization;
  o.kv_capacity_fraction = a.kvCapacityFraction;
  o.block_size = a.blockSize;
  if (a.profile) o.profile = *a.profile;
  std::unique_ptr<SpeculativeCost> spec;
  if (a.spec) {
    SpeculativeSpec ss;
    const auto colon = a.spec->find(':');
    ss.method = parseSpecMethod(a.spec->substr(0, colon), "--spec");
    if (colon != std::string::npos) {
      const std::string kText = a.spec->substr(colon + 1);
      char* end = nullptr;
      const long k = std::strtol(kText.c_str(), &end, 10);
      if (kText.empty() || *end || k < 1 || k > 64)
        throw InputError("--spec: K must be an integer from 1 to 64 (got \"" + kText + "\")");
      ss.k = static_cast<int>(k);
    }
    if (a.draftModel) ss.draft_model = *a.draftModel;
    spec = std::make_unique<SpeculativeCost>(model, ss, "--spec");
    o.speculative = spec.get();
    o.acceptance = a.acceptance.empty() ? std::vector<double>{0.7} : a.acceptance;
    for (double x : o.acceptance)
      if (!(x >= 0 && x <= 1))
        throw InputError("--acceptance: each value must be in [0, 1] (got " + std::to_string(x) + ")");
  } else if (!a.acceptance.empty() || a.draftModel) {
    throw InputError(std::string(a.draftModel ? "--draft-model" : "--acceptance") + ": needs --spec");
  }
  if (a.json) std::cout << costReportJson(model, batch, o).dump(2) << "\n";
  else std::cout << formatCostReport(model, batch, o);
  return 0;
}

}  // namespace sl::cli
