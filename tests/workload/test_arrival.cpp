#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "workload/arrival.h"

using namespace sl;
using sl::testing::inputErrorOf;

namespace {

std::vector<double> gaps(ArrivalSpec spec, int n, std::uint64_t seed = 1) {
  ArrivalProcess p(spec);
  Rng r(seed);
  std::vector<double> g;
  double prev = 0;
  for (int i = 0; i < n; ++i) {
    const double t = *p.nextSeconds(r);
    g.push_back(t - prev);
    prev = t;
  }
  return g;
}

double cvOf(const std::vector<double>& v) {
  const double m = sl::testing::meanOf(v);
  double s2 = 0;
  for (double x : v) s2 += (x - m) * (x - m);
  return std::sqrt(s2 / static_cast<double>(v.size())) / m;
}

}  // namespace

TEST(Arrival, PoissonRateRecovered) {
  ArrivalSpec a;
  a.process = ArrivalSpec::Process::Poisson;
  a.rate = 8.0;
  const auto g = gaps(a, 200000);
  EXPECT_NEAR(1.0 / sl::testing::meanOf(g), 8.0, 8.0 * 0.01);
  EXPECT_NEAR(cvOf(g), 1.0, 0.02);
}

TEST(Arrival, GammaRateAndCvRecovered) {
  for (double cv : {0.5, 2.0, 4.0}) {
    ArrivalSpec a;
    a.process = ArrivalSpec::Process::Gamma;
    a.rate = 3.0;
    a.cv = cv;
    const auto g = gaps(a, 200000, 7);
    EXPECT_NEAR(1.0 / sl::testing::meanOf(g), 3.0, 3.0 * 0.03) << cv;
    EXPECT_NEAR(cvOf(g), cv, cv * 0.05) << cv;
  }
}

TEST(Arrival, TimesAreIntegerNsAndNonDecreasing) {
  ArrivalSpec a;
  a.rate = 1000.0;
  ArrivalProcess p(a);
  Rng r(1), r2(1);
  ArrivalProcess q(a);
  SimTime prev = 0;
  for (int i = 0; i < 10000; ++i) {
    const SimTime t = *p.next(r);
    ASSERT_GE(t, prev);
    prev = t;
    // Rounded once from the exact (double) time, not accumulated gaps.
    ASSERT_EQ(t, secondsToNs(*q.nextSeconds(r2)));
  }
}

TEST(Arrival, ScheduleRatesPerSegment) {
  ArrivalSpec a;
  a.process = ArrivalSpec::Process::Schedule;
  a.schedule = {{100, 5.0}, {50, 0.0}, {100, 20.0}, {10, 2.0}};  // last rate (2/s) persists
  ArrivalProcess p(a);
  Rng r(3);
  int c[5] = {0, 0, 0, 0, 0};
  for (;;) {
    const double t = *p.nextSeconds(r);
    if (t >= 1260) break;
    if (t < 100) ++c[0];
    else if (t < 150) ++c[1];
    else if (t < 250) ++c[2];
    else if (t < 260) ++c[3];
    else ++c[4];
  }
  EXPECT_NEAR(c[0], 500, 5 * std::sqrt(500.0));
  EXPECT_EQ(c[1], 0);  // zero-rate segment: no arrivals
  EXPECT_NEAR(c[2], 2000, 5 * std::sqrt(2000.0));
  EXPECT_NEAR(c[3], 20, 5 * std::sqrt(20.0));
  EXPECT_NEAR(c[4], 2000, 5 * std::sqrt(2000.0));  // 1000 s at 2/s
  EXPECT_FALSE(p.finite());
}

TEST(Arrival, ScheduleEndingAtZeroRateEnds) {
  ArrivalSpec a;
  a.process = ArrivalSpec::Process::Schedule;
  a.schedule = {{10, 50.0}, {1, 0.0}};
  ArrivalProcess p(a);
  EXPECT_TRUE(p.finite());
  Rng r(4);
  int n = 0;
  while (auto t = p.next(r)) {
    ASSERT_LE(*t, secondsToNs(10));
    ++n;
  }
  EXPECT_NEAR(n, 500, 5 * std::sqrt(500.0));
  EXPECT_FALSE(p.next(r).has_value());
}

TEST(Arrival, ValidationErrors) {
  ArrivalSpec a;
  a.rate = 0;
  EXPECT_NE(inputErrorOf([&] { ArrivalProcess p(a); }).find("workload.arrival.rate"), std::string::npos);
  a.rate = 1;
  a.process = ArrivalSpec::Process::Gamma;
  a.cv = -1;
  EXPECT_NE(inputErrorOf([&] { ArrivalProcess p(a); }).find("workload.arrival.cv"), std::string::npos);
  a.process = ArrivalSpec::Process::Schedule;
  EXPECT_NE(inputErrorOf([&] { ArrivalProcess p(a); }).find("at least one segment"), std::string::npos);
  a.schedule = {{10, 1}, {0, 1}};
  EXPECT_NE(inputErrorOf([&] { ArrivalProcess p(a); }).find("schedule[1].duration_s"), std::string::npos);
  a.schedule = {{10, -1}};
  EXPECT_NE(inputErrorOf([&] { ArrivalProcess p(a); }).find("schedule[0].rate"), std::string::npos);
}
