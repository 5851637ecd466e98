// Policy catalog, knob validation and makePolicy (policy/registry.h).
#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "policy/registry.h"
#include "policy/routers.h"
#include "policy_harness.h"
#include "run/run.h"
#include "util/error.h"

namespace sl::test {
namespace {

/// The InputError message `f` throws ("" if it throws nothing).
template <class F> std::string inputError(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

PolicySpec spec(const std::string& id, nlohmann::json knobs = nlohmann::json::object(),
                const std::string& router = "least-loaded") {
  PolicySpec p;
  p.id = id;
  p.router = router;
  p.knobs = std::move(knobs);
  return p;
}

TEST(Registry, CatalogIdsAreUniqueAndDescribed) {
  std::set<std::string> ids;
  for (const PolicyInfo& p : policyCatalog()) {
    EXPECT_TRUE(ids.insert(p.id).second) << "duplicate id " << p.id;
    EXPECT_FALSE(p.family.empty()) << p.id;
    EXPECT_FALSE(p.description.empty()) << p.id;
    for (const KnobSpec& k : p.knobs) {
      EXPECT_LE(k.min, k.def) << p.id << "." << k.name;
      EXPECT_LE(k.def, k.max) << p.id << "." << k.name;
      EXPECT_FALSE(k.description.empty()) << p.id << "." << k.name;
    }
    EXPECT_EQ(&policyInfo(p.id), &p);
  }
  for (const char* id : {"fcfs", "rr", "oracle", "decode-first"}) EXPECT_TRUE(ids.count(id)) << id;
}

// Every catalog id builds with every router, with default knobs, and the
// result runs a small workload to completion on a tiny cluster.
TEST(Registry, EveryCatalogIdBuildsAndRuns) {
  for (const PolicyInfo& info : policyCatalog()) {
    for (const char* router : {"round-robin", "least-loaded", "least-kv", "random", "power-of-two"}) {
      SCOPED_TRACE(info.id + " / " + router);
      PolicyBundle b = makePolicy(spec(info.id, nlohmann::json::object(), router));
      ASSERT_TRUE(b.makeLocal);
      if (info.usesRouter) {
        ASSERT_TRUE(b.global);
        EXPECT_STREQ(b.global->name(), router);
      }
      auto local = b.makeLocal(0);
      ASSERT_TRUE(local);
      EXPECT_EQ(local->size(), 0u);

      InstanceConfig ic = tinyInstance(b.unlimitedKv ? std::int64_t{1} << 40 : 12, 2);
      if (b.chunkedPrefill) ic.chunkedPrefill = *b.chunkedPrefill;
      SimConfig c = tinySim(ic, 2);
      Simulator sim(c, tinyCost(),
                    std::make_unique<ListWorkload>(std::vector<RequestSpec>{
                        req(0, 6, 5), req(0.1, 3, 7), req(0.2, 8, 2), req(0.3, 2, 9), req(5, 5, 5)}),
                    std::move(b.global), b.makeLocal);
      sim.run();
      EXPECT_EQ(sim.finishedCount(), 5);
      EXPECT_EQ(sim.aborted(), 0);
    }
  }
}

TEST(Registry, RrQuantumKnobReachesThePolicy) {
  PolicyBundle def = makePolicy(spec("rr"));
  auto l = def.makeLocal(0);
  auto* rrp = dynamic_cast<RoundRobinLocal*>(l.get());
  ASSERT_NE(rrp, nullptr);
  EXPECT_EQ(rrp->quantum(), 500);  // the paper's default
  PolicyBundle three = makePolicy(spec("rr", {{"quantum", 3}}));
  auto l3 = three.makeLocal(1);
  EXPECT_EQ(dynamic_cast<RoundRobinLocal*>(l3.get())->quantum(), 3);
  EXPECT_EQ(dynamic_cast<RoundRobinLocal*>(makePolicy(spec("rr", {{"quantum", 1}})).makeLocal(0).get())->quantum(),
            1);
  EXPECT_EQ(
      dynamic_cast<RoundRobinLocal*>(makePolicy(spec("rr", {{"quantum", 1e6}})).makeLocal(0).get())->quantum(),
      1000000);
  EXPECT_EQ(
      dynamic_cast<RoundRobinLocal*>(makePolicy(spec("rr", {{"quantum", 7.0}})).makeLocal(0).get())->quantum(),
      7);
}

TEST(Registry, UnknownPolicyIdSuggests) {
  const std::string m = inputError([] { makePolicy(spec("fcsf")); });
  EXPECT_NE(m.find("policy.id"), std::string::npos) << m;
  EXPECT_NE(m.find("'fcsf'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'fcfs'"), std::string::npos) << m;
  EXPECT_NE(inputError([] { policyInfo("orcale"); }).find("did you mean 'oracle'"), std::string::npos);
  EXPECT_NE(inputError([] { makePolicy(spec("")); }).find("policy.id"), std::string::npos);
}

TEST(Registry, UnknownKnobNamesPlaceAndSuggests) {
  const std::string m = inputError([] { makePolicy(spec("rr", {{"quantom", 5}})); });
  EXPECT_NE(m.find("policy.knobs.quantom"), std::string::npos) << m;
  EXPECT_NE(m.find("'rr'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'quantum'"), std::string::npos) << m;

  const std::string none = inputError([] { makePolicy(spec("fcfs", {{"quantum", 5}})); });
  EXPECT_NE(none.find("policy.knobs.quantum"), std::string::npos) << none;
  EXPECT_NE(none.find("no knobs"), std::string::npos) << none;

  const std::string notObj = inputError([] { makePolicy(spec("rr", nlohmann::json::array({1}))); });
  EXPECT_NE(notObj.find("policy.knobs"), std::string::npos) << notObj;
  // null knobs = defaults
  EXPECT_EQ(inputError([] { makePolicy(spec("rr", nlohmann::json())); }), "");
}

TEST(Registry, KnobValuesValidated) {
  struct Bad {
    nlohmann::json value;
    const char* expect;
  };
  const std::vector<Bad> bad = {
      {0, "must be in [1, "},
      {-3, "must be in [1, "},
      {1000001, "must be in [1, "},
      {2.5, "must be an integer"},
      {"10", "expected a number"},
      {true, "expected a number"},
      {nullptr, "expected a number"},
      {nlohmann::json::array({10}), "expected a number"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.value.dump());
    const std::string m = inputError([&] { makePolicy(spec("rr", {{"quantum", b.value}})); });
    EXPECT_NE(m.find("policy.knobs.quantum"), std::string::npos) << m;
    EXPECT_NE(m.find(b.expect), std::string::npos) << m;
  }
  // Not finite: JSON has no NaN/inf literal, but a json value can hold one.
  const std::string inf = inputError([] {
    makePolicy(spec("rr", {{"quantum", std::numeric_limits<double>::infinity()}}));
  });
  EXPECT_NE(inf.find("policy.knobs.quantum"), std::string::npos) << inf;
}

TEST(Registry, UnknownRouterNamesPolicyRouter) {
  const std::string m = inputError([] { makePolicy(spec("fcfs", nlohmann::json::object(), "round-robbin")); });
  EXPECT_NE(m.find("policy.router"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'round-robin'"), std::string::npos) << m;
  const std::string m2 = inputError([] { parseRouter("leastkv"); });
  EXPECT_NE(m2.find("policy.router"), std::string::npos) << m2;
  EXPECT_NE(m2.find("least-kv"), std::string::npos) << m2;
}

// Through prepareRun the same errors carry the scenario's name.
TEST(Registry, PrepareRunPrefixesSource) {
  Scenario s;
  s.policy.id = "rr";
  s.policy.knobs = {{"quantum", 0}};
  const std::string m = inputError([&] { prepareRun(s, "my.json"); });
  EXPECT_EQ(m.rfind("my.json: policy.knobs.quantum", 0), 0u) << m;
}

// Live knob changes (GUI sliders): validated like scenario knobs, refused when
// not safe mid-run, and they change what the run does from that point on.
TEST(Registry, LiveKnobsAreValidatedAndTakeEffect) {
  Scenario s;
  s.cluster.instances = 2;
  s.model = "llama-3.1-8b";
  s.workload.requests = 300;
  s.workload.arrival.rate = 40;
  s.cluster.kv_capacity_fraction = 0.02;  // memory pressure, so RR order matters
  s.policy.id = "rr";
  auto run = [&](std::optional<double> quantumAt5s) {
    auto p = prepareRun(s, "live");
    Simulator& sim = *p->simulator;
    if (quantumAt5s) {
      sim.run(secondsToNs(5));
      applyLiveKnob(sim, "rr", "quantum", *quantumAt5s);
    }
    sim.run();
    return sim.fingerprint();
  };
  const auto base = run(std::nullopt);
  EXPECT_EQ(run(500.0), base);          // the value it already had: no change
  EXPECT_NE(run(2.0), base);            // quantum 2 from t = 5 s: another run
  EXPECT_EQ(run(2.0), run(2.0));        // and a deterministic one

  auto p = prepareRun(s, "live");
  Simulator& sim = *p->simulator;
  std::string m = inputError([&] { applyLiveKnob(sim, "rr", "quantom", 3); });
  EXPECT_NE(m.find("policy.knobs.quantom"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'quantum'"), std::string::npos) << m;
  m = inputError([&] { applyLiveKnob(sim, "rr", "quantum", 0); });
  EXPECT_NE(m.find("must be in [1, 1e+06]"), std::string::npos) << m;
  m = inputError([&] { applyLiveKnob(sim, "rr", "quantum", 2.5); });
  EXPECT_NE(m.find("must be an integer"), std::string::npos) << m;
  m = inputError([&] { applyLiveKnob(sim, "rr", "priority_by_quanta", 0); });
  EXPECT_NE(m.find("cannot change while a run is going"), std::string::npos) << m;
  m = inputError([&] { applyLiveKnob(sim, "fcfs", "quantum", 3); });
  EXPECT_NE(m.find("has no such knob"), std::string::npos) << m;
}

// Every live-safe knob of every policy is taken by the policy it belongs to
// (the catalog and the policies' setKnob agree).
TEST(Registry, EveryLiveSafeKnobIsTaken) {
  for (const PolicyInfo& info : policyCatalog()) {
    Scenario s;
    s.cluster.instances = 2;
    s.model = "llama-3.1-8b";
    s.workload.requests = 5;
    s.policy.id = info.id;
    auto p = prepareRun(s, "live");
    for (const KnobSpec& k : info.knobs) {
      if (!k.liveSafe) continue;
      EXPECT_NO_THROW(applyLiveKnob(*p->simulator, info.id, k.name, k.def)) << info.id << "." << k.name;
    }
  }
}

}  // namespace
}  // namespace sl::test
