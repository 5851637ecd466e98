// pascal-local (30-schedulers.md "pascal-local", PASCAL §IV-C): two RR queues,
// reasoning before answering, the </think> move, demotion, and which request
// memory pressure preempts.
#include <gtest/gtest.h>

#include "../common/pascal_rig.h"
#include "policy/baselines/local_rr.h"

namespace sl::pascaltest {
namespace {

using test::D;
using test::Entry;
using test::P;

TEST(PascalLocal, EnqueueSortsByPhase) {
  PascalLocal L(PascalLocalConfig{});
  Request fresh;  // new arrival: prefill counts as reasoning
  fresh.id = 1;
  fresh.reasoning = 10;
  Request migrated;  // arrives Running in the answering phase
  migrated.id = 2;
  migrated.reasoning = 3;
  migrated.generated = 3;
  migrated.kvTokens = 40;
  migrated.state = ReqState::Running;
  Request plain;  // R = 0: its prefill is "reasoning" too
  plain.id = 3;
  L.enqueue(fresh);
  L.enqueue(migrated);
  L.enqueue(plain);
  ASSERT_EQ(L.highQueue().size(), 2u);
  EXPECT_EQ(L.highQueue()[0], &fresh);
  EXPECT_EQ(L.highQueue()[1], &plain);
  ASSERT_EQ(L.lowQueue().size(), 1u);
  EXPECT_EQ(L.lowQueue()[0], &migrated);
  EXPECT_EQ(L.reasoningCount(), 2);
  EXPECT_EQ(L.freshAnsweringCount(), 1);
  EXPECT_EQ(L.freshAnsweringCount(&migrated), 0);
  std::vector<QueueView> views;
  L.describe(views);
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].name, "reasoning");
  EXPECT_EQ(views[1].name, "answering");
  EXPECT_EQ(views[1].requests, (std::vector<const Request*>{&migrated}));
  L.remove(fresh);
  L.remove(migrated);
  EXPECT_EQ(L.size(), 1u);
  EXPECT_EQ(L.lowQueue().size(), 0u);

  // The </think> token moves a request to the tail of the low queue, fresh.
  Request r;
  r.id = 4;
  r.reasoning = 2;
  r.generated = 1;
  r.kvTokens = 10;
  r.quantumUsed = 7;
  L.enqueue(r);
  L.onToken(r);  // still reasoning (1 < 2)
  EXPECT_EQ(r.queue, PascalLocal::kHigh);
  r.generated = 2;
  L.onToken(r);
  EXPECT_EQ(r.queue, PascalLocal::kLow);
  EXPECT_EQ(r.quantumUsed, 0);
  EXPECT_TRUE(L.inFirstAnsweringQuantum(r));
  EXPECT_EQ(L.demotions(), 0);
}

// Reasoning requests run before answering ones whatever their arrival order;
// the request moves queues at the end of the iteration that produced its R-th
// token.
TEST(PascalLocal, ReasoningQueueFirstAndTheThinkBoundaryMovesToAnswering) {
  // A (id 0): prompt 4, R = 0, 10 answer tokens. B (id 1): prompt 4, R = 5, 3 answer tokens.
  PascalRig rig(test::tinyInstance(1000, 16), {rq(0, 4, 0, 10), rq(0.5, 4, 5, 3)});
  std::vector<std::pair<double, std::vector<std::pair<std::string, std::vector<std::int64_t>>>>> seen;
  for (double t : {0.2, 3.0, 7.6, 7.8})
    rig.sim->sendMessage(ms(t), [&, t] { seen.emplace_back(t, test::queues(*rig.sim)); });
  rig.run();
  using Q = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].second, (Q{{"reasoning", {0}}, {"answering", {}}}));     // A prefilling
  EXPECT_EQ(seen[1].second, (Q{{"reasoning", {1}}, {"answering", {0}}}));    // A answering, B reasoning
  EXPECT_EQ(seen[2].second, (Q{{"reasoning", {1}}, {"answering", {0}}}));    // B's 4th token is not </think>
  EXPECT_EQ(seen[3].second, (Q{{"reasoning", {}}, {"answering", {0, 1}}}));  // B's 5th token (7.7 ms) is
  // Iterations: [P(A)] 0-1.4; [D(A), P(B)] 1.4-2.9 (decodes first, then
  // prefill chunks); then B (reasoning) before A (answering) until 7.7 ms,
  // then A before B (low queue order: A, then B at the tail).
  const auto& it = rig.rec.iters;
  ASSERT_GE(it.size(), 8u);
  EXPECT_EQ(it[0].batch, (std::vector<Entry>{P(0, 4)}));
  EXPECT_EQ(it[1].batch, (std::vector<Entry>{D(0), P(1, 4)}));
  EXPECT_EQ(it[1].end, ms(2.9));
  for (int i = 2; i <= 5; ++i) EXPECT_EQ(it[static_cast<std::size_t>(i)].batch, (std::vector<Entry>{D(1), D(0)})) << i;
  EXPECT_EQ(it[5].end, ms(7.7));
  EXPECT_EQ(it[6].batch, (std::vector<Entry>{D(0), D(1)}));
  EXPECT_EQ(rig.record(1).reasoning_end, ms(7.7));
  // One instance: Algorithm 2 can only keep it where it is.
  const auto b = rig.decisions(1, true);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].action, PascalAction::StayedSame);
  EXPECT_EQ(rig.sim->migrations(), 0);
}

