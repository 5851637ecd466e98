#include "cli/cmd_calibrate.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cost/calibration.h"
#include "cost/operator_fit.h"
#include "cost/presets.h"
#include "util/error.h"
#include "util/atomic_file.h"
#include "util/strings.h"

namespace sl::cli {
namespace {

struct CalibrateArgs {
  std::string measurements;
  std::string gpu;
  std::string model;
  std::string out;
  std::string allreduce = "vllm";
  std::string hetero;  // "" = the default rule; kernel: eta_kv under the kernel term; cv: also kappa
  bool json = false;
  std::string operators;  // per-operator profile CSV (--operators)
  std::string profile;    // base coefficients (--profile); defaults when empty
  bool fit = false;       // --fit: refit from the operator rows
  std::string fitGroups;  // --fit-groups: which groups' rows the refit uses ("" = all)
};

std::string fixed(double v, int decimals) {
  return formatFixed(v, decimals);
}

void printErrors(const char* title, const std::vector<OperatorGroupError>& errs) {
  std::printf("%s\n%-16s %6s %14s %12s %16s\n", title, "group", "rows", "median |err| %", "mean |err| %",
              "median signed %");
  for (const OperatorGroupError& e : errs)
    std::printf("%-16s %6lld %14s %12s %16s\n", e.name.c_str(), static_cast<long long>(e.rows),
                fixed(e.medianAbsPct, 1).c_str(), fixed(e.meanAbsPct, 1).c_str(), fixed(e.medianSignedPct, 1).c_str());
}

// `calibrate --operators FILE`: per-operator comparison (and refit with --fit).
int runOperators(const CalibrateArgs& a) {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const GpuSpec& gpu = reg.gpu(a.gpu.empty() ? "h100-sxm-80g" : a.gpu);
  if (!a.fitGroups.empty() && !a.fit) throw InputError("calibrate: --fit-groups goes with --fit");
  const std::vector<OperatorRow> rows = readOperatorCsv(a.operators);
  const CostCoefficients base = a.profile.empty() ? gpuCoefficients(gpu) : loadCostProfile(a.profile);
  const std::string baseName =
      !a.profile.empty() ? a.profile : gpu.coefficients.empty() ? "built-in defaults" : gpu.id + "'s preset";
  const std::vector<OperatorGroupError> before = compareOperators(gpu, base, rows);
  OperatorFitReport rep;
  std::vector<OperatorGroupError> after;
  if (a.fit) {
    const std::vector<OperatorGroup> groups =
        a.fitGroups.empty() ? std::vector<OperatorGroup>{} : parseOperatorGroups(a.fitGroups, "--fit-groups");
    rep = fitOperators(gpu, rows, base, groups);
    after = compareOperators(gpu, rep.coefficients, rows);
    if (!a.out.empty()) {
      CostProfile prof;
      prof.gpu = gpu.id;
      prof.coefficients = rep.coefficients;
      nlohmann::json doc = costProfileJson(prof);
      nlohmann::json fit = rep.toJson();
      fit["source"] = a.operators;
      doc["fit"] = fit;
      writeFileAtomic(a.out, doc.dump(2) + "\n");
    }
  }
  if (a.json) {
    nlohmann::json j = nlohmann::json::object();
    j["gpu"] = gpu.id;
    j["operators"] = a.operators;
    j["base"] = base.toJson();
    j["base_errors"] = operatorErrorsJson(before);
    if (a.fit) {
      j["coefficients"] = rep.coefficients.toJson();
      j["fit"] = rep.toJson();
      j["errors"] = operatorErrorsJson(after);
      j["out"] = a.out.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.out);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "Per-operator comparison on " << gpu.id << ": " << rows.size() << " rows (" << a.operators << ")\n";
  std::cout << "Prediction = ServeLab's term for the group, one layer, one GPU (docs/calibration.md)\n\n";
  printErrors(("With " + baseName + " (eta_c " + fixed(base.eta_c, 3) + ", eta_w " + fixed(base.eta_w, 3) +
               ", eta_a " + fixed(base.eta_a, 3) + ", eta_kv " + fixed(base.eta_kv, 3) + ", t_layer " +
               fixed(base.t_layer_us, 1) + " us):")
                  .c_str(),
              before);
  if (!a.fit) return 0;
  const CostCoefficients& c = rep.coefficients;
  std::cout << "\nRefit (relative NNLS, " << rep.iterations << " round" << (rep.iterations == 1 ? "" : "s")
            << (rep.converged ? "" : ", not converged") << "):\n";
  std::printf("  eta_c %s  eta_w %s  eta_a %s  eta_kv %s  t_layer_us %s\n", fixed(c.eta_c, 3).c_str(),
              fixed(c.eta_w, 3).c_str(), fixed(c.eta_a, 3).c_str(), fixed(c.eta_kv, 3).c_str(),
              fixed(c.t_layer_us, 2).c_str());
  std::printf("  fixed kernel time per layer (us): linear %s, layer_misc %s, decode_attn %s, prefill_attn %s\n",
              fixed(rep.linearFixedUs, 2).c_str(), fixed(rep.miscFixedUs, 2).c_str(),
              fixed(rep.decodeFixedUs, 2).c_str(), fixed(rep.prefillFixedUs, 2).c_str());
  std::cout << "\n";
  printErrors("Fitted per-layer model (term + the group's fixed time):", rep.fitErrors);
  std::cout << "\n";
  printErrors("Refitted coefficients, ServeLab's terms only (as the comparison above):", after);
  for (const std::string& n : rep.notes) std::cout << "note: " << n << "\n";
  if (!a.out.empty()) std::cout << "wrote " << a.out << "\n";
  return 0;
}

int runCalibrate(const CalibrateArgs& a) {
  if (!a.operators.empty()) {
    if (!a.measurements.empty())
      throw InputError("calibrate: give either MEASUREMENTS.csv or --operators FILE, not both");
    return runOperators(a);
  }
  if (a.measurements.empty()) throw InputError("calibrate: MEASUREMENTS.csv or --operators FILE is required");
  if (a.gpu.empty()) throw InputError("calibrate: --gpu is required with MEASUREMENTS.csv");
  if (a.model.empty()) throw InputError("calibrate: --model is required with MEASUREMENTS.csv");
  if (a.fit || !a.profile.empty() || !a.fitGroups.empty())
    throw InputError("calibrate: --fit, --fit-groups and --profile go with --operators");
  const PresetRegistry& reg = PresetRegistry::builtin();
  const GpuSpec& gpu = reg.gpu(a.gpu);
  const ModelSpec& model = reg.model(a.model);
  const std::vector<Measurement> rows = readMeasurementsCsv(a.measurements);
  CalibrationReport rep;
  CalibrationOptions opt;
  opt.allreduce = parseAllReduceMode(a.allreduce, "--allreduce");
  if (!a.hetero.empty()) opt.base.hetero = parseHeteroMode(a.hetero, "--hetero");
  const CostProfile profile = calibrateCostModel(gpu, model, rows, opt, &rep);

  // The profile file: what writeCostProfile writes, plus the fit statistics
  // (readCostProfile ignores keys other than gpu/model/coefficients).
  nlohmann::json doc = costProfileJson(profile);
  nlohmann::json fit = nlohmann::json::object();
  fit["source"] = a.measurements;
  fit["rows"] = rep.rows;
  fit["mape"] = rep.mape;
  fit["max_ape"] = rep.maxApe;
  doc["fit"] = fit;
  if (!a.out.empty()) writeFileAtomic(a.out, doc.dump(2) + "\n");

  if (a.json) {
    nlohmann::json j = costProfileJson(profile);
    j["fit"] = rep.toJson();
    j["out"] = a.out.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.out);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "Calibrated " << model.name << " on " << gpu.id << " from " << rep.rows << " measurements ("
            << a.measurements << ")\n\n";
  std::printf("%-14s %12s  %-14s %10s  %s\n", "coefficient", "value", "solved for", "mean share", "");
  for (const FittedTerm& t : rep.terms) {
    const int dec = t.key.rfind("eta_", 0) == 0 || t.key == "kappa" ? 4 : 3;
    std::printf("%-14s %12s  %-14s %9s%%  %s\n", t.key.c_str(), fixed(t.value, dec).c_str(), t.unknown.c_str(),
                fixed(t.meanShare * 100, 1).c_str(), t.identified ? "" : "(kept: not identified)");
  }
  std::printf("\nfixed overhead t_step + t_layer*layers = %s us\n", fixed(rep.fixedOverheadUs, 2).c_str());
  std::printf(
      "MAPE %s %% (worst row %s %%) over %lld rows; %lld compute-bound, %lld with h at h_max; %d "
      "assignment round%s%s\n",
      fixed(rep.mape * 100, 2).c_str(), fixed(rep.maxApe * 100, 2).c_str(), static_cast<long long>(rep.rows),
      static_cast<long long>(rep.computeBoundRows), static_cast<long long>(rep.cappedRows), rep.iterations,
      rep.iterations == 1 ? "" : "s", rep.converged ? "" : " (not converged)");
  for (const std::string& n : rep.notes) std::cout << "note: " << n << "\n";
  if (!a.out.empty()) std::cout << "wrote " << a.out << "\n";
  return 0;
}

}  // namespace

std::function<int()> addCalibrateCommand(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* c = app.add_subcommand("calibrate", "Fit cost-model coefficients to measured iteration times");
  c->add_option("measurements", args->measurements,
                "CSV: tp,prefill_tokens,prefill_seqs,cached_tokens,decode_seqs,decode_context_sum,"
                "decode_context_cv,seconds");
  c->add_option("--gpu", args->gpu,
                "GPU preset id the measurements come from (required with MEASUREMENTS.csv; "
                "--operators: default h100-sxm-80g)");
  c->add_option("--model", args->model, "Model preset id the measurements come from (with MEASUREMENTS.csv)");
  c->add_option("--operators", args->operators,
                "Per-operator profile CSV (resources/profiles/h100-operators.csv): compare ServeLab's "
                "terms with measured kernels, per operator group");
  c->add_option("--profile", args->profile, "With --operators: compare this cost profile instead of the defaults");
  c->add_flag("--fit", args->fit,
              "With --operators: refit eta_c, eta_w, eta_a, eta_kv and t_layer_us (relative NNLS); "
              "--out writes them as a cost profile");
  c->add_option("--fit-groups", args->fitGroups,
                "With --fit: the operator groups whose rows the refit uses, comma-separated "
                "(linear,prefill_attn,decode_attn,layer_misc; default all)");
  c->add_option("--out", args->out, "Write the cost profile JSON here (atomically)");
  c->add_option("--allreduce", args->allreduce,
                 "All-reduce model of the measured engine: vllm | nccl (measured, not fitted) | ring (fits alpha_hop_us)")
      ->capture_default_str();
  c->add_option("--hetero", args->hetero,
                 "Decode heterogeneity rule to fit under: kernel (kappa not fitted) | cv (fits kappa); "
                 "default: the built-in rule");
  c->add_flag("--json", args->json, "Print the coefficients and fit statistics as JSON");
  return [args]() -> int { return runCalibrate(*args); };
}

}  // namespace sl::cli
