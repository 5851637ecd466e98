#include "run/saved_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "run/execute.h"
#include "scenario/scenario_io.h"
#include "util/error.h"
#include "util/json_check.h"
#include "util/strings.h"

namespace sl {

namespace {

void onlyKeys(const nlohmann::json& obj, const std::vector<std::string>& keys, const std::string& at) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) != keys.end()) continue;
    const auto hint = didYouMean(it.key(), keys);
    std::string list;
    for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
    throw InputError(at + ": unknown field '" + it.key() + "'" +
                     (hint ? " (did you mean '" + *hint + "'?)" : " (its fields: " + list + ")"));
  }
}

std::uint64_t parseFingerprint(const nlohmann::json& v, const std::string& at) {
  if (!v.is_string()) throw InputError(at + ": expected a string of 16 hex digits, got " + jsonTypeName(v));
  const std::string s = v.get<std::string>();
  const bool hex = s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
                   });
  if (!hex) throw InputError(at + ": expected 16 hex digits (as summary.json writes it), got '" + s + "'");
  return std::stoull(s, nullptr, 16);
}

SavedAt parseSavedAt(const nlohmann::json& j, const std::string& at) {
  if (!j.is_object()) throw InputError(at + ": expected an object {servelab, events, sim_s, fingerprint}, got " +
                                       std::string(jsonTypeName(j)));
  onlyKeys(j, {"servelab", "events", "sim_s", "fingerprint"}, at);
  for (const char* k : {"events", "fingerprint"})
    if (!j.contains(k)) throw InputError(at + ": missing required field '" + k + "'");
  SavedAt s;
  if (j.contains("servelab")) {
    if (!j.at("servelab").is_string()) throw InputError(at + ".servelab: expected a string, got " +
                                                        std::string(jsonTypeName(j.at("servelab"))));
    s.servelab = j.at("servelab").get<std::string>();
  }
  const nlohmann::json& ev = j.at("events");
  if (!ev.is_number_integer() && !ev.is_number_unsigned())
    throw InputError(at + ".events: expected an integer, got " + std::string(jsonTypeName(ev)));
  if (ev.is_number_integer() && ev.get<std::int64_t>() < 0)
    throw InputError(at + ".events: must be >= 0 (got " + ev.dump() + ")");
  s.events = ev.get<std::int64_t>();
  if (j.contains("sim_s")) {
    const nlohmann::json& t = j.at("sim_s");
    if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0)
      throw InputError(at + ".sim_s: expected a number >= 0, got " + t.dump());
    s.simS = t.get<double>();
  }
  s.fingerprint = parseFingerprint(j.at("fingerprint"), at + ".fingerprint");
  return s;
}

}  // namespace

std::optional<LiveChanges> takeLiveChanges(nlohmann::json& doc, const std::string& source) {
  if (!doc.is_object() || !doc.contains(kLiveChangesKey)) return std::nullopt;
  const nlohmann::json section = doc.at(kLiveChangesKey);
  doc.erase(kLiveChangesKey);
  const std::string at = source + ": " + kLiveChangesKey;
  if (!section.is_object())
    throw InputError(at + ": expected an object {version, changes, saved_at}, got " + std::string(jsonTypeName(section)));
  onlyKeys(section, {"version", "changes", "saved_at"}, at);
  if (!section.contains("version")) throw InputError(at + ": missing required field 'version'");
  const nlohmann::json& v = section.at("version");
  if (!v.is_number_integer() && !v.is_number_unsigned())
    throw InputError(at + ".version: expected an integer, got " + std::string(jsonTypeName(v)));
  if (v.get<std::int64_t>() != kLiveChangesVersion)
    throw InputError(at + ".version: unsupported version " + v.dump() + " (this build of ServeLab reads version " +
                     std::to_string(kLiveChangesVersion) + ")");
  if (!section.contains("changes")) throw InputError(at + ": missing required field 'changes'");
  LiveChanges lc;
  lc.changes = changeLogFromJson(section.at("changes"), at + ".changes");
  if (section.contains("saved_at") && !section.at("saved_at").is_null()) {
    lc.savedAt = parseSavedAt(section.at("saved_at"), at + ".saved_at");
    if (!lc.changes.empty() && lc.changes.back().events > lc.savedAt->events)
      throw InputError(at + ".changes[" + std::to_string(lc.changes.size() - 1) + "].events: " +
                       std::to_string(lc.changes.back().events) + " is after saved_at.events " +
                       std::to_string(lc.savedAt->events) + " (a change cannot come after the moment it was saved)");
  }
  return lc;
}

ScenarioFile loadScenarioOrSavedRun(const std::string& path) {
  nlohmann::json doc = loadJsonFile(path);
  ScenarioFile f;
  f.live = takeLiveChanges(doc, path);
  f.scenario = parseScenario(doc, path);
  f.scenario.base_dir = scenarioBaseDir(path);
  if (f.live) validateLiveChanges(f.scenario, *f.live, path);
  return f;
}

nlohmann::ordered_json liveChangesToJson(const LiveChanges& lc) {
  nlohmann::ordered_json j;
  j["version"] = kLiveChangesVersion;
  j["changes"] = changeLogToJson(lc.changes);
  if (lc.savedAt) {
    nlohmann::ordered_json a;
    a["servelab"] = lc.savedAt->servelab;
    a["events"] = lc.savedAt->events;
    a["sim_s"] = lc.savedAt->simS;
    a["fingerprint"] = fingerprintHex(lc.savedAt->fingerprint);
    j["saved_at"] = a;
  }
  return j;
}

std::string dumpSavedRun(const Scenario& s, const LiveChanges& lc) {
  nlohmann::ordered_json j = scenarioToJson(s);
  j[kLiveChangesKey] = liveChangesToJson(lc);
  return j.dump(2) + "\n";
}

void validateLiveChanges(const Scenario& s, const LiveChanges& lc, const std::string& source) {
  validateChangeLog(s, lc.changes, source + ": " + kLiveChangesKey + ".changes");
}

namespace {

namespace fs = std::filesystem;

std::string rebase(const std::string& path, const std::string& fromDir, const std::string& toDir) {
  if (path.empty()) return path;
  const fs::path p(path);
  if (p.is_absolute()) return path;
  std::error_code ec;
  const fs::path target = fs::absolute(fs::path(fromDir.empty() ? "." : fromDir) / p, ec).lexically_normal();
  if (ec) return path;
  const fs::path to = fs::absolute(fs::path(toDir.empty() ? "." : toDir), ec).lexically_normal();
  if (ec) return target.string();
  const fs::path rel = target.lexically_relative(to);
  return rel.empty() ? target.string() : rel.string();
}

void rebaseDist(LengthDist& d, const std::string& fromDir, const std::string& toDir) {
  if (d.kind == LengthDist::Kind::Empirical) d.path = rebase(d.path, fromDir, toDir);
  for (LengthDist& part : d.parts) rebaseDist(part, fromDir, toDir);
}

}  // namespace

void rebaseScenarioPaths(Scenario& s, const std::string& toDir) {
  const std::string from = s.base_dir;
  if (s.cluster.profile) s.cluster.profile = rebase(*s.cluster.profile, from, toDir);
  if (s.workload.trace) s.workload.trace->path = rebase(s.workload.trace->path, from, toDir);
  rebaseDist(s.workload.input_tokens, from, toDir);
  rebaseDist(s.workload.reasoning_tokens, from, toDir);
  rebaseDist(s.workload.answer_tokens, from, toDir);
  s.base_dir = toDir;
}

}  // namespace sl
