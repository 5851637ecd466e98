#pragma once
// Engine-generation presets (resources/engines/*.json; docs/cost-model.md
// "Engine generations"): the cost coefficients that differ between serving
// engine versions — the per-step CPU/scheduler overhead t_step_us above all —
// each with its public source. A scenario names one in `cluster.engine`; the
// preset's coefficients replace those of the defaults (or of the cost
// profile), and `cluster.cost` still overrides them.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/cost_model.h"
#include "cost/embedded_presets.h"
#include "cost/frontend.h"

namespace sl {

struct EnginePreset {
  std::string id;
  std::string name;
  bool isDefault = false;      ///< the generation the built-in defaults model
  nlohmann::json coefficients;  ///< a subset of CostCoefficients' keys
  nlohmann::json frontend = nlohmann::json::object();  ///< a subset of FrontEndSpec's keys
  nlohmann::json sources;       ///< key → public source (one per coefficient; "frontend.<key>" per front-end field)

  /// `base` with this preset's coefficients applied.
  CostCoefficients apply(const CostCoefficients& base) const;
  /// `base` with this preset's front-end fields applied.
  FrontEndSpec applyFrontEnd(const FrontEndSpec& base) const;
};

/// Parses one preset file's JSON; errors (InputError) name `file` and the
/// field. Every coefficient, and every field of the optional "frontend"
/// object (as "frontend.<key>"), needs a non-empty entry in "sources".
EnginePreset parseEnginePreset(const nlohmann::json& j, const std::string& file);

/// The built-in presets (embedded at build time), sorted by id; exactly one
/// is the default.
const std::vector<EnginePreset>& enginePresets();
/// The preset with this id, or InputError "<where>: unknown engine 'x': did
/// you mean 'y'? known: ...".
const EnginePreset& enginePreset(std::string_view id, std::string_view where = "cluster.engine");
/// The id of the default preset.
const std::string& defaultEngineId();

}  // namespace sl
