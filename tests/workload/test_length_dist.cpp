#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "test_util.h"
#include "workload/length_dist.h"

using namespace sl;
using sl::testing::inputErrorOf;
using sl::testing::quantile;
using sl::testing::TempDir;

namespace {

std::vector<double> draws(const LengthSampler& s, int n = 200000, std::uint64_t seed = 1) {
  Rng r(seed);
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v.push_back(static_cast<double>(s.sample(r)));
  return v;
}

}  // namespace

TEST(LengthDist, Constant) {
  LengthSampler s(constantDist(37.4));
  Rng r(1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.sample(r), 37);
  EXPECT_DOUBLE_EQ(s.mean(), 37.4);
}

TEST(LengthDist, UniformIntegerBoundsInclusive) {
  LengthSampler s(uniformDist(128, 131));
  std::map<std::int64_t, int> counts;
  Rng r(2);
  for (int i = 0; i < 40000; ++i) ++counts[s.sample(r)];
  ASSERT_EQ(counts.size(), 4u);
  EXPECT_EQ(counts.begin()->first, 128);
  EXPECT_EQ(counts.rbegin()->first, 131);
  for (auto [k, c] : counts) EXPECT_NEAR(c, 10000, 500) << k;
  LengthSampler one(uniformDist(5, 5));
  EXPECT_EQ(one.sample(r), 5);
}

TEST(LengthDist, LognormalMedianP90Recovered) {
  LengthSampler s(lognormalDist(512, 2048));
  std::vector<double> v;
  Rng r(3);
  for (int i = 0; i < 200000; ++i) v.push_back(s.sampleRaw(r));
  EXPECT_NEAR(quantile(v, 0.5), 512, 512 * 0.02);
  EXPECT_NEAR(quantile(v, 0.9), 2048, 2048 * 0.03);
  const auto p = lognormalParams(lognormalDist(512, 2048));
  EXPECT_DOUBLE_EQ(p.mu, std::log(512.0));
  EXPECT_DOUBLE_EQ(p.sigma, std::log(4.0) / kZ90);
  // mu / sigma form.
  LengthSampler m(lognormalMuSigma(std::log(100.0), 0.5));
  const auto w = draws(m);
  EXPECT_NEAR(quantile(w, 0.5), 100, 2);
  EXPECT_NEAR(sl::testing::meanOf(w), 100 * std::exp(0.125), 1.5);
}

TEST(LengthDist, ClipMinMaxApplyAfterRounding) {
  LengthSampler s(clipped(lognormalDist(100, 1000), 50, 300));
  const auto v = draws(s, 50000);
  double lo = 1e9, hi = 0;
  int atMin = 0, atMax = 0;
  for (double x : v) {
    lo = std::min(lo, x), hi = std::max(hi, x);
    atMin += x == 50, atMax += x == 300;
    ASSERT_EQ(x, std::round(x));
  }
  EXPECT_EQ(lo, 50);
  EXPECT_EQ(hi, 300);
  EXPECT_GT(atMin, 1000);
  EXPECT_GT(atMax, 1000);
}

TEST(LengthDist, MixtureWeights) {
  LengthSampler s(mixtureDist({constantDist(10), constantDist(20), constantDist(30)}, {1, 2, 7}));
  std::map<std::int64_t, int> counts;
  Rng r(4);
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[s.sample(r)];
  EXPECT_NEAR(counts[10], 0.1 * n, 600);
  EXPECT_NEAR(counts[20], 0.2 * n, 800);
  EXPECT_NEAR(counts[30], 0.7 * n, 900);
  EXPECT_DOUBLE_EQ(s.mean(), 0.1 * 10 + 0.2 * 20 + 0.7 * 30);
  // Part clip then mixture clip.
  LengthSampler c(clipped(mixtureDist({clipped(constantDist(500), std::nullopt, 400), constantDist(5)}, {1, 1}),
                          10, std::nullopt));
  for (int i = 0; i < 100; ++i) {
    const auto x = c.sample(r);
    EXPECT_TRUE(x == 400 || x == 10) << x;
  }
  // Zero-weight part is never drawn.
  LengthSampler z(mixtureDist({constantDist(1), constantDist(2)}, {0, 1}));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(z.sample(r), 2);
}

