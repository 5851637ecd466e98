#pragma once
// Shared helpers for the engine tests: a fixed-list workload, a scriptable
// global policy, a recording observer, and a small harness that builds a
// Simulator from a hand-made configuration.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "cost/presets.h"
#include "engine/simulator.h"
#include "metrics/request_record.h"
#include "policy/baselines/local_fcfs.h"
#include "policy/routers.h"
#include "workload/list_workload.h"
#include "workload/workload_source.h"

namespace sl::enginetest {

inline constexpr SimTime kMs = 1'000'000;

inline RequestSpec spec(std::int64_t id, SimTime arrival, std::int32_t input, std::int32_t reasoning,
                        std::int32_t answer) {
  RequestSpec s;
  s.id = id;
  s.arrival = arrival;
  s.input = input;
  s.reasoning = reasoning;
  s.answer = answer;
  return s;
}

using sl::ListWorkload;  // core/workload/list_workload.h

/// A global policy whose every callback is a std::function (defaults: route
/// to instance 0, do nothing else).
class ScriptedGlobal : public GlobalPolicy {
public:
  std::function<int(const Request&)> onRoute;
  std::function<void(Simulator&, Request&)> onReasoning;
  std::function<void(Simulator&, Request&)> onPrefill;  // null: default hand-off
  std::function<void(Simulator&)> onTickFn;
  std::function<void(Simulator&, Request&, int, int)> onMigrated;
  std::function<void(Simulator&, Request&)> onArrivalFn;
  std::function<void(Simulator&, int)> onTimerFn;
  std::function<void(Simulator&, int)> onIterationEndFn;
  std::function<void(Simulator&, Request&)> onLengthFn;
  std::function<void(Simulator&, int)> onDrainedFn;
  SimTime tick = 0;

  const char* name() const override { return "scripted"; }
  int route(const Request& r) override { return onRoute ? onRoute(r) : 0; }
  void onReasoningEnd(Request& r) override {
    if (onReasoning) onReasoning(*sim_, r);
  }
  void onPrefillDone(Request& r) override {
    if (onPrefill) onPrefill(*sim_, r);
    else GlobalPolicy::onPrefillDone(r);
  }
  void onMigrationDone(Request& r, int src, int dst) override {
    if (onMigrated) onMigrated(*sim_, r, src, dst);
  }
  SimTime tickInterval() const override { return tick; }
  void onTick() override {
    if (onTickFn) onTickFn(*sim_);
  }
  void onArrival(Request& r) override {
    if (onArrivalFn) onArrivalFn(*sim_, r);
  }
  void onTimer(int id) override {
    if (onTimerFn) onTimerFn(*sim_, id);
  }
  void onIterationEnd(int instance) override {
    if (onIterationEndFn) onIterationEndFn(*sim_, instance);
  }
  void onLengthReached(Request& r) override {
    if (onLengthFn) onLengthFn(*sim_, r);
  }
  void onInstanceDrained(int instance) override {
    if (onDrainedFn) onDrainedFn(*sim_, instance);
  }
  Simulator* sim() const { return sim_; }
};

struct EventRec {
  RequestEvent e;
  std::int64_t id;
  int inst;
  SimTime t;
  bool operator==(const EventRec&) const = default;
};
struct EntryRec {
  std::int64_t id;
  std::int32_t newTokens;
  bool prefill;
  std::int32_t blocksGpu;  // the request's GPU blocks during the iteration
  bool operator==(const EntryRec&) const = default;
};
struct IterRec {
  int inst;
  SimTime start, end;
  std::vector<EntryRec> entries;
  std::int64_t gpuUsed, cpuUsed;
};
struct TransferRec {
  std::int64_t id;
  int src, dst;
  SimTime start, end;
  double bytes;
};

/// Records everything the simulator reports.
class Recorder : public SimObserver {
public:
  std::vector<EventRec> events;
  std::vector<IterRec> iters;
  std::vector<TransferRec> transfers;
  std::vector<ProbeSample> probes;
  std::vector<RequestRecord> finished;

  void onRequestEvent(RequestEvent e, const Request& r, int inst, SimTime t) override {
    events.push_back(EventRec{e, r.id, inst, t});
  }
  void onIteration(const Instance& in, SimTime s, SimTime e) override {
    IterRec it{in.id(), s, e, {}, in.gpuBlocksUsed(), in.cpuBlocksUsed()};
    for (const BatchEntry& b : in.batch()) it.entries.push_back(EntryRec{b.r->id, b.newTokens, b.prefill, b.r->blocksGpu});
    iters.push_back(std::move(it));
  }
  void onTransfer(const Request& r, int src, int dst, SimTime s, SimTime e, double bytes) override {
    transfers.push_back(TransferRec{r.id, src, dst, s, e, bytes});
  }
  void onProbe(const ProbeSample& p) override { probes.push_back(p); }
  void onFinished(const RequestRecord& rec) override { finished.push_back(rec); }

