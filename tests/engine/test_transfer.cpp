// Inter-instance KV transfers: stop-and-copy migration, disaggregated
// hand-off and live migration (10-engine.md "Migration between instances").
#include <gtest/gtest.h>

#include "engine_test_util.h"

namespace sl::enginetest {
namespace {

constexpr double kNic = 1073741824.0;  // 2^30 B/s (smallConfig's NIC)

// Request 0: prompt 32, R = 4, A = 4. Its reasoning ends at the end of its
// 4th iteration with 35 tokens of KV (the 4th token's slot is written by the
// next decode), i.e. 3 blocks of 16; the destination reserves blocks(36) = 3.
struct MigrationTimeline {
  SimTime gR;
};

MigrationTimeline sourceTimeline(const Harness& h, SimTime t0 = 0) {
  SimTime t = t0 + h.iterNs(prefillShape(32));
  for (double L = 33; L <= 35; ++L) t += h.iterNs(decodeShape({L}));
  return {t};
}

struct LinkCase {
  const char* name;
  int gpusPerNode;
  double nvlink;
  double expectBw;
};

class StopAndCopy : public ::testing::TestWithParam<LinkCase> {};

TEST_P(StopAndCopy, TransferTimeAndAccounting) {
  const LinkCase lc = GetParam();
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  c.gpusPerNode = lc.gpusPerNode;
  c.nvlinkBytesPerSec = lc.nvlink;
  Harness h(cost, c, {spec(0, 0, 32, 4, 4)});
  bool accepted = false;
  h.global->onReasoning = [&](Simulator& s, Request& r) { accepted = s.migrate(r, 1); };

  const SimTime gR = sourceTimeline(h).gR;
  const SimTime flow = h.flowNs(35, lc.expectBw);
  const SimTime tEnd = gR + c.linkLatency + flow;
  // Half-way through the copy: the source keeps its blocks, the destination
  // has reserved, the snapshot shows the transfer at 50 %.
  bool checked = false;
  h.sim->sendMessage(gR + c.linkLatency + flow / 2, [&] {
    checked = true;
    EXPECT_TRUE(accepted);
    const Request* r = h.active(0);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->state, ReqState::Migrating);
    EXPECT_EQ(r->instance, 0);
    EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 3);
    EXPECT_EQ(h.sim->instance(1).gpuBlocksReserved(), 3);
    EXPECT_EQ(h.sim->instance(1).gpuBlocksUsed(), 0);
    EXPECT_FALSE(h.sim->instance(0).busy());
    EXPECT_FALSE(h.sim->instance(1).busy());
    Snapshot snap;
    h.sim->fillSnapshot(snap);
    ASSERT_EQ(snap.transfers.size(), 1u);
    EXPECT_EQ(snap.transfers[0].requestId, 0);
    EXPECT_EQ(snap.transfers[0].src, 0);
    EXPECT_EQ(snap.transfers[0].dst, 1);
    EXPECT_FALSE(snap.transfers[0].live);
    EXPECT_NEAR(snap.transfers[0].progress, static_cast<double>(flow / 2) / static_cast<double>(flow), 1e-6);
    EXPECT_EQ(snap.instances[1].gpuBlocksReserved, 3);
    EXPECT_EQ(snap.instances[0].gpuBlocksUsed, 3);
  });
  h.run();
  EXPECT_TRUE(checked);

  ASSERT_EQ(h.rec.transfers.size(), 1u);
  const TransferRec& tr = h.rec.transfers[0];
  EXPECT_EQ(tr.src, 0);
  EXPECT_EQ(tr.dst, 1);
  EXPECT_EQ(tr.start, gR);
  EXPECT_EQ(tr.end, tEnd);
  EXPECT_DOUBLE_EQ(tr.bytes, 35 * c.kvBytesPerToken);

