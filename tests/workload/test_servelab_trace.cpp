#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sample_traces.h"
#include "test_util.h"
#include "workload/presets.h"
#include "workload/servelab_trace.h"
#include "workload/trace_formats.h"
#include "workload/workload_source.h"

using namespace sl;
using sl::testing::inputErrorOf;
using sl::testing::TempDir;

namespace {

std::vector<RequestSpec> drain(WorkloadSource& s) {
  std::vector<RequestSpec> v;
  RequestSpec r;
  while (s.next(r)) v.push_back(r);
  return v;
}

std::vector<RequestSpec> readText(const std::string& text, const TraceOptions& o = {}) {
  ServeLabTraceReader rd(std::make_unique<std::istringstream>(text), "mem.csv", o);
  return drain(rd);
}

std::string errorOf(const std::string& text) {
  return inputErrorOf([&] { readText(text); });
}

/// A source over a fixed vector (for the writer).
class VectorSource : public WorkloadSource {
public:
  explicit VectorSource(std::vector<RequestSpec> v) : v_(std::move(v)) {}
  bool next(RequestSpec& out) override {
    if (i_ >= v_.size()) return false;
    out = v_[i_++];
    return true;
  }

private:
  std::vector<RequestSpec> v_;
  std::size_t i_ = 0;
};

const char* kSmall =
    "arrival_s,input_tokens,output_tokens,reasoning_tokens,domain\n"
    "0.5,10,5,2,\n"
    "1.0,20,6,0,1\n"
    "2.25,30,7,3,2\n"
    "4.0,40,8,1,\n"
    "8.0,50,9,0,\n";

}  // namespace

TEST(ServeLabTrace, ReadsColumnsByName) {
  const auto v = readText("domain,output_tokens,extra,arrival_s,input_tokens\n,5,x,0.25,10\n3,7,y,1.5,11\n");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].id, 0);
  EXPECT_EQ(v[0].arrival, 250'000'000);
  EXPECT_EQ(v[0].input, 10);
  EXPECT_EQ(v[0].reasoning, 0);  // no reasoning column: all output is answer
  EXPECT_EQ(v[0].answer, 5);
  EXPECT_EQ(v[0].domain, -1);
  EXPECT_EQ(v[1].id, 1);
  EXPECT_EQ(v[1].domain, 3);
  const auto w = readText(kSmall);
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w[0].reasoning, 2);
  EXPECT_EQ(w[0].answer, 3);  // answer = output - reasoning
}

TEST(ServeLabTrace, RoundTripIsExact) {
  WorkloadSpec w;
  applyWorkloadPreset("reasoning-mix", w);
  w.requests = 2000;
  w.arrival.rate = 37.3;
  auto src = makeWorkload(w, 5, 32768, ".", std::nullopt);
  const auto orig = drain(*src);
  std::vector<RequestSpec> withDomain = orig;
  for (std::size_t i = 0; i < withDomain.size(); i += 3) withDomain[i].domain = static_cast<std::int32_t>(i % 4);
  withDomain.back().arrival = 123'456'789'012'345;  // ~34 h, odd ns
  VectorSource vs(withDomain);
  std::ostringstream out;
  writeServeLabCsv(vs, out);
  EXPECT_EQ(out.str().substr(0, 61), "arrival_s,input_tokens,output_tokens,reasoning_tokens,domain\n");
  const auto back = readText(out.str());
  EXPECT_EQ(back, withDomain);
}

