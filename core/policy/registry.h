#pragma once
// Every selectable policy, by id, with its knobs (unit, range, default,
// description), paper and factory: one generic registry that each family
// fills from its own folder (core/policy/<family>/register.cpp, listed once
// in policy/families.cpp). The GUI and `servelab-cli presets policies` read
// the catalog. docs/policy-api.md walks through adding a family.
#include <cstdint>
#include <functional>
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

struct PolicyBundle {
  std::unique_ptr<GlobalPolicy> global;  // null: the engine gets a RouterPolicy for policy.router
  LocalPolicyFactory makeLocal;
  bool unlimitedKv = false;            // oracle: memory never binds
  std::optional<bool> chunkedPrefill;  // forced by the policy
};

class Knobs;

/// What a policy factory sees: the policy spec, its validated knobs and the
/// whole scenario (cluster, model, workload, SLO, run); `scenario` is null
/// when a policy is built from a bare PolicySpec (tests, tools).
struct PolicyContext {
  const PolicySpec& spec;
  const Knobs& knobs;
  const Scenario* scenario = nullptr;
};
using PolicyFactory = std::function<PolicyBundle(const PolicyContext&)>;

struct PolicyInfo {
  std::string id;
  std::string family;       // "Baselines", "PASCAL", ...
  std::string description;  // one line, with the paper reference
  bool usesRouter = true;   // honours policy.router (makePolicy adds the RouterPolicy)
  std::vector<KnobSpec> knobs;
  PolicyFactory make;       // builds the policy's parts
  bool poolRoles = false;   // reads cluster.pools[].role prefill / decode (Simulator::poolRole)
  bool stageRoles = false;  // reads cluster.pools[].role "stage-k" (CascadeInfer's pinned stages)
};

/// Where a family's register function (policy/families.h) adds its policies.
class PolicyRegistry {
public:
  void add(PolicyInfo info);  // std::logic_error on a duplicate id or a missing factory
  const std::vector<PolicyInfo>& all() const { return policies_; }

private:
  std::vector<PolicyInfo> policies_;
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

/// Build a policy: knobs validated (InputError), then its family's factory.
PolicyBundle makePolicy(const PolicySpec& spec);
/// The same, with the whole scenario handed to the factory (prepareRun).
PolicyBundle makePolicy(const Scenario& scenario);

/// A live knob change on a running simulation of policy `policyId`: checks
/// that the knob exists (with a did-you-mean hint), is safe to change mid-run
/// and is in range, then hands it to the policies (Simulator::setPolicyKnob).
/// InputError naming policy.knobs.<knob> otherwise.
void applyLiveKnob(Simulator& sim, const std::string& policyId, const std::string& knob, double value);

}  // namespace sl
