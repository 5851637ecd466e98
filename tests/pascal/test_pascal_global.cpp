// PASCAL's instance-level scheduler (30-schedulers.md "PASCAL (global)",
// paper §IV-B): Algorithm 1 at arrival, Algorithm 2 and adaptive migration at
// the </think> boundary, the pace monitor, stop-and-copy transfers.
#include <gtest/gtest.h>

#include <map>

#include "../common/pascal_rig.h"

namespace sl::pascaltest {
namespace {

using Ids = std::vector<std::int32_t>;

/// Instance each request was first routed to.
int placedOn(const PascalRig& rig, std::int64_t id) {
  for (const test::Ev& e : rig.rec.events)
    if (e.kind == RequestEvent::Arrived && e.id == id) return e.instance;
  return -1;
}

// ---------------------------------------------------------------- Algorithm 1

// Instance 0 holds an answering request behind its pacer (TPOT* 0.1 ms, one
// token per 1.1 ms): it is off pace, so C goes to instance 1 although
// instance 0 has the smaller KV footprint.
TEST(Algorithm1, SkipsAnInstanceOffPace) {
  // A (id 0) -> 0: prompt 2, R = 0. B (id 1, 0.5 ms) -> 1: prompt 40, R = 100.
  // C (id 2, 5 ms): Algorithm 1 with instance 0 off pace.
  PascalRig rig(test::tinyInstance(1000, 2), {rq(0, 2, 0, 200), rq(0.5, 40, 100, 5), rq(5, 2, 10, 2)}, 2, {}, {},
                strictPace);
  std::vector<PascalInstanceStatus> at5;
  Snapshot snap5, snapEnd;
  rig.sim->sendMessage(ms(4.99), [&] {
    for (int i = 0; i < 2; ++i) at5.push_back(rig.global->status(i));
    rig.sim->fillSnapshot(snap5);
  });
  rig.run();
  rig.sim->fillSnapshot(snapEnd);
  // The snapshot shows the monitor the algorithms read, and the decisions.
  ASSERT_EQ(snap5.instances.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    // t_i, r_i, a_i, m_i reach the snapshot as PASCAL's published fields.
    const auto& f = snap5.instances[static_cast<std::size_t>(i)].policyFields;
    const PascalInstanceStatus& st = at5[static_cast<std::size_t>(i)];
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f[0].value, st.onPace ? 1.0 : 0.0);
    EXPECT_EQ(f[1].value, static_cast<double>(st.reasoning));
    EXPECT_EQ(f[2].value, static_cast<double>(st.freshAnswering));
    EXPECT_EQ(f[3].value, static_cast<double>(st.footprint));
  }
  EXPECT_EQ(snap5.decisions, 2);  // A and B placed; C not yet arrived
  ASSERT_EQ(snap5.recentDecisions.size(), 2u);
  EXPECT_EQ(snap5.recentDecisions[1].decision.requestId, 1);
  EXPECT_EQ(snapEnd.decisions, static_cast<std::int64_t>(rig.global->decisionLog()->size()));
  EXPECT_EQ(snapEnd.recentDecisions.back().reason,
            DecisionLog::reason(rig.global->decisionLog()->entries().back(), &pascalDecisionNames()));
  EXPECT_EQ(placedOn(rig, 0), 0);
  EXPECT_EQ(placedOn(rig, 1), 1);  // instance 0 holds A's prompt block
  ASSERT_EQ(at5.size(), 2u);
  EXPECT_FALSE(at5[0].onPace);
  EXPECT_TRUE(at5[1].onPace);
  EXPECT_LT(at5[0].footprint, at5[1].footprint);
  EXPECT_EQ(at5[1].reasoning, 1);

  const auto d = rig.decisions(2, false);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].chosen, 1);
  EXPECT_EQ(d[0].instance, 1);
  EXPECT_EQ(d[0].selection, PascalSelection::SloFiltered);
  EXPECT_EQ(d[0].action, PascalAction::Placed);
  EXPECT_EQ(d[0].time, ms(5));
  EXPECT_EQ(rig.candidates(d[0]), (Ids{1}));
  EXPECT_EQ(placedOn(rig, 2), 1);
  EXPECT_EQ(DecisionLog::reason(d[0], &pascalDecisionNames()), "SLO-filtered");
}

// Both instances off pace: every instance is a candidate and the smallest
// footprint wins.
TEST(Algorithm1, FallsBackToAllInstances) {
  // B's 40-token prefill ends at 5.5 ms; C arrives at 10 ms.
  PascalRig rig(test::tinyInstance(1000, 2), {rq(0, 2, 0, 200), rq(0.5, 40, 0, 200), rq(10, 2, 10, 2)}, 2, {}, {},
                strictPace);
  rig.run();
  EXPECT_EQ(placedOn(rig, 0), 0);
  EXPECT_EQ(placedOn(rig, 1), 1);
  const auto d = rig.decisions(2, false);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].selection, PascalSelection::FallbackAll);
  EXPECT_EQ(rig.candidates(d[0]), (Ids{0, 1}));
  EXPECT_EQ(d[0].chosen, 0);  // 40-token prompt on instance 1: larger footprint
  EXPECT_EQ(DecisionLog::reason(d[0], &pascalDecisionNames()), "fallback all");
}

