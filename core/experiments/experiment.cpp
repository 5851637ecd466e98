#include "experiments/experiment.h"

#include <algorithm>

#include "experiments/arrow/arrow_experiments.h"
#include "experiments/cascade/cascade_experiments.h"
#include "experiments/cost/cost_experiments.h"
#include "experiments/moe/moe_experiments.h"
#include "experiments/pascal/pascal_experiments.h"
#include "experiments/prefix/prefix_experiments.h"
#include "experiments/selfsched/selfsched_experiments.h"
#include "experiments/speculative/spec_experiments.h"
#include "experiments/validation/hw_validation.h"
#include "run/execute.h"
#include "run/run.h"
#include "util/atomic_file.h"

namespace sl::exp {

const std::vector<Experiment>& experimentRegistry() {
  static const std::vector<Experiment> all = [] {
    std::vector<Experiment> v;
    addPascalExperiments(v);
    addArrowExperiments(v);
    addCascadeExperiments(v);
    addPrefixExperiments(v);
    addMoeExperiments(v);
    addSpeculativeExperiments(v);
    addCostExperiments(v);
    addSelfSchedExperiments(v);
    addValidationExperiments(v);
    return v;
  }();
  return all;
}

const Experiment* findExperiment(const std::string& id) {
  for (const Experiment& e : experimentRegistry())
    if (e.id == id) return &e;
  return nullptr;
}

RunOutcome runInMemory(const Scenario& s, const std::string& label, SimObserver* observer,
                       const WorkloadFactory& workload) {
  auto prepared = prepareRun(s, label, workload);
  if (observer) prepared->simulator->addObserver(observer);
  RunOptions opt;  // no outDir: nothing written
  RunResult res = executeRun(*prepared, opt);
  RunOutcome out;
  out.summary = res.summary;
  out.stalled = res.stalled;
  const Simulator& sim = *prepared->simulator;
  if (sim.prefixCaching()) out.prefixCache = sim.prefixCacheStats();
  if (sim.speculative()) {
    RunOutcome::SpecTotals t;
    for (int i = 0; i < sim.numInstances(); ++i) {
      t.drafted += sim.instance(i).draftedTokens();
      t.accepted += sim.instance(i).acceptedTokens();
      t.steps += sim.instance(i).speculativeSteps();
    }
    out.speculative = t;
  }
  out.records = sim.records();
  std::vector<RequestRecord> open = sim.inFlightRecords();
  out.records.insert(out.records.end(), open.begin(), open.end());
  std::sort(out.records.begin(), out.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  return out;
}

double outputTokensPerS(const RunOutcome& r) {
  if (r.records.empty()) return 0;
  std::int64_t first = r.records.front().arrival, last = first;
  double tokens = 0;
  for (const RequestRecord& rec : r.records) {
    first = std::min<std::int64_t>(first, rec.arrival);
    if (!rec.finished) continue;
    last = std::max<std::int64_t>(last, rec.last_token);
    tokens += rec.generated;
  }
  const double span = nsToSeconds(last - first);
  return span > 0 ? tokens / span : 0;
}

void writeExperimentOutputs(const ExperimentResult& r, const std::string& dir) {
  ensureDirectory(dir);
  writeFileAtomic(dir + "/table.csv", r.table.csv());
  std::string txt = r.table.text();
  for (const std::string& n : r.notes) txt += n + "\n";
  writeFileAtomic(dir + "/table.txt", txt);
  for (const ChartData& c : r.charts) writeFileAtomic(dir + "/" + c.name, c.csv);
}

}  // namespace sl::exp
