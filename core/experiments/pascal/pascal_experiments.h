#pragma once
// PASCAL (shared/papers/pascal-phase-aware-scheduling.txt) figure experiments.
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

/// The PASCAL evaluation setting's arrival rates (req/s; docs/fidelity.md
/// explains how they were chosen from a sweep).
inline constexpr double kPascalLowRate = 2.0;
inline constexpr double kPascalMediumRate = 4.0;
inline constexpr double kPascalHighRate = 8.0;
/// The same choice, by the same rule, on the Arena-Hard-like workload, whose
/// requests are larger (memory saturates at lower rates).
inline constexpr double kArenaLowRate = 1.0;
inline constexpr double kArenaMediumRate = 1.5;
inline constexpr double kArenaHighRate = 2.5;

/// Base scenario of §V (samples/pascal-baseline-fcfs.json) with the given
/// arrival rate, policy, request count (the size parameter) and workload
/// preset (alpaca-reasoning; the Arena-Hard variants use
/// arena-hard-reasoning, Fig. 16 reasoning-mix).
Scenario pascalScenario(double rate, const std::string& policy, std::int64_t requests,
                        const std::string& preset = "alpaca-reasoning");

void addPascalExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