TEST(Algorithm1, TiesGoToTheLowestIndex) {
  PascalRig rig(test::tinyInstance(1000, 2), {rq(0, 2, 0, 3)}, 3);
  rig.run();
  const auto d = rig.decisions(0, false);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].chosen, 0);
  EXPECT_EQ(rig.candidates(d[0]), (Ids{0, 1, 2}));
}

// ---------------------------------------------------------------- Algorithm 2

// X (id 0, on instance 0) reaches </think>. r_i: instance 0 has 2 other
// reasoning requests, 1 has 2, 2 has none but is off pace (an answering
// request behind its pacer), 3 has 1. Algorithm 2 picks instance 3.
TEST(Algorithm2, PicksFewestReasoningAmongInstancesOnPace) {
  PascalRig rig(test::tinyInstance(1000, 16),
                {rq(0, 4, 3, 5), rq(0, 4, 1000, 1), rq(0, 4, 1000, 1), rq(0, 4, 1000, 1), rq(0, 4, 1000, 1),
                 rq(0, 4, 0, 1000), rq(0, 4, 1000, 1)},
                4, {}, {}, strictPace);
  rig.placeBy({0, 0, 0, 1, 1, 2, 3});
  rig.sim->run(ms(50));
  const auto d = rig.decisions(0, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].from, 0);
  EXPECT_EQ(d[0].selection, PascalSelection::SloFiltered);
  EXPECT_EQ(rig.candidates(d[0]), (Ids{0, 1, 3}));
  EXPECT_EQ(d[0].chosen, 3);
  EXPECT_EQ(d[0].action, PascalAction::Migrate);
  EXPECT_EQ(d[0].instance, 3);
  EXPECT_EQ(DecisionLog::reason(d[0], &pascalDecisionNames()), "SLO-filtered; migrate");
  ASSERT_EQ(rig.sim->finishedCount() >= 1, true);
  EXPECT_EQ(rig.record(0).instance, 3);
  EXPECT_EQ(rig.record(0).migrations, 1);
}

// Every instance off pace: all are candidates, ranked by r_i + a_i (a_i =
// answering requests still in their first quantum). r_i alone would pick
// instance 1 (no reasoning, 3 fresh answering); r + a picks instance 2.
TEST(Algorithm2, FallsBackToReasoningPlusFreshAnswering) {
  // id: 0 = X; 1, 2 reasoning and 3 answering on instance 0 (r+a = 3);
  // 4, 5, 6 answering on 1 (0 + 3); 7 reasoning and 8 answering on 2 (1 + 1).
  std::vector<RequestSpec> reqs = {rq(0, 4, 3, 5)};
  for (int i = 1; i <= 8; ++i) {
    const bool reasoning = i == 1 || i == 2 || i == 7;
    reqs.push_back(reasoning ? rq(0, 4, 1000, 1) : rq(0, 4, 0, 1000));
  }
  PascalRig rig(test::tinyInstance(1000, 16), reqs, 3, {}, {}, strictPace);
  rig.placeBy({0, 0, 0, 0, 1, 1, 1, 2, 2});
  rig.sim->run(ms(20));
  const auto d = rig.decisions(0, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].selection, PascalSelection::FallbackRA);
  EXPECT_EQ(rig.candidates(d[0]), (Ids{0, 1, 2}));
  EXPECT_EQ(d[0].chosen, 2);
  EXPECT_EQ(d[0].action, PascalAction::Migrate);
  EXPECT_EQ(DecisionLog::reason(d[0], &pascalDecisionNames()), "fallback r+a; migrate");
}

// Ties in Algorithm 2 keep the request where it is (no transfer for nothing).
TEST(Algorithm2, TieKeepsTheCurrentInstance) {
  PascalRig rig(test::tinyInstance(1000, 16), {rq(0, 4, 3, 5), rq(0, 4, 1000, 1), rq(0, 4, 1000, 1)}, 2);
  rig.placeBy({1, 1, 0});
  rig.sim->run(ms(20));
  const auto d = rig.decisions(0, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].chosen, 1);
  EXPECT_EQ(d[0].action, PascalAction::StayedSame);
  EXPECT_EQ(DecisionLog::reason(d[0], &pascalDecisionNames()), "SLO-filtered; stayed: same instance");
  EXPECT_EQ(rig.sim->migrations(), 0);
}

// ---------------------------------------------------------------- no herding

// Two requests (ids 0, 1, same shape, on instance 0 with a reasoning
// request Y) cross </think> in the same iteration; instances 1 and 2 are
// empty, r = 0 on both. The first goes to instance 1 (a tie: the lowest
// index); the second sees the 5 blocks promised to that copy and goes to
// instance 2, which has more room left.
TEST(NoHerding, SecondDecisionInTheSameInstantSeesTheFirstsPromise) {
  PascalRig rig(test::tinyInstance(40, 16), {rq(0, 16, 60, 20), rq(0, 16, 60, 20), rq(0, 16, 1000, 1)}, 3);
  rig.placeBy({0, 0, 0});
  rig.run();
  const auto d0 = rig.decisions(0, true), d1 = rig.decisions(1, true);
  ASSERT_EQ(d0.size(), 1u);
  ASSERT_EQ(d1.size(), 1u);
  EXPECT_EQ(d0[0].time, d1[0].time);
  EXPECT_EQ(d0[0].chosen, 1);
  EXPECT_EQ(d1[0].chosen, 2);
  EXPECT_EQ(d0[0].action, PascalAction::Migrate);
  EXPECT_EQ(d1[0].action, PascalAction::Migrate);
  EXPECT_EQ(rig.record(0).instance, 1);
  EXPECT_EQ(rig.record(1).instance, 2);
}

