// Arrow (30-schedulers.md "Arrow"; paper: Wu et al., "Arrow: Adaptive
// Scheduling Mechanisms for Disaggregated LLM Inference Architecture") and the
// baselines of its evaluation: vLLM colocated, static P/D disaggregation with
// minimal-load or round-robin dispatch, and the paper's vLLM-disaggregated
// and DistServe settings as presets of it.
#include "policy/arrow/arrow_global.h"
#include "policy/arrow/arrow_local.h"
#include "policy/baselines/local_fcfs.h"
#include "policy/families.h"

namespace sl {

namespace {

KnobSpec prefillInstancesKnob(const char* what) {
  return {"prefill_instances", "instances", 0, 1024, 0, true, false, what};
}

std::vector<KnobSpec> arrowKnobs() {
  return {
      prefillInstancesKnob("initial P pool size (the rest start in D); 0 = half the instances; clamped to "
                           "[1, instances-1]"),
      {"ttft_slo_s", "s", 0, 3600, 0, false, true,
       "TTFT target of Alg. 1 (prefill dispatch); 0 = the scenario's slo.ttft_s (3 s when unset)"},
      {"tpot_slo_s", "s", 0, 60, 0, false, true,
       "TPOT target of Alg. 2 and the monitor; 0 = the scenario's slo.tpot_s (0.1 s when unset)"},
      {"monitor_tick_s", "s", 0.001, 60, 0.1, false, true, "instance monitor period"},
      {"monitor_window_s", "s", 0.01, 60, 1.0, false, true,
       "window of the token interval (mean decode-iteration time) the monitor and Alg. 2 read"},
      {"flip_tpot_ratio", "ratio", 0.1, 10, 1.0, false, true,
       "monitor flips a prefill instance to decode when the D pool's mean token interval exceeds this times the "
       "TPOT SLO"},
      {"low_load_ratio", "ratio", 0, 10, 1.0, false, true,
       "overload rule: Alg. 1 flips a decode instance to prefill only while every D instance is under this times "
       "max_running_tokens and this times the TPOT SLO"},
      {"busy_ratio", "ratio", 0, 10, 0.5, false, true,
       "monitor flips an idle P instance to decode when the D pool's mean load reaches this fraction of "
       "max_running_tokens (or its token interval this fraction of the TPOT SLO)"},
      {"max_running_tokens", "tokens", 0, 1e9, 0, true, false,
       "decode load limit of Alg. 2; 0 = profiled: KV capacity in tokens capped by the largest decode batch "
       "meeting the TPOT SLO"},
      {"profile_max_tokens", "tokens", 0, 1e7, 0, true, false,
       "longest prompt profiled for the TTFT predictor; 0 = the model's context window (capped by KV capacity)"},
  };
}

std::vector<KnobSpec> staticKnobs(int defaultDispatch) {
  return {
      prefillInstancesKnob("fixed P pool size (the rest decode); 0 = half the instances; clamped to "
                           "[1, instances-1]"),
      {"dispatch", "", 0, 1, static_cast<double>(defaultDispatch), true, false,
       "0 = minimal-load (prompt to the least predicted prefill delay, decode to the fewest tokens), "
       "1 = round-robin"},
      {"profile_max_tokens", "tokens", 0, 1e7, 0, true, false,
       "longest prompt profiled for the prefill-delay predictor; 0 = the model's context window"},
  };
}

PolicyBundle arrowBundle(const ArrowConfig& ac) {
  PolicyBundle b;
  b.global = std::make_unique<ArrowGlobal>(ac);
  b.makeLocal = [](int) { return std::make_unique<ArrowLocal>(); };
  b.chunkedPrefill = true;  // decode-first chunked prefill (paper §5.4)
  return b;
}

PolicyBundle staticBundle(const PolicyContext& c) {
  ArrowConfig ac;
  ac.mode = c.knobs.getInt("dispatch") == 1 ? ArrowMode::RoundRobin : ArrowMode::MinimalLoad;
  ac.prefillInstances = c.knobs.getInt("prefill_instances");
  ac.profileMaxTokens = c.knobs.getInt("profile_max_tokens");
  return arrowBundle(ac);
}

// A disaggregating policy: it reads the pools' prefill / decode roles.
PolicyInfo disaggregating(PolicyInfo info) {
  info.poolRoles = true;
  return info;
}

}  // namespace

void registerArrowPolicies(PolicyRegistry& reg) {
  reg.add(disaggregating(
      {"arrow", "Arrow",
       "Arrow: stateless instances in elastic P / D / P→D / D→P pools, SLO-aware prefill and decode dispatch "
       "(Alg. 1, 2) with instance flips (Alg. 3, 4) and a monitor (Wu et al., Arrow)",
       false, arrowKnobs(), [](const PolicyContext& c) {
         ArrowConfig ac;
         ac.prefillInstances = c.knobs.getInt("prefill_instances");
         ac.ttftSloS = c.knobs.get("ttft_slo_s");
         ac.tpotSloS = c.knobs.get("tpot_slo_s");
         ac.monitorTickS = c.knobs.get("monitor_tick_s");
         ac.monitorWindowS = c.knobs.get("monitor_window_s");
         ac.flipTpotRatio = c.knobs.get("flip_tpot_ratio");
         ac.lowLoadRatio = c.knobs.get("low_load_ratio");
         ac.busyRatio = c.knobs.get("busy_ratio");
         ac.maxRunningTokens = static_cast<std::int64_t>(c.knobs.get("max_running_tokens"));
         ac.profileMaxTokens = c.knobs.getInt("profile_max_tokens");
         return arrowBundle(ac);
       }}));
  reg.add({"vllm-colocated", "Arrow",
           "Arrow's vLLM baseline: every instance prefills and decodes, decode-first chunked prefill, placement "
           "by policy.router (the paper runs one TP=8 instance)",
           true, {},
           [](const PolicyContext&) {
             PolicyBundle b;
             b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
             b.chunkedPrefill = true;
             return b;
           }});
  reg.add(disaggregating(
      {"static-pd", "Arrow",
       "Static prefill/decode disaggregation: fixed nP:nD, no flips, minimal-load or round-robin dispatch "
       "(Arrow's ablation baselines, Fig. 8)",
       false, staticKnobs(0), staticBundle}));
  reg.add(disaggregating(
      {"vllm-disaggregated", "Arrow",
       "Preset of static-pd as the paper's vLLM v0.7.3 disaggregated baseline: 1 prefill + 1 decode instance "
       "(run it with cluster.instances 2, tp 4), minimal-load dispatch",
       false, staticKnobs(0), staticBundle}));
  reg.add(disaggregating(
      {"distserve", "Arrow",
       "Preset of static-pd as the paper's DistServe baseline: half the GPUs prefill, half decode (4 + 4 on 8 "
       "GPUs), minimal-load dispatch",
       false, staticKnobs(0), staticBundle}));
}

}  // namespace sl
