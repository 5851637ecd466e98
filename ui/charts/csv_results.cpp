#include "ui/charts/csv_results.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "policy/registry.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/csv.h"
#include "util/error.h"

namespace sl::ui {

namespace {

std::string readWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open (missing or unreadable)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Strict number: the whole (trimmed) field; "" -> nan when `blankOk`.
double number(const std::string& field, bool blankOk, const CsvReader& r, const std::string& column) {
  const std::string_view t = trimView(field);
  if (t.empty()) {
    if (blankOk) return std::nan("");
    throw InputError(r.where() + ": column " + column + ": empty, expected a number");
  }
  const std::string s(t);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    throw InputError(r.where() + ": column " + column + ": '" + s + "' is not a number");
  return v;
}

std::map<std::string, std::size_t> headerIndex(const std::vector<std::string>& header) {
  std::map<std::string, std::size_t> ix;
  for (std::size_t i = 0; i < header.size(); ++i) ix.emplace(std::string(trimView(header[i])), i);
  return ix;
}

std::size_t need(const std::map<std::string, std::size_t>& ix, const std::string& col, const std::string& name) {
  const auto it = ix.find(col);
  if (it == ix.end()) throw InputError(name + ":1: header has no column '" + col + "'");
  return it->second;
}

// "i<k>_<suffix>" (built step by step: GCC 12's -Wrestrict misfires on "i" + to_string()).
std::string instanceColumn(int i, const char* suffix) {
  std::string s = "i";
  s += std::to_string(i);
  s += '_';
  s += suffix;
  return s;
}

void checkWidth(const std::vector<std::string>& row, std::size_t width, const CsvReader& r) {
  if (row.size() != width)
    throw InputError(r.where() + ": " + std::to_string(row.size()) + " fields, the header has " +
                     std::to_string(width));
}

}  // namespace

std::vector<ProbeSample> parseTimeseriesCsv(const std::string& text, const std::string& name, int* instances) {
  std::istringstream in(text);
  CsvReader r(in, name);
  std::vector<std::string> row;
  if (!r.next(row)) throw InputError(name + ": empty file (expected a header row)");
  const auto ix = headerIndex(row);
  const std::size_t width = row.size();
  const std::size_t cTime = need(ix, "time_s", name), cTok = need(ix, "tokens_per_s", name),
                    cArr = need(ix, "arrivals_per_s", name), cDone = need(ix, "completions_per_s", name),
                    cFly = need(ix, "in_flight", name), cT50 = need(ix, "ttft_p50_s", name),
                    cT99 = need(ix, "ttft_p99_s", name), cP50 = need(ix, "tpot_p50_s", name),
                    cP99 = need(ix, "tpot_p99_s", name), cSlo = need(ix, "slo_attainment", name),
                    cQoe = need(ix, "qoe_violation_rate", name);
  int n = 0;
  while (ix.count(instanceColumn(n, "gpu_blocks"))) ++n;
  std::vector<std::size_t> cGpu, cCpu;
  for (int i = 0; i < n; ++i) {
    cGpu.push_back(need(ix, instanceColumn(i, "gpu_blocks"), name));
    cCpu.push_back(need(ix, instanceColumn(i, "cpu_blocks"), name));
  }
  if (instances) *instances = n;
  std::vector<ProbeSample> out;
  double prev = 0;
  while (r.next(row)) {
    checkWidth(row, width, r);
    ProbeSample s;
    const double t = number(row[cTime], false, r, "time_s");
    if (t < 0) throw InputError(r.where() + ": column time_s: negative time");
    s.time = secondsToNs(t);
    // Probe interval = the gap to the previous row (the first: from 0).
    s.intervalS = out.empty() ? (t > 0 ? t : 1.0) : std::max(1e-9, t - prev);
    prev = t;
    s.tokens = std::llround(number(row[cTok], false, r, "tokens_per_s") * s.intervalS);
    s.arrivals = std::llround(number(row[cArr], false, r, "arrivals_per_s") * s.intervalS);
    s.completions = std::llround(number(row[cDone], false, r, "completions_per_s") * s.intervalS);
    s.inFlight = std::llround(number(row[cFly], false, r, "in_flight"));
    auto opt = [&](std::size_t c, const char* col) {
      const double v = number(row[c], true, r, col);
      return std::isnan(v) ? -1.0 : v;
    };
    s.ttftP50 = opt(cT50, "ttft_p50_s");
    s.ttftP99 = opt(cT99, "ttft_p99_s");
    s.tpotP50 = opt(cP50, "tpot_p50_s");
    s.tpotP99 = opt(cP99, "tpot_p99_s");
    s.sloAttainment = opt(cSlo, "slo_attainment");
    s.qoeViolationRate = opt(cQoe, "qoe_violation_rate");
    s.instances.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      s.instances[i].gpuBlocks = std::llround(number(row[cGpu[i]], false, r, "gpu_blocks"));
      s.instances[i].cpuBlocks = std::llround(number(row[cCpu[i]], false, r, "cpu_blocks"));
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<SavedRequest> parseRequestsCsv(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  CsvReader r(in, name);
  std::vector<std::string> row;
  if (!r.next(row)) throw InputError(name + ": empty file (expected a header row)");
  const auto ix = headerIndex(row);
  const std::size_t width = row.size();
  const std::size_t cR = need(ix, "reasoning_tokens", name), cT = need(ix, "ttft_s", name),
                    cP = need(ix, "tpot_s", name), cL = need(ix, "last_token_s", name),
                    cF = need(ix, "finished", name), cQ = need(ix, "qoe", name);
  std::vector<SavedRequest> out;
  while (r.next(row)) {
    checkWidth(row, width, r);
    SavedRequest q;
    q.reasoning = number(row[cR], false, r, "reasoning_tokens");
    auto opt = [&](std::size_t c, const char* col) {
      const double v = number(row[c], true, r, col);
      return std::isnan(v) ? -1.0 : v;
    };
    q.ttftS = opt(cT, "ttft_s");
    q.tpotS = opt(cP, "tpot_s");
    q.finishS = opt(cL, "last_token_s");
    q.qoe = opt(cQ, "qoe");
    q.finished = number(row[cF], false, r, "finished") != 0;
    out.push_back(q);
  }
  return out;
}

CsvTable parseCsvTable(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  CsvReader r(in, name);
  CsvTable t;
  if (!r.next(t.columns)) throw InputError(name + ": empty file (expected a header row)");
  std::vector<std::string> row;
  while (r.next(row)) {
    checkWidth(row, t.columns.size(), r);
    t.rows.push_back(row);
  }
  return t;
}

SavedResults loadSavedResults(const std::string& dir, unsigned parts) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": not a results folder (missing or not a directory)");
  SavedResults res;
  res.dir = dir;
  const std::string summaryPath = dir + "/summary.json";
  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(readWhole(summaryPath));
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(summaryPath + ": not valid JSON (" + e.what() + ")");
  }
  if (!summary.is_object() || !summary.contains("scenario") || !summary["scenario"].is_object())
    throw InputError(summaryPath + ": no \"scenario\" object (not a servelab-cli run summary)");
  Scenario s;
  try {
    s = parseScenario(summary["scenario"], summaryPath + ": scenario");
  } catch (const InputError& e) {
    throw InputError(e.what());
  }
  res.instances = s.cluster.instances;
  try {
    const PolicyBundle policy = makePolicy(s.policy);
    if (policy.unlimitedKv) {
      res.capacityError = "policy '" + s.policy.id + "' runs with unlimited KV memory";
    } else {
      const auto cost = makeCostModel(s);
      res.gpuCapacityBlocks = cost->kvCapacityBlocks(s.cluster.gpu_memory_utilization, s.cluster.kv_capacity_fraction,
                                                      s.cluster.block_size);
    }
  } catch (const std::exception& e) {
    res.capacityError = e.what();
  }
  if (parts & kSavedTimeseries) {
    const std::string path = dir + "/timeseries.csv";
    int n = 0;
    res.probes = parseTimeseriesCsv(readWhole(path), path, &n);
    if (n != res.instances)
      throw InputError(path + ":1: " + std::to_string(n) + " instances in the header, summary.json's scenario has " +
                       std::to_string(res.instances));
    for (ProbeSample& p : res.probes)
      for (ProbeInstance& i : p.instances) i.gpuCapacity = std::max<std::int64_t>(0, res.gpuCapacityBlocks);
  }
  if (parts & kSavedRequests) {
    const std::string path = dir + "/requests.csv";
    res.requests = parseRequestsCsv(readWhole(path), path);
  }
  return res;
}

}  // namespace sl::ui
