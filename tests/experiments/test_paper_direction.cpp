// The papers' direction, asserted on the full experiments (not --quick) at
// the default seed, wherever docs/fidelity.md records that ServeLab
// reproduces it. The other experiment tests check only shapes and ranges; a
// modelling change that flips one of these findings fails here, and must
// update docs/fidelity.md with the reason. Where ServeLab does not reproduce
// the paper (Fig. 13's blocking, Fig. 16 from 1 req/s; Arrow's "near-linear"
// scaling, its DistServe failures) nothing is asserted. Arrow's experiments
// replay ../shared's traces and are skipped without them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiment_test_util.h"
#include "experiments/arrow/arrow_experiments.h"
#include "experiments/cascade/cascade_experiments.h"

namespace sl::exp {
namespace {

// The row of `policy` at `rate` (tables with policy and rate_rps columns).
std::size_t rowOf(const Table& t, const std::string& policy, double rate) {
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    if (str(t, i, "policy") == policy && cell(t, i, "rate_rps") == rate) return i;
  ADD_FAILURE() << "no row for " << policy << " at " << rate << " req/s";
  return t.rows.size();
}

// Fig. 11: PASCAL's answering-phase SLO violation below FCFS's at the high
// rates. With issue 23's cost defaults (measured all-reduce, eta_w 0.90,
// t_layer 46 us) it holds at 6 and 8 req/s but not at 7 (PASCAL 3.4 %, FCFS
// 2.1 %, PASCAL's p99 blocking 10.3 s; docs/fidelity.md "Re-measured on
// issue 23's cost defaults"), so only those two rates are asserted.
TEST(PaperDirection, Fig11PascalViolatesLessThanFcfsAtHighRates) {
  const ExperimentResult r = runExperiment("pascal-fig11-slo", false);
  ASSERT_EQ(r.table.rows.size(), 8u);
  for (std::size_t i : {std::size_t{5}, std::size_t{7}}) {
    SCOPED_TRACE(cell(r.table, i, "rate_rps"));
    EXPECT_LT(cell(r.table, i, "pascal_slo_violation_pct"), cell(r.table, i, "fcfs_slo_violation_pct"));
  }
}

// Fig. 10: PASCAL cuts FCFS's binned tail TTFT a lot (paper up to 61 %).
// "Never slower than FCFS in a bin" held on the spec's coefficients; on
// issue 23's defaults one bin is 0.3 s slower (docs/fidelity.md), so it is
// no longer asserted.
TEST(PaperDirection, Fig10PascalCutsFcfsTailTtft) {
  const ExperimentResult r = runExperiment("pascal-fig10-tail-ttft", false);
  ASSERT_EQ(str(r.table, 0, "policy"), "fcfs");
  EXPECT_GT(cell(r.table, 0, "pascal_max_reduction_pct"), 50.0);
  EXPECT_GT(cell(r.table, 0, "pascal_mean_reduction_pct"), 0.0);
}

// Fig. 15: the non-adaptive ablation violates the answering SLO far more
// often than PASCAL as the rate grows, and migrates more.
TEST(PaperDirection, Fig15NonAdaptiveViolatesMore) {
  const ExperimentResult r = runExperiment("pascal-fig15-nonadaptive", false);
  // "rises sharply with increasing request arrival rates": from 4 req/s.
  // At 2 req/s (issue 26's rules) every adaptive check passes, so the two
  // migrate the same requests (983 each, 0 % violations): equal, not worse.
  for (double rate : {4.0, 8.0}) {
    SCOPED_TRACE(rate);
    const std::size_t p = rowOf(r.table, "pascal", rate), n = rowOf(r.table, "pascal-nonadaptive", rate);
    EXPECT_GT(cell(r.table, n, "slo_violation_pct"), cell(r.table, p, "slo_violation_pct") + 2.0);
    EXPECT_GT(cell(r.table, n, "migrations"), cell(r.table, p, "migrations"));
  }
  const std::size_t p2 = rowOf(r.table, "pascal", 2.0), n2 = rowOf(r.table, "pascal-nonadaptive", 2.0);
  EXPECT_GE(cell(r.table, n2, "slo_violation_pct"), cell(r.table, p2, "slo_violation_pct"));
  EXPECT_GE(cell(r.table, n2, "migrations"), cell(r.table, p2, "migrations"));
}

// Fig. 4: FCFS's reasoning latency is inflated by blocking, RR's by
// preemption; the oracle has neither.
TEST(PaperDirection, Fig4FcfsBlocksRrPreempts) {
  const ExperimentResult r = runExperiment("pascal-fig4-reasoning-breakdown", false);
  expectPolicies(r.table, {"oracle", "fcfs", "rr"});
  if (HasFatalFailure()) return;
  EXPECT_EQ(cell(r.table, 0, "preemptions"), 0);
  EXPECT_GT(cell(r.table, 1, "vs_oracle"), 1.2);
  EXPECT_GT(cell(r.table, 2, "vs_oracle"), 1.2);
  EXPECT_GT(cell(r.table, 1, "blocked_pct"), 10 * cell(r.table, 2, "blocked_pct") + 1.0);
  EXPECT_GT(cell(r.table, 2, "preempted_pct"), cell(r.table, 1, "preempted_pct"));
}

// Fig. 5: RR starts every answer stream promptly (first token within
// TTFAT*), FCFS blocks; RR's SLO attainment is far above FCFS's.
TEST(PaperDirection, Fig5RrStartsPromptlyFcfsBlocks) {
  const ExperimentResult r = runExperiment("pascal-fig5-answering", false);
  expectPolicies(r.table, {"oracle", "fcfs", "rr"});
  if (HasFatalFailure()) return;
  EXPECT_LT(cell(r.table, 2, "first_token_p99_s"), 0.25);
  EXPECT_GT(cell(r.table, 1, "first_token_p99_s"), 1.0);
  EXPECT_GT(cell(r.table, 2, "slo_attainment_pct"), cell(r.table, 1, "slo_attainment_pct") + 20.0);
}

// KV transfer: the p99 copy at the high rate is a fraction of a second, below
// the paper's 0.14 s (Alpaca) and 0.25 s (Arena). "Arena's above Alpaca's"
// held on the spec's coefficients; on issue 23's defaults the two are within
// 1 % (0.0866 vs 0.0876 s, docs/fidelity.md) and it is not asserted.
TEST(PaperDirection, KvTransferP99IsSmall) {
  const ExperimentResult r = runExperiment("pascal-kv-transfer", false);
  double alpaca = -1, arena = -1;
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    if (str(r.table, i, "load") != "high") continue;
    (str(r.table, i, "dataset") == "alpaca-reasoning" ? alpaca : arena) = cell(r.table, i, "transfer_p99_s");
  }
  EXPECT_GT(alpaca, 0.0);
  EXPECT_LT(alpaca, 0.14);
  EXPECT_GT(arena, 0.0);
  EXPECT_LT(arena, 0.25);
}

// The row of `system` in a table with a system column (and `trace` when given).
std::size_t systemRow(const Table& t, const std::string& system, const std::string& trace = "") {
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    if (str(t, i, "system") == system && (trace.empty() || str(t, i, "trace") == trace)) return i;
  ADD_FAILURE() << "no row for " << system << " " << trace;
  return t.rows.size();
}

// Arrow Fig. 7 on Azure Code (fidelity.md: 83.0 req/s vs 3.85 / 8.82 /
// 32.9; paper 5.62x vLLM, 7.78x vLLM-disaggregated): Arrow sustains the
// highest rate, several times the colocated and 1P+1D systems' and above
// the static 4P+4D split's.
TEST(PaperDirection, ArrowFig7AzureCodeArrowSustainsTheMost) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult r = runExperiment("arrow-fig7-azure-code", false);
  const double arrow = cell(r.table, systemRow(r.table, "arrow"), "max_rate_rps");
  EXPECT_GT(arrow / cell(r.table, systemRow(r.table, "vllm-colocated"), "max_rate_rps"), 3.0);
  EXPECT_GT(arrow / cell(r.table, systemRow(r.table, "vllm-disaggregated"), "max_rate_rps"), 3.0);
  EXPECT_GT(arrow / cell(r.table, systemRow(r.table, "distserve"), "max_rate_rps"), 1.5);
}

