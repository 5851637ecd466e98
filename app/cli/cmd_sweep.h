#pragma once
// `servelab-cli sweep SWEEP.json --out DIR [--jobs N] [--shard K/N]
// [--keep-runs] [--resume]`, `servelab-cli merge DIR... --out DIR` and
// `servelab-cli capacity SCENARIO.json [--policies ...]` (docs/sweeps.md);
// the work is done by core/sweep.
#include <functional>

namespace CLI {
class App;
}

namespace sl::cli {

/// Each adds its subcommand to `app` and returns what to run when it was chosen.
std::function<int()> addSweepCommand(CLI::App& app);
std::function<int()> addMergeCommand(CLI::App& app);
std::function<int()> addCapacityCommand(CLI::App& app);

}  // namespace sl::cli