// Same pair, but instance 2 has a reasoning request (r_2 = 1 = r_0), so
// Algorithm 2 picks instance 1 for both. Instance 1 holds an answering
// request Z of 16 blocks: 24 free, room for one copy with its headroom
// (blocks(75 + 256) = 21) but, once the first copy's 5 blocks are promised,
// not for the second (19 < 21), which stays on instance 0 (room there).
TEST(NoHerding, AdaptiveCheckCountsBlocksPromisedToAnEarlierCopy) {
  PascalRig rig(test::tinyInstance(40, 16),
                {rq(0, 16, 60, 20), rq(0, 16, 60, 20), rq(0, 16, 300, 1), rq(0, 200, 0, 200), rq(0, 16, 300, 1)},
                3);
  rig.placeBy({0, 0, 0, 1, 2});
  std::int64_t free1 = -1;
  struct Obs : SimObserver {
    PascalRig* rig;
    std::int64_t* f1;
    void onRequestEvent(RequestEvent e, const Request& r, int, SimTime) override {
      if (e == RequestEvent::ReasoningEnd && r.id == 0) *f1 = rig->sim->instance(1).freeGpuBlocks();
    }
  } obs;
  obs.rig = &rig;
  obs.f1 = &free1;
  rig.sim->addObserver(&obs);
  rig.run();
  EXPECT_EQ(free1, 24);
  const auto d0 = rig.decisions(0, true), d1 = rig.decisions(1, true);
  ASSERT_EQ(d0.size(), 1u);
  ASSERT_EQ(d1.size(), 1u);
  EXPECT_EQ(d0[0].time, d1[0].time);
  EXPECT_EQ(d0[0].chosen, 1);
  EXPECT_EQ(d1[0].chosen, 1);
  EXPECT_EQ(d0[0].action, PascalAction::Migrate);
  EXPECT_EQ(d1[0].action, PascalAction::StayedAdaptive);
  EXPECT_EQ(rig.record(0).instance, 1);
  EXPECT_EQ(rig.record(1).instance, 0);
  EXPECT_EQ(rig.sim->finishedCount(), 5);
}

// The two tests above pass even when the room a decision reads ignores the
// blocks promised to copies (PascalGlobal::roomFor without
// Simulator::promisedBlocks): there the first copy starts at once and its
// reservation is already out of the destination's free blocks. The two below
// build the case the promise is for: the first copy is queued at its
// destination (its blocks exceed the free ones, and the resident there is
// answering in its first quantum, so it cannot be displaced), so it has
// reserved nothing when the second boundary of the same instant is decided.

/// What the instances looked like when each boundary was decided (the
/// observer sees ReasoningEnd just before the policy's onReasoningEnd), and
/// when each copy started.
struct BoundaryProbe : SimObserver {
  struct At {
    std::int64_t id;
    SimTime t;
    std::vector<std::int64_t> free, promised;  // per instance
  };
  Simulator* sim = nullptr;
  std::vector<At> at;                         // in decision order
  std::map<std::int64_t, SimTime> copyStart;  // request id -> its copy's start
  void onRequestEvent(RequestEvent e, const Request& r, int, SimTime t) override {
    if (e != RequestEvent::ReasoningEnd) return;
    At a{r.id, t, {}, {}};
    for (int i = 0; i < sim->numInstances(); ++i) {
      a.free.push_back(sim->instance(i).freeGpuBlocks());
      a.promised.push_back(sim->promisedBlocks(i));
    }
    at.push_back(std::move(a));
  }
  void onTransfer(const Request& r, int, int, SimTime start, SimTime, double) override { copyStart[r.id] = start; }
};

