// `oracle` (FCFS with unlimited KV memory) and `decode-first` (FCFS with
// chunked prefill forced on), both through makePolicy and, where the
// scenario wiring matters, through run/prepareRun.
#include <gtest/gtest.h>

#include <algorithm>

#include "policy/registry.h"
#include "policy_harness.h"
#include "run/run.h"

namespace sl::test {
namespace {

LengthDist constant(double v) {
  LengthDist d;
  d.kind = LengthDist::Kind::Constant;
  d.value = v;
  return d;
}

// One llama-3.1-8b instance on an H100 with a KV cache capped to a few
// dozen blocks, 40 requests of 256 + 128 tokens at 20 req/s.
Scenario tinyKvScenario(const std::string& policy, double kvFraction) {
  Scenario s;
  s.cluster.instances = 1;
  s.cluster.kv_capacity_fraction = kvFraction;
  s.workload.requests = 40;
  s.workload.arrival.rate = 20;
  s.workload.input_tokens = constant(256);
  s.workload.reasoning_tokens = constant(0);
  s.workload.answer_tokens = constant(128);
  s.policy.id = policy;
  s.policy.router = "round-robin";
  return s;
}

class PeakKv : public SimObserver {
public:
  void onIteration(const Instance& in, SimTime, SimTime) override {
    peak = std::max(peak, in.gpuBlocksUsed());
  }
  std::int64_t peak = 0;
};

TEST(Oracle, MakePolicyAsksForUnlimitedKv) {
  PolicySpec p;
  p.id = "oracle";
  const PolicyBundle b = makePolicy(p);
  EXPECT_TRUE(b.unlimitedKv);
  EXPECT_FALSE(b.chunkedPrefill.has_value());
  ASSERT_TRUE(b.global);
  EXPECT_STREQ(b.makeLocal(0)->name(), "fcfs");
  p.id = "fcfs";
  EXPECT_FALSE(makePolicy(p).unlimitedKv);
}

// With a configured capacity far too small for the load, fcfs preempts and
// queues; oracle ignores the cap (and the watermark), never preempts, uses
// more blocks than the cap, and produces exactly the timeline of fcfs on
// an uncapped instance.
TEST(Oracle, NeverPreemptsOrBlocksOnMemoryWithTinyCapacity) {
  const double tiny = 0.002;
  const std::int64_t cap = makeCostModel(tinyKvScenario("fcfs", tiny))->kvCapacityBlocks(0.9, tiny, 16);
  ASSERT_GT(cap, 24);   // one request (384 tokens = 24 blocks) fits ...
  ASSERT_LT(cap, 100);  // ... but only a few at once

  auto capped = prepareRun(tinyKvScenario("fcfs", tiny));
  EXPECT_EQ(capped->sim.instance.gpuBlocks, cap);
  capped->simulator->run();
  EXPECT_GT(capped->simulator->preemptions(), 0);
  EXPECT_EQ(capped->simulator->finishedCount(), 40);

  auto oracle = prepareRun(tinyKvScenario("oracle", tiny));
  EXPECT_EQ(oracle->sim.instance.gpuBlocks, std::int64_t{1} << 40);
  EXPECT_EQ(oracle->sim.instance.watermarkBlocks, 0);
  PeakKv peak;
  oracle->simulator->addObserver(&peak);
  oracle->simulator->run();
  EXPECT_EQ(oracle->simulator->preemptions(), 0);
  EXPECT_EQ(oracle->simulator->aborted(), 0);
  EXPECT_EQ(oracle->simulator->finishedCount(), 40);
  EXPECT_GT(peak.peak, cap);

  Scenario big = tinyKvScenario("fcfs", 1.0);
  big.cluster.watermark = 0;
  auto uncapped = prepareRun(big);
  uncapped->simulator->run();
  ASSERT_EQ(uncapped->simulator->preemptions(), 0);
  auto sorted = [](std::vector<RequestRecord> v) {
    std::sort(v.begin(), v.end(), [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
    return v;
  };
  const auto a = sorted(oracle->simulator->records());
  const auto b = sorted(uncapped->simulator->records());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first_token, b[i].first_token) << "request " << a[i].id;
    EXPECT_EQ(a[i].last_token, b[i].last_token) << "request " << a[i].id;
    EXPECT_EQ(a[i].queueing, b[i].queueing) << "request " << a[i].id;
    EXPECT_EQ(a[i].preemptions, 0);
  }
  EXPECT_EQ(oracle->simulator->fingerprint(), uncapped->simulator->fingerprint());
}

// Hand-built: the oracle's bundle on a 6-block instance (the caller applies
// unlimitedKv exactly as run.cpp does): B and C are admitted together with
// A's decode although that needs 7 blocks of 4 tokens; capped fcfs has to
// leave C waiting.
TEST(Oracle, BundleOnTinyInstanceRunsEverythingTogether) {
  PolicySpec p;
  p.id = "oracle";
  PolicyBundle b = makePolicy(p);
  InstanceConfig ic = tinyInstance(6, 4);
  if (b.unlimitedKv) {
    ic.gpuBlocks = std::int64_t{1} << 40;
    ic.watermarkBlocks = 0;
  }
  const std::vector<RequestSpec> reqs = {req(0, 8, 3), req(0.1, 8, 2), req(0.2, 8, 2)};
  Rig rig(ic, reqs, b.makeLocal);
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.8, {P(0, 8)}},
                                {1.8, 4.5, {D(0), P(1, 8), P(2, 8)}},
                                {4.5, 5.8, {D(0), D(1), D(2)}},
                            });
  EXPECT_EQ(rig.sim->preemptions(), 0);

  Rig capped(tinyInstance(6, 4), reqs, fcfs());
  capped.run();
  ASSERT_GE(capped.rec.iters.size(), 2u);
  EXPECT_EQ(capped.rec.iters[1].batch, (std::vector<Entry>{D(0), P(1, 8)}));
}

