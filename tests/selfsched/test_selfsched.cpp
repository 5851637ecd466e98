// LLM self-scheduling (core/policy/selfsched): the noise calibration, the
// ranking batch (closes at B or at T exactly), rank prompts as real work
// outside the user's metrics, ranks applied when the prompt finishes, the
// priority order with the unranked rule, the anti-starvation promotions
// (threshold, quantum, per-round cap), the achieved tau-b over seeds, and
// oracle-sjf as the bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <map>
#include <optional>

#include "engine/snapshot.h"

#include "experiments/experiment.h"
#include "policy/registry.h"
#include "policy/selfsched/noise.h"
#include "policy/selfsched/selfsched.h"
#include "policy_harness.h"
#include "run/execute.h"
#include "run/run.h"
#include "util/rng.h"

namespace sl::test {
namespace {

std::vector<double> lognormalLengths(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (double& x : v) x = std::max(1.0, std::round(std::exp(5.5 + 1.2 * rng.normal())));
  return v;
}

TEST(SelfSchedNoise, CalibrationHitsEachTargetOnItsSample) {
  const auto lengths = lognormalLengths(4000, 3);
  Rng rng(9);
  std::vector<double> eps(lengths.size());
  for (double& e : eps) e = rng.normal();
  // No noise: the predictions are the lengths; only the gold ties cost tau.
  EXPECT_GT(noisyTauB(lengths, eps, 0.0, 0.1, 10), 0.9);
  double prevSigma = 0;
  for (double target : {0.55, 0.40, 0.25}) {
    const NoiseCalibration c = calibrateSigma(lengths, eps, target, 0.1, 10);
    EXPECT_NEAR(c.tau, target, 0.01) << target;
    EXPECT_GT(c.sigma, prevSigma) << "a lower target needs more noise";
    prevSigma = c.sigma;
    EXPECT_EQ(c.sample, 4000u);
  }
  // Out of reach: above what no noise gives -> sigma 0.
  EXPECT_EQ(calibrateSigma(lengths, eps, 0.999, 0.1, 10).sigma, 0.0);
}

SelfSchedConfig config(RankMode mode, int batch, double timeoutS) {
  SelfSchedConfig c;
  c.mode = mode;
  c.batchSize = batch;
  c.batchTimeoutS = timeoutS;
  c.targetTau = 0.55;
  return c;
}

// A tiny cluster (policy_harness.h) under the self-scheduling policy.
struct SelfRig {
  SelfRig(const SelfSchedConfig& cfg, std::vector<RequestSpec> reqs, const InstanceConfig& ic = tinyInstance(1000, 4),
          std::vector<double> sample = {}) {
    auto g = std::make_unique<SelfSchedGlobal>(cfg, std::move(sample));
    global = g.get();
    SimConfig c = tinySim(ic, 1);
    const StarvationConfig st = cfg.starvation;
    const bool preempt = cfg.preemptForPriority;
    sim = std::make_unique<Simulator>(c, tinyCost(), std::make_unique<ListWorkload>(std::move(reqs)), std::move(g),
                                      [st, preempt](int) { return std::make_unique<SelfSchedLocal>(st, preempt); });
    sim->addObserver(&rec);
  }
  SelfSchedLocal& local() { return dynamic_cast<SelfSchedLocal&>(sim->instance(0).policy()); }
  void run() { sim->run(); }
  Recorder rec;
  SelfSchedGlobal* global = nullptr;
  std::unique_ptr<Simulator> sim;
};

TEST(SelfSchedBatch, ClosesWhenItHoldsBRequests) {
  SelfRig rig(config(RankMode::RankOnly, 3, 1.0), {req(0, 4, 3), req(0.1, 4, 3), req(0.2, 4, 3), req(0.3, 4, 3)});
  rig.sim->run(ms(0.15));
  EXPECT_EQ(rig.global->batches(), 0);
  EXPECT_EQ(rig.global->openBatch(), 2u);
  rig.sim->run(ms(0.2));  // the third arrival closes it, at once
  EXPECT_EQ(rig.global->batches(), 1);
  EXPECT_EQ(rig.global->closedBySize(), 1);
  EXPECT_EQ(rig.global->openBatch(), 0u);
  EXPECT_EQ(rig.sim->syntheticCost().injected, 1);
  rig.sim->run();
  // The fourth request finished (unranked, behind the ranked ones) before
  // its batch's timeout, 1 s after it arrived: the run ends without it.
  EXPECT_EQ(rig.global->batches(), 1);
  EXPECT_EQ(rig.global->openBatch(), 1u);
  EXPECT_EQ(rig.sim->finishedCount(), 4);
}

TEST(SelfSchedBatch, ClosesWhenItsOldestWaitedT) {
  SelfRig rig(config(RankMode::RankOnly, 10, 0.005), {req(1, 4, 3), req(2, 4, 3), req(7, 4, 3)});
  rig.sim->run(ms(5.99));
  EXPECT_EQ(rig.global->batches(), 0);
  EXPECT_EQ(rig.global->openBatch(), 2u);
  rig.sim->run(ms(6.0));  // 1 ms + T = 6 ms: closed with the first two
  EXPECT_EQ(rig.global->batches(), 1);
  EXPECT_EQ(rig.global->closedByTimeout(), 1);
  EXPECT_EQ(rig.global->openBatch(), 0u);
  rig.sim->run(ms(11.99));  // the third opened a new batch at 7 ms
  EXPECT_EQ(rig.global->batches(), 1);
  rig.sim->run(ms(12.0));
  EXPECT_EQ(rig.global->batches(), 2);
}

TEST(SelfSchedRankPrompt, DoesRealWorkButIsNoUserTraffic) {
  for (RankMode mode : {RankMode::PrefillOnly, RankMode::RankOnly, RankMode::LengthOnly}) {
    SCOPED_TRACE(rankModeName(mode));
    SelfRig rig(config(mode, 2, 1.0), {req(0, 5, 3), req(0, 7, 3)});
    rig.run();
    const auto& sc = rig.sim->syntheticCost();
    EXPECT_EQ(sc.injected, 1);
    EXPECT_EQ(sc.completed, 1);
    EXPECT_EQ(sc.promptTokens, 5 + 7 + 150);  // the batch's prompts + the template
    EXPECT_EQ(sc.outputTokens, rankPromptOutput(mode));
    EXPECT_GT(sc.gpuSeconds, 0.0);
    // Only the two user requests have records, events and tokens.
    EXPECT_EQ(rig.sim->records().size(), 2u);
    for (const Ev& e : rig.rec.events) EXPECT_GE(e.id, 0);
    EXPECT_EQ(rig.sim->finishedCount(), 2);
    // The prompt ran: some iteration prefilled 162 tokens that no user owns.
    std::int64_t prefilled = 0;
    for (const Iter& it : rig.rec.iters)
      for (const Entry& e : it.batch)
        if (e.prefill) prefilled += e.tokens;
    EXPECT_EQ(prefilled, 5 + 7 + 162);
  }
}

TEST(SelfSchedRankPrompt, RanksApplyWhenThePromptFinishes) {
  // LengthOnly, B = 2: the prompt (162 prompt tokens, 40 output) must finish
  // before the two requests (200 output tokens) get their predicted lengths.
  SelfRig rig(config(RankMode::LengthOnly, 2, 1.0), {req(0, 5, 200), req(0, 7, 200)}, tinyInstance(1000, 4),
              lognormalLengths(400, 1));
  SimTime doneAt = -1;
  while (rig.sim->step()) {
    if (rig.global->ranked() == 0) {
      EXPECT_EQ(rig.sim->syntheticCost().completed, 0);
    } else if (doneAt < 0) {
      doneAt = rig.sim->now();
      EXPECT_EQ(rig.sim->syntheticCost().completed, 1);
      EXPECT_EQ(rig.global->ranked(), 2);
    }
  }
  EXPECT_GT(doneAt, 0);
  for (std::int64_t id : {0, 1}) {
    std::optional<RequestRecord> rec;
    for (const RequestRecord& r : rig.sim->records())
      if (r.id == id) rec = r;
    ASSERT_TRUE(rec);
    EXPECT_GT(rec->predicted, 0);  // the prediction it was ranked by
  }
}

// What the GUI draws (snapshot chips, card fields): the rank prompt is a
// synthetic chip while it runs; afterwards each request's chip carries its
// rank in the batch and its predicted length; the card counts rank prompts.
TEST(SelfSchedSnapshot, ChipsShowTheRankPromptThenRanksAndPredictions) {
  SelfRig rig(config(RankMode::RankOnly, 2, 1.0), {req(0, 5, 200), req(0, 7, 200)}, tinyInstance(1000, 4),
              lognormalLengths(400, 1));
  Snapshot snap;
  bool sawPrompt = false, sawRanks = false;
  while (rig.sim->step()) {
    rig.sim->fillSnapshot(snap);
    ASSERT_EQ(snap.instances.size(), 1u);
    int synthetic = 0;
    std::vector<int> ranks;
    for (const QueueSnapshot& q : snap.instances[0].queues)
      for (const RequestChip& c : q.requests) {
        if (c.synthetic) {
          ++synthetic;
          EXPECT_LT(c.id, 0);
          EXPECT_EQ(c.rank, -1);
        } else if (c.rank >= 0) {
          ranks.push_back(c.rank);
          EXPECT_GT(c.predicted, 0);
        } else {
          EXPECT_EQ(c.predicted, -1);  // unranked: nothing to show yet
        }
      }
    if (rig.sim->syntheticCost().injected == 1 && rig.sim->syntheticCost().completed == 0) {
      EXPECT_EQ(synthetic, 1);
      EXPECT_TRUE(ranks.empty());
      sawPrompt = true;
    }
    if (rig.global->ranked() == 2 && ranks.size() == 2) {
      std::sort(ranks.begin(), ranks.end());
      EXPECT_EQ(ranks, (std::vector<int>{0, 1}));  // ranks 0 and 1 of the batch of two
      sawRanks = true;
    }
    const auto& fields = snap.instances[0].policyFields;
    ASSERT_EQ(fields.size(), 2u);
    EXPECT_EQ(fields[0].label, "rank prompts");
    EXPECT_EQ(fields[0].value, static_cast<double>(rig.global->batches()));
    EXPECT_FALSE(fields[0].callout.empty());
    EXPECT_EQ(fields[1].label, "promoted");
    EXPECT_EQ(fields[1].value, static_cast<double>(rig.local().promotions()));
  }
  EXPECT_TRUE(sawPrompt);
  EXPECT_TRUE(sawRanks);
}

// target_tau is live: a change re-calibrates σ on the start-up's sample and ε.
TEST(SelfSchedNoise, TargetTauIsLiveAndRecalibrates) {
  SelfRig rig(config(RankMode::LengthOnly, 10, 1.0), {req(0, 5, 20)}, tinyInstance(1000, 4),
              lognormalLengths(2000, 3));
  const NoiseCalibration before = rig.global->calibration();
  EXPECT_NEAR(before.tau, 0.55, 0.01);
  ASSERT_TRUE(rig.global->setKnob("target_tau", 0.8));
  const NoiseCalibration after = rig.global->calibration();
  EXPECT_NEAR(after.tau, 0.8, 0.01);
  EXPECT_LT(after.sigma, before.sigma);  // a better ranking needs less noise
  ASSERT_TRUE(rig.global->setKnob("target_tau", 0.55));
  EXPECT_DOUBLE_EQ(rig.global->calibration().sigma, before.sigma);  // the same ε: the same σ back
}

Request make(std::int64_t id, SimTime arrival, std::int64_t key, int promoted = 0, bool synthetic = false) {
  Request r;
  r.id = id;
  r.arrival = arrival;
  r.policyKey = key;
  r.queue = promoted;
  r.synthetic = synthetic;
  return r;
}

TEST(SelfSchedLocal, PriorityOrderAndTheUnrankedRule) {
  const Request prompt = make(-1, 50, kUnranked, 0, true);
  const Request promotedLate = make(7, 40, kUnranked, 5);
  const Request rank0 = make(3, 30, 0), rank0early = make(2, 10, 0), rank4 = make(1, 0, 4);
  const Request unranked = make(0, 0, kUnranked);
  std::vector<const Request*> v = {&unranked, &rank4, &rank0, &promotedLate, &prompt, &rank0early};
  std::sort(v.begin(), v.end(), SelfSchedLocal::byPriority);
  std::vector<std::int64_t> ids;
  for (const Request* r : v) ids.push_back(r->id);
  // Rank prompt, promoted, then by rank (ties by arrival), unranked last
  // although it arrived first.
  EXPECT_EQ(ids, (std::vector<std::int64_t>{-1, 7, 2, 3, 1, 0}));
}

// Algorithm 1's promotion rule, by hand (preemption off: max_num_seqs 1 and
// request 0, first to arrive, runs its 50 tokens; 1-3 wait in R). Each
// iteration left out of S adds one starvation step; at threshold 4 the start
// of the next iteration promotes at most 2 (the most starved, then by
// priority); a promoted request that does not run keeps its quantum, so
// nobody is promoted twice while request 0 runs.
std::vector<const Request*> queued(SelfSchedLocal& l) {
  std::vector<QueueView> views;
  l.describe(views);
  std::vector<const Request*> out;
  for (const QueueView& v : views)
    for (const Request* r : v.requests) out.push_back(r);
  return out;
}
const Request* findReq(SelfSchedLocal& l, std::int64_t id) {
  for (const Request* r : queued(l))
    if (r->id == id) return r;
  return nullptr;
}

TEST(SelfSchedLocal, PromotionAtTheThresholdCappedPerRoundAndCountedOnlyWhileRunning) {
  InstanceConfig ic = tinyInstance(1000, 4);
  ic.maxNumSeqs = 1;
  SelfSchedConfig cfg = config(RankMode::Oracle, 10, 1.0);
  cfg.starvation = StarvationConfig{true, 4, 3, 2};
  cfg.preemptForPriority = false;
  SelfRig rig(cfg, {req(0, 4, 50), req(0.5, 4, 6), req(0.5, 4, 6), req(0.5, 4, 6)}, ic);
  auto runIters = [&](std::size_t n) {
    while (rig.rec.iters.size() < n && rig.sim->step()) {
    }
  };
  // Iteration 1 (from 0 ms) runs request 0 alone; 1-3 arrive during it.
  // Each iteration's schedule() promotes, picks S and counts starvation; an
  // iteration's end starts the next one in the same event, so after n
  // iterations have ended the (n+1)-th has been scheduled. Left out of
  // iterations 2-5: starvation 4, nobody promoted yet (promotion comes first
  // in an iteration, before that iteration's count).
  runIters(4);
  EXPECT_EQ(rig.local().promotions(), 0);
  for (std::int64_t id : {1, 2, 3}) {
    ASSERT_NE(findReq(rig.local(), id), nullptr);
    EXPECT_EQ(rig.local().starvation(*findReq(rig.local(), id)), 4) << id;
  }
  runIters(5);  // iteration 6 promotes 1 and 2 (the cap); 3 waits a round
  EXPECT_EQ(rig.local().promotions(), 2);
  EXPECT_EQ(findReq(rig.local(), 1)->queue, 3);
  EXPECT_EQ(findReq(rig.local(), 2)->queue, 3);
  EXPECT_EQ(findReq(rig.local(), 3)->queue, 0);
  EXPECT_EQ(rig.local().starvation(*findReq(rig.local(), 1)), 5) << "a promotion does not reset starvation";
  runIters(6);
  EXPECT_EQ(rig.local().promotions(), 3);
  // Request 0 runs iterations 1-50; the quanta do not count down meanwhile
  // (the former every-iteration countdown re-promoted everyone).
  runIters(49);
  EXPECT_EQ(rig.local().promotions(), 3);
  for (std::int64_t id : {1, 2, 3}) EXPECT_EQ(findReq(rig.local(), id)->queue, 3) << id;
  // Then 1 runs (iterations 51-56): its quantum counts down while it runs
  // and is spent after 3; 2 and 3, still waiting, keep theirs.
  runIters(50);
  EXPECT_EQ(findReq(rig.local(), 1)->queue, 2);
  EXPECT_EQ(rig.local().starvation(*findReq(rig.local(), 1)), 0);
  runIters(52);
  EXPECT_EQ(findReq(rig.local(), 1)->queue, 0);
  EXPECT_EQ(findReq(rig.local(), 2)->queue, 3);
  rig.run();
  EXPECT_EQ(rig.sim->finishedCount(), 4);
  EXPECT_EQ(rig.local().promotions(), 3);

  // Switched off: nobody is promoted.
  cfg.starvation.enabled = false;
  SelfRig off(cfg, {req(0, 4, 50), req(0.5, 4, 6), req(0.5, 4, 6), req(0.5, 4, 6)}, ic);
  off.run();
  EXPECT_EQ(off.local().promotions(), 0);
}

// Anti-starvation acting (Fig. 8's mechanism): with priority preemption and
// one sequence at a time, a stream of short requests (1 every 2 ms for
// 400 ms) keeps outranking a long one (200 tokens) arriving first. Without
// anti-starvation the long request never runs while the stream lasts; with it
// the long request is promoted after 4 iterations left out and runs (its
// first token at 6.5 ms instead of 501.5 ms; 3 tokens during the stream: the
// shorts promoted after it outrank it again, as Algorithm 1 sorts promoted
// requests by rank).
TEST(SelfSchedLocal, AntiStarvationLetsAStarvedLongRequestRun) {
  InstanceConfig ic = tinyInstance(100000, 16);
  ic.maxNumSeqs = 1;
  ic.chunkedPrefill = false;
  std::vector<RequestSpec> reqs = {req(0.1, 4, 200)};
  for (int k = 0; k < 200; ++k) reqs.push_back(req(2.0 * k, 4, 2));
  const SimTime lastArrival = ms(2.0 * 199);
  for (bool on : {false, true}) {
    SCOPED_TRACE(on ? "anti-starvation on" : "off");
    SelfSchedConfig cfg = config(RankMode::Oracle, 10, 1.0);
    cfg.starvation.enabled = on;
    SelfRig rig(cfg, reqs, ic);
    rig.run();
    ASSERT_EQ(rig.sim->finishedCount(), 201);
    const std::vector<SimTime>& longTokens = rig.rec.tokens.at(0);
    std::int64_t before = 0;
    for (SimTime t : longTokens)
      if (t <= lastArrival) ++before;
    if (on) {
      EXPECT_GT(rig.local().promotions(), 0);
      EXPECT_LT(longTokens.front(), lastArrival);
      EXPECT_GE(before, 1) << "the long request makes progress during the stream";
    } else {
      EXPECT_EQ(rig.local().promotions(), 0);
      EXPECT_EQ(before, 0) << "the long request never runs while short ones keep coming";
    }
  }
}

// Priority preemption (30-schedulers.md "priority"; vLLM's priority policy).
// oracle-sjf (priority = true output length), 16 GPU blocks of 4 tokens, no
// chunked prefill. A (24-token prompt, 6 answer tokens) and B (16, 12) are
// admitted at 0 (10 blocks); C (28-token prompt: 7 blocks, 1 answer token)
// arrives at 2 ms, outranks both and cannot be admitted (6 blocks free).
struct PreemptCase {
  std::vector<RequestSpec> reqs() const { return {req(0, 24, 6), req(0, 16, 12), req(2, 28, 1)}; }
  InstanceConfig instance(bool swap) const {
    InstanceConfig ic = tinyInstance(16, 4);
    ic.chunkedPrefill = false;
    ic.swapPreemption = swap;
    return ic;
  }
};
std::vector<std::pair<std::int64_t, ReqState>> preemptions(const Recorder& rec) {
  std::vector<std::pair<std::int64_t, ReqState>> out;
  for (const Ev& e : rec.events)
    if (e.kind == RequestEvent::Preempted) out.emplace_back(e.id, e.state);
  return out;
}
std::int64_t prefillEntries(const Recorder& rec, std::int64_t id, std::vector<std::int32_t>* tokens = nullptr) {
  std::int64_t n = 0;
  for (const Iter& it : rec.iters)
    for (const Entry& e : it.batch)
      if (e.id == id && e.prefill) {
        ++n;
        if (tokens) tokens->push_back(e.tokens);
      }
  return n;
}

TEST(SelfSchedLocal, PriorityPreemptionPicksTheLowestPriorityVictimSwap) {
  const PreemptCase pc;
  SelfSchedConfig cfg = config(RankMode::Oracle, 10, 1.0);
  cfg.preemptForPriority = true;  // the spec's priority rule (the policies' default is the paper's: off)
  SelfRig rig(cfg, pc.reqs(), pc.instance(true));
  rig.run();
  ASSERT_EQ(rig.sim->finishedCount(), 3);
  // Exactly one preemption: B (priority 12, the lowest), swapped out; A
  // (priority 6) keeps running.
  EXPECT_EQ(preemptions(rig.rec), (std::vector<std::pair<std::int64_t, ReqState>>{{1, ReqState::Swapped}}));
  // Swap: B's KV comes back, its prompt is prefilled once.
  EXPECT_EQ(prefillEntries(rig.rec, 1), 1);
  // C runs before A finishes: its only token precedes A's last.
  EXPECT_LT(rig.rec.tokens.at(2).front(), rig.rec.tokens.at(0).back());
}

TEST(SelfSchedLocal, PriorityPreemptionRecomputesTheVictimWhenSwapIsOff) {
  const PreemptCase pc;
  SelfSchedConfig cfg = config(RankMode::Oracle, 10, 1.0);
  cfg.preemptForPriority = true;  // the spec's priority rule (the policies' default is the paper's: off)
  SelfRig rig(cfg, pc.reqs(), pc.instance(false));
  rig.run();
  ASSERT_EQ(rig.sim->finishedCount(), 3);
  EXPECT_EQ(preemptions(rig.rec), (std::vector<std::pair<std::int64_t, ReqState>>{{1, ReqState::Waiting}}));
  // Recompute: B's prefill runs again over its prompt and the tokens it had.
  std::vector<std::int32_t> tokens;
  EXPECT_EQ(prefillEntries(rig.rec, 1, &tokens), 2);
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0], 16);
  EXPECT_GT(tokens[1], 16);
  EXPECT_LT(rig.rec.tokens.at(2).front(), rig.rec.tokens.at(0).back());
}

