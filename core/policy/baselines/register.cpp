// The baseline family (30-schedulers.md "Baselines"): vLLM-style FCFS, RR
// with a token quantum, the unlimited-memory oracle and decode-first (vLLM
// V1 colocated). Each uses policy.router for placement.
#include "policy/baselines/local_fcfs.h"
#include "policy/baselines/local_rr.h"
#include "policy/families.h"

namespace sl {

// RR's order (local_rr.h): 1 = a request's priority drops with each quantum
// it uses up (the paper's RR), 0 = one circular queue. Shared with PASCAL.
KnobSpec priorityByQuantaKnob() {
  return {"priority_by_quanta", "", 0, 1, 1, true, false,
          "1: RR queues are ordered by quanta used (a fresh request goes ahead of one on a later quantum, as the "
          "paper's RR); 0: one circular queue where every request joins the tail"};
}

void registerBaselinePolicies(PolicyRegistry& reg) {
  const auto fcfs = [](const PolicyContext&) {
    PolicyBundle b;
    b.makeLocal = [](int) { return std::make_unique<FcfsLocal>(); };
    return b;
  };
  reg.add({"fcfs", "Baselines",
           "vLLM first-come-first-served: admit in arrival order, preempt the latest arrival when memory runs out",
           true, {}, fcfs});
  reg.add({"rr", "Baselines",
           "Round-robin with a token quantum: exhausted requests go to the tail; the longest fitting prefix runs",
           true,
           {{"quantum", "tokens", 1, 1e6, 500, true, true,
             "tokens a request produces before it goes to the tail of the queue"},
            priorityByQuantaKnob()},
           [](const PolicyContext& c) {
             const int q = c.knobs.getInt("quantum");
             const bool byQuanta = c.knobs.getInt("priority_by_quanta") != 0;
             PolicyBundle b;
             b.makeLocal = [q, byQuanta](int) { return std::make_unique<RoundRobinLocal>(q, byQuanta); };
             return b;
           }});
  reg.add({"oracle", "Baselines", "FCFS with unlimited KV memory: no blocking or preemption caused by memory", true,
           {},
           [fcfs](const PolicyContext& c) {
             PolicyBundle b = fcfs(c);
             b.unlimitedKv = true;
             return b;
           }});
  reg.add({"decode-first", "Baselines",
           "vLLM V1 colocated: decodes first, then chunked prefills fill the token budget (chunked prefill forced on)",
           true, {},
           [fcfs](const PolicyContext& c) {
             PolicyBundle b = fcfs(c);
             b.chunkedPrefill = true;
             return b;
           }});
}

}  // namespace sl
