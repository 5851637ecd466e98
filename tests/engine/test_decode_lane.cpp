// The lazy decode lane (engine/decode_lane.h) must be invisible: a run in
// which FCFS keeps plain decodes in its lane (no observer, a progress-blind
// router) and the same run with an observer attached (every token eager)
// have the same trajectory, records, counters and snapshots, bit for bit.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>

#include "engine/decode_lane.h"
#include "engine_test_util.h"
#include "policy/cascade/cascade_global.h"
#include "policy/cascade/llumnix_global.h"
#include "policy/pascal/pascal_global.h"
#include "policy/pascal/pascal_local.h"
#include "util/rng.h"

namespace sl::enginetest {
namespace {

struct LaneCase {
  std::uint64_t seed = 1;
  int instances = 2;
  std::int64_t gpuBlocks = 400;
  std::int64_t cpuBlocks = 1000;  // 0: preemption recomputes
  std::int32_t blockSize = 16;
  bool chunked = true;
  std::int32_t maxNumSeqs = 256;
  std::int32_t maxTokens = 8192;
  bool reasoning = false;
  int requests = 120;
  SimTime gap = 2 * kMs;           // mean inter-arrival time
  std::optional<SimTime> stopAt;   // end with requests in flight
  RouterKind router = RouterKind::LeastLoaded;
  int mover = 0;  // a lane-aware global policy that watches and moves requests: 1 live moves, 2 also stop-and-copy
  // PASCAL (PascalGlobal + PascalLocal, whose lane holds reasoning requests too).
  bool pascal = false;
  PascalLocalConfig pascalLocal{};
  PascalGlobalConfig pascalGlobal{};
  std::int64_t knobAt = -1;  // after this many events: setPolicyKnob(knob, knobValue)
  std::string knob;
  double knobValue = 0;
};

// A lane-aware global policy (GlobalPolicy::laneAware) that does to lane
// members what CascadeInfer and Llumnix do: watches their length, re-arms
// watches, and moves them live or by stop-and-copy, both from a watch hit
// (between iterations) and from a timer (in the middle of a lane's step).
class LaneAwareMover : public RouterPolicy {
public:
  static inline int peekBehind = 0;  // lane members that peek left behind and resolve then synced
  static inline int rewatchedBehind = 0;  // lane members watched anew with tokens not yet synced
  explicit LaneAwareMover(bool stopAndCopy) : RouterPolicy(RouterKind::RoundRobin), stop_(stopAndCopy) {}
  const char* name() const override { return "lane-aware-mover"; }
  bool laneAware() const override { return true; }
  void attach(Simulator& sim) override {
    RouterPolicy::attach(sim);
    timer_ = sim.startTimer("mover", 7 * kMs);
  }
  void onArrival(Request& r) override { sim_->watchLength(r, r.input + 5 + static_cast<std::int32_t>(r.id % 40)); }
  void onLengthReached(Request& r) override {
    if (r.id % 3 == 0) sim_->watchLength(r, r.input + r.generated + 7);  // a new watch further on
    else move(r);
  }
  void onTimer(int timer) override {
    if (timer != timer_) return;
    // New watches on running requests read unsynced (CascadeInfer's
    // refinement): the length from generatedNow, the watch re-keyed by the
    // lane from its steps, the member never synced.
    ++ticks_;
    std::vector<const Request*> rewatch;
    sim_->forEachActiveUnsynced([&](const Request& r) {
      if (r.state == ReqState::Running && r.prefillDone() && r.migration < 0 && !r.synthetic && r.id % 4 == 1 &&
          ticks_ % 4 == 0)  // (every fourth tick: the watches stand long enough to fire)
        rewatch.push_back(&r);
    });
    // Every other round of new watches in a watch batch (the lanes' heaps
    // rebuilt once at its end, as CascadeInfer's refinement does): the
    // watches must fire as the eager run's do.
    std::optional<Simulator::WatchBatch> batch;
    if (ticks_ % 8 == 0) batch.emplace(*sim_);
    for (const Request* r : rewatch) {
      const std::int32_t before = r->generated;
      const std::int32_t now = sim_->generatedNow(*r);
      if (r->laneIndex >= 0 && now > before) ++rewatchedBehind;
      sim_->watchLength(const_cast<Request&>(*r), r->input + now + 2 + static_cast<std::int32_t>(r->id % 6));
      EXPECT_EQ(r->generated, before);  // watchLength does not sync it
    }
    // peek names the request without syncing a lane member; resolve syncs it.
    sim_->forEachActiveUnsynced([&](const Request& r) {
      const RequestHandle h = sim_->handleOf(r);
      const std::int32_t before = r.generated;
      EXPECT_EQ(sim_->peek(h), &r);
      EXPECT_EQ(r.generated, before);
      if (r.laneIndex >= 0 && sim_->resolve(h) == &r && r.generated > before) ++peekBehind;
    });
    const Request* pick = nullptr;  // the longest running sequence (the reader syncs lane members)
    sim_->forEachActive([&](const Request& r) {
      if (r.state != ReqState::Running || !r.prefillDone() || r.migration >= 0 || r.synthetic) return;
      if (!pick || r.kvTokens > pick->kvTokens || (r.kvTokens == pick->kvTokens && r.id < pick->id)) pick = &r;
    });
    if (pick) move(const_cast<Request&>(*pick));
  }
  void move(Request& r) {
    const int dst = (r.instance + 1) % sim_->numInstances();
    if (stop_ && r.id % 2 == 1) (void)sim_->migrate(r, dst, false);
    else (void)sim_->migrateLive(r, dst);
  }

private:
  bool stop_;
  int timer_ = -1;
  int ticks_ = 0;
};

struct ChipKey {
  std::int64_t id;
  std::uint8_t phase, state;
  std::int32_t kv, generated;
  bool inBatch;
  friend bool operator==(const ChipKey&, const ChipKey&) = default;
};

struct LaneOutcome {
  std::uint64_t fp = 0;
  std::int64_t events = 0, finished = 0, preemptions = 0, migrations = 0;
  std::vector<RequestRecord> records, open;
  std::vector<std::int64_t> counters;       // per instance: tokens, assigned tokens, KV blocks, iterations
  std::vector<std::vector<ChipKey>> snaps;  // every 5th step
  std::vector<std::int32_t> batchSizes;
  std::int64_t laneSteps = 0;
  std::vector<std::tuple<SimTime, std::int64_t, int, int, std::uint8_t, std::uint8_t>> decisions;  // PASCAL's
  std::int64_t demotions = 0;
};

std::vector<RequestSpec> workload(const LaneCase& c) {
  Rng g = Rng::forStream(c.seed, "lane-test");
  std::vector<RequestSpec> out;
  SimTime t = 0;
  for (int i = 0; i < c.requests; ++i) {
    t += static_cast<SimTime>(g.uniform01() * 2.0 * static_cast<double>(c.gap));
    const auto input = static_cast<std::int32_t>(1 + g.below(300));
    const auto reasoning = c.reasoning ? static_cast<std::int32_t>(g.below(c.pascal ? 300 : 60)) : 0;
    const auto answer = static_cast<std::int32_t>(1 + g.below(g.uniform01() < 0.2 ? 400 : 60));
    out.push_back(spec(i, t, input, reasoning, answer));
  }
  return out;
}

LaneOutcome runCase(const LaneCase& c, bool observe) {
  const CostModel& cost = llama8b();
  SimConfig cfg = smallConfig(cost, c.instances, c.gpuBlocks, c.blockSize);
  cfg.instance.cpuBlocks = c.cpuBlocks;
  cfg.instance.chunkedPrefill = c.chunked;
  cfg.instance.maxNumSeqs = c.maxNumSeqs;
  cfg.instance.maxBatchedTokens = c.maxTokens;
  cfg.instance.swapPreemption = c.cpuBlocks > 0;
  cfg.probeInterval = 50 * kMs;
  cfg.stopAt = c.stopAt;
  cfg.seed = c.seed;
  std::unique_ptr<GlobalPolicy> global;
  LocalPolicyFactory local = fcfsFactory();
  const PascalGlobal* pascal = nullptr;
  if (c.pascal) {
    auto pg = std::make_unique<PascalGlobal>(c.pascalGlobal);
    pascal = pg.get();
    global = std::move(pg);
    local = [lc = c.pascalLocal](int) { return std::make_unique<PascalLocal>(lc); };
  } else if (c.mover > 0) {
    global = std::make_unique<LaneAwareMover>(c.mover == 2);
  } else {
    global = std::make_unique<RouterPolicy>(c.router);
  }
  Simulator sim(cfg, cost, std::make_unique<ListWorkload>(workload(c)), std::move(global), std::move(local));
  SimObserver watcher;  // does nothing: its presence alone turns the lanes off
  if (observe) sim.addObserver(&watcher);
  LaneOutcome o;
  Snapshot snap;
  std::int64_t n = 0;
  while (sim.step()) {
    if (n + 1 == c.knobAt) {
      EXPECT_TRUE(sim.setPolicyKnob(c.knob, c.knobValue));
    }
    if (++n % 5 == 0) {
      sim.fillSnapshot(snap);
      std::vector<ChipKey> chips;
      for (const InstanceSnapshot& is : snap.instances) {
        o.batchSizes.push_back(is.batchSize);
        for (const auto& q : is.queues)
          for (const RequestChip& ch : q.requests)
            chips.push_back({ch.id, ch.phase, ch.state, ch.kvTokens, ch.generated, ch.inBatch});
      }
      o.snaps.push_back(std::move(chips));
    }
    if (n > 5'000'000) break;
  }
  EXPECT_TRUE(sim.done());
  o.fp = sim.fingerprint();
  o.events = sim.eventsProcessed();
  o.finished = sim.finishedCount();
  o.preemptions = sim.preemptions();
  o.migrations = sim.migrations();
  o.records = sim.records();
  o.open = sim.inFlightRecords();
  for (int i = 0; i < sim.numInstances(); ++i) {
    Instance& in = sim.instance(i);
    o.counters.insert(o.counters.end(), {in.tokensProduced(), in.assignedTokens(), in.gpuBlocksUsed(),
                                         in.cpuBlocksUsed(), in.iterations(), in.queuedPrefillTokens()});
    if (const DecodeLane* lane = in.policy().decodeLane()) o.laneSteps += lane->steps();
    if (const auto* pl = dynamic_cast<const PascalLocal*>(&in.policy())) o.demotions += pl->demotions();
  }
  if (pascal)
    for (const Decision& d : pascal->log().entries())
      o.decisions.emplace_back(d.time, d.requestId, d.chosen, d.instance, d.action, d.selection);
  return o;
}

void expectSameRun(const LaneOutcome& lazy, const LaneOutcome& eager) {
  EXPECT_EQ(lazy.fp, eager.fp);
  EXPECT_EQ(lazy.events, eager.events);
  EXPECT_EQ(lazy.preemptions, eager.preemptions);
  EXPECT_EQ(lazy.migrations, eager.migrations);
  EXPECT_EQ(lazy.counters, eager.counters);
  EXPECT_EQ(lazy.batchSizes, eager.batchSizes);
  EXPECT_EQ(lazy.demotions, eager.demotions);
  EXPECT_TRUE(lazy.decisions == eager.decisions);
  ASSERT_EQ(lazy.records.size(), eager.records.size());
  for (std::size_t i = 0; i < lazy.records.size(); ++i)
    EXPECT_TRUE(recordKey(lazy.records[i]) == recordKey(eager.records[i])) << "record " << i;
  ASSERT_EQ(lazy.open.size(), eager.open.size());
  for (std::size_t i = 0; i < lazy.open.size(); ++i)
    EXPECT_TRUE(recordKey(lazy.open[i]) == recordKey(eager.open[i])) << "in-flight record " << i;
  ASSERT_EQ(lazy.snaps.size(), eager.snaps.size());
  for (std::size_t i = 0; i < lazy.snaps.size(); ++i) EXPECT_TRUE(lazy.snaps[i] == eager.snaps[i]) << "snapshot " << i;
}

void checkCase(const LaneCase& c, bool expectLane = true) {
  SCOPED_TRACE("seed " + std::to_string(c.seed));
  const LaneOutcome lazy = runCase(c, false);
  const LaneOutcome eager = runCase(c, true);
  EXPECT_EQ(eager.laneSteps, 0);  // an observer turns the lanes off
  if (expectLane) {
    EXPECT_GT(lazy.laneSteps, 0);  // the lane did take over decodes
  }
  expectSameRun(lazy, eager);
}

// Simulator::WatchBatch: new watches appended and the heap rebuilt once
// fire at the same steps, in the same order, as the same watches pushed
// one at a time, whether they fall before, among or after the standing ones.
TEST(DecodeLane, WatchBatchFiresAsSinglePushes) {
  constexpr std::int32_t kBlock = 16;
  const auto run = [](bool batched) {
    std::vector<Request> reqs(60);
    DecodeLane lane;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      Request& r = reqs[i];
      r.id = static_cast<std::int64_t>(i);
      r.arrival = static_cast<SimTime>(i % 7);  // ties broken by id
      r.input = 100;
      r.prefillTarget = r.prefilled = 100;
      r.answer = 1000;
      r.generated = 1;
      r.kvTokens = 101;
      r.blocksGpu = 7;
      r.state = ReqState::Running;
      r.scheduled = true;
      r.lengthWatch = 101 + 5 + static_cast<std::int32_t>(i * 7 % 40);  // the standing watches
      lane.join(r, kBlock);
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> fired;  // (step, id)
    std::vector<Request*> fin, watchers, leave;
    const auto step = [&] {
      lane.beginStep();
      watchers.clear();
      lane.endStep(static_cast<SimTime>(lane.steps() + 1) * 1000, fin, watchers, leave);
      for (const Request* r : watchers) fired.emplace_back(lane.steps(), r->id);
    };
    for (int k = 0; k < 3; ++k) step();
    // New watches for two thirds of the members, spread from the next step
    // to far on; some back to a value they had (an old entry valid again).
    if (batched) lane.beginWatchBatch();
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      Request& r = reqs[i];
      if (i % 3 == 2) continue;
      const std::int32_t len = r.input + r.generated + lane.unsyncedTokens(r);
      r.lengthWatch = i % 5 == 0 ? 101 + 5 + static_cast<std::int32_t>(i * 7 % 40) : len + 1 + static_cast<std::int32_t>(i * 13 % 50);
      lane.rewatch(r);
    }
    if (batched) lane.endWatchBatch();
    for (int k = 0; k < 60; ++k) step();
    return fired;
  };
  const auto single = run(false);
  EXPECT_GT(single.size(), 40u);
  EXPECT_EQ(run(true), single);
}

TEST(DecodeLane, RoomyClusterMatchesEagerRun) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    LaneCase c;
    c.seed = seed;
    c.gpuBlocks = 4000;
    checkCase(c);
  }
}