  // No decode on the source after the move; the destination starts at the copy end.
  const auto src = h.rec.itersOf(0);
  const auto dst = h.rec.itersOf(1);
  ASSERT_EQ(src.size(), 4u);
  EXPECT_EQ(src.back().end, gR);
  ASSERT_EQ(dst.size(), 4u);
  SimTime t = tEnd;
  for (std::size_t i = 0; i < dst.size(); ++i) {
    EXPECT_EQ(dst[i].start, t);
    EXPECT_EQ(dst[i].end, t + h.iterNs(decodeShape({36.0 + static_cast<double>(i)})));
    EXPECT_EQ(dst[i].entries, (std::vector<EntryRec>{{0, 1, false, 3}}));
    t = dst[i].end;
  }
  const RequestRecord& rec = h.record(0);
  EXPECT_EQ(rec.instance, 1);
  EXPECT_EQ(rec.migrations, 1);
  EXPECT_EQ(rec.migrating, tEnd - gR);
  EXPECT_EQ(rec.blocking, tEnd - gR);
  EXPECT_EQ(rec.reasoning_end, gR);
  EXPECT_EQ(rec.first_visible, dst[0].end);
  EXPECT_EQ(rec.generated, 8);
  EXPECT_EQ(h.sim->migrations(), 1);
  EXPECT_EQ(h.sim->instance(0).tokensProduced(), 4);
  EXPECT_EQ(h.sim->instance(1).tokensProduced(), 4);
  EXPECT_EQ(h.sim->finishedCount(), 1);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(h.sim->instance(i).gpuBlocksUsed(), 0);
    EXPECT_EQ(h.sim->instance(i).gpuBlocksReserved(), 0);
    EXPECT_EQ(h.sim->instance(i).assignedRequests(), 0);
  }
  std::vector<EventRec> want = {{RequestEvent::Arrived, 0, 0, 0},        {RequestEvent::FirstScheduled, 0, 0, 0},
                                {RequestEvent::ReasoningEnd, 0, 0, gR},  {RequestEvent::MigrationStart, 0, 0, gR},
                                {RequestEvent::MigrationEnd, 0, 1, tEnd}, {RequestEvent::Finished, 0, 1, dst[3].end}};
  EXPECT_EQ(h.rec.events, want);
}

INSTANTIATE_TEST_SUITE_P(Transfer, StopAndCopy,
                         ::testing::Values(LinkCase{"Nic", 1, 0, kNic},
                                           LinkCase{"NvlinkInNode", 8, 4294967296.0, 4294967296.0},
                                           LinkCase{"HostLinkInNodeWithoutNvlink", 8, 0, 64e9}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Transfer, MigrationWaitsForDestinationBlocks) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 5);
  // Request 1 occupies 3 of instance 1's 5 blocks until it finishes; the
  // migrating request 0 needs 3 and waits (keeping its source blocks).
  Harness h(cost, c, {spec(0, 0, 32, 4, 4), spec(1, 0, 40, 0, 5)});
  h.global->onRoute = [](const Request& r) { return static_cast<int>(r.id); };
  h.global->onReasoning = [](Simulator& s, Request& r) { EXPECT_TRUE(s.migrate(r, 1)); };
  const SimTime gR = sourceTimeline(h).gR;
  SimTime tC = h.iterNs(prefillShape(40));
  for (double L = 41; L <= 44; ++L) tC += h.iterNs(decodeShape({L}));
  ASSERT_GT(tC, gR);
  h.sim->run(gR + 1);
  ASSERT_NE(h.active(0), nullptr);
  EXPECT_EQ(h.active(0)->state, ReqState::Migrating);
  EXPECT_EQ(h.sim->instance(1).gpuBlocksReserved(), 0);
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 3);
  h.run();
  ASSERT_EQ(h.rec.transfers.size(), 1u);
  const SimTime tEnd = tC + c.linkLatency + h.flowNs(35, kNic);
  EXPECT_EQ(h.rec.transfers[0].start, tC);
  EXPECT_EQ(h.rec.transfers[0].end, tEnd);
  EXPECT_EQ(h.record(0).migrating, tEnd - gR);
  EXPECT_EQ(h.record(0).instance, 1);
  EXPECT_EQ(h.record(1).last_token, tC);
}

