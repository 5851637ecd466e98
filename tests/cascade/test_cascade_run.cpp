// CascadeInfer through the registry and the run pipeline: ids and knobs, bad
// knobs, the report, what each variant changes (and only that), Llumnix's
// balancing, and determinism.
#include <gtest/gtest.h>

#include "policy/cascade/cascade_global.h"
#include "policy/cascade/llumnix_global.h"
#include "policy/registry.h"
#include "run/execute.h"
#include "run/run.h"
#include "util/error.h"

namespace sl::cascadetest {
namespace {

Scenario scenario(const std::string& policy, double rate = 10, std::int64_t requests = 400, std::uint64_t seed = 1) {
  Scenario s;
  s.cluster.instances = 4;
  s.cluster.gpu = "h20-141g";
  s.model = "llama-3.1-8b";
  s.workload.arrival.rate = rate;
  s.workload.input_tokens = LengthDist{};
  s.workload.input_tokens.kind = LengthDist::Kind::Lognormal;
  s.workload.input_tokens.median = 1730;
  s.workload.input_tokens.p90 = 5696;
  s.workload.input_tokens.clipMax = 8141;
  s.workload.answer_tokens = LengthDist{};
  s.workload.answer_tokens.kind = LengthDist::Kind::Lognormal;
  s.workload.answer_tokens.median = 415;
  s.workload.answer_tokens.p90 = 834;
  s.workload.answer_tokens.clipMax = 1024;
  s.workload.requests = requests;
  s.policy.id = policy;
  s.run.seed = seed;
  return s;
}

struct Ran {
  std::unique_ptr<PreparedRun> run;
  const CascadeGlobal& g() const { return dynamic_cast<const CascadeGlobal&>(run->simulator->globalPolicy()); }
  Simulator& sim() const { return *run->simulator; }
};

Ran runIt(const Scenario& s) {
  Ran r{prepareRun(s, "test")};
  executeRun(*r.run, RunOptions{});
  return r;
}

TEST(CascadeRegistry, FamilyIdsKnobsAndBaselines) {
  for (const char* id : {"cascade", "cascade-chain", "cascade-nopipeline", "cascade-quantity", "cascade-memory",
                         "cascade-interstage-only", "round-robin", "llumnix"}) {
    const PolicyInfo& p = policyInfo(id);
    EXPECT_EQ(p.family, "CascadeInfer") << id;
    EXPECT_FALSE(p.usesRouter) << id;
    for (const KnobSpec& k : p.knobs) {
      // Every knob has a unit, except a choice (an integer 0/1 mode, as arrow's `dispatch`).
      if (!(k.integer && k.min == 0 && k.max == 1)) {
        EXPECT_FALSE(k.unit.empty()) << id << " " << k.name;
      }
      EXPECT_LE(k.min, k.def) << k.name;
      EXPECT_GE(k.max, k.def) << k.name;
    }
  }
  std::vector<std::string> live;
  for (const KnobSpec& k : policyInfo("cascade").knobs)
    if (k.liveSafe) live.push_back(k.name);
  EXPECT_EQ(live, (std::vector<std::string>{"refine_interval_s", "ema_alpha", "starve_limit", "migration_cap",
                                            "message_latency_s", "rebalance_threshold"}));
  // round-robin is the existing router, whatever policy.router says.
  PolicySpec ps;
  ps.id = "round-robin";
  ps.router = "least-loaded";
  EXPECT_STREQ(makePolicy(ps).global->name(), "round-robin");
}

TEST(CascadeRegistry, BadKnobNamesTheField) {
  Scenario s = scenario("cascade");
  s.policy.knobs = {{"ema_alpha", 1.5}};
  try {
    prepareRun(s, "test");
    FAIL() << "accepted ema_alpha 1.5";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("policy.knobs.ema_alpha"), std::string::npos) << e.what();
  }
}

TEST(CascadeRun, PlansStagesFitsTheModelAndHandsOver) {
  const Ran r = runIt(scenario("cascade"));
  const CascadeGlobal& g = r.g();
  EXPECT_GE(g.stages(), 2);
  EXPECT_GT(g.qoeFitError(), 0);
  EXPECT_LT(g.qoeFitError(), 0.5);
  EXPECT_GT(g.handovers(), 0);
  EXPECT_EQ(r.sim().finishedCount(), 400);
  // Stage ranges are ordered and every instance is in exactly one stage.
  int total = 0;
  for (int s = 0; s < g.stages(); ++s) {
    total += static_cast<int>(g.members(s).size());
    if (s + 1 < g.stages()) {
      EXPECT_LT(g.lower(s), g.upper(s));
    }
  }
  EXPECT_EQ(total, 4);
  std::vector<PolicyReportEntry> rep;
  g.report(rep);
  bool hasErr = false;
  for (const auto& e : rep) hasErr |= e.key == "qoe_model/mean_relative_error" && e.value == g.qoeFitError();
  EXPECT_TRUE(hasErr);
  // The pool label is the stage's length range in tokens.
  EXPECT_EQ(r.sim().poolLabel(0).rfind("0–", 0), 0u) << r.sim().poolLabel(0);
  const std::string last = r.sim().poolLabel(g.members(g.stages() - 1).front());
  EXPECT_EQ(last.substr(last.size() - 3), "∞") << last;  // the last stage has no upper bound
}

// What lecture mode calls out (counters with a callout text): every
// bid-ask round is one "asked" on its sender, its candidates' "bids", and at
// most one "won"; every hand-over and rebalancing move was won first.
TEST(CascadeRun, BidAskCountersForLectureMode) {
  const Ran r = runIt(scenario("cascade"));
  const CascadeGlobal& g = r.g();
  double asked = 0, bids = 0, won = 0;
  for (int i = 0; i < 4; ++i) {
    std::vector<PolicyField> f;
    g.publishInstance(i, f);
    auto value = [&](const std::string& label) {
      for (const PolicyField& x : f)
        if (x.label == label) {
          EXPECT_FALSE(x.callout.empty()) << label;
          return x.value;
        }
      ADD_FAILURE() << "no field " << label;
      return 0.0;
    };
    asked += value("asked");
    bids += value("bids");
    won += value("won");
  }
  EXPECT_EQ(asked, static_cast<double>(g.bidRounds()));
  EXPECT_GT(asked, 0);
  EXPECT_GE(bids, asked);  // each round asks at least one candidate
  EXPECT_LE(won, asked);
  EXPECT_GE(won, static_cast<double>(g.handovers() + g.rebalances()));
}

TEST(CascadeRun, VariantsDifferOnlyWhereTheyShould) {
  const Ran base = runIt(scenario("cascade"));
  // nopipeline: one stage, no hand-over.
  const Ran np = runIt(scenario("cascade-nopipeline"));
  EXPECT_EQ(np.g().stages(), 1);
  EXPECT_EQ(np.g().handovers(), 0);
  // chain: one instance per stage.
  const Ran ch = runIt(scenario("cascade-chain"));
  EXPECT_EQ(ch.g().stages(), 4);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(ch.g().members(s).size(), 1u);
  // interstage-only: the same start-up plan, no intra-stage rebalancing.
  const Ran io = runIt(scenario("cascade-interstage-only"));
  EXPECT_EQ(io.g().rebalances(), 0);
  EXPECT_GT(base.g().rebalances(), 0);
  EXPECT_EQ(io.g().boundaryLog().front().upper, base.g().boundaryLog().front().upper);
  // quantity / memory: the same start-up plan and model, other refinements.
  for (const char* id : {"cascade-quantity", "cascade-memory"}) {
    const Ran v = runIt(scenario(id));
    EXPECT_EQ(v.g().qoe().d, base.g().qoe().d) << id;
    ASSERT_GE(v.g().boundaryLog().size(), static_cast<std::size_t>(v.g().stages())) << id;
    for (int s = 0; s < base.g().plan().stages(); ++s)
      EXPECT_EQ(v.g().boundaryLog()[static_cast<std::size_t>(s)].upper,
                base.g().boundaryLog()[static_cast<std::size_t>(s)].upper)
          << id;
    EXPECT_GT(v.g().refinements(), 0) << id;
    EXPECT_NE(v.sim().fingerprint(), base.sim().fingerprint()) << id;
  }
}

TEST(CascadeRun, LlumnixBalancesByLiveMigration) {
  const Ran r = runIt(scenario("llumnix", 14));
  const auto& g = dynamic_cast<const LlumnixGlobal&>(r.sim().globalPolicy());
  EXPECT_GT(g.migrationsStarted(), 0);
  EXPECT_LE(r.sim().migrations(), g.migrationsStarted());  // a started move may be abandoned, never invented
  EXPECT_EQ(r.sim().finishedCount(), 400);
  // A threshold of 1 (the whole memory) never moves anything.
  Scenario s = scenario("llumnix", 14);
  s.policy.knobs = {{"gap_threshold", 1.0}};
  const Ran none = runIt(s);
  EXPECT_EQ(dynamic_cast<const LlumnixGlobal&>(none.sim().globalPolicy()).migrationsStarted(), 0);
}

TEST(CascadeRun, Deterministic) {
  for (const char* id : {"cascade", "llumnix", "cascade-chain"}) {
    const Ran a = runIt(scenario(id, 12, 300, 5));
    const Ran b = runIt(scenario(id, 12, 300, 5));
    EXPECT_EQ(a.sim().fingerprint(), b.sim().fingerprint()) << id;
    const Ran c = runIt(scenario(id, 12, 300, 6));
    EXPECT_NE(a.sim().fingerprint(), c.sim().fingerprint()) << id;
  }
}

}  // namespace
}  // namespace sl::cascadetest