TEST(DecodeLane, MemoryPressureWithSwapMatchesEagerRun) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    LaneCase c;
    c.seed = seed;
    c.gpuBlocks = 160;  // preemptions: the lane hands its members back and forth
    const LaneOutcome lazy = runCase(c, false);
    EXPECT_GT(lazy.preemptions, 0);
    checkCase(c);
  }
}

TEST(DecodeLane, RecomputePreemptionOddBlockSizesAndNoChunking) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    for (std::int32_t bs : {1, 5, 16}) {
      LaneCase c;
      c.seed = seed;
      c.blockSize = bs;
      c.gpuBlocks = 2600 / bs;
      c.cpuBlocks = seed % 2 ? 0 : 1000;
      c.chunked = seed > 2;
      checkCase(c);
    }
}

TEST(DecodeLane, SequenceAndTokenLimits) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaneCase c;
    c.seed = seed;
    c.gpuBlocks = 3000;
    c.maxNumSeqs = 6;
    c.maxTokens = seed % 2 ? 40 : 300;
    c.router = RouterKind::RoundRobin;
    checkCase(c);
  }
}

TEST(DecodeLane, ReasoningStreamsAndARunStoppedMidway) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaneCase c;
    c.seed = seed;
    c.reasoning = true;
    c.gpuBlocks = seed % 2 ? 250 : 3000;
    c.instances = 3;
    c.stopAt = 150 * kMs;  // ends with lane members in flight: their records are synced
    const LaneOutcome lazy = runCase(c, false);
    EXPECT_FALSE(lazy.open.empty());
    checkCase(c);
  }
}