TEST(Transfer, WaitCycleAbandonsTheNewestCopyAndEveryRequestFinishes) {
  // Two instances of 4 blocks, one request on each. Both reach </think> in the
  // same instant holding 3 blocks (36 tokens + 1) and each moves to the
  // other, which has 1 block free: each copy waits for blocks the other one
  // holds, a cycle no event can break. The engine abandons the newer copy
  // (request 1's, decided second); request 1 resumes on instance 1, finishes
  // there, and request 0's copy then starts into the blocks it freed.
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 4);
  Harness h(cost, c, {spec(0, 0, 32, 4, 4), spec(1, 0, 32, 4, 4)});
  h.global->onRoute = [](const Request& r) { return static_cast<int>(r.id); };
  std::vector<std::int64_t> order;
  h.global->onReasoning = [&](Simulator& s, Request& r) {
    order.push_back(r.id);
    EXPECT_TRUE(s.migrate(r, 1 - r.instance));
  };
  const SimTime gR = sourceTimeline(h).gR;
  h.sim->run(gR + 1);
  ASSERT_EQ(order, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(h.sim->migrationsAbandoned(), 1);
  ASSERT_NE(h.active(0), nullptr);
  ASSERT_NE(h.active(1), nullptr);
  EXPECT_EQ(h.active(0)->state, ReqState::Migrating);
  EXPECT_EQ(h.active(1)->state, ReqState::Running);
  EXPECT_EQ(h.active(1)->instance, 1);
  h.run();
  EXPECT_FALSE(h.sim->stalled());
  EXPECT_EQ(h.sim->inFlight(), 0);
  EXPECT_EQ(h.sim->finishedCount(), 2);
  EXPECT_EQ(h.sim->migrations(), 1);
  EXPECT_EQ(h.record(1).instance, 1);
  EXPECT_EQ(h.record(1).migrations, 0);
  EXPECT_EQ(h.record(1).migrating, 0);  // left and came back in the same instant
  EXPECT_EQ(h.record(0).instance, 1);
  EXPECT_EQ(h.record(0).migrations, 1);
  // Request 0's copy starts when request 1 finishes on instance 1.
  ASSERT_EQ(h.rec.transfers.size(), 1u);
  EXPECT_EQ(h.rec.transfers[0].id, 0);
  EXPECT_EQ(h.rec.transfers[0].start, h.record(1).last_token);
}

TEST(Transfer, IncomingCopiesAreServedFcfs) {
  // Instance 1 has 2 free blocks until request 2 finishes. Request 0 (needs 3)
  // queues first; request 1 needs only 2, which are free, but waits behind it.
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 3, 5);
  Harness h(cost, c, {spec(0, 0, 32, 4, 4), spec(2, 0, 40, 0, 8), spec(1, 5 * kMs, 16, 4, 4)});
  h.global->onRoute = [](const Request& r) { return r.id == 0 ? 0 : r.id == 1 ? 2 : 1; };
  h.global->onReasoning = [](Simulator& s, Request& r) { EXPECT_TRUE(s.migrate(r, 1)); };
  SimTime tC = h.iterNs(prefillShape(40));
  for (double L = 41; L <= 47; ++L) tC += h.iterNs(decodeShape({L}));
  SimTime gR1 = 5 * kMs + h.iterNs(prefillShape(16));
  for (double L = 17; L <= 19; ++L) gR1 += h.iterNs(decodeShape({L}));
  ASSERT_GT(tC, gR1);
  ASSERT_GT(gR1, sourceTimeline(h).gR);
  h.run();
  ASSERT_EQ(h.rec.transfers.size(), 2u);
  // Both start when request 2 frees its blocks, and share instance 1's NIC:
  // request 1 (19 tokens) finishes first at half rate, then request 0's last
  // 16 tokens go at full rate.
  const TransferRec& t1 = h.rec.transfers[0];
  const TransferRec& t0 = h.rec.transfers[1];
  ASSERT_EQ(t1.id, 1);
  ASSERT_EQ(t0.id, 0);
  EXPECT_EQ(t0.start, tC);
  EXPECT_EQ(t1.start, tC);
  EXPECT_EQ(t1.end, tC + c.linkLatency + h.flowNs(19, kNic / 2));
  EXPECT_EQ(t0.end, t1.end + h.flowNs(35 - 19, kNic));
  EXPECT_EQ(h.record(0).instance, 1);
  EXPECT_EQ(h.record(1).instance, 1);
  EXPECT_EQ(h.record(1).migrating, t1.end - gR1);
  EXPECT_EQ(h.record(0).migrating, t0.end - sourceTimeline(h).gR);
}

TEST(Transfer, ConcurrentMigrationsThroughOneNicShareIt) {
  const CostModel& cost = llama8b();
  // Baseline: one migration node 0 -> node 1.
  SimConfig c = smallConfig(cost, 4, 100);
  c.gpusPerNode = 2;
  Harness one(cost, c, {spec(0, 0, 32, 4, 4)});
  one.global->onReasoning = [](Simulator& s, Request& r) { EXPECT_TRUE(s.migrate(r, 2)); };
  one.run();
  ASSERT_EQ(one.rec.transfers.size(), 1u);
  const SimTime single = one.rec.transfers[0].end - one.rec.transfers[0].start;
  EXPECT_EQ(single, c.linkLatency + one.flowNs(35, kNic));

  // Two identical requests on instances 0 and 1 (node 0) move to 2 and 3
  // (node 1) at the same moment: both cross node 0's NIC and node 1's NIC.
  Harness two(cost, c, {spec(0, 0, 32, 4, 4), spec(1, 0, 32, 4, 4)});
  two.global->onRoute = [](const Request& r) { return static_cast<int>(r.id); };
  two.global->onReasoning = [](Simulator& s, Request& r) { EXPECT_TRUE(s.migrate(r, 2 + static_cast<int>(r.id))); };
  two.run();
  ASSERT_EQ(two.rec.transfers.size(), 2u);
  const SimTime gR = sourceTimeline(two).gR;
  for (const auto& tr : two.rec.transfers) {
    EXPECT_EQ(tr.start, gR);
    EXPECT_EQ(tr.end, gR + c.linkLatency + two.flowNs(35, kNic / 2));
    EXPECT_EQ(tr.end - tr.start - c.linkLatency, 2 * (single - c.linkLatency));
  }
  EXPECT_EQ(two.record(0).instance, 2);
  EXPECT_EQ(two.record(1).instance, 3);
}

