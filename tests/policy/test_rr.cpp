// Round-robin local policy with a token quantum (30-schedulers.md "rr",
// PASCAL §II-C, Fig. 2c): exact rotation order on a one-instance cluster.
// Iteration time = 1 ms + 0.1 ms × (prefill tokens + decodes), swap 0.1 ms
// per block (policy_harness.h).
#include <gtest/gtest.h>

#include "policy_harness.h"

namespace sl::test {
namespace {

using RE = RequestEvent;
using IdT = std::vector<std::pair<std::int64_t, SimTime>>;

std::vector<std::int64_t> rrQueue(const Simulator& sim) {
  const auto q = queues(sim);
  EXPECT_EQ(q.size(), 1u);
  return q.empty() ? std::vector<std::int64_t>{} : q[0].second;
}

// Room for two of three requests (4 blocks of 4 tokens; each request holds
// 2 blocks for its whole life: 5-token prompt, 4 output tokens). Quantum 2:
// after a request has produced 2 tokens it goes to the tail; the longest
// prefix that fits (two requests) runs and the request left outside it is
// swapped out (0.2 ms), a swapped request inside it is swapped in (0.2 ms).
TEST(RoundRobinLocal, QuantumRotationFig2c) {
  Rig rig(tinyInstance(4, 4), {req(0, 5, 4), req(0.1, 5, 4), req(0.2, 5, 4)}, rr(2));

  rig.sim->run(ms(4.0));  // iteration 3: A rotated out
  EXPECT_EQ(rrQueue(*rig.sim), (std::vector<std::int64_t>{1, 2, 0}));
  rig.sim->run(ms(5.5));  // iteration 4: B rotated out
  EXPECT_EQ(rrQueue(*rig.sim), (std::vector<std::int64_t>{2, 0, 1}));
  rig.sim->run(ms(7.0));  // iteration 5: C rotated out
  EXPECT_EQ(rrQueue(*rig.sim), (std::vector<std::int64_t>{0, 1, 2}));
  rig.run();

  expectIterations(rig.rec, {
                                {0.0, 1.5, {P(0, 5)}},
                                {1.5, 3.1, {D(0), P(1, 5)}},
                                {3.1, 4.9, {D(1), P(2, 5)}},  // A out (+0.2)
                                {4.9, 6.5, {D(2), D(0)}},     // B out, A in (+0.4)
                                {6.5, 8.1, {D(0), D(1)}},     // C out, B in (+0.4); A done
                                {8.1, 9.5, {D(1), D(2)}},     // C in (+0.2); B done
                                {9.5, 10.6, {D(2)}},
                            });
  EXPECT_EQ(rig.tokens(0), times({1.5, 3.1, 6.5, 8.1}));
  EXPECT_EQ(rig.tokens(1), times({3.1, 4.9, 8.1, 9.5}));
  EXPECT_EQ(rig.tokens(2), times({4.9, 6.5, 9.5, 10.6}));
  EXPECT_EQ(rig.rec.of(RE::Preempted), (IdT{{0, ms(3.1)}, {1, ms(4.9)}, {2, ms(6.5)}}));
  EXPECT_EQ(rig.rec.of(RE::Resumed), (IdT{{0, ms(4.9)}, {1, ms(6.5)}, {2, ms(8.1)}}));
  for (const Ev& e : rig.rec.events) {
    if (e.kind == RE::Preempted) { EXPECT_EQ(e.state, ReqState::Swapped); }
  }
  for (std::int64_t id = 0; id < 3; ++id) EXPECT_EQ(rig.record(id).preemptions, 1) << id;
  EXPECT_EQ(rig.record(0).swapped, ms(4.9) - ms(3.1));
  EXPECT_EQ(rig.sim->instance(0).cpuBlocksUsed(), 0);
}

// FCFS on the same workload: no rotation, C waits for A to finish.
TEST(RoundRobinLocal, Fig2cUnderFcfsForContrast) {
  Rig rig(tinyInstance(4, 4), {req(0, 5, 4), req(0.1, 5, 4), req(0.2, 5, 4)}, fcfs());
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.5, {P(0, 5)}},
                                {1.5, 3.1, {D(0), P(1, 5)}},
                                {3.1, 4.3, {D(0), D(1)}},
                                {4.3, 5.5, {D(0), D(1)}},  // A done
                                {5.5, 7.1, {D(1), P(2, 5)}},  // B done
                                {7.1, 8.2, {D(2)}},
                                {8.2, 9.3, {D(2)}},
                                {9.3, 10.4, {D(2)}},
                            });
  EXPECT_EQ(rig.sim->preemptions(), 0);
}

// A request that has not used up its quantum keeps its place: quantum 3
// with the same workload rotates A out only after its 3rd token.
TEST(RoundRobinLocal, QuantumCountsTokensSinceLastPlacement) {
  Rig rig(tinyInstance(4, 4), {req(0, 5, 4), req(0.1, 5, 4), req(0.2, 5, 4)}, rr(3));
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.5, {P(0, 5)}},
                                {1.5, 3.1, {D(0), P(1, 5)}},
                                {3.1, 4.3, {D(0), D(1)}},     // A: 2 tokens < 3, stays
                                {4.3, 6.1, {D(1), P(2, 5)}},  // A (3 tokens) out (+0.2)
                                {6.1, 7.7, {D(2), D(0)}},     // B (3 tokens) out, A in (+0.4); A done
                                {7.7, 9.1, {D(2), D(1)}},     // C (2 tokens) stays; B in (+0.2); B done
                                {9.1, 10.2, {D(2)}},
                            });
  EXPECT_EQ(rig.rec.of(RE::Preempted), (IdT{{0, ms(4.3)}, {1, ms(6.1)}}));
  EXPECT_EQ(rig.rec.of(RE::Resumed), (IdT{{0, ms(6.1)}, {1, ms(7.7)}}));
}