TEST(DecodeLane, LaneAwarePolicyWatchesAndMovesMembers) {
  // Watches set on joining members, re-armed, reached in a step; members
  // released between steps (watch hits) and during one (the timer), moved
  // live and by stop-and-copy; with and without memory pressure.
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    for (int mover : {1, 2}) {
      LaneCase c;
      c.seed = seed;
      c.instances = 3;
      c.mover = mover;
      c.gpuBlocks = seed % 3 == 0 ? 200 : 3000;
      c.chunked = seed != 4;
      c.reasoning = seed == 5;
      LaneAwareMover::peekBehind = 0;
      LaneAwareMover::rewatchedBehind = 0;
      const LaneOutcome lazy = runCase(c, false);
      EXPECT_GT(lazy.migrations, 10);
      EXPECT_GT(LaneAwareMover::peekBehind, 0);
      EXPECT_GT(LaneAwareMover::rewatchedBehind, 0);
      checkCase(c);
    }
}

TEST(DecodeLane, LaneAwarePolicyRewatchesUnsyncedMembersOfALongLane) {
  // Sparse arrivals and long answers: lanes that live for many steps, so a
  // watch re-keyed from an unsynced member's steps (CascadeInfer's
  // refinement) is the one that fires.
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaneCase c;
    c.seed = seed;
    c.instances = 2;
    c.mover = 1;
    c.gpuBlocks = 4000;
    c.chunked = seed % 2 == 1;
    c.requests = 40;
    c.gap = 25 * kMs;
    LaneAwareMover::rewatchedBehind = 0;
    const LaneOutcome lazy = runCase(c, false);
    EXPECT_GT(LaneAwareMover::rewatchedBehind, 0);
    checkCase(c);
  }
}

