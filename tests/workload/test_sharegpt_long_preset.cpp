// The sharegpt-long preset (issue 25 item 2): ShareGPT prompts below 8K,
// Mooncake conversation prompts above, ShareGPT answers; quantile table in
// resources/workloads/sharegpt-long.json built by
// docs/analysis/sharegpt_long_table.py (docs/workloads.md "sharegpt-long").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "workload/presets.h"
#include "workload/workload_source.h"

using namespace sl;
using sl::testing::quantile;

namespace {

const char* kId = "sharegpt-long";

nlohmann::json resourceJson() {
  std::ifstream in(std::filesystem::path(SERVELAB_SOURCE_DIR) / "resources/workloads/sharegpt-long.json");
  return nlohmann::json::parse(in);
}

struct Draws {
  std::vector<double> in, re, an;
  int maxTotal = 0;
};

Draws draw(int maxContext, int n, std::uint64_t seed = 7) {
  WorkloadSpec w;
  applyWorkloadPreset(kId, w);
  w.requests = n;
  w.arrival.rate = 100;
  auto s = makeWorkload(w, seed, maxContext, ".", std::nullopt);
  Draws d;
  RequestSpec r;
  while (s->next(r)) {
    d.in.push_back(r.input);
    d.re.push_back(r.reasoning);
    d.an.push_back(r.answer);
    d.maxTotal = std::max(d.maxTotal, r.input + r.reasoning + r.answer);
  }
  return d;
}

}  // namespace

TEST(ShareGptLongPreset, RegisteredWithSourceAndMethod) {
  EXPECT_EQ(presetDomain(kId), kDomainNone);
  WorkloadSpec w;
  applyWorkloadPreset(kId, w);
  EXPECT_EQ(w.preset.value_or(""), kId);
  const auto doc = resourceJson();
  EXPECT_NE(doc.at("source").get<std::string>().find("Mooncake"), std::string::npos);
  EXPECT_NE(doc.at("method").get<std::string>().find("sharegpt_long_table.py"), std::string::npos);
  // No request longer than the paper's 128K limit exists in the table.
  EXPECT_LE(doc.at("input_tokens").at("tail_bounds").at("max").get<double>() +
                doc.at("output_tokens").at("tail_bounds").at("max").get<double>(),
            131072.0);
}

// The long tail the paper's setting has: statistics of 100 000 draws against
// the table's own levels (median 5 837, p90 27 367, p99 85 401 input tokens;
// answers <= 1 024), with a 128K context so nothing is cut.
TEST(ShareGptLongPreset, LongTailStatistics) {
  const Draws d = draw(131072, 100000);
  ASSERT_EQ(d.in.size(), 100000u);
  EXPECT_NEAR(quantile(d.in, 0.5), 5837, 5837 * 0.05);
  EXPECT_NEAR(quantile(d.in, 0.9), 27367, 27367 * 0.05);
  EXPECT_NEAR(quantile(d.in, 0.99), 85401, 85401 * 0.08);
  // About 45 % of prompts are above 8K (the Mooncake share), none above 126 195.
  const auto above8k = std::count_if(d.in.begin(), d.in.end(), [](double x) { return x > 8192; });
  EXPECT_NEAR(static_cast<double>(above8k) / 1e5, 0.4498, 0.01);
  EXPECT_LE(*std::max_element(d.in.begin(), d.in.end()), 126195);
  EXPECT_LE(*std::max_element(d.an.begin(), d.an.end()), 1024);
  EXPECT_EQ(*std::max_element(d.re.begin(), d.re.end()), 0);
  EXPECT_LE(d.maxTotal, 131072);
}

// A model with a shorter window (Qwen3-8B: 40 960) gets its requests cut to
// fit (clipRequestLengths: the prompt to window − 1, then the answer).
TEST(ShareGptLongPreset, ShorterContextWindowsCutRequests) {
  const Draws d = draw(40960, 20000);
  EXPECT_LE(d.maxTotal, 40960);
  EXPECT_EQ(*std::max_element(d.in.begin(), d.in.end()), 40959);
  for (double a : d.an) ASSERT_GE(a, 1);
}
