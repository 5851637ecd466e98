#include "policy/registry.h"

#include <cmath>

#include "policy/example/example_split.h"
#include "policy/local_fcfs.h"
#include "policy/local_rr.h"
#include "policy/pascal_global.h"
#include "policy/pascal_local.h"
#include "policy/routers.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {

namespace {

// RR's order (local_rr.h): 1 = a request's priority drops with each quantum
// it uses up (the paper's RR), 0 = one circular queue.
KnobSpec priorityByQuantaKnob() {
  return {"priority_by_quanta", "", 0, 1, 1, true, false,
          "1: RR queues are ordered by quanta used (a fresh request goes ahead of one on a later quantum, as the "
          "paper's RR); 0: one circular queue where every request joins the tail"};
}

// PASCAL's knobs (paper §V-A defaults), shared by the three variants so a
// scenario can switch between them (30-schedulers.md "PASCAL (global)").
std::vector<KnobSpec> pascalKnobs() {
  return {
      {"reasoning_quantum", "tokens", 1, 1e6, 500, true, true,
       "RR quantum of the high-priority (reasoning) queue: tokens before a request goes to its tail"},
      {"answering_quantum", "tokens", 1, 1e6, 500, true, true,
       "RR quantum of the low-priority (answering) queue; a_i counts requests still in their first one"},
      {"demote_tokens", "tokens", 1, 1e7, 5000, true, true,
       "a reasoning request whose KV exceeds this many tokens is demoted to the low-priority queue"},
      {"pace_low_watermark", "tokens", 0, 1e6, 0, true, true,
       "an instance is off pace when an answering request has at most this many tokens buffered in its pacer"},
      {"headroom_tokens", "tokens", 0, 1e6, 256, true, true,
       "adaptive migration (pascal only): free GPU room needed for the request's KV plus this many tokens"},
      priorityByQuantaKnob(),
  };
}

}  // namespace

const std::vector<PolicyInfo>& policyCatalog() {
  static const std::vector<PolicyInfo> catalog = {
      {"fcfs", "Baselines",
       "vLLM first-come-first-served: admit in arrival order, preempt the latest arrival when memory runs out",
       true, {}},
      {"rr", "Baselines",
       "Round-robin with a token quantum: exhausted requests go to the tail; the longest fitting prefix runs",
       true,
       {{"quantum", "tokens", 1, 1e6, 500, true, true,
         "tokens a request produces before it goes to the tail of the queue"},
        priorityByQuantaKnob()}},
      {"oracle", "Baselines", "FCFS with unlimited KV memory: no blocking or preemption caused by memory", true, {}},
      {"decode-first", "Baselines",
       "vLLM V1 colocated: decodes first, then chunked prefills fill the token budget (chunked prefill forced on)",
       true, {}},
      {"pascal", "PASCAL",
       "Phase-aware: reasoning-first two-queue RR per instance, pace-aware placement (Alg. 1) and adaptive "
       "migration at </think> (Alg. 2)",
       false, pascalKnobs()},
      {"pascal-nomigration", "PASCAL",
       "PASCAL ablation: two-queue RR and Algorithm 1 placement, but requests never migrate at </think>", false,
       pascalKnobs()},
      {"pascal-nonadaptive", "PASCAL",
       "PASCAL ablation: always migrates to Algorithm 2's choice at </think>, whatever the memory on either side",
       false, pascalKnobs()},
      {"example-split", "Examples",
       "Worked example of docs/policy-api.md (not from a paper): prefill pool hands off to a decode pool, "
       "which is rebalanced by live migration",
       false,
       {{"prefill_instances", "instances", 1, 1024, 1, true, false,
         "the first N instances prefill and hand every request off; the rest decode (clamped to [1, instances-1])"},
        {"rebalance_interval_s", "s", 0.01, 60, 1, false, true,
         "how often the decode pool is checked for imbalance"},
        {"rebalance_gap", "fraction", 0, 1, 0.2, false, true,
         "live-migrate one request from the fullest to the emptiest decode instance when their KV footprints "
         "differ by more than this fraction of an instance's GPU KV"}}},
  };
  return catalog;
}

const PolicyInfo& policyInfo(const std::string& id) {
  std::vector<std::string> ids;
  for (const PolicyInfo& p : policyCatalog()) {
    if (p.id == id) return p;
    ids.push_back(p.id);
  }
  std::string msg = "policy.id: unknown policy '" + id + "'";
  if (auto s = didYouMean(id, ids)) msg += " (did you mean '" + *s + "'?)";
  msg += "; see `servelab-cli presets policies`";
  throw InputError(msg);
}

