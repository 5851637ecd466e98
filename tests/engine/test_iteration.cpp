// The continuous-batching iteration loop: exact iteration durations from the
// cost model, token times, arrivals joining at the next iteration, chunked and
// whole-prompt prefill, max_num_seqs (10-engine.md "The iteration loop").
#include <gtest/gtest.h>

#include "engine_test_util.h"

namespace sl::enginetest {
namespace {

struct Expect {
  std::vector<EntryRec> entries;  // blocksGpu ignored when < 0
  BatchShape shape;
};

// Checks that instance `inst` ran exactly `want` back to back from `t0`, each
// with the duration the cost model gives its shape. Returns the end times.
std::vector<SimTime> checkIterations(const Harness& h, int inst, SimTime t0, const std::vector<Expect>& want,
                                     bool allowMore = false) {
  const auto its = h.rec.itersOf(inst);
  if (allowMore) {
    EXPECT_GE(its.size(), want.size());
  } else {
    EXPECT_EQ(its.size(), want.size());
  }
  std::vector<SimTime> ends;
  SimTime t = t0;
  for (std::size_t i = 0; i < std::min(its.size(), want.size()); ++i) {
    const SimTime d = h.iterNs(want[i].shape);
    EXPECT_EQ(its[i].start, t) << "iteration " << i;
    EXPECT_EQ(its[i].end, t + d) << "iteration " << i;
    EXPECT_EQ(its[i].entries.size(), want[i].entries.size()) << "iteration " << i;
    for (std::size_t j = 0; j < std::min(its[i].entries.size(), want[i].entries.size()); ++j) {
      const EntryRec& g = its[i].entries[j];
      const EntryRec& w = want[i].entries[j];
      EXPECT_EQ(g.id, w.id) << "iteration " << i << " entry " << j;
      EXPECT_EQ(g.newTokens, w.newTokens) << "iteration " << i << " entry " << j;
      EXPECT_EQ(g.prefill, w.prefill) << "iteration " << i << " entry " << j;
      if (w.blocksGpu >= 0) {
        EXPECT_EQ(g.blocksGpu, w.blocksGpu) << "iteration " << i << " entry " << j;
      }
    }
    t = its[i].end;
    ends.push_back(t);
  }
  return ends;
}

EntryRec P(std::int64_t id, std::int32_t n) { return EntryRec{id, n, true, -1}; }
EntryRec D(std::int64_t id) { return EntryRec{id, 1, false, -1}; }

TEST(Iteration, ReasoningRequestTimelineIsExact) {
  const CostModel& cost = llama8b();
  const SimTime a = 3 * kMs;
  Harness h(cost, smallConfig(cost, 1, 1000), {spec(0, a, 100, 3, 2)});
  h.run();
  // One prefill iteration, then one decode per token; context L = prompt +
  // tokens so far (the slot being written included).
  const auto ends = checkIterations(h, 0, a,
                                    {{{P(0, 100)}, prefillShape(100)},
                                     {{D(0)}, decodeShape({101})},
                                     {{D(0)}, decodeShape({102})},
                                     {{D(0)}, decodeShape({103})},
                                     {{D(0)}, decodeShape({104})}});
  ASSERT_EQ(ends.size(), 5u);
  ASSERT_EQ(h.sim->records().size(), 1u);
  const RequestRecord& r = h.record(0);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.generated, 5);  // R + A
  EXPECT_EQ(r.first_token, ends[0]);
  EXPECT_EQ(r.reasoning_end, ends[2]);   // g_R
  EXPECT_EQ(r.first_visible, ends[3]);   // g_{R+1}
  EXPECT_EQ(r.last_token, ends[4]);
  EXPECT_EQ(r.queueing, 0);
  EXPECT_EQ(r.blocking, 0);  // scheduled again at the very iteration start
  EXPECT_DOUBLE_EQ(*r.ttft(), nsToSeconds(ends[3] - a));
  EXPECT_DOUBLE_EQ(*r.reasoningLatency(), nsToSeconds(ends[2] - a));
  EXPECT_DOUBLE_EQ(*r.ttfat(), nsToSeconds(ends[3] - ends[2]));
  EXPECT_DOUBLE_EQ(*r.tpot(), nsToSeconds(ends[4] - ends[3]));
  EXPECT_EQ(r.instance, 0);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.migrations, 0);
  EXPECT_EQ(h.sim->instance(0).tokensProduced(), 5);
  EXPECT_EQ(h.sim->instance(0).iterations(), 5);
  EXPECT_EQ(h.sim->now(), ends[4]);
  EXPECT_EQ(h.sim->arrived(), 1);
  EXPECT_EQ(h.sim->inFlight(), 0);
}

