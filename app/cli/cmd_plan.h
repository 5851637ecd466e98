#pragma once
// `servelab-cli plan SCENARIO.json --rate R [...]` (docs/sweeps.md
// "Deployment search"): the cheapest deployment meeting an SLO at a rate,
// the Pareto front of cost against SLO attainment, and `--explain` (where
// the winner's time goes, which constraint binds). The search is core/plan.
#include <functional>

namespace CLI {
class App;
}

namespace sl::cli {

/// Adds the subcommand to `app`; returns what to run when it was chosen.
std::function<int()> addPlanCommand(CLI::App& app);
/// `servelab-cli plan-merge DIR... --out DIR`: merges `plan --shard K/N`
/// records into the one-process plan's outputs.
std::function<int()> addPlanMergeCommand(CLI::App& app);

}  // namespace sl::cli
