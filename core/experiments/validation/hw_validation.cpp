// hw-validation: ServeLab's default cost model against measured batch runs
// (docs/validation.md). Each measured configuration becomes one scenario:
// one instance, `batch` identical requests arriving together at t = 0, no
// chunked prefill, a budget that admits the whole batch in one prefill. The
// prediction is read from the run's request records and compared per row
// and per metric. A second part varies only t_step_us (the per-iteration
// overhead) and reruns every row, to show how much of the error the
// measured engine's per-step overhead explains (a run, not a fit).
#include "experiments/validation/hw_validation.h"

#include "experiments/validation/modern_validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "cost/cost_model.h"
#include "cost/engine_presets.h"
#include "run/run.h"
#include "util/csv.h"
#include "util/error.h"
#include "workload/list_workload.h"

namespace sl::exp {

// ------------------------------------------------------------------ data

namespace {

double parseNumber(const std::string& cell, const std::string& where, bool zeroOk) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != cell.size() || !std::isfinite(v))
    throw InputError(where + ": expected a number, got '" + cell + "'");
  if (zeroOk ? !(v >= 0) : !(v > 0)) throw InputError(where + ": must be " + (zeroOk ? ">= 0" : "> 0") + " (got " + cell + ")");
  return v;
}

double parsePositive(const std::string& cell, const std::string& where) { return parseNumber(cell, where, false); }

int parseCount(const std::string& cell, const std::string& where) {
  const double v = parsePositive(cell, where);
  if (v != std::floor(v) || v > 1e9) throw InputError(where + ": expected a whole number, got '" + cell + "'");
  return static_cast<int>(v);
}

}  // namespace