TEST(Iteration, NonReasoningRequestHasNoReasoningEnd) {
  const CostModel& cost = llama8b();
  Harness h(cost, smallConfig(cost, 1, 1000), {spec(0, 0, 10, 0, 1)});
  h.run();
  const RequestRecord& r = h.record(0);
  const SimTime d = h.iterNs(prefillShape(10));
  EXPECT_EQ(r.generated, 1);
  EXPECT_EQ(r.first_token, d);
  EXPECT_EQ(r.first_visible, d);
  EXPECT_EQ(r.last_token, d);
  EXPECT_EQ(r.reasoning_end, -1);
  EXPECT_EQ(r.blocking, -1);
  EXPECT_EQ(*r.tpot(), 0.0);
}

TEST(Iteration, ArrivalDuringIterationJoinsAtNextStart) {
  const CostModel& cost = llama8b();
  const auto d1 = static_cast<SimTime>(llama8b().iterationSeconds(prefillShape(100)) * 1e9);
  const SimTime b = d1 / 2;
  Harness h(cost, smallConfig(cost, 1, 1000), {spec(0, 0, 100, 0, 4), spec(1, b, 50, 0, 2)});
  h.run();
  BatchShape s2 = decodeShape({101});
  addPrefillChunk(s2, 50);
  const auto ends = checkIterations(h, 0, 0,
                                    {{{P(0, 100)}, prefillShape(100)},
                                     {{D(0), P(1, 50)}, s2},
                                     {{D(0), D(1)}, decodeShape({102, 51})},
                                     {{D(0)}, decodeShape({103})}});
  ASSERT_EQ(ends.size(), 4u);
  EXPECT_EQ(h.record(1).queueing, ends[0] - b);
  EXPECT_EQ(h.record(1).first_token, ends[1]);
  EXPECT_EQ(h.record(1).last_token, ends[2]);
  EXPECT_EQ(h.record(0).last_token, ends[3]);
}

TEST(Iteration, IdleInstanceStartsAtTheArrival) {
  const CostModel& cost = llama8b();
  const SimTime late = 500 * kMs;  // long after request 0 finished
  Harness h(cost, smallConfig(cost, 1, 1000), {spec(0, 0, 10, 0, 2), spec(1, late, 20, 0, 1)});
  h.run();
  const auto its = h.rec.itersOf(0);
  ASSERT_EQ(its.size(), 3u);
  EXPECT_EQ(its[2].start, late);
  EXPECT_EQ(its[2].end, late + h.iterNs(prefillShape(20)));
  EXPECT_EQ(h.record(1).queueing, 0);
}

TEST(Iteration, SimultaneousArrivalsBatchTogether) {
  const CostModel& cost = llama8b();
  const SimTime t = 5 * kMs;
  Harness h(cost, smallConfig(cost, 1, 1000), {spec(0, t, 10, 0, 2), spec(1, t, 20, 0, 2), spec(2, t, 30, 0, 2)});
  h.run();
  BatchShape s1 = prefillShape(10);
  addPrefillChunk(s1, 20);
  addPrefillChunk(s1, 30);
  const auto ends = checkIterations(h, 0, t,
                                    {{{P(0, 10), P(1, 20), P(2, 30)}, s1},
                                     {{D(0), D(1), D(2)}, decodeShape({11, 21, 31})}});
  ASSERT_EQ(ends.size(), 2u);
  for (int id = 0; id < 3; ++id) {
    EXPECT_EQ(h.record(id).first_token, ends[0]);
    EXPECT_EQ(h.record(id).last_token, ends[1]);
  }
}

TEST(Iteration, ChunkedPrefillSplitsLongPromptAfterDecodes) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 1000);
  c.instance.maxBatchedTokens = 64;
  Harness h(cost, c, {spec(0, 0, 10, 0, 10), spec(1, 1, 150, 0, 2)});
  h.run();
  // Decodes first (1 token of budget each), then the chunk fills the rest.
  BatchShape s2 = decodeShape({11});
  addPrefillChunk(s2, 63, 0);
  BatchShape s3 = decodeShape({12});
  addPrefillChunk(s3, 63, 63);
  BatchShape s4 = decodeShape({13});
  addPrefillChunk(s4, 24, 126);
  std::vector<Expect> want = {{{P(0, 10)}, prefillShape(10)},
                              {{D(0), P(1, 63)}, s2},
                              {{D(0), P(1, 63)}, s3},
                              {{D(0), P(1, 24)}, s4},
                              {{D(0), D(1)}, decodeShape({14, 151})}};
  for (double L = 15; L <= 19; ++L) want.push_back({{D(0)}, decodeShape({L})});
  const auto ends = checkIterations(h, 0, 0, want);
  ASSERT_EQ(ends.size(), 10u);
  EXPECT_EQ(h.record(1).first_token, ends[3]);  // the last chunk emits the first token
  EXPECT_EQ(h.record(1).last_token, ends[4]);
  EXPECT_EQ(h.record(0).last_token, ends[9]);
}

