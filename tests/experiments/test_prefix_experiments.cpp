// core/experiments/prefix and arrow-fig7-mooncake-prefix: --quick runs on the
// shared Mooncake trace (skipped when ../shared/traces is absent).
#include <gtest/gtest.h>

#include <string>

#include "experiment_test_util.h"
#include "experiments/arrow/arrow_experiments.h"
#include "experiments/prefix/prefix_experiments.h"

namespace sl::exp {
namespace {

TEST(PrefixExperiments, Registered) {
  for (const char* id : {"prefix-mooncake", "prefix-sessions", "arrow-fig7-mooncake-prefix"}) EXPECT_NE(findExperiment(id), nullptr) << id;
}

TEST(PrefixExperiments, ScenarioTurnsCachingOnAndOff) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const Scenario on = prefixMooncakeScenario("prefix-aware", true, 0.5, 10);
  EXPECT_TRUE(on.cluster.prefix_caching);
  EXPECT_EQ(on.cluster.instances, 8);
  EXPECT_EQ(on.cluster.tp, 1);
  EXPECT_EQ(on.policy.router, "prefix-aware");
  EXPECT_FALSE(prefixMooncakeScenario("round-robin", false, 0.5, 10).cluster.prefix_caching);
  for (const ArrowTrace& t : arrowTraces()) {
    const Scenario s = arrowScenario(t, "arrow", 1.0, 8, 10);
    EXPECT_EQ(s.cluster.prefix_caching, t.key == "mooncake-prefix") << t.key;
  }
}

// arrow-fig7-mooncake-prefix runs Fig. 7's systems on the mooncake-prefix
// entry: one short Arrow run of it hits the cache; the plain entry has none.
TEST(PrefixExperiments, ArrowMooncakePrefixHits) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ArrowTrace* on = nullptr;
  const ArrowTrace* off = nullptr;
  for (const ArrowTrace& t : arrowTraces()) {
    if (t.key == "mooncake-prefix") on = &t;
    if (t.key == "mooncake") off = &t;
  }
  ASSERT_NE(on, nullptr);
  ASSERT_NE(off, nullptr);
  EXPECT_EQ(on->file, off->file);
  EXPECT_EQ(on->ttft, off->ttft);
  EXPECT_EQ(on->tpot, off->tpot);
  const RunOutcome a = runInMemory(arrowScenario(*on, "arrow", 1.0, 8, 200), "arrow, caching on");
  ASSERT_TRUE(a.prefixCache.has_value());
  EXPECT_GT(a.prefixCache->cachedTokens, 0);
  EXPECT_LT(a.prefixCache->cachedTokens, a.prefixCache->promptTokens);
  EXPECT_EQ(a.summary.arrived, 200);
  const RunOutcome b = runInMemory(arrowScenario(*off, "arrow", 1.0, 8, 200), "arrow, caching off");
  EXPECT_FALSE(b.prefixCache.has_value());
  EXPECT_LT(a.summary.ttft_s.mean, b.summary.ttft_s.mean);
}

TEST(PrefixExperiments, MooncakeQuick) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult r = runQuick("prefix-mooncake");
  ASSERT_EQ(r.table.rows.size(), 6u);
  const char* routers[] = {"round-robin", "prefix-aware", "session-affinity"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(str(r.table, i, "caching"), i < 3 ? "off" : "on") << i;
    EXPECT_EQ(str(r.table, i, "router"), routers[i % 3]) << i;
    EXPECT_EQ(cell(r.table, i, "requests"), 300) << i;
    EXPECT_GT(cell(r.table, i, "ttft_mean_s"), 0) << i;
    EXPECT_GE(cell(r.table, i, "ttft_p99_s"), cell(r.table, i, "ttft_p50_s")) << i;
    if (i < 3) {
      EXPECT_EQ(str(r.table, i, "hit_rate"), "n/a") << i;
      EXPECT_EQ(str(r.table, i, "hits"), "n/a") << i;
    } else {
      EXPECT_GT(cell(r.table, i, "hit_rate"), 0) << i;
      EXPECT_LT(cell(r.table, i, "hit_rate"), 1) << i;
      EXPECT_GT(cell(r.table, i, "hits"), 0) << i;
    }
  }
  // Caching skips prefill work: round-robin's mean TTFT drops with it on.
  EXPECT_LT(cell(r.table, 3, "ttft_mean_s"), cell(r.table, 0, "ttft_mean_s"));
  // Routing to the cache finds at least as many cached tokens as round-robin.
  EXPECT_GE(cell(r.table, 4, "hit_rate"), cell(r.table, 3, "hit_rate"));
  // Session affinity keeps a conversation together without piling every
  // request on one instance (all Mooncake prompts share block 0).
  EXPECT_GT(cell(r.table, 5, "hit_rate"), cell(r.table, 3, "hit_rate"));
  EXPECT_LT(cell(r.table, 5, "ttft_mean_s"), cell(r.table, 3, "ttft_mean_s"));
  ASSERT_EQ(r.charts.size(), 1u);
  EXPECT_EQ(r.charts[0].csv.rfind("config,time_scale,rate_rps,caching,router,hit_rate,", 0), 0u);
  // Deterministic: a second run gives the same table.
  EXPECT_EQ(runQuick("prefix-mooncake").table.csv(), r.table.csv());
}

// Synthetic shared prefixes need no trace: system prompts are hit by any
// router; a session's history only where its turns meet again.
TEST(PrefixExperiments, SessionsQuick) {
  const ExperimentResult r = runQuick("prefix-sessions");
  ASSERT_EQ(r.table.rows.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(str(r.table, i, "workload"), i < 6 ? "system-prompt" : "sessions") << i;
    EXPECT_EQ(cell(r.table, i, "requests"), 300) << i;
    if (i % 6 < 3)
      EXPECT_EQ(str(r.table, i, "hit_rate"), "n/a") << i;
    else
      EXPECT_GT(cell(r.table, i, "hit_rate"), 0) << i;
  }
  // 4 system prompts of 2048 tokens ahead of ~256-token inputs: most prompt
  // tokens are cached, and TTFT falls with caching on.
  EXPECT_GT(cell(r.table, 3, "hit_rate"), 0.5);
  EXPECT_LT(cell(r.table, 3, "ttft_mean_s"), cell(r.table, 0, "ttft_mean_s"));
  // Sessions: round-robin scatters the turns; the cache-aware routers find them.
  EXPECT_GT(cell(r.table, 10, "hit_rate"), 2 * cell(r.table, 9, "hit_rate"));
  EXPECT_GT(cell(r.table, 11, "hit_rate"), 2 * cell(r.table, 9, "hit_rate"));
  EXPECT_EQ(runQuick("prefix-sessions").table.csv(), r.table.csv());
}

}  // namespace
}  // namespace sl::exp
