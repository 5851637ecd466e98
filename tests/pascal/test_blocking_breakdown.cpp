// The blocking breakdown (docs/metrics.md "Blocking breakdown"): the engine
// splits each request's blocking latency by the state it spent it in. These
// tests rebuild the split from what an observer sees (request events with the
// state each leaves the request in, copy start times, iterations) and compare
// it with the record, part by part, to the nanosecond.
#include <gtest/gtest.h>

#include <map>

#include "../common/pascal_rig.h"
#include "metrics/summary.h"

namespace sl::pascaltest {
namespace {

struct Split {
  SimTime transfer = 0, destWait = 0, off = 0 /* displaced + preempted */, destQueue = 0, localQueue = 0;
};

/// Request events plus the start of each finished copy (by request, in order).
struct Timeline : test::Recorder {
  void onTransfer(const Request& r, int, int, SimTime start, SimTime end, double) override {
    copies[r.id].push_back({start, end});
  }
  std::map<std::int64_t, std::vector<std::pair<SimTime, SimTime>>> copies;

  /// The split of [t0, t1) of request `id` rebuilt from its events: from
  /// </think> on, each event leaves it in the state it records; a Migrating
  /// stretch is waiting until its copy's start, transfer after.
  Split rebuild(std::int64_t id, SimTime t0, SimTime t1) const {
    Split s;
    ReqState st = ReqState::Running;
    bool landed = false;
    SimTime since = t0;
    const auto add = [&](SimTime until) {
      if (until <= since) return;
      switch (st) {
        case ReqState::Running: (landed ? s.destQueue : s.localQueue) += until - since; break;
        case ReqState::Swapped:
        case ReqState::Waiting: s.off += until - since; break;
        case ReqState::Migrating: {
          SimTime start = until;  // the copy that ends at `until` started at ...
          for (const auto& [a, b] : copies.at(id))
            if (b == until) start = std::clamp(a, since, until);
          s.destWait += start - since;
          s.transfer += until - start;
          break;
        }
        default: ADD_FAILURE() << "state " << reqStateName(st) << " during blocking";
      }
      since = until;
    };
    for (const test::Ev& e : events) {
      if (e.id != id || e.t < t0 || e.kind == RequestEvent::ReasoningEnd) continue;
      if (e.t >= t1) break;
      add(e.t);
      st = e.state;
      if (e.kind == RequestEvent::MigrationEnd && e.instance >= 0 && st != ReqState::Migrating) landed = true;
    }
    add(t1);
    return s;
  }
  /// Start of the first iteration at or after t that ran request id.
  SimTime firstRunFrom(std::int64_t id, SimTime t) const {
    SimTime best = -1;
    for (const test::Iter& it : iters)
      if (it.start >= t && (best < 0 || it.start < best))
        for (const test::Entry& e : it.batch)
          if (e.id == id) best = it.start;
    return best;
  }
};

/// Checks every record with a blocking latency against its rebuilt split;
/// returns the summed split (to see which parts a run exercised).
Split checkAll(PascalRig& rig, const Timeline& tl) {
  Split total;
  int checked = 0;
  for (const RequestRecord& r : rig.sim->records()) {
    if (r.blocking < 0) continue;
    SCOPED_TRACE("request " + std::to_string(r.id));
    const SimTime t0 = r.reasoning_end, t1 = r.reasoning_end + r.blocking;
    EXPECT_EQ(tl.firstRunFrom(r.id, t0), t1);  // blocking ends at its first schedule after </think>
    const Split s = tl.rebuild(r.id, t0, t1);
    EXPECT_EQ(r.blk_transfer, s.transfer);
    EXPECT_EQ(r.blk_dest_wait, s.destWait);
    EXPECT_EQ(r.blk_displaced + r.blk_preempted, s.off);
    EXPECT_EQ(r.blk_dest_queue, s.destQueue);
    EXPECT_EQ(r.blockingLocalQueue(), s.localQueue);
    EXPECT_GE(r.blk_displaced, 0);
    EXPECT_GE(r.blk_preempted, 0);
    EXPECT_EQ(r.blk_transfer + r.blk_dest_wait + r.blk_displaced + r.blk_preempted + r.blk_dest_queue +
                  r.blockingLocalQueue(),
              r.blocking);
    total.transfer += s.transfer;
    total.destWait += s.destWait;
    total.off += s.off;
    total.destQueue += s.destQueue;
    total.localQueue += s.localQueue;
    ++checked;
  }
  EXPECT_GT(checked, 0);
  return total;
}

// One copy on an idle fabric: its transfer part is exactly link latency +
// bytes / NIC bandwidth (35 KV tokens of llama-8b at 2^30 B/s), no waiting.
TEST(BlockingBreakdown, TransferPartIsTheCopyTime) {
  auto rigPtr = nicPairRig(1);
  PascalRig& rig = *rigPtr;
  const SimConfig& c = rig.sim->config();
  Timeline tl;
  rig.sim->addObserver(&tl);
  rig.run();
  const RequestRecord x = rig.record(1);
  ASSERT_EQ(x.migrations, 1);
  const SimTime flow = static_cast<SimTime>(std::ceil(35 * c.kvBytesPerToken / 1073741824.0 * 1e9));
  EXPECT_EQ(x.blk_transfer, c.linkLatency + flow);
  EXPECT_EQ(x.blk_dest_wait, 0);
  EXPECT_EQ(x.blk_displaced, 0);
  EXPECT_EQ(x.blk_preempted, 0);
  EXPECT_GE(x.blocking, c.linkLatency + flow);
  checkAll(rig, tl);
}

// A migrant at a full destination (the Displacement test's cluster): its
// copy's wait for room is the dest_wait part, the copy the transfer part.
// Displacing residents (between the destination's iterations) cuts the wait
// to the end of the iteration running there.
SimTime destWaitAtAFullDestination(bool displace) {
  auto rigPtr = fullDestinationRig(displace);
  PascalRig& rig = *rigPtr;
  Timeline tl;
  rig.sim->addObserver(&tl);
  rig.run();
  const RequestRecord x = rig.record(0);
  EXPECT_EQ(x.migrations, 1);
  EXPECT_EQ(tl.copies.at(0).size(), 1u);
  const auto [copyStart, copyEnd] = tl.copies.at(0).front();
  EXPECT_EQ(x.blk_dest_wait, copyStart - x.reasoning_end);
  EXPECT_EQ(x.blk_transfer, copyEnd - copyStart);
  EXPECT_EQ(rig.sim->displacements(), displace ? 1 : 0);
  checkAll(rig, tl);
  return x.blk_dest_wait;
}

TEST(BlockingBreakdown, WaitingForRoomIsDestWait) {
  const SimTime waits = destWaitAtAFullDestination(false);
  const SimTime displaces = destWaitAtAFullDestination(true);
  EXPECT_GT(displaces, 0);  // the destination's running iteration ends first
  EXPECT_GT(waits, 10 * displaces);
}

// A crowded cluster (tight KV, every boundary migrates): every part occurs,
// and each record's split matches the one rebuilt from its events.
TEST(BlockingBreakdown, EveryRecordMatchesItsEventsUnderPressure) {
  for (const bool displace : {false, true}) {
    SCOPED_TRACE(displace ? "displaces" : "waits");
    PascalGlobalConfig gc;
    gc.migration = PascalMigration::Always;
    gc.displace = displace;
    PascalLocalConfig lc;
    lc.answeringQuantum = 3;
    lc.reasoningQuantum = 4;
    lc.quantaPerInstance = true;
    std::vector<RequestSpec> reqs;
    for (int i = 0; i < 24; ++i) reqs.push_back(rq(0.7 * i, 4 + (i * 7) % 9, 4 + (i * 5) % 13, 2 + (i * 3) % 7));
    PascalRig rig(test::tinyInstance(6, 8), reqs, 3, gc, lc);
    Timeline tl;
    rig.sim->addObserver(&tl);
    rig.run();
    EXPECT_EQ(rig.sim->finishedCount(), 24);
    const Split total = checkAll(rig, tl);
    EXPECT_GT(total.transfer, 0);
    EXPECT_GT(total.off, 0);
    EXPECT_GT(total.localQueue + total.destQueue, 0);
    SimTime displaced = 0;
    for (const RequestRecord& r : rig.sim->records()) displaced += r.blk_displaced;
    if (!displace) {
      EXPECT_EQ(displaced, 0);  // without displacement every eviction is a preemption
    }
  }
}

// The summary's breakdown: means over every request with blocking, and over
// the p99 tail; hand-built records with known parts.
TEST(BlockingBreakdown, SummaryMeansAndTail) {
  std::vector<RequestRecord> recs;
  for (int i = 0; i < 100; ++i) {
    RequestRecord r;
    r.id = i;
    r.finished = true;
    r.reasoning = 2;
    r.answer = 2;
    r.generated = 4;
    r.reasoning_end = 0;
    r.first_visible = 1;
    r.last_token = 2;
    r.blocking = 10'000'000;  // 10 ms: 4 transfer, 6 local queue
    r.blk_transfer = 4'000'000;
    if (i == 99) {  // the tail: 1 s = 0.5 dest wait, 0.2 displaced, 0.1 preempted, 0.15 dest queue, 0.05 local
      r.blocking = 1'000'000'000;
      r.blk_transfer = 0;
      r.blk_dest_wait = 500'000'000;
      r.blk_displaced = 200'000'000;
      r.blk_preempted = 100'000'000;
      r.blk_dest_queue = 150'000'000;
    }
    recs.push_back(r);
  }
  RequestRecord none;  // R = 0: no blocking, not counted
  none.id = 100;
  none.finished = true;
  none.answer = 1;
  none.generated = 1;
  recs.push_back(none);
  const Summary s = summarize(recs, 101, 2'000'000'000, SloSpec{});
  const BlockingBreakdown& bd = s.blocking_breakdown;
  ASSERT_EQ(bd.n, 100);
  EXPECT_DOUBLE_EQ(bd.mean_s[0], 99 * 0.004 / 100);                 // transfer
  EXPECT_DOUBLE_EQ(bd.mean_s[1], 0.5 / 100);                        // dest_wait
  EXPECT_DOUBLE_EQ(bd.mean_s[2], 0.2 / 100);                        // displaced
  EXPECT_DOUBLE_EQ(bd.mean_s[3], 0.1 / 100);                        // preempted
  EXPECT_DOUBLE_EQ(bd.mean_s[4], 0.15 / 100);                       // dest_queue
  EXPECT_NEAR(bd.mean_s[5], (99 * 0.006 + 0.05) / 100, 1e-15);      // local_queue
  double sum = 0;
  for (double v : bd.mean_s) sum += v;
  EXPECT_NEAR(sum, s.blocking_s.mean, 1e-15);
  // p99 of 99 x 10 ms and one 1 s lies between them: the tail is request 99 alone.
  EXPECT_GT(bd.tail_threshold_s, 0.01);
  ASSERT_EQ(bd.tail_n, 1);
  EXPECT_DOUBLE_EQ(bd.tail_mean_s[0], 0.0);
  EXPECT_DOUBLE_EQ(bd.tail_mean_s[1], 0.5);
  EXPECT_DOUBLE_EQ(bd.tail_mean_s[2], 0.2);
  EXPECT_DOUBLE_EQ(bd.tail_mean_s[3], 0.1);
  EXPECT_DOUBLE_EQ(bd.tail_mean_s[4], 0.15);
  EXPECT_NEAR(bd.tail_mean_s[5], 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(bd.p99_s[0], 0.004);
  const nlohmann::ordered_json j = summaryToJson(s);
  ASSERT_TRUE(j.contains("blocking_breakdown"));
  EXPECT_EQ(j["blocking_breakdown"]["p99_tail"]["n"], 1);
  EXPECT_DOUBLE_EQ(j["blocking_breakdown"]["p99_tail"]["mean_s"]["dest_wait"].get<double>(), 0.5);
  // Without reasoning requests the section is absent (summaries keep their bytes).
  const Summary s0 = summarize({none}, 1, 2'000'000'000, SloSpec{});
  EXPECT_FALSE(summaryToJson(s0).contains("blocking_breakdown"));
}

}  // namespace
}  // namespace sl::pascaltest
