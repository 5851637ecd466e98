#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "workload/length_dist.h"
#include "workload/presets.h"
#include "workload/workload_source.h"

using namespace sl;
using sl::testing::inputErrorOf;

namespace {

std::vector<RequestSpec> drain(WorkloadSource& s) {
  std::vector<RequestSpec> v;
  RequestSpec r;
  while (s.next(r)) v.push_back(r);
  return v;
}

std::vector<RequestSpec> run(const WorkloadSpec& w, std::uint64_t seed, int ctx = 32768,
                             std::optional<double> duration = std::nullopt) {
  auto s = makeWorkload(w, seed, ctx, ".", duration);
  return drain(*s);
}

}  // namespace

TEST(Workload, DefaultSpecStreamsIdsInOrder) {
  WorkloadSpec w;
  w.requests = 1000;
  auto s = makeWorkload(w, 1, 8192, ".", std::nullopt);
  EXPECT_EQ(s->expectedCount(), 1000);
  const auto v = drain(*s);
  ASSERT_EQ(v.size(), 1000u);
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].id, static_cast<std::int64_t>(i));
    if (i) {
      EXPECT_GE(v[i].arrival, v[i - 1].arrival);
    }
    EXPECT_GE(v[i].input, 1);
    EXPECT_EQ(v[i].reasoning, 0);
    EXPECT_GE(v[i].answer, 1);
    EXPECT_LE(v[i].input + v[i].reasoning + v[i].answer, 8192);
    EXPECT_EQ(v[i].domain, -1);
  }
  RequestSpec r;
  EXPECT_FALSE(s->next(r));  // stays exhausted
}

TEST(Workload, MillionRequestsStreamLazily) {
  WorkloadSpec w;
  w.requests = 1'000'000;
  w.arrival.rate = 1000;
  auto s = makeWorkload(w, 5, 8192, ".", std::nullopt);
  RequestSpec r;
  std::int64_t n = 0;
  SimTime prev = 0;
  double inSum = 0;
  while (s->next(r)) {  // one RequestSpec reused: nothing is materialised
    ASSERT_EQ(r.id, n);
    ASSERT_GE(r.arrival, prev);
    prev = r.arrival;
    inSum += r.input;
    ++n;
  }
  EXPECT_EQ(n, 1'000'000);
  EXPECT_NEAR(nsToSeconds(prev), 1000.0, 5.0);
  EXPECT_GT(inSum / static_cast<double>(n), 500);
}

TEST(Workload, SameSeedSameSequenceDifferentSeedDifferent) {
  WorkloadSpec w;
  w.requests = 500;
  applyWorkloadPreset("alpaca-reasoning", w);
  const auto a = run(w, 99), b = run(w, 99), c = run(w, 100);
  EXPECT_EQ(a, b);
  int sameArrival = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sameArrival += a[i].arrival == c[i].arrival;
  EXPECT_LT(sameArrival, 5);
  EXPECT_NE(a, c);
}

TEST(Workload, ChangingALengthDistDoesNotShiftOtherStreams) {
  WorkloadSpec w;
  w.requests = 300;
  const auto base = run(w, 3);
  WorkloadSpec w2 = w;
  w2.input_tokens = mixtureDist({uniformDist(1, 100), lognormalDist(50, 400)}, {0.3, 0.7});  // draws differently
  w2.reasoning_tokens = uniformDist(0, 500);
  const auto changed = run(w2, 3);
  ASSERT_EQ(base.size(), changed.size());
  for (std::size_t i = 0; i < base.size(); ++i) {
    EXPECT_EQ(base[i].arrival, changed[i].arrival);
    EXPECT_EQ(base[i].answer, changed[i].answer);
  }
  WorkloadSpec w3 = w;
  w3.arrival.process = ArrivalSpec::Process::Gamma;
  w3.arrival.cv = 3;
  const auto bursty = run(w3, 3);
  for (std::size_t i = 0; i < base.size(); ++i) {
    EXPECT_EQ(base[i].input, bursty[i].input);
    EXPECT_EQ(base[i].answer, bursty[i].answer);
  }
}