Knobs::Knobs(const PolicyInfo& info, const nlohmann::json& given) {
  std::vector<std::string> names;
  for (const KnobSpec& k : info.knobs) names.push_back(k.name);
  if (!given.is_null() && !given.is_object()) throw InputError("policy.knobs: expected an object");
  if (given.is_object()) {
    for (auto it = given.begin(); it != given.end(); ++it) {
      bool known = false;
      for (const KnobSpec& k : info.knobs) known |= k.name == it.key();
      if (!known) {
        std::string msg = "policy.knobs." + it.key() + ": unknown knob for policy '" + info.id + "'";
        if (auto s = didYouMean(it.key(), names)) msg += " (did you mean '" + *s + "'?)";
        if (names.empty()) msg += "; it has no knobs";
        throw InputError(msg);
      }
    }
  }
  for (const KnobSpec& k : info.knobs) {
    double v = k.def;
    if (given.is_object() && given.contains(k.name)) {
      const auto& j = given.at(k.name);
      if (!j.is_number()) throw InputError("policy.knobs." + k.name + ": expected a number");
      v = j.get<double>();
      if (!std::isfinite(v) || v < k.min || v > k.max)
        throw InputError("policy.knobs." + k.name + ": must be in [" + formatDouble(k.min) + ", " +
                         formatDouble(k.max) + "] " + k.unit + " (got " + formatDouble(v) + ")");
      if (k.integer && v != std::floor(v))
        throw InputError("policy.knobs." + k.name + ": must be an integer (got " + formatDouble(v) + ")");
    }
    values_.emplace_back(k.name, v);
  }
}

double Knobs::get(const std::string& name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  throw std::logic_error("knob not declared: " + name);
}

PolicyBundle makePolicy(const PolicySpec& spec) {
  const PolicyInfo& info = policyInfo(spec.id);
  const Knobs knobs(info, spec.knobs);
  PolicyBundle b;
  if (info.usesRouter) b.global = std::make_unique<RouterPolicy>(parseRouter(spec.router));
  if (spec.id == "fcfs") {
    b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
  } else if (spec.id == "oracle") {
    b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
    b.unlimitedKv = true;
  } else if (spec.id == "decode-first") {
    b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
    b.chunkedPrefill = true;
  } else if (spec.id == "rr") {
    const int q = knobs.getInt("quantum");
    const bool byQuanta = knobs.getInt("priority_by_quanta") != 0;
    b.makeLocal = [q, byQuanta](int) { return std::make_unique<RoundRobinLocal>(q, byQuanta); };
  } else if (spec.id == "pascal" || spec.id == "pascal-nomigration" || spec.id == "pascal-nonadaptive") {
    PascalLocalConfig lc;
    lc.reasoningQuantum = knobs.getInt("reasoning_quantum");
    lc.answeringQuantum = knobs.getInt("answering_quantum");
    lc.demoteTokens = knobs.getInt("demote_tokens");
    lc.byQuanta = knobs.getInt("priority_by_quanta") != 0;
    PascalGlobalConfig gc;
    gc.migration = spec.id == "pascal"               ? PascalMigration::Adaptive
                   : spec.id == "pascal-nomigration" ? PascalMigration::Never
                                                     : PascalMigration::Always;
    gc.paceLowWatermark = knobs.getInt("pace_low_watermark");
    gc.headroomTokens = knobs.getInt("headroom_tokens");
    b.global = std::make_unique<PascalGlobal>(gc);
    b.makeLocal = [lc](int) { return std::make_unique<PascalLocal>(lc); };
  } else if (spec.id == "example-split") {
    ExampleSplitConfig ec;
    ec.prefillInstances = knobs.getInt("prefill_instances");
    ec.rebalanceIntervalS = knobs.get("rebalance_interval_s");
    ec.rebalanceGap = knobs.get("rebalance_gap");
    b.global = std::make_unique<ExampleSplit>(ec);
    b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
  }
  return b;
}

void applyLiveKnob(Simulator& sim, const std::string& policyId, const std::string& knob, double value) {
  const PolicyInfo& info = policyInfo(policyId);
  const KnobSpec* spec = nullptr;
  std::vector<std::string> names;
  for (const KnobSpec& k : info.knobs) {
    names.push_back(k.name);
    if (k.name == knob) spec = &k;
  }
  const std::string where = "policy.knobs." + knob;
  if (!spec) {
    const auto hint = didYouMean(knob, names);
    throw InputError(where + ": policy '" + policyId + "' has no such knob" +
                     (hint ? " (did you mean '" + *hint + "'?)" : std::string()));
  }
  if (!spec->liveSafe) throw InputError(where + ": cannot change while a run is going (restart the run)");
  if (!std::isfinite(value) || value < spec->min || value > spec->max)
    throw InputError(where + ": must be in [" + formatDouble(spec->min) + ", " + formatDouble(spec->max) + "] " +
                     spec->unit + " (got " + formatDouble(value) + ")");
  if (spec->integer && value != std::floor(value))
    throw InputError(where + ": must be an integer (got " + formatDouble(value) + ")");
  if (!sim.setPolicyKnob(knob, value))
    throw InputError(where + ": not taken by the running policy");  // a knob the catalog lists but no part reads
}

}  // namespace sl