// Algorithm 2's tie-break. Blocks of 16 tokens, 40 per instance. Instance 0
// holds X (id 0, prompt 400), W (id 1, prompt 16) and a reasoning request Y
// (r_0 = 1); instances 1 and 2 hold one answering request each (r = 0), so
// at </think> both X and W see a tie between 1 and 2, broken by room. X and
// W cross </think> at the end of the same iteration (46.8 ms), X first.
//  - X: room 24 on instance 1, 21 on 2 -> instance 1. Adaptive check: X
//    needs blocks(402 + 256) = 42 there (no), and 42 - 26 = 16 more blocks
//    at home where 10 are free (no either) -> it migrates. Its copy needs
//    blocks(403) = 26 > 24 free: it waits in instance 1's queue, promised
//    but not reserved (instance 1 still shows 24 free blocks).
//  - W, same instant: room on instance 1 = 24 - 26 = -2 < 21 on instance 2
//    -> instance 2, where its copy (blocks(18 + 256) = 18 <= 21) starts at
//    once. Blind to the promise, W would see 24 > 21, pass the adaptive
//    check there (18 <= 24) and herd behind X's copy on instance 1.
TEST(NoHerding, CopyQueuedAtItsDestinationTurnsTheNextBoundaryAway) {
  PascalRig rig(test::tinyInstance(40, 16),
                {rq(0, 400, 3, 20), rq(0, 16, 3, 20), rq(0, 16, 100, 1), rq(0, 224, 0, 100), rq(0, 288, 0, 100)}, 3);
  rig.placeBy({0, 0, 0, 1, 2});
  BoundaryProbe probe;
  probe.sim = rig.sim.get();
  rig.sim->addObserver(&probe);
  rig.run();

  ASSERT_GE(probe.at.size(), 2u);
  const BoundaryProbe::At &x = probe.at[0], &w = probe.at[1];
  ASSERT_EQ(x.id, 0);
  ASSERT_EQ(w.id, 1);
  EXPECT_EQ(x.t, ms(46.8));
  EXPECT_EQ(w.t, x.t);
  // Before X's decision: nothing promised anywhere.
  EXPECT_EQ(x.free, (std::vector<std::int64_t>{10, 24, 21}));
  EXPECT_EQ(x.promised, (std::vector<std::int64_t>{0, 0, 0}));
  // W's decision: X's copy holds no reservation on instance 1 (still 24
  // free) but 26 blocks are promised to it there.
  EXPECT_EQ(w.free, (std::vector<std::int64_t>{10, 24, 21}));
  EXPECT_EQ(w.promised, (std::vector<std::int64_t>{0, 26, 0}));

  const auto d0 = rig.decisions(0, true), d1 = rig.decisions(1, true);
  ASSERT_EQ(d0.size(), 1u);
  ASSERT_EQ(d1.size(), 1u);
  EXPECT_EQ(rig.candidates(d0[0]), (Ids{0, 1, 2}));
  EXPECT_EQ(d0[0].chosen, 1);
  EXPECT_EQ(d0[0].action, PascalAction::Migrate);
  EXPECT_EQ(rig.candidates(d1[0]), (Ids{0, 1, 2}));
  EXPECT_EQ(d1[0].chosen, 2);  // not instance 1, where X's copy is still queued
  EXPECT_EQ(d1[0].action, PascalAction::Migrate);
  EXPECT_EQ(d1[0].instance, 2);
  // X's copy waited for room on instance 1; W's started at its decision.
  ASSERT_EQ(probe.copyStart.count(0), 1u);
  ASSERT_EQ(probe.copyStart.count(1), 1u);
  EXPECT_GT(probe.copyStart[0], x.t);
  EXPECT_EQ(probe.copyStart[1], w.t);
  EXPECT_EQ(rig.record(0).instance, 1);
  EXPECT_EQ(rig.record(1).instance, 2);
  EXPECT_EQ(rig.sim->migrations(), 2);
  EXPECT_EQ(rig.sim->migrationsAbandoned(), 0);
  EXPECT_EQ(rig.sim->finishedCount(), 5);
}