TEST(SelfSchedLocal, PriorityPreemptionOffLetsTheHighPriorityRequestWait) {
  const PreemptCase pc;
  SelfSchedConfig cfg = config(RankMode::Oracle, 10, 1.0);
  cfg.preemptForPriority = false;
  SelfRig rig(cfg, pc.reqs(), pc.instance(true));
  rig.run();
  ASSERT_EQ(rig.sim->finishedCount(), 3);
  EXPECT_TRUE(preemptions(rig.rec).empty());
  // C waits until A has finished and freed its blocks.
  EXPECT_GT(rig.rec.tokens.at(2).front(), rig.rec.tokens.at(0).back());
  // A waiting request of *lower* priority never preempts: with D (answer 50)
  // arriving instead of C, the run is the same with the knob on and off
  // (anti-starvation off: a promoted D would outrank B and preempt it).
  const std::vector<RequestSpec> lowReqs = {req(0, 24, 6), req(0, 16, 12), req(2, 28, 50)};
  SelfSchedConfig lowCfg = config(RankMode::Oracle, 10, 1.0);
  lowCfg.starvation.enabled = false;
  SelfRig lowOn(lowCfg, lowReqs, pc.instance(true));
  lowCfg.preemptForPriority = false;
  SelfRig lowOff(lowCfg, lowReqs, pc.instance(true));
  lowOn.run();
  lowOff.run();
  EXPECT_EQ(lowOn.rec.events, lowOff.rec.events);
}

