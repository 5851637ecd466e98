#pragma once
// `servelab-cli reproduce hw-validation` (docs/validation.md): ServeLab's
// predictions with its default cost model against public end-to-end
// measurements on real GPUs. The measurements are data in
// resources/validation/ (embedded at build time); they are compared with,
// never fitted to.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/experiment.h"
#include "scenario/spec.h"

namespace sl::exp {

/// The embedded text of resources/validation/<name>; nullptr when absent.
const char* embeddedValidationCsv(const std::string& name);

/// Mean, sample standard deviation and range of a measurement's repeats (ms).
struct Measured {
  double mean = 0, sd = 0, min = 0, max = 0;
};

/// One measured configuration: `batch` requests sent together, each with
/// `prompt` input tokens and asked for `tokens` output tokens, on one
/// instance of `tp` GPUs.
struct MeasuredRow {
  int tp = 1;
  int prompt = 1;
  int batch = 1;
  int tokens = 1;
  int repeats = 0;
  Measured ttft;  ///< the batch's prompt phase (first token of every request)
  Measured tpot;  ///< mean time between two output tokens
  Measured e2e;   ///< first prompt in to last token out
};

/// A group of measurements from one source, run on one GPU / model preset.
struct ValidationGroup {
  std::string id;      ///< e.g. "splitwise-h100-llama2-70b"
  std::string file;    ///< resources/validation/<file>
  std::string gpu;     ///< ServeLab GPU preset
  std::string model;   ///< ServeLab model preset
  std::string engine;  ///< the engine generation the rows reflect
  std::vector<MeasuredRow> rows;
};

/// Parses an aggregated measurement CSV (the columns of
/// resources/validation/README.md). InputError naming `name`, the line and
/// the column on a missing column, a non-number or a non-positive value.
std::vector<MeasuredRow> parseMeasuredCsv(const std::string& csv, const std::string& name);

/// The built-in groups, from the embedded CSVs.
const std::vector<ValidationGroup>& validationGroups();

/// The scenario that matches a row: one instance of `gpu` × row.tp running
/// `model`, `batch` requests of exactly `prompt` input and `tokens` answer
/// tokens (no reasoning), no chunked prefill, a token budget and a sequence
/// cap that admit the whole batch in one prefill iteration. The cost model
/// is ServeLab's default; `costOverrides` (cluster.cost keys, e.g.
/// {"t_step_us": 20000}) changes only what it names.
Scenario validationScenario(const MeasuredRow& row, const std::string& gpu, const std::string& model,
                            const nlohmann::json& costOverrides = nlohmann::json::object());

/// What ServeLab predicts for a row (ms, means over the batch's requests).
struct Prediction {
  double ttft_ms = 0, tpot_ms = 0, e2e_ms = 0;
  /// Every request got its first token from the same (first) iteration and
  /// none was preempted: the batch ran as the measurement's did.
  bool onePrefill = false;
};

/// Runs validationScenario(row, ...) in memory with every request arriving
/// at t = 0 with its exact lengths (the workload is that list; the model's
/// context window does not clip it, as the measured engine did not).
Prediction predictRow(const MeasuredRow& row, const std::string& gpu, const std::string& model,
                      const nlohmann::json& costOverrides = nlohmann::json::object(),
                      const std::string& label = "validation row");

/// 100 · (predicted − measured) / measured.
double signedErrorPct(double predicted, double measured);

/// Median and mean of |error| and the median signed error, in %.
struct ErrorSummary {
  int n = 0;
  double medianAbsPct = 0, meanAbsPct = 0, medianSignedPct = 0, maxAbsPct = 0;
};
/// NaN fields when `signedPct` is empty.
ErrorSummary summarizeErrors(const std::vector<double>& signedPct);

/// Which metrics of a row are comparable with a ServeLab run (docs/validation.md
/// "Lines left out of a metric"); `reason` says why one is not.
struct RowUse {
  bool ttft = true, tpot = true, e2e = true;
  std::string reason;
};
/// Rules on the measured numbers alone:
///  - not one batch: a smaller batch of the same TP, prompt and output size
///    has a longer prompt phase, so the engine did not prefill this batch
///    at once (nothing of the row is compared);
///  - short output: the run's implied output, 1 + (e2e − TTFT) / TPOT,
///    is below 99 % of `tokens`, so the run stopped early and its e2e is
///    not that of the asked configuration (TTFT and TPOT are still
///    compared). A longer e2e than implied is per-request work after the
///    last token, not a different configuration.
RowUse rowUse(const MeasuredRow& row, const std::vector<MeasuredRow>& all);

void addValidationExperiments(std::vector<Experiment>& out);

}  // namespace sl::exp