// PASCAL's lane (PascalLocal): reasoning and answering members, rotations
// and demotions at the lane's horizon, waiting and swapped requests behind
// the members, migrations at </think> with displacement, knob changes in the
// middle of a run, a run stopped midway.
LaneCase pascalCase(std::uint64_t seed) {
  LaneCase c;
  c.seed = seed;
  c.pascal = true;
  c.reasoning = true;
  c.instances = 3;
  c.requests = 160;
  c.gap = 3 * kMs;
  c.pascalLocal.reasoningQuantum = 40 + static_cast<int>(seed % 3) * 30;
  c.pascalLocal.answeringQuantum = 25 + static_cast<int>(seed % 2) * 50;
  c.pascalLocal.demoteTokens = 250 + static_cast<int>(seed % 4) * 60;
  return c;
}

TEST(DecodeLane, PascalRoomyAndTightMatchEagerRun) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    LaneCase c = pascalCase(seed);
    c.gpuBlocks = seed % 2 ? 4000 : 260;  // tight: waiting and swapped requests, preemptions
    c.chunked = seed % 3 != 0;
    const LaneOutcome lazy = runCase(c, false);
    EXPECT_GT(lazy.demotions, 0);
    if (seed % 2 == 0) {
      EXPECT_GT(lazy.preemptions, 0);
    }
    EXPECT_GT(lazy.migrations, 0);  // Algorithm 2 moves requests at </think>
    checkCase(c);
  }
}

