// The `cost` subcommand: argument parsing and the report.
#include <gtest/gtest.h>

#include "cost/cost_report.h"
#include "util/error.h"

#include "../common/input_error.h"

using namespace sl;
using sl::testutil::errorOf;

namespace {
CostModel make(const char* model, int tp = 1) {
  return CostModel(PresetRegistry::builtin().gpu("h100-sxm-80g"),
                   PresetRegistry::builtin().model(model), tp);
}
}  // namespace

TEST(CostArgs, Prefill) {
  const BatchShape a = parsePrefillArg("512x8");
  EXPECT_EQ(a.prefill_seqs, 8);
  EXPECT_DOUBLE_EQ(a.prefill_tokens, 4096);
  EXPECT_DOUBLE_EQ(a.prefill_attn, 8.0 * 512 * 256);
  EXPECT_EQ(a.decode_seqs, 0);
  const BatchShape b = parsePrefillArg("2048");
  EXPECT_EQ(b.prefill_seqs, 1);
  EXPECT_DOUBLE_EQ(b.prefill_tokens, 2048);
  EXPECT_DOUBLE_EQ(b.prefill_attn, 2048.0 * 1024);
}

TEST(CostArgs, Decode) {
  const BatchShape d = parseDecodeArg("32@1024");
  EXPECT_EQ(d.decode_seqs, 32);
  EXPECT_DOUBLE_EQ(d.decode_ctx_sum, 32.0 * 1024);
  EXPECT_DOUBLE_EQ(d.decode_ctx_sumsq, 32.0 * 1024 * 1024);
  EXPECT_EQ(d.prefill_seqs, 0);
  EXPECT_EQ(parseDecodeArg("1@1024").decode_seqs, 1);
}

TEST(CostArgs, Combined) {
  const BatchShape both = parseCostBatch("512x2", "4@100");
  EXPECT_EQ(both.prefill_seqs, 2);
  EXPECT_EQ(both.decode_seqs, 4);
  EXPECT_DOUBLE_EQ(both.decode_ctx_sum, 400);
  const BatchShape none = parseCostBatch(std::nullopt, std::nullopt);
  EXPECT_EQ(none.decode_seqs, 1);
  EXPECT_DOUBLE_EQ(none.decode_ctx_sum, 1024);
  EXPECT_EQ(none.prefill_seqs, 0);
}

TEST(CostArgs, BadSyntaxNamesTheOption) {
  for (const char* bad : {"", "abc", "512x", "x8", "0", "-5", "512x0", "512x8x2", "1.5", "512*8",
                          "99999999999"}) {
    const std::string e = errorOf([&] { parsePrefillArg(bad); });
    EXPECT_EQ(e.rfind("--prefill: expected TOKENS[xBATCH]", 0), 0u) << bad << " -> " << e;
  }
  for (const char* bad : {"", "32", "32@", "@1024", "32x1024", "1@1024@3", "0@1024", "3@-1",
                          "a@b"}) {
    const std::string e = errorOf([&] { parseDecodeArg(bad); });
    EXPECT_EQ(e.rfind("--decode: expected SEQS@CONTEXT", 0), 0u) << bad << " -> " << e;
  }
  EXPECT_NE(errorOf([] { parseDecodeArg("32@"); }).find("'32@'"), std::string::npos);
}

TEST(CostReport, TextAndJsonAgree) {
  const CostModel m = make("llama-2-70b", 4);
  const BatchShape b = parsePrefillArg("512x8");
  const CostBreakdown r = m.breakdown(b);
  const nlohmann::json j = costReportJson(m, b);
  EXPECT_EQ(j["gpu"], "h100-sxm-80g");
  EXPECT_EQ(j["model"], "llama-2-70b");
  EXPECT_EQ(j["tp"], 4);
  EXPECT_TRUE(j["profile"].is_null());
  EXPECT_DOUBLE_EQ(j["iteration_ms"].get<double>(), r.total_s * 1e3);
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["linear"].get<double>(), r.linear_s * 1e3);
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["prefill_attention"].get<double>(), r.prefill_attn_s * 1e3);
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["decode_attention"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["overhead"].get<double>(), r.overhead_s * 1e3);
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["communication"].get<double>(), r.comm_s * 1e3);
  EXPECT_GT(r.comm_s, 0.0);
  const std::int64_t blocks = m.kvCapacityBlocks(0.9, 1.0, 16);
  EXPECT_EQ(j["kv_capacity"]["blocks"].get<std::int64_t>(), blocks);
  EXPECT_EQ(j["kv_capacity"]["tokens"].get<std::int64_t>(), blocks * 16);
  EXPECT_EQ(j["coefficients"]["eta_c"].get<double>(), 0.70);

  const std::string text = formatCostReport(m, b);
  char buf[64];
  std::snprintf(buf, sizeof buf, "Predicted iteration time: %.3f ms", r.total_s * 1e3);
  EXPECT_NE(text.find(buf), std::string::npos) << text;
  for (const char* line : {"linear layers", "attention prefill", "attention decode", "overheads",
                           "communication (TP)", "Heterogeneity factor h: 1.000", "Llama-2-70B",
                           "4 \u00d7 h100-sxm-80g", "prefill 8 seq, 4096 tokens"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  const std::string kv = "KV capacity: " + std::to_string(blocks * 16) + " tokens = " +
                         std::to_string(blocks) + " blocks of 16";
  EXPECT_NE(text.find(kv), std::string::npos) << text;
}

TEST(CostReport, WeightsDoNotFitIsReportedNotThrown) {
  const CostModel m = make("llama-3.1-70b", 1);
  const BatchShape b = parseDecodeArg("1@1024");
  const nlohmann::json j = costReportJson(m, b);
  EXPECT_TRUE(j["kv_capacity"].is_null());
  EXPECT_NE(j["kv_error"].get<std::string>().find("use tp \u2265 2"), std::string::npos);
  EXPECT_NE(formatCostReport(m, b).find("KV capacity: none: Llama-3.1-70B needs 141 GB"),
            std::string::npos);
  CostReportOptions o;
  o.profile = "my.json";
  EXPECT_NE(formatCostReport(make("llama-3.1-8b"), b, o).find("Profile: my.json"),
            std::string::npos);
}
