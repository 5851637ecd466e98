#pragma once
// The CLI's charts live in a twin executable. `servelab-cli` links only the
// core (no Qt): loading Qt's libraries took ~11 ms of every call, 7 % of a
// whole W3 run (docs/performance.md, issue 27). Built with the Qt GUI,
// `servelab-cli-charts` is the same CLI with the charts linked in;
// `servelab-cli plot` and `servelab-cli reproduce ... --out` hand the whole
// call to it (same arguments, same exit code and output: the process is
// replaced). docs/user-guide.md, `plot`.
#include <string>

namespace sl::cli {

/// main() keeps its arguments here, for execChartsHelper().
void rememberArgs(int argc, char** argv);

/// The charts twin: `servelab-cli-charts` in this executable's folder.
std::string chartsHelperPath();

/// Replaces this process by the charts twin, called with this call's
/// arguments. Returns only when that fails, with the sentence that says why
/// (naming the path looked at), for plot's error and reproduce's note.
std::string execChartsHelper();

}  // namespace sl::cli