// With ample memory nothing is ever preempted and the running set is the
// whole queue, so RR (any quantum) gives exactly FCFS's token times.
TEST(RoundRobinLocal, EqualsFcfsWithAmpleMemory) {
  const std::vector<RequestSpec> reqs = {req(0, 7, 5),   req(0.05, 3, 9), req(0.3, 12, 2),
                                         req(1.0, 5, 6), req(2.2, 9, 4),  req(2.3, 1, 7),
                                         req(6.0, 30, 3), req(6.1, 2, 11)};
  Rig base(tinyInstance(1000, 4), reqs, fcfs());
  base.run();
  for (int quantum : {1, 2, 3, 500}) {
    SCOPED_TRACE("quantum " + std::to_string(quantum));
    Rig r(tinyInstance(1000, 4), reqs, rr(quantum));
    r.run();
    EXPECT_EQ(r.sim->preemptions(), 0);
    ASSERT_EQ(r.rec.tokens.size(), reqs.size());
    for (std::int64_t id = 0; id < static_cast<std::int64_t>(reqs.size()); ++id)
      EXPECT_EQ(r.tokens(id), base.tokens(id)) << "request " << id;
    ASSERT_EQ(r.rec.iters.size(), base.rec.iters.size());
    for (std::size_t i = 0; i < base.rec.iters.size(); ++i) {
      EXPECT_EQ(r.rec.iters[i].start, base.rec.iters[i].start);
      EXPECT_EQ(r.rec.iters[i].end, base.rec.iters[i].end);
    }
  }
}

}  // namespace
}  // namespace sl::test

namespace sl::test {
namespace {

std::vector<std::int64_t> ids(const std::deque<Request*>& q) {
  std::vector<std::int64_t> v;
  for (const Request* r : q) v.push_back(r->id);
  return v;
}

// The two readings of "goes to the tail" (local_rr.h). A and B start; A uses
// up its quantum; C arrives; then B uses up its quantum.
//   by quanta: C (no quantum used) goes ahead of A (one used): B C A, then C A B.
//   circular:  C joins the very tail:                           B A C, then A C B.
TEST(RoundRobinOrder, FreshRequestGoesAheadOfOneOnALaterQuantum) {
  for (const bool byQuanta : {true, false}) {
    Request a, b, c;
    a.id = 0;
    b.id = 1;
    c.id = 2;
    std::deque<Request*> q;
    std::vector<Request*> scratch;
    enqueueRoundRobin(q, a, byQuanta);
    enqueueRoundRobin(q, b, byQuanta);
    a.quantumUsed = 2;
    rotateExhausted(q, 2, byQuanta, scratch);
    EXPECT_EQ(ids(q), (std::vector<std::int64_t>{1, 0}));
    EXPECT_EQ(a.policyKey, 1);
    EXPECT_EQ(a.quantumUsed, 0);
    enqueueRoundRobin(q, c, byQuanta);
    EXPECT_EQ(ids(q), byQuanta ? (std::vector<std::int64_t>{1, 2, 0}) : (std::vector<std::int64_t>{1, 0, 2}));
    b.quantumUsed = 3;  // more than the quantum: rotates too
    rotateExhausted(q, 2, byQuanta, scratch);
    EXPECT_EQ(ids(q), byQuanta ? (std::vector<std::int64_t>{2, 0, 1}) : (std::vector<std::int64_t>{0, 2, 1}));
    // A on its 3rd quantum goes behind B (2nd) when ordered by quanta.
    a.quantumUsed = 2;
    rotateExhausted(q, 2, byQuanta, scratch);
    EXPECT_EQ(a.policyKey, 2);
    EXPECT_EQ(ids(q), byQuanta ? (std::vector<std::int64_t>{2, 1, 0}) : (std::vector<std::int64_t>{2, 1, 0}));
  }
}

// End to end on one instance with room for two 2-block requests (1-token
// prompt + 7 outputs): five take turns (quantum 1) when a sixth arrives at
// 3 ms. Ordered by quanta it is at the head of the queue at once; in the
// circular order it joins the tail. Both runs finish every request.
TEST(RoundRobinOrder, FreshArrivalJoinsTheHeadOrTheTail) {
  const std::vector<RequestSpec> reqs = {req(0, 1, 7),   req(0.1, 1, 7), req(0.2, 1, 7),
                                         req(0.3, 1, 7), req(0.4, 1, 7), req(3.0, 1, 7)};
  Rig byQ(tinyInstance(4, 4), reqs, rr(1, true));
  Rig circ(tinyInstance(4, 4), reqs, rr(1, false));
  byQ.sim->run(ms(3.0));
  circ.sim->run(ms(3.0));
  EXPECT_EQ(rrQueue(*byQ.sim), (std::vector<std::int64_t>{5, 0, 1, 2, 3, 4}));
  EXPECT_EQ(rrQueue(*circ.sim), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  byQ.run();
  circ.run();
  EXPECT_EQ(byQ.sim->finishedCount(), 6);
  EXPECT_EQ(circ.sim->finishedCount(), 6);
}

}  // namespace
}  // namespace sl::test
