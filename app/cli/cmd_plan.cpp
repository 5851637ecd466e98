#include "cli/cmd_plan.h"

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/charts_helper.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "experiments/experiment.h"
#include "plan/plan.h"
#include "sweep/parallel.h"
#include "sweep/sweep_run.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/strings.h"

#ifdef SERVELAB_HAVE_UI
#include <QApplication>

#include "ui/charts/chart_render.h"
#include "ui/charts/live_chart.h"
#endif

namespace sl::cli {
namespace {

struct PlanArgs {
  ScenarioArgs scenario;
  plan::PlanOptions opt;
  std::vector<std::string> kinds;
  bool disaggregated = false;
  bool noPrune = false;
  std::string out;
  bool explain = false;
  std::optional<long long> candidate;
  std::string shard;
  bool quiet = false;
};

std::string g(double v) {
  return formatDouble(v, 4);
}
std::string ms(double v) {
  return std::isfinite(v) ? formatFixed(1000 * v, 0) : "-";
}
std::string usd(double v) {
  return formatFixed(v, 2);
}

void applyKinds(PlanArgs& a) {
  if (!a.kinds.empty()) {
    a.opt.homogeneous = a.opt.mixed = a.opt.disaggregated = false;
    for (const std::string& k : a.kinds) {
      if (k == "homogeneous")
        a.opt.homogeneous = true;
      else if (k == "mixed")
        a.opt.mixed = true;
      else if (k == "disaggregated")
        a.opt.disaggregated = true;
      else {
        std::string msg = "--kinds: unknown kind '" + k + "' (homogeneous, mixed, disaggregated)";
        if (auto s = didYouMean(k, {"homogeneous", "mixed", "disaggregated"})) msg += "; did you mean '" + *s + "'?";
        throw InputError(msg);
      }
    }
  }
  if (a.disaggregated) a.opt.disaggregated = true;
  a.opt.prune = !a.noPrune;
}

// "[#####.....] 12/36 runs" on stderr when it is a terminal.
class RunProgress {
 public:
  explicit RunProgress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  ~RunProgress() { done(); }
  void update(std::size_t done, std::size_t total) {
    if (!enabled_ || total == 0) return;
    const int filled = static_cast<int>(30.0 * static_cast<double>(done) / static_cast<double>(total));
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(30, '.');
    std::fprintf(stderr, "\r[%s] %zu/%zu runs   ", bar.c_str(), done, total);
    drawn_ = true;
  }
  void done() {
    if (drawn_) std::fprintf(stderr, "\r%*s\r", 60, "");
    drawn_ = false;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
};

void printRow(const plan::PlanResult& r, std::size_t i, std::size_t depWidth) {
  const plan::Candidate& c = r.candidates[i];
  const plan::Outcome& o = r.outcomes[i];
  std::printf("%5zu  %-*s %-14s %4d %9s %7s %9s %9s %9s %9s %10s\n", i, static_cast<int>(depWidth),
              c.deployment().c_str(), c.policy.c_str(), c.gpus, usd(c.usdPerHour).c_str(),
              formatFixed(100 * o.attainment, 1).c_str(), ms(o.ttftP50).c_str(), ms(o.ttftP99).c_str(),
              ms(o.tpotP99).c_str(), o.usdPerMillionTokens ? usd(*o.usdPerMillionTokens).c_str() : "-",
              o.goodputPerUsd ? formatFixed(*o.goodputPerUsd, 0).c_str() : "-");
}

void printHeader(std::size_t depWidth) {
  std::printf("%5s  %-*s %-14s %4s %9s %7s %9s %9s %9s %9s %10s\n", "#", static_cast<int>(depWidth), "deployment",
              "policy", "GPUs", "$/hour", "att. %", "TTFT p50", "TTFT p99", "TPOT p99", "$/Mtok", "good/$");
  std::printf("%5s  %-*s %-14s %4s %9s %7s %9s %9s %9s %9s %10s\n", "", static_cast<int>(depWidth), "", "", "", "", "",
              "ms", "ms", "ms", "", "req/$");
}

void printExplanation(const plan::Explanation& x) {
  for (const std::string& l : x.lines) std::printf("  %s\n", l.c_str());
}

#ifdef SERVELAB_HAVE_UI
std::vector<char> paretoPng(const plan::PlanResult& r) {
  std::string csv = "usd_per_hour,attainment,set\n";
  std::vector<bool> front(r.candidates.size(), false);
  for (std::size_t i : r.pareto) front[i] = true;
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.outcomes[i].status == plan::Status::Simulated && !front[i])
      csv +=
          formatFixed(r.candidates[i].usdPerHour, 4) + "," + formatDouble(r.outcomes[i].attainment, 6) + ",candidate\n";
  for (std::size_t i : r.pareto)
    csv += formatFixed(r.candidates[i].usdPerHour, 4) + "," + formatDouble(r.outcomes[i].attainment, 6) +
           ",pareto front\n";
  exp::PlotSpec p;
  p.x = "usd_per_hour";
  p.ys = {"attainment"};
  p.series = {"set"};
  p.scatter = true;
  p.yRange = std::make_pair(0.0, 1.0);
  p.xLabel = "cost ($/hour)";
  p.yLabel = "SLO attainment";
  const auto app = ui::makeHeadlessApp();
  const QByteArray png = ui::csvChart(csv, "pareto.csv", QString::fromStdString("plan: cost vs SLO attainment"), p)
                             ->renderPng(QSize(960, 600), 1.0);
  return std::vector<char>(png.begin(), png.end());
}
#endif

// Prints the search's answer and writes its files to `out` (plan and
// plan-merge alike).
// `how`: what the wall time covers ("on 2 threads").
int report(const plan::PlanResult& r, const plan::PlanOptions& opt, const std::string& out, bool explain,
           const std::string& how) {
  const plan::Demand& d = r.demand;
  std::printf("plan: %s, %s req/s", r.base.model.c_str(), g(opt.rate).c_str());
  if (d.traceTimeScale)
    std::printf(" (trace at time_scale %s; its own rate %s req/s)", formatDouble(*d.traceTimeScale, 6).c_str(),
                g(d.traceNativeRate).c_str());
  std::printf(", SLO");
  if (r.base.slo.ttft_s) std::printf(" TTFT <= %s ms", ms(*r.base.slo.ttft_s).c_str());
  if (r.base.slo.tpot_s) std::printf(" TPOT <= %s ms", ms(*r.base.slo.tpot_s).c_str());
  if (!r.base.slo.ttft_s && !r.base.slo.tpot_s) std::printf(" (none set: QoE only)");
  std::printf(", target %s %%\n", formatFixed(100 * opt.target, 1).c_str());
  std::printf("demand: %lld requests over %s s; prompts %s tok/s (mean %s), outputs %s tok/s (mean %s)\n",
              static_cast<long long>(d.requests), g(d.spanS).c_str(), formatFixed(d.prefillTokensPerS, 0).c_str(),
              formatFixed(d.meanInput, 0).c_str(), formatFixed(d.decodeTokensPerS, 0).c_str(),
              formatFixed(d.meanOutput, 0).c_str());
  std::size_t roofline = 0, costBound = 0, overBudget = 0;
  for (const plan::Outcome& o : r.outcomes) {
    roofline += o.status == plan::Status::Pruned;
    costBound += o.status == plan::Status::CostBound;
    overBudget += o.status == plan::Status::OverBudget;
  }
  std::string pruned = "roofline " + std::to_string(roofline) + ", cost bound " + std::to_string(costBound);
  if (opt.budget) pruned += ", over budget " + std::to_string(overBudget);
  std::printf("candidates: %zu (unfit %zu, pruned %zu: %s; simulated %zu, meeting the target %zu); wall %s s %s\n",
              r.candidates.size(), r.unfit, r.pruned, pruned.c_str(), r.simulated, r.met,
              formatFixed(r.wallS, 1).c_str(), how.c_str());
  std::size_t w = 10;
  for (std::size_t i : r.pareto) w = std::max(w, r.candidates[i].deployment().size());
  for (std::size_t i : r.closestMisses) w = std::max(w, r.candidates[i].deployment().size());
  if (r.winner) w = std::max(w, r.candidates[*r.winner].deployment().size());
  std::printf("\nPareto front (cost $/hour vs SLO attainment):\n");
  printHeader(w);
  for (std::size_t i : r.pareto) printRow(r, i, w);
  const bool met = r.winner && r.outcomes[*r.winner].meets;
  if (opt.budget) {
    if (r.winner) {
      std::printf("\nwinner (most goodput per dollar within $%s/hour)%s:\n", usd(*opt.budget).c_str(),
                  met ? "" : " (below the attainment target)");
      printHeader(w);
      printRow(r, *r.winner, w);
    } else {
      std::printf("\nno deployment simulated within the budget of $%s/hour\n", usd(*opt.budget).c_str());
    }
  } else if (r.winner) {
    std::printf("\nwinner (cheapest meeting the target):\n");
    printHeader(w);
    printRow(r, *r.winner, w);
  } else {
    std::printf("\nno feasible deployment: none of the %zu simulated reaches %s %% SLO attainment\n", r.simulated,
                formatFixed(100 * opt.target, 1).c_str());
  }
  if (!r.closestMisses.empty()) {
    std::printf("closest misses (highest attainment):\n");
    printHeader(w);
    for (std::size_t i : r.closestMisses) printRow(r, i, w);
  }
  if (explain && r.winner) {
    const plan::Candidate& c = r.candidates[*r.winner];
    std::printf("\nexplain (candidate %zu):\n", *r.winner);
    printExplanation(plan::explain(plan::candidateScenario(r.base, c), c.deployment()));
    // What one instance fewer (of the winner's last pool) runs into: the
    // constraint that made the winner the cheapest of its shape.
    for (std::size_t i = 0; i < r.candidates.size(); ++i) {
      const plan::Candidate& f = r.candidates[i];
      if (f.kind != c.kind || f.policy != c.policy || f.pools.size() != c.pools.size()) continue;
      bool fewer = true;
      for (std::size_t p = 0; p < c.pools.size(); ++p) {
        const int want = c.pools[p].instances - (p + 1 == c.pools.size() ? 1 : 0);
        fewer = fewer && f.pools[p].gpu == c.pools[p].gpu && f.pools[p].tp == c.pools[p].tp &&
                f.pools[p].role == c.pools[p].role && f.pools[p].instances == want;
      }
      if (!fewer) continue;
      std::printf("\none instance fewer (candidate %zu, %s):\n", i, plan::statusName(r.outcomes[i].status));
      if (r.outcomes[i].status == plan::Status::Pruned)
        std::printf("  %s\n", r.outcomes[i].reason.c_str());
      else
        printExplanation(plan::explain(plan::candidateScenario(r.base, f), f.deployment()));
      break;
    }
  }

  if (!out.empty()) {
    // Everything is built first, then committed as one group: a failure
    // leaves no half-written folder.
    std::vector<std::pair<std::string, std::string>> files = {{"candidates.csv", plan::candidatesCsv(r)},
                                                              {"pareto.csv", plan::paretoCsv(r)},
                                                              {"plan.json", plan::planJson(r, opt).dump(2) + "\n"}};
#ifdef SERVELAB_HAVE_UI
    std::string png;
    try {
      const std::vector<char> bytes = paretoPng(r);
      png.assign(bytes.begin(), bytes.end());
    } catch (const InputError& e) {
      std::fprintf(stderr, "servelab-cli: note: no pareto.png: %s\n", e.what());
    }
    if (!png.empty()) files.emplace_back("pareto.png", png);
#endif
    ensureDirectory(out);
    std::vector<AtomicFileWriter> writers;
    writers.reserve(files.size());
    for (const auto& [name, text] : files) {
      writers.emplace_back(out + "/" + name);
      writers.back().stream() << text;
    }
    std::vector<AtomicFileWriter*> ptrs;
    for (auto& wr : writers) ptrs.push_back(&wr);
    commitAll(ptrs);
    std::string names;
    for (const auto& f : files) names += (names.empty() ? "" : ", ") + f.first;
    std::printf("\nwrote %s/{%s}\n", out.c_str(), names.c_str());
  }
  return 0;
}

// The Pareto chart is drawn by the Qt twin (charts_helper.h): with --out it
// runs the whole call. If it cannot start, the CSVs are still written.
void execChartsTwin([[maybe_unused]] const std::string& out) {
#if !defined(SERVELAB_HAVE_UI) && defined(SERVELAB_CHARTS_HELPER)
  if (!out.empty()) std::fprintf(stderr, "servelab-cli: note: no pareto.png: %s\n", execChartsHelper().c_str());
#endif
}

// `plan ... --shard K/N --out DIR`: this shard's runs, recorded in
// DIR/plan-shard-K-of-N.json (written last, atomically) for plan-merge.
int runShard(PlanArgs& a, const Scenario& s) {
  const sweep::Shard sh = sweep::parseShard(a.shard);
  InterruptScope interrupt;
  RunProgress bar(!a.quiet);
  plan::PlanShardReport rep;
  const nlohmann::ordered_json rec = plan::runPlanShard(
      s, a.opt, sh.index, sh.count, [&](std::size_t done, std::size_t total) { bar.update(done, total); },
      &interruptFlag(), &rep);
  bar.done();
  ensureDirectory(a.out);
  const std::string path = a.out + "/" + plan::planShardFileName(sh.index, sh.count);
  writeFileAtomic(path, rec.dump(1) + "\n");
  std::printf(
      "plan shard %d/%d: %zu of the plan's %zu candidates to simulate (%zu over this shard's cost bound), "
      "simulated %zu; wall %s s\nwrote %s (merge the shards with servelab-cli plan-merge)\n",
      sh.index, sh.count, rep.share, rep.candidates, rep.costBound, rep.simulated, formatFixed(rep.wallS, 1).c_str(),
      path.c_str());
  return 0;
}

// `plan-merge DIR... --out DIR`: the shards' records into the plan's files.
int runPlanMerge(const std::vector<std::string>& dirs, const std::string& out) {
  namespace fs = std::filesystem;
  execChartsTwin(out);
  static const std::regex re("plan-shard-([0-9]+)-of-([0-9]+)\\.json");
  std::vector<std::pair<std::string, nlohmann::json>> shards;
  std::set<std::string> seen;
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) throw InputError(d + ": not a folder (give the --out folders of plan --shard K/N)");
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    std::size_t found = 0;
    for (const std::string& name : names) {
      if (!std::regex_match(name, re)) continue;
      ++found;
      const std::string path = d + "/" + name;
      const std::string canon = fs::weakly_canonical(path, ec).string();
      if (!seen.insert(canon.empty() ? path : canon).second) continue;  // the same folder given twice
      std::ifstream in(path, std::ios::binary);
      nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
      if (j.is_discarded()) throw InputError(path + ": not valid JSON (a plan shard record)");
      shards.emplace_back(path, std::move(j));
    }
    if (found == 0)
      throw InputError(d +
                       ": no plan shard (plan-shard-K-of-N.json) in it; run servelab-cli plan SCENARIO.json ... "
                       "--shard K/N --out " +
                       d + " first");
  }
  plan::PlanOptions opt;
  const plan::PlanResult r = plan::mergePlanShards(shards, &opt);
  return report(r, opt, out, false, "(the longest of " + std::to_string(shards.size()) + " shards + the merge)");
}

