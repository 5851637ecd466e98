// CascadeInfer (30-schedulers.md "CascadeInfer"; paper: "CascadeInfer:
// length-aware multi-instance pipeline", shared/papers/
// cascadeinfer-length-aware-pipeline.txt), its ablation variants and the
// baselines of its evaluation: vLLM-like instances behind a round-robin
// balancer and Llumnix.
#include <algorithm>
#include <cstdlib>

#include "policy/baselines/local_fcfs.h"
#include "policy/cascade/cascade_global.h"
#include "policy/cascade/llumnix_global.h"
#include "policy/families.h"
#include "policy/routers.h"
#include "util/rng.h"
#include "workload/length_dist.h"

namespace sl {

namespace {

std::vector<KnobSpec> cascadeKnobs() {
  return {
      {"replan_interval_s", "s", 0, 3600, 60, false, false,
       "pipeline replanning period (DP over the lengths observed since the last plan); 0 = plan once at start-up"},
      {"refine_interval_s", "s", 0.05, 600, 5, false, true, "range refinement period"},
      {"ema_alpha", "fraction", 0, 1, 0.3, false, true,
       "EMA weight of a refinement's new boundary (1 = jump to it, 0 = never move)"},
      {"refine_min_requests", "requests", 1, 1000, 5, true, false,
       "refinement freezes a boundary when its pooled set holds fewer requests"},
      {"starve_limit", "skips", 0, 100, 3, true, true,
       "a queued move skipped more than this many times is sent next (starvation guard)"},
      {"migration_cap", "migrations", 1, 16, 3, true, true,
       "concurrent live migrations per instance the policy starts (cluster.live_migration.max_concurrent also "
       "applies)"},
      {"message_latency_s", "s", 0, 1, 0.0002, false, true, "one-way latency of a bid-ask control message"},
      {"rebalance_threshold", "fraction", 0, 10, 0.25, false, true,
       "intra-stage rebalancing starts when an instance's KV demand is this far over its stage's mean"},
      {"planner", "", 0, 1, 0, true, false, "0 = two-phase heuristic (greedy merges), 1 = exact dynamic programme"},
      {"bucket_base", "tokens", 16, 65536, 256, true, false,
       "first exponential length bucket edge; cut points are base, 2 base, 4 base, ..."},
      {"prefill_term", "", 0, 1, 0, true, false,
       "1 = the planner's stage cost counts the prefill arrivals its prompts bring (x 1/(1-u)); 0 = decode only, "
       "as the paper (docs/policies/cascade.md)"},
  };
}

/// The start-up plan's prior: (input, output) pairs drawn from the scenario's
/// length distributions and its mean arrival rate. None for a trace workload
/// (its lengths are only known as requests arrive: one stage until the
/// first replan) or when there is no scenario.
void fillPrior(const PolicyContext& c, CascadeConfig& cc) {
  if (!c.scenario || c.scenario->workload.trace) return;
  const Scenario& s = *c.scenario;
  const WorkloadSpec& w = s.workload;
  LengthSampler in(w.input_tokens, s.base_dir, "workload.input_tokens");
  LengthSampler rs(w.reasoning_tokens, s.base_dir, "workload.reasoning_tokens");
  LengthSampler an(w.answer_tokens, s.base_dir, "workload.answer_tokens");
  Rng rng = Rng::forStream(s.run.seed, "cascade-prior");
  for (int k = 0; k < 2000; ++k) {
    const std::int64_t i = std::max<std::int64_t>(1, in.sample(rng));
    const std::int64_t o = std::max<std::int64_t>(1, rs.sample(rng) + an.sample(rng));
    cc.prior.emplace_back(i, o);
  }
  const ArrivalSpec& a = w.arrival;
  if (a.process == ArrivalSpec::Process::Schedule && !a.schedule.empty()) {
    double t = 0, n = 0;
    for (const RateSegment& seg : a.schedule) {
      t += seg.duration_s;
      n += seg.duration_s * seg.rate;
    }
    cc.priorRate = t > 0 ? n / t : 0;
  } else {
    cc.priorRate = a.rate;
  }
}

PolicyFactory cascadeFactory(CascadeLayout layout, RefineMode refine, bool intraStage) {
  return [=](const PolicyContext& c) {
    CascadeConfig cc;
    cc.layout = layout;
    cc.refine = refine;
    cc.intraStage = intraStage;
    cc.replanIntervalS = c.knobs.get("replan_interval_s");
    cc.refineIntervalS = c.knobs.get("refine_interval_s");
    cc.emaAlpha = c.knobs.get("ema_alpha");
    cc.refineMinRequests = c.knobs.getInt("refine_min_requests");
    cc.starveLimit = c.knobs.getInt("starve_limit");
    cc.migrationCap = c.knobs.getInt("migration_cap");
    cc.messageLatencyS = c.knobs.get("message_latency_s");
    cc.rebalanceThreshold = c.knobs.get("rebalance_threshold");
    cc.exactPlanner = c.knobs.getInt("planner") == 1;
    cc.bucketBase = c.knobs.getInt("bucket_base");
    cc.prefillTerm = c.knobs.getInt("prefill_term") == 1;
    fillPrior(c, cc);
    // Stage roles (cluster.pools[p].role "stage-k"; run/run.cpp checks them).
    if (c.scenario)
      for (const PoolSpec& p : c.scenario->cluster.pools)
        if (p.role.rfind("stage-", 0) == 0) cc.poolStage.push_back(std::atoi(p.role.c_str() + 6));
    if (c.scenario && cc.poolStage.size() != c.scenario->cluster.pools.size()) cc.poolStage.clear();
    const int pools = static_cast<int>(cc.poolStage.size());
    if (std::any_of(cc.poolStage.begin(), cc.poolStage.end(), [&](int k) { return k < 1 || k > pools; }))
      cc.poolStage.clear();  // (run/run.cpp rejects these before the policy runs)
    PolicyBundle b;
    b.global = std::make_unique<CascadeGlobal>(std::move(cc));
    b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
    return b;
  };
}

// A policy that plans stages: it reads the pools' "stage-k" roles.
PolicyInfo staged(PolicyInfo info) {
  info.stageRoles = true;
  return info;
}

}  // namespace

void registerCascadePolicies(PolicyRegistry& reg) {
  const std::string paper = " (CascadeInfer, length-aware multi-instance pipeline)";
  reg.add(staged({"cascade", "CascadeInfer",
                  "CascadeInfer: instances in stages over length ranges planned by DP on a fitted latency model, "
                  "hand-over to the next stage by live migration, range refinement, bid-ask balancing" +
                      paper,
                  false, cascadeKnobs(), cascadeFactory(CascadeLayout::Planned, RefineMode::Qoe, true)}));
  reg.add({"cascade-chain", "CascadeInfer",
           "CascadeInfer ablation (Fig. 14): one instance per stage, boundaries at equal-population length "
           "quantiles" + paper,
           false, cascadeKnobs(), cascadeFactory(CascadeLayout::Chain, RefineMode::Qoe, true)});
  reg.add({"cascade-nopipeline", "CascadeInfer",
           "CascadeInfer ablation (Fig. 14): one stage holding every instance (no hand-overs), intra-stage bid-ask "
           "rebalancing only" + paper,
           false, cascadeKnobs(), cascadeFactory(CascadeLayout::Single, RefineMode::Qoe, true)});
  reg.add(
      staged({"cascade-quantity", "CascadeInfer",
              "CascadeInfer ablation (Fig. 15): range refinement that balances the number of requests on either side "
              "of a boundary" +
                  paper,
              false, cascadeKnobs(), cascadeFactory(CascadeLayout::Planned, RefineMode::Quantity, true)}));
  reg.add(staged({"cascade-memory", "CascadeInfer",
                  "CascadeInfer ablation (Fig. 15): range refinement that balances the KV memory (Σ lengths) on either "
                  "side of a boundary" +
                      paper,
                  false, cascadeKnobs(), cascadeFactory(CascadeLayout::Planned, RefineMode::Memory, true)}));
  reg.add(staged({"cascade-interstage-only", "CascadeInfer",
                  "CascadeInfer ablation (Fig. 16): bid-ask for hand-overs only, no intra-stage rebalancing" + paper,
                  false, cascadeKnobs(), cascadeFactory(CascadeLayout::Planned, RefineMode::Qoe, false)}));
  // The existing round-robin router with vLLM's FCFS instances, fixed as a
  // policy id so a CascadeInfer comparison cannot pick another router.
  reg.add({"round-robin", "CascadeInfer",
           "CascadeInfer's vLLM baseline: FCFS instances behind a round-robin balancer (the `round-robin` router "
           "with `fcfs`, whatever policy.router says)",
           false, {},
           [](const PolicyContext&) {
             PolicyBundle b;
             b.global = std::make_unique<RouterPolicy>(RouterKind::RoundRobin);
             b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
             return b;
           }});
  reg.add({"llumnix", "CascadeInfer",
           "Llumnix (CascadeInfer's baseline): dispatch to the most free KV; live-migrate from the most to the least "
           "loaded instance when their KV-usage gap exceeds a threshold and the move narrows it",
           false,
           {{"interval_s", "s", 0.001, 60, 0.1, false, false, "balancing period"},
            {"gap_threshold", "fraction", 0, 1, 0.1, false, true,
             "KV-usage gap (fraction of capacity) between the most and least loaded instance that triggers a move"}},
           [](const PolicyContext& c) {
             LlumnixConfig lc;
             lc.intervalS = c.knobs.get("interval_s");
             lc.gapThreshold = c.knobs.get("gap_threshold");
             PolicyBundle b;
             b.global = std::make_unique<LlumnixGlobal>(lc);
             b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
             return b;
           }});
}

}  // namespace sl
