// Closed-loop source (workload/closed_loop.h) driven by hand, without an
// engine: N first requests at t = 0, one follow-up per completion at
// finish + think (exact ns), ids in issue order, `requests` in all, live
// changes of the client count; and the exponential distribution that think
// times (and token lengths) may use.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "util/rng.h"
#include "workload/closed_loop.h"
#include "workload/length_dist.h"
#include "workload/workload_source.h"

using namespace sl;
using sl::testing::inputErrorOf;

namespace {

WorkloadSpec closedSpec(int clients, std::int64_t requests, std::optional<LengthDist> think = std::nullopt) {
  WorkloadSpec w;
  w.arrival.process = ArrivalSpec::Process::Closed;
  w.arrival.concurrency = clients;
  w.arrival.think_s = std::move(think);
  w.requests = requests;
  return w;
}

std::vector<RequestSpec> firsts(WorkloadSource& s) {
  std::vector<RequestSpec> v;
  RequestSpec r;
  while (s.next(r)) v.push_back(r);
  return v;
}

}  // namespace

TEST(ExponentialDist, MeanAndContinuousDraws) {
  LengthSampler e(exponentialDist(2.0), ".", "think");
  EXPECT_DOUBLE_EQ(e.mean(), 2.0);
  Rng rng = Rng::forStream(7, "think");
  std::vector<double> v;
  for (int i = 0; i < 200000; ++i) v.push_back(e.sampleReal(rng));
  EXPECT_NEAR(sl::testing::meanOf(v), 2.0, 0.03);
  // Exponential: median = mean * ln 2; draws are not rounded to integers.
  EXPECT_NEAR(sl::testing::quantile(v, 0.5), 2.0 * std::log(2.0), 0.03);
  EXPECT_TRUE(std::any_of(v.begin(), v.end(), [](double x) { return x != std::floor(x); }));
  // As a token length it rounds and clips like every other kind.
  LengthSampler t(clipped(exponentialDist(100), 10, 50), ".", "len");
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t x = t.sample(rng);
    EXPECT_GE(x, 10);
    EXPECT_LE(x, 50);
  }
  EXPECT_NE(inputErrorOf([] { LengthSampler bad(exponentialDist(0), ".", "w.think_s"); }).find("w.think_s"),
            std::string::npos);
}

