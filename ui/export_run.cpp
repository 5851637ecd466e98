#include "export_run.h"

#include <algorithm>

#include "engine/decision_log.h"
#include "metrics/binned_tail.h"
#include "metrics/request_record.h"
#include "metrics/summary.h"
#include "output/timeseries_recorder.h"
#include "output/trace_recorder.h"
#include "run/execute.h"
#include "scenario/scenario_io.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "workload/presets.h"
#include "workload/trace_formats.h"

namespace sl::ui {

ExportRunResult exportRun(const Scenario& scenario, const ChangeLog& log, const ExportRunOptions& opt) {
  // Live changes exist only where the live rate applies; otherwise the run
  // is the plain one (which also keeps a trace reader's counters).
  std::unique_ptr<LiveRun> live;
  std::unique_ptr<PreparedRun> plain;
  if (liveRateSupported(scenario)) {
    live = prepareLiveRun(scenario, "export");
  } else {
    if (!log.empty()) throw InputError("export: this run has live changes but its workload has no live rate");
    plain = prepareRun(scenario, "export");
  }
  PreparedRun& run = live ? *live->prepared : *plain;
  Simulator& sim = *run.simulator;
  const Scenario& s = run.scenario;
  TimeSeriesRecorder series(s.cluster.instances);
  TraceRecorder trace(s.cluster.instances, s.run.trace_request_limit);
  if (!opt.resultsDir.empty()) sim.addObserver(&series);
  if (!opt.tracePath.empty()) sim.addObserver(&trace);

  // The replay loop of replayRun: each change at its event boundary.
  std::size_t next = 0;
  bool more = true;
  for (;;) {
    while (live && next < log.size() && sim.eventsProcessed() == log[next].events) live->apply(log[next++]);
    if (opt.events >= 0 && sim.eventsProcessed() >= opt.events) break;
    if (!(more = sim.step())) break;
  }

  ExportRunResult res;
  res.events = sim.eventsProcessed();
  res.arrived = sim.arrived();
  res.finished = sim.finishedCount();
  res.fingerprint = sim.fingerprint();
  res.complete = !more || sim.done();

  std::vector<std::pair<std::string, std::string>> files;
  if (!opt.resultsDir.empty()) {
    std::vector<RequestRecord> records = sim.records();
    std::vector<RequestRecord> open = sim.inFlightRecords();
    records.insert(records.end(), open.begin(), open.end());
    std::sort(records.begin(), records.end(),
              [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
    const Summary summary = summarize(records, sim.arrived(), sim.now(), s.slo);
    // summary.json exactly as executeRun writes it (wall_s: null).
    nlohmann::ordered_json j;
    j["servelab_version"] = kServeLabVersion;
    j["policy"] = s.policy.id;
    j["seed"] = s.run.seed;
    j["fingerprint"] = fingerprintHex(res.fingerprint);
    j["events"] = res.events;
    j["aborted"] = sim.aborted();
    j["stalled"] = sim.stalled();
    const nlohmann::ordered_json metrics = summaryToJson(summary);
    for (auto it = metrics.begin(); it != metrics.end(); ++it) j[it.key()] = it.value();
    j["wall_s"] = nullptr;
    if (run.traceStats) j["trace"] = traceStatsJson(*run.traceStats);
    j["scenario"] = scenarioToJson(s);

    std::vector<std::string> domains;
    for (int d = 0; d < 8; ++d) domains.push_back(domainName(d));
    std::string csv = requestsCsvHeader();
    csv.reserve(records.size() * 160);
    for (const RequestRecord& r : records) appendRequestCsvRow(r, csv, domains);
    const std::string& dir = opt.resultsDir;
    files.emplace_back(dir + "/summary.json", j.dump(2) + "\n");
    files.emplace_back(dir + "/requests.csv", std::move(csv));
    files.emplace_back(dir + "/timeseries.csv", series.csv());
    const auto bins = binnedTailTtft(records);
    if (!bins.empty()) files.emplace_back(dir + "/tail_ttft.csv", binnedTailCsv(bins));
    if (const DecisionLog* dl = sim.globalPolicy().decisionLog()) files.emplace_back(dir + "/decisions.csv", dl->csv());
  }
  if (!opt.tracePath.empty()) files.emplace_back(opt.tracePath, trace.finish(sim.now(), sim.globalPolicy().decisionLog()));

  if (!opt.resultsDir.empty()) ensureDirectory(opt.resultsDir);
  for (const auto& [path, text] : files) {
    writeFileAtomic(path, text);
    res.files.push_back(path);
  }
  return res;
}

}  // namespace sl::ui