TEST(Workload, ClipRulesForContextWindow) {
  RequestSpec r;
  clipRequestLengths(0, -5, 0, 100, r);  // lower bounds
  EXPECT_EQ(r.input, 1);
  EXPECT_EQ(r.reasoning, 0);
  EXPECT_EQ(r.answer, 1);
  clipRequestLengths(500, 10, 10, 100, r);  // input to max_context - 1
  EXPECT_EQ(r.input, 99);
  EXPECT_EQ(r.reasoning, 0);
  EXPECT_EQ(r.answer, 1);
  clipRequestLengths(50, 40, 30, 100, r);  // reasoning reduced first
  EXPECT_EQ(r.input, 50);
  EXPECT_EQ(r.reasoning, 20);
  EXPECT_EQ(r.answer, 30);
  clipRequestLengths(50, 40, 80, 100, r);  // then answer
  EXPECT_EQ(r.reasoning, 0);
  EXPECT_EQ(r.answer, 50);
  clipRequestLengths(50, 20, 30, 100, r);  // exactly fits: unchanged
  EXPECT_EQ(r.reasoning, 20);
  EXPECT_EQ(r.answer, 30);
  clipRequestLengths(5'000'000'000, 1, 1, 0, r);  // no context: int32 bound only
  EXPECT_EQ(r.input, 2147483647);

  WorkloadSpec w;
  w.requests = 2000;
  w.input_tokens = lognormalDist(3000, 12000);
  w.reasoning_tokens = lognormalDist(2000, 8000);
  w.answer_tokens = lognormalDist(1000, 4000);
  for (const auto& q : run(w, 1, 4096)) {
    ASSERT_GE(q.input, 1);
    ASSERT_LE(q.input, 4095);
    ASSERT_GE(q.answer, 1);
    ASSERT_LE(q.input + q.reasoning + q.answer, 4096);
  }
}

TEST(Workload, DurationStopsAtFirstLaterArrival) {
  WorkloadSpec w;
  w.requests = 1'000'000;
  w.arrival.rate = 10;
  auto s = makeWorkload(w, 1, 8192, ".", 30.0);
  EXPECT_EQ(s->expectedCount(), -1);
  const auto v = drain(*s);
  EXPECT_NEAR(static_cast<double>(v.size()), 300, 5 * std::sqrt(300.0));
  for (const auto& r : v) EXPECT_LE(r.arrival, secondsToNs(30));
  // requests still caps a duration-limited run
  w.requests = 10;
  EXPECT_EQ(run(w, 1, 8192, 30.0).size(), 10u);
  w.requests = 0;
  EXPECT_TRUE(run(w, 1).empty());
}

TEST(Workload, JointMixturePicksOneComponentPerRequest) {
  WorkloadSpec w;
  w.requests = 5000;
  w.input_tokens = mixtureDist({constantDist(10), constantDist(20)}, {0.5, 0.5});
  w.reasoning_tokens = mixtureDist({constantDist(100), constantDist(200)}, {0.5, 0.5});
  w.answer_tokens = mixtureDist({constantDist(1), constantDist(2)}, {0.5, 0.5});
  int first = 0;
  for (const auto& r : run(w, 8)) {
    const bool a = r.input == 10;
    ASSERT_EQ(r.reasoning == 100, a);
    ASSERT_EQ(r.answer == 1, a);
    first += a;
  }
  EXPECT_NEAR(first, 2500, 200);
  // Different weights: independent picks.
  w.answer_tokens = mixtureDist({constantDist(1), constantDist(2)}, {0.3, 0.7});
  int mismatch = 0;
  for (const auto& r : run(w, 8)) mismatch += (r.input == 10) != (r.answer == 1);
  EXPECT_GT(mismatch, 1000);
}

TEST(Workload, SelfSchedulingPresetsTagDomain) {
  WorkloadSpec w;
  w.requests = 10;
  applyWorkloadPreset("selfsched-code", w);
  for (const auto& r : run(w, 1)) EXPECT_EQ(r.domain, kDomainCode);
}

TEST(Workload, InvalidInputsThrow) {
  WorkloadSpec w;
  EXPECT_NE(inputErrorOf([&] { makeWorkload(w, 1, 1, ".", std::nullopt); }).find("context"), std::string::npos);
  w.requests = -1;
  EXPECT_NE(inputErrorOf([&] { makeWorkload(w, 1, 100, ".", std::nullopt); }).find("workload.requests"),
            std::string::npos);
  w.requests = 1;
  w.answer_tokens = lognormalDist(10, 1);
  EXPECT_NE(inputErrorOf([&] { makeWorkload(w, 1, 100, ".", std::nullopt); }).find("workload.answer_tokens"),
            std::string::npos);
}