// Demotion: a reasoning request whose KV exceeds demote_tokens moves to the
// low queue at the end of the iteration that took it past the threshold, not
// one token earlier.
class Demotion : public ::testing::TestWithParam<int> {};

TEST_P(Demotion, TriggersWhenKvExceedsThresholdByOneToken) {
  const int threshold = GetParam();
  PascalLocalConfig lc;
  lc.demoteTokens = threshold;
  // Prompt 10, R = 100: after its k-th token the request holds 10 + k − 1 KV tokens.
  PascalRig rig(test::tinyInstance(1000, 16), {rq(0, 10, 100, 1)}, 1, {}, lc);
  struct Seen {
    std::int32_t kv;
    std::int32_t queue;
  };
  std::vector<Seen> seen;
  struct Obs : SimObserver {
    std::vector<Seen>* out;
    void onIteration(const Instance& in, SimTime, SimTime) override {
      for (const BatchEntry& e : in.batch()) out->push_back(Seen{e.r->kvTokens, e.r->queue});
    }
  } obs;
  obs.out = &seen;
  rig.sim->addObserver(&obs);
  rig.run();
  ASSERT_GT(seen.size(), static_cast<std::size_t>(threshold - 10 + 3));
  for (const Seen& s : seen) {
    if (s.kv > 10 + 100 - 1) break;  // answering: left the high queue at </think> anyway
    EXPECT_EQ(s.queue, s.kv > threshold ? PascalLocal::kLow : PascalLocal::kHigh) << "kv " << s.kv;
  }
  EXPECT_EQ(rig.local(0).demotions(), 1);
  // It reached </think> already demoted: no phase move counted twice.
  EXPECT_EQ(rig.record(0).generated, 101);
}

INSTANTIATE_TEST_SUITE_P(Pascal, Demotion, ::testing::Values(15, 16, 40));

TEST(PascalLocal, NoDemotionAtExactlyTheThreshold) {
  // Prompt 10, R = 5: while still reasoning (tokens 1-4) its KV reaches 13
  // tokens; the 5th token (14 KV tokens) is </think>, a phase move, not a demotion.
  PascalLocalConfig lc;
  lc.demoteTokens = 13;
  PascalRig rig(test::tinyInstance(1000, 16), {rq(0, 10, 5, 3)}, 1, {}, lc);
  rig.run();
  EXPECT_EQ(rig.local(0).demotions(), 0);
  lc.demoteTokens = 12;
  PascalRig rig2(test::tinyInstance(1000, 16), {rq(0, 10, 5, 3)}, 1, {}, lc);
  rig2.run();
  EXPECT_EQ(rig2.local(0).demotions(), 1);
}

// Memory pressure: the answering request is the victim, even though it
// arrived first (plain RR would preempt the later, reasoning one).
TEST(PascalLocal, ReasoningPreemptsAnsweringUnderMemoryPressure) {
  // 24 blocks of 2 tokens. A (id 0): prompt 4, R = 0, 30 answer tokens.
  // B (id 1, at 0.5 ms): prompt 4, R = 30, 2 answer tokens. Together they
  // outgrow 48 tokens; each alone fits.
  const std::vector<RequestSpec> reqs = {rq(0, 4, 0, 30), rq(0.5, 4, 30, 2)};
  PascalRig rig(test::tinyInstance(24, 2), reqs);
  rig.run();
  EXPECT_EQ(rig.sim->finishedCount(), 2);
  const SimTime bThink = rig.record(1).reasoning_end;
  int whileReasoning = 0;
  for (const auto& [id, t] : rig.rec.of(RequestEvent::Preempted)) {
    if (t >= bThink) continue;  // from its </think> on B is answering too, behind A in the low queue
    EXPECT_EQ(id, 0) << "preempted at " << t;
    ++whileReasoning;
  }
  EXPECT_GE(whileReasoning, 1);
  // B's prefill and 30 reasoning tokens came from consecutive iterations.
  const auto& toks = rig.rec.tokens.at(1);
  ASSERT_EQ(toks.size(), 32u);
  std::vector<SimTime> ends;
  for (const auto& it : rig.rec.iters) ends.push_back(it.end);
  const auto first = std::find(ends.begin(), ends.end(), toks[0]) - ends.begin();
  for (std::size_t k = 0; k < 30; ++k)
    EXPECT_EQ(toks[k], ends[static_cast<std::size_t>(first) + k]) << "reasoning token " << k + 1;
  // Baseline: the same workload under plain RR preempts B, the tail of its queue.
  test::Rig rr(test::tinyInstance(24, 2), reqs, test::rr(500));
  rr.run();
  const auto rrPre = rr.rec.of(RequestEvent::Preempted);
  ASSERT_FALSE(rrPre.empty());
  EXPECT_EQ(rrPre.front().first, 1);
}

