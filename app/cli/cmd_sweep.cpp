#include "cli/cmd_sweep.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "policy/registry.h"
#include "sweep/capacity.h"
#include "sweep/parallel.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl::cli {
namespace {

// "[#####.....] 12/36 points  ETA 40 s" on stderr when it is a terminal and
// the sweep has lasted more than a second.
class PointProgress {
 public:
  explicit PointProgress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  ~PointProgress() { done(); }
  void update(std::size_t done, std::size_t total) {
    if (!enabled_ || total == 0) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 1.0) return;
    if (!first_) first_ = std::make_pair(done, elapsed);  // points reused by --resume don't count for the ETA
    const double rate = elapsed > first_->second ? static_cast<double>(done - first_->first) / (elapsed - first_->second) : 0;
    const int filled = static_cast<int>(30.0 * static_cast<double>(done) / static_cast<double>(total));
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(30, '.');
    if (rate > 0)
      std::fprintf(stderr, "\r[%s] %zu/%zu points  ETA %.0f s   ", bar.c_str(), done, total,
                   static_cast<double>(total - done) / rate);
    else
      std::fprintf(stderr, "\r[%s] %zu/%zu points   ", bar.c_str(), done, total);
    drawn_ = true;
  }
  void done() {
    if (drawn_) std::fprintf(stderr, "\r%*s\r", 70, "");
    drawn_ = false;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::optional<std::pair<std::size_t, double>> first_;
};

struct SweepArgs {
  std::string spec, out, shard, outputs;
  int jobs = 0;
  bool keepRuns = false, resume = false, quiet = false;
};

int runSweepCmd(const SweepArgs& a) {
  // Everything is checked (spec, every point's scenario, --shard, --out)
  // before the first point runs.
  const sweep::SweepSpec spec = sweep::loadSweepFile(a.spec);
  sweep::SweepRunOptions o;
  o.outDir = a.out;
  o.jobs = a.jobs;
  if (!a.shard.empty()) o.shard = sweep::parseShard(a.shard);
  o.keepRuns = a.keepRuns;
  if (!a.outputs.empty()) {
    if (!a.keepRuns) throw InputError("--outputs: only with --keep-runs (a sweep writes no run files otherwise)");
    o.outputs = parseOutputSet(a.outputs);
  }
  o.resume = a.resume;
  PointProgress bar(!a.quiet);
  o.progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
  // Ctrl-C / SIGTERM: no new point starts; those under way finish and are
  // kept (their files committed, nothing half-written), and --resume goes on.
  o.cancel = &interruptFlag();
  const auto t0 = std::chrono::steady_clock::now();
  sweep::SweepRunReport r;
  {
    InterruptScope interrupts;
    r = sweep::runSweep(spec, o);
  }
  bar.done();
  if (r.cancelled && interruptSignal() != 0) {
    const std::string what = std::to_string(r.ran + r.reused) + " of " + std::to_string(r.points) +
                             " points done and kept in " + a.out + "; --resume finishes the sweep";
    endByInterrupt(what.c_str());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("sweep %s: %zu points", spec.hash.c_str(), r.points);
  if (o.shard.count > 1) std::printf(" in shard %d/%d (of %zu)", o.shard.index, o.shard.count, spec.points.size());
  std::printf(", %zu run, %zu reused, %d threads, wall %s s\n", r.ran, r.reused,
              std::min(sweep::resolveJobs(a.jobs), static_cast<int>(std::max<std::size_t>(1, r.ran))),
              formatFixed(wall, 2).c_str());
  if (r.wroteResults) std::printf("wrote %s/results.csv, %s/results.json\n", a.out.c_str(), a.out.c_str());
  else std::printf("wrote %s/points/ (merge the shards with servelab-cli merge)\n", a.out.c_str());
  return 0;
}

int runMergeCmd(const std::vector<std::string>& dirs, const std::string& out) {
  const sweep::MergeReport r = sweep::mergeSweep(dirs, out);
  std::printf("merged %d shards, %zu points: wrote %s/results.csv, %s/results.json\n", r.shards, r.points,
              out.c_str(), out.c_str());
  return 0;
}

struct CapacityArgs {
  std::vector<std::string> paths;  // one or more scenario files
  ScenarioArgs scenario;           // --set, --seed (applied to each file)
  std::vector<std::string> policies;
  sweep::CapacityOptions opt;
  std::optional<double> instancesAt;
  int jobs = 0;
  bool json = false, quiet = false;
};

int runCapacityCmd(const CapacityArgs& a) {
  sweep::validateCapacityOptions(a.opt, "capacity options");
  if (a.instancesAt && !(*a.instancesAt > 0)) throw InputError("--instances-at: must be > 0 req/s");
  // One row per (file, policy): each file with its own policy and knobs, or
  // with each of --policies (knobs kept only for the file's own policy).
  struct Row {
    std::string file, policy;
    Scenario scenario;
  };
  std::vector<Row> rows;
  for (const std::string& path : a.paths) {
    ScenarioArgs sa = a.scenario;
    sa.path = path;
    const Scenario base = loadWithOverrides(sa, nullptr, "capacity");
    std::vector<std::string> policies = a.policies;
    if (policies.empty()) policies.push_back(base.policy.id);
    for (const std::string& p : policies) {
      (void)policyInfo(p);  // unknown ids fail before anything runs
      Scenario s = base;
      s.policy.id = p;
      if (p != base.policy.id) s.policy.knobs = nlohmann::json::object();
      rows.push_back(Row{path, p, s});
    }
  }
  const bool trace = rows.front().scenario.workload.trace.has_value();
  for (const Row& r : rows)
    if (r.scenario.workload.trace.has_value() != trace)
      throw InputError(r.file + ": mixes trace and synthetic workloads with " + rows.front().file +
                       "; run capacity on them separately");
  // One task per row and search, run in parallel; each search is sequential.
  const bool inst = a.instancesAt.has_value();
  std::vector<sweep::RateCapacity> rate(rows.size());
  std::vector<sweep::InstanceCapacity> count(rows.size());
  const std::size_t tasks = rows.size() * (inst ? 2 : 1);
  if (!a.quiet) std::fprintf(stderr, "capacity: %zu searches on %d threads...\n", tasks, sweep::resolveJobs(a.jobs));
  sweep::parallelFor(tasks, a.jobs, [&](std::size_t t) {
    const std::size_t i = t % rows.size();
    const std::string label = rows[i].file + " (" + rows[i].policy + ")";
    if (t < rows.size()) rate[i] = sweep::maxSustainableRate(rows[i].scenario, a.opt, label);
    else count[i] = sweep::minInstances(rows[i].scenario, a.instancesAt, a.opt, label);
  });
  if (a.json) {
    nlohmann::ordered_json j;
    j["options"] = sweep::capacityOptionsJson(a.opt);
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      nlohmann::ordered_json p;
      p["scenario"] = rows[i].file;
      p["policy"] = rows[i].policy;
      p["load"] = sweep::rateCapacityJson(rate[i]);
      if (inst) {
        p["instances_at_rate"] = *a.instancesAt;
        p["instances"] = sweep::instanceCapacityJson(count[i]);
      }
      arr.push_back(p);
    }
    j["policies"] = arr;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("capacity: SLO attainment (slo_met / arrived) >= %s, %s\n", formatDouble(a.opt.target).c_str(),
              trace ? "smallest trace time_scale" : "highest arrival rate");
  const bool files = a.paths.size() > 1;
  if (files) std::printf("%-40s ", "scenario");
  std::printf("%-20s %22s %7s", "policy", trace ? "min time_scale" : "max rate (req/s)", "probes");
  if (inst) std::printf(" %24s", ("min instances @ " + formatDouble(*a.instancesAt)).c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto v = trace ? rate[i].minTimeScale : rate[i].maxRate;
    std::string cell = v ? formatDouble(*v) : "none in bracket";
    if (v && rate[i].atBracketEdge) cell = (trace ? "<= " : ">= ") + cell;
    if (files) std::printf("%-40s ", rows[i].file.c_str());
    std::printf("%-20s %22s %7zu", rows[i].policy.c_str(), cell.c_str(), rate[i].probes.size());
    if (inst)
      std::printf(" %24s", count[i].minInstances ? std::to_string(*count[i].minInstances).c_str()
                                                 : ("> " + std::to_string(a.opt.maxInstances)).c_str());
    std::printf("\n");
  }
  return 0;
}

}  // namespace

std::function<int()> addSweepCommand(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  auto* c = app.add_subcommand("sweep", "Run a parameter sweep (SWEEP.json) on all cores, or one shard of it");
  c->add_option("spec", a->spec, "Sweep spec JSON (docs/sweeps.md)")->required();
  c->add_option("--out", a->out, "Output folder (results.csv, results.json, points/)")->required();
  c->add_option("--jobs,-j,--threads", a->jobs, "Worker threads (default: all cores)");
  c->add_option("--shard", a->shard, "Run only shard K/N (0 <= K < N): the points i with i % N == K");
  c->add_flag("--keep-runs", a->keepRuns, "Also write each point's run outputs to DIR/runs/NNNNNN/");
  c->add_option("--outputs", a->outputs,
                "With --keep-runs: which run files each point writes, comma-separated: summary, requests, "
                "timeseries, trace (default: all)");
  c->add_flag("--resume", a->resume, "Reuse the finished points already in --out instead of rerunning them");
  c->add_flag("--quiet", a->quiet, "No progress bar");
  return [a]() { return runSweepCmd(*a); };
}

std::function<int()> addMergeCommand(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto* c = app.add_subcommand("merge", "Merge the shard folders of one sweep into results.csv/results.json");
  c->add_option("dirs", *dirs, "Shard output folders (sweep --shard K/N --out DIR)")->required();
  c->add_option("--out", *out, "Folder for the merged results")->required();
  return [dirs, out]() { return runMergeCmd(*dirs, *out); };
}

std::function<int()> addCapacityCommand(CLI::App& app) {
  auto a = std::make_shared<CapacityArgs>();
  auto* c = app.add_subcommand("capacity",
                               "Highest sustainable arrival rate per policy (and fewest instances) meeting an SLO");
  c->add_option("scenarios", a->paths, "Scenario JSON file(s); one row per file and policy")->required();
  c->add_option("--set", a->scenario.sets, "Override a field by JSON path, e.g. --set workload.requests=500");
  c->add_option("--seed", a->scenario.seed, "Override run.seed");
  c->add_option("--policies", a->policies, "Comma-separated policy ids (default: each scenario's own, with its knobs)")->delimiter(',');
  c->add_option("--target", a->opt.target, "SLO attainment to sustain, in (0, 1]")->capture_default_str();
  c->add_option("--rate-min", a->opt.rateMin, "Lowest rate of the search bracket, req/s")->capture_default_str();
  c->add_option("--rate-max", a->opt.rateMax, "Highest rate of the search bracket, req/s")->capture_default_str();
  c->add_option("--tolerance", a->opt.tolerance, "Stop bisecting when hi/lo <= 1 + tolerance")->capture_default_str();
  c->add_option("--instances-at", a->instancesAt, "Also find the fewest instances meeting the SLO at this rate");
  c->add_option("--max-instances", a->opt.maxInstances, "Instance search bracket 1..N")->capture_default_str();
  c->add_option("--jobs,-j", a->jobs, "Worker threads (default: all cores)");
  c->add_flag("--json", a->json, "JSON output (with every probe)");
  c->add_flag("--quiet", a->quiet, "Nothing on stderr");
  return [a]() { return runCapacityCmd(*a); };
}

}  // namespace sl::cli
