// CascadeInfer's parts on their own: the latency model's fit, the planner
// (heuristic vs exact DP), range refinement, the bid-ask choice, and in a
// tiny cluster the hand-over, message latency, starvation guard and cap.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cascade_test_util.h"
#include "policy/cascade/planner.h"
#include "policy/cascade/qoe_model.h"
#include "util/rng.h"

namespace sl::cascadetest {
namespace {

using test::ms;
using test::req;

// ---------------------------------------------------------------- Q model

// 200 random batches timed by the model `truth` (q floored at `floor`).
std::vector<QoeSample> syntheticSamples(const std::array<double, 5>& truth, std::uint64_t seed, double floor = -1e300) {
  Rng rng(seed);
  std::vector<QoeSample> s;
  for (int k = 0; k < 200; ++k) {
    QoeFeatures f;
    const int n = 1 + static_cast<int>(rng.below(64));
    for (int i = 0; i < n; ++i) {
      const double in = rng.uniform(16, 8000);
      f.add(in, in + rng.uniform(0, 1000));
    }
    QoeModel m;
    m.d = truth;
    s.push_back({f, std::max(floor, m.predict(f))});
  }
  return s;
}

TEST(CascadeQoe, FitRecoversKnownCoefficientsFromSyntheticData) {
  const std::array<double, 5> truth = {0.004, 2e-4, 3e-6, 5e-11, 7e-6};
  const std::vector<QoeSample> s = syntheticSamples(truth, 7);
  const QoeModel fit = fitQoe(s);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_NEAR(fit.d[k] / truth[k], 1.0, 1e-6) << "D" << k;
  EXPECT_LT(meanRelativeError(fit, s), 1e-9);
  // A static mean predictor is far worse on the same data.
  EXPECT_GT(staticMeanRelativeError(s, s), 0.1);
}

TEST(CascadeQoe, FitNeedsFiveSamples) {
  std::vector<QoeSample> s(4, QoeSample{{1, 1, 1, 1}, 1.0});
  EXPECT_THROW(fitQoe(s), std::invalid_argument);
}

TEST(CascadeQoe, ProfilingTheCostModelFitsWithinItsReportedError) {
  QoeProfileOptions o;
  o.maxLength = 4096;
  o.kvTokens = 1 << 20;
  const auto samples = profileQoe(test::tinyCost(), o);
  ASSERT_GE(samples.size(), 50u);
  const QoeModel m = fitQoe(samples);
  // Tiny cost model: iteration = 1 ms + 0.1 ms per token: the batch term D1 is positive.
  EXPECT_GT(m.d[1], 0);
  EXPECT_LT(meanRelativeError(m, samples), staticMeanRelativeError(samples, samples));
}

// Issue 25: the fitted coefficient on total current length came out
// negative (collinear features). The fit is non-negative least squares: on
// data whose best unconstrained fit needs a negative D4, every D_k >= 0, and
// it still beats the static predictor.
TEST(CascadeQoe, FitIsNonNegativeEvenWhereLeastSquaresGoesNegative) {
  const std::array<double, 5> truth = {0.004, 2e-4, 3e-6, 5e-11, -1e-6};  // D4 < 0
  const std::vector<QoeSample> s = syntheticSamples(truth, 11, 1e-4);
  const QoeModel fit = fitQoe(s);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_GE(fit.d[k], 0.0) << "D" << k;
  EXPECT_EQ(fit.d[4], 0.0);  // the negative coefficient is at the bound
  EXPECT_LT(meanRelativeError(fit, s), staticMeanRelativeError(s, s));
  // The cost model's own profile: no negative coefficient either.
  QoeProfileOptions o;
  o.maxLength = 4096;
  const QoeModel prof = fitQoe(profileQoe(test::tinyCost(), o));
  for (std::size_t k = 0; k < 5; ++k) EXPECT_GE(prof.d[k], 0.0) << "D" << k;
}

// ---------------------------------------------------------------- planner

LengthHistogram randomHistogram(Rng& rng, int buckets) {
  LengthHistogram h;
  h.edges = exponentialEdges(128, 128LL << (buckets - 1));
  h.bucket.resize(static_cast<std::size_t>(buckets));
  h.straddling.assign(static_cast<std::size_t>(buckets) + 1, 0.0);
  for (int b = 0; b < buckets; ++b) {
    const double n = rng.uniform(0, 50);
    const double len = static_cast<double>(h.edges[static_cast<std::size_t>(b)]) + 64;
    h.bucket[static_cast<std::size_t>(b)] = {n, n * len * 0.8, n * len * len * 0.7, n * len};
    if (b > 0) h.straddling[static_cast<std::size_t>(b)] = rng.uniform(0, 5);
  }
  return h;
}

PlanCosts someCosts() {
  PlanCosts c;
  c.q.d = {0.005, 1e-4, 2e-6, 1e-10, 3e-6};
  c.cutSecondsPerToken = 1e-5;
  return c;
}

TEST(CascadePlanner, ExactOnTrivialInputs) {
  Rng rng(3);
  const PlanCosts c = someCosts();
  for (int trial = 0; trial < 20; ++trial) {
    // One instance: one stage over everything, both solvers.
    const LengthHistogram h = randomHistogram(rng, 1 + static_cast<int>(rng.below(6)));
    const Plan e = planExact(h, c, 1), g = planHeuristic(h, c, 1);
    EXPECT_EQ(e.stages(), 1);
    EXPECT_EQ(g.stages(), 1);
    EXPECT_DOUBLE_EQ(e.cost, g.cost);
    // One bucket: one stage with every instance.
    const LengthHistogram h1 = randomHistogram(rng, 1);
    const int E = 1 + static_cast<int>(rng.below(8));
    const Plan e1 = planExact(h1, c, E), g1 = planHeuristic(h1, c, E);
    EXPECT_EQ(e1.instances, std::vector<int>{E});
    EXPECT_EQ(g1.instances, std::vector<int>{E});
    EXPECT_DOUBLE_EQ(e1.cost, g1.cost);
  }
}

TEST(CascadePlanner, HeuristicNeverBeatsTheExactDpAndStaysWithin25Percent) {
  Rng rng(11);
  const PlanCosts c = someCosts();
  double worst = 1;
  for (int trial = 0; trial < 300; ++trial) {
    const int B = 1 + static_cast<int>(rng.below(6));
    const int E = 1 + static_cast<int>(rng.below(6));
    const LengthHistogram h = randomHistogram(rng, B);
    const Plan e = planExact(h, c, E), g = planHeuristic(h, c, E);
    // Both are valid plans whose recorded cost is what they cost.
    EXPECT_NEAR(planCost(h, c, e), e.cost, 1e-9 * std::abs(e.cost) + 1e-12);
    EXPECT_NEAR(planCost(h, c, g), g.cost, 1e-9 * std::abs(g.cost) + 1e-12);
    int sum = 0;
    for (int m : g.instances) sum += m;
    EXPECT_EQ(sum, E);
    EXPECT_EQ(g.cuts.front(), 0);
    EXPECT_EQ(g.cuts.back(), B);
    EXPECT_GE(g.cost, e.cost - 1e-9 * std::abs(e.cost));
    if (e.cost > 0) worst = std::max(worst, g.cost / e.cost);
  }
  // The stated bound: within 25 % of the exact DP (measured worst on these
  // 300 inputs: 1.152; docs/policies/cascade.md).
  EXPECT_LE(worst, 1.25) << "worst heuristic / exact = " << worst;
  std::printf("worst heuristic / exact cost over 300 random inputs: %.4f\n", worst);
}

TEST(CascadePlanner, SeparatesShortAndLongWhenCutsAreFree) {
  // Two populations far apart; free cuts: mixing them costs the short ones
  // the long ones' per-token time, so the exact plan separates them.
  LengthHistogram h;
  h.edges = {0, 128, 256, 512, 1024};
  h.bucket = {{40, 40 * 100, 40 * 100.0 * 100, 40 * 110}, {}, {}, {4, 4 * 900, 4 * 900.0 * 900, 4 * 1000}};
  h.straddling = {0, 0, 0, 0, 0};
  PlanCosts c = someCosts();
  c.cutSecondsPerToken = 0;
  const Plan e = planExact(h, c, 4);
  ASSERT_GE(e.stages(), 2);
  EXPECT_LT(e.cost, stageCost(h, c, 0, 4, 4));
  // With a prohibitive cut cost, one stage.
  h.straddling = {0, 1e6, 1e6, 1e6, 0};
  c.cutSecondsPerToken = 1;
  EXPECT_EQ(planExact(h, c, 4).stages(), 1);
  EXPECT_EQ(planHeuristic(h, c, 4).stages(), 1);
}

TEST(CascadePlanner, HistogramIsTheStepPopulation) {
  // One request: prompt 100, 200 output steps over edges 0, 128, 256, 512.
  const LengthHistogram h = buildHistogram({{100, 200}}, {0, 128, 256, 512}, 200.0);
  ASSERT_EQ(h.buckets(), 3);
  EXPECT_DOUBLE_EQ(h.bucket[0].n, 28);   // lengths 100..127
  EXPECT_DOUBLE_EQ(h.bucket[1].n, 128);  // 128..255
  EXPECT_DOUBLE_EQ(h.bucket[2].n, 44);   // 256..299
  EXPECT_DOUBLE_EQ(h.bucket[1].sumL, 128 * (128 + 255) / 2.0);
  EXPECT_DOUBLE_EQ(h.bucket[0].sumI, 28 * 100.0);
  EXPECT_DOUBLE_EQ(h.straddling[1], 200);  // crosses 128 and 256, not 512
  EXPECT_DOUBLE_EQ(h.straddling[2], 200);
}

// buildHistogram visits only the buckets and edges a request's lengths
// reach; every sum must be the all-bucket scan's, bit for bit.
TEST(CascadePlanner, HistogramMatchesTheAllBucketScan) {
  const auto reference = [](const std::vector<std::pair<std::int64_t, std::int64_t>>& reqs,
                            const std::vector<std::int64_t>& edges, double population) {
    LengthHistogram h;
    const int nb = static_cast<int>(edges.size()) - 1;
    h.bucket.assign(static_cast<std::size_t>(nb), {});
    h.straddling.assign(edges.size(), 0.0);
    double steps = 0;
    for (const auto& [in, out] : reqs) steps += static_cast<double>(std::max<std::int64_t>(1, out));
    const double w = population / steps, perRequest = population / static_cast<double>(reqs.size());
    for (const auto& [in, out0] : reqs) {
      const std::int64_t out = std::max<std::int64_t>(1, out0);
      const double I = static_cast<double>(in);
      for (int b = 0; b < nb; ++b) {
        const std::int64_t x = std::max(in, edges[static_cast<std::size_t>(b)]);
        const std::int64_t y = std::min(in + out, b + 1 == nb ? std::numeric_limits<std::int64_t>::max()
                                                              : edges[static_cast<std::size_t>(b) + 1]);
        if (y <= x) continue;
        const double cnt = static_cast<double>(y - x);
        QoeFeatures& f = h.bucket[static_cast<std::size_t>(b)];
        f.n += w * cnt;
        f.sumI += w * cnt * I;
        f.sumI2 += w * cnt * I * I;
        f.sumL += w * cnt * (static_cast<double>(x + y - 1) / 2.0);
      }
      for (int k = 1; k < nb; ++k) {
        const std::int64_t e = edges[static_cast<std::size_t>(k)];
        if (in < e && in + out > e) h.straddling[static_cast<std::size_t>(k)] += perRequest;
      }
    }
    return h;
  };
  Rng rng(17);
  for (const std::vector<std::int64_t>& edges :
       {std::vector<std::int64_t>{0, 128, 256, 512, 1024, 2048}, std::vector<std::int64_t>{0, 64},
        std::vector<std::int64_t>{0, 100, 100, 300}, exponentialEdges(32, 20000)}) {
    std::vector<std::pair<std::int64_t, std::int64_t>> reqs;
    for (int i = 0; i < 500; ++i)
      reqs.emplace_back(static_cast<std::int64_t>(rng.next() % 3000), static_cast<std::int64_t>(rng.next() % 3000));
    reqs.emplace_back(edges.back(), 0);  // out 0 counts as one step
    reqs.emplace_back(0, 1);
    const LengthHistogram h = buildHistogram(reqs, edges, 123.0);
    const LengthHistogram r = reference(reqs, edges, 123.0);
    ASSERT_EQ(h.buckets(), r.buckets());
    for (int b = 0; b < h.buckets(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      EXPECT_EQ(h.bucket[i].n, r.bucket[i].n) << b;
      EXPECT_EQ(h.bucket[i].sumI, r.bucket[i].sumI) << b;
      EXPECT_EQ(h.bucket[i].sumI2, r.bucket[i].sumI2) << b;
      EXPECT_EQ(h.bucket[i].sumL, r.bucket[i].sumL) << b;
    }
    EXPECT_EQ(h.straddling, r.straddling);
  }
}

// Issue 25: prefill arrivals in the stage cost. Each arrival's prefill
// lands on the stage its prompt is routed to; the stage's decode cost is
// scaled by 1/(1 - u), u = prefill seconds per second per instance.
TEST(CascadePlanner, PrefillLoadGoesToThePromptsBucket) {
  LengthHistogram h = buildHistogram({{100, 10}, {300, 10}, {2000, 10}}, {0, 256, 512, 1024}, 3.0);
  addPrefillLoad(h, {{100, 10}, {300, 10}, {2000, 10}}, 3.0, [](std::int64_t in) { return 1e-4 * in; });
  ASSERT_EQ(h.prefillLoad.size(), 3u);
  EXPECT_DOUBLE_EQ(h.prefillLoad[0], 0.01);  // 1 req/s x 100 tokens x 0.1 ms
  EXPECT_DOUBLE_EQ(h.prefillLoad[1], 0.03);
  EXPECT_DOUBLE_EQ(h.prefillLoad[2], 0.2);   // 2000 > the last edge: the open last bucket
}

TEST(CascadePlanner, StageCostCountsPrefillArrivals) {
  EXPECT_DOUBLE_EQ(prefillSlowdown(0), 1.0);
  EXPECT_DOUBLE_EQ(prefillSlowdown(0.5), 2.0);
  EXPECT_DOUBLE_EQ(prefillSlowdown(0.9), 10.0);
  EXPECT_DOUBLE_EQ(prefillSlowdown(1.2), 40.0);  // continued linearly past 0.9
  Rng rng(3);
  LengthHistogram h = randomHistogram(rng, 4);
  const PlanCosts c = someCosts();
  const double plain2 = stageCost(h, c, 0, 2, 2), plain1 = stageCost(h, c, 0, 2, 1), plainLong = stageCost(h, c, 2, 4, 1);
  h.prefillLoad = {0.3, 0.5, 0.0, 0.0};  // 0.8 instance-seconds per second on buckets 0-1
  EXPECT_NEAR(stageCost(h, c, 0, 2, 2), plain2 / (1 - 0.4), 1e-12 * plain2);
  EXPECT_NEAR(stageCost(h, c, 0, 2, 1), plain1 / (1 - 0.8), 1e-12 * plain1);
  EXPECT_DOUBLE_EQ(stageCost(h, c, 2, 4, 1), plainLong);  // no prompts there: unchanged
  // Planning: a heavy prefill load on the short prompts' bucket gives their
  // stage more instances than the decode-only cost does.
  LengthHistogram two;
  two.edges = {0, 128, 256, 512, 1024};
  two.bucket = {{40, 40 * 100, 40 * 100.0 * 100, 40 * 110}, {}, {}, {40, 40 * 900, 40 * 900.0 * 900, 40 * 1000}};
  two.straddling = {0, 0, 0, 0, 0};
  PlanCosts free = c;
  free.cutSecondsPerToken = 0;
  const Plan before = planExact(two, free, 8);
  ASSERT_EQ(before.stages(), 2);
  two.prefillLoad = {3.0, 0, 0, 0};
  const Plan after = planExact(two, free, 8);
  ASSERT_EQ(after.stages(), 2);
  EXPECT_GT(after.instances[0], before.instances[0]);
  EXPECT_GE(planHeuristic(two, free, 8).instances[0], after.instances[0] - 1);
}

// Issue 25: with prefill_term on, the heuristic collapsed the pipeline to
// one stage while the exact DP kept 4 (Llama-3.1-8B, 16 x H20, measured in
// docs/policies/cascade.md). Phase 1's one-instance stages sit far past
// u = 1; merges compared the pooled stage with phase 1's uneven split, so
// every merge looked good. Now a merge is weighed against the pair's best
// split and phase 3 re-splits adjacent pairs. Random histograms whose
// prefill load puts a lone instance past u = 1: the heuristic keeps a
// pipeline wherever the DP has one and stays within 25 % of its cost
// (before the fix: up to 1.53 x the DP's cost on these histograms; the
// collapse itself is CascadeExperiments.PrefillTermKeepsThePipeline).
TEST(CascadePlanner, HeuristicKeepsThePipelineWithPrefillLoad) {
  Rng rng(11);
  const PlanCosts c = someCosts();
  int pipelined = 0;
  for (int trial = 0; trial < 40; ++trial) {
    LengthHistogram h = randomHistogram(rng, 8);
    h.prefillLoad.clear();
    for (int b = 0; b < 8; ++b) h.prefillLoad.push_back(rng.uniform(0.6, 3.0));  // ~14 of 16 instances busy
    const Plan e = planExact(h, c, 16), g = planHeuristic(h, c, 16);
    SCOPED_TRACE(trial);
    EXPECT_LE(g.cost, 1.25 * e.cost);
    EXPECT_GE(g.cost, e.cost * (1 - 1e-12));
    if (e.stages() >= 2) {
      EXPECT_GE(g.stages(), 2);
      ++pipelined;
    }
  }
  EXPECT_GT(pipelined, 20);
}

// ---------------------------------------------------------------- refinement

TEST(CascadeRefine, FreezesBelowFiveRequests) {
  QoeModel q;
  q.d = {0.005, 1e-4, 2e-6, 1e-10, 3e-6};
  std::vector<std::pair<double, double>> four = {{10, 100}, {10, 200}, {10, 300}, {10, 5000}};
  EXPECT_EQ(CascadeGlobal::refineTarget(q, RefineMode::Qoe, four, 5), -1);
  four.emplace_back(10, 6000);
  EXPECT_GE(CascadeGlobal::refineTarget(q, RefineMode::Qoe, four, 5), 100);
}

TEST(CascadeRefine, QuantityMemoryAndQoeSplits) {
  QoeModel q;
  q.d = {0.005, 1e-4, 0, 0, 1e-5};
  const std::vector<std::pair<double, double>> set = {{1, 100}, {1, 110}, {1, 120}, {1, 130}, {1, 4000}, {1, 4100}};
  // Quantity: half the requests on each side: the split is at the 4th (index 3).
  EXPECT_EQ(CascadeGlobal::refineTarget(q, RefineMode::Quantity, set, 5), 130);
  // Memory: the first split whose left side holds half of the 8560 tokens:
  // 100+110+120+130+4000 = 4460 >= 4280, so the left side is the first five
  // and the boundary is the sixth's length.
  EXPECT_EQ(CascadeGlobal::refineTarget(q, RefineMode::Memory, set, 5), 4100);
  // QoE: separating the two long sequences from the short ones is cheapest.
  EXPECT_EQ(CascadeGlobal::refineTarget(q, RefineMode::Qoe, set, 5), 4000);
}

TEST(CascadeRefine, SetDivisionTakesEveryMthFromTheMiddleOfTheFirstGroup) {
  std::vector<std::pair<double, double>> set;
  for (int i = 0; i < 9; ++i) set.emplace_back(0, 10 * (9 - i));  // unsorted
  const auto d = CascadeGlobal::divide(set, 3);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].second, 20);  // sorted 10..90, from index 1, every 3rd
  EXPECT_EQ(d[1].second, 50);
  EXPECT_EQ(d[2].second, 80);
}

TEST(CascadeRefine, SetDivisionMatchesThePairSortOnTokensAndOtherValues) {
  // divide sorts token counts by a 64-bit key; the result must be the
  // (length, prompt) pair sort's, ties and all, and other values must still
  // be ordered by the pair sort.
  const auto reference = [](std::vector<std::pair<double, double>> set, int m) {
    std::sort(set.begin(), set.end(),
              [](const auto& a, const auto& b) { return a.second != b.second ? a.second < b.second : a.first < b.first; });
    std::vector<std::pair<double, double>> out;
    for (std::size_t k = static_cast<std::size_t>(m / 2); k < set.size(); k += static_cast<std::size_t>(m)) out.push_back(set[k]);
    return out;
  };
  Rng rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::pair<double, double>> set;
    const int n = 50 + static_cast<int>(rng.next() % 400);
    for (int i = 0; i < n; ++i) {
      const double prompt = static_cast<double>(rng.next() % 64);  // many ties
      set.emplace_back(prompt, prompt + static_cast<double>(rng.next() % (round < 10 ? 8 : 40000)));
    }
    for (int m : {2, 3, 5}) EXPECT_EQ(CascadeGlobal::divide(set, m), reference(set, m)) << "round " << round << " m " << m;
  }
  const std::vector<std::pair<double, double>> odd = {{1.5, 10.25}, {0, 3e9}, {2, 10.25}, {1, 10.25}, {7, 4}, {0, 1}};
  EXPECT_EQ(CascadeGlobal::divide(odd, 2), reference(odd, 2));
  EXPECT_EQ(CascadeGlobal::divide(odd, 2).front(), (std::pair<double, double>{7, 4}));
}

