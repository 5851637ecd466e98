#pragma once
// Tiny hand-built clusters for exact-timeline tests of the local and global
// policies (30-schedulers.md, 10-engine.md "iteration loop", "Preemption").
//
// Cost model: a hand-made GPU/model whose iteration time is exactly
//   1 ms + 0.1 ms × N,   N = prefill tokens + decode sequences
// (t_step = 1000 µs, no per-layer / per-sequence overhead, linear compute
// 0.1 ms per token; weight read, attention and communication made
// negligible by huge efficiencies, far below the 1 ns rounding). So a
// decode of one sequence takes 1.1 ms, a 4-token prefill 1.4 ms.
// Swap: kvBytesPerBlock 100 B over a 1 MB/s host link = 0.1 ms per block.
#include <algorithm>
#include <cstdint>
#include <map>
#include <ostream>
#include <stdexcept>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "engine/instance.h"
#include "engine/observer.h"
#include "engine/request.h"
#include "engine/simulator.h"
#include "policy/baselines/local_fcfs.h"
#include "policy/baselines/local_rr.h"
#include "policy/routers.h"
#include "workload/list_workload.h"
#include "workload/workload_source.h"

namespace sl::test {

/// Milliseconds (may be fractional) to SimTime, rounded like the engine does.
inline SimTime ms(double v) { return secondsToNs(v * 1e-3); }

inline GpuSpec tinyGpu() {
  GpuSpec g;
  g.id = "test-gpu";
  g.name = "Test GPU";
  g.bf16_tflops = 1.6e-7;  // F = 1.6e5 FLOP/s: 2 × 8 linear params / F = 0.1 ms per token
  g.hbm_tbps = 1.0;
  g.hbm_gib = 80;
  g.host_link_gbps = 0.001;
  return g;
}

inline ModelSpec tinyModel() {
  ModelSpec m;
  m.id = "test-model";
  m.name = "Test-Model";
  m.layers = 1;
  m.hidden = 1;
  m.q_heads = 1;
  m.kv_heads = 1;
  m.head_dim = 1;
  m.intermediate = 1;
  m.vocab = 1;  // linear params = 1·(1·3·1 + 1 + 3) + 1 = 8
  m.dtype_bytes = 2;
  m.max_context = 1 << 20;
  return m;
}

inline CostCoefficients tinyCoefficients() {
  CostCoefficients c;
  c.eta_c = 1.0;
  c.eta_a = 1e12;   // prefill attention negligible
  c.eta_w = 1e12;   // weight read negligible
  c.eta_kv = 1e12;  // decode attention negligible
  c.t_step_us = 1000;
  c.t_layer_us = 0;
  c.t_seq_us = 0;
  return c;
}

inline const CostModel& tinyCost() {
  static const CostModel cost(tinyGpu(), tinyModel(), 1, tinyCoefficients());
  return cost;
}

/// A fixed list of requests (ids 0, 1, 2, ... in list order).
class ListWorkload : public sl::ListWorkload {
public:
  explicit ListWorkload(std::vector<RequestSpec> v) : sl::ListWorkload(std::move(v), /*renumber=*/true) {}
};

/// A request: arrival (ms), prompt, answer tokens (reasoning 0 unless given).
inline RequestSpec req(double arrivalMs, int input, int answer, int reasoning = 0) {
  RequestSpec r;
  r.arrival = ms(arrivalMs);
  r.input = input;
  r.answer = answer;
  r.reasoning = reasoning;
  return r;
}

inline InstanceConfig tinyInstance(std::int64_t gpuBlocks, std::int32_t blockSize) {
  InstanceConfig ic;
  ic.gpuBlocks = gpuBlocks;
  ic.cpuBlocks = 1000;
  ic.blockSize = blockSize;
  ic.watermarkBlocks = 0;
  ic.swapPreemption = true;
  ic.chunkedPrefill = true;
  ic.maxNumSeqs = 256;
  ic.maxBatchedTokens = 8192;
  ic.kvBytesPerBlock = 100;         // 100 B ...
  ic.hostLinkBytesPerSec = 1e6;     // ... over 1 MB/s: 0.1 ms per block swapped
  return ic;
}

inline SimConfig tinySim(const InstanceConfig& ic, int instances = 1) {
  SimConfig c;
  c.instances = instances;
  c.instance = ic;
  c.probeInterval = 0;
  c.kvBytesPerToken = ic.kvBytesPerBlock / ic.blockSize;
  return c;
}

/// One batch entry as it ran: request id, new tokens, prefill?
struct Entry {
  std::int64_t id;
  std::int32_t tokens;
  bool prefill;
  friend bool operator==(const Entry&, const Entry&) = default;
};
inline Entry D(std::int64_t id) { return Entry{id, 1, false}; }
inline Entry P(std::int64_t id, std::int32_t n) { return Entry{id, n, true}; }

struct Iter {
  int instance;
  SimTime start, end;
  std::vector<Entry> batch;
};

struct Ev {
  RequestEvent kind;
  std::int64_t id;
  SimTime t;
  int instance;
  ReqState state;  // state right after the event
  friend bool operator==(const Ev&, const Ev&) = default;
};

/// Records iterations, request events, token times and per-request state.
class Recorder : public SimObserver {
public:
  void onRequestEvent(RequestEvent e, const Request& r, int inst, SimTime t) override {
    events.push_back(Ev{e, r.id, t, inst, r.state});
  }
  void onIteration(const Instance& in, SimTime start, SimTime end) override {
    Iter it{in.id(), start, end, {}};
    for (const BatchEntry& e : in.batch()) {
      it.batch.push_back(Entry{e.r->id, e.newTokens, e.prefill});
      // The engine has already applied the iteration: a prefill whose last
      // chunk ran, and every decode, produced one token at `end`.
      if (!e.prefill || e.r->prefillDone()) tokens[e.r->id].push_back(end);
    }
    iters.push_back(std::move(it));
  }

