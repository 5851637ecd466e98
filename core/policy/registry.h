#pragma once
// Every selectable policy, by id, with its knobs (unit, range, default,
// description) and paper. Adding a policy = one file pair + one entry in
// registry.cpp. The GUI and `servelab-cli presets policies` read the catalog.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/simulator.h"
#include "scenario/spec.h"

namespace sl {

struct KnobSpec {
  std::string name;
  std::string unit;
  double min = 0, max = 0, def = 0;
  bool integer = false;
  bool liveSafe = false;  // may change while a run is going (GUI slider)
  std::string description;
};

struct PolicyInfo {
  std::string id;
  std::string family;       // "Baselines", "PASCAL", ...
  std::string description;  // one line
  bool usesRouter = true;   // honours policy.router
  std::vector<KnobSpec> knobs;
};

struct PolicyBundle {
  std::unique_ptr<GlobalPolicy> global;
  LocalPolicyFactory makeLocal;
  bool unlimitedKv = false;            // oracle: memory never binds
  std::optional<bool> chunkedPrefill;  // forced by the policy
};

const std::vector<PolicyInfo>& policyCatalog();
const PolicyInfo& policyInfo(const std::string& id);  // InputError with hint if unknown

/// Knob values after defaults and validation (InputError names policy.knobs.X).
class Knobs {
public:
  Knobs(const PolicyInfo& info, const nlohmann::json& given);
  double get(const std::string& name) const;
  int getInt(const std::string& name) const { return static_cast<int>(get(name)); }

private:
  std::vector<std::pair<std::string, double>> values_;
};

PolicyBundle makePolicy(const PolicySpec& spec);

/// A live knob change on a running simulation of policy `policyId`: checks
/// that the knob exists (with a did-you-mean hint), is safe to change mid-run
/// and is in range, then hands it to the policies (Simulator::setPolicyKnob).
/// InputError naming policy.knobs.<knob> otherwise.
void applyLiveKnob(Simulator& sim, const std::string& policyId, const std::string& knob, double value);

}  // namespace sl
