#pragma once
// The scheduler families, each registering its policies from its own folder
// (core/policy/<family>/register.cpp). Adding a family: a folder with its
// policies and a register function, declared here and listed once in
// families.cpp -- no engine, GUI or CMake file changes (docs/policy-api.md).
#include "policy/registry.h"

namespace sl {

void registerBaselinePolicies(PolicyRegistry& reg);  // policy/baselines/
void registerPascalPolicies(PolicyRegistry& reg);    // policy/pascal/
void registerExamplePolicies(PolicyRegistry& reg);   // policy/example/
void registerArrowPolicies(PolicyRegistry& reg);     // policy/arrow/
void registerSelfSchedPolicies(PolicyRegistry& reg); // policy/selfsched/
void registerCascadePolicies(PolicyRegistry& reg);   // policy/cascade/

/// Knobs shared between families: RR's queue order (1 = by quanta used, 0 =
/// circular), used by `rr` and PASCAL's local part (policy/baselines/register.cpp).
KnobSpec priorityByQuantaKnob();

/// Every family, in catalog order.
void registerAllPolicyFamilies(PolicyRegistry& reg);

}  // namespace sl
