#include "sample_traces.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "workload/presets.h"
#include "workload/servelab_trace.h"
#include "workload/workload_source.h"

namespace sl::testing {

namespace {

// The file's format: ServeLab's own CSV, or the layout of one of the public
// traces, so samples exercise those readers (samples/trace-*.json).
enum class Layout { ServeLab, Azure, BurstGpt, Mooncake };

struct Recipe {
  const char* file;
  const char* preset;
  double rate;
  std::int64_t requests;
  std::uint64_t seed;
  Layout layout = Layout::ServeLab;
};

// Context window of the samples: 32K (a typical reasoning-model deployment).
constexpr int kContext = 32768;

const Recipe kRecipes[] = {
    {"reasoning-200.csv", "alpaca-reasoning", 2.0, 200, 42},
    {"chat-500.csv", "chat", 5.0, 500, 7},
    {"reasoning-mix-300.csv", "reasoning-mix", 1.0, 300, 11},
    {"selfsched-math-200.csv", "selfsched-math", 4.0, 200, 3},
    {"azure-chat-300.csv", "chat", 4.0, 300, 21, Layout::Azure},
    {"burstgpt-chat-300.csv", "chat", 4.0, 300, 22, Layout::BurstGpt},
    {"mooncake-prefix-300.jsonl", "chat", 4.0, 300, 23, Layout::Mooncake},
};

const char* layoutName(Layout l) {
  switch (l) {
    case Layout::ServeLab: return "ServeLab CSV";
    case Layout::Azure: return "Azure CSV, clock from 2023-11-16 23:59:30 (crosses midnight)";
    case Layout::BurstGpt: return "BurstGPT v3 CSV from 19440110 s, every 37th row a failed request";
    case Layout::Mooncake: return "Mooncake JSON lines with hash_ids (5 shared prompt prefixes)";
  }
  return "?";
}

// Azure's "YYYY-MM-DD HH:MM:SS.fffffff" for `ns` after 2023-11-16 23:59:30.
std::string azureTimestamp(std::int64_t ns) {
  using namespace std::chrono;
  const sys_days day0 = year{2023} / November / 16;
  const std::int64_t t = (23 * 3600 + 59 * 60 + 30) * std::int64_t{1'000'000'000} + ns;
  const std::int64_t days = t / (86400 * std::int64_t{1'000'000'000});
  const std::int64_t inDay = t % (86400 * std::int64_t{1'000'000'000});
  const year_month_day ymd{day0 + sys_days::duration(days)};
  const std::int64_t sec = inDay / 1'000'000'000;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02lld:%02lld:%02lld.%07lld", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<long long>(sec / 3600), static_cast<long long>(sec / 60 % 60),
                static_cast<long long>(sec % 60), static_cast<long long>(inDay % 1'000'000'000 / 100));
  return buf;
}

// Seconds with 9 decimals from an integer origin (exact for the reader).
std::string decimalSeconds(std::int64_t originS, std::int64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld.%09lld", static_cast<long long>(originS + ns / 1'000'000'000),
                static_cast<long long>(ns % 1'000'000'000));
  return buf;
}

void writeLayout(Layout layout, WorkloadSource& src, std::ostream& out) {
  RequestSpec r;
  std::int64_t row = 0, uniqueBlock = 100000;
  switch (layout) {
    case Layout::ServeLab: writeServeLabCsv(src, out); return;
    case Layout::Azure:
      out << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
      while (src.next(r)) out << azureTimestamp(r.arrival) << ',' << r.input << ',' << r.output() << '\n';
      return;
    case Layout::BurstGpt:
      out << "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
      while (src.next(r)) {
        const bool failed = ++row % 37 == 0;
        const std::int64_t response = failed ? 0 : r.output();
        out << decimalSeconds(19440110, r.arrival) << ',' << 1000 + row % 23 << ",0.5,ChatGPT," << r.input << ','
            << response << ',' << r.input + response << ",Conversation log\n";
      }
      return;
    case Layout::Mooncake:
      // One id per 512-token prompt block; the first blocks of a request
      // come from one of 5 shared system prompts (ids g*1000 + k), the rest
      // are its own.
      while (src.next(r)) {
        const std::int64_t group = row++ % 5;
        const std::int64_t blocks = (r.input + 511) / 512;
        out << "{\"timestamp\": " << r.arrival / 1'000'000 << ", \"input_length\": " << r.input
            << ", \"output_length\": " << r.output() << ", \"hash_ids\": [";
        for (std::int64_t b = 0; b < blocks; ++b)
          out << (b ? ", " : "") << (b <= group ? group * 1000 + b : uniqueBlock++);
        out << "]}\n";
      }
      return;
  }
}

}  // namespace

std::vector<SampleTrace> sampleTraces() {
  std::vector<SampleTrace> out;
  for (const auto& r : kRecipes) {
    std::ostringstream d;
    d << layoutName(r.layout) << ": preset " << r.preset << ", Poisson " << r.rate << " req/s, " << r.requests
      << " requests, seed " << r.seed << ", context " << kContext;
    out.push_back({r.file, d.str()});
  }
  return out;
}

std::string sampleTraceCsv(const std::string& file) {
  for (const auto& r : kRecipes) {
    if (file != r.file) continue;
    WorkloadSpec w;
    applyWorkloadPreset(r.preset, w);
    w.arrival.process = ArrivalSpec::Process::Poisson;
    w.arrival.rate = r.rate;
    w.requests = r.requests;
    auto src = makeWorkload(w, r.seed, kContext, ".", std::nullopt);
    std::ostringstream out;
    writeLayout(r.layout, *src, out);
    return out.str();
  }
  throw std::invalid_argument("no sample trace " + file);
}

}  // namespace sl::testing
