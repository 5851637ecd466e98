// LLM self-scheduling (30-schedulers.md "Self-scheduling"; paper: "LLM
// self-scheduling: rank prompts as real work"): three predictor modes, each
// with and without anti-starvation, and the oracle-sjf reference.
#include <memory>

#include "policy/families.h"
#include "policy/registry.h"
#include "policy/selfsched/selfsched.h"
#include "scenario/spec.h"
#include "util/rng.h"
#include "workload/length_dist.h"
#include "workload/presets.h"

namespace sl {

namespace {

std::vector<KnobSpec> starvationKnobs(bool on) {
  return {
      {"anti_starvation", "", 0, 1, on ? 1.0 : 0.0, true, true,
       "1 = promote requests left out of the batch (paper §4.3), 0 = off"},
      {"starvation_threshold_steps", "iterations", 1, 10000, 4, true, true,
       "iterations in a row left out of the batch before a promotion"},
      {"priority_quantum_steps", "iterations", 1, 100000, 32, true, true, "iterations a promotion lasts"},
      {"max_promotions_per_round", "requests", 0, 10000, 16, true, true, "promotions per iteration, at most"},
      {"rank_prompt_rides_along", "", 0, 1, 1, true, true,
       "1 = a running rank prompt's decode tokens join prefill-only iterations (no chunked prefill) instead of "
       "waiting for a decode iteration; 0 = they wait like any decode"},
      {"preempt_for_priority", "", 0, 1, 0, true, true,
       "0 (paper: vLLM 0.9.2's V1 scheduler) = a waiting request never preempts; 1 = a waiting request of "
       "higher priority preempts the lowest-priority running ones when it cannot otherwise be admitted "
       "(30-schedulers.md's priority rule, vLLM V0; the victim follows cluster.preemption)"},
      {"victim_order", "", 0, 2, 0, true, true,
       "which running request a request short of a block preempts: 0 = the lowest in the queue order "
       "(promoted ones protected), 1 = the largest (rank, arrival), promotion ignored, 2 = the last admitted "
       "(vLLM's FCFS policy)"},
  };
}

std::vector<KnobSpec> modeKnobs(double targetTau, bool starvation) {
  std::vector<KnobSpec> k = {
      {"batch_size", "requests", 1, 10000, 10, true, true, "B: a ranking batch closes when it holds this many"},
      {"batch_timeout_s", "s", 0.001, 60, 1.0, false, true,
       "T: ... or when its oldest request has waited this long (1 s: the paper's batches of 10, Table 2)"},
      {"template_tokens", "tokens", 0, 100000, 150, true, false, "rank prompt's template added to the prompts"},
      {"target_tau", "", -1, 1, targetTau, false, true,
       "Kendall's tau-b the predictor's noise is calibrated to (against the gold ranking); live: "
       "re-calibrated for the batches that close after the change"},
      {"tie_alpha", "fraction", 0, 1, 0.1, false, false, "gold ranking: lengths within this fraction of their mean tie"},
      {"neutral_rank", "", 0, 1, 0, true, true,
       "0 = a request waits unranked behind every ranked one until its rank prompt finishes (Algorithm 1: "
       "it joins the runnable set with its rank); 1 = it gets the middle rank on arrival ((B-1)/2, or the "
       "median output length for length-only)"},
  };
  for (KnobSpec& s : starvationKnobs(starvation)) k.push_back(std::move(s));
  return k;
}

// Output lengths (reasoning + answer) of the scenario's workload, for the
// noise calibration. A trace's lengths are not known before the run: the
// default chat distribution stands in (docs/policies/selfsched.md).
std::vector<double> outputSample(const Scenario* s, int n) {
  WorkloadSpec w;
  std::string base = ".";
  if (s) {
    w = s->workload;
    base = s->base_dir;
    if (w.preset) applyWorkloadPreset(*w.preset, w);
    if (w.trace) w = WorkloadSpec{};
  }
  const LengthSampler reasoning(w.reasoning_tokens, base, "workload.reasoning_tokens");
  const LengthSampler answer(w.answer_tokens, base, "workload.answer_tokens");
  Rng rng(0x5e1f5c4edULL ^ (s ? s->run.seed : 1));
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    out.push_back(static_cast<double>(reasoning.sample(rng)) + static_cast<double>(std::max<std::int64_t>(1, answer.sample(rng))));
  return out;
}

PolicyBundle bundle(const PolicyContext& c, RankMode mode) {
  SelfSchedConfig cfg;
  cfg.mode = mode;
  StarvationConfig st;
  st.enabled = c.knobs.get("anti_starvation") != 0;
  st.thresholdSteps = c.knobs.getInt("starvation_threshold_steps");
  st.quantumSteps = c.knobs.getInt("priority_quantum_steps");
  st.maxPerRound = c.knobs.getInt("max_promotions_per_round");
  cfg.starvation = st;
  cfg.preemptForPriority = c.knobs.get("preempt_for_priority") != 0;
  const bool preempt = cfg.preemptForPriority;
  cfg.rankPromptRidesAlong = c.knobs.get("rank_prompt_rides_along") != 0;
  const bool rides = cfg.rankPromptRidesAlong;
  std::vector<double> sample;
  if (mode != RankMode::Oracle) {
    cfg.batchSize = c.knobs.getInt("batch_size");
    cfg.batchTimeoutS = c.knobs.get("batch_timeout_s");
    cfg.templateTokens = c.knobs.getInt("template_tokens");
    cfg.targetTau = c.knobs.get("target_tau");
    cfg.alpha = c.knobs.get("tie_alpha");
    cfg.neutralRank = c.knobs.get("neutral_rank") != 0;
    sample = outputSample(c.scenario, cfg.calibrationSample);
  }
  PolicyBundle b;
  b.global = std::make_unique<SelfSchedGlobal>(cfg, std::move(sample));
  const double victim = c.knobs.get("victim_order");
  b.makeLocal = [st, preempt, rides, victim](int) {
    auto l = std::make_unique<SelfSchedLocal>(st, preempt, rides);
    l->setKnob("victim_order", victim);
    return l;
  };
  return b;
}

}  // namespace

void registerSelfSchedPolicies(PolicyRegistry& reg) {
  struct Mode {
    const char* id;
    RankMode mode;
    double tau;
    const char* what;
  };
  const Mode modes[] = {
      {"selfsched-prefill-only", RankMode::PrefillOnly, 0.25,
       "rank prompt with no output (ranks from its prefill): the weakest predictor, tau-b 0.25"},
      {"selfsched-rank-only", RankMode::RankOnly, 0.40, "rank prompt answering 20 tokens (ranks within the batch), tau-b 0.40"},
      {"selfsched-length-only", RankMode::LengthOnly, 0.55,
       "rank prompt answering 40 tokens (predicted lengths), tau-b 0.55"},
  };
  for (const Mode& m : modes) {
    for (bool starve : {true, false}) {
      const std::string id = std::string(m.id) + (starve ? "" : "-nostarve");
      const RankMode mode = m.mode;
      reg.add({id, "Self-scheduling",
               std::string("LLM self-scheduling, ") + m.what +
                   "; priority queue by (promoted, rank, arrival)" + (starve ? " with anti-starvation" : ", no anti-starvation") +
                   " (self-scheduling paper)",
               false, modeKnobs(m.tau, starve), [mode](const PolicyContext& c) { return bundle(c, mode); }});
    }
  }
  reg.add({"oracle-sjf", "Self-scheduling",
           "reference: shortest true output length first (no rank prompts), priority queue with anti-starvation "
           "(self-scheduling paper)",
           false, starvationKnobs(true), [](const PolicyContext& c) { return bundle(c, RankMode::Oracle); }});
}

}  // namespace sl