TEST(ServeLabTrace, FormatSecondsExact) {
  EXPECT_EQ(formatSecondsExact(0), "0.0");
  EXPECT_EQ(formatSecondsExact(1), "0.000000001");
  EXPECT_EQ(formatSecondsExact(12'500'000'000), "12.5");
  EXPECT_EQ(formatSecondsExact(3'000'000'000), "3.0");
}

TEST(ServeLabTrace, TimeScaleMaxRequestsWindow) {
  TraceOptions o;
  o.time_scale = 0.5;
  auto v = readText(kSmall, o);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[2].arrival, 1'125'000'000);  // 2.25 s * 0.5

  o = {};
  o.max_requests = 2;
  v = readText(kSmall, o);
  ASSERT_EQ(v.size(), 2u);

  o = {};
  o.window_start_s = 1.0;
  o.window_end_s = 4.0;  // [1, 4): rows at 1.0 and 2.25
  v = readText(kSmall, o);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].id, 0);
  EXPECT_EQ(v[0].arrival, 0);  // shifted so the window starts at 0
  EXPECT_EQ(v[0].input, 20);
  EXPECT_EQ(v[1].arrival, 1'250'000'000);

  o.time_scale = 2.0;  // window on the file's timeline, then scaled
  v = readText(kSmall, o);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].arrival, 2'500'000'000);

  o = {};
  o.duration_s = 2.0;
  v = readText(kSmall, o);
  EXPECT_EQ(v.size(), 2u);

  o = {};
  o.max_context = 40;  // clipping applies to traces too
  v = readText(kSmall, o);
  EXPECT_EQ(v[3].input, 39);
  EXPECT_EQ(v[3].reasoning + v[3].answer, 1);
}

TEST(ServeLabTrace, MalformedRowsNameFileAndLine) {
  const std::string h = "arrival_s,input_tokens,output_tokens,reasoning_tokens\n";
  auto expectErr = [](const std::string& msg, const std::string& where, const std::string& what) {
    EXPECT_EQ(msg.rfind(where, 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  expectErr(errorOf(h + "0,1,1,0\nabc,1,1,0\n"), "mem.csv:3: ", "arrival_s is not a number");
  expectErr(errorOf(h + "0,1,1,0\n\n1,x,1,0\n"), "mem.csv:4: ", "input_tokens is not an integer");
  expectErr(errorOf(h + "0,0,1,0\n"), "mem.csv:2: ", "input_tokens must be >= 1");
  expectErr(errorOf(h + "0,5,3,3\n"), "mem.csv:2: ", "answer needs at least 1 token");
  expectErr(errorOf(h + "0,5,3,-1\n"), "mem.csv:2: ", "reasoning_tokens must be >= 0");
  expectErr(errorOf(h + "0,5,3\n"), "mem.csv:2: ", "missing field 'reasoning_tokens'");
  expectErr(errorOf(h + "2,5,3,0\n1,5,3,0\n"), "mem.csv:3: ", "sorted");
  expectErr(errorOf(h + "-1,5,3,0\n"), "mem.csv:2: ", "arrival_s must be >= 0");
  expectErr(errorOf(h + "0,5,99999999999,0\n"), "mem.csv:2: ", "too large");
  expectErr(errorOf("arrival_s,input_tokens\n"), "mem.csv:1: ", "missing column 'output_tokens'");
  expectErr(errorOf("arrival_s,input_tokens,output_tokens,input_tokens\n"), "mem.csv:1: ", "duplicate column");
  expectErr(errorOf(""), "mem.csv", "empty trace file");
  expectErr(errorOf("arrival_s,input_tokens,output_tokens,domain\n0,1,1,z\n"), "mem.csv:2: ", "domain");
}

TEST(ServeLabTrace, LenientSkipsAndCountsMalformedRows) {
  const std::string text =
      "arrival_s,input_tokens,output_tokens,reasoning_tokens\n"
      "0,10,5,0\n"
      "abc,1,1,0\n"     // line 3: not a number
      "2,x,1,0\n"       // line 4: bad input_tokens (arrival 2 must not count as seen)
      "1,7,3,1\n"       // line 5: fine, and later than line 2
      "3,5,3,3\n";      // line 6: no answer token
  TraceOptions o;
  o.lenient = true;
  ServeLabTraceReader rd(std::make_unique<std::istringstream>(text), "mem.csv", o);
  const auto v = drain(rd);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].input, 10);
  EXPECT_EQ(v[1].input, 7);
  EXPECT_EQ(v[1].arrival, 1'000'000'000);
  EXPECT_EQ(rd.malformed(), 3);
  EXPECT_EQ(rd.firstMalformed().rfind("mem.csv:3: arrival_s is not a number", 0), 0u) << rd.firstMalformed();
  // The same text without lenient stops at line 3.
  EXPECT_NE(errorOf(text).find("mem.csv:3:"), std::string::npos);
}

TEST(ServeLabTrace, FormatDetectionAndDispatch) {
  TempDir dir;
  const std::string s = dir.write("a.csv", kSmall);
  const std::string az = dir.write("az.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n");
  const std::string bg = dir.write("bg.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
  const std::string mc = dir.write("mc.jsonl", "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 2}\n");
  const std::string junk = dir.write("junk.csv", "a,b,c\n");
  EXPECT_EQ(detectTraceFormat(s), "servelab");
  EXPECT_EQ(detectTraceFormat(az), "azure");
  EXPECT_EQ(detectTraceFormat(bg), "burstgpt");
  EXPECT_EQ(detectTraceFormat(mc), "mooncake");
  EXPECT_NE(inputErrorOf([&] { detectTraceFormat(junk); }).find("junk.csv:1: cannot detect"), std::string::npos);

  WorkloadSpec w;
  w.trace = TraceSpec{};
  w.trace->path = "a.csv";  // relative to base_dir
  w.requests = 1;           // ignored for traces
  auto src = makeWorkload(w, 1, 8192, dir.str(), std::nullopt);
  EXPECT_EQ(drain(*src).size(), 5u);
  w.trace->format = "servelab";
  EXPECT_EQ(drain(*makeWorkload(w, 1, 8192, dir.str(), std::nullopt)).size(), 5u);

  w.trace->path = "az.csv";
  w.trace->format = "auto";
  EXPECT_EQ(drain(*makeWorkload(w, 1, 8192, dir.str(), std::nullopt)).size(), 1u);  // tests/traces covers it
  w.trace->format = "bogus";
  std::string m = inputErrorOf([&] { makeWorkload(w, 1, 8192, dir.str(), std::nullopt); });
  EXPECT_NE(m.find("unknown format 'bogus'"), std::string::npos) << m;
  w.trace->format = "servelab";
  w.trace->path = "nope.csv";
  m = inputErrorOf([&] { makeWorkload(w, 1, 8192, dir.str(), std::nullopt); });
  EXPECT_NE(m.find("nope.csv: cannot open"), std::string::npos) << m;
  w.trace->path = "a.csv";
  w.trace->time_scale = 0;
  m = inputErrorOf([&] { makeWorkload(w, 1, 8192, dir.str(), std::nullopt); });
  EXPECT_NE(m.find("workload.trace.time_scale"), std::string::npos) << m;
}

TEST(ServeLabTrace, ReaderStreamsLargeFiles) {
  // 200k rows are read one at a time (the reader holds only the current row).
  TempDir dir;
  const std::string p = (std::filesystem::path(dir.str()) / "big.csv").string();
  {
    std::ofstream out(p);
    out << "arrival_s,input_tokens,output_tokens\n";
    for (int i = 0; i < 200000; ++i) out << i * 0.001 << ",100,20\n";
  }
  ServeLabTraceReader rd(p);
  RequestSpec r;
  std::int64_t n = 0;
  while (rd.next(r)) ++n;
  EXPECT_EQ(n, 200000);
  EXPECT_EQ(rd.expectedCount(), -1);
}

TEST(ServeLabTrace, CommittedSampleTracesAreReproducible) {
  for (const auto& t : sl::testing::sampleTraces()) {
    const std::string path = std::string(SERVELAB_SOURCE_DIR) + "/samples/traces/" + t.file;
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path << " missing: run gen_sample_traces samples/traces";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), sl::testing::sampleTraceCsv(t.file))
        << path << " differs from a fresh generation: run gen_sample_traces samples/traces";
    // And it reads back through the public path, whatever its layout
    // (format detection included), exercising what the layout promises.
    TraceSpec spec;
    spec.path = t.file;
    auto rd = openTraceWorkload(spec, std::string(SERVELAB_SOURCE_DIR) + "/samples/traces", 32768, std::nullopt);
    RequestSpec r;
    std::int64_t n = 0, withPrefix = 0;
    while (rd->next(r)) {
      ++n;
      withPrefix += r.prefix_blocks > 0 && r.prefix_hash != 0;
    }
    EXPECT_GT(n, 0) << t.file;
    const TraceStats* stats = traceStatsOf(*rd);
    if (t.file.starts_with("burstgpt")) {
      ASSERT_NE(stats, nullptr);
      EXPECT_GT(stats->failed, 0) << t.file;
    }
    if (t.file.starts_with("mooncake")) EXPECT_EQ(withPrefix, n) << t.file;
    else EXPECT_EQ(withPrefix, 0) << t.file;
  }
}