TEST(Iteration, ChunkedPrefillAloneUsesWholeBudget) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 1000);
  c.instance.maxBatchedTokens = 64;
  Harness h(cost, c, {spec(0, 0, 150, 0, 1)});
  h.run();
  checkIterations(h, 0, 0,
                  {{{P(0, 64)}, prefillShape(64, 0)},
                   {{P(0, 64)}, prefillShape(64, 64)},
                   {{P(0, 22)}, prefillShape(22, 128)}});
}

TEST(Iteration, WithoutChunkedPrefillIterationsArePrefillOnly) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 1000);
  c.instance.chunkedPrefill = false;
  c.instance.maxBatchedTokens = 25;
  Harness h(cost, c, {spec(0, 0, 10, 0, 5), spec(1, 1, 20, 0, 2), spec(2, 2, 10, 0, 1)});
  h.run();
  // Request 0 does not decode while prompts are admitted; whole prompts only,
  // up to the token budget (20 + 10 > 25: request 2 waits one iteration).
  const auto ends = checkIterations(h, 0, 0,
                                    {{{P(0, 10)}, prefillShape(10)},
                                     {{P(1, 20)}, prefillShape(20)},
                                     {{P(2, 10)}, prefillShape(10)},
                                     {{D(0), D(1)}, decodeShape({11, 21})},
                                     {{D(0)}, decodeShape({12})},
                                     {{D(0)}, decodeShape({13})},
                                     {{D(0)}, decodeShape({14})}});
  ASSERT_EQ(ends.size(), 7u);
  EXPECT_EQ(h.record(2).first_token, ends[2]);
  EXPECT_EQ(h.record(1).last_token, ends[3]);
  EXPECT_EQ(h.record(0).first_token, ends[0]);
  EXPECT_EQ(h.record(0).last_token, ends[6]);
}

TEST(Iteration, WithoutChunkedPrefillOversizedPromptRunsAlone) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 1000);
  c.instance.chunkedPrefill = false;
  c.instance.maxBatchedTokens = 16;
  Harness h(cost, c, {spec(0, 0, 40, 0, 1)});
  h.run();
  checkIterations(h, 0, 0, {{{P(0, 40)}, prefillShape(40)}});
}

TEST(Iteration, MaxNumSeqsCapsTheBatch) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 1, 1000);
  c.instance.maxNumSeqs = 2;
  Harness h(cost, c, {spec(0, 0, 10, 0, 3), spec(1, 0, 10, 0, 3), spec(2, 0, 10, 0, 2)});
  h.run();
  BatchShape s1 = prefillShape(10);
  addPrefillChunk(s1, 10);
  const auto ends = checkIterations(h, 0, 0,
                                    {{{P(0, 10), P(1, 10)}, s1},
                                     {{D(0), D(1)}, decodeShape({11, 11})},
                                     {{D(0), D(1)}, decodeShape({12, 12})},
                                     {{P(2, 10)}, prefillShape(10)},
                                     {{D(2)}, decodeShape({11})}});
  ASSERT_EQ(ends.size(), 5u);
  EXPECT_EQ(h.record(2).queueing, ends[2]);
  for (const auto& it : h.rec.iters) EXPECT_LE(it.entries.size(), 2u);
}

TEST(Iteration, EveryRequestProducesExactlyItsOutputLength) {
  const CostModel& cost = llama8b();
  SimConfig c = smallConfig(cost, 2, 1000);
  std::vector<RequestSpec> reqs;
  for (int i = 0; i < 12; ++i) reqs.push_back(spec(i, i * 2 * kMs, 5 + 7 * i, i % 4, 1 + (i * 5) % 9));
  auto g = std::make_unique<RouterPolicy>(RouterKind::RoundRobin);
  Harness h(cost, c, reqs, std::move(g));
  h.run();
  ASSERT_EQ(h.sim->records().size(), 12u);
  std::int64_t tokens = 0;
  for (const auto& r : h.sim->records()) {
    EXPECT_EQ(r.generated, r.reasoning + r.answer) << r.id;
    EXPECT_EQ(r.instance, r.id % 2) << r.id;  // round-robin routing
    tokens += r.generated;
    if (r.reasoning > 0) {
      EXPECT_LT(r.reasoning_end, r.first_visible);
    } else {
      EXPECT_EQ(r.first_visible, r.first_token);
    }
  }
  EXPECT_EQ(h.sim->instance(0).tokensProduced() + h.sim->instance(1).tokensProduced(), tokens);
}

}  // namespace
}  // namespace sl::enginetest