// Which running request a request short of a block preempts (knob
// victim_order; issue 46, Fig. 8). oracle-sjf (priority = true output
// length), anti-starvation off, recompute, no chunked prefill, 12 GPU blocks
// of 4 tokens: A (8-token prompt, 40 answer tokens: key 40) runs alone from
// 0, B (8, 30: key 30) is admitted after it; both grow until a decode needs a
// block and none is free. 0 (default) and 1 (vLLM's max(priority, arrival)):
// A, the lowest priority; 2 (vLLM's FCFS policy, running.pop()): B, the last
// admitted.
TEST(SelfSchedLocal, VictimOrderPicksTheLowestPriorityOrTheLastAdmitted) {
  InstanceConfig ic = tinyInstance(12, 4);
  ic.chunkedPrefill = false;
  ic.swapPreemption = false;
  for (int order : {0, 1, 2}) {
    SCOPED_TRACE(order);
    SelfSchedConfig cfg = config(RankMode::Oracle, 10, 1.0);
    cfg.starvation.enabled = false;
    SelfRig rig(cfg, {req(0, 8, 40), req(1, 8, 30)}, ic);
    ASSERT_TRUE(rig.local().setKnob("victim_order", order));
    rig.run();
    ASSERT_EQ(rig.sim->finishedCount(), 2);
    const auto pre = preemptions(rig.rec);
    ASSERT_FALSE(pre.empty());
    EXPECT_EQ(pre.front(), (std::pair<std::int64_t, ReqState>{order == 2 ? 1 : 0, ReqState::Waiting}));
  }
}

