// PASCAL (30-schedulers.md "PASCAL"): the phase-aware scheduler and its two
// ablations, sharing one knob set so a scenario can switch between them.
#include "policy/families.h"
#include "policy/pascal/pascal_global.h"
#include "policy/pascal/pascal_local.h"

namespace sl {

namespace {

// PASCAL's knobs (paper §V-A defaults).
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
      {"migrant_displaces", "", 0, 1, 1, true, true,
       "1 (paper, Fig. 7): a migrant meeting a full destination swaps out the residents that rank below it there "
       "(answering requests on a later quantum) instead of waiting; 0: it waits for room (FCFS)"},
      {"quanta_per_instance", "", 0, 1, 0, true, true,
       "0 (paper: a quantum \"for each queue\"): a request enters the answering queue fresh, stayer or migrant; "
       "1: quanta used on an instance carry over at </think> and reset only when the request migrates"},
  };
}

PolicyFactory pascalFactory(PascalMigration migration) {
  return [migration](const PolicyContext& c) {
    PascalLocalConfig lc;
    lc.reasoningQuantum = c.knobs.getInt("reasoning_quantum");
    lc.answeringQuantum = c.knobs.getInt("answering_quantum");
    lc.demoteTokens = c.knobs.getInt("demote_tokens");
    lc.byQuanta = c.knobs.getInt("priority_by_quanta") != 0;
    lc.quantaPerInstance = c.knobs.getInt("quanta_per_instance") != 0;
    PascalGlobalConfig gc;
    gc.migration = migration;
    gc.paceLowWatermark = c.knobs.getInt("pace_low_watermark");
    gc.headroomTokens = c.knobs.getInt("headroom_tokens");
    gc.displace = c.knobs.getInt("migrant_displaces") != 0;
    PolicyBundle b;
    b.global = std::make_unique<PascalGlobal>(gc);
    b.makeLocal = [lc](int) { return std::make_unique<PascalLocal>(lc); };
    return b;
  };
}

}  // namespace

void registerPascalPolicies(PolicyRegistry& reg) {
  reg.add({"pascal", "PASCAL",
           "Phase-aware: reasoning-first two-queue RR per instance, pace-aware placement (Alg. 1) and adaptive "
           "migration at </think> (Alg. 2)",
           false, pascalKnobs(), pascalFactory(PascalMigration::Adaptive)});
  reg.add({"pascal-nomigration", "PASCAL",
           "PASCAL ablation: two-queue RR and Algorithm 1 placement, but requests never migrate at </think>", false,
           pascalKnobs(), pascalFactory(PascalMigration::Never)});
  reg.add({"pascal-nonadaptive", "PASCAL",
           "PASCAL ablation: always migrates to Algorithm 2's choice at </think>, whatever the memory on either side",
           false, pascalKnobs(), pascalFactory(PascalMigration::Always)});
}

}  // namespace sl