// Arrow Fig. 8: SLO-aware dispatch beats minimal-load, which is no worse
// than round-robin; by more on the bursty Azure Code (paper 1.67x, ServeLab
// 2.52x) than on Azure Conversation (paper 1.1x, ServeLab 1.16x).
TEST(PaperDirection, ArrowFig8SloAwareBeatsMinimalLoadMostOnCode) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult r = runExperiment("arrow-fig8-ablation", false);
  double ratio[2] = {0, 0};
  int k = 0;
  for (const std::string trace : {"azure-code", "azure-conv"}) {
    SCOPED_TRACE(trace);
    const double slo = cell(r.table, systemRow(r.table, "arrow", trace), "max_rate_rps");
    const double ml = cell(r.table, systemRow(r.table, "static-pd/minimal-load", trace), "max_rate_rps");
    const double rr = cell(r.table, systemRow(r.table, "static-pd/round-robin", trace), "max_rate_rps");
    EXPECT_GT(slo, ml * 1.05);
    EXPECT_GE(ml, rr);
    ratio[k++] = slo / ml;
  }
  EXPECT_GT(ratio[0], ratio[1]);
}

// Arrow Fig. 9: with more GPUs Arrow's max rate grows, and from 4 GPUs on
// it stays above the static split's (with 2 GPUs Arrow cannot flip: the
// two are the same 1P+1D system).
TEST(PaperDirection, ArrowFig9MoreGpusMoreRateAndAboveStatic) {
  if (!arrowTracesDir()) GTEST_SKIP() << "no ../shared/traces";
  const ExperimentResult r = runExperiment("arrow-fig9-scaling", false);
  double prev = 0;
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    if (str(r.table, i, "system") != "arrow") continue;
    const double gpus = cell(r.table, i, "gpus");
    const double rate = cell(r.table, i, "max_rate_rps");
    SCOPED_TRACE(gpus);
    EXPECT_GT(rate, prev);
    prev = rate;
    for (std::size_t j = 0; j < r.table.rows.size(); ++j)
      if (str(r.table, j, "system") != "arrow" && cell(r.table, j, "gpus") == gpus) {
        if (gpus == 2) EXPECT_EQ(rate, cell(r.table, j, "max_rate_rps"));
        else EXPECT_GT(rate, cell(r.table, j, "max_rate_rps"));
      }
  }
  EXPECT_GT(prev, 0);
}

