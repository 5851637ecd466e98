#pragma once
// `servelab-cli plot RESULTS_DIR --chart NAME --png OUT.png [--svg OUT.svg]
// [--size WxH]` (60-cli-formats.md): renders the desktop app's charts from a
// `run --out` folder, headless. `--chart list` lists the charts; `--chart all`
// writes every chart into the --png / --svg folders. Needs the Qt GUI: a
// servelab-cli built without it says so and exits 2.
#include <functional>

namespace CLI {
class App;
}

namespace sl::cli {

/// Adds the subcommand to `app`; returns what to run when it was chosen.
std::function<int()> addPlotCommand(CLI::App& app);

/// Whether this build can render charts (the Qt GUI library is linked).
bool plotAvailable();

}  // namespace sl::cli
