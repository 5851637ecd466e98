#pragma once
// The shared shape of most experiments: run every policy at every arrival
// rate (a grid of in-memory runs), then build tables and chart CSVs from the
// runs with column specs. A table is either "long" (one row per run, rate
// outer, policy inner) or "wide" (one row per rate, one column per policy and
// metric).
#include <functional>
#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

/// One run of the grid.
struct GridCell {
  double rate = 0;
  std::string policy;
  RunOutcome run;
};

/// Builds the scenario of one cell (rate, policy).
using ScenarioFn = std::function<Scenario(double rate, const std::string& policy)>;
/// Optional per-run observer: called before each run with the cell (its
/// `run` still empty); the returned observer (may be null) watches that run
/// and must outlive it.
using ObserverFn = std::function<SimObserver*(double rate, const std::string& policy)>;

class Grid {
 public:
  std::vector<double> rates;
  std::vector<std::string> policies;
  std::vector<GridCell> cells;  // rates × policies, rate outer

  /// The run of (rate, policy); throws std::out_of_range when absent.
  const GridCell& at(double rate, const std::string& policy) const;
  const Summary& summary(double rate, const std::string& policy) const { return at(rate, policy).run.summary; }
};

/// Runs `policies` at each of `rates` (rate outer, policy inner). Applies
/// o.seed, reports each run through o.onRun ("<policy> @ <rate> req/s").
Grid runGrid(const ScenarioFn& scenario, const std::vector<double>& rates, const std::vector<std::string>& policies,
             const ExperimentOptions& o, const ObserverFn& observer = {});

/// Column of a long table: a name and the cell's value as text.
struct Column {
  std::string name;
  std::function<std::string(const GridCell&)> value;
};

/// "policy" and "rate_rps" (1 decimal) columns.
Column policyColumn();
Column rateColumn();
/// A Summary metric with `decimals` decimals.
Column summaryColumn(std::string name, std::function<double(const Summary&)> metric, int decimals = 3);
/// An integer Summary metric.
Column countColumn(std::string name, std::function<std::int64_t(const Summary&)> metric);

/// One row per cell, in grid order.
Table longTable(const Grid& g, const std::vector<Column>& columns);
/// One row per rate: "rate_rps", then for each column, one column per policy
/// named "<policy>_<column name>".
Table wideTable(const Grid& g, const std::vector<Column>& columns);
/// Appends a column computed per rate to a wide table (one row per rate).
void addRateColumn(Table& t, const Grid& g, const std::string& name, const std::function<std::string(double)>& value);

/// Rate as printed in tables ("8.0", "0.25").
std::string rateLabel(double rate);

}  // namespace sl::exp