std::vector<MeasuredRow> parseMeasuredCsv(const std::string& csv, const std::string& name) {
  std::istringstream in(csv);
  CsvReader reader(in, name);
  std::vector<std::string> header, f;
  if (!reader.next(header)) throw InputError(name + ": empty file (expected a header line)");
  auto col = [&](const std::string& c) {
    const auto it = std::find(header.begin(), header.end(), c);
    if (it == header.end()) throw InputError(name + ": missing column '" + c + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t tp = col("tensor_parallel"), prompt = col("prompt_size"), batch = col("batch_size"),
                    tokens = col("token_size"), repeats = col("repeats");
  struct MeasuredCols {
    Measured MeasuredRow::*field;
    std::size_t mean, sd, min, max;
  };
  std::vector<MeasuredCols> mcols;
  for (const auto& [stem, field] : {std::pair{"prompt_time", &MeasuredRow::ttft}, std::pair{"token_time", &MeasuredRow::tpot},
                                    std::pair{"e2e_time", &MeasuredRow::e2e}}) {
    const std::string s = stem;
    mcols.push_back({field, col(s + "_ms_mean"), col(s + "_ms_sd"), col(s + "_ms_min"), col(s + "_ms_max")});
  }
  std::vector<MeasuredRow> rows;
  while (reader.next(f)) {
    const std::string at = reader.where();
    if (f.size() != header.size())
      throw InputError(at + ": " + std::to_string(f.size()) + " fields, the header has " +
                       std::to_string(header.size()));
    auto cellAt = [&](std::size_t c) { return at + ": " + header[c]; };
    MeasuredRow r;
    r.tp = parseCount(f[tp], cellAt(tp));
    r.prompt = parseCount(f[prompt], cellAt(prompt));
    r.batch = parseCount(f[batch], cellAt(batch));
    r.tokens = parseCount(f[tokens], cellAt(tokens));
    r.repeats = parseCount(f[repeats], cellAt(repeats));
    for (const MeasuredCols& m : mcols) {
      Measured& x = r.*(m.field);
      x.mean = parsePositive(f[m.mean], cellAt(m.mean));
      x.sd = parseNumber(f[m.sd], cellAt(m.sd), true);  // 0 for a single repeat
      x.min = parsePositive(f[m.min], cellAt(m.min));
      x.max = parsePositive(f[m.max], cellAt(m.max));
      if (!(x.min <= x.mean && x.mean <= x.max))
        throw InputError(cellAt(m.mean) + ": the mean is outside [min, max]");
    }
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(name + ": no measurements");
  return rows;
}

const std::vector<ValidationGroup>& validationGroups() {
  static const std::vector<ValidationGroup> groups = [] {
    std::vector<ValidationGroup> g;
    ValidationGroup s;
    s.id = "splitwise-h100-llama2-70b";
    s.file = "splitwise_h100_llama2_70b.csv";
    s.gpu = "h100-sxm-80g";
    s.model = "llama-2-70b";
    s.engine = "a 2023 engine, version not published (likely vLLM; large per-step overhead)";
    const char* text = embeddedValidationCsv(s.file);
    if (!text) throw InputError("resources/validation/" + s.file + ": not embedded in this build");
    s.rows = parseMeasuredCsv(text, "resources/validation/" + s.file);
    g.push_back(std::move(s));
    return g;
  }();
  return groups;
}

// ------------------------------------------------------------- scenarios

Scenario validationScenario(const MeasuredRow& row, const std::string& gpu, const std::string& model,
                            const nlohmann::json& costOverrides) {
  Scenario s;
  s.model = model;
  s.cluster.instances = 1;
  s.cluster.gpu = gpu;
  s.cluster.tp = row.tp;
  s.cluster.chunked_prefill = false;
  const std::int64_t batchTokens = static_cast<std::int64_t>(row.batch) * row.prompt;
  s.cluster.max_num_batched_tokens =
      static_cast<int>(std::max<std::int64_t>(s.cluster.max_num_batched_tokens, batchTokens));
  s.cluster.max_num_seqs = std::max(s.cluster.max_num_seqs, row.batch);
  s.cluster.cost = costOverrides.is_null() ? nlohmann::json::object() : costOverrides;
  s.workload.requests = row.batch;
  s.workload.input_tokens = LengthDist{};
  s.workload.input_tokens.value = row.prompt;
  s.workload.reasoning_tokens = LengthDist{};
  s.workload.reasoning_tokens.value = 0;
  s.workload.answer_tokens = LengthDist{};
  s.workload.answer_tokens.value = row.tokens;
  return s;
}

Prediction predictRow(const MeasuredRow& row, const std::string& gpu, const std::string& model,
                      const nlohmann::json& costOverrides, const std::string& label) {
  const Scenario s = validationScenario(row, gpu, model, costOverrides);
  // The batch as the measurement sent it: all at t = 0, lengths exact.
  const WorkloadFactory batchAtZero = [](const WorkloadSpec& w, std::uint64_t, int, const std::string&,
                                         std::optional<double>) -> std::unique_ptr<WorkloadSource> {
    std::vector<RequestSpec> v(static_cast<std::size_t>(w.requests));
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i].id = static_cast<std::int64_t>(i);
      v[i].arrival = 0;
      v[i].input = static_cast<std::int32_t>(w.input_tokens.value);
      v[i].reasoning = static_cast<std::int32_t>(w.reasoning_tokens.value);
      v[i].answer = static_cast<std::int32_t>(w.answer_tokens.value);
    }
    return std::make_unique<ListWorkload>(std::move(v));
  };
  const RunOutcome out = runInMemory(s, label, nullptr, batchAtZero);
  Prediction p;
  double ttft = 0, tpot = 0, e2e = 0;
  int n = 0;
  bool one = !out.stalled;
  for (const RequestRecord& r : out.records) {
    if (!r.finished || !r.ttft() || !r.tpot() || !r.e2e()) {
      one = false;
      continue;
    }
    ttft += *r.ttft();
    tpot += *r.tpot();
    e2e += *r.e2e();
    ++n;
    if (r.preemptions > 0 || r.first_token != out.records.front().first_token) one = false;
  }
  if (n != row.batch) one = false;
  const double k = n > 0 ? 1000.0 / n : std::nan("");
  p.ttft_ms = ttft * k;
  p.tpot_ms = tpot * k;
  p.e2e_ms = e2e * k;
  p.onePrefill = one;
  return p;
}

// ------------------------------------------------------------ arithmetic

double signedErrorPct(double predicted, double measured) { return 100.0 * (predicted - measured) / measured; }

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

ErrorSummary summarizeErrors(const std::vector<double>& signedPct) {
  ErrorSummary s;
  s.n = static_cast<int>(signedPct.size());
  if (signedPct.empty()) {
    s.medianAbsPct = s.meanAbsPct = s.medianSignedPct = s.maxAbsPct = std::nan("");
    return s;
  }
  std::vector<double> abs;
  double sum = 0;
  for (double e : signedPct) {
    abs.push_back(std::fabs(e));
    sum += std::fabs(e);
  }
  s.medianAbsPct = median(abs);
  s.meanAbsPct = sum / static_cast<double>(abs.size());
  s.medianSignedPct = median(signedPct);
  s.maxAbsPct = *std::max_element(abs.begin(), abs.end());
  return s;
}

RowUse rowUse(const MeasuredRow& row, const std::vector<MeasuredRow>& all) {
  RowUse u;
  // The largest smaller batch whose prompt phase took longer, if any.
  const MeasuredRow* longer = nullptr;
  for (const MeasuredRow& o : all)
    if (o.tp == row.tp && o.prompt == row.prompt && o.tokens == row.tokens && o.batch < row.batch &&
        o.ttft.mean > row.ttft.mean && (!longer || o.batch > longer->batch))
      longer = &o;
  if (longer) {
    u.ttft = u.tpot = u.e2e = false;
    u.reason = "not one batch: batch " + std::to_string(longer->batch) + " has a longer prompt phase (" +
               num(longer->ttft.mean, 0) + " ms > " + num(row.ttft.mean, 0) + " ms)";
    return u;
  }
  const double implied = 1.0 + (row.e2e.mean - row.ttft.mean) / row.tpot.mean;
  if (implied < 0.99 * row.tokens) {
    u.e2e = false;
    u.reason = "short output: e2e implies " + num(implied, 0) + " of " + std::to_string(row.tokens) + " tokens";
  }
  return u;
}

// ------------------------------------------------------------ experiment

namespace {

enum Metric { kTtft, kTpot, kE2e };
const char* const kMetricName[] = {"ttft", "tpot", "e2e"};

struct RowResult {
  const MeasuredRow* row;
  RowUse use;
  Prediction pred;
};

double measuredOf(const MeasuredRow& r, int m) { return m == kTtft ? r.ttft.mean : m == kTpot ? r.tpot.mean : r.e2e.mean; }
double predictedOf(const Prediction& p, int m) { return m == kTtft ? p.ttft_ms : m == kTpot ? p.tpot_ms : p.e2e_ms; }
bool usedFor(const RowUse& u, int m) { return m == kTtft ? u.ttft : m == kTpot ? u.tpot : u.e2e; }

std::string rowLabel(const MeasuredRow& r) {
  return "tp " + std::to_string(r.tp) + ", prompt " + std::to_string(r.prompt) + ", batch " + std::to_string(r.batch) +
         ", " + std::to_string(r.tokens) + " tokens";
}

/// The rows of a group a run covers (--quick: TP 8 only).
std::vector<const MeasuredRow*> selectedRows(const ValidationGroup& g, const ExperimentOptions& o) {
  std::vector<const MeasuredRow*> v;
  for (const MeasuredRow& r : g.rows)
    if (!o.quick || r.tp == 8) v.push_back(&r);
  return v;
}

std::vector<RowResult> runRows(const ValidationGroup& g, const std::vector<const MeasuredRow*>& rows,
                               const nlohmann::json& cost, const ExperimentOptions& o, const std::string& what) {
  std::vector<RowResult> out;
  for (const MeasuredRow* r : rows) {
    const std::string label = what + rowLabel(*r);
    if (o.onRun) o.onRun(label);
    out.push_back({r, rowUse(*r, g.rows), predictRow(*r, g.gpu, g.model, cost, label)});
  }
  return out;
}

/// Per metric, over the compared rows of tensor parallelism `tp` (0: all).
std::array<ErrorSummary, 3> summarize(const std::vector<RowResult>& rs, int tp = 0) {
  std::array<ErrorSummary, 3> s;
  for (int m = 0; m < 3; ++m) {
    std::vector<double> e;
    for (const RowResult& r : rs)
      if (usedFor(r.use, m) && r.pred.onePrefill && (tp == 0 || r.row->tp == tp))
        e.push_back(signedErrorPct(predictedOf(r.pred, m), measuredOf(*r.row, m)));
    s[static_cast<std::size_t>(m)] = summarizeErrors(e);
  }
  return s;
}

/// Per-step overheads to rerun with (µs); the default is added in front.
const std::vector<double>& stepOverheadsUs(bool quick) {
  static const std::vector<double> full = {0, 2000, 5000, 10000, 15000, 20000, 25000, 30000};
  static const std::vector<double> small = {20000};
  return quick ? small : full;
}

ExperimentResult runHwValidation(const ExperimentOptions& o) {
  ExperimentResult res;
  res.table.columns = {"group", "tp", "prompt", "batch", "tokens", "ttft_meas_ms", "ttft_pred_ms", "ttft_err_pct",
                       "tpot_meas_ms", "tpot_pred_ms", "tpot_err_pct", "e2e_meas_ms", "e2e_pred_ms", "e2e_err_pct",
                       "compared", "note"};
  std::string chart =
      "group,metric,tp,prompt,batch,tokens,measured_ms,measured_min_ms,measured_max_ms,predicted_ms,error_pct,"
      "compared\n";
  const std::string errCols = "tp,metric,n,median_abs_err_pct,mean_abs_err_pct,median_signed_err_pct,max_abs_err_pct\n";
  std::string summaryCsv = "group," + errCols;
  std::string sweepCsv = "group,t_step_us,is_default," + errCols;
  for (const ValidationGroup& g : validationGroups()) {
    const std::vector<const MeasuredRow*> rows = selectedRows(g, o);
    // The coefficients the runs get with no override: whatever the cost
    // model's defaults are for this GPU and model when this is built.
    const CostCoefficients defaults = makeCostModel(validationScenario(*rows.front(), g.gpu, g.model))->coefficients();
    const std::vector<RowResult> base = runRows(g, rows, nlohmann::json::object(), o, g.id + ": ");
    for (const RowResult& r : base) {
      const MeasuredRow& m = *r.row;
      std::string compared;
      for (int k = 0; k < 3; ++k)
        if (usedFor(r.use, k) && r.pred.onePrefill) compared += (compared.empty() ? "" : "+") + std::string(kMetricName[k]);
      std::string note = r.use.reason;
      if (!r.pred.onePrefill) note += std::string(note.empty() ? "" : "; ") + "ServeLab did not run the batch in one prefill";
      res.table.addRow({g.id, std::to_string(m.tp), std::to_string(m.prompt), std::to_string(m.batch),
                        std::to_string(m.tokens), num(m.ttft.mean, 1), num(r.pred.ttft_ms, 1),
                        num(signedErrorPct(r.pred.ttft_ms, m.ttft.mean), 1), num(m.tpot.mean, 2),
                        num(r.pred.tpot_ms, 2), num(signedErrorPct(r.pred.tpot_ms, m.tpot.mean), 1),
                        num(m.e2e.mean, 0), num(r.pred.e2e_ms, 0), num(signedErrorPct(r.pred.e2e_ms, m.e2e.mean), 1),
                        compared.empty() ? "none" : compared, note});
      for (int k = 0; k < 3; ++k) {
        const Measured& x = k == kTtft ? m.ttft : k == kTpot ? m.tpot : m.e2e;
        chart += g.id + "," + kMetricName[k] + "," + std::to_string(m.tp) + "," + std::to_string(m.prompt) + "," +
                 std::to_string(m.batch) + "," + std::to_string(m.tokens) + "," + num(x.mean, 3) + "," + num(x.min, 3) +
                 "," + num(x.max, 3) + "," + num(predictedOf(r.pred, k), 3) + "," +
                 num(signedErrorPct(predictedOf(r.pred, k), x.mean), 2) + "," +
                 (usedFor(r.use, k) && r.pred.onePrefill ? "yes" : "no") + "\n";
      }
    }
    // Summary lines: all rows, then each tensor-parallel degree.
    std::vector<int> tps;  // 0 (all rows) first
    for (const MeasuredRow* r : rows)
      if (std::find(tps.begin(), tps.end(), r->tp) == tps.end()) tps.push_back(r->tp);
    tps.push_back(0);
    std::sort(tps.begin(), tps.end());
    auto summaryLines = [&](const std::string& prefix, const std::vector<RowResult>& rs) {
      std::string out;
      for (int tp : tps) {
        const auto x = summarize(rs, tp);
        for (int k = 0; k < 3; ++k) {
          const ErrorSummary& e = x[static_cast<std::size_t>(k)];
          out += prefix + (tp ? std::to_string(tp) : "all") + "," + kMetricName[k] + "," + std::to_string(e.n) + "," +
                 num(e.medianAbsPct, 2) + "," + num(e.meanAbsPct, 2) + "," + num(e.medianSignedPct, 2) + "," +
                 num(e.maxAbsPct, 2) + "\n";
        }
      }
      return out;
    };
    const auto s = summarize(base);
    summaryCsv += summaryLines(g.id + ",", base);
    res.notes.push_back(g.id + " (" + std::to_string(rows.size()) + " configurations; engine: " + g.engine +
                        "), default cost model (t_step_us " + num(defaults.t_step_us, 0) + "):");
    for (int k = 0; k < 3; ++k) {
      const ErrorSummary& e = s[static_cast<std::size_t>(k)];
      res.notes.push_back("  " + std::string(kMetricName[k]) + ": median |error| " + num(e.medianAbsPct, 1) +
                          " %, mean |error| " + num(e.meanAbsPct, 1) + " %, median signed " +
                          num(e.medianSignedPct, 1) + " % over " + std::to_string(e.n) + " rows");
    }
    // Only t_step_us varies; every other coefficient keeps its default.
    auto sweepLine = [&](double stepUs, bool isDefault, const std::vector<RowResult>& rs) {
      sweepCsv += summaryLines(g.id + "," + num(stepUs, 0) + "," + (isDefault ? "yes" : "no") + ",", rs);
      const auto x = summarize(rs);
      std::string line = "  t_step_us " + num(stepUs, 0) + (isDefault ? " (default)" : "") + ":";
      for (int k = 0; k < 3; ++k) {
        const ErrorSummary& e = x[static_cast<std::size_t>(k)];
        line += std::string(k ? "," : "") + " " + kMetricName[k] + " median/mean |error| " + num(e.medianAbsPct, 1) +
                "/" + num(e.meanAbsPct, 1) + " %";
      }
      res.notes.push_back(line);
    };
    res.notes.push_back(g.id + ", varying only t_step_us (per-iteration overhead), same rows:");
    sweepLine(defaults.t_step_us, true, base);
    for (double us : stepOverheadsUs(o.quick)) {
      if (us == defaults.t_step_us) continue;
      const nlohmann::json cost = {{"t_step_us", us}};
      sweepLine(us, false, runRows(g, rows, cost, o, g.id + " @ t_step_us " + num(us, 0) + ": "));
    }
    // The engine-generation presets (cluster.engine, resources/engines/):
    // each one's coefficients on the same rows. Their numbers come from
    // published engine measurements, never from these rows.
    if (!o.quick) {
      res.notes.push_back(g.id + ", with each engine-generation preset (cluster.engine):");
      for (const EnginePreset& e : enginePresets()) {
        const std::vector<RowResult> rs = runRows(g, rows, e.coefficients, o, g.id + " @ engine " + e.id + ": ");
        const auto x = summarize(rs);
        // Offline batches, no API server: a preset's front end (and its
        // async scheduling) is not applied; its cost coefficients are.
        std::string line = "  " + e.id + (e.isDefault ? " (default)" : "") +
                           (e.frontend.empty() ? "" : " (coefficients only: offline batches, no front end)") + ":";
        for (int k = 0; k < 3; ++k) {
          const ErrorSummary& es = x[static_cast<std::size_t>(k)];
          line += std::string(k ? "," : "") + " " + kMetricName[k] + " median/mean |error| " +
                  num(es.medianAbsPct, 1) + "/" + num(es.meanAbsPct, 1) + " % (median signed " +
                  num(es.medianSignedPct, 1) + " %)";
        }
        res.notes.push_back(line);
      }
    }
  }
  auto scatter = [](const char* metric, const char* label) {
    PlotSpec p;
    p.suffix = std::string("_") + metric;
    p.x = "measured_ms";
    p.ys = {"predicted_ms", "measured_ms"};
    p.where = {{"metric", metric}, {"compared", "yes"}};
    p.title = std::string("predicted vs measured ") + label + " (H100, Llama-2-70B)";
    p.yLabel = std::string("ServeLab ") + label + " (ms)";
    p.xLabel = std::string("measured ") + label + " (ms)";
    p.scatter = true;
    p.yNames = {"ServeLab (default cost model)", "y = x (measured)"};
    return p;
  };
  res.charts.push_back({"predicted_vs_measured.csv", chart,
                        {scatter("ttft", "TTFT"), scatter("tpot", "TPOT"), scatter("e2e", "end-to-end latency")}});
  PlotSpec sumPlot;
  sumPlot.x = "metric";
  sumPlot.ys = {"median_abs_err_pct", "mean_abs_err_pct"};
  sumPlot.where = {{"tp", "all"}};
  sumPlot.title = "error per metric, default cost model";
  sumPlot.yLabel = "|error| (%)";
  sumPlot.categoricalX = true;
  sumPlot.yNames = {"median |error|", "mean |error|"};
  res.charts.push_back({"error_summary.csv", summaryCsv, {sumPlot}});
  // Over t_step_us: the mean |error| of each metric (all rows), and TPOT's
  // median signed error per TP (where a TP's line crosses 0 is the overhead
  // that would match it).
  auto overStep = [](const char* suffix, const char* y, const char* series, std::pair<std::string, std::string> where,
                     const char* title, const char* yLabel) {
    PlotSpec p;
    p.suffix = suffix;
    p.x = "t_step_us";
    p.ys = {y};
    p.series = {series};
    p.where = {std::move(where)};
    p.title = title;
    p.yLabel = yLabel;
    p.xLabel = "t_step_us (µs per iteration)";
    return p;
  };
  const PlotSpec sweepPlot = overStep("", "mean_abs_err_pct", "metric", {"tp", "all"},
                                      "mean |error| vs the per-iteration overhead t_step_us (all rows)", "mean |error| (%)");
  PlotSpec tpotByTp = overStep("_tpot_by_tp", "median_signed_err_pct", "tp", {"metric", "tpot"},
                                     "TPOT median signed error vs t_step_us, per TP", "median signed TPOT error (%)");
  tpotByTp.yRange = std::make_pair(-80.0, 80.0);  // the errors start negative
  res.charts.push_back({"step_overhead_sweep.csv", sweepCsv, {sweepPlot, tpotByTp}});
  res.notes.push_back(
      "error = 100 · (ServeLab − measured) / measured; rows whose 'compared' lacks a metric are shown but left out of "
      "its summary (docs/validation.md).");
  return res;
}

}  // namespace

void addValidationExperiments(std::vector<Experiment>& out) {
  out.push_back({"hw-validation", "validation",
                 "ServeLab vs measured H100 runs (Splitwise artifact, Llama-2-70B)",
                 "Every measured configuration of the Splitwise artifact's H100 Llama-2-70B table (TP 2/4/8, batch "
                 "1-64, prompt 128-8192, output 128-8192 tokens) run as one instance with the whole batch arriving "
                 "at t = 0, under ServeLab's default cost model: TTFT, TPOT and end-to-end latency per row with the "
                 "signed error, median and mean |error| per metric, and the same rows again with only t_step_us "
                 "varied. --quick: the TP 8 rows and one other t_step_us.",
                 runHwValidation});
  addModernValidationExperiment(out);
}

}  // namespace sl::exp