TEST(Transfer, MigrateRequestedMidIterationLeavesAtIterationEnd) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  Harness h(cost, c, {spec(0, 0, 16, 0, 5)});
  const SimTime t1 = h.iterNs(prefillShape(16));
  const SimTime t2 = t1 + h.iterNs(decodeShape({17}));
  bool ok = false;
  h.global->onRoute = [&](const Request&) {
    h.sim->sendMessage(t1 + (t2 - t1) / 2, [&] {
      const Request* r = h.active(0);
      ASSERT_NE(r, nullptr);
      ok = h.sim->migrate(*const_cast<Request*>(r), 1);
    });
    return 0;
  };
  h.run();
  EXPECT_TRUE(ok);
  ASSERT_EQ(h.rec.transfers.size(), 1u);
  EXPECT_EQ(h.rec.transfers[0].start, t2);  // after the running iteration
  EXPECT_EQ(h.rec.transfers[0].bytes, 17 * c.kvBytesPerToken);
  EXPECT_EQ(h.rec.itersOf(0).size(), 2u);
  EXPECT_EQ(h.rec.itersOf(1).size(), 3u);
  EXPECT_EQ(h.record(0).instance, 1);
  EXPECT_EQ(h.record(0).generated, 5);
}

// A stop-and-copy requested during the request's last iteration must not
// touch the request after it finished (it used to be started on the released
// request: a finished request "migrated" and ran again on the destination).
TEST(Transfer, MigrateRequestedDuringLastIterationIsDropped) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  Harness h(cost, c, {spec(0, 0, 16, 0, 3)});
  const SimTime t2 = h.iterNs(prefillShape(16)) + h.iterNs(decodeShape({17}));
  const SimTime t3 = t2 + h.iterNs(decodeShape({18}));
  bool ok = false;
  h.global->onRoute = [&](const Request&) {
    h.sim->sendMessage(t2 + (t3 - t2) / 2, [&] {
      const Request* r = h.active(0);
      ASSERT_NE(r, nullptr);
      ok = h.sim->migrate(*const_cast<Request*>(r), 1);
    });
    return 0;
  };
  h.run();
  EXPECT_TRUE(ok);
  EXPECT_TRUE(h.rec.transfers.empty());
  EXPECT_EQ(h.rec.itersOf(1).size(), 0u);
  ASSERT_EQ(h.sim->records().size(), 1u);
  EXPECT_EQ(h.record(0).instance, 0);
  EXPECT_EQ(h.record(0).migrations, 0);
  EXPECT_EQ(h.record(0).last_token, t3);
  EXPECT_EQ(h.sim->migrations(), 0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(h.sim->instance(i).assignedRequests(), 0) << i;
    EXPECT_EQ(h.sim->instance(i).gpuBlocksUsed(), 0) << i;
    EXPECT_EQ(h.sim->instance(i).gpuBlocksReserved(), 0) << i;
  }
  for (const auto& e : h.rec.events) EXPECT_NE(e.e, RequestEvent::MigrationStart);
  // The migration slot is free again: a later migration works normally.
  EXPECT_EQ(h.sim->inFlight(), 0);
}

TEST(Transfer, MigrateRefusals) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  Harness h(cost, c, {spec(0, 0, 32, 4, 4)});
  std::vector<bool> got;
  h.global->onReasoning = [&](Simulator& s, Request& r) {
    got.push_back(s.migrate(r, 0));   // its own instance
    got.push_back(s.migrate(r, 7));   // no such instance
    got.push_back(s.migrate(r, -1));
    got.push_back(s.migrate(r, 1));   // ok
    got.push_back(s.migrate(r, 1));   // already moving
    got.push_back(s.migrateLive(r, 1));
  };
  h.run();
  EXPECT_EQ(got, (std::vector<bool>{false, false, false, true, false, false}));
  EXPECT_EQ(h.record(0).migrations, 1);
}