TEST(DecodeLane, PascalRecomputeOddBlocksLimitsAndByQuantaOff) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    for (std::int32_t bs : {1, 7, 16}) {
      LaneCase c = pascalCase(seed);
      c.blockSize = bs;
      c.gpuBlocks = 3600 / bs;
      c.cpuBlocks = seed % 2 ? 0 : 1000;
      c.maxNumSeqs = seed == 3 ? 5 : 256;
      c.maxTokens = seed == 4 ? 300 : 8192;
      c.pascalLocal.byQuanta = seed != 2;
      c.pascalLocal.quantaPerInstance = seed == 1;
      c.pascalGlobal.displace = seed != 4;
      checkCase(c);
    }
}

TEST(DecodeLane, PascalWithoutChunkingUnderMemoryPressure) {
  // B1's setting in small (vLLM V0, no chunked prefill, memory full): the
  // lane's members stay through prefill-only admissions and through decode
  // iterations that preempt (members among the victims) or swap requests
  // back in (PascalLocal::runBesideLane).
  for (std::uint64_t seed = 1; seed <= 8; ++seed)
    for (std::int32_t bs : {16, 7}) {
      LaneCase c = pascalCase(seed);
      c.chunked = false;
      c.blockSize = bs;
      c.gpuBlocks = (seed % 2 ? 2600 : 4200) / bs;
      c.cpuBlocks = seed % 4 == 3 ? 0 : 4000 / bs;
      c.requests = 240;
      c.gap = (seed % 3 + 1) * kMs;
      const LaneOutcome lazy = runCase(c, false);
      EXPECT_GT(lazy.preemptions, 0);
      checkCase(c);
    }
}

