// servelab-cli: everything the GUI does, headless (60-cli-formats.md).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/charts_helper.h"
#include "cli/cmd_calibrate.h"
#include "cli/cmd_plan.h"
#include "cli/cmd_plot.h"
#include "cli/cmd_reproduce.h"
#include "cli/cmd_sweep.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "run/execute.h"
#include "util/error.h"

namespace {

void addScenarioOptions(CLI::App* c, sl::cli::ScenarioArgs& s) {
  c->add_option("scenario", s.path,
                "Scenario JSON file, or a run saved by the GUI (File > Save run as...: the scenario plus its "
                "live changes, which `run` replays at their simulated moments)")
      ->required();
  c->add_option("--set", s.sets, "Override a field by JSON path, e.g. --set workload.arrival.rate=12");
  c->add_option("--seed", s.seed, "Override run.seed");
}

void addRunOptions(CLI::App* c, sl::cli::RunArgs& a) {
  addScenarioOptions(c, a.scenario);
  c->add_option("--out", a.out, "Write summary.json, requests.csv, timeseries.csv, trace.json here");
  c->add_option("--outputs", a.outputs,
                "With --out: which files to write, comma-separated: summary (summary.json, tail_ttft.csv, "
                "decisions.csv), requests (requests.csv), timeseries (timeseries.csv, policy_series.csv), trace "
                "(trace.json); default: all");
  c->add_flag("--json", a.json, "Print the summary as JSON on stdout");
  c->add_flag("--quiet", a.quiet, "No progress bar and no table on stdout (errors, warnings and --json only)");
  c->add_flag("--record-wall-time", a.recordWallTime,
              "Store wall_s in summary.json (outputs are then no longer byte-identical between runs)");
  c->add_flag("--lenient", a.lenient,
              "Trace workloads: skip malformed rows (counted in summary.json's \"trace\") instead of failing");
}

}  // namespace