TEST(ExponentialDist, SampleRealIsContinuousUniformAndClipped) {
  LengthSampler u(uniformDist(0.25, 0.75), ".", "u");
  Rng rng(3);
  double lo = 1, hi = 0;
  for (int i = 0; i < 10000; ++i) {
    const double x = u.sampleReal(rng);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_GE(lo, 0.25);
  EXPECT_LT(hi, 0.75);
  EXPECT_LT(lo, 0.26);
  EXPECT_GT(hi, 0.74);
  LengthSampler c(clipped(exponentialDist(5), 0.5, 1.5), ".", "c");
  for (int i = 0; i < 1000; ++i) {
    const double x = c.sampleReal(rng);
    EXPECT_GE(x, 0.5);
    EXPECT_LE(x, 1.5);
  }
}

TEST(ClosedLoopSource, FirstRequestsThenOneFollowUpPerCompletion) {
  auto src = makeWorkload(closedSpec(3, 7, constantDist(0.25)), 1, 32768, ".", std::nullopt);
  ASSERT_TRUE(src->wantsCompletions());
  EXPECT_EQ(src->expectedCount(), 7);
  const auto first = firsts(*src);
  ASSERT_EQ(first.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(first[i].id, static_cast<std::int64_t>(i));
    EXPECT_EQ(first[i].arrival, 0);
  }
  EXPECT_FALSE(src->finished());  // nothing now, but more to come
  RequestSpec r;
  ASSERT_TRUE(src->onRequestDone(1, 1'000'000'007, r));
  EXPECT_EQ(r.id, 3);
  EXPECT_EQ(r.arrival, 1'000'000'007 + 250'000'000);  // finish + think, exactly
  ASSERT_TRUE(src->onRequestDone(0, 2'000'000'000, r));
  EXPECT_EQ(r.id, 4);
  ASSERT_TRUE(src->onRequestDone(2, 2'000'000'000, r));
  ASSERT_TRUE(src->onRequestDone(3, 3'000'000'000, r));
  EXPECT_EQ(r.id, 6);
  // 7 issued: completions now retire clients; the source is over once the
  // last one has (requests 5 and 6 are still in the engine until then).
  EXPECT_FALSE(src->onRequestDone(4, 4'000'000'000, r));
  EXPECT_FALSE(src->next(r));
  EXPECT_FALSE(src->finished());
  EXPECT_FALSE(src->onRequestDone(5, 4'000'000'000, r));
  EXPECT_FALSE(src->finished());
  EXPECT_FALSE(src->onRequestDone(6, 4'000'000'000, r));
  EXPECT_TRUE(src->finished());
}

TEST(ClosedLoopSource, LengthsMatchTheOpenLoopStreams) {
  // The same seed draws the same lengths in the same order: closing the loop
  // changes only when requests are issued.
  WorkloadSpec open;
  open.requests = 5;
  auto o = makeWorkload(open, 9, 32768, ".", std::nullopt);
  auto c = makeWorkload(closedSpec(5, 5), 9, 32768, ".", std::nullopt);
  const auto a = firsts(*o), b = firsts(*c);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].input, b[i].input);
    EXPECT_EQ(a[i].answer, b[i].answer);
  }
}

TEST(ClosedLoopSource, LiveRaiseAddsClientsAtOnceLowerRetiresOnCompletion) {
  auto src = makeWorkload(closedSpec(2, 100), 1, 32768, ".", std::nullopt);
  auto* loop = dynamic_cast<ClosedLoopWorkload*>(src.get());
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(firsts(*src).size(), 2u);
  loop->setConcurrency(5'000, 4);
  const auto added = firsts(*src);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].arrival, 5'000);
  EXPECT_EQ(added[1].id, 3);
  EXPECT_EQ(loop->activeClients(), 4);
  loop->setConcurrency(6'000, 1);
  RequestSpec r;
  EXPECT_FALSE(src->onRequestDone(0, 7'000, r));  // retires
  EXPECT_FALSE(src->onRequestDone(1, 7'000, r));
  EXPECT_FALSE(src->onRequestDone(2, 7'000, r));
  EXPECT_EQ(loop->activeClients(), 1);
  EXPECT_TRUE(src->onRequestDone(3, 7'000, r));  // the last client goes on
  EXPECT_EQ(r.id, 4);
  EXPECT_FALSE(src->finished());
  EXPECT_NE(inputErrorOf([&] { loop->setConcurrency(0, 0); }).find("clients"), std::string::npos);
  EXPECT_NE(inputErrorOf([&] { loop->setConcurrency(0, 2.5); }).find("integer"), std::string::npos);
}

TEST(ClosedLoopSource, DurationStopsIssuing) {
  auto src = makeWorkload(closedSpec(1, 100, constantDist(2)), 1, 32768, ".", 3.0);
  EXPECT_EQ(src->expectedCount(), -1);
  EXPECT_EQ(firsts(*src).size(), 1u);
  RequestSpec r;
  EXPECT_FALSE(src->onRequestDone(0, 1'500'000'000, r));  // 3.5 s > 3 s
  EXPECT_TRUE(src->finished());
}

TEST(ClosedLoopSource, BadValuesNameTheField) {
  EXPECT_NE(inputErrorOf([] { makeWorkload(closedSpec(0, 10), 1, 32768, ".", std::nullopt); })
                .find("workload.arrival.concurrency"),
            std::string::npos);
  EXPECT_NE(inputErrorOf([] { makeWorkload(closedSpec(2, 10, constantDist(-1)), 1, 32768, ".", std::nullopt); })
                .find("workload.arrival.think_s"),
            std::string::npos);
  WorkloadSpec t = closedSpec(2, 10);
  t.trace = TraceSpec{};
  t.trace->path = "x.csv";
  t.trace->time_scale = 2;
  EXPECT_NE(inputErrorOf([&] { makeWorkload(t, 1, 32768, ".", std::nullopt); }).find("workload.trace.time_scale"),
            std::string::npos);
  t.trace->time_scale = 1;
  t.trace->window_end_s = 5;
  EXPECT_NE(inputErrorOf([&] { makeWorkload(t, 1, 32768, ".", std::nullopt); }).find("workload.trace.window"),
            std::string::npos);
}