TEST(DecodeFirst, MakePolicyForcesChunkedPrefill) {
  PolicySpec p;
  p.id = "decode-first";
  const PolicyBundle b = makePolicy(p);
  ASSERT_TRUE(b.chunkedPrefill.has_value());
  EXPECT_TRUE(*b.chunkedPrefill);
  EXPECT_FALSE(b.unlimitedKv);

  Scenario s = tinyKvScenario("decode-first", 1.0);
  s.cluster.chunked_prefill = false;
  EXPECT_TRUE(prepareRun(s)->sim.instance.chunkedPrefill);
  s.policy.id = "fcfs";
  EXPECT_FALSE(prepareRun(s)->sim.instance.chunkedPrefill);
  s.policy.id = "rr";
  EXPECT_FALSE(prepareRun(s)->sim.instance.chunkedPrefill);
}

// Hand-built timeline, max_num_batched_tokens = 8: B's 20-token prompt is
// split into chunks that fill what A's decode leaves of the budget (7, 7,
// 6), A's decode first in every iteration.
TEST(DecodeFirst, LongPromptSplitIntoChunksWithDecodesFirst) {
  PolicySpec p;
  p.id = "decode-first";
  PolicyBundle b = makePolicy(p);
  InstanceConfig ic = tinyInstance(100, 1);
  ic.chunkedPrefill = false;  // the scenario's setting ...
  ic.chunkedPrefill = b.chunkedPrefill.value_or(ic.chunkedPrefill);  // ... overridden as run.cpp does
  ic.maxBatchedTokens = 8;
  Rig rig(ic, {req(0, 2, 5), req(0.1, 20, 2)}, b.makeLocal);
  rig.run();
  expectIterations(rig.rec, {
                                {0.0, 1.2, {P(0, 2)}},
                                {1.2, 3.0, {D(0), P(1, 7)}},
                                {3.0, 4.8, {D(0), P(1, 7)}},
                                {4.8, 6.5, {D(0), P(1, 6)}},
                                {6.5, 7.7, {D(0), D(1)}},
                            });
  EXPECT_EQ(rig.tokens(0), times({1.2, 3.0, 4.8, 6.5, 7.7}));
  EXPECT_EQ(rig.tokens(1), times({6.5, 7.7}));
}

// Whole runs through prepareRun with chunked_prefill: false in the
// scenario: every iteration stays within max_num_batched_tokens, decodes
// come before prefill chunks, and some prompt (200 tokens > 64) is split.
TEST(DecodeFirst, ScenarioRunKeepsBudgetAndDecodeOrder) {
  class Check : public SimObserver {
  public:
    void onIteration(const Instance& in, SimTime, SimTime) override {
      int tokens = 0;
      bool seenPrefill = false;
      for (const BatchEntry& e : in.batch()) {
        tokens += e.newTokens;
        if (e.prefill) {
          seenPrefill = true;
          if (e.newTokens < e.r->input) ++partialChunks;
        } else {
          EXPECT_FALSE(seenPrefill) << "decode after a prefill chunk";
          ++decodes;
        }
      }
      EXPECT_LE(tokens, 64);
      ++iterations;
    }
    int iterations = 0, decodes = 0, partialChunks = 0;
  } check;
  Scenario s = tinyKvScenario("decode-first", 1.0);
  s.cluster.chunked_prefill = false;
  s.cluster.max_num_batched_tokens = 64;
  s.workload.input_tokens = constant(200);
  s.workload.answer_tokens = constant(16);
  auto run = prepareRun(s);
  run->simulator->addObserver(&check);
  run->simulator->run();
  EXPECT_EQ(run->simulator->finishedCount(), 40);
  EXPECT_GT(check.partialChunks, 40);
  EXPECT_GT(check.decodes, 0);
}

}  // namespace
}  // namespace sl::test