// A rank prompt's decode tokens ride along in prefill-only iterations (no
// chunked prefill) instead of waiting for a decode-only one: with a stream of
// arrivals keeping iterations prefill-only, the prompt finishes sooner.
TEST(SelfSchedRankPrompt, DecodesRideAlongPrefillOnlyIterations) {
  InstanceConfig ic = tinyInstance(100000, 16);
  ic.chunkedPrefill = false;
  std::vector<RequestSpec> reqs;
  for (int k = 0; k < 60; ++k) reqs.push_back(req(1.0 * k, 8, 30));
  SimTime doneOn = 0, doneOff = 0;
  for (bool rides : {true, false}) {
    SCOPED_TRACE(rides ? "rides along" : "waits");
    SelfSchedConfig cfg = config(RankMode::LengthOnly, 2, 1.0);
    cfg.rankPromptRidesAlong = rides;
    auto g = std::make_unique<SelfSchedGlobal>(cfg, lognormalLengths(400, 1));
    SimConfig c = tinySim(ic, 1);
    auto sim = std::make_unique<Simulator>(c, tinyCost(), std::make_unique<ListWorkload>(reqs), std::move(g),
                                           [cfg](int) {
                                             return std::make_unique<SelfSchedLocal>(cfg.starvation, true,
                                                                                     cfg.rankPromptRidesAlong);
                                           });
    Recorder rec;
    sim->addObserver(&rec);
    sim->run();
    ASSERT_EQ(sim->finishedCount(), 60);
    int mixed = 0;
    std::map<std::int64_t, std::pair<SimTime, SimTime>> span;  // rank prompt: first start, last end
    for (const Iter& it : rec.iters) {
      bool prefill = false, promptDecode = false;
      for (const Entry& e : it.batch) {
        if (e.prefill) prefill = true;
        if (e.id < 0) {
          auto [at, fresh] = span.try_emplace(e.id, it.start, it.end);
          at->second.second = it.end;
          if (!e.prefill) promptDecode = true;
        }
      }
      if (prefill && promptDecode) ++mixed;
    }
    SimTime lastPromptToken = 0;  // total time the rank prompts took, prefill to last token
    for (const auto& [id, se] : span) lastPromptToken += se.second - se.first;
    if (rides) {
      EXPECT_GT(mixed, 0);
      doneOn = lastPromptToken;
    } else {
      EXPECT_EQ(mixed, 0);
      doneOff = lastPromptToken;
    }
  }
  EXPECT_LT(doneOn, doneOff);
}