TEST(DecodeLane, PascalKnobChangesAndARunStoppedMidway) {
  const std::pair<const char*, double> knobs[] = {
      {"reasoning_quantum", 15}, {"answering_quantum", 10}, {"demote_tokens", 120}, {"reasoning_quantum", 400}};
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    LaneCase c = pascalCase(seed);
    c.gpuBlocks = seed % 2 ? 3000 : 300;
    c.knobAt = 500 + static_cast<std::int64_t>(seed) * 97;
    c.knob = knobs[seed % 4].first;
    c.knobValue = knobs[seed % 4].second;
    if (seed > 4) {
      c.stopAt = 200 * kMs;  // ends with lane members in flight: their records are synced
      const LaneOutcome lazy = runCase(c, false);
      EXPECT_FALSE(lazy.open.empty());
    }
    checkCase(c);
  }
}

TEST(DecodeLane, OnlyPlainFcfsWithAProgressBlindRouterUsesIt) {
  FcfsLocal fcfs;
  EXPECT_NE(fcfs.decodeLane(), nullptr);
  FcfsLocal priority([](const Request* a, const Request* b) { return a->id > b->id; });
  EXPECT_EQ(priority.decodeLane(), nullptr);
  EXPECT_TRUE(RouterPolicy(RouterKind::LeastLoaded).progressBlind());
  struct Moving : RouterPolicy {
    Moving() : RouterPolicy(RouterKind::RoundRobin) {}
  };
  EXPECT_FALSE(Moving().progressBlind());  // a subclass may read or move requests
  EXPECT_FALSE(Moving().laneAware());
  EXPECT_TRUE(LaneAwareMover(false).laneAware());
  EXPECT_TRUE(CascadeGlobal(CascadeConfig{}).laneAware());  // its stages run on the lane (issue 27)
  EXPECT_TRUE(LlumnixGlobal(LlumnixConfig{}).laneAware());
  EXPECT_TRUE(PascalGlobal(PascalGlobalConfig{}).laneAware());  // PascalLocal's lane (issue 27)
  PascalLocal pascal(PascalLocalConfig{});
  EXPECT_NE(pascal.decodeLane(), nullptr);
}

}  // namespace
}  // namespace sl::enginetest