TEST(CascadeRefine, MovesTheBoundaryByEmaAndFreezesWithFewRequests) {
  CascadeConfig cc = quietConfig();
  cc.emaAlpha = 0.25;
  cc.refine = RefineMode::Quantity;
  // Stage 1 (instance 0) < 10000 tokens, stage 2 (instance 1) above.
  std::vector<RequestSpec> reqs = {req(0, 1000, 5000), req(0, 2000, 5000), req(0, 3000, 5000),
                                   req(0, 20000, 5000), req(0, 30000, 5000)};
  CascadeRig rig(cc, 2, reqs, {1, 1}, {10000});
  rig.sim->run(ms(2000));
  std::vector<double> lens;
  rig.sim->forEachActive([&](const Request& r) { lens.push_back(static_cast<double>(r.input) + r.generated); });
  ASSERT_EQ(lens.size(), 5u);
  std::sort(lens.begin(), lens.end());
  rig.global->refineNow();
  // Quantity split of 5: index 2 (the third shortest); EMA from 10000.
  EXPECT_EQ(rig.global->upper(0), std::lround(0.25 * lens[2] + 0.75 * 10000));
  EXPECT_EQ(rig.global->refinements(), 1);
  EXPECT_EQ(rig.global->frozenRefinements(), 0);

  // Four requests: frozen, the boundary stays.
  CascadeRig few(cc, 2, {reqs[0], reqs[1], reqs[3], reqs[4]}, {1, 1}, {10000});
  few.sim->run(ms(2000));
  few.global->refineNow();
  EXPECT_EQ(few.global->upper(0), 10000);
  EXPECT_EQ(few.global->frozenRefinements(), 1);
}