// The adaptive check. Two instances of 45 blocks; instance 0 holds X (id 0,
// prompt 407), W (id 1, prompt 16) and a reasoning request Y (r_0 = 1),
// instance 1 one answering request (r_1 = 0), so Algorithm 2 picks
// instance 1 for both X and W, which cross </think> in the same iteration,
// X first. headroom_tokens 248 (15.5 blocks): the growth the check asks at
// home depends on where the KV ends in its last block, so that 15 free
// blocks at home are too few for X and enough for W.
//  - X: needs blocks(409 + 248) = 42 on instance 1, 25 free (no); at home
//    42 - 26 = 16 more, 15 free (no) -> it migrates. Its copy needs
//    blocks(410) = 26 > 25: queued at instance 1, promised, not reserved.
//  - W, same instant: needs blocks(18 + 248) = 17 on instance 1, whose room
//    is 25 - 26 = -1 (no); at home 17 - 2 = 15 <= 15 (yes) -> it stays
//    ("stayed: adaptive"). Blind to the promise, 17 <= 25 would send it to
//    instance 1 to wait behind X's copy.
TEST(NoHerding, AdaptiveCheckCountsACopyStillQueuedAtTheDestination) {
  PascalGlobalConfig gc;
  gc.headroomTokens = 248;
  PascalRig rig(test::tinyInstance(45, 16),
                {rq(0, 407, 3, 20), rq(0, 16, 3, 20), rq(0, 16, 100, 1), rq(0, 304, 0, 100)}, 2, gc);
  rig.placeBy({0, 0, 0, 1});
  BoundaryProbe probe;
  probe.sim = rig.sim.get();
  rig.sim->addObserver(&probe);
  rig.run();

  ASSERT_GE(probe.at.size(), 2u);
  const BoundaryProbe::At &x = probe.at[0], &w = probe.at[1];
  ASSERT_EQ(x.id, 0);
  ASSERT_EQ(w.id, 1);
  EXPECT_EQ(x.t, ms(47.5));
  EXPECT_EQ(w.t, x.t);
  EXPECT_EQ(x.free, (std::vector<std::int64_t>{15, 25}));
  EXPECT_EQ(x.promised, (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(w.free, (std::vector<std::int64_t>{15, 25}));
  EXPECT_EQ(w.promised, (std::vector<std::int64_t>{0, 26}));

  const auto d0 = rig.decisions(0, true), d1 = rig.decisions(1, true);
  ASSERT_EQ(d0.size(), 1u);
  ASSERT_EQ(d1.size(), 1u);
  EXPECT_EQ(d0[0].chosen, 1);
  EXPECT_EQ(d0[0].action, PascalAction::Migrate);
  EXPECT_EQ(d1[0].chosen, 1);
  EXPECT_EQ(d1[0].action, PascalAction::StayedAdaptive);
  EXPECT_EQ(d1[0].instance, 0);
  EXPECT_EQ(DecisionLog::reason(d1[0], &pascalDecisionNames()), "SLO-filtered; stayed: adaptive");
  ASSERT_EQ(probe.copyStart.count(0), 1u);
  EXPECT_GT(probe.copyStart[0], x.t);       // X's copy waited for room
  EXPECT_EQ(probe.copyStart.count(1), 0u);  // W never moved
  EXPECT_EQ(rig.record(0).instance, 1);
  EXPECT_EQ(rig.record(1).instance, 0);
  EXPECT_EQ(rig.sim->migrations(), 1);
  EXPECT_EQ(rig.sim->finishedCount(), 4);
}

// ---------------------------------------------------------------- what a migrant meets

// X (id 0, prompt 600, R = 3, at 100 ms) on instance 0 with a reasoning
// request Y (r_0 = 1); instance 1 (4 blocks of 512 tokens) holds three
// answering requests V2, V3, V4 (prompt 100, answer 300: one block each for
// life; answering quantum 2 tokens, so all on a later quantum by X's
// boundary), 1 block free. Algorithm 2 picks instance 1 (r_1 = 0); X's copy
// needs 2 blocks (603 tokens). With displacement the tail of instance 1's
// low queue alone (1 block makes room) is swapped out and X's copy
// starts; without, X waits until a resident finishes.
class Displacement : public ::testing::TestWithParam<bool> {};

TEST_P(Displacement, MigrantSwapsOutTheTailOfTheLowQueue) {
  const bool displace = GetParam();
  auto rigPtr = fullDestinationRig(displace);
  PascalRig& rig = *rigPtr;
  std::vector<std::int64_t> lowAtBoundary;
  std::int64_t free1 = -1;
  struct Obs : SimObserver {
    PascalRig* rig;
    std::vector<std::int64_t>* low;
    std::int64_t* f1;
    SimTime copyStart = -1;
    void onTransfer(const Request& r, int, int, SimTime start, SimTime, double) override {
      if (r.id == 0) copyStart = start;
    }
    void onRequestEvent(RequestEvent e, const Request& r, int, SimTime) override {
      if (e != RequestEvent::ReasoningEnd || r.id != 0) return;
      *f1 = rig->sim->instance(1).freeGpuBlocks();
      for (const Request* q : rig->local(1).lowQueue()) {
        low->push_back(q->id);
        EXPECT_GT(q->policyKey, 0) << q->id;
      }
    }
  } obs;
  obs.rig = &rig;
  obs.low = &lowAtBoundary;
  obs.f1 = &free1;
  rig.sim->addObserver(&obs);
  rig.run();
  EXPECT_EQ(free1, 1);
  ASSERT_EQ(lowAtBoundary.size(), 3u);  // V2, V3, V4 in some order, all on a later quantum
  const auto d = rig.decisions(0, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].chosen, 1);
  EXPECT_EQ(d[0].action, PascalAction::Migrate);
  EXPECT_EQ(rig.record(0).instance, 1);
  EXPECT_EQ(rig.sim->finishedCount(), 5);
  const SimTime boundary = d[0].time;
  // Preemptions on instance 1 up to X's arrival there.
  SimTime arrived = -1;
  for (const auto& [id, t] : rig.rec.of(RequestEvent::MigrationEnd))
    if (id == 0) arrived = t;
  ASSERT_GE(arrived, boundary);
  std::vector<std::pair<std::int64_t, SimTime>> before;  // at or after the boundary
  for (const auto& [id, t] : rig.rec.of(RequestEvent::Preempted))
    if (id >= 2 && t >= boundary && t <= arrived) before.emplace_back(id, t);
  if (displace) {
    EXPECT_EQ(rig.sim->displacements(), 1);
    ASSERT_GE(before.size(), 1u);
    EXPECT_EQ(before[0].first, lowAtBoundary.back());  // the tail of the low queue, alone
    EXPECT_EQ(obs.copyStart, before[0].second);  // the copy starts at the eviction
  } else {
    EXPECT_EQ(rig.sim->displacements(), 0);
    EXPECT_GT(obs.copyStart, boundary);  // it waited for room
  }
}

INSTANTIATE_TEST_SUITE_P(Pascal, Displacement, ::testing::Values(true, false),
                         [](const auto& info) { return std::string(info.param ? "displaces" : "waits"); });

// Quanta on migration. X (id 0, R = 7, reasoning quantum 2) uses up 3
// reasoning quanta alone on instance 0. Per queue (paper): it enters the
// low queue at level 0. Per instance: at level 3 when it stays; a migrant
// (id 1, same shape on instance 1, moved to instance 0 where r = 0... ) is
// always fresh.
class QuantaOnMigration : public ::testing::TestWithParam<bool> {};

TEST_P(QuantaOnMigration, StayerKeepsItsQuantaOnlyPerInstanceAndAMigrantStartsFresh) {
  const bool perInstance = GetParam();
  PascalLocalConfig lc;
  lc.reasoningQuantum = 2;
  lc.quantaPerInstance = perInstance;
  // Instance 1 keeps a long reasoning request (r_1 = 1): X stays on 0 (tie
  // at r = 0 keeps it); Z (id 2, R = 7) on instance 1 moves to instance 0.
  PascalRig rig(test::tinyInstance(1000, 16), {rq(0, 4, 7, 50), rq(0, 4, 1000, 1), rq(0, 4, 7, 50)}, 2, {}, lc);
  rig.placeBy({0, 1, 1});
  std::int64_t keyStayer = -1, keyMigrant = -1;
  struct Obs : SimObserver {
    PascalRig* rig;
    std::int64_t *stayer, *migrant;
    void onRequestEvent(RequestEvent e, const Request& r, int, SimTime) override {
      if (e == RequestEvent::ReasoningEnd && r.id == 0) pending = true;
      if (e == RequestEvent::MigrationEnd && r.id == 2) arrived = true;
    }
    void onIteration(const Instance& in, SimTime, SimTime) override {
      if (in.id() != 0) return;
      for (const Request* q : rig->local(0).lowQueue()) {
        if (q->id == 0 && pending) *stayer = q->policyKey;
        if (q->id == 2 && arrived) *migrant = q->policyKey;
      }
      pending = arrived = false;
    }
    bool pending = false, arrived = false;
  } obs;
  obs.rig = &rig;
  obs.stayer = &keyStayer;
  obs.migrant = &keyMigrant;
  rig.sim->addObserver(&obs);
  rig.run();
  const auto dx = rig.decisions(0, true), dz = rig.decisions(2, true);
  ASSERT_EQ(dx.size(), 1u);
  ASSERT_EQ(dz.size(), 1u);
  EXPECT_EQ(dx[0].action, PascalAction::StayedSame);
  EXPECT_EQ(dz[0].action, PascalAction::Migrate);
  EXPECT_EQ(keyStayer, perInstance ? 3 : 0);
  EXPECT_EQ(keyMigrant, 0);
  EXPECT_EQ(rig.sim->finishedCount(), 3);
}

INSTANTIATE_TEST_SUITE_P(Pascal, QuantaOnMigration, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "per_instance" : "per_queue"); });

