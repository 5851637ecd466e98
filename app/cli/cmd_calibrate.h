#pragma once
// `servelab-cli calibrate MEASUREMENTS.csv --gpu ID --model ID [--out P.json] [--json]`
// (60-cli-formats.md): fits the cost model's coefficients to measured
// iteration times (core/cost/calibration.h) and writes a cost profile.
// `servelab-cli calibrate --operators OPS.csv [--gpu ID] [--profile P.json] [--fit]
// [--out P.json] [--json]`: compares ServeLab's terms with per-operator kernel
// times and optionally refits them (core/cost/operator_fit.h).
#include <functional>

namespace CLI {
class App;
}

namespace sl::cli {

/// Adds the subcommand to `app`; returns what to run when it was chosen
/// (the exit code; InputError propagates for main to map to exit 2).
std::function<int()> addCalibrateCommand(CLI::App& app);

}  // namespace sl::cli