// Issue 25: refinement clamped a boundary to lower(s)+1, so a stage could
// shrink to a token or two. Now no stage is narrower than minStageWidth()
// (128 tokens at the default bucket base of 256).
TEST(CascadeRefine, NoStageShrinksBelowTheMinimumWidth) {
  CascadeConfig cc = quietConfig();
  cc.emaAlpha = 1.0;  // straight to the target
  cc.refine = RefineMode::Quantity;
  ASSERT_DOUBLE_EQ(CascadeGlobal(cc).minStageWidth(), 128.0);
  {
    // Two stages, every sequence a few tokens long: the target is ~6 tokens.
    std::vector<RequestSpec> reqs;
    for (int i = 0; i < 6; ++i) reqs.push_back(req(0, 2 + i, 5000));
    CascadeRig rig(cc, 2, reqs, {1, 1}, {1000});
    rig.sim->run(ms(3));
    rig.global->refineNow();
    EXPECT_EQ(rig.global->refinements(), 1);
    EXPECT_EQ(rig.global->upper(0), 128);  // was ~6 (clamped only to 0 + 1)
  }
  {
    // Three stages; boundary 0's target (~1000) runs into stage 1, which
    // used to leave stage 1 = [1099, 1100).
    std::vector<RequestSpec> reqs;
    for (int i = 0; i < 5; ++i) reqs.push_back(req(0, 10 + 10 * i, 5000));
    for (int i = 0; i < 5; ++i) reqs.push_back(req(0, 1000 + 10 * i, 5000));
    CascadeRig rig(cc, 3, reqs, {1, 1, 1}, {1000, 1100});
    rig.sim->run(ms(3));
    rig.global->refineNow();
    for (int s = 0; s < rig.global->stages(); ++s)
      EXPECT_GE(rig.global->upper(s) - rig.global->lower(s), 128) << "stage " << s;
    EXPECT_EQ(rig.global->upper(0), 1100 - 128);
    EXPECT_EQ(rig.global->upper(1), 1100);
    // A pair of stages with no room for two minimum widths keeps its boundary.
    rig.global->setLayout({1, 1, 1}, {1000, 1100});
    rig.global->setLayout({1, 1, 1}, {100, 200});
    const std::int64_t frozen = rig.global->frozenRefinements();
    rig.global->refineNow();
    EXPECT_EQ(rig.global->upper(0), 100);
    EXPECT_GT(rig.global->frozenRefinements(), frozen);
  }
}

