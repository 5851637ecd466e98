#pragma once
// `servelab-cli reproduce --list` / `servelab-cli reproduce ID [--out DIR]
// [--quick] [--seed N]` (60-cli-formats.md): runs a paper-figure experiment
// (core/experiments) and prints its table; with --out writes DIR/ID/table.csv,
// table.txt and the chart CSVs.
#include <functional>

namespace CLI {
class App;
}

namespace sl::cli {

/// Adds the subcommand to `app`; returns what to run when it was chosen.
std::function<int()> addReproduceCommand(CLI::App& app);

}  // namespace sl::cli
