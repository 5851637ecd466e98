#include "sweep/sweep_run.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "sweep/parallel.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

std::string pointName(std::size_t i) {
  std::string n = std::to_string(i);
  if (n.size() < 6) n.insert(0, 6 - n.size(), '0');
  return n;
}
std::string pointPath(const std::string& dir, std::size_t i) { return dir + "/points/" + pointName(i) + ".json"; }
std::string manifestName(const Shard& s) {
  return "shard-" + std::to_string(s.index) + "-of-" + std::to_string(s.count) + ".json";
}
std::string shardText(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

// nullopt when the file does not exist or is not JSON (an unreadable record
// is treated as not done).
std::optional<ordered_json> readJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  ordered_json j = ordered_json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

ordered_json pointRecordJson(const std::string& hash, const std::vector<std::string>& metrics, const PointResult& p) {
  ordered_json j;
  j["sweep"] = hash;
  j["point"] = p.index;
  j["values"] = p.values;
  ordered_json m = ordered_json::object();
  for (std::size_t i = 0; i < metrics.size(); ++i) m[metrics[i]] = p.metrics[i];
  j["metrics"] = m;
  j["fingerprint"] = p.fingerprint;
  return j;
}

// A record is done only if it is complete JSON for this sweep, this point and
// these axis values; anything else is "not done" (resume) or an error (merge).
std::optional<PointResult> readPointRecord(const std::string& path, const ordered_json& spec, std::size_t index,
                                           std::string* why = nullptr) {
  auto j = readJson(path);
  auto no = [&](const std::string& w) -> std::optional<PointResult> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (!j) return no(fs::exists(path) ? "not valid JSON" : "missing");
  const ordered_json& r = *j;
  if (!r.is_object() || !r.contains("sweep") || r["sweep"] != spec["hash"]) return no("belongs to another sweep");
  if (!r.contains("point") || r["point"] != index) return no("holds another point");
  if (!r.contains("values") || r["values"] != spec["points"][index]) return no("has other axis values");
  if (!r.contains("fingerprint") || !r["fingerprint"].is_string() || !r.contains("metrics") ||
      !r["metrics"].is_object())
    return no("is incomplete");
  PointResult p;
  p.index = index;
  for (const auto& v : r["values"]) p.values.push_back(v);
  for (const auto& m : spec["metrics"]) {
    const std::string name = m.get<std::string>();
    if (!r["metrics"].contains(name)) return no("lacks metric '" + name + "'");
    p.metrics.push_back(r["metrics"][name]);
  }
  p.fingerprint = r["fingerprint"].get<std::string>();
  return p;
}

std::string csvCell(const ordered_json& v) {
  std::string s;
  if (v.is_null()) return s;
  if (v.is_string()) s = v.get<std::string>();
  else s = v.dump();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Writes (or checks) DIR/sweep.json; a folder holding another sweep is an error.
void claimFolder(const SweepSpec& spec, const std::string& dir) {
  ensureDirectory(dir);
  const std::string path = dir + "/sweep.json";
  if (fs::exists(path)) {
    auto j = readJson(path);
    if (!j || !j->is_object() || !j->contains("hash"))
      throw InputError(path + ": not a sweep.json written by servelab-cli sweep; choose another --out");
    if ((*j)["hash"] != spec.hash)
      throw InputError(dir + ": holds another sweep (hash " + (*j)["hash"].dump() + ", " + spec.source +
                       " has \"" + spec.hash + "\"); choose another --out");
    return;
  }
  writeFileAtomic(path, spec.normalized().dump(2) + "\n");
}

void writeResults(const std::string& dir, const ordered_json& spec, const std::vector<PointResult>& pts) {
  // Build both, then write: never one without the other because of a bad value.
  const std::string csv = resultsCsv(spec, pts);
  const std::string json = resultsJson(spec, pts);
  writeFileAtomic(dir + "/results.csv", csv);
  writeFileAtomic(dir + "/results.json", json);
}

}  // namespace

Shard parseShard(const std::string& text, const std::string& option) {
  const auto slash = text.find('/');
  const auto k = slash == std::string::npos ? std::nullopt : parseInt64(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : parseInt64(text.substr(slash + 1));
  if (!k || !n || *n < 1 || *n > 100000 || *k < 0 || *k >= *n)
    throw InputError(option + " '" + text + "': expected K/N with 0 <= K < N (e.g. 0/4 .. 3/4)");
  return Shard{static_cast<int>(*k), static_cast<int>(*n)};
}

std::vector<std::size_t> shardPoints(std::size_t total, const Shard& shard) {
  std::vector<std::size_t> out;
  for (std::size_t i = static_cast<std::size_t>(shard.index); i < total; i += static_cast<std::size_t>(shard.count))
    out.push_back(i);
  return out;
}

PointResult runPoint(const SweepSpec& spec, std::size_t index, const std::string& keepDir, const OutputSet& outputs) {
  const Scenario& sc = spec.scenarios.at(index);
  const std::string label = spec.source + ": point " + std::to_string(index);
  auto prepared = prepareRun(sc, label);
  RunOptions opt;
  opt.outDir = keepDir;
  opt.outputs = outputs;
  const RunResult r = executeRun(*prepared, opt);
  PointResult p;
  p.index = index;
  for (const auto& v : spec.points[index]) p.values.emplace_back(v);
  for (const std::string& m : spec.metrics) {
    if (m == kMetricMaxRate || m == kMetricMinTimeScale) {
      const RateCapacity c = maxSustainableRate(sc, spec.capacity, label);
      const auto v = c.traceScale ? c.minTimeScale : c.maxRate;
      p.metrics.push_back(v ? ordered_json(*v) : ordered_json(nullptr));
    } else if (m == kMetricMinInstances) {
      const InstanceCapacity c = minInstances(sc, std::nullopt, spec.capacity, label);
      p.metrics.push_back(c.minInstances ? ordered_json(*c.minInstances) : ordered_json(nullptr));
    } else {
      p.metrics.push_back(metricValue(r.summaryJson, m));
    }
  }
  p.fingerprint = fingerprintHex(r.fingerprint);
  return p;
}

SweepRunReport runSweep(const SweepSpec& spec, const SweepRunOptions& opt) {
  if (opt.outDir.empty()) throw InputError("sweep: --out DIR is required");
  claimFolder(spec, opt.outDir);
  ensureDirectory(opt.outDir + "/points");
  const std::string manifest = opt.outDir + "/" + manifestName(opt.shard);
  // This shard is not finished until it says so again.
  if (!opt.resume) fs::remove(manifest);
  const ordered_json norm = spec.normalized();

  SweepRunReport rep;
  const std::vector<std::size_t> mine = shardPoints(spec.points.size(), opt.shard);
  rep.points = mine.size();
  std::vector<std::size_t> todo;
  for (std::size_t i : mine) {
    if (opt.resume && readPointRecord(pointPath(opt.outDir, i), norm, i)) ++rep.reused;
    else todo.push_back(i);
  }
  std::mutex mu;
  std::size_t done = rep.reused;
  if (opt.progress) opt.progress(done, rep.points);
  parallelFor(
      todo.size(), opt.jobs,
      [&](std::size_t k) {
        const std::size_t i = todo[k];
        const std::string keep = opt.keepRuns ? opt.outDir + "/runs/" + pointName(i) : std::string();
        const PointResult p = runPoint(spec, i, keep, opt.outputs);
        writeFileAtomic(pointPath(opt.outDir, i), pointRecordJson(spec.hash, spec.metrics, p).dump(2) + "\n");
        std::lock_guard<std::mutex> lock(mu);
        ++done;
        ++rep.ran;
        if (opt.progress) opt.progress(done, rep.points);
      },
      opt.cancel);
  if (done < rep.points) {
    rep.cancelled = true;
    return rep;
  }
  // Every record of the shard, read back as merge will read it.
  std::vector<PointResult> results;
  for (std::size_t i : mine) {
    std::string why;
    auto p = readPointRecord(pointPath(opt.outDir, i), norm, i, &why);
    if (!p) throw std::runtime_error(pointPath(opt.outDir, i) + ": " + why + " right after it was written");
    results.push_back(std::move(*p));
  }
  ordered_json m;
  m["sweep"] = spec.hash;
  m["shard"] = opt.shard.index;
  m["shards"] = opt.shard.count;
  m["points"] = rep.points;
  writeFileAtomic(manifest, m.dump(2) + "\n");
  if (opt.shard.count == 1) {
    writeResults(opt.outDir, norm, results);
    rep.wroteResults = true;
  }
  return rep;
}

std::string resultsCsv(const ordered_json& spec, const std::vector<PointResult>& points) {
  std::string out = "point";
  auto add = [&out](const ordered_json& v) {
    out += ',';
    out += csvCell(v);
  };
  for (const auto& a : spec["axes"]) add(a);
  for (const auto& m : spec["metrics"]) add(m);
  out += ",fingerprint\n";
  for (const PointResult& p : points) {
    out += std::to_string(p.index);
    for (const auto& v : p.values) add(v);
    for (const auto& v : p.metrics) add(v);
    out += "," + p.fingerprint + "\n";
  }
  return out;
}

std::string resultsJson(const ordered_json& spec, const std::vector<PointResult>& points) {
  ordered_json j;
  j["sweep"] = spec["hash"];
  j["axes"] = spec["axes"];
  j["metrics"] = spec["metrics"];
  ordered_json arr = ordered_json::array();
  for (const PointResult& p : points) {
    ordered_json row;
    row["point"] = p.index;
    ordered_json v = ordered_json::object();
    for (std::size_t a = 0; a < p.values.size(); ++a) v[spec["axes"][a].get<std::string>()] = p.values[a];
    row["values"] = v;
    ordered_json m = ordered_json::object();
    for (std::size_t k = 0; k < p.metrics.size(); ++k) m[spec["metrics"][k].get<std::string>()] = p.metrics[k];
    row["metrics"] = m;
    row["fingerprint"] = p.fingerprint;
    arr.push_back(row);
  }
  j["points"] = arr;
  return j.dump(2) + "\n";
}

MergeReport mergeSweep(const std::vector<std::string>& dirs, const std::string& outDir) {
  if (dirs.empty()) throw InputError("merge: give at least one shard folder");
  // 1. One sweep: every folder's sweep.json has the same hash.
  ordered_json spec;
  std::string specDir;
  for (const std::string& d : dirs) {
    const std::string path = d + "/sweep.json";
    auto j = readJson(path);
    if (!j || !j->is_object() || !j->contains("hash") || !j->contains("points") || !j->contains("axes") ||
        !j->contains("metrics"))
      throw InputError(path + ": " + (fs::exists(path) ? "not a sweep.json written by servelab-cli sweep"
                                                       : "missing: " + d + " is not a sweep output folder"));
    if (specDir.empty()) {
      spec = *j;
      specDir = d;
    } else if ((*j)["hash"] != spec["hash"]) {
      throw InputError(d + ": belongs to another sweep (spec hash " + (*j)["hash"].dump() + ") than " + specDir +
                       " (spec hash " + spec["hash"].dump() + "); shards must come from the same SWEEP.json");
    }
  }
  const std::size_t total = spec["points"].size();
  // 2. Shards 0..N-1, each exactly once.
  static const std::regex re("shard-([0-9]+)-of-([0-9]+)\\.json");
  std::map<int, std::string> shardDir;
  int count = 0;
  std::string countFrom;
  for (const std::string& d : dirs) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      std::smatch m;
      if (!std::regex_match(name, m, re)) continue;
      const std::string path = d + "/" + name;
      auto j = readJson(path);
      if (!j || !j->contains("sweep") || (*j)["sweep"] != spec["hash"])
        throw InputError(path + ": not a manifest of sweep " + spec["hash"].dump());
      const Shard s = parseShard(m[1].str() + "/" + m[2].str(), path);
      if (count == 0) {
        count = s.count;
        countFrom = path;
      } else if (s.count != count) {
        throw InputError(path + ": shard " + shardText(s) + " does not fit " + countFrom + " (" +
                         std::to_string(count) + " shards); merge shards of one --shard K/N split");
      }
      if (auto it = shardDir.find(s.index); it != shardDir.end())
        throw InputError("shard " + shardText(s) + " appears twice: in " + it->second + " and in " + d);
      shardDir[s.index] = d;
    }
  }
  if (count == 0)
    throw InputError("merge: no finished shard (shard-K-of-N.json) in " + dirs.front() +
                     (dirs.size() > 1 ? " and the other folders" : "") + "; run servelab-cli sweep --shard K/N first");
  for (int k = 0; k < count; ++k)
    if (!shardDir.count(k))
      throw InputError("shard " + std::to_string(k) + "/" + std::to_string(count) +
                       " is missing or unfinished (no " + manifestName(Shard{k, count}) +
                       " in the folders given); run: servelab-cli sweep SWEEP.json --shard " + std::to_string(k) +
                       "/" + std::to_string(count) + " --out DIR");
  // 3. Every point exactly once, from its shard's folder.
  std::vector<PointResult> pts;
  pts.reserve(total);
  for (std::size_t i = 0; i < total; ++i) {
    const std::string& home = shardDir[static_cast<int>(i % static_cast<std::size_t>(count))];
    for (const std::string& d : dirs)
      if (fs::path(d) != fs::path(home) && fs::exists(pointPath(d, i)) && !fs::equivalent(d, home))
        throw InputError("point " + std::to_string(i) + " appears twice: in " + home + " and in " + d +
                         " (shards overlap)");
    std::string why;
    auto p = readPointRecord(pointPath(home, i), spec, i, &why);
    if (!p) throw InputError(pointPath(home, i) + ": point " + std::to_string(i) + " " + why);
    pts.push_back(std::move(*p));
  }
  const std::string outSpec = outDir + "/sweep.json";
  if (fs::exists(outSpec)) {
    auto j = readJson(outSpec);
    if (!j || !j->is_object() || !j->contains("hash") || (*j)["hash"] != spec["hash"])
      throw InputError(outDir + ": holds another sweep; choose another --out");
  } else {
    ensureDirectory(outDir);
    writeFileAtomic(outSpec, spec.dump(2) + "\n");
  }
  writeResults(outDir, spec, pts);
  return MergeReport{total, count};
}

}  // namespace sl::sweep