// ---------------------------------------------------------------- bid-ask

TEST(CascadeBidAsk, DropsTheMoreLoadedHalfThenKeepsTheThreeEarliest) {
  // loads 10, 20, 30, 40: the less loaded half is {r0 (10), r1 (20)}; by
  // earliest start r1 (1 s) then r0 (5 s).
  const std::vector<CascadeBid> four = {{0, 10, 5}, {1, 20, 1}, {2, 30, 0}, {3, 40, 0}};
  EXPECT_EQ(CascadeGlobal::chooseBid(four, 0), 1);
  EXPECT_EQ(CascadeGlobal::chooseBid(four, 1), 0);
  EXPECT_EQ(CascadeGlobal::chooseBid(four, 2), 1);  // two kept: pick wraps
  // Eight bids: the four least loaded are 0..3; their three earliest are 3, 2, 1.
  std::vector<CascadeBid> eight;
  for (int i = 0; i < 8; ++i) eight.push_back({i, static_cast<double>(i), static_cast<double>(10 - i)});
  EXPECT_EQ(CascadeGlobal::chooseBid(eight, 0), 3);
  EXPECT_EQ(CascadeGlobal::chooseBid(eight, 1), 2);
  EXPECT_EQ(CascadeGlobal::chooseBid(eight, 2), 1);
  EXPECT_EQ(CascadeGlobal::chooseBid(eight, 3), 3);
  EXPECT_EQ(CascadeGlobal::chooseBid({}, 0), -1);
  EXPECT_EQ(CascadeGlobal::chooseBid({{5, 1, 1}}, 7), 5);
}

