#pragma once
// The PASCAL test rig, shared by the test folders (included by relative
// path; tests/common has no target): a cluster running pascal-local on every
// instance and a PascalGlobal whose placement can be scripted (to hand-build
// the situation a boundary decision sees) while Algorithm 2, adaptive
// migration and the monitor stay PASCAL's own; and the clusters several
// tests share.
#include <functional>
#include <memory>
#include <vector>

#include "../engine/engine_test_util.h"   // llama-8b on NICs of exactly 2^30 B/s (sl::enginetest)
#include "../policy/policy_harness.h"     // tiny cost model, ListWorkload, Recorder (sl::test)
#include "engine/decision_log.h"
#include "policy/pascal/pascal_global.h"
#include "policy/pascal/pascal_local.h"

namespace sl::pascaltest {

using test::ms;

/// PascalGlobal with an optional scripted route() (Algorithm 1 otherwise).
class ScriptedPascal : public PascalGlobal {
 public:
  using PascalGlobal::PascalGlobal;
  std::function<int(const Request&)> placeFn;
  int route(const Request& r) override { return placeFn ? placeFn(r) : PascalGlobal::route(r); }
  Simulator& sim() { return *sim_; }
};

inline LocalPolicyFactory pascalLocal(PascalLocalConfig lc = {}) {
  return [lc](int) { return std::make_unique<PascalLocal>(lc); };
}

/// n instances of the tiny cost model (1 ms + 0.1 ms per token per iteration).
struct PascalRig {
  PascalRig(const InstanceConfig& ic, std::vector<RequestSpec> reqs, int instances = 1, PascalGlobalConfig gc = {},
            PascalLocalConfig lc = {}, std::function<void(SimConfig&)> tweak = {},
            const CostModel& cost = test::tinyCost()) {
    SimConfig c = test::tinySim(ic, instances);
    if (tweak) tweak(c);
    auto g = std::make_unique<ScriptedPascal>(gc);
    global = g.get();
    sim = std::make_unique<Simulator>(c, cost, std::make_unique<test::ListWorkload>(std::move(reqs)), std::move(g),
                                      pascalLocal(lc));
    sim->addObserver(&rec);
  }
  /// Any configuration and cost model (e.g. the engine tests' llama-8b on NICs).
  PascalRig(const SimConfig& c, const CostModel& cost, std::vector<RequestSpec> reqs, PascalGlobalConfig gc = {},
            PascalLocalConfig lc = {}) {
    auto g = std::make_unique<ScriptedPascal>(gc);
    global = g.get();
    sim = std::make_unique<Simulator>(c, cost, std::make_unique<test::ListWorkload>(std::move(reqs)), std::move(g),
                                      pascalLocal(lc));
    sim->addObserver(&rec);
  }
  void run() { sim->run(); }
  /// Scripted placement: request i goes to instance where[i].
  void placeBy(std::vector<int> where) {
    global->placeFn = [where = std::move(where)](const Request& r) { return where[static_cast<std::size_t>(r.id)]; };
  }
  PascalLocal& local(int i) { return dynamic_cast<PascalLocal&>(sim->instance(i).policy()); }
  RequestRecord record(std::int64_t id) const {  // by value: the store decodes on read
    for (const RequestRecord& r : sim->records())
      if (r.id == id) return r;
    throw std::runtime_error("no record for request " + std::to_string(id));
  }
  /// Decisions about one request, in order.
  std::vector<Decision> decisions(std::int64_t id, bool boundary) const {
    std::vector<Decision> out;
    for (const Decision& d : global->log().entries())
      if (d.requestId == id && d.boundary == boundary) out.push_back(d);
    return out;
  }
  std::vector<std::int32_t> candidates(const Decision& d) const {
    auto s = global->log().candidatesOf(d);
    return {s.begin(), s.end()};
  }

  test::Recorder rec;
  ScriptedPascal* global = nullptr;  // owned by the simulator
  std::unique_ptr<Simulator> sim;
};

/// A request with a reasoning phase: arrival (ms), prompt, reasoning, answer.
inline RequestSpec rq(double arrivalMs, int input, int reasoning, int answer) {
  return test::req(arrivalMs, input, answer, reasoning);
}

/// The Displacement cluster: two instances of 4 blocks (512 tokens each);
/// request 0 (600-token prompt, 3 reasoning tokens) and 1 on instance 0,
/// three 100-token residents on instance 1, every migration allowed,
/// answering quantum 2. Request 0 migrates at its boundary to a full
/// instance 1; `displace` says whether it may swap residents out.
inline std::unique_ptr<PascalRig> fullDestinationRig(bool displace) {
  PascalGlobalConfig gc;
  gc.migration = PascalMigration::Always;
  gc.displace = displace;
  PascalLocalConfig lc;
  lc.answeringQuantum = 2;
  auto rig = std::make_unique<PascalRig>(
      test::tinyInstance(4, 512),
      std::vector<RequestSpec>{rq(100, 600, 3, 5), rq(100, 16, 300, 1), rq(0, 100, 0, 300), rq(0, 100, 0, 300),
                               rq(0, 100, 0, 300)},
      2, gc, lc);
  rig->global->placeFn = [](const Request& r) { return r.id < 2 ? 0 : 1; };
  return rig;
}

/// The transfer cluster: two llama-3.1-8b instances of 100 blocks, each on
/// its own node (NICs of exactly 2^30 B/s: enginetest::smallConfig), every
/// request placed on instance 0. W (id 0, prompt 32, R = 1000) keeps
/// r_0 = 1; each of the `migrants` requests after it (prompt 32, R = 4,
/// A = 4) has 35 KV tokens at </think>, where r_1 = 0 and instance 1 is
/// empty: it migrates.
inline std::unique_ptr<PascalRig> nicPairRig(int migrants) {
  const CostModel& cost = enginetest::llama8b();
  std::vector<RequestSpec> reqs = {rq(0, 32, 1000, 1)};
  for (int i = 0; i < migrants; ++i) reqs.push_back(rq(0, 32, 4, 4));
  auto rig = std::make_unique<PascalRig>(enginetest::smallConfig(cost, 2, 100), cost, std::move(reqs));
  rig->global->placeFn = [](const Request&) { return 0; };
  return rig;
}

/// Answering streams fall behind pace at once: TTFAT* and TPOT* of 0.1 ms,
/// far below the tiny model's 1.1 ms per decode.
inline void strictPace(SimConfig& c) {
  c.slo.ttfat_s = 1e-4;
  c.slo.qoe_tpot_s = 1e-4;
}

}  // namespace sl::pascaltest