int runPlanCmd(PlanArgs& a) {
  applyKinds(a);
  plan::validatePlanOptions(a.opt);
  if (a.candidate && !a.explain) throw InputError("--candidate: only with --explain");
  if (!a.shard.empty()) {
    (void)sweep::parseShard(a.shard);
    if (a.out.empty()) throw InputError("--shard: give --out DIR (the shard writes its record there)");
    if (a.explain) throw InputError("--shard: not with --explain (explain the merged plan's winner)");
  }
  const Scenario s = loadWithOverrides(a.scenario, nullptr, "plan");

  // --explain --candidate N: that candidate of the (deterministic) candidate
  // list, without the search.
  if (a.explain && a.candidate) {
    plan::Demand d;
    const Scenario base = plan::scenarioAtRate(s, a.opt, &d);
    const auto cands = plan::enumerateCandidates(base, a.opt);
    if (*a.candidate < 0 || *a.candidate >= static_cast<long long>(cands.size()))
      throw InputError("--candidate: " + std::to_string(*a.candidate) + " is not a candidate index (0 .. " +
                       std::to_string(cands.size()) + " - 1; candidates.csv lists them)");
    const plan::Candidate& c = cands[static_cast<std::size_t>(*a.candidate)];
    std::printf("plan --explain: candidate %lld at %s req/s\n", *a.candidate, g(a.opt.rate).c_str());
    printExplanation(plan::explain(plan::candidateScenario(base, c), c.deployment()));
    return 0;
  }

  if (!a.shard.empty()) return runShard(a, s);
  execChartsTwin(a.out);
  InterruptScope interrupt;
  RunProgress bar(!a.quiet);
  if (!a.quiet) std::fprintf(stderr, "plan: searching on %d threads...\n", sweep::resolveJobs(a.opt.jobs));
  const plan::PlanResult r = plan::runPlan(
      s, a.opt, [&](std::size_t done, std::size_t total) { bar.update(done, total); }, &interruptFlag());
  bar.done();
  const int threads = std::min(sweep::resolveJobs(a.opt.jobs), static_cast<int>(std::max<std::size_t>(1, r.simulated)));
  return report(r, a.opt, a.out, a.explain, "on " + std::to_string(threads) + " threads");
}

}  // namespace