// neutral_rank: an arriving request gets the middle rank ((B-1)/2 for the
// rank modes, the sample's median output length for length-only) instead
// of waiting behind every ranked request.
TEST(SelfSchedLocal, NeutralRankOnArrival) {
  for (bool neutral : {false, true})
    for (RankMode mode : {RankMode::RankOnly, RankMode::LengthOnly}) {
      SCOPED_TRACE(std::string(rankModeName(mode)) + (neutral ? " neutral" : " last"));
      SelfSchedConfig cfg = config(mode, 10, 1.0);
      cfg.neutralRank = neutral;
      std::vector<double> sample = {10, 20, 30, 40, 50};
      SelfRig rig(cfg, {req(0, 4, 200), req(0.5, 4, 5)}, tinyInstance(1000, 4), sample);
      rig.sim->run(ms(0.6));
      const Request* r = findReq(rig.local(), 1);
      ASSERT_NE(r, nullptr);
      const std::int64_t want = !neutral ? kUnranked : mode == RankMode::RankOnly ? 4 : 30;
      EXPECT_EQ(r->policyKey, want);
    }
}

Scenario mathScenario(const std::string& policy, std::uint64_t seed, double rate) {
  Scenario s;
  s.cluster.instances = 1;
  s.cluster.gpu = "a100-40g";
  s.cluster.chunked_prefill = false;
  s.cluster.preemption = "swap";
  s.model = "qwen3-14b";
  s.workload.preset = "selfsched-math";
  s.workload.arrival.rate = rate;
  s.workload.requests = 400;
  s.policy.id = policy;
  s.run.seed = seed;
  return s;
}