// Self-scheduling at the paper's setting (one A100-40G, one TP-1 Qwen3-14B
// engine, recompute, no chunked prefill, B 10, T 1 s; docs/fidelity.md
// "Self-scheduling"), at full size but seed 1 only: the one-GPU runs keep a
// deep queue and four seeds of Tables 1 and 3 take minutes on CI's 2 cores.
// The figures in the comments are seed 1's (the doc gives seeds 1-4).
ExperimentResult runSeed1(const std::string& id) {
  const Experiment* e = findExperiment(id);
  EXPECT_NE(e, nullptr) << id;
  if (!e) return {};
  ExperimentOptions o;
  o.seed = 1;
  return e->run(o);
}

// Table 1: length-only finishes more requests in 10 minutes and reaches 500
// sooner than FCFS in every domain (paper 4.49x / 2.04x / 1.43x done,
// 9.33x / 3.23x / 1.55x to 500). ShareGPT's FCFS count is fitted, math's
// and code's are not (docs/workloads.md).
TEST(PaperDirection, SelfSchedTable1LengthOnlyFinishesMoreInEveryDomain) {
  const ExperimentResult r = runSeed1("selfsched-table1-throughput");
  ASSERT_EQ(r.table.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(str(r.table, i, "domain"));
    EXPECT_GT(cell(r.table, i, "speedup_done"), 1.5);
    EXPECT_GT(cell(r.table, i, "speedup_time"), 1.5);
  }
}

