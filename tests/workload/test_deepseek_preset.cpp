// The deepseek-r1-production preset: quantile tables embedded from
// resources/workloads/deepseek-r1-production.json (docs/workloads.md).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "util/rng.h"
#include "workload/length_dist.h"
#include "workload/presets.h"
#include "workload/workload_source.h"

using namespace sl;
using sl::testing::inputErrorOf;
using sl::testing::quantile;

namespace {

const char* kId = "deepseek-r1-production";

nlohmann::json loadJson(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

nlohmann::json resourceJson() {
  return loadJson(std::filesystem::path(SERVELAB_SOURCE_DIR) / "resources/workloads/deepseek-r1-production.json");
}

struct Draws {
  std::vector<double> in, out, frac, re, an;
};

Draws draw(std::uint64_t seed, int n) {
  WorkloadSpec w;
  applyWorkloadPreset(kId, w);
  w.requests = n;
  w.arrival.rate = 100;
  auto s = makeWorkload(w, seed, 1 << 20, ".", std::nullopt);  // huge context: the raw preset
  Draws d;
  RequestSpec r;
  while (s->next(r)) {
    d.in.push_back(r.input);
    d.re.push_back(r.reasoning);
    d.an.push_back(r.answer);
    d.out.push_back(r.reasoning + r.answer);
    d.frac.push_back(static_cast<double>(r.reasoning) / static_cast<double>(r.reasoning + r.answer));
  }
  return d;
}

const Draws& big() {
  static const Draws d = draw(2024, 200000);
  return d;
}

// Table value at `level` (an exact level of the table).
double tableAt(const nlohmann::json& doc, const char* key, double level) {
  const auto& levels = doc.at("quantile_levels");
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (std::fabs(levels[i].get<double>() - level) < 1e-12) return doc.at(key).at("quantiles")[i].get<double>();
  ADD_FAILURE() << "no level " << level;
  return 0;
}

}  // namespace

TEST(DeepSeekR1Preset, Registered) {
  bool found = false;
  for (const auto& [id, desc] : workloadPresets())
    if (id == kId) found = !desc.empty();
  EXPECT_TRUE(found);
  EXPECT_EQ(presetDomain(kId), kDomainNone);
  WorkloadSpec w;
  applyWorkloadPreset(kId, w);
  EXPECT_EQ(w.preset.value_or(""), kId);
  EXPECT_EQ(w.reasoning_tokens.path, std::string(kBuiltinTablePrefix) + kId);
}

TEST(DeepSeekR1Preset, ResourceCarriesTheSourceFigures) {
  const nlohmann::json res = resourceJson();
  EXPECT_NE(res.at("license").get<std::string>().find("Apache-2.0"), std::string::npos);
  EXPECT_NE(res.at("source").get<std::string>().find("ServeGen"), std::string::npos);
  const auto shared = std::filesystem::path(SERVELAB_SHARED_DIR) /
                      "traces/deepseek-r1-production/length_and_reasoning_quantiles.json";
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << "no " << shared;
  const nlohmann::json src = loadJson(shared);
  EXPECT_EQ(res.at("quantile_levels"), src.at("quantile_levels"));
  for (const char* k : {"input_tokens", "output_tokens", "reason_ratio"}) {
    EXPECT_EQ(res.at(k).at("quantiles"), src.at(k).at("quantiles")) << k;
    EXPECT_EQ(res.at(k).at("mean"), src.at(k).at("mean")) << k;
  }
}

TEST(DeepSeekR1Preset, EmbeddedTableMatchesResourceAndTails) {
  const nlohmann::json res = resourceJson();
  const WorkloadQuantiles& t = builtinWorkloadQuantiles(kId);
  const auto levels = res.at("quantile_levels").get<std::vector<double>>();
  ASSERT_EQ(t.input.levels.size(), levels.size() + 2);
  const std::pair<const QuantileCurve*, const char*> curves[] = {
      {&t.input, "input_tokens"}, {&t.output, "output_tokens"}, {&t.reasoningFraction, "reason_ratio"}};
  for (const auto& [c, key] : curves) {
    const auto q = res.at(key).at("quantiles").get<std::vector<double>>();
    for (std::size_t i = 0; i < levels.size(); ++i) EXPECT_DOUBLE_EQ(c->at(levels[i]), q[i]) << key << " " << i;
    // Tails: linear from tail_bounds.min at level 0, to tail_bounds.max at 1.
    const double lo = res.at(key).at("tail_bounds").at("min").get<double>();
    const double hi = res.at(key).at("tail_bounds").at("max").get<double>();
    EXPECT_DOUBLE_EQ(c->at(0.0), lo) << key;
    EXPECT_DOUBLE_EQ(c->at(1.0), hi) << key;
    EXPECT_NEAR(c->at(levels.front() / 2), 0.5 * (lo + q.front()), 1e-9) << key;
    const double top = 0.5 * (levels.back() + 1.0);
    EXPECT_NEAR(c->at(top), 0.5 * (q.back() + hi), 1e-9) << key;
    EXPECT_GE(hi, q.back());
  }
  EXPECT_LE(t.reasoningFraction.at(1.0), 1.0);
  // Between levels: linear (input p50 = 208, p51 = 208; output p50 792, p51 821).
  EXPECT_NEAR(t.output.at(0.505), 0.5 * (792 + 821), 1e-9);
  EXPECT_NE(inputErrorOf([] { builtinWorkloadQuantiles("no-such-table"); }).find("no-such-table"),
            std::string::npos);
}

TEST(DeepSeekR1Preset, SampledQuantilesMatchTheTable) {
  const nlohmann::json res = resourceJson();
  const Draws& d = big();
  ASSERT_EQ(d.in.size(), 200000u);
  auto near = [](double got, double want, double rel, double abs, const std::string& what) {
    EXPECT_NEAR(got, want, std::max(abs, rel * want)) << what;
  };
  for (double p : {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99})
    near(quantile(d.in, p), tableAt(res, "input_tokens", p), 0.04, 2, "input p" + std::to_string(p));
  for (double p : {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995})
    near(quantile(d.out, p), tableAt(res, "output_tokens", p), 0.03, 2, "output p" + std::to_string(p));
  for (double p : {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95})
    near(quantile(d.frac, p), tableAt(res, "reason_ratio", p), 0, 0.01, "fraction p" + std::to_string(p));
}

TEST(DeepSeekR1Preset, MeansSplitAndBounds) {
  const Draws& d = big();
  const double meanFrac = sl::testing::meanOf(d.frac);
  EXPECT_NEAR(meanFrac, 0.70, 0.01);
  EXPECT_NEAR(meanFrac, 0.7017329179502971, 0.005);
  EXPECT_NEAR(sl::testing::meanOf(d.out), 1527.4, 1527.4 * 0.05);
  EXPECT_NEAR(sl::testing::meanOf(d.in), 1268.2, 1268.2 * 0.06);
  const WorkloadQuantiles& t = builtinWorkloadQuantiles(kId);
  for (std::size_t i = 0; i < d.in.size(); ++i) {
    ASSERT_GE(d.an[i], 1);
    ASSERT_GE(d.re[i], 0);
    ASSERT_GE(d.in[i], 1);
    ASSERT_LE(d.out[i], t.output.values.back() + 1);
    ASSERT_LE(d.in[i], t.input.values.back() + 1);
  }
}

TEST(DeepSeekR1Preset, SplitIsReasoningFractionTimesOutput) {
  const WorkloadQuantiles& t = builtinWorkloadQuantiles(kId);
  Rng a = Rng::forStream(9, "x"), b = Rng::forStream(9, "x");
  for (int i = 0; i < 1000; ++i) {
    const OutputSplit s = splitOutput(t, a);
    const double u1 = b.uniform01(), u2 = b.uniform01();
    const std::int64_t out = std::max<std::int64_t>(1, std::llround(t.output.at(u1)));
    std::int64_t re = std::llround(t.reasoningFraction.at(u2) * static_cast<double>(out));
    if (out - re < 1) re = out - 1;
    EXPECT_EQ(s.reasoning, re);
    EXPECT_EQ(s.answer, out - re);
  }
}

TEST(DeepSeekR1Preset, Deterministic) {
  const Draws a = draw(7, 5000), b = draw(7, 5000), c = draw(8, 5000);
  EXPECT_EQ(a.in, b.in);
  EXPECT_EQ(a.re, b.re);
  EXPECT_EQ(a.an, b.an);
  EXPECT_NE(a.re, c.re);
  EXPECT_NE(a.in, c.in);
}

TEST(DeepSeekR1Preset, FieldsAloneAreMarginals) {
  // A sampler of one field on its own (not the joint split) still draws the
  // right marginal: reasoning_tokens alone, answer_tokens alone.
  const std::string table = std::string(kBuiltinTablePrefix) + kId;
  LengthSampler re(empiricalDist(table, "reasoning_tokens")), an(empiricalDist(table, "answer_tokens")),
      out(empiricalDist(table, "output_tokens"));
  EXPECT_TRUE(re.jointSplitWith(an));
  EXPECT_FALSE(an.jointSplitWith(re));
  EXPECT_FALSE(re.jointSplitWith(out));
  Rng rng = Rng::forStream(3, "t");
  std::vector<double> o;
  for (int i = 0; i < 50000; ++i) o.push_back(static_cast<double>(out.sample(rng)));
  EXPECT_NEAR(quantile(o, 0.5), 792, 792 * 0.03);
  EXPECT_NE(inputErrorOf([&] { LengthSampler bad(empiricalDist(table, "bogus"), ".", "workload.input_tokens"); })
                .find("workload.input_tokens"),
            std::string::npos);
}