TEST(CascadeHandover, FiresExactlyWhenTheSequenceCrossesTheBoundAfterThreeMessages) {
  CascadeConfig cc = quietConfig();
  cc.messageLatencyS = 0.004;
  // Stage 1: instance 0, lengths < 100; stage 2: instances 1, 2.
  CascadeRig rig(cc, 3, {req(0, 90, 40)}, {1, 2}, {100});
  // Prompt 90: the 10th token makes the sequence 100 long.
  SimTime started = -1;
  while (rig.sim->step()) {
    if (started < 0 && rig.liveTotal() > 0) started = rig.sim->now();
    const Request* r = rig.find(0);
    if (r && r->input + r->generated < 100) {
      EXPECT_EQ(rig.global->bidRounds(), 0);
    }
  }
  const auto& tok = rig.rec.tokens.at(0);
  ASSERT_GE(tok.size(), 10u);
  EXPECT_EQ(rig.global->bidRounds(), 1);
  EXPECT_EQ(rig.global->handovers(), 1);
  // Ask, bid, confirm: three message latencies after the 10th token.
  EXPECT_EQ(started, tok[9] + 3 * secondsToNs(0.004));
  // It finished in stage 2; equal bids: the seeded tie-break picked one of them.
  const RequestRecord& rec = rig.sim->records().front();
  EXPECT_TRUE(rec.instance == 1 || rec.instance == 2);
  EXPECT_EQ(rec.migrations, 1);
}