  std::vector<IterRec> itersOf(int inst) const {
    std::vector<IterRec> out;
    for (const auto& it : iters)
      if (it.inst == inst) out.push_back(it);
    return out;
  }
  std::vector<EventRec> eventsOf(std::int64_t id) const {
    std::vector<EventRec> out;
    for (const auto& e : events)
      if (e.id == id) out.push_back(e);
    return out;
  }
};

inline const CostModel& llama8b() {
  static const CostModel m(PresetRegistry::builtin().gpu("h100-sxm-80g"),
                           PresetRegistry::builtin().model("llama-3.1-8b"), 1);
  return m;
}

/// A small configuration: `n` instances, tiny KV, no watermark, no probes.
inline SimConfig smallConfig(const CostModel& cost, int n, std::int64_t gpuBlocks, std::int32_t blockSize = 16) {
  SimConfig c;
  c.instances = n;
  c.instance.gpuBlocks = gpuBlocks;
  c.instance.cpuBlocks = 1000;
  c.instance.blockSize = blockSize;
  c.instance.watermarkBlocks = 0;
  c.kvBytesPerToken = static_cast<double>(cost.kvBytesPerToken());
  c.instance.kvBytesPerBlock = c.kvBytesPerToken * blockSize;
  c.instance.hostLinkBytesPerSec = 64e9;
  c.probeInterval = 0;
  c.gpusPerNode = 1;  // every instance on its own node: transfers use NICs
  c.nicBytesPerSec = 1073741824.0;  // 2^30 B/s: bytes/bandwidth exact in binary
  c.linkLatency = 5'000;
  return c;
}

inline LocalPolicyFactory fcfsFactory() {
  return [](int) { return std::make_unique<FcfsLocal>(); };
}

/// Builds and owns one Simulator (plus its recorder).
struct Harness {
  const CostModel& cost;
  SimConfig cfg;
  ScriptedGlobal* global = nullptr;  // owned by the simulator
  std::unique_ptr<Simulator> sim;
  Recorder rec;

  Harness(const CostModel& c, SimConfig config, std::vector<RequestSpec> reqs,
          std::unique_ptr<GlobalPolicy> g = nullptr, LocalPolicyFactory local = fcfsFactory())
      : cost(c), cfg(std::move(config)) {
    if (!g) {
      auto sg = std::make_unique<ScriptedGlobal>();
      global = sg.get();
      g = std::move(sg);
    } else {
      global = dynamic_cast<ScriptedGlobal*>(g.get());
    }
    sim = std::make_unique<Simulator>(cfg, cost, std::make_unique<ListWorkload>(std::move(reqs)), std::move(g),
                                      local);
    sim->addObserver(&rec);
  }
  /// Runs to the end, with a generous step cap so a hang fails instead of looping.
  void run(std::int64_t maxSteps = 5'000'000) {
    std::int64_t n = 0;
    while (sim->step())
      if (++n > maxSteps) break;
    ASSERT_TRUE(sim->done()) << "simulation did not terminate within " << maxSteps << " steps";
  }
  RequestRecord record(std::int64_t id) const {  // by value: the store decodes on read
    for (const auto& r : sim->records())
      if (r.id == id) return r;
    ADD_FAILURE() << "no record for request " << id;
    static RequestRecord none;
    return none;
  }
  const Request* active(std::int64_t id) const {
    const Request* out = nullptr;
    sim->forEachActive([&](const Request& r) {
      if (r.id == id && r.instance >= 0) out = &r;
    });
    return out;
  }
  /// Iteration duration exactly as the engine rounds it.
  SimTime iterNs(const BatchShape& s, double swapBytes = 0) const {
    double secs = cost.iterationSeconds(s);
    if (swapBytes > 0) secs += swapBytes / cfg.instance.hostLinkBytesPerSec;
    return std::max<SimTime>(1, secondsToNs(secs));
  }
  /// Transfer time of `tokens` of KV over one uncontended resource of `bw` B/s.
  SimTime flowNs(std::int64_t tokens, double bw) const {
    const double bytes = static_cast<double>(tokens) * cfg.kvBytesPerToken;
    return static_cast<SimTime>(std::ceil(bytes / bw * 1e9));
  }
};

inline BatchShape decodeShape(std::initializer_list<double> ctx) {
  BatchShape s;
  for (double c : ctx) addDecodeSeq(s, c);
  return s;
}
inline BatchShape prefillShape(double n, double cached = 0) {
  BatchShape s;
  addPrefillChunk(s, n, cached);
  return s;
}

inline auto recordKey(const RequestRecord& r) {
  return std::make_tuple(r.id, r.arrival, r.input, r.reasoning, r.answer, r.predicted, r.generated, r.domain,
                         r.instance, r.finished, r.first_token, r.reasoning_end, r.first_visible, r.last_token,
                         r.queueing, r.blocking, r.preempted, r.swapped, r.migrating, r.handoff_wait, r.preemptions,
                         r.migrations, r.qoe);
}

}  // namespace sl::enginetest
