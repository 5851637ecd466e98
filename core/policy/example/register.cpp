// The example family of docs/policy-api.md (not from a paper).
#include "policy/baselines/local_fcfs.h"
#include "policy/example/example_split.h"
#include "policy/families.h"

namespace sl {

void registerExamplePolicies(PolicyRegistry& reg) {
  reg.add({"example-split", "Examples",
           "Worked example of docs/policy-api.md (not from a paper): prefill pool hands off to a decode pool, "
           "which is rebalanced by live migration",
           false,
           {{"prefill_instances", "instances", 1, 1024, 1, true, false,
             "the first N instances prefill and hand every request off; the rest decode (clamped to [1, instances-1])"},
            {"rebalance_interval_s", "s", 0.01, 60, 1, false, true,
             "how often the decode pool is checked for imbalance"},
            {"rebalance_gap", "fraction", 0, 1, 0.2, false, true,
             "live-migrate one request from the fullest to the emptiest decode instance when their KV footprints "
             "differ by more than this fraction of an instance's GPU KV"}},
           [](const PolicyContext& c) {
             ExampleSplitConfig ec;
             ec.prefillInstances = c.knobs.getInt("prefill_instances");
             ec.rebalanceIntervalS = c.knobs.get("rebalance_interval_s");
             ec.rebalanceGap = c.knobs.get("rebalance_gap");
             PolicyBundle b;
             b.global = std::make_unique<ExampleSplit>(ec);
             b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
             return b;
           }});
}

}  // namespace sl