TEST(Transfer, MigrateRefusedWhenDestinationCanNeverHoldIt) {
  // 4 blocks of 4 tokens. At its reasoning end the request holds 16 tokens of
  // KV and would need a 5th block anywhere: no instance can ever take it, so
  // the move is refused (it used to wait forever) and the request, unable to
  // grow, is aborted on its source.
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 4, 4);
  Harness h(cost, c, {spec(0, 0, 8, 9, 4), spec(1, 50 * kMs, 8, 0, 2)});
  std::vector<bool> got;
  h.global->onReasoning = [&](Simulator& s, Request& r) { got.push_back(s.migrate(r, 1)); };
  h.run();
  EXPECT_EQ(got, std::vector<bool>{false});
  EXPECT_TRUE(h.rec.transfers.empty());
  EXPECT_EQ(h.sim->aborted(), 1);
  EXPECT_EQ(h.sim->finishedCount(), 1);
  EXPECT_EQ(h.record(1).generated, 2);
  EXPECT_EQ(h.sim->inFlight(), 0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(h.sim->instance(i).gpuBlocksUsed(), 0);
    EXPECT_EQ(h.sim->instance(i).gpuBlocksReserved(), 0);
    EXPECT_EQ(h.sim->instance(i).cpuBlocksUsed(), 0);
  }
}

// ---------------------------------------------------------------- hand-off

TEST(Handoff, PrefillInstanceEmitsFirstTokenThenDecodeInstanceContinues) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  Harness h(cost, c, {spec(0, 2 * kMs, 32, 0, 3)});
  h.sim->setRole(0, InstanceRole::Prefill);
  h.sim->setRole(1, InstanceRole::Decode);
  EXPECT_EQ(h.sim->instance(0).role(), InstanceRole::Prefill);
  h.run();
  const SimTime t1 = 2 * kMs + h.iterNs(prefillShape(32));
  const SimTime tE = t1 + c.linkLatency + h.flowNs(32, kNic);
  const RequestRecord& r = h.record(0);
  EXPECT_EQ(r.first_token, t1);
  EXPECT_EQ(r.first_visible, t1);  // TTFT is the prefill instance's token
  EXPECT_DOUBLE_EQ(*r.ttft(), nsToSeconds(t1 - 2 * kMs));
  EXPECT_EQ(r.handoff_wait, 0);
  EXPECT_EQ(r.migrating, tE - t1);
  EXPECT_EQ(r.migrations, 0);  // a hand-off is counted apart from migrations
  EXPECT_EQ(h.sim->handoffs(), 1);
  EXPECT_EQ(h.sim->migrations(), 0);
  EXPECT_EQ(r.instance, 1);
  EXPECT_EQ(h.rec.itersOf(0).size(), 1u);
  const auto dec = h.rec.itersOf(1);
  ASSERT_EQ(dec.size(), 2u);
  EXPECT_EQ(dec[0].start, tE);
  EXPECT_EQ(dec[1].end, tE + h.iterNs(decodeShape({33})) + h.iterNs(decodeShape({34})));
  EXPECT_EQ(r.last_token, dec[1].end);
  std::vector<RequestEvent> kinds;
  for (const auto& e : h.rec.eventsOf(0)) kinds.push_back(e.e);
  EXPECT_EQ(kinds, (std::vector<RequestEvent>{RequestEvent::Arrived, RequestEvent::FirstScheduled,
                                              RequestEvent::HandoffStart, RequestEvent::MigrationStart,
                                              RequestEvent::MigrationEnd, RequestEvent::Finished}));
}

TEST(Handoff, WaitsForDecodeInstanceMemory) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 5);
  // Request 1 runs on the decode instance and holds 3 of its 5 blocks until
  // it finishes; request 0 needs blocks(33) = 3 there.
  Harness h(cost, c, {spec(0, 0, 32, 0, 3), spec(1, 0, 40, 0, 5)});
  h.global->onRoute = [](const Request& r) { return static_cast<int>(r.id); };
  h.sim->setRole(0, InstanceRole::Prefill);
  h.sim->setRole(1, InstanceRole::Decode);
  const SimTime t1 = h.iterNs(prefillShape(32));
  SimTime tC = h.iterNs(prefillShape(40));
  for (double L = 41; L <= 44; ++L) tC += h.iterNs(decodeShape({L}));
  h.sim->run(t1 + 1);
  ASSERT_NE(h.active(0), nullptr);
  EXPECT_EQ(h.active(0)->state, ReqState::HandoffWait);
  EXPECT_EQ(h.sim->instance(0).gpuBlocksUsed(), 2);  // the prefill instance keeps the KV
  h.run();
  const SimTime tE = tC + c.linkLatency + h.flowNs(32, kNic);
  const RequestRecord& r = h.record(0);
  EXPECT_EQ(r.first_visible, t1);
  EXPECT_EQ(r.handoff_wait, tC - t1);
  EXPECT_EQ(r.migrating, tE - tC);
  EXPECT_EQ(r.instance, 1);
  EXPECT_EQ(r.last_token, tE + h.iterNs(decodeShape({33})) + h.iterNs(decodeShape({34})));
  EXPECT_EQ(h.record(1).handoff_wait, 0);
  EXPECT_EQ(h.record(1).migrations, 0);
}

