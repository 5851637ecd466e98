#include "cost/engine_presets.h"

#include <algorithm>

#include "cost/suggest.h"
#include "util/error.h"

namespace sl {

CostCoefficients EnginePreset::apply(const CostCoefficients& base) const {
  return CostCoefficients::fromJson(coefficients, "engines/" + id + ".json: coefficients", base);
}

FrontEndSpec EnginePreset::applyFrontEnd(const FrontEndSpec& base) const {
  return FrontEndSpec::fromJson(frontend, "engines/" + id + ".json: frontend", base);
}

EnginePreset parseEnginePreset(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file + ": an engine preset must be a JSON object");
  static const std::vector<std::string> kKeys = {"id", "name", "default", "coefficients", "frontend", "sources"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end())
      throw InputError(file + ": " + it.key() + ": unknown key (known: " + costdetail::joinList(kKeys) + ")");
  EnginePreset p;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
      throw InputError(file + ": " + key + ": must be a non-empty string");
    return it->get<std::string>();
  };
  p.id = str("id");
  p.name = str("name");
  if (auto it = j.find("default"); it != j.end()) {
    if (!it->is_boolean()) throw InputError(file + ": default: must be true or false");
    p.isDefault = it->get<bool>();
  }
  auto c = j.find("coefficients");
  if (c == j.end() || !c->is_object() || c->empty())
    throw InputError(file + ": coefficients: must be a non-empty object of cost coefficients");
  CostCoefficients::fromJson(*c, file + ": coefficients");  // validates keys and values
  p.coefficients = *c;
  if (auto f = j.find("frontend"); f != j.end()) {
    if (!f->is_object()) throw InputError(file + ": frontend: must be an object of front-end fields");
    FrontEndSpec::fromJson(*f, file + ": frontend", FrontEndSpec{});  // validates keys and values
    p.frontend = *f;
  }
  auto s = j.find("sources");
  if (s == j.end() || !s->is_object()) throw InputError(file + ": sources: must be an object (coefficient -> source)");
  std::vector<std::string> sourced;
  for (auto it = c->begin(); it != c->end(); ++it) sourced.push_back(it.key());
  for (auto it = p.frontend.begin(); it != p.frontend.end(); ++it) sourced.push_back("frontend." + it.key());
  for (const std::string& key : sourced) {
    auto src = s->find(key);
    if (src == s->end() || !src->is_string() || src->get<std::string>().empty())
      throw InputError(file + ": sources." + key + ": every coefficient and front-end field needs its public source");
  }
  for (auto it = s->begin(); it != s->end(); ++it)
    if (std::find(sourced.begin(), sourced.end(), it.key()) == sourced.end())
      throw InputError(file + ": sources." + it.key() + ": not one of this preset's coefficients or front-end fields");
  p.sources = *s;
  return p;
}

const std::vector<EnginePreset>& enginePresets() {
  static const std::vector<EnginePreset> presets = [] {
    std::vector<EnginePreset> v;
    for (const auto& f : costdetail::embeddedEngineFiles()) {
      const std::string file = std::string("resources/") + f.path;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(f.text);
      } catch (const nlohmann::json::parse_error& e) {
        throw InputError(file + ": invalid JSON: " + e.what());
      }
      v.push_back(parseEnginePreset(j, file));
      const std::string stem = std::string(f.path).substr(std::string("engines/").size());
      if (stem != v.back().id + ".json") throw InputError(file + ": id: must match the file name");
    }
    std::sort(v.begin(), v.end(), [](const EnginePreset& a, const EnginePreset& b) { return a.id < b.id; });
    if (std::count_if(v.begin(), v.end(), [](const EnginePreset& p) { return p.isDefault; }) != 1)
      throw InputError("resources/engines: exactly one preset must have \"default\": true");
    return v;
  }();
  return presets;
}

const EnginePreset& enginePreset(std::string_view id, std::string_view where) {
  std::vector<std::string> ids;
  for (const EnginePreset& p : enginePresets()) {
    if (p.id == id) return p;
    ids.push_back(p.id);
  }
  std::string msg = std::string(where) + ": unknown engine '" + std::string(id) + "'";
  const std::string hint = costdetail::closestMatch(id, ids);
  if (!hint.empty()) msg += ": did you mean '" + hint + "'?";
  msg += " known: " + costdetail::joinList(ids);
  throw InputError(msg);
}

const std::string& defaultEngineId() {
  for (const EnginePreset& p : enginePresets())
    if (p.isDefault) return p.id;
  throw InputError("resources/engines: no default preset");
}

}  // namespace sl
