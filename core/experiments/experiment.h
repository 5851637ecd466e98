#pragma once
// Experiments that mirror a paper's figure (`servelab-cli reproduce`,
// 60-cli-formats.md; 70-quality.md "Fidelity"). An experiment builds its
// scenarios from an embedded base scenario plus a size parameter (the request
// count: full or --quick), runs them in memory (prepareRun/executeRun, no
// per-run output files) and returns a table plus chart-data CSVs.
// Everything is deterministic: the same options give byte-identical outputs.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/observer.h"
#include "experiments/table.h"
#include "metrics/request_record.h"
#include "metrics/summary.h"
#include "scenario/spec.h"

namespace sl::exp {

struct ExperimentOptions {
  bool quick = false;                 // small request counts, fewer rates (tests/CI)
  std::optional<std::uint64_t> seed;  // overrides run.seed of every scenario
  /// Called before each simulation with a short label ("fcfs @ 8 req/s").
  std::function<void(const std::string&)> onRun;
};

struct ChartData {
  std::string name;  // file name, e.g. "tail_ttft_by_reasoning.csv"
  std::string csv;
};

struct ExperimentResult {
  Table table;
  std::vector<ChartData> charts;
  std::vector<std::string> notes;  // one-line remarks printed under the table
};

struct Experiment {
  std::string id;           // e.g. "pascal-fig10-tail-ttft"
  std::string paper;        // short paper name, e.g. "PASCAL"
  std::string title;        // one line
  std::string description;  // what is run and what the table shows
  std::function<ExperimentResult(const ExperimentOptions&)> run;
};

/// All experiments, in listing order.
const std::vector<Experiment>& experimentRegistry();
/// nullptr when unknown.
const Experiment* findExperiment(const std::string& id);

/// Outcome of one in-memory run.
struct RunOutcome {
  Summary summary;
  std::vector<RequestRecord> records;  // finished + in flight, by id
  bool stalled = false;
};
/// prepareRun + executeRun without output files. `observer`, when given, is
/// attached to the simulator for the run (e.g. to collect KV transfers).
RunOutcome runInMemory(const Scenario& s, const std::string& label, SimObserver* observer = nullptr);

/// Writes DIR/table.csv, DIR/table.txt and DIR/<chart>.csv (atomically);
/// creates DIR.
void writeExperimentOutputs(const ExperimentResult& r, const std::string& dir);

}  // namespace sl::exp
