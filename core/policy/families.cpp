#include "policy/families.h"

namespace sl {

void registerAllPolicyFamilies(PolicyRegistry& reg) {
  registerBaselinePolicies(reg);
  registerPascalPolicies(reg);
  registerArrowPolicies(reg);
  registerSelfSchedPolicies(reg);
  registerCascadePolicies(reg);
  registerExamplePolicies(reg);
}

}  // namespace sl