// a_i: a low-queue request counts as "fresh" until it exhausts its first
// answering quantum.
TEST(PascalLocal, FreshAnsweringUntilTheFirstQuantumIsUsed) {
  PascalLocalConfig lc;
  lc.answeringQuantum = 3;
  PascalRig rig(test::tinyInstance(1000, 16), {rq(0, 4, 0, 10)}, 1, {}, lc);
  // Tokens at 1.4 (prefill), 2.5, 3.6, 4.7 ms ...: after the first token it
  // is answering with quantumUsed 0 (reset on the move), 3 used at 4.7 ms.
  std::vector<std::int64_t> fresh;
  for (double t : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0})
    rig.sim->sendMessage(ms(t), [&] { fresh.push_back(rig.local(0).freshAnsweringCount()); });
  rig.run();
  EXPECT_EQ(fresh, (std::vector<std::int64_t>{0, 1, 1, 1, 0, 0}));
}

// Answering quanta (mutant pascal-quantum-rotate): with one sequence per
// iteration, two answering requests take turns of exactly answering_quantum
// tokens; a request that used its quantum up rotates behind the other.
TEST(PascalLocal, AnsweringRequestsTakeTurnsOfExactlyOneQuantum) {
  PascalLocalConfig lc;
  lc.answeringQuantum = 3;
  InstanceConfig ic = test::tinyInstance(1000, 16);
  ic.maxNumSeqs = 1;
  PascalRig rig(ic, {rq(0, 4, 0, 10), rq(0, 4, 0, 10)}, 1, {}, lc);
  rig.run();
  ASSERT_EQ(rig.sim->finishedCount(), 2);
  // Each request's decode iterations, as runs of consecutive iterations.
  std::vector<std::pair<std::int64_t, int>> runs;
  for (const auto& it : rig.rec.iters) {
    ASSERT_EQ(it.batch.size(), 1u);
    if (it.batch[0].prefill) continue;
    const std::int64_t id = it.batch[0].id;
    if (runs.empty() || runs.back().first != id) runs.emplace_back(id, 0);
    ++runs.back().second;
  }
  // 9 decode tokens each after the prefill's first: 3 + 3 + 3 in turns.
  EXPECT_EQ(runs, (std::vector<std::pair<std::int64_t, int>>{{0, 3}, {1, 3}, {0, 3}, {1, 3}, {0, 3}, {1, 3}}));
}

}  // namespace
}  // namespace sl::pascaltest

namespace sl::test {
namespace {

// The low queue is ordered by quanta used (local_rr.h): an answering request
// that has used up a quantum goes behind one that arrives at `</think>` later,
// and only the latter counts in a_i. With priority_by_quanta = 0 the new one
// joins the tail instead.
TEST(PascalLocalQueues, FreshAnsweringRequestGoesAheadOfOlderOnes) {
  for (const bool byQuanta : {true, false}) {
    PascalLocalConfig cfg;
    cfg.answeringQuantum = 3;
    cfg.byQuanta = byQuanta;
    PascalLocal L(cfg);
    Request old, late;
    old.id = 1;
    late.id = 2;
    for (Request* r : {&old, &late}) {
      r->reasoning = 1;
      r->generated = 1;  // answering
      r->kvTokens = 10;
    }
    L.enqueue(old);
    EXPECT_EQ(L.freshAnsweringCount(), 1);
    old.quantumUsed = 3;  // its first answering quantum is used up ...
    std::vector<Request*> scratch;
    // ... and a rotation starts its second one (the rotation the policy runs
    // at its next schedule(), applied here to a copy of the queue).
    std::deque<Request*> low(L.lowQueue().begin(), L.lowQueue().end());
    rotateExhausted(low, cfg.answeringQuantum, byQuanta, scratch);
    EXPECT_EQ(old.policyKey, 1);
    EXPECT_FALSE(L.inFirstAnsweringQuantum(old));
    L.enqueue(late);
    EXPECT_TRUE(L.inFirstAnsweringQuantum(late));
    EXPECT_EQ(L.freshAnsweringCount(), 1);
    const auto& q = L.lowQueue();
    ASSERT_EQ(q.size(), 2u);
    EXPECT_EQ(q[0], byQuanta ? &late : &old);
    EXPECT_EQ(q[1], byQuanta ? &old : &late);
  }
}

}  // namespace
}  // namespace sl::test