  /// Events of one kind, in order, as (id, time) pairs.
  std::vector<std::pair<std::int64_t, SimTime>> of(RequestEvent k) const {
    std::vector<std::pair<std::int64_t, SimTime>> out;
    for (const Ev& e : events)
      if (e.kind == k) out.emplace_back(e.id, e.t);
    return out;
  }
  /// Request ids in order of their first token.
  std::vector<std::int64_t> firstTokenOrder() const {
    std::vector<std::pair<SimTime, std::int64_t>> v;
    for (const auto& [id, ts] : tokens) v.emplace_back(ts.front(), id);
    std::sort(v.begin(), v.end());
    std::vector<std::int64_t> out;
    for (const auto& p : v) out.push_back(p.second);
    return out;
  }

  std::vector<Iter> iters;
  std::vector<Ev> events;
  std::map<std::int64_t, std::vector<SimTime>> tokens;
};

/// A one-instance (or n-instance) cluster with a given local policy.
struct Rig {
  Rig(const InstanceConfig& ic, std::vector<RequestSpec> reqs, LocalPolicyFactory local,
      RouterKind router = RouterKind::RoundRobin, int instances = 1, std::uint64_t seed = 1,
      const CostModel& cost = tinyCost()) {
    SimConfig c = tinySim(ic, instances);
    c.seed = seed;
    sim = std::make_unique<Simulator>(c, cost, std::make_unique<ListWorkload>(std::move(reqs)),
                                      std::make_unique<RouterPolicy>(router), local);
    sim->addObserver(&rec);
  }
  void run() { sim->run(); }
  RequestRecord record(std::int64_t id) const {  // by value: the store decodes on read
    for (const RequestRecord& r : sim->records())
      if (r.id == id) return r;
    throw std::runtime_error("no record for request " + std::to_string(id));
  }
  std::vector<SimTime> tokens(std::int64_t id) const {
    auto it = rec.tokens.find(id);
    return it == rec.tokens.end() ? std::vector<SimTime>{} : it->second;
  }

  Recorder rec;
  std::unique_ptr<Simulator> sim;
};

inline LocalPolicyFactory fcfs() {
  return [](int) { return std::make_unique<FcfsLocal>(); };
}
inline LocalPolicyFactory rr(int quantum, bool byQuanta = true) {
  return [quantum, byQuanta](int) { return std::make_unique<RoundRobinLocal>(quantum, byQuanta); };
}

/// Times in ms → SimTime vector.
inline std::vector<SimTime> times(std::initializer_list<double> msList) {
  std::vector<SimTime> v;
  for (double m : msList) v.push_back(ms(m));
  return v;
}

/// Queue contents of instance 0's local policy as (queue name, ids).
inline std::vector<std::pair<std::string, std::vector<std::int64_t>>> queues(const Simulator& sim,
                                                                            int inst = 0) {
  std::vector<QueueView> views;
  sim.instance(inst).policy().describe(views);
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
  for (const QueueView& q : views) {
    std::vector<std::int64_t> ids;
    for (const Request* r : q.requests) ids.push_back(r->id);
    out.emplace_back(q.name, ids);
  }
  return out;
}

/// Expected iteration: start and end in ms, and the batch in order.
struct ExpIter {
  double startMs, endMs;
  std::vector<Entry> batch;
};

}  // namespace sl::test

// Readable failure output for the recorded structures.
namespace sl::test {
inline std::ostream& operator<<(std::ostream& o, const Entry& e) {
  o << (e.prefill ? "P(" : "D(") << e.id;
  if (e.prefill) o << ',' << e.tokens;
  return o << ')';
}

/// Iterations of instance `inst` must be exactly `exp` (times, batch order).
inline void expectIterations(const Recorder& rec, const std::vector<ExpIter>& exp, int inst = 0) {
  std::vector<const Iter*> got;
  for (const Iter& it : rec.iters)
    if (it.instance == inst) got.push_back(&it);
  EXPECT_EQ(got.size(), exp.size()) << "number of iterations on instance " << inst;
  for (std::size_t i = 0; i < std::min(got.size(), exp.size()); ++i) {
    EXPECT_EQ(got[i]->start, ms(exp[i].startMs)) << "iteration " << i + 1 << " start";
    EXPECT_EQ(got[i]->end, ms(exp[i].endMs)) << "iteration " << i + 1 << " end";
    EXPECT_EQ(got[i]->batch, exp[i].batch) << "iteration " << i + 1 << " batch";
  }
}
}  // namespace sl::test