// ---------------------------------------------------------------- adaptive migration

// Instance 0: X (id 0, prompt 16, R = 60) and Y (reasoning): r_0 = 1.
// Instance 1: Z (prompt 500, answering): r_1 = 0, so Algorithm 2 picks 1 —
// but at X's boundary Z fills 33 of its 40 blocks, too few for X's 75 KV
// tokens + 256 headroom (21 blocks), while instance 0 has 30 free.
struct AdaptiveCase {
  PascalMigration mode;
  std::uint8_t action;
  int finalInstance;
};
class AdaptiveMigration : public ::testing::TestWithParam<AdaptiveCase> {};

TEST_P(AdaptiveMigration, CurrentHasRoomChosenHasNot) {
  const AdaptiveCase c = GetParam();
  PascalGlobalConfig gc;
  gc.migration = c.mode;
  PascalRig rig(test::tinyInstance(40, 16), {rq(0, 16, 60, 20), rq(0, 16, 200, 1), rq(0, 500, 0, 120)}, 2, gc);
  rig.placeBy({0, 0, 1});
  std::int64_t free0 = -1, free1 = -1;
  rig.rec.events.reserve(64);
  struct Obs : SimObserver {
    PascalRig* rig;
    std::int64_t *f0, *f1;
    void onRequestEvent(RequestEvent e, const Request& r, int, SimTime) override {
      if (e == RequestEvent::ReasoningEnd && r.id == 0) {
        *f0 = rig->sim->instance(0).freeGpuBlocks();
        *f1 = rig->sim->instance(1).freeGpuBlocks();
        EXPECT_EQ(r.kvTokens, 75);
      }
    }
  } obs;
  obs.rig = &rig;
  obs.f0 = &free0;
  obs.f1 = &free1;
  rig.sim->addObserver(&obs);
  rig.run();
  EXPECT_EQ(free0, 30);
  EXPECT_LT(free1, 21);
  EXPECT_GE(free1, 5);  // blocks(76): the copy itself could start at once
  const auto d = rig.decisions(0, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].chosen, 1);
  EXPECT_EQ(rig.candidates(d[0]), (Ids{0, 1}));
  EXPECT_EQ(d[0].action, c.action);
  EXPECT_EQ(rig.record(0).instance, c.finalInstance);
  EXPECT_EQ(rig.record(0).migrations, c.finalInstance == 0 ? 0 : 1);
  EXPECT_EQ(rig.sim->finishedCount(), 3);
  if (c.mode == PascalMigration::Never) {
    EXPECT_EQ(rig.sim->migrations(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Pascal, AdaptiveMigration,
                         ::testing::Values(AdaptiveCase{PascalMigration::Adaptive, PascalAction::StayedAdaptive, 0},
                                           AdaptiveCase{PascalMigration::Always, PascalAction::Migrate, 1},
                                           AdaptiveCase{PascalMigration::Never, PascalAction::StayedNoMigration, 0}),
                         [](const auto& info) {
                           switch (info.param.mode) {
                             case PascalMigration::Adaptive:
                               return std::string("pascal");
                             case PascalMigration::Always:
                               return std::string("nonadaptive");
                             case PascalMigration::Never:
                               return std::string("nomigration");
                           }
                           return std::string("x");
                         });

// When the chosen instance has room too, adaptive PASCAL migrates.
TEST(AdaptiveMigration, MigratesWhenTheChosenInstanceHasRoom) {
  PascalRig rig(test::tinyInstance(400, 16), {rq(0, 16, 60, 20), rq(0, 16, 200, 1), rq(0, 500, 0, 120)}, 2);
  rig.placeBy({0, 0, 1});
  rig.run();
  const auto d = rig.decisions(0, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].action, PascalAction::Migrate);
  EXPECT_EQ(rig.record(0).instance, 1);
}

// When neither instance has room, adaptive PASCAL migrates as Algorithm 2
// says (it stays only when here fits and there does not; mutant
// pascal-adaptive-migration): as CurrentHasRoomChosenHasNot, but Y's 400-token
// prompt leaves instance 0 fewer free blocks than X's 16 more.
TEST(AdaptiveMigration, MigratesWhenNeitherInstanceHasRoom) {
  PascalRig rig(test::tinyInstance(40, 16), {rq(0, 16, 60, 20), rq(0, 400, 200, 1), rq(0, 500, 0, 120)}, 2);
  rig.placeBy({0, 0, 1});
  std::int64_t free0 = -1, free1 = -1;
  struct Obs : SimObserver {
    PascalRig* rig;
    std::int64_t *f0, *f1;
    void onRequestEvent(RequestEvent e, const Request& r, int, SimTime) override {
      if (e == RequestEvent::ReasoningEnd && r.id == 0) {
        *f0 = rig->sim->instance(0).freeGpuBlocks();
        *f1 = rig->sim->instance(1).freeGpuBlocks();
      }
    }
  } obs;
  obs.rig = &rig;
  obs.f0 = &free0;
  obs.f1 = &free1;
  rig.sim->addObserver(&obs);
  rig.run();
  EXPECT_GE(free0, 0);
  EXPECT_LT(free0, 21 - 5);  // X holds 5 of the 21 blocks it needs with headroom
  EXPECT_LT(free1, 21);
  const auto d = rig.decisions(0, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].chosen, 1);
  EXPECT_EQ(d[0].action, PascalAction::Migrate);
  EXPECT_EQ(rig.record(0).instance, 1);
  EXPECT_EQ(rig.sim->finishedCount(), 3);
}