// A round's three messages travel at the latency the knob had when the
// sender asked: a change mid-round applies from the next round.
TEST(CascadeHandover, ARoundKeepsTheLatencyItStartedWith) {
  CascadeConfig cc = quietConfig();
  cc.messageLatencyS = 0.004;
  CascadeRig rig(cc, 3, {req(0, 90, 40)}, {1, 2}, {100});
  SimTime started = -1;
  bool changed = false;
  while (rig.sim->step()) {
    if (!changed && rig.global->bidRounds() == 1) {
      ASSERT_TRUE(rig.global->setKnob("message_latency_s", 0.05));
      changed = true;
    }
    if (started < 0 && rig.liveTotal() > 0) started = rig.sim->now();
  }
  ASSERT_TRUE(changed);
  const auto& tok = rig.rec.tokens.at(0);
  ASSERT_GE(tok.size(), 10u);
  EXPECT_EQ(rig.global->handovers(), 1);
  EXPECT_EQ(started, tok[9] + 3 * secondsToNs(0.004));
}

TEST(CascadeHandover, LastStageAndSingleStageNeverHandOver) {
  CascadeRig rig(quietConfig(), 2, {req(0, 90, 40), req(0, 200, 20)}, {2}, {});
  rig.sim->run();
  EXPECT_EQ(rig.global->bidRounds(), 0);
  EXPECT_EQ(rig.sim->migrations(), 0);
}

// The start of the bid-ask queue tests: three requests on instance 0,
// prefilled by 50 ms; the first (A) is queued to receiver 1 and sent, so
// instance 0 transmits. Empty when a request is missing or not prefilled.
std::vector<Request*> sendFirstFromInstanceZero(CascadeRig& rig) {
  rig.sim->run(ms(50));
  std::vector<Request*> q = {rig.find(0), rig.find(1), rig.find(2)};
  for (const Request* r : q)
    if (!r || !r->prefillDone()) return {};
  rig.global->enqueueMove(1, *q[0], 9);
  rig.global->pump(1);
  return q;
}