// ---------------------------------------------------------------- live migration

// Tokens of KV request 0 (alone on instance 0, prompt `input`) holds at time
// t: prompt + tokens produced by iterations that ended by t, minus the last
// one (its slot is written by the next decode).
std::int64_t kvAt(const std::vector<IterRec>& its, std::int64_t input, SimTime t) {
  std::int64_t gen = 0;
  for (const auto& it : its)
    if (it.end <= t) ++gen;
  return gen == 0 ? 0 : input + gen - 1;
}

class Live : public ::testing::TestWithParam<int> {};  // param: liveMaxRounds

TEST_P(Live, RoundsCopyWhatThePreviousRoundLeftBehind) {
  const int maxRounds = GetParam();
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  const double bw = 33554432.0;  // 2^25 B/s: a token's KV takes 1/256 s
  c.nicBytesPerSec = bw;
  c.liveMaxRounds = maxRounds;
  Harness h(cost, c, {spec(0, 0, 64, 2, 200)});
  bool accepted = false;
  h.global->onReasoning = [&](Simulator& s, Request& r) {
    accepted = s.migrateLive(r, 1);
    EXPECT_EQ(s.liveMigrations(0), 1);
    EXPECT_EQ(s.liveMigrations(1), 1);
  };
  h.run();
  ASSERT_TRUE(accepted);
  const auto src = h.rec.itersOf(0);
  const auto dst = h.rec.itersOf(1);
  const auto& tr = h.rec.transfers;
  ASSERT_GE(tr.size(), 2u);
  if (maxRounds == 1) {
    EXPECT_EQ(tr.size(), 2u);
  } else {
    EXPECT_GE(tr.size(), 3u);
  }
  ASSERT_GE(src.size(), 2u);
  const SimTime gR = src[1].end;
  std::int64_t copied = 0;
  for (std::size_t i = 0; i < tr.size(); ++i) {
    const bool final = i + 1 == tr.size();
    const auto tokens = static_cast<std::int64_t>(std::llround(tr[i].bytes / c.kvBytesPerToken));
    EXPECT_EQ(tr[i].src, 0);
    EXPECT_EQ(tr[i].dst, 1);
    EXPECT_EQ(tr[i].end, tr[i].start + c.linkLatency + h.flowNs(tokens, bw)) << i;
    if (i == 0) {
      EXPECT_EQ(tr[i].start, gR);
      EXPECT_EQ(tokens, 64 + 2 - 1);
    } else if (!final) {
      EXPECT_EQ(tr[i].start, tr[i - 1].end) << i;  // next round starts at once
      EXPECT_EQ(tokens, kvAt(src, 64, tr[i].start) - copied) << i;
      EXPECT_GE(tokens, 16) << i;  // a round continues only while >= one block is left
    } else {
      // Final stop-and-copy: at the end of the source's running iteration.
      SimTime stop = kTimeNever;
      for (const auto& it : src)
        if (it.end >= tr[i - 1].end) stop = std::min(stop, it.end);
      EXPECT_EQ(tr[i].start, stop);
      EXPECT_EQ(src.back().end, stop);  // no decode on the source afterwards
      EXPECT_EQ(tokens, kvAt(src, 64, stop) - copied);
      const std::int64_t left = kvAt(src, 64, tr[i - 1].end) - copied;
      if (static_cast<int>(i) < maxRounds) {
        EXPECT_LT(left, 16);
      } else {
        EXPECT_EQ(static_cast<int>(i), maxRounds);
      }
    }
    copied += tokens;
  }
  // The request kept decoding during the rounds, then moved once.
  EXPECT_GT(src.size(), 3u);
  ASSERT_FALSE(dst.empty());
  EXPECT_EQ(dst.front().start, tr.back().end);
  const RequestRecord& r = h.record(0);
  EXPECT_EQ(r.instance, 1);
  EXPECT_EQ(r.migrations, 1);
  EXPECT_EQ(r.generated, 202);
  EXPECT_EQ(r.migrating, tr.back().end - tr.back().start);
  EXPECT_EQ(static_cast<std::int64_t>(src.size() + dst.size()), 202);
  EXPECT_EQ(copied, 64 + static_cast<std::int64_t>(src.size()) - 1);
  EXPECT_EQ(h.sim->liveMigrations(0), 0);
  EXPECT_EQ(h.sim->liveMigrations(1), 0);
  EXPECT_EQ(h.sim->instance(1).gpuBlocksReserved(), 0);
}

