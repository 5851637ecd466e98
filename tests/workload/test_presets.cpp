#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "workload/length_dist.h"
#include "workload/presets.h"
#include "workload/workload_source.h"

using namespace sl;
using sl::testing::inputErrorOf;
using sl::testing::quantile;

namespace {

struct Stats {
  std::vector<double> in, re, an;
};

Stats sampleOf(const std::string& preset, int n = 100000) {
  WorkloadSpec w;
  applyWorkloadPreset(preset, w);
  w.requests = n;
  w.arrival.rate = 100;
  auto s = makeWorkload(w, 17, 1 << 20, ".", std::nullopt);  // huge context: see the raw presets
  Stats st;
  RequestSpec r;
  while (s->next(r)) {
    st.in.push_back(r.input);
    st.re.push_back(r.reasoning);
    st.an.push_back(r.answer);
  }
  return st;
}

double fractionBelow(const std::vector<double>& v, double x) {
  double c = 0;
  for (double y : v) c += y < x;
  return c / static_cast<double>(v.size());
}

// Median / p90 per field as documented in docs/workloads.md (tolerance 4%).
struct Row {
  const char* preset;
  double inMed, inP90, reMed, reP90, anMed, anP90;
};

const Row kLognormalRows[] = {
    {"chat", 512, 2048, 0, 0, 256, 1024},
    {"alpaca-reasoning", 40, 160, 384, 1536, 640, 1600},
    {"arena-hard-reasoning", 192, 960, 512, 2304, 960, 2304},
    {"reasoning-heavy", 160, 480, 4096, 12288, 480, 1200},
    {"selfsched-math", 96, 256, 0, 0, 640, 3072},
    {"selfsched-code", 320, 900, 0, 0, 960, 2880},
    {"selfsched-sharegpt", 64, 512, 0, 0, 648, 1822.5},
    {"selfsched-math-thinking", 96, 256, 0, 0, 8192, 16384},
    {"selfsched-code-thinking", 80, 120, 0, 0, 16384, 16384},
    {"selfsched-sharegpt-thinking", 64, 512, 0, 0, 2048, 6144},
};

void expectQ(const std::vector<double>& v, double q, double want, const std::string& what) {
  const double got = quantile(v, q);
  EXPECT_NEAR(got, want, std::max(1.0, want * 0.04)) << what << " q" << q;
}

}  // namespace

TEST(Presets, ListHasEveryPresetWithDescription) {
  const auto list = workloadPresets();
  std::vector<std::string> ids;
  for (const auto& [id, desc] : list) {
    ids.push_back(id);
    EXPECT_FALSE(desc.empty()) << id;
  }
  const std::vector<std::string> want = {"chat",           "alpaca-reasoning",  "arena-hard-reasoning",
                                         "reasoning-heavy", "reasoning-mix",     "selfsched-math",
                                         "selfsched-code", "selfsched-sharegpt", "selfsched-math-thinking",
                                         "selfsched-code-thinking", "selfsched-sharegpt-thinking", "pascal-char-reasoning",
                                         "pascal-char-answering", "deepseek-r1-production", "sharegpt-long"};
  EXPECT_EQ(ids, want);
}

TEST(Presets, UnknownNameListsKnownWithHint) {
  WorkloadSpec w;
  std::string m = inputErrorOf([&] { applyWorkloadPreset("alpaca-reasonin", w); });
  EXPECT_NE(m.find("did you mean 'alpaca-reasoning'"), std::string::npos) << m;
  EXPECT_NE(m.find("selfsched-sharegpt"), std::string::npos) << m;
  m = inputErrorOf([&] { applyWorkloadPreset("zzzzzzzzzzzzzzzzzzzzzzzzz", w); });
  EXPECT_EQ(m.find("did you mean"), std::string::npos) << m;
  EXPECT_NE(m.find("known presets: chat,"), std::string::npos) << m;
}

TEST(Presets, ApplySetsNameAndDomain) {
  WorkloadSpec w;
  applyWorkloadPreset("selfsched-math", w);
  ASSERT_TRUE(w.preset.has_value());
  EXPECT_EQ(*w.preset, "selfsched-math");
  EXPECT_EQ(presetDomain("selfsched-math"), kDomainMath);
  EXPECT_EQ(presetDomain("selfsched-code"), kDomainCode);
  EXPECT_EQ(presetDomain("selfsched-sharegpt"), kDomainChat);
  EXPECT_EQ(presetDomain("selfsched-math-thinking"), kDomainMath);
  EXPECT_EQ(presetDomain("selfsched-code-thinking"), kDomainCode);
  EXPECT_EQ(presetDomain("selfsched-sharegpt-thinking"), kDomainChat);
  EXPECT_EQ(presetDomain("chat"), kDomainNone);
  EXPECT_EQ(domainName(kDomainMath), "math");
}

TEST(Presets, ChatPresetEqualsTheDefaultWorkload) {
  WorkloadSpec def, chat;
  def.requests = chat.requests = 200;
  applyWorkloadPreset("chat", chat);
  auto a = makeWorkload(def, 1, 8192, ".", std::nullopt);
  auto b = makeWorkload(chat, 1, 8192, ".", std::nullopt);
  RequestSpec x, y;
  while (a->next(x)) {
    ASSERT_TRUE(b->next(y));
    EXPECT_EQ(x, y);
  }
}