TEST(CascadeBidAsk, StarvedRequestIsSentNextAfterTheSendersTransmission) {
  CascadeConfig cc = quietConfig();
  cc.starveLimit = 3;
  // Everything on instance 0 (stage 1 has only it); a 100 kB/s link: a move lasts a few ms.
  CascadeRig rig(cc, 3, {req(0, 100, 4000), req(0, 100, 4000), req(0, 100, 4000)}, {1, 2}, {1000000}, 1e5);
  const std::vector<Request*> q = sendFirstFromInstanceZero(rig);  // A leaves: the sender is transmitting
  ASSERT_EQ(q.size(), 3u);
  ASSERT_EQ(rig.sim->liveMigrations(0), 1);
  Request* b = q[1];
  Request* c = q[2];
  rig.global->enqueueMove(2, *b, 5);
  rig.global->enqueueMove(2, *c, 1);
  for (int k = 0; k < 3; ++k) rig.global->pump(2);
  ASSERT_EQ(rig.global->queueOf(2).size(), 2u);
  EXPECT_EQ(rig.global->queueOf(2)[0].id, 1);  // higher sender load first
  EXPECT_EQ(rig.global->queueOf(2)[0].skips, 3);
  EXPECT_EQ(rig.global->queueOf(2)[1].skips, 3);
  EXPECT_EQ(rig.global->starvations(), 0);
  rig.global->pump(2);  // the 4th skip of B exceeds the limit: B is waited for, C is not tried
  EXPECT_EQ(rig.global->starvations(), 1);
  EXPECT_EQ(rig.global->queueOf(2)[0].skips, 4);
  EXPECT_EQ(rig.global->queueOf(2)[1].skips, 3);
  rig.global->pump(2);  // waiting: nothing changes
  EXPECT_EQ(rig.global->queueOf(2)[1].skips, 3);
  // When A arrives, B goes next (C waits for B: the sender sends one at a time).
  rig.sim->run();
  std::vector<std::pair<std::int64_t, SimTime>> ends = rig.rec.of(RequestEvent::MigrationEnd);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[0].first, 0);
  EXPECT_EQ(ends[1].first, 1);
  EXPECT_EQ(ends[2].first, 2);
}

// While a receiver waits for a starved request its pump looks at no other
// entry unless one may have gone stale (CascadeGlobal::markStale): a queued
// request that finishes meanwhile must still be dropped at the next pump.
TEST(CascadeBidAsk, EntryThatFinishesWhileTheReceiverWaitsIsDropped) {
  CascadeConfig cc = quietConfig();
  cc.starveLimit = 1;
  // A slow link: A's move from instance 0 lasts far longer than D's life there.
  CascadeRig rig(cc, 3, {req(0, 100, 4000), req(0, 100, 4000), req(0, 100, 30)}, {1, 2}, {1000000}, 1e2);
  const std::vector<Request*> q = sendFirstFromInstanceZero(rig);
  ASSERT_EQ(q.size(), 3u);
  ASSERT_EQ(rig.sim->liveMigrations(0), 1);
  Request* b = q[1];
  Request* d = q[2];
  rig.global->enqueueMove(2, *b, 5);
  rig.global->enqueueMove(2, *d, 1);
  for (int k = 0; k < 3; ++k) rig.global->pump(2);
  ASSERT_EQ(rig.global->starvations(), 1);  // B is waited for
  ASSERT_EQ(rig.global->queueOf(2).size(), 2u);
  rig.global->pump(2);  // a pump that sees every entry: the queue is clean now
  ASSERT_NE(rig.find(2), nullptr);
  rig.sim->run(ms(200));  // D finishes; the pump timer runs every 20 ms
  EXPECT_EQ(rig.find(2), nullptr);
  ASSERT_EQ(rig.sim->liveMigrations(0), 1);  // A still moving, B still waited for
  ASSERT_EQ(rig.global->queueOf(2).size(), 1u);
  EXPECT_EQ(rig.global->queueOf(2)[0].id, 1);
}

