#include "sweep/sweep_spec.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "metrics/summary.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/error.h"
#include "util/rng.h"
#include "util/strings.h"

namespace sl::sweep {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::size_t kMaxPoints = 1000000;

[[noreturn]] void fail(const std::string& source, const std::string& where, const std::string& what) {
  throw InputError(source + ": " + where + ": " + what);
}

void checkKeys(const json& j, const std::vector<std::string>& keys, const std::string& source,
               const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) != keys.end()) continue;
    std::string msg = "unknown field '" + it.key() + "'";
    if (auto s = didYouMean(it.key(), keys)) msg += " (did you mean '" + *s + "'?)";
    fail(source, where.empty() ? "(top level)" : where, msg);
  }
}

double number(const json& j, const std::string& source, const std::string& where) {
  if (!j.is_number()) fail(source, where, std::string("expected a number, got ") + j.type_name());
  return j.get<double>();
}

// A range {"from", "to", "step"} or {"from", "to", "count"}; integers stay
// integers when from and step are integral.
std::vector<json> expandRange(const json& r, const std::string& source, const std::string& where) {
  if (!r.is_object()) fail(source, where, std::string("expected an object, got ") + r.type_name());
  checkKeys(r, {"from", "to", "step", "count"}, source, where);
  for (const char* k : {"from", "to"})
    if (!r.contains(k)) fail(source, where, std::string("missing required field '") + k + "'");
  if (r.contains("step") == r.contains("count")) fail(source, where, "give exactly one of 'step' and 'count'");
  const double from = number(r["from"], source, where + ".from");
  const double to = number(r["to"], source, where + ".to");
  if (to < from) fail(source, where + ".to", "must be >= from (got " + formatDouble(to) + ")");
  std::vector<json> out;
  if (r.contains("step")) {
    const double step = number(r["step"], source, where + ".step");
    if (!(step > 0)) fail(source, where + ".step", "must be > 0 (got " + formatDouble(step) + ")");
    const double n = std::floor((to - from) / step + 1e-9) + 1;
    if (n > static_cast<double>(kMaxPoints)) fail(source, where, "more than 1000000 values");
    const bool ints = r["from"].is_number_integer() && r["step"].is_number_integer();
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
      if (ints) out.emplace_back(r["from"].get<std::int64_t>() + i * r["step"].get<std::int64_t>());
      else out.emplace_back(*parseDouble(formatDouble(from + static_cast<double>(i) * step, 12)));
    }
  } else {
    const json& c = r["count"];
    if (!c.is_number_integer() || c.get<std::int64_t>() < 1 || c.get<std::int64_t>() > 1000000)
      fail(source, where + ".count", "must be an integer from 1 to 1000000 (got " + c.dump() + ")");
    const std::int64_t n = c.get<std::int64_t>();
    if (n == 1 && from != to) fail(source, where + ".count", "must be >= 2 when from != to");
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = n == 1 ? from : from + (to - from) * static_cast<double>(i) / static_cast<double>(n - 1);
      out.emplace_back(*parseDouble(formatDouble(v, 12)));
    }
  }
  return out;
}

// "--set 'a.b=1': 'a' is a string, not an object" -> "'a' is a string, not an object"
std::string withoutSetPrefix(const std::string& msg) {
  const auto p = msg.find("': ");
  return msg.rfind("--set '", 0) == 0 && p != std::string::npos ? msg.substr(p + 3) : msg;
}

void applyPath(json& doc, const std::string& path, const json& value, const std::string& source,
               const std::string& where) {
  try {
    applySetOverride(doc, path + "=" + value.dump());
  } catch (const InputError& e) {
    fail(source, where, withoutSetPrefix(e.what()));
  }
}

// summary.json keys a metric may name (executeRun writes these around the
// metric groups of summaryToJson).
const std::vector<std::string>& runKeys() {
  // closed_loop.*: only closed-loop runs have them (null for the others);
  // measure.*: only runs with a measurement window (run.measure).
  static const std::vector<std::string> k = {
      "policy", "seed", "fingerprint", "events", "aborted", "stalled", "closed_loop.concurrency",
      "closed_loop.final_concurrency", "closed_loop.issued", "measure.start_s", "measure.end_s", "measure.window_s",
      // cost.*: docs/metrics.md "Cost" (null where a price is unknown)
      "cost.gpus", "cost.usd_per_hour", "cost.usd_per_million_tokens", "cost.usd_per_million_input_tokens",
      "cost.tokens_per_joule", "cost.goodput_per_usd"};
  return k;
}