nlohmann::ordered_json runSummary(const Scenario& s) {
  auto run = prepareRun(s, "test");
  return executeRun(*run, RunOptions{}).summaryJson;
}

TEST(SelfSchedRun, AchievedTauIsNearTheTargetOverSeeds) {
  // B = 10 with a long T, so that batches are full as in the calibration.
  for (const auto& [id, target] : {std::pair{"selfsched-prefill-only", 0.25}, std::pair{"selfsched-rank-only", 0.40},
                                   std::pair{"selfsched-length-only", 0.55}}) {
    double sum = 0;
    for (std::uint64_t seed : {1, 2, 3, 4}) {
      Scenario s = mathScenario(id, seed, 4.0);
      s.policy.knobs = {{"batch_timeout_s", 60.0}};
      const auto j = runSummary(s);
      sum += j["policy_report"]["tau_b"]["achieved_mean_per_batch"].get<double>();
      EXPECT_NEAR(j["policy_report"]["noise"]["calibration_tau_b"].get<double>(), target, 0.01);
    }
    EXPECT_NEAR(sum / 4, target, 0.06) << id;  // 4 seeds × 40 batches of 10
  }
}

TEST(SelfSchedRun, OracleSjfBoundsEveryMode) {
  const auto oracle = runSummary(mathScenario("oracle-sjf", 1, 1.0));
  const double bound = oracle["ttft_s"]["p50"].get<double>();
  for (const char* id : {"selfsched-prefill-only", "selfsched-rank-only", "selfsched-length-only", "fcfs"}) {
    const auto j = runSummary(mathScenario(id, 1, 1.0));
    EXPECT_LE(bound, j["ttft_s"]["p50"].get<double>()) << id;
    EXPECT_EQ(j["requests"]["finished"], oracle["requests"]["finished"]) << id;
  }
}

