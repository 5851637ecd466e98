#pragma once
// Named workload presets (docs/workloads.md lists each one's parameters and
// where they come from). A preset sets the three length distributions of a
// WorkloadSpec; the arrival process and request count are left alone.
#include <string>
#include <utility>
#include <vector>

#include "scenario/spec.h"

namespace sl {

/// Domain tags carried by RequestSpec::domain (self-scheduling presets).
inline constexpr int kDomainNone = -1;
inline constexpr int kDomainMath = 0;
inline constexpr int kDomainCode = 1;
inline constexpr int kDomainChat = 2;  // ShareGPT-like conversation
/// "math", "code", "chat", or "" for kDomainNone / unknown ids.
std::string domainName(int domain);

/// Set `w`'s input/reasoning/answer distributions (and `w.preset`) from the
/// named preset. Unknown name -> InputError listing the known ids with a
/// "did you mean" hint.
void applyWorkloadPreset(const std::string& name, WorkloadSpec& w);

/// (id, one-line description) of every preset, in display order.
std::vector<std::pair<std::string, std::string>> workloadPresets();

/// Domain tag a preset gives its requests (kDomainNone for most).
/// Unknown or empty names -> kDomainNone.
int presetDomain(const std::string& name);

/// Closest known id to `name` by edit distance, or "" if none is close.
std::string closestPreset(const std::string& name);

}  // namespace sl