void checkMetric(const std::string& m, const std::string& source, const std::string& where) {
  if (m == kMetricMaxRate || m == kMetricMinTimeScale || m == kMetricMinInstances) return;
  if (std::find(runKeys().begin(), runKeys().end(), m) != runKeys().end()) return;
  const ordered_json skeleton = summaryToJson(Summary{});
  const ordered_json* node = &skeleton;
  std::string walked;
  for (std::string_view seg : split(m, '.')) {
    const std::string s(seg);
    if (!node->is_object() || !node->contains(s)) {
      std::vector<std::string> cands;
      if (node->is_object())
        for (auto it = node->begin(); it != node->end(); ++it) cands.push_back(walked.empty() ? it.key() : walked + "." + it.key());
      if (walked.empty()) {
        for (const auto& k : runKeys()) cands.push_back(k);
        cands.push_back(kMetricMaxRate);
        cands.push_back(kMetricMinInstances);
      }
      std::string msg = "unknown summary.json metric '" + m + "'";
      if (auto hint = didYouMean(m, cands)) msg += " (did you mean '" + *hint + "'?)";
      fail(source, where, msg);
    }
    node = &(*node)[s];
    walked = walked.empty() ? s : walked + "." + s;
  }
  if (node->is_object())
    fail(source, where, "'" + m + "' is a group, not a value; name one of its fields, e.g. '" + m + "." +
                            node->begin().key() + "'");
}

std::string pointLabel(const SweepSpec& s, std::size_t i) {
  std::string l = "point " + std::to_string(i) + " (";
  for (std::size_t a = 0; a < s.axes.size(); ++a)
    l += (a ? ", " : "") + s.axes[a] + "=" + (s.points[i][a].is_string() ? s.points[i][a].get<std::string>()
                                                                          : s.points[i][a].dump());
  return l + ")";
}

}  // namespace

const std::vector<std::string>& defaultSweepMetrics() {
  static const std::vector<std::string> m = {"requests.finished", "ttft_s.p50", "ttft_s.p99", "tpot_s.p50",
                                             "qoe.violation_rate", "slo_attainment", "throughput.tokens_per_s"};
  return m;
}

ordered_json metricValue(const ordered_json& summary, const std::string& path) {
  const ordered_json* node = &summary;
  for (std::string_view seg : split(path, '.')) {
    const std::string s(seg);
    if (!node->is_object() || !node->contains(s)) return nullptr;
    node = &(*node)[s];
  }
  return *node;
}

SweepSpec loadSweepFile(const std::string& path) {
  return parseSweep(loadJsonFile(path), path, scenarioBaseDir(path));
}