INSTANTIATE_TEST_SUITE_P(Transfer, Live, ::testing::Values(1, 8));

// The destination cannot take the blocks the request grew into during its
// pre-copy round: the final hand-over is abandoned (reservation released) and
// the request finishes on its source. It used to wait in the destination's
// queue for blocks nobody would free.
TEST(Transfer, LiveFinalCopyAbandonedWhenDestinationIsFull) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 4, 64);  // 4 blocks of 64 tokens
  c.nicBytesPerSec = 134217728.0;             // 2^27 B/s: 123 tokens take ~120 ms
  c.liveMaxRounds = 1;
  // Request 0 (instance 0): reasoning ends with 123 tokens of KV (2 blocks);
  // during the round it crosses into a 3rd block. Request 1 (instance 1)
  // holds 2 blocks there; with request 0's 2 reserved, none is free.
  Harness h(cost, c, {spec(0, 0, 64, 60, 40), spec(1, 300 * kMs, 65, 0, 100)});
  h.global->onRoute = [](const Request& r) { return static_cast<int>(r.id); };
  bool accepted = false;
  h.global->onReasoning = [&](Simulator& s, Request& r) { accepted = s.migrateLive(r, 1); };
  h.run();
  EXPECT_TRUE(accepted);
  ASSERT_EQ(h.rec.transfers.size(), 1u);  // the pre-copy round only
  EXPECT_EQ(h.rec.transfers[0].bytes, 123 * c.kvBytesPerToken);
  EXPECT_EQ(h.sim->finishedCount(), 2);
  EXPECT_EQ(h.record(0).instance, 0);
  EXPECT_EQ(h.record(0).migrations, 0);
  EXPECT_EQ(h.record(0).migrating, 0);
  EXPECT_EQ(h.record(0).generated, 100);
  EXPECT_EQ(h.record(1).preemptions, 0);
  EXPECT_EQ(h.rec.itersOf(0).size(), 100u);  // every token on the source
  for (const auto& e : h.rec.eventsOf(0)) EXPECT_NE(e.e, RequestEvent::MigrationStart);
  EXPECT_EQ(h.sim->liveMigrations(0), 0);
  EXPECT_EQ(h.sim->liveMigrations(1), 0);
  EXPECT_EQ(h.sim->instance(1).gpuBlocksReserved(), 0);
}

// A request whose prefill ends on a prefill-role instance at the same moment
// as its reasoning (R = 1) while the policy starts a live migration: the
// hand-off wins and the request moves exactly once (it used to be moved by
// both, corrupting both instances' block counts).
TEST(Handoff, LiveMigrationStartedAtReasoningEndGivesWayToTheHandoff) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 3, 100);
  Harness h(cost, c, {spec(0, 0, 32, 1, 5)});
  h.sim->setRole(0, InstanceRole::Prefill);
  h.sim->setRole(1, InstanceRole::Decode);
  h.sim->setRole(2, InstanceRole::Decode);
  bool live = false;
  h.global->onReasoning = [&](Simulator& s, Request& r) { live = s.migrateLive(r, 2); };
  h.run();
  EXPECT_TRUE(live);
  ASSERT_EQ(h.rec.transfers.size(), 1u);
  EXPECT_EQ(h.rec.transfers[0].dst, 1);  // the default hand-off target
  EXPECT_EQ(h.record(0).instance, 1);
  EXPECT_EQ(h.record(0).migrations, 0);  // moved once, by the hand-off
  EXPECT_EQ(h.sim->handoffs(), 1);
  EXPECT_EQ(h.record(0).generated, 6);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(h.sim->instance(i).gpuBlocksUsed(), 0) << i;
    EXPECT_EQ(h.sim->instance(i).gpuBlocksReserved(), 0) << i;
    EXPECT_EQ(h.sim->instance(i).assignedRequests(), 0) << i;
    EXPECT_EQ(h.sim->liveMigrations(i), 0) << i;
  }
  EXPECT_EQ(h.rec.itersOf(2).size(), 0u);
}