// Issue 25: a receiver without room for a request it won refuses the
// migration (the request keeps running on its sender, as the paper says);
// after more than starve_limit refusals it hands the request back and the
// sender asks again, so the peer with room gets it.
TEST(CascadeBidAsk, FullReceiverHandsTheRequestBackAndAPeerWinsIt) {
  CascadeConfig cc = quietConfig();
  cc.starveLimit = 3;
  // 200 blocks of 16 tokens per instance. Stage 1: instance 0 (< 60 tokens);
  // stage 2: instances 1 and 2. The 3190-token prompt fills instance 1.
  CascadeRig rig(cc, 3, {req(0, 3190, 5), req(0, 50, 400)}, {1, 2}, {60}, 1e6, 200);
  rig.sim->run(ms(8));
  Request* big = rig.find(0);
  Request* a = rig.find(1);
  ASSERT_TRUE(big && a);
  ASSERT_EQ(big->instance, 1);
  ASSERT_EQ(a->instance, 0);
  ASSERT_TRUE(a->prefillDone());
  ASSERT_LT(a->input + a->generated, 60);
  rig.global->enqueueMove(1, *a, 9);  // instance 1 won it, but has no room
  for (int k = 1; k <= 3; ++k) {
    rig.global->pump(1);
    ASSERT_EQ(rig.global->queueOf(1).size(), 1u);
    EXPECT_EQ(rig.global->queueOf(1)[0].refusals, k) << "skips " << rig.global->queueOf(1)[0].skips << " live " << rig.sim->liveMigrations(1);
  }
  EXPECT_EQ(rig.global->refusedMigrations(), 3);
  rig.global->pump(1);  // the 4th refusal: handed back
  EXPECT_TRUE(rig.global->queueOf(1).empty());
  EXPECT_EQ(rig.global->handedBack(), 1);
  EXPECT_EQ(rig.sim->liveMigrations(1), 0);
  rig.sim->run();
  // At 60 tokens the sender asks again: instance 2 (empty) wins.
  std::vector<RequestRecord> all;
  rig.sim->records().forEach([&](const RequestRecord& r) { all.push_back(r); });
  ASSERT_EQ(all.size(), 2u);
  for (const RequestRecord& r : all)
    if (r.id == 1) {
      EXPECT_EQ(r.instance, 2);
      EXPECT_EQ(r.migrations, 1);
    }
}

TEST(CascadeBidAsk, LiveMigrationCapIsRespected) {
  for (int cap : {1, 2}) {
    CascadeConfig cc = quietConfig();
    cc.migrationCap = cap;
    std::vector<RequestSpec> reqs;
    for (int i = 0; i < 24; ++i) reqs.push_back(req(i * 2.0, 60 + i, 400));
    // Stage 1 has 3 instances (so 3 senders can transmit at once) and one receiver.
    CascadeRig rig(cc, 4, reqs, {3, 1}, {100}, 1e5);
    int most = 0;
    while (rig.sim->step())
      for (int i = 0; i < 4; ++i) {
        EXPECT_LE(rig.sim->liveMigrations(i), cap);
        most = std::max(most, rig.sim->liveMigrations(i));
      }
    EXPECT_EQ(most, cap) << "the cap was reached";
    EXPECT_EQ(rig.global->handovers(), 24);
  }
}

}  // namespace
}  // namespace sl::cascadetest

namespace sl::cascadetest {
namespace {

// ---------------------------------------------------------------- Llumnix

class PinnedLlumnix : public LlumnixGlobal {
public:
  using LlumnixGlobal::LlumnixGlobal;
  bool pin = true;
  int route(const Request& r) override { return pin ? 0 : LlumnixGlobal::route(r); }
};

TEST(Llumnix, MovesTheLeastKvRequestFromTheMostToTheLeastLoadedWhileTheGapIsOverTheThreshold) {
  LlumnixConfig lc;
  lc.intervalS = 1000;  // the timer stays out of the way: the test calls balanceNow
  lc.gapThreshold = 0.1;
  // 200 blocks of 16 tokens per instance; prompts of 400, 800, 1200 tokens = 25, 50, 75 blocks.
  SimConfig c = test::tinySim(test::tinyInstance(200, 16), 2);
  auto g = std::make_unique<PinnedLlumnix>(lc);
  PinnedLlumnix* llx = g.get();
  Simulator sim(c, test::tinyCost(), std::make_unique<test::ListWorkload>(std::vector<RequestSpec>{
                                         req(0, 800, 3000), req(0, 400, 3000), req(0, 1200, 3000)}),
                std::move(g), [](int) { return std::make_unique<FcfsLocal>(); });
  sim.run(ms(500));
  ASSERT_EQ(sim.instance(1).kvFootprintBlocks(), 0);
  const auto migrating = [&](std::int64_t id) {
    bool m = false;
    sim.forEachActive([&](const Request& r) { m |= r.id == id && r.migration >= 0; });
    return m;
  };
  // Gap 0.75+ > 0.1: request 1 (the 400-token prompt, least KV) goes to instance 1.
  EXPECT_TRUE(llx->balanceNow());
  EXPECT_TRUE(migrating(1));
  EXPECT_FALSE(migrating(0));
  // Still a gap of about 0.5 (the move in flight counts on its destination): the next least, request 0.
  EXPECT_TRUE(llx->balanceNow());
  EXPECT_TRUE(migrating(0));
  // Instance 0 still holds both until their copies end (0.75+), instance 1
  // their reservations (0.375+): the only movable request left, 75 blocks,
  // would not narrow the gap.
  EXPECT_FALSE(llx->balanceNow());
  EXPECT_EQ(llx->migrationsStarted(), 2);
  // Dispatch: to the most free KV blocks: instance 1 (200 - 75+ reserved) over instance 0 (200 - 150+).
  ASSERT_GT(sim.instance(1).freeGpuBlocks(), sim.instance(0).freeGpuBlocks());
  llx->pin = false;
  Request probe;
  EXPECT_EQ(llx->route(probe), 1);
}

}  // namespace
}  // namespace sl::cascadetest