TEST(LengthDist, EmpiricalFromCsvColumn) {
  TempDir dir;
  dir.write("lens.csv", "id,\"tokens\",note\n1,10,a\n2,20,\"b,c\"\n3,30,d\n4, 40 ,e\n");
  LengthDist d = empiricalDist("lens.csv", "tokens");  // relative: resolved against base_dir
  LengthSampler s(d, dir.str());
  std::map<std::int64_t, int> counts;
  Rng r(5);
  for (int i = 0; i < 40000; ++i) ++counts[s.sample(r)];
  ASSERT_EQ(counts.size(), 4u);
  for (auto [k, c] : counts) EXPECT_NEAR(c, 10000, 500) << k;
  EXPECT_DOUBLE_EQ(s.mean(), 25);
}

TEST(LengthDist, EmpiricalFromJsonLines) {
  TempDir dir;
  const std::string p = dir.write("lens.jsonl", "{\"out\": 7, \"x\": 1}\n\n{\"out\": 9}\n");
  LengthSampler s(empiricalDist(p, "out"));
  Rng r(6);
  for (int i = 0; i < 100; ++i) {
    const auto x = s.sample(r);
    EXPECT_TRUE(x == 7 || x == 9);
  }
}

TEST(LengthDist, EmpiricalErrorsNameFileAndLine) {
  TempDir dir;
  dir.write("bad.csv", "tokens\n10\nabc\n");
  std::string msg = inputErrorOf([&] { LengthSampler s(empiricalDist("bad.csv", "tokens"), dir.str()); });
  EXPECT_NE(msg.find("bad.csv:3: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("abc"), std::string::npos) << msg;

  dir.write("bad.jsonl", "{\"n\": 1}\n{\"n\": \"x\"}\n");
  msg = inputErrorOf([&] { LengthSampler s(empiricalDist("bad.jsonl", "n"), dir.str()); });
  EXPECT_NE(msg.find("bad.jsonl:2: "), std::string::npos) << msg;

  dir.write("empty.csv", "tokens\n");
  msg = inputErrorOf([&] { LengthSampler s(empiricalDist("empty.csv", "tokens"), dir.str()); });
  EXPECT_NE(msg.find("no values"), std::string::npos) << msg;

  msg = inputErrorOf([&] { LengthSampler s(empiricalDist("bad.csv", "nope"), dir.str()); });
  EXPECT_NE(msg.find("no column \"nope\""), std::string::npos) << msg;

  msg = inputErrorOf([&] { LengthSampler s(empiricalDist("missing.csv", "x"), dir.str()); });
  EXPECT_NE(msg.find("missing.csv"), std::string::npos) << msg;
}

// loadEmpiricalValues keeps the values of the last files it parsed: a
// rewrite of the same path, even of the same size within one timestamp tick,
// must be read again, and a column or file that fails must fail every time.
TEST(LengthDist, EmpiricalValuesKeptOnlyForTheSameBytes) {
  TempDir dir;
  const std::string p = dir.write("k.csv", "a,b\n1,5\n2,6\n");
  const std::int64_t before = detail::empiricalParses();
  EXPECT_EQ(loadEmpiricalValues(p, "a"), (std::vector<double>{1, 2}));
  EXPECT_EQ(loadEmpiricalValues(p, "b"), (std::vector<double>{5, 6}));
  EXPECT_EQ(loadEmpiricalValues(p, "a"), (std::vector<double>{1, 2}));  // kept
  EXPECT_EQ(detail::empiricalParses() - before, 2);
  dir.write("k.csv", "a,b\n3,5\n4,6\n");  // same size, at once
  EXPECT_EQ(loadEmpiricalValues(p, "a"), (std::vector<double>{3, 4}));
  EXPECT_EQ(detail::empiricalParses() - before, 3);
  EXPECT_NE(inputErrorOf([&] { loadEmpiricalValues(p, "c"); }).find("no column \"c\""), std::string::npos);
  EXPECT_NE(inputErrorOf([&] { loadEmpiricalValues(p, "c"); }).find("no column \"c\""), std::string::npos);
  dir.write("k.csv", "a,b\n3,5\nx,6\n");
  EXPECT_NE(inputErrorOf([&] { loadEmpiricalValues(p, "a"); }).find("k.csv:3: "), std::string::npos);
  // Another file with the same bytes under another name is its own entry.
  const std::string q = dir.write("k2.csv", "a,b\n3,5\n4,6\n");
  EXPECT_EQ(loadEmpiricalValues(q, "a"), (std::vector<double>{3, 4}));
}

TEST(LengthDist, EmpiricalValuesOfLargeFilesAreNotKept) {
  // A file of exactly the limit is kept; one byte more and it is parsed at
  // every call (the cache's memory stays bounded: length_dist.h).
  TempDir dir;
  const auto fileOf = [](std::size_t bytes) {
    std::string body = "a\n";
    if ((bytes - body.size()) % 2 != 0) body += "17\n";  // then rows of two bytes fill it exactly
    body.reserve(bytes);
    while (body.size() < bytes) body += "7\n";
    return body;
  };
  const std::string atLimit = dir.write("at.csv", fileOf(detail::kEmpiricalKeptMaxBytes));
  const std::string over = dir.write("over.csv", fileOf(detail::kEmpiricalKeptMaxBytes + 1));
  const std::int64_t before = detail::empiricalParses();
  const std::vector<double> first = loadEmpiricalValues(atLimit, "a");
  ASSERT_GT(first.size(), std::size_t{1000000});
  EXPECT_EQ(loadEmpiricalValues(atLimit, "a"), first);
  EXPECT_EQ(detail::empiricalParses() - before, 1);
  EXPECT_EQ(loadEmpiricalValues(over, "a").size(), first.size());
  EXPECT_EQ(loadEmpiricalValues(over, "a").size(), first.size());
  EXPECT_EQ(detail::empiricalParses() - before, 3);
}

TEST(LengthDist, ValidationErrors) {
  auto err = [](const LengthDist& d) { return inputErrorOf([&] { LengthSampler s(d, ".", "workload.input_tokens"); }); };
  std::string m = err(lognormalDist(512, 100));
  EXPECT_NE(m.find("workload.input_tokens: "), std::string::npos) << m;
  EXPECT_NE(m.find("p90"), std::string::npos) << m;
  EXPECT_NE(err(lognormalDist(0, 100)).find("median"), std::string::npos);
  EXPECT_NE(err(lognormalMuSigma(1, -1)).find("sigma"), std::string::npos);
  LengthDist half;
  half.kind = LengthDist::Kind::Lognormal;
  half.median = 10;
  EXPECT_NE(err(half).find("p90"), std::string::npos);
  EXPECT_NE(err(uniformDist(10, 5)).find("less than min"), std::string::npos);
  EXPECT_NE(err(constantDist(-1)).find(">= 0"), std::string::npos);
  EXPECT_NE(err(mixtureDist({}, {})).find("at least one part"), std::string::npos);
  EXPECT_NE(err(mixtureDist({constantDist(1)}, {1, 2})).find("weights"), std::string::npos);
  EXPECT_NE(err(mixtureDist({constantDist(1)}, {0})).find("sum to 0"), std::string::npos);
  m = err(mixtureDist({constantDist(1), lognormalDist(5, 1)}, {1, 1}));
  EXPECT_NE(m.find("workload.input_tokens.parts[1]"), std::string::npos) << m;
  EXPECT_NE(err(clipped(constantDist(1), 10, 5)).find("greater than max"), std::string::npos);
  EXPECT_NE(err(empiricalDist("", "x")).find("path"), std::string::npos);
}
