#include "ui/controller/export_run.h"

#include "run/execute.h"

namespace sl::ui {

ExportRunResult exportRun(const Scenario& scenario, const ChangeLog& log, const ExportRunOptions& opt) {
  // The run module's own replay (core/run: executeRun with the change log),
  // so the files are those `servelab-cli run` writes for the same scenario
  // and change log (a saved run, File ▸ Save run as…).
  auto live = prepareLiveRun(scenario, "export");
  validateChangeLog(live->prepared->scenario, log, "export: change log");
  RunOptions ro;
  ro.outDir = opt.resultsDir;
  ro.outputs = opt.outputs;
  if (!opt.tracePath.empty()) {  // File ▸ Export ▸ Trace…
    ro.outputs.trace = true;
    ro.tracePath = opt.tracePath;
  } else if (!opt.outputs.trace || opt.resultsDir.empty()) {
    ro.outputs.trace = false;
    ro.tracePath = std::string();
  }  // (else trace.json goes to resultsDir, as `run --out` puts it)
  ro.stopAfterEvents = opt.events;
  ro.cancel = opt.cancel;
  if (opt.progress) ro.progress = [&opt](double fraction, double) { opt.progress(fraction); };
  const RunResult r = executeRun(*live, log, ro);
  ExportRunResult res;
  res.files = r.files;
  res.events = r.events;
  res.arrived = r.summary.arrived;
  res.finished = r.summary.finished;
  res.fingerprint = r.fingerprint;
  res.complete = r.complete;
  return res;
}

}  // namespace sl::ui
