#include "cli/cmd_calibrate.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cost/calibration.h"
#include "cost/presets.h"
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
  bool json = false;
};

std::string fixed(double v, int decimals) {
  return formatFixed(v, decimals);
}

int runCalibrate(const CalibrateArgs& a) {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const GpuSpec& gpu = reg.gpu(a.gpu);
  const ModelSpec& model = reg.model(a.model);
  const std::vector<Measurement> rows = readMeasurementsCsv(a.measurements);
  CalibrationReport rep;
  CalibrationOptions opt;
  opt.allreduce = parseAllReduceMode(a.allreduce, "--allreduce");
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
                "decode_context_cv,seconds")
      ->required();
  c->add_option("--gpu", args->gpu, "GPU preset id the measurements come from")->required();
  c->add_option("--model", args->model, "Model preset id the measurements come from")->required();
  c->add_option("--out", args->out, "Write the cost profile JSON here (atomically)");
  c->add_option("--allreduce", args->allreduce,
                 "All-reduce model of the measured engine: vllm | nccl (measured, not fitted) | ring (fits alpha_hop_us)")
      ->capture_default_str();
  c->add_flag("--json", args->json, "Print the coefficients and fit statistics as JSON");
  return [args]() -> int { return runCalibrate(*args); };
}

}  // namespace sl::cli