TEST(SelfSchedRun, SameSeedSameRun) {
  const auto a = runSummary(mathScenario("selfsched-rank-only", 5, 2.0));
  const auto b = runSummary(mathScenario("selfsched-rank-only", 5, 2.0));
  EXPECT_EQ(a["fingerprint"], b["fingerprint"]);
  EXPECT_EQ(a["policy_report"].dump(), b["policy_report"].dump());
}

// The experiments (quick): shapes, and what the model must give whatever
// the paper says — FCFS's arrival order ranks nothing, the calibrated modes
// rank in the order of their targets on the full run (asserted in
// selfsched-fig5-tau at full size: mean of 4 seeds within 0.06 of the
// targets), length-only beats FCFS's tail TTFT on math where the queue
// builds up.
double cellOf(const exp::Table& t, std::size_t row, const std::string& col) {
  return std::stod(t.rows.at(row).at(static_cast<std::size_t>(t.column(col))));
}

TEST(SelfSchedExperiments, Fig5TauFollowsTheTargetsAndFcfsRanksNothing) {
  const exp::Experiment* e = exp::findExperiment("selfsched-fig5-tau");
  ASSERT_TRUE(e);
  const exp::ExperimentResult r = e->run(exp::ExperimentOptions{});
  ASSERT_EQ(r.table.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(r.table.rows[i][0]);
    EXPECT_LT(std::abs(cellOf(r.table, i, "fcfs")), 0.1);
    EXPECT_NEAR(cellOf(r.table, i, "prefill-only"), 0.25, 0.06);
    EXPECT_NEAR(cellOf(r.table, i, "rank-only"), 0.40, 0.06);
    EXPECT_NEAR(cellOf(r.table, i, "length-only"), 0.55, 0.06);
  }
  ASSERT_EQ(r.charts.size(), 1u);
}

