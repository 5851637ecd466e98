#include "experiments/grid.h"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace sl::exp {

std::string rateLabel(double rate) {
  // One decimal ("8.0"), two where one would round (0.25).
  return num(rate, std::round(rate * 10) == rate * 10 ? 1 : 2);
}

const GridCell& Grid::at(double rate, const std::string& policy) const {
  for (const GridCell& c : cells)
    if (c.rate == rate && c.policy == policy) return c;
  throw std::out_of_range("experiment grid: no run of " + policy + " @ " + rateLabel(rate) + " req/s");
}

Grid runGrid(const ScenarioFn& scenario, const std::vector<double>& rates, const std::vector<std::string>& policies,
             const ExperimentOptions& o, const ObserverFn& observer) {
  Grid g;
  g.rates = rates;
  g.policies = policies;
  g.cells.reserve(rates.size() * policies.size());
  for (double rate : rates) {
    for (const std::string& p : policies) {
      Scenario s = scenario(rate, p);
      if (o.seed) s.run.seed = *o.seed;
      const std::string label = p + " @ " + rateLabel(rate) + " req/s";
      if (o.onRun) o.onRun(label);
      SimObserver* obs = observer ? observer(rate, p) : nullptr;
      g.cells.push_back(GridCell{rate, p, runInMemory(s, label, obs)});
    }
  }
  return g;
}

Column policyColumn() {
  return {"policy", [](const GridCell& c) { return c.policy; }};
}

Column rateColumn() {
  return {"rate_rps", [](const GridCell& c) { return rateLabel(c.rate); }};
}

Column summaryColumn(std::string name, std::function<double(const Summary&)> metric, int decimals) {
  return {std::move(name),
          [metric = std::move(metric), decimals](const GridCell& c) { return num(metric(c.run.summary), decimals); }};
}

Column countColumn(std::string name, std::function<std::int64_t(const Summary&)> metric) {
  return {std::move(name),
          [metric = std::move(metric)](const GridCell& c) { return std::to_string(metric(c.run.summary)); }};
}

Table longTable(const Grid& g, const std::vector<Column>& columns) {
  Table t;
  for (const Column& c : columns) t.columns.push_back(c.name);
  for (const GridCell& cell : g.cells) {
    std::vector<std::string> row;
    row.reserve(columns.size());
    for (const Column& c : columns) row.push_back(c.value(cell));
    t.addRow(std::move(row));
  }
  return t;
}

Table wideTable(const Grid& g, const std::vector<Column>& columns) {
  Table t;
  t.columns = {"rate_rps"};
  for (const Column& c : columns)
    for (const std::string& p : g.policies) t.columns.push_back(p + "_" + c.name);
  for (double rate : g.rates) {
    std::vector<std::string> row = {rateLabel(rate)};
    for (const Column& c : columns)
      for (const std::string& p : g.policies) row.push_back(c.value(g.at(rate, p)));
    t.addRow(std::move(row));
  }
  return t;
}

void addRateColumn(Table& t, const Grid& g, const std::string& name, const std::function<std::string(double)>& value) {
  t.columns.push_back(name);
  for (std::size_t i = 0; i < t.rows.size() && i < g.rates.size(); ++i) t.rows[i].push_back(value(g.rates[i]));
}

}  // namespace sl::exp