std::function<int()> addPlanCommand(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  auto* c = app.add_subcommand(
      "plan", "Deployment search: the cheapest GPUs x TP x count (x mixed / disaggregated) meeting an SLO at a rate");
  c->add_option("scenario", a->scenario.path, "Scenario JSON: model, workload, SLO, run length")->required();
  c->add_option("--set", a->scenario.sets, "Override a scenario field by JSON path, e.g. --set run.seed=2");
  c->add_option("--seed", a->scenario.seed, "Override run.seed");
  c->add_option("--rate", a->opt.rate, "Arrival rate to serve, req/s (a trace is time-scaled to it)")->required();
  c->add_option("--slo-ttft", a->opt.sloTtftS, "TTFT SLO, seconds (default: the scenario's slo.ttft_s)");
  c->add_option("--slo-tpot", a->opt.sloTpotS, "TPOT SLO, seconds (default: the scenario's slo.tpot_s)");
  c->add_option("--target", a->opt.target, "SLO attainment to reach, in (0, 1]")->capture_default_str();
  c->add_option("--gpus", a->opt.gpus, "GPU presets to consider (default: every GPU with a list price)")
      ->delimiter(',');
  c->add_option("--max-gpus", a->opt.maxGpus, "GPUs per deployment, at most")->capture_default_str();
  c->add_option("--tp", a->opt.tps, "Tensor-parallel degrees, powers of two")->delimiter(',')->capture_default_str();
  c->add_option("--kinds", a->kinds, "Candidate kinds: homogeneous, mixed, disaggregated (default: homogeneous,mixed)")
      ->delimiter(',');
  c->add_flag("--disaggregated", a->disaggregated,
              "Also search prefill pool + decode pool deployments (policy static-pd)");
  c->add_option("--policies", a->opt.policies, "Policies for colocated candidates (default: the scenario's)")
      ->delimiter(',');
  c->add_option("--budget", a->opt.budget, "USD per hour: the most goodput per dollar within it instead");
  c->add_flag("--no-prune", a->noPrune, "Simulate every candidate that fits (no roofline or cost pruning)");
  c->add_option("--jobs,-j", a->opt.jobs, "Worker threads (default: all cores)");
  c->add_option("--out", a->out, "Write candidates.csv, pareto.csv, plan.json (and pareto.png) here");
  c->add_flag("--explain", a->explain,
              "Explain the winner: where its time goes, which constraint binds (with --candidate N: that "
              "candidate of candidates.csv, without the search)");
  c->add_option("--candidate", a->candidate, "With --explain: the candidate index to explain");
  c->add_option("--shard", a->shard,
                "Simulate only shard K/N of the candidates (i % N == K) into --out DIR/plan-shard-K-of-N.json; "
                "servelab-cli plan-merge combines them");
  c->add_flag("--quiet", a->quiet, "No progress on stderr");
  return [a]() { return runPlanCmd(*a); };
}

std::function<int()> addPlanMergeCommand(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto* c = app.add_subcommand("plan-merge",
                               "Merge the shards of one plan (plan --shard K/N --out DIR) into the plan's outputs");
  c->add_option("dirs", *dirs, "Folders holding plan-shard-K-of-N.json files")->required();
  c->add_option("--out", *out, "Write candidates.csv, pareto.csv, plan.json (and pareto.png) here");
  return [dirs, out]() { return runPlanMerge(*dirs, *out); };
}

}  // namespace sl::cli
