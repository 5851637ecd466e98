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
#include "engine/prefix_cache.h"
#include "experiments/table.h"
#include "metrics/request_record.h"
#include "metrics/summary.h"
#include "run/run.h"
#include "scenario/spec.h"

namespace sl::exp {

struct ExperimentOptions {
  bool quick = false;                 // small request counts, fewer rates (tests/CI)
  std::optional<std::uint64_t> seed;  // overrides run.seed of every scenario
  /// Called before each simulation with a short label ("fcfs @ 8 req/s").
  std::function<void(const std::string&)> onRun;
};

/// How `reproduce --out` draws a chart CSV as a PNG (one CSV may give
/// several PNGs). Without plots the renderer picks x and y itself
/// (ui/charts/chart_render.h: csvChart), which suits simple two-column shapes.
struct PlotSpec {
  std::string suffix = {};               // the PNG is <csv stem><suffix>.png
  std::string x = {};                    // x column
  std::vector<std::string> ys = {};      // y columns (one axis: keep one unit)
  std::vector<std::string> series = {};  // columns whose values split the series ("" = none; several ys split too)
  std::vector<std::pair<std::string, std::string>> where = {};  // keep only rows with column == value
  std::string title = {};                // default: "<experiment>: <csv stem>"
  std::string yLabel = {};               // default: from the y column's name
  /// Categorical x: dots over labelled categories. A text x column gives its
  /// values in first-seen order; a numeric index column gives these labels.
  bool categoricalX = false;
  std::vector<std::string> xLabels = {};
  bool scatter = false;             // dots, not lines (e.g. search probes)
  std::optional<std::pair<double, double>> yRange = {};  // e.g. {0, 1} for a share
  bool step = false;                // a value that holds until the next row (e.g. pool sizes)
  std::string xLabel = {};          // default: from the x column's name
  std::vector<std::string> yNames = {};  // legend names of the ys (default: from their column names)
};

struct ChartData {
  std::string name;  // file name, e.g. "tail_ttft_by_reasoning.csv"
  std::string csv;
  std::vector<PlotSpec> plots = {};  // empty: one PNG, the renderer's own choice
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
  std::optional<PrefixCacheStats> prefixCache;  // cluster totals; set only with cluster.prefix_caching
  /// Speculative decoding's cluster totals; set only with cluster.speculative.
  struct SpecTotals {
    std::int64_t drafted = 0, accepted = 0, steps = 0;  // draft tokens, accepted ones, sequence-steps
    double tokensPerStep() const { return steps > 0 ? static_cast<double>(steps + accepted) / steps : 1.0; }
  };
  std::optional<SpecTotals> speculative;
};
/// prepareRun + executeRun without output files. `observer`, when given, is
/// attached to the simulator for the run (e.g. to collect KV transfers);
/// `workload`, when given, builds the requests instead of the scenario's
/// workload section (prepareRun's WorkloadFactory).
RunOutcome runInMemory(const Scenario& s, const std::string& label, SimObserver* observer = nullptr,
                       const WorkloadFactory& workload = {});

/// Output tokens per second over the run: every finished request's tokens
/// over the time from the first arrival to the last finish (0 when none).
double outputTokensPerS(const RunOutcome& r);

/// Writes DIR/table.csv, DIR/table.txt and DIR/<chart>.csv (atomically);
/// creates DIR.
void writeExperimentOutputs(const ExperimentResult& r, const std::string& dir);

}  // namespace sl::exp
