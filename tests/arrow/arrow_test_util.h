#pragma once
// Helpers for the Arrow tests: a cluster of Arrow's local scheduler with an
// ArrowGlobal whose placement of arrivals can be scripted, so a test can
// build the queues Algorithms 1-4 then look at, on the tiny cost model of
// policy_harness.h (iteration = 1 ms + 0.1 ms per token or sequence).
#include <functional>
#include <memory>
#include <vector>

#include "policy/arrow/arrow_global.h"
#include "policy/arrow/arrow_local.h"
#include "policy_harness.h"

namespace sl::arrowtest {

using test::ms;

class ScriptedArrow : public ArrowGlobal {
public:
  using ArrowGlobal::ArrowGlobal;
  std::function<int(const Request&)> placeFn;
  int route(const Request& r) override { return placeFn ? placeFn(r) : ArrowGlobal::route(r); }
  Simulator& sim() { return *sim_; }
};

struct ArrowRig {
  ArrowRig(ArrowConfig ac, int instances, std::vector<RequestSpec> reqs,
           InstanceConfig ic = test::tinyInstance(100000, 16), const CostModel& cost = test::tinyCost()) {
    SimConfig c = test::tinySim(ic, instances);
    auto g = std::make_unique<ScriptedArrow>(ac);
    global = g.get();
    sim = std::make_unique<Simulator>(c, cost, std::make_unique<test::ListWorkload>(std::move(reqs)), std::move(g),
                                      [](int) { return std::make_unique<ArrowLocal>(); });
    sim->addObserver(&rec);
  }
  ArrowLocal& local(int i) { return dynamic_cast<ArrowLocal&>(sim->instance(i).policy()); }
  /// Places arrivals on the given instances, in arrival order.
  void place(std::vector<int> where) {
    auto w = std::make_shared<std::vector<int>>(std::move(where));
    global->placeFn = [w](const Request& r) { return (*w)[static_cast<std::size_t>(r.id)]; };
  }
  RequestRecord record(std::int64_t id) const {  // by value: the store decodes on read
    for (const RequestRecord& r : sim->records())
      if (r.id == id) return r;
    throw std::runtime_error("no record for request " + std::to_string(id));
  }
  test::Recorder rec;
  ScriptedArrow* global = nullptr;
  std::unique_ptr<Simulator> sim;
};

/// Config with explicit SLOs (seconds) so tests do not depend on the scenario's.
inline ArrowConfig cfg(double ttft, double tpot, int prefill = 0) {
  ArrowConfig c;
  c.ttftSloS = ttft;
  c.tpotSloS = tpot;
  c.prefillInstances = prefill;
  return c;
}

}  // namespace sl::arrowtest