// pascal-nomigration never moves anything, on a busier cluster too.
TEST(AdaptiveMigration, NoMigrationVariantNeverMigrates) {
  PascalGlobalConfig gc;
  gc.migration = PascalMigration::Never;
  std::vector<RequestSpec> reqs;
  for (int i = 0; i < 40; ++i) reqs.push_back(rq(0.3 * i, 8 + i % 5, 5 + (i * 7) % 23, 3 + i % 9));
  PascalRig rig(test::tinyInstance(30, 4), reqs, 3, gc, {}, strictPace);
  rig.run();
  EXPECT_EQ(rig.sim->finishedCount(), 40);
  EXPECT_EQ(rig.sim->migrations(), 0);
  int boundaries = 0;
  for (const Decision& d : rig.global->log().entries()) {
    if (!d.boundary) continue;
    ++boundaries;
    EXPECT_EQ(d.action, PascalAction::StayedNoMigration);
    EXPECT_EQ(d.instance, d.from);
  }
  EXPECT_EQ(boundaries, 40);
  for (const RequestRecord& r : rig.sim->records()) EXPECT_EQ(r.migrations, 0);
}

// ---------------------------------------------------------------- transfers

// The boundary migration is a stop-and-copy: latency + bytes / bandwidth;
// two copies leaving one node at once share its NIC, each taking twice as long.
TEST(PascalTransfer, TimeIsLatencyPlusBytesOverBandwidthAndSharedNicDoublesIt) {
  using namespace sl::enginetest;
  const CostModel& cost = llama8b();
  const SimConfig c = smallConfig(cost, 2, 100);  // one instance per node, NIC 2^30 B/s
  const double nic = 1073741824.0;
  // W (id 0): long reasoning keeps r_0 = 1. X (prompt 32, R = 4) has 35 KV
  // tokens at </think>; r_1 = 0 and instance 1 is empty: it migrates.
  auto runWith = [&](int copies, enginetest::Recorder& rec) {
    std::vector<RequestSpec> reqs = {rq(0, 32, 1000, 1)};
    for (int i = 0; i < copies; ++i) reqs.push_back(rq(0, 32, 4, 4));
    auto rig = std::make_unique<PascalRig>(c, cost, reqs);
    rig->global->placeFn = [](const Request&) { return 0; };
    rig->sim->addObserver(&rec);
    rig->run();
    for (int i = 1; i <= copies; ++i) {
      const auto d = rig->decisions(i, true);
      EXPECT_EQ(d.size(), 1u);
      if (!d.empty()) {
        EXPECT_EQ(d[0].action, PascalAction::Migrate);
      }
      EXPECT_EQ(rig->record(i).instance, 1);
    }
    return rig;
  };
  enginetest::Recorder one, two;
  auto r1 = runWith(1, one);
  ASSERT_EQ(one.transfers.size(), 1u);
  const SimTime flow1 = static_cast<SimTime>(std::ceil(35 * c.kvBytesPerToken / nic * 1e9));
  EXPECT_DOUBLE_EQ(one.transfers[0].bytes, 35 * c.kvBytesPerToken);
  EXPECT_EQ(one.transfers[0].end - one.transfers[0].start, c.linkLatency + flow1);
  EXPECT_EQ(r1->record(1).migrating, c.linkLatency + flow1);

  auto r2 = runWith(2, two);
  ASSERT_EQ(two.transfers.size(), 2u);
  const SimTime flow2 = static_cast<SimTime>(std::ceil(35 * c.kvBytesPerToken / (nic / 2) * 1e9));
  for (const auto& tr : two.transfers) {
    EXPECT_EQ(tr.start, two.transfers[0].start);
    EXPECT_EQ(tr.end - tr.start, c.linkLatency + flow2);
    EXPECT_EQ(tr.end - tr.start - c.linkLatency, 2 * flow1);
  }
}