// Table 3 (thinking mode): length-only ahead in every domain in both
// measures (paper 4.96x / 3.14x / 1.23x done, 7.21x / 2.55x / 1.59x to 100).
TEST(PaperDirection, SelfSchedTable3ThinkingLengthOnlyAheadInEveryDomain) {
  const ExperimentResult r = runSeed1("selfsched-table3-thinking");
  ASSERT_EQ(r.table.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(str(r.table, i, "domain"));
    EXPECT_GT(cell(r.table, i, "speedup_done"), 1.5);
    EXPECT_GT(cell(r.table, i, "speedup_time"), 1.5);
  }
}

// Table 2: two rank prompts for 20 requests cost a negligible part of the
// makespan (paper 55 ms of 11 min 6.5 s; ServeLab under 1 %).
TEST(PaperDirection, SelfSchedTable2RankPromptsAreNegligible) {
  const ExperimentResult r = runSeed1("selfsched-table2-overhead");
  ASSERT_EQ(r.table.rows.size(), 2u);
  EXPECT_EQ(cell(r.table, 1, "rank_prompts"), 2.0);
  const double extra = cell(r.table, 1, "extra_s"), makespan = cell(r.table, 0, "makespan_s");
  EXPECT_GE(extra, 0.0);
  EXPECT_LT(extra, 0.01 * makespan);
}

// Fig. 6: at every domain and rate length-only cuts FCFS's P95 TTFT, more
// than the other two modes do, and its P95 latency; the gain is largest on
// math (paper: 5x math, 1.6x code, modest on ShareGPT); on math it also
// cuts P95 TPOT (paper 2.5x).
TEST(PaperDirection, SelfSchedFig6LengthOnlyCutsTtftMostOnMath) {
  const ExperimentResult r = runSeed1("selfsched-fig6-p95");
  ASSERT_EQ(r.table.rows.size(), 36u);
  auto rowFor = [&](const std::string& domain, double rate, const std::string& policy) {
    for (std::size_t i = 0; i < r.table.rows.size(); ++i)
      if (str(r.table, i, "domain") == domain && str(r.table, i, "policy") == policy &&
          cell(r.table, i, "rate_rps") == rate)
        return i;
    ADD_FAILURE() << "no row " << domain << " " << rate << " " << policy;
    return r.table.rows.size();
  };
  for (double rate : {10.0, 20.0, 40.0}) {
    double gain[3] = {0, 0, 0};
    int k = 0;
    for (const char* d : {"math", "code", "sharegpt"}) {
      SCOPED_TRACE(std::string(d) + " @ " + std::to_string(rate));
      const std::size_t f = rowFor(d, rate, "fcfs"), l = rowFor(d, rate, "selfsched-length-only");
      const double lo = cell(r.table, l, "ttft_p95_vs_fcfs");
      EXPECT_GT(lo, 1.2);
      EXPECT_GT(lo, cell(r.table, rowFor(d, rate, "selfsched-rank-only"), "ttft_p95_vs_fcfs"));
      EXPECT_GT(lo, cell(r.table, rowFor(d, rate, "selfsched-prefill-only"), "ttft_p95_vs_fcfs"));
      EXPECT_LT(cell(r.table, l, "e2e_p95_s"), cell(r.table, f, "e2e_p95_s"));
      if (k == 0) {
        EXPECT_LT(2.0 * cell(r.table, l, "tpot_p95_s"), cell(r.table, f, "tpot_p95_s"));
      }
      gain[k++] = lo;
    }
    EXPECT_GT(gain[0], gain[1]);
    EXPECT_GT(gain[0], gain[2]);
  }
}