TEST(Transfer, LiveConcurrencyCapRefusesExtraMigrations) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  c.liveMaxConcurrent = 1;
  c.nicBytesPerSec = 33554432.0;
  Harness h(cost, c, {spec(0, 0, 64, 2, 200), spec(1, 0, 64, 2, 200)});
  std::vector<std::pair<std::int64_t, bool>> got;
  h.global->onReasoning = [&](Simulator& s, Request& r) { got.emplace_back(r.id, s.migrateLive(r, 1)); };
  h.run();
  EXPECT_EQ(got, (std::vector<std::pair<std::int64_t, bool>>{{0, true}, {1, false}}));
  EXPECT_EQ(h.record(0).instance, 1);
  EXPECT_EQ(h.record(0).migrations, 1);
  EXPECT_EQ(h.record(1).instance, 0);
  EXPECT_EQ(h.record(1).migrations, 0);
  EXPECT_EQ(h.record(1).generated, 202);
}

TEST(Transfer, LiveMigrationCancelledWhenRequestFinishesReleasesReservation) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 100);
  c.nicBytesPerSec = 33554432.0;  // 65 tokens take ~254 ms: far longer than 2 decodes
  Harness h(cost, c, {spec(0, 0, 64, 2, 2)});
  h.global->onReasoning = [](Simulator& s, Request& r) { EXPECT_TRUE(s.migrateLive(r, 1)); };
  const SimTime gR = h.iterNs(prefillShape(64)) + h.iterNs(decodeShape({65}));
  h.sim->run(gR + 1);
  EXPECT_EQ(h.sim->instance(1).gpuBlocksReserved(), 5);  // blocks(66)
  EXPECT_EQ(h.sim->liveMigrations(0), 1);
  Snapshot snap;
  h.sim->fillSnapshot(snap);
  ASSERT_EQ(snap.transfers.size(), 1u);
  EXPECT_TRUE(snap.transfers[0].live);
  ASSERT_NE(h.active(0), nullptr);
  EXPECT_EQ(h.active(0)->state, ReqState::Running);  // keeps decoding
  h.run();
  EXPECT_TRUE(h.rec.transfers.empty());
  EXPECT_EQ(h.sim->instance(1).gpuBlocksReserved(), 0);
  EXPECT_EQ(h.sim->liveMigrations(0), 0);
  EXPECT_EQ(h.sim->liveMigrations(1), 0);
  EXPECT_EQ(h.record(0).instance, 0);
  EXPECT_EQ(h.record(0).migrations, 0);
  EXPECT_EQ(h.record(0).migrating, 0);
  EXPECT_EQ(h.rec.itersOf(0).size(), 4u);
  // Ends long before the cancelled copy would have.
  EXPECT_LT(h.sim->now(), gR + 100 * kMs);
}

// A live migration cancelled during its start-up latency leaves a FlowStart
// event behind; a later transfer that reuses the migration slot must still
// wait its own latency.
TEST(Transfer, StaleFlowStartDoesNotStartALaterTransferEarly) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 4, 100);
  c.linkLatency = 50 * kMs;
  // Request 0 (instance 0): reasoning ends after its prefill; it finishes one
  // decode later, while its live copy is still in the latency phase.
  // Request 1 (instance 2) starts a stop-and-copy 20 ms later.
  Harness h(cost, c, {spec(0, 0, 16, 1, 1), spec(1, 20 * kMs, 16, 1, 50)});
  h.global->onRoute = [](const Request& r) { return r.id == 0 ? 0 : 2; };
  h.global->onReasoning = [](Simulator& s, Request& r) {
    if (r.id == 0) {
      EXPECT_TRUE(s.migrateLive(r, 1));
    } else {
      EXPECT_TRUE(s.migrate(r, 3));
    }
  };
  h.run();
  const SimTime gR1 = 20 * kMs + h.iterNs(prefillShape(16));
  ASSERT_EQ(h.rec.transfers.size(), 1u);
  EXPECT_EQ(h.rec.transfers[0].id, 1);
  EXPECT_EQ(h.rec.transfers[0].start, gR1);
  EXPECT_EQ(h.rec.transfers[0].end, gR1 + c.linkLatency + h.flowNs(16, kNic));
  EXPECT_EQ(h.record(1).migrating, c.linkLatency + h.flowNs(16, kNic));
  EXPECT_EQ(h.record(0).instance, 0);
  EXPECT_EQ(h.record(1).instance, 3);
}

}  // namespace
}  // namespace sl::enginetest