TEST(SelfSchedExperiments, Fig6ShapesAndFig8Promotes) {
  // Fig. 6 at the paper's setting (quick): shapes; the full run's direction
  // is asserted in tests/experiments/test_paper_direction.cpp.
  exp::ExperimentOptions quick;
  quick.quick = true;
  const exp::ExperimentResult f6 = exp::findExperiment("selfsched-fig6-p95")->run(quick);
  ASSERT_EQ(f6.table.rows.size(), 3u * 3u * 4u);  // domains × rates × (fcfs + 3 modes)
  for (std::size_t i = 0; i < f6.table.rows.size(); ++i) {
    if (f6.table.rows[i][2] == "fcfs") {
      EXPECT_EQ(cellOf(f6.table, i, "ttft_p95_vs_fcfs"), 1.0);
    }
    EXPECT_GT(cellOf(f6.table, i, "tpot_p95_s"), 0.0);
  }
  // Fig. 8 at the paper's setting (seed 1): promotions happen only with
  // anti-starvation.
  exp::ExperimentOptions seed1;
  seed1.seed = 1;
  const exp::ExperimentResult f8 = exp::findExperiment("selfsched-fig8-starvation")->run(seed1);
  ASSERT_EQ(f8.table.rows.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    if (f8.table.rows[i][2] == "on") {
      EXPECT_GT(cellOf(f8.table, i, "promotions"), 0.0);
    } else {
      EXPECT_EQ(cellOf(f8.table, i, "promotions"), 0.0);
    }
  }
}

// Table 2 (quick: one seed): two rank prompts for 20 requests; the full run's
// direction is asserted in tests/experiments/test_paper_direction.cpp.
TEST(SelfSchedExperiments, Table2TwoRankPromptsForTwentyRequests) {
  exp::ExperimentOptions quick;
  quick.quick = true;
  const exp::ExperimentResult t = exp::findExperiment("selfsched-table2-overhead")->run(quick);
  ASSERT_EQ(t.table.rows.size(), 2u);
  EXPECT_EQ(cellOf(t.table, 1, "rank_prompts"), 2.0);
  EXPECT_GT(cellOf(t.table, 1, "rank_prompt_gpu_s"), 0.0);
}

// Table 1 (quick: 600 requests, a 2-minute window, the first 100): shapes;
// the full run's directions are in test_paper_direction.cpp.
TEST(SelfSchedExperiments, Table1QuickShapes) {
  exp::ExperimentOptions quick;
  quick.quick = true;
  const exp::ExperimentResult t = exp::findExperiment("selfsched-table1-throughput")->run(quick);
  ASSERT_EQ(t.table.rows.size(), 3u);
  ASSERT_EQ(t.charts.size(), 2u);
  // Nothing finishes before it could: at most the requests sent.
  for (std::size_t i = 0; i < 3; ++i) EXPECT_LE(cellOf(t.table, i, "length_only_done_2min"), 600.0);
}

// Table 3 (quick: thinking mode, 200 requests, a 5-minute window, the first
// 20): length-only finishes more math and code requests (1.34x, 3.0x).
TEST(SelfSchedExperiments, Table3ThinkingModeLengthOnlyAhead) {
  exp::ExperimentOptions quick;
  quick.quick = true;
  const exp::ExperimentResult t = exp::findExperiment("selfsched-table3-thinking")->run(quick);
  ASSERT_EQ(t.table.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_LE(cellOf(t.table, i, "length_only_done_5min"), 200.0);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(t.table.rows[i][0]);
    EXPECT_GT(cellOf(t.table, i, "speedup_done"), 1.2);
  }
  // Thinking answers are far longer: FCFS finishes fewer math requests in
  // 5 minutes than Table 1's quick run does in 2 without thinking.
  const exp::ExperimentResult t1 = exp::findExperiment("selfsched-table1-throughput")->run(quick);
  EXPECT_LT(cellOf(t.table, 0, "fcfs_done_5min"), cellOf(t1.table, 0, "fcfs_done_2min"));
}

}  // namespace
}  // namespace sl::test