// ---------------------------------------------------------------- the pacer through the policy

// One request, prompt 4, R = 2, A = 5 on the tiny model; TTFAT* 1 ms, TPOT*
// 2 ms. Tokens: 1.4, 2.5 (</think>, t0), answers 3.6, 4.7, 5.8, 6.9, 8.0 ms.
// Digests 3.6, 5.6, 7.6, 9.6, 11.6: ∫D = 20, ∫E over [2.5, 11.6] = 20.5 ms·tok.
TEST(PascalPace, MonitorReadsThePacerAndQoeMatchesByHand) {
  for (int watermark : {0, 1}) {
    SCOPED_TRACE(watermark);
    PascalGlobalConfig gc;
    gc.paceLowWatermark = watermark;
    PascalRig rig(test::tinyInstance(1000, 16), {rq(0, 4, 2, 5)}, 1, gc, {}, [](SimConfig& c) {
      c.slo.ttfat_s = 1e-3;
      c.slo.qoe_tpot_s = 2e-3;
    });
    std::vector<std::pair<double, bool>> pace;
    for (double t : {2.0, 3.45, 3.55, 5.0, 5.7, 6.0})
      rig.sim->sendMessage(ms(t), [&, t] { pace.emplace_back(t, rig.global->status(0).onPace); });
    rig.run();
    // 2.0: still reasoning. 3.45: no answer token yet, within TTFAT*. 3.55:
    // none yet, the user expects one. 5.0: one token buffered (d_2 = 5.6).
    // 5.7: both digested, empty buffer. 6.0: token 3 (5.8) buffered until 7.6.
    const bool at50 = watermark == 0;  // buffered 1 <= watermark 1 is "behind"
    const bool at60 = watermark == 0;
    EXPECT_EQ(pace, (std::vector<std::pair<double, bool>>{
                        {2.0, true}, {3.45, true}, {3.55, false}, {5.0, at50}, {5.7, false}, {6.0, at60}}));
    const RequestRecord& rec = rig.record(0);
    EXPECT_EQ(rec.reasoning_end, ms(2.5));
    EXPECT_EQ(rec.first_visible, ms(3.6));
    EXPECT_NEAR(rec.qoe, 20.0 / 20.5, 1e-12);
  }
}

TEST(PascalPace, BehindPaceRuleForAStreamWithoutTokens) {
  PascalRig rig(test::tinyInstance(1000, 16), {}, 1);
  Request r;
  r.reasoning = 3;
  r.generated = 3;
  r.pacer = TokenPacer(ms(10), secondsToNs(0.25), secondsToNs(0.1), 4);
  EXPECT_FALSE(rig.global->behindPace(r, ms(10)));
  EXPECT_FALSE(rig.global->behindPace(r, ms(259)));
  EXPECT_TRUE(rig.global->behindPace(r, ms(260)));
  r.pacer.onToken(ms(100));  // digested at 260 ms
  EXPECT_FALSE(rig.global->behindPace(r, ms(259)));
  EXPECT_TRUE(rig.global->behindPace(r, ms(260)));
}

// ---------------------------------------------------------------- decision log

TEST(DecisionLog, EveryPlacementAndBoundaryIsRecordedAndWrittenAsCsv) {
  std::vector<RequestSpec> reqs;
  for (int i = 0; i < 12; ++i) reqs.push_back(rq(0.5 * i, 6 + i % 3, i % 4 == 0 ? 0 : 4 + i, 5));
  PascalRig rig(test::tinyInstance(200, 4), reqs, 3);
  rig.run();
  ASSERT_EQ(rig.sim->finishedCount(), 12);
  const DecisionLog* log = rig.sim->globalPolicy().decisionLog();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log, &rig.global->log());
  int placements = 0, boundaries = 0;
  for (const Decision& d : log->entries()) {
    (d.boundary ? boundaries : placements)++;
    EXPECT_GE(d.chosen, 0);
    EXPECT_FALSE(log->candidatesOf(d).empty());
  }
  EXPECT_EQ(placements, 12);
  EXPECT_EQ(boundaries, 9);  // R = 0 requests have no </think>
  const std::string csv = log->csv(&pascalDecisionNames());
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "time_s,request_id,kind,from,chosen,instance,candidates,selection,action");
  EXPECT_NE(csv.find("\n0.000000000,0,placement,-1,0,0,0 1 2,SLO-filtered,placed\n"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 22);
  EXPECT_EQ(log->dropped(), 0);
}

TEST(DecisionLog, CapCountsDroppedEntries) {
  DecisionLog log(2);
  const std::int32_t c[] = {0, 1};
  for (int i = 0; i < 5; ++i) log.add(Decision{}, c);
  EXPECT_EQ(log.size(), 2u);
  EXPECT_EQ(log.dropped(), 3);
}

}  // namespace
}  // namespace sl::pascaltest