SweepSpec parseSweep(const json& j, const std::string& source, const std::string& baseDir) {
  SweepSpec s;
  s.source = source;
  if (!j.is_object()) fail(source, "(top level)", std::string("expected an object, got ") + j.type_name());
  checkKeys(j, {"base", "set", "axes", "points", "metrics", "capacity"}, source, "");

  // Base scenario: a path (relative to the sweep file) or an inline object.
  if (!j.contains("base")) fail(source, "(top level)", "missing required field 'base' (a scenario path or object)");
  const json& b = j["base"];
  std::string baseSource = source + ": base";
  if (b.is_string()) {
    std::string p = b.get<std::string>();
    if (!p.empty() && p[0] != '/' && baseDir != ".") p = baseDir + "/" + p;
    s.baseDoc = loadJsonFile(p);
    s.baseDir = scenarioBaseDir(p);
    baseSource = p;
  } else if (b.is_object()) {
    s.baseDoc = b;
    s.baseDir = baseDir;
  } else {
    fail(source, "base", std::string("expected a scenario path or object, got ") + b.type_name());
  }
  if (j.contains("set")) {
    const json& set = j["set"];
    if (!set.is_object()) fail(source, "set", std::string("expected an object of path: value, got ") + set.type_name());
    for (auto it = set.begin(); it != set.end(); ++it)
      applyPath(s.baseDoc, it.key(), it.value(), source, "set." + it.key());
  }
  (void)parseScenario(s.baseDoc, baseSource);  // the base alone must be valid

  // Axes: a full grid (first axis outermost) or listed points.
  if (j.contains("axes") == j.contains("points"))
    fail(source, "(top level)", "give exactly one of 'axes' (a full grid) and 'points' (listed points)");
  if (j.contains("axes")) {
    const json& axes = j["axes"];
    if (!axes.is_array() || axes.empty()) fail(source, "axes", "expected a non-empty list of axes");
    std::vector<std::vector<json>> values;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const std::string where = "axes[" + std::to_string(a) + "]";
      const json& ax = axes[a];
      if (!ax.is_object()) fail(source, where, std::string("expected an object, got ") + ax.type_name());
      checkKeys(ax, {"path", "values", "range"}, source, where);
      if (!ax.contains("path") || !ax["path"].is_string() || ax["path"].get<std::string>().empty())
        fail(source, where + ".path", "expected a scenario path such as \"workload.arrival.rate\"");
      const std::string path = ax["path"].get<std::string>();
      if (std::find(s.axes.begin(), s.axes.end(), path) != s.axes.end())
        fail(source, where + ".path", "'" + path + "' is already an axis");
      if (ax.contains("values") == ax.contains("range")) fail(source, where, "give exactly one of 'values' and 'range'");
      std::vector<json> v;
      if (ax.contains("values")) {
        if (!ax["values"].is_array() || ax["values"].empty()) fail(source, where + ".values", "expected a non-empty list");
        for (const json& x : ax["values"]) v.push_back(x);
      } else {
        v = expandRange(ax["range"], source, where + ".range");
      }
      s.axes.push_back(path);
      values.push_back(std::move(v));
    }
    std::size_t total = 1;
    for (const auto& v : values) {
      total *= v.size();
      if (total > kMaxPoints) fail(source, "axes", "the grid has more than 1000000 points");
    }
    std::vector<std::size_t> idx(values.size(), 0);
    for (std::size_t p = 0; p < total; ++p) {
      std::vector<json> row;
      for (std::size_t a = 0; a < values.size(); ++a) row.push_back(values[a][idx[a]]);
      s.points.push_back(std::move(row));
      for (std::size_t a = values.size(); a-- > 0;) {  // last axis fastest
        if (++idx[a] < values[a].size()) break;
        idx[a] = 0;
      }
    }
  } else {
    const json& pts = j["points"];
    if (!pts.is_array() || pts.empty()) fail(source, "points", "expected a non-empty list of {path: value} objects");
    for (std::size_t p = 0; p < pts.size(); ++p) {
      const std::string where = "points[" + std::to_string(p) + "]";
      if (!pts[p].is_object() || pts[p].empty()) fail(source, where, "expected a non-empty {path: value} object");
      std::vector<std::string> keys;
      for (auto it = pts[p].begin(); it != pts[p].end(); ++it) keys.push_back(it.key());  // sorted
      if (p == 0) s.axes = keys;
      if (keys != s.axes) {
        for (const auto& k : s.axes)
          if (!pts[p].contains(k)) fail(source, where, "missing '" + k + "' (every point sets the same paths)");
        for (const auto& k : keys)
          if (std::find(s.axes.begin(), s.axes.end(), k) == s.axes.end())
            fail(source, where + "." + k, "not set by points[0] (every point sets the same paths)");
      }
      std::vector<json> row;
      for (const auto& k : s.axes) row.push_back(pts[p][k]);
      s.points.push_back(std::move(row));
    }
  }

  // Metrics.
  if (j.contains("metrics")) {
    const json& m = j["metrics"];
    if (!m.is_array() || m.empty()) fail(source, "metrics", "expected a non-empty list of summary.json paths");
    for (std::size_t i = 0; i < m.size(); ++i) {
      const std::string where = "metrics[" + std::to_string(i) + "]";
      if (!m[i].is_string()) fail(source, where, std::string("expected a string, got ") + m[i].type_name());
      const std::string name = m[i].get<std::string>();
      checkMetric(name, source, where);
      if (std::find(s.metrics.begin(), s.metrics.end(), name) != s.metrics.end())
        fail(source, where, "'" + name + "' is listed twice");
      s.metrics.push_back(name);
    }
  } else {
    s.metrics = defaultSweepMetrics();
  }
  if (j.contains("capacity")) s.capacity = parseCapacityOptions(j["capacity"], source + ": capacity");

  // Every point's scenario, validated now (fields, then presets, knobs,
  // memory and workload files by prepareRun), so nothing runs on a bad spec.
  std::uint64_t h = fnv1a64("servelab-sweep/1 " + std::string(kServeLabVersion));
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const std::string label = source + ": " + pointLabel(s, i);
    json doc = s.baseDoc;
    for (std::size_t a = 0; a < s.axes.size(); ++a) applyPath(doc, s.axes[a], s.points[i][a], source, pointLabel(s, i));
    Scenario sc = parseScenario(doc, label);
    sc.base_dir = s.baseDir;
    const bool trace = sc.workload.trace.has_value();
    const bool closed = sc.workload.arrival.process == ArrivalSpec::Process::Closed;
    for (const std::string& m : s.metrics) {
      if ((m == kMetricMaxRate || m == kMetricMinTimeScale) && closed)
        fail(source, pointLabel(s, i), "capacity metrics vary an arrival rate or a trace's time_scale; a closed loop "
                                       "has neither (sweep workload.arrival.concurrency instead)");
      if (m == kMetricMaxRate && trace)
        fail(source, pointLabel(s, i), "capacity.max_rate needs an arrival rate; a trace workload uses capacity.min_time_scale");
      if (m == kMetricMinTimeScale && !trace)
        fail(source, pointLabel(s, i), "capacity.min_time_scale needs a workload.trace; use capacity.max_rate");
    }
    (void)prepareRun(sc, label);
    h = fnv1a64(dumpScenario(sc), h);
    s.scenarios.push_back(std::move(sc));
  }
  ordered_json n = s.normalized();
  n.erase("hash");
  s.hash = fingerprintHex(fnv1a64(n.dump(), h));
  return s;
}

ordered_json SweepSpec::normalized() const {
  ordered_json j;
  j["servelab_sweep"] = 1;
  j["servelab_version"] = kServeLabVersion;
  j["hash"] = hash;
  j["axes"] = axes;
  ordered_json pts = ordered_json::array();
  for (const auto& p : points) pts.push_back(p);
  j["points"] = pts;
  j["metrics"] = metrics;
  j["capacity"] = capacityOptionsJson(capacity);
  j["base"] = scenarioToJson(parseScenario(baseDoc, source));
  return j;
}

}  // namespace sl::sweep