TEST(Presets, LognormalPresetsMatchDocumentedQuantiles) {
  for (const auto& row : kLognormalRows) {
    const auto s = sampleOf(row.preset);
    const std::string p = row.preset;
    expectQ(s.in, 0.5, row.inMed, p + " input");
    expectQ(s.in, 0.9, row.inP90, p + " input");
    expectQ(s.re, 0.5, row.reMed, p + " reasoning");
    expectQ(s.re, 0.9, row.reP90, p + " reasoning");
    expectQ(s.an, 0.5, row.anMed, p + " answer");
    expectQ(s.an, 0.9, row.anP90, p + " answer");
  }
}

TEST(Presets, PaperStatistics) {
  // PASCAL: > 70% of AlpacaEval / Arena-Hard requests reason < 1000 tokens.
  const auto alpaca = sampleOf("alpaca-reasoning");
  const auto arena = sampleOf("arena-hard-reasoning");
  EXPECT_GT(fractionBelow(alpaca.re, 1000), 0.78);
  EXPECT_GT(fractionBelow(arena.re, 1000), 0.70);
  EXPECT_GT(quantile(arena.re, 0.5), quantile(alpaca.re, 0.5));
  EXPECT_GT(quantile(arena.in, 0.5), quantile(alpaca.in, 0.5));
  // Chat: answers are long relative to reasoning.
  EXPECT_GT(quantile(alpaca.an, 0.5), quantile(alpaca.re, 0.5));
  // Reasoning-heavy: reasoning ~8.5x the answer (PASCAL: "as much as 8.48x").
  const auto heavy = sampleOf("reasoning-heavy");
  const double ratio = quantile(heavy.re, 0.5) / quantile(heavy.an, 0.5);
  EXPECT_NEAR(ratio, 8.53, 0.5);
  // Self-scheduling: tail strength math > code > ShareGPT (p99 / median).
  const auto m = sampleOf("selfsched-math"), c = sampleOf("selfsched-code"), g = sampleOf("selfsched-sharegpt");
  auto tail = [](const std::vector<double>& v) { return quantile(v, 0.99) / quantile(v, 0.5); };
  EXPECT_GT(tail(m.an), tail(c.an));
  EXPECT_GT(tail(c.an), tail(g.an));
  // ShareGPT answers are shorter than math's on average (Table 1: FCFS
  // finishes 689 vs 211). Not "less than half" (the pre-issue-24 bound): the
  // refit to Table 1's count on one A100-40G gives a mean 0.68x math's, and
  // that already makes FCFS finish 2.9x as many (690.5 vs 236): a request's
  // cost is not its mean length (docs/workloads.md).
  EXPECT_LT(sl::testing::meanOf(g.an), 0.75 * sl::testing::meanOf(m.an));
  // Thinking mode (App. A.2, A.6): every answer capped at 16 384; longer
  // than non-thinking in each domain, code longest (FCFS finishes 7 TACO,
  // 25 math, 203 ShareGPT requests in 20 minutes); TACO problems < 100 words.
  const auto mt = sampleOf("selfsched-math-thinking"), ct = sampleOf("selfsched-code-thinking"),
             gt = sampleOf("selfsched-sharegpt-thinking");
  for (const auto* t : {&mt, &ct, &gt}) EXPECT_LE(*std::max_element(t->an.begin(), t->an.end()), 16384.0);
  EXPECT_GT(sl::testing::meanOf(mt.an), 2.0 * sl::testing::meanOf(m.an));
  EXPECT_GT(sl::testing::meanOf(ct.an), 2.0 * sl::testing::meanOf(c.an));
  EXPECT_GT(sl::testing::meanOf(gt.an), 2.0 * sl::testing::meanOf(g.an));
  EXPECT_GT(sl::testing::meanOf(ct.an), sl::testing::meanOf(mt.an));
  EXPECT_GT(sl::testing::meanOf(mt.an), sl::testing::meanOf(gt.an));
  EXPECT_LE(*std::max_element(ct.in.begin(), ct.in.end()), 160.0);
}

TEST(Presets, ReasoningMixIsAJointFiftyFifty) {
  const auto s = sampleOf("reasoning-mix");
  // Heavy-component requests have reasoning >> answer; chat ones do not.
  int heavyLike = 0;
  for (std::size_t i = 0; i < s.re.size(); ++i) heavyLike += s.re[i] > 1500 && s.an[i] < 1500;
  const double frac = static_cast<double>(heavyLike) / static_cast<double>(s.re.size());
  EXPECT_GT(frac, 0.40);
  EXPECT_LT(frac, 0.60);
  // Mixture median sits between the two parts' medians.
  const double med = quantile(s.re, 0.5);
  EXPECT_GT(med, 512);
  EXPECT_LT(med, 4096);
}

TEST(Presets, PascalCharacterizationPresets) {
  const auto r = sampleOf("pascal-char-reasoning", 20000);
  for (std::size_t i = 0; i < r.in.size(); ++i) {
    ASSERT_EQ(r.in[i], 128);
    ASSERT_GE(r.re[i], 128);
    ASSERT_LE(r.re[i], 2048);
    ASSERT_EQ(r.an[i], 16);
  }
  EXPECT_NEAR(sl::testing::meanOf(r.re), (128 + 2048) / 2.0, 10);
  const auto a = sampleOf("pascal-char-answering", 20000);
  for (std::size_t i = 0; i < a.in.size(); ++i) {
    ASSERT_EQ(a.in[i] + a.re[i], 128);
    ASSERT_GE(a.an[i], 128);
    ASSERT_LE(a.an[i], 2048);
  }
  EXPECT_EQ(quantile(a.an, 0.0), 128);
  EXPECT_EQ(quantile(a.an, 1.0), 2048);
}