int main(int argc, char** argv) {
  sl::cli::rememberArgs(argc, argv);
  CLI::App app{"ServeLab: a what-if lab for LLM serving schedulers (headless CLI)", "servelab-cli"};
  app.set_version_flag("--version", std::string("servelab-cli ") + sl::kServeLabVersion);
  app.require_subcommand(1);

  sl::cli::RunArgs runArgs;
  auto* run = app.add_subcommand("run", "Run one scenario and print its summary");
  addRunOptions(run, runArgs);

  sl::cli::RunArgs cmpArgs;
  std::vector<std::string> policies;
  auto* cmp = app.add_subcommand("compare", "Run several policies on the same seeded workload");
  addRunOptions(cmp, cmpArgs);
  cmp->add_option("--policies", policies, "Comma-separated policy ids, e.g. fcfs,rr")->delimiter(',')->required();

  sl::cli::ScenarioArgs valArgs;
  bool canonical = false;
  auto* val = app.add_subcommand("validate", "Check a scenario (fields, presets, knobs, memory) without running it");
  addScenarioOptions(val, valArgs);
  val->add_flag("--canonical", canonical, "Print the scenario in canonical form (every field)");

  std::string presetKind;
  bool presetJson = false;
  auto* pre = app.add_subcommand(
      "presets", "List GPUs, models, policies, workloads, routers, fabrics, engines, acceptance presets");
  pre->add_option("kind", presetKind,
                  "gpus | models | policies | workloads | routers | fabrics | engines | acceptance");
  pre->add_flag("--json", presetJson, "JSON output");

  sl::cli::CostArgs costArgs;
  auto* cost = app.add_subcommand("cost", "Predicted iteration time of one batch, with its breakdown");
  cost->add_option("--gpu", costArgs.gpu, "GPU preset id")->capture_default_str();
  cost->add_option("--model", costArgs.model, "Model preset id")->capture_default_str();
  cost->add_option("--tp", costArgs.tp, "Tensor-parallel degree")->capture_default_str();
  cost->add_option("--model-dtype", costArgs.modelDtype, "Weights: bf16 | fp16 | fp8")->capture_default_str();
  cost->add_option("--kv-dtype", costArgs.kvDtype, "KV cache: bf16 | fp16 | fp8")->capture_default_str();
  cost->add_option("--expert-dtype", costArgs.expertDtype,
                   "MoE routed experts: bf16 | fp16 | fp8 | mxfp4 (default: --model-dtype)");
  cost->add_option("--prefill", costArgs.prefill, "TOKENS[xBATCH], e.g. 512x8");
  cost->add_option("--decode", costArgs.decode,
                   "SEQS@CONTEXT[,SEQS@CONTEXT...], e.g. 32@1024 or 511@751,1@128000 (a mixed batch)");
  cost->add_option("--hetero", costArgs.hetero, "Decode heterogeneity rule: kernel (default) | cv");
  cost->add_option("--profile", costArgs.profile, "Calibrated cost profile JSON");
  cost->add_option("--engine", costArgs.engine,
                   "Engine-generation preset (resources/engines/): its coefficients and async scheduling");
  cost->add_option("--gpu-memory-utilization", costArgs.gpuMemoryUtilization)->capture_default_str();
  cost->add_option("--kv-capacity-fraction", costArgs.kvCapacityFraction)->capture_default_str();
  cost->add_option("--block-size", costArgs.blockSize)->capture_default_str();
  cost->add_option("--allreduce", costArgs.allreduce, "Tensor-parallel all-reduce model: vllm | nccl | ring")
      ->capture_default_str();
  cost->add_option("--ep", costArgs.ep, "MoE: expert-parallel ranks over the tp GPUs")->capture_default_str();
  cost->add_flag("--attention-dp", costArgs.attentionDp, "MoE: attention data parallel (needs --ep = --tp)");
  cost->add_option("--ep-redundant", costArgs.epRedundant, "MoE: redundant expert replicas (EPLB)")
      ->capture_default_str();
  cost->add_option("--ep-placement", costArgs.epPlacement, "MoE: contiguous | eplb (default: eplb with replicas)");
  cost->add_option("--routing", costArgs.routing, "MoE routing: balanced | zipf:SKEW | file:PATH")
      ->capture_default_str();
  cost->add_option("--gpus-per-node", costArgs.gpusPerNode, "MoE all-to-all: GPUs per node")->capture_default_str();
  cost->add_option("--nic-gbps", costArgs.nicGbps, "MoE all-to-all: NIC Gb/s per node")->capture_default_str();
  cost->add_option("--spec", costArgs.spec,
                   "Speculative decoding: METHOD[:K], METHOD draft | eagle | mtp | ngram (e.g. eagle:3)");
  cost->add_option("--draft-model", costArgs.draftModel,
                   "Speculative decoding: the draft model's preset (method draft)");
  cost->add_option("--acceptance", costArgs.acceptance,
                   "Speculative decoding: acceptance per draft position in [0, 1] (one value repeats)")
      ->delimiter(',');
  cost->add_flag("--allreduce-fit", costArgs.allreduceFit,
                 "Print the all-reduce fits to the measured collectives (resources/collectives/) and their error");
  cost->add_flag("--json", costArgs.json, "JSON output");

  const auto calibrate = sl::cli::addCalibrateCommand(app);
  const auto reproduce = sl::cli::addReproduceCommand(app);
  const auto plot = sl::cli::addPlotCommand(app);
  const auto sweep = sl::cli::addSweepCommand(app);
  const auto merge = sl::cli::addMergeCommand(app);
  const auto capacity = sl::cli::addCapacityCommand(app);
  const auto plan = sl::cli::addPlanCommand(app);
  const auto planMerge = sl::cli::addPlanMergeCommand(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*run) return sl::cli::cmdRun(runArgs);
    if (*cmp) return sl::cli::cmdCompare(cmpArgs, policies);
    if (*val) return sl::cli::cmdValidate(valArgs, canonical);
    if (*pre) return sl::cli::cmdPresets(presetKind, presetJson);
    if (*cost) return sl::cli::cmdCost(costArgs);
    if (app.got_subcommand("calibrate")) return calibrate();
    if (app.got_subcommand("reproduce")) return reproduce();
    if (app.got_subcommand("plot")) return plot();
    if (app.got_subcommand("sweep")) return sweep();
    if (app.got_subcommand("merge")) return merge();
    if (app.got_subcommand("capacity")) return capacity();
    if (app.got_subcommand("plan")) return plan();
    if (app.got_subcommand("plan-merge")) return planMerge();
  } catch (const sl::InputError& e) {
    std::fprintf(stderr, "servelab-cli: error: %s\n", e.what());
    return 2;
  } catch (const sl::RunCancelled&) {
    // What the run had begun to write is gone (cli/interrupt.h).
    sl::cli::endByInterrupt("the run in progress wrote nothing");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "servelab-cli: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
