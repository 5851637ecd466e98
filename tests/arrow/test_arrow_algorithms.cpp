// Arrow's Algorithms 1-4, the overload rule, the drain transitions and the
// monitor on hand-built cases (30-schedulers.md "Arrow"; paper §5.3-5.5).
// Cost model: policy_harness.h's tiny one (1 ms + 0.1 ms per token), so the
// TTFT predictor fitted on prompts up to 8192 tokens is exactly
// 1 ms + 0.1 ms × I, and an 8000-token prompt is predicted at 0.801 s.
#include <gtest/gtest.h>

#include "arrow_test_util.h"
#include "cost/presets.h"

namespace sl::arrowtest {
namespace {

using test::req;

// Four instances: 0, 1 in P; 2, 3 in D. TTFT SLO 1 s, TPOT SLO 0.1 s.
ArrowConfig four(double ttft = 1.0, std::int64_t maxRunning = 0) {
  ArrowConfig c = cfg(ttft, 0.1, 2);
  c.profileMaxTokens = 8192;
  c.maxRunningTokens = maxRunning;
  return c;
}

TEST(ArrowPredictor, TinyCostModelIsFittedExactly) {
  ArrowRig rig(four(), 4, {});
  const TtftFit& f = rig.global->predictor().fitInfo();
  EXPECT_NEAR(f.a, 1e-3, 1e-9);
  EXPECT_NEAR(f.b, 1e-4, 1e-12);
  EXPECT_NEAR(f.c, 0.0, 1e-15);
  EXPECT_LT(f.maxRelError, 1e-9);
  EXPECT_NEAR(rig.global->predictor().predict(8000), 0.801, 1e-9);
}

// The paper's setting: Llama-3.1-8B on one H800, chunks of 8192 tokens,
// prompts from 16 tokens to the model's 128 K context. The quadratic cannot
// follow the cost model's kinks -- below ~300 tokens a prefill costs the
// weight read whatever its length, and every 8192-token chunk adds a step --
// so the stated bounds are: mean relative error over the profile under 15 %,
// worst point under 40 % (the shortest prompts, a few ms off; 31.9 % with
// the spec's coefficients, 35.6 % with issue 23's refit, whose larger
// per-layer overhead t_layer 46 µs deepens the short-prompt kink); for prompts
// of 1 K tokens or more under 15 %; and under 60 ms absolute for prompts up
// to 32 K tokens (the scale of a TTFT SLO is seconds). Measured: 11.5 %,
// 31.9 %, 13.2 %, 53 ms (docs/policies/arrow.md).
TEST(ArrowPredictor, FitErrorOnTheCostModelIsSmall) {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const CostModel cost(reg.gpu("h800-80g"), reg.model("llama-3.1-8b"), 1);
  const TtftPredictor p = TtftPredictor::fit(cost, 131072, 8192);
  const TtftFit& f = p.fitInfo();
  EXPECT_GT(f.points, 20);
  EXPECT_LT(f.mape, 0.15) << "a=" << f.a << " b=" << f.b << " c=" << f.c;
  EXPECT_LT(f.maxRelError, 0.40);
  EXPECT_GT(f.c, 0.0);  // attention makes long prompts super-linear
  // Off the profile grid.
  for (int n = 16; n <= 131072; n = n * 9 / 8 + 1) {
    const double truth = TtftPredictor::profileSeconds(cost, n, 8192);
    const double err = std::abs(p.predict(n) - truth);
    if (n >= 1024) {
      EXPECT_LT(err / truth, 0.15) << n << " tokens";
    }
    if (n <= 32768) {
      EXPECT_LT(err, 0.060) << n << " tokens";
    }
  }
  // With tp 8 (the paper's vLLM baseline) the compute-bound range starts
  // earlier and the fit is closer.
  const CostModel cost8(reg.gpu("h800-80g"), reg.model("llama-3.1-8b"), 8);
  EXPECT_LT(TtftPredictor::fit(cost8, 131072, 8192).fitInfo().mape, 0.05);
}

TEST(ArrowPools, InitialSplitAndRoles) {
  ArrowRig rig(four(), 4, {});
  EXPECT_EQ(rig.global->pool(0), ArrowPool::P);
  EXPECT_EQ(rig.global->pool(1), ArrowPool::P);
  EXPECT_EQ(rig.global->pool(2), ArrowPool::D);
  EXPECT_EQ(rig.global->pool(3), ArrowPool::D);
  EXPECT_EQ(rig.sim->instance(0).role(), InstanceRole::Prefill);
  EXPECT_EQ(rig.sim->instance(3).role(), InstanceRole::Decode);
  EXPECT_EQ(rig.sim->poolLabel(2), "D");
  // max_running_tokens: the KV capacity (1.6 M tokens) binds, as the tiny
  // model's decode batch costs 26.6 ms whatever its context.
  EXPECT_EQ(rig.global->kvCapacityTokens(), 1'600'000);
  EXPECT_EQ(rig.global->maxRunningTokens(), 1'600'000);
}

// Two 8000-token prompts queued on each P instance: a new prompt would wait
// 1.602 s there, beyond the 1 s SLO.
ArrowRig loadedPrefill(ArrowConfig c, std::vector<RequestSpec> extra = {}, std::vector<int> extraWhere = {}) {
  std::vector<RequestSpec> reqs = {req(0, 8000, 5), req(0, 8000, 5), req(0, 8000, 5), req(0, 8000, 5)};
  std::vector<int> where = {0, 0, 1, 1};
  for (std::size_t k = 0; k < extra.size(); ++k) {
    reqs.push_back(extra[k]);
    where.push_back(extraWhere[k]);
  }
  ArrowRig rig(c, 4, reqs);
  rig.place(where);
  rig.sim->run(ms(1));
  return rig;
}

TEST(ArrowAlg1, TakesTheLeastDelayedPrefillInstanceWithinTheSlo) {
  ArrowRig rig(four(), 4, {req(0, 8000, 5)});
  rig.place({0});
  rig.sim->run(ms(1));
  EXPECT_NEAR(rig.global->prefillDelay(0), 0.801, 1e-6);
  EXPECT_EQ(rig.global->prefillDelay(1), 0.0);
  EXPECT_EQ(rig.global->dispatchPrefill(100), 1);  // least delay
  EXPECT_EQ(rig.global->prefillCount(PrefillRule::PoolP), 1);
  EXPECT_TRUE(rig.global->flips().empty());
}

TEST(ArrowAlg1, PrefillDelayCountsQueuedAndStartedPrompts) {
  ArrowRig rig = loadedPrefill(four());
  EXPECT_NEAR(rig.global->prefillDelay(0), 1.602, 1e-6);
  // After the first iteration (8192 tokens: all of prompt 0, 192 of prompt
  // 1) only prompt 1's remainder is left: 0.1 ms × 7808 tokens.
  rig.sim->run(ms(822));
  EXPECT_EQ(rig.sim->instance(0).queuedPrefillTokens(), 7808);
  EXPECT_NEAR(rig.global->prefillDelay(0), 0.7808, 1e-6);
}

TEST(ArrowAlg1, ThenTheDtoPPool) {
  ArrowRig rig = loadedPrefill(four());
  rig.global->setPool(3, ArrowPool::DtoP, FlipReason::PrefillSlo);
  EXPECT_EQ(rig.global->dispatchPrefill(100), 3);
  EXPECT_EQ(rig.global->prefillCount(PrefillRule::PoolDtoP), 1);
}

TEST(ArrowAlg1, ThenFlipsTheLeastLoadedDecodeInstanceWhenDecodeLoadIsLow) {
  // Instance 3 decodes a request; 2 is empty, so Alg. 3 picks 2.
  ArrowRig rig = loadedPrefill(four(), {req(0, 50, 1000)}, {3});
  ASSERT_TRUE(rig.global->decodeLoadLow());
  const std::size_t before = rig.global->flips().size();
  EXPECT_EQ(rig.global->dispatchPrefill(100), 2);
  EXPECT_EQ(rig.global->pool(2), ArrowPool::P);  // no decode work: straight to P
  EXPECT_EQ(rig.sim->instance(2).role(), InstanceRole::Prefill);
  ASSERT_EQ(rig.global->flips().size(), before + 1);
  const ArrowFlip& f = rig.global->flips().back();
  EXPECT_EQ(f.instance, 2);
  EXPECT_EQ(f.from, ArrowPool::D);
  EXPECT_EQ(f.to, ArrowPool::P);
  EXPECT_EQ(f.reason, FlipReason::PrefillSlo);
  EXPECT_EQ(rig.global->prefillCount(PrefillRule::Flipped), 1);
  // The next prompt finds the flipped instance within the SLO.
  EXPECT_EQ(rig.global->dispatchPrefill(100), 2);
}

TEST(ArrowAlg1, AFlippedInstanceStillDecodingGoesToDtoP) {
  ArrowRig rig = loadedPrefill(four(), {req(0, 50, 1000), req(0, 60, 1000)}, {2, 3});
  rig.sim->run(ms(20));  // both decoding now
  ASSERT_EQ(rig.local(2).decoding(), 1);
  EXPECT_EQ(rig.global->dispatchPrefill(100), 2);  // 50 + 0 < 60 + 0 tokens
  EXPECT_EQ(rig.global->pool(2), ArrowPool::DtoP);
}

TEST(ArrowAlg3, PrefersThePtoDPool) {
  ArrowRig rig = loadedPrefill(four(), {req(0, 500, 1000)}, {3});
  rig.global->setPool(3, ArrowPool::PtoD, FlipReason::DecodeSlo);  // loaded, but in P→D
  EXPECT_EQ(rig.global->tryMoveDecodeToPrefill(), 3);              // not the empty D instance 2
}

TEST(ArrowAlg1, OverloadRuleNeverFlipsUnderHighDecodeLoad) {
  // max_running_tokens 100; instance 3 holds 1050 tokens: decode load is high.
  ArrowRig rig = loadedPrefill(four(1.0, 100), {req(0, 50, 1000), req(0, 1000, 1000)}, {2, 3});
  EXPECT_FALSE(rig.global->decodeLoadLow());
  EXPECT_EQ(rig.global->dispatchPrefill(100), 0);  // fallback to the best P instance
  EXPECT_EQ(rig.global->prefillCount(PrefillRule::Fallback), 1);
  EXPECT_TRUE(rig.global->flips().empty());
  EXPECT_EQ(rig.global->pool(2), ArrowPool::D);
}

TEST(ArrowAlg3, KeepsOneDecodeCapableInstance) {
  ArrowRig rig = loadedPrefill(four());
  rig.global->setPool(2, ArrowPool::P, FlipReason::PrefillSlo);
  ASSERT_EQ(rig.global->poolSize(ArrowPool::D), 1);
  EXPECT_EQ(rig.global->tryMoveDecodeToPrefill(), -1);
  EXPECT_EQ(rig.global->pool(3), ArrowPool::D);
}

TEST(ArrowAlg1, FallsBackWhenNothingCanBeFlipped) {
  ArrowRig rig = loadedPrefill(four());
  rig.global->setPool(2, ArrowPool::P, FlipReason::PrefillSlo);
  rig.global->setPool(3, ArrowPool::PtoD, FlipReason::DecodeSlo);
  // P = {0, 1, 2}: 2 is empty and takes it.
  EXPECT_EQ(rig.global->dispatchPrefill(100), 2);
  // Load 2 beyond the SLO too: then no flip is allowed (one decode-capable) -> best P.
  ArrowRig rig2 = loadedPrefill(four(), {req(0, 8000, 5), req(0, 8000, 5)}, {2, 2});
  rig2.global->setPool(2, ArrowPool::P, FlipReason::PrefillSlo);
  rig2.global->setPool(3, ArrowPool::PtoD, FlipReason::DecodeSlo);
  EXPECT_EQ(rig2.global->dispatchPrefill(100), 0);
  EXPECT_EQ(rig2.global->prefillCount(PrefillRule::Fallback), 1);
  EXPECT_EQ(rig2.global->poolSize(ArrowPool::PtoD), 1);
}

// ---------------------------------------------------------------- Algorithm 2

TEST(ArrowAlg2, DecodesInPlaceWhenThePrefillInstanceIsNowDecodeCapable) {
  ArrowRig rig(four(), 4, {});
  rig.global->setPool(0, ArrowPool::PtoD, FlipReason::DecodeSlo);
  EXPECT_EQ(rig.global->dispatchDecode(0), 0);
  rig.global->setPool(1, ArrowPool::D, FlipReason::DecodeSlo);
  EXPECT_EQ(rig.global->dispatchDecode(1), 1);
  EXPECT_EQ(rig.global->decodeCount(DecodeRule::InPlace), 2);
}

TEST(ArrowAlg2, LeastLoadedDecodeInstanceUnderTheLimits) {
  ArrowRig rig(four(1.0, 100), 4, {req(0, 30, 1000), req(0, 20, 1000)});
  rig.place({2, 3});
  rig.sim->run(ms(1));
  EXPECT_EQ(rig.global->dispatchDecode(0), 3);  // 20 < 30 tokens, both under 100
  EXPECT_EQ(rig.global->decodeCount(DecodeRule::PoolD), 1);
}

TEST(ArrowAlg2, ThenThePtoDPoolThenAFlip) {
  // D instances 2, 3 over max_running_tokens (100).
  ArrowRig rig(four(1.0, 100), 4, {req(0, 300, 1000), req(0, 200, 1000)});
  rig.place({2, 3});
  rig.sim->run(ms(1));
  rig.global->setPool(1, ArrowPool::PtoD, FlipReason::DecodeSlo);
  EXPECT_EQ(rig.global->dispatchDecode(0), 1);
  EXPECT_EQ(rig.global->decodeCount(DecodeRule::PoolPtoD), 1);

  ArrowRig rig2(four(1.0, 100), 4, {req(0, 300, 1000), req(0, 200, 1000), req(0, 8000, 5)});
  rig2.place({2, 3, 0});
  rig2.sim->run(ms(1));
  // No P→D: Alg. 4 flips the prefill instance with the least delay (1, empty).
  EXPECT_EQ(rig2.global->dispatchDecode(0), 1);
  EXPECT_EQ(rig2.global->pool(1), ArrowPool::D);
  EXPECT_EQ(rig2.global->flips().back().reason, FlipReason::DecodeSlo);
  EXPECT_EQ(rig2.global->decodeCount(DecodeRule::Flipped), 1);
}

TEST(ArrowAlg4, PrefersTheDtoPPoolAndKeepsOnePrefillCapable) {
  ArrowRig rig(four(1.0, 100), 4, {req(0, 8000, 5), req(0, 300, 1000), req(0, 200, 1000)});
  rig.place({1, 2, 3});
  rig.sim->run(ms(1));
  rig.global->setPool(1, ArrowPool::DtoP, FlipReason::PrefillSlo);  // busy prefilling, but in D→P
  EXPECT_EQ(rig.global->tryMovePrefillToDecode(), 1);               // not the idle P instance 0
  EXPECT_EQ(rig.global->pool(1), ArrowPool::PtoD);                  // still has its prefill
  // Now 0 is the only prefill-capable instance: no flip, fallback to the lesser-loaded.
  EXPECT_EQ(rig.global->tryMovePrefillToDecode(), -1);
  EXPECT_EQ(rig.global->dispatchDecode(0), 3);  // P→D 1 holds 8000 tokens; D 3 holds 200, D 2 300
  EXPECT_EQ(rig.global->decodeCount(DecodeRule::Fallback), 1);
}

// ---------------------------------------------------------------- drains, full runs

TEST(ArrowDrain, PtoDFinishesItsPrefillsInPlaceThenBecomesD) {
  // One 8000-token prompt prefilling on P instance 0 when 0 is flipped.
  ArrowRig rig(four(), 4, {req(0, 8000, 20)});
  rig.place({0});
  rig.sim->run(ms(1));
  rig.global->tryMovePrefillToDecode(FlipReason::DecodeSlo);  // P pool {0, 1}: picks 1 (no delay)
  EXPECT_EQ(rig.global->pool(1), ArrowPool::D);
  rig.global->setPool(1, ArrowPool::P, FlipReason::PrefillSlo);
  rig.global->setPool(0, ArrowPool::PtoD, FlipReason::DecodeSlo);
  EXPECT_EQ(rig.sim->instance(0).role(), InstanceRole::Decode);
  rig.sim->run();
  const RequestRecord& r = rig.record(0);
  EXPECT_EQ(rig.sim->handoffs(), 0);  // decoded where it prefilled
  EXPECT_EQ(r.generated, 20);
  EXPECT_EQ(rig.global->pool(0), ArrowPool::D);
  const ArrowFlip& f = rig.global->flips().back();
  EXPECT_EQ(f.instance, 0);
  EXPECT_EQ(f.from, ArrowPool::PtoD);
  EXPECT_EQ(f.to, ArrowPool::D);
  EXPECT_EQ(f.reason, FlipReason::Drained);
  // It became D at the end of the iteration that completed the prefill (0.801 s).
  EXPECT_NEAR(nsToSeconds(f.time), 0.801, 1e-6);
}

TEST(ArrowDrain, DtoPFinishesItsDecodesThenBecomesP) {
  ArrowRig rig(four(), 4, {req(0, 10, 30)});
  rig.place({3});
  rig.sim->run(ms(1));
  rig.global->setPool(3, ArrowPool::DtoP, FlipReason::PrefillSlo);
  rig.sim->run();
  EXPECT_EQ(rig.global->pool(3), ArrowPool::P);
  EXPECT_EQ(rig.global->flips().back().reason, FlipReason::Drained);
  EXPECT_EQ(rig.sim->finishedCount(), 1);
}

TEST(ArrowHandoff, PrefillOnPThenDecodeOnTheLeastLoadedD) {
  ArrowRig rig(four(), 4, {req(0, 100, 10), req(0, 100, 10)});
  rig.sim->run();
  EXPECT_EQ(rig.sim->finishedCount(), 2);
  EXPECT_EQ(rig.sim->handoffs(), 2);
  EXPECT_EQ(rig.global->prefillCount(PrefillRule::PoolP), 2);
  EXPECT_EQ(rig.global->decodeCount(DecodeRule::PoolD), 2);
  // Prompt 0 went to P instance 0 (ties go to the lowest index), prompt 1 to
  // 1 (0 then had a queued prefill); both prefills end together, and the
  // hand-off of 0 to D instance 2 counts in 2's decode load at once, so 1
  // goes to 3. Prefill and decode instances as recorded:
  std::map<std::int64_t, int> prefilledOn;
  for (const test::Iter& it : rig.rec.iters)
    for (const test::Entry& e : it.batch)
      if (e.prefill) prefilledOn[e.id] = it.instance;
  EXPECT_EQ(prefilledOn[0], 0);
  EXPECT_EQ(prefilledOn[1], 1);
  std::map<std::int64_t, int> decodedOn;
  for (const test::Iter& it : rig.rec.iters)
    for (const test::Entry& e : it.batch)
      if (!e.prefill) decodedOn[e.id] = it.instance;
  EXPECT_EQ(decodedOn[0], 2);
  EXPECT_EQ(decodedOn[1], 3);
}

// ---------------------------------------------------------------- the monitor

TEST(ArrowMonitor, FlipsPrefillToDecodeWhenTheTokenIntervalExceedsTpot) {
  // TPOT SLO 3 ms; 30 sequences decoding on each D instance: 1 + 0.1 × 30 = 4 ms per token.
  ArrowConfig c = cfg(1.0, 0.003, 2);
  c.profileMaxTokens = 8192;
  std::vector<RequestSpec> reqs;
  std::vector<int> where;
  for (int k = 0; k < 60; ++k) {
    reqs.push_back(req(0, 4, 3000));
    where.push_back(2 + k % 2);
  }
  ArrowRig rig(c, 4, reqs);
  rig.place(where);
  rig.sim->run(ms(150));
  ASSERT_FALSE(rig.global->flips().empty());
  const ArrowFlip& f = rig.global->flips().front();
  EXPECT_EQ(f.reason, FlipReason::MonitorTpot);
  EXPECT_EQ(f.from, ArrowPool::P);
  EXPECT_EQ(f.to, ArrowPool::D);
  EXPECT_EQ(f.time, ms(100));  // the first tick
  EXPECT_GT(rig.global->tokenInterval(2), 0.003);
  // Ticks go on flipping while the interval stays high, but one prefill-capable instance stays.
  rig.sim->run(ms(1000));
  EXPECT_EQ(rig.global->poolSize(ArrowPool::P) + rig.global->poolSize(ArrowPool::DtoP), 1);
}

TEST(ArrowMonitor, FlipsAnIdlePrefillInstanceWhenDecodeIsBusy) {
  // max_running_tokens 1000; each D instance holds ~600 tokens (busy at 0.5),
  // token interval 1.1 ms is far under the TPOT SLO.
  ArrowConfig c = cfg(1.0, 0.1, 2);
  c.profileMaxTokens = 8192;
  c.maxRunningTokens = 1000;
  ArrowRig rig(c, 4, {req(0, 600, 3000), req(0, 600, 3000)});
  rig.place({2, 3});
  rig.sim->run(ms(150));
  ASSERT_EQ(rig.global->flips().size(), 1u);
  EXPECT_EQ(rig.global->flips()[0].reason, FlipReason::MonitorIdle);
  EXPECT_EQ(rig.global->flips()[0].instance, 0);
  EXPECT_EQ(rig.global->pool(0), ArrowPool::D);
  rig.sim->run(ms(500));
  EXPECT_EQ(rig.global->flips().size(), 1u);  // instance 1 is the last prefill-capable one
  EXPECT_EQ(rig.global->pool(1), ArrowPool::P);
}

TEST(ArrowMonitor, QuietClusterNeverFlips) {
  ArrowConfig c = cfg(1.0, 0.1, 2);
  c.profileMaxTokens = 8192;
  ArrowRig rig(c, 4, {req(0, 100, 50), req(200, 100, 50), req(400, 100, 50)});
  rig.sim->run();
  EXPECT_TRUE(rig.global->flips().empty());
  EXPECT_EQ(rig.sim->finishedCount(), 3);
}

}  // namespace
}  // namespace sl::arrowtest