// CascadeInfer at the paper's load (issue 25): every point measured over a
// 120 s warm-up + 180 s window (docs/fidelity.md "CascadeInfer"). Fig. 10:
// cascade's saturated throughput above round-robin's and Llumnix's for all
// four models (measured 1.13-1.35x).
TEST(PaperDirection, CascadeFig10ThroughputAboveRoundRobinAndLlumnix) {
  const ExperimentResult r = runExperiment("cascade-fig10-throughput", false);
  ASSERT_EQ(r.table.rows.size(), 12u);
  for (std::size_t i = 0; i < r.table.rows.size(); i += 3) {
    SCOPED_TRACE(str(r.table, i, "model"));
    ASSERT_EQ(str(r.table, i, "system"), "cascade");
    EXPECT_GT(cell(r.table, i + 1, "cascade_over_system"), 1.05);  // round-robin
    EXPECT_GT(cell(r.table, i + 2, "cascade_over_system"), 1.05);  // llumnix
  }
}

// Fig. 12: at 5x and 10x the minimum-load SLO, cascade's attainment is
// above round-robin's and Llumnix's for the tiny and small settings
// (Llama-3.1-8B, Qwen-2.5-14B; measured 2.4-28x).
TEST(PaperDirection, CascadeFig12AttainsMoreThanRoundRobinAndLlumnix) {
  const ExperimentResult r = runExperiment("cascade-fig12-slo", false);
  int checked = 0;
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    const double scale = cell(r.table, i, "slo_scale");
    if (str(r.table, i, "system") != "cascade" || (scale != 5 && scale != 10)) continue;
    SCOPED_TRACE(str(r.table, i, "model") + " at " + std::to_string(scale));
    EXPECT_GT(cell(r.table, i, "attainment"), 1.5 * cell(r.table, i + 1, "attainment"));  // round-robin
    EXPECT_GT(cell(r.table, i, "attainment"), 1.5 * cell(r.table, i + 2, "attainment"));  // llumnix
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// Fig. 9: mean TPOT below round-robin's and Llumnix's on the L40 testbed
// and for Llama-3.1-70B at TP 2 and TP 4 (measured -13.8 to -39.7 %).
TEST(PaperDirection, CascadeFig9TpotBelowRoundRobinAndLlumnix) {
  const ExperimentResult r = runExperiment("cascade-fig9-testbeds", false);
  int checked = 0;
  for (std::size_t i = 0; i < r.table.rows.size(); ++i) {
    if (str(r.table, i, "system") != "cascade") continue;
    SCOPED_TRACE(str(r.table, i, "setting"));
    EXPECT_LT(cell(r.table, i, "tpot_mean_vs_rr_pct"), -5.0);
    EXPECT_LT(cell(r.table, i, "tpot_mean_vs_llumnix_pct"), -5.0);
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// Fig. 14: the planned pipeline's normalized latency below the chain's and
// no pipeline's (measured -36 % and -28 %). On ShareGPT's lengths only:
// with the built-in fallback lengths (no ../shared) the planned layout and
// the chain are level (+0.2 %), so the test skips there.
TEST(PaperDirection, CascadeFig14PlannedLayoutBeatsChainAndNoPipelineOnLatency) {
  if (!cascadeShareGptPath()) GTEST_SKIP() << "shared ShareGPT statistics absent";
  const ExperimentResult r = runExperiment("cascade-fig14-layouts", false);
  ASSERT_EQ(r.table.rows.size(), 3u);
  EXPECT_LT(cell(r.table, 1, "cascade_latency_vs_pct"), -10.0);  // cascade-chain
  EXPECT_LT(cell(r.table, 2, "cascade_latency_vs_pct"), -10.0);  // cascade-nopipeline
}

}  // namespace
}  // namespace sl::exp
