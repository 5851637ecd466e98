// hw-validation-modern: published measurements of 2024-2026 engines, one
// run per measured configuration (modern_validation.h; docs/validation.md
// "Modern engines").
#include "experiments/validation/modern_validation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "cost/presets.h"
#include "experiments/cascade/cascade_experiments.h"
#include "util/csv.h"
#include "util/error.h"
#include "workload/length_dist.h"
#include "workload/workload_source.h"

namespace sl::exp {

/// The embedded resources/validation/modern/*.csv, by file name.
const std::vector<std::pair<std::string, std::string>>& embeddedModernValidationFiles();

namespace {

const std::vector<std::string> kModes = {"offline", "batch", "rate", "concurrency"};
const std::vector<std::string> kMetrics = {"ttft_ms",      "tpot_ms",     "itl_ms", "e2e_ms",
                                           "output_tok_s", "total_tok_s", "req_s",  "output_tok_s_per_gpu"};
const std::vector<std::string> kStats = {"mean", "median", "p90", "p99", "value"};
const std::vector<std::string> kLengths = {"fixed", "sharegpt"};
const std::vector<std::string> kDtypes = {"bf16", "fp8"};

std::string fmtNum(double v, int digits) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(digits);
  o << v;
  return o.str();
}

bool isOneOf(const std::string& v, const std::vector<std::string>& set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

double number(const std::string& cell, const std::string& where, bool positive) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != cell.size() || !std::isfinite(v)) throw InputError(where + ": expected a number, got '" + cell + "'");
  if (positive ? !(v > 0) : !(v >= 0)) throw InputError(where + ": must be " + (positive ? "> 0" : ">= 0") + " (got " + cell + ")");
  return v;
}

int whole(const std::string& cell, const std::string& where) {
  const double v = number(cell, where, true);
  if (v != std::floor(v) || v > 1e8) throw InputError(where + ": expected a whole number, got '" + cell + "'");
  return static_cast<int>(v);
}

}  // namespace

std::string ModernRow::configKey() const {
  return group + "|" + gpu + "|" + std::to_string(gpus) + "|" + std::to_string(tp) + "|" + model + "|" + modelDtype +
         "|" + kvDtype + "|" + lengths + "|" + std::to_string(input) + "|" + std::to_string(output) + "|" + mode + "|" +
         fmtNum(load, 6) + "|" + std::to_string(requests);
}

std::vector<ModernRow> parseModernCsv(const std::string& csv, const std::string& name) {
  std::istringstream in(csv);
  CsvReader reader(in, name);
  std::vector<std::string> header, f;
  if (!reader.next(header)) throw InputError(name + ": empty file (expected a header line)");
  auto col = [&](const std::string& c) {
    const auto it = std::find(header.begin(), header.end(), c);
    if (it == header.end()) throw InputError(name + ": missing column '" + c + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t cGroup = col("group"), cEngine = col("engine"), cVersion = col("engine_version"), cGpu = col("gpu"),
                    cGpus = col("gpus"), cTp = col("tp"), cModel = col("model"), cMd = col("model_dtype"),
                    cKd = col("kv_dtype"), cLen = col("lengths"), cIn = col("input_tokens"),
                    cOut = col("output_tokens"), cMode = col("mode"), cLoad = col("load"), cReq = col("requests"),
                    cMetric = col("metric"), cStat = col("statistic"), cValue = col("value"),
                    cLoc = col("location"), cNote = col("note");
  const PresetRegistry& reg = PresetRegistry::builtin();
  std::vector<ModernRow> rows;
  while (reader.next(f)) {
    const std::string at = reader.where();
    if (f.size() != header.size())
      throw InputError(at + ": " + std::to_string(f.size()) + " fields, the header has " + std::to_string(header.size()));
    auto where = [&](std::size_t c) { return at + ": " + header[c]; };
    auto oneOf = [&](std::size_t c, const std::vector<std::string>& set) {
      if (!isOneOf(f[c], set)) throw InputError(where(c) + ": must be one of " + joined(set) + " (got '" + f[c] + "')");
      return f[c];
    };
    ModernRow r;
    r.file = name;
    r.line = static_cast<int>(reader.line());
    r.group = f[cGroup];
    if (r.group.empty()) throw InputError(where(cGroup) + ": must not be empty");
    r.engine = f[cEngine];
    r.engineVersion = f[cVersion];
    r.gpu = f[cGpu];
    if (!reg.hasGpu(r.gpu)) throw InputError(where(cGpu) + ": unknown GPU preset '" + r.gpu + "'");
    r.model = f[cModel];
    if (!reg.hasModel(r.model)) throw InputError(where(cModel) + ": unknown model preset '" + r.model + "'");
    r.gpus = whole(f[cGpus], where(cGpus));
    r.tp = whole(f[cTp], where(cTp));
    if (r.gpus % r.tp != 0) throw InputError(where(cGpus) + ": " + f[cGpus] + " GPUs is not a multiple of tp " + f[cTp]);
    r.modelDtype = oneOf(cMd, kDtypes);
    r.kvDtype = oneOf(cKd, kDtypes);
    r.lengths = oneOf(cLen, kLengths);
    if (r.lengths == "fixed") {
      r.input = whole(f[cIn], where(cIn));
      r.output = whole(f[cOut], where(cOut));
    }
    r.mode = oneOf(cMode, kModes);
    if (r.mode != "offline") r.load = number(f[cLoad], where(cLoad), true);
    if (r.mode == "batch" || r.mode == "concurrency") (void)whole(f[cLoad], where(cLoad));
    if (!f[cReq].empty()) r.requests = whole(f[cReq], where(cReq));
    r.metric = oneOf(cMetric, kMetrics);
    r.statistic = oneOf(cStat, kStats);
    r.value = number(f[cValue], where(cValue), true);
    r.location = f[cLoc];
    r.note = f[cNote];
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw InputError(name + ": no rows");
  return rows;
}

const std::vector<ModernRow>& modernRows() {
  static const std::vector<ModernRow> rows = [] {
    std::vector<ModernRow> all;
    for (const auto& [name, text] : embeddedModernValidationFiles()) {
      std::vector<ModernRow> rs = parseModernCsv(text, "resources/validation/modern/" + name);
      all.insert(all.end(), rs.begin(), rs.end());
    }
    return all;
  }();
  return rows;
}

int modernRequestCount(const ModernRow& r) {
  if (r.mode == "batch") return static_cast<int>(r.load);
  if (r.requests > 0) return r.requests;
  if (r.mode == "concurrency") return std::max(200, 10 * static_cast<int>(r.load));
  return 1000;
}

std::optional<Scenario> modernScenario(const ModernRow& r, const std::optional<std::string>& engine) {
  Scenario s;
  s.model = r.model;
  s.cluster.gpu = r.gpu;
  s.cluster.tp = r.tp;
  s.cluster.instances = r.gpus / r.tp;
  s.cluster.model_dtype = r.modelDtype;
  s.cluster.kv_dtype = r.kvDtype;
  s.cluster.engine = engine;
  s.policy.id = "fcfs";
  s.policy.router = "least-loaded";
  s.workload.requests = modernRequestCount(r);
  s.workload.reasoning_tokens = constantDist(0);
  if (r.lengths == "fixed") {
    s.workload.input_tokens = constantDist(r.input);
    s.workload.answer_tokens = constantDist(r.output);
  } else {
    const auto p = cascadeShareGptPath();
    if (!p) return std::nullopt;
    s.workload.input_tokens = empiricalDist(*p, "num_prefill_tokens");
    s.workload.answer_tokens = empiricalDist(*p, "num_decode_tokens");
  }
  if (r.mode == "offline" || r.mode == "batch") {
    // Every request at t = 0 (modernWorkload moves the arrivals there).
    s.workload.arrival.process = ArrivalSpec::Process::Poisson;
    s.workload.arrival.rate = 1000;
    if (r.mode == "batch")
      s.cluster.max_num_seqs = std::max<int>(s.cluster.max_num_seqs, static_cast<int>(s.workload.requests));
  } else if (r.mode == "rate") {
    s.workload.arrival.process = ArrivalSpec::Process::Poisson;
    s.workload.arrival.rate = r.load;
  } else {
    s.workload.arrival.process = ArrivalSpec::Process::Closed;
    s.workload.arrival.concurrency = static_cast<int>(r.load);
  }
  s.run.seed = 1;
  return s;
}

namespace {
// The scenario's requests, every one arriving at t = 0 (offline and batch rows).
class AtZero final : public WorkloadSource {
public:
  explicit AtZero(std::unique_ptr<WorkloadSource> in) : in_(std::move(in)) {}
  bool next(RequestSpec& out) override {
    if (!in_->next(out)) return false;
    out.arrival = 0;
    return true;
  }
  std::int64_t expectedCount() const override { return in_->expectedCount(); }

private:
  std::unique_ptr<WorkloadSource> in_;
};
}  // namespace

WorkloadFactory modernWorkload(const ModernRow& r) {
  if (r.mode != "offline" && r.mode != "batch") return {};
  return [](const WorkloadSpec& w, std::uint64_t seed, int ctx, const std::string& dir,
            std::optional<double> dur) -> std::unique_ptr<WorkloadSource> {
    return std::make_unique<AtZero>(makeWorkload(w, seed, ctx, dir, dur));
  };
}

double modernPredicted(const ModernRow& r, const RunOutcome& run) {
  const Summary& s = run.summary;
  const auto stat = [&](const LatencyStats& l) {
    if (r.statistic == "median") return l.p50;
    if (r.statistic == "p90") return l.p90;
    if (r.statistic == "p99") return l.p99;
    return l.mean;
  };
  if (r.metric == "ttft_ms") return stat(s.ttft_s) * 1e3;
  if (r.metric == "tpot_ms" || r.metric == "itl_ms") return stat(s.tpot_s) * 1e3;
  if (r.metric == "e2e_ms") return stat(s.e2e_s) * 1e3;
  if (r.metric == "output_tok_s") return s.tokens_per_s;
  if (r.metric == "output_tok_s_per_gpu") return s.tokens_per_s / r.gpus;
  if (r.metric == "req_s") return s.requests_per_s;
  // total_tok_s: prompt and output tokens of the finished requests over the run.
  double tokens = 0;
  for (const RequestRecord& x : run.records)
    if (x.finished) tokens += static_cast<double>(x.input) + static_cast<double>(x.generated);
  return s.sim_s > 0 ? tokens / s.sim_s : 0.0;
}

bool modernCompared(const ModernRow& r) { return r.lengths != "sharegpt"; }

namespace {
// A chart label short enough for a category: the group's source and
// version (or kind), then the metric family.
std::string shortLabel(const std::string& group, const std::string& fam) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : group + "-") {
    if (c == '-') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  std::string g = parts[0] == "trtllm" ? "trt" : parts[0] == "vllm" ? "vllm" : parts[0];
  if (group == "all compared") return "all " + (fam == "throughput" ? std::string("tput") : fam == "tpot/itl" ? std::string("tpot") : fam);
  if (parts.size() > 1) g += " " + parts[1].substr(0, 5);
  const std::string f = fam == "throughput" ? "tput" : fam == "tpot/itl" ? "tpot" : fam;
  return g + " " + f;
}
}  // namespace

namespace {

struct ErrStat {
  std::vector<double> signedPct;
};

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string metricFamily(const std::string& m) {
  if (m == "ttft_ms") return "ttft";
  if (m == "tpot_ms" || m == "itl_ms") return "tpot/itl";
  if (m == "e2e_ms") return "e2e";
  return "throughput";
}

ExperimentResult runModernValidation(const ExperimentOptions& o) {
  ExperimentResult res;
  res.table.columns = {"group", "gpu",      "gpus",    "tp",      "model",          "dtype",         "lengths",
                       "in",    "out",      "mode",    "load",    "metric",         "statistic",     "measured",
                       "servelab", "err_pct", "servelab_serve", "err_serve_pct", "compared", "source"};
  std::string chart =
      "group,family,metric,statistic,measured,predicted,predicted_serve,err_pct,err_serve_pct,compared\n";
  // One run per configuration (and one with the vllm-v1-serve front end),
  // configurations in first-seen order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ModernRow*>> byConfig;
  for (const ModernRow& r : modernRows()) {
    const std::string k = r.configKey();
    if (!byConfig.count(k)) order.push_back(k);
    byConfig[k].push_back(&r);
  }
  std::map<std::string, int> seenInGroup;
  std::map<std::string, std::map<std::string, ErrStat>> errs, errsServe;  // group -> family
  std::map<std::string, ErrStat> allErr, allErrServe;
  int skipped = 0, runs = 0;
  for (const std::string& k : order) {
    const std::vector<const ModernRow*>& rows = byConfig[k];
    const ModernRow& r0 = *rows.front();
    // --quick: every fourth configuration of each group, at most 200 requests.
    const int idx = seenInGroup[r0.group]++;
    if (o.quick && idx % 4 != 0) continue;
    auto scenarioFor = [&](const std::optional<std::string>& engine) {
      std::optional<Scenario> s = modernScenario(r0, engine);
      if (s && o.quick) s->workload.requests = std::min<std::int64_t>(s->workload.requests, 200);
      if (s && o.seed) s->run.seed = *o.seed;
      return s;
    };
    const std::optional<Scenario> base = scenarioFor(std::nullopt);
    if (!base) {
      ++skipped;
      continue;
    }
    const std::string label = r0.group + " " + r0.model + " " + std::to_string(r0.gpus) + "x" + r0.gpu + " tp" +
                              std::to_string(r0.tp) + " " + r0.mode + (r0.load > 0 ? " " + fmtNum(r0.load, 2) : "");
    if (o.onRun) o.onRun(label);
    const RunOutcome a = runInMemory(*base, label, nullptr, modernWorkload(r0));
    if (o.onRun) o.onRun(label + " (vllm-v1-serve)");
    const RunOutcome b =
        runInMemory(*scenarioFor(std::string("vllm-v1-serve")), label + " (vllm-v1-serve)", nullptr, modernWorkload(r0));
    runs += 2;
    for (const ModernRow* r : rows) {
      const double pa = modernPredicted(*r, a), pb = modernPredicted(*r, b);
      const double ea = 100.0 * (pa - r->value) / r->value, eb = 100.0 * (pb - r->value) / r->value;
      const std::string fam = metricFamily(r->metric);
      const bool compared = modernCompared(*r);
      errs[r->group][fam].signedPct.push_back(ea);
      errsServe[r->group][fam].signedPct.push_back(eb);
      if (compared) {
        allErr[fam].signedPct.push_back(ea);
        allErrServe[fam].signedPct.push_back(eb);
      }
      res.table.addRow({r->group, r->gpu, std::to_string(r->gpus), std::to_string(r->tp), r->model,
                        r->modelDtype + "/" + r->kvDtype, r->lengths, r->input ? std::to_string(r->input) : "",
                        r->output ? std::to_string(r->output) : "", r->mode, r->load > 0 ? fmtNum(r->load, 2) : "",
                        r->metric, r->statistic, fmtNum(r->value, 2), fmtNum(pa, 2), fmtNum(ea, 1), fmtNum(pb, 2),
                        fmtNum(eb, 1), compared ? "yes" : "no", r->file.substr(r->file.rfind('/') + 1) + ":" + std::to_string(r->line)});
      chart += r->group + "," + fam + "," + r->metric + "," + r->statistic + "," + fmtNum(r->value, 4) + "," +
               fmtNum(pa, 4) + "," + fmtNum(pb, 4) + "," + fmtNum(ea, 2) + "," + fmtNum(eb, 2) + "," +
               (compared ? "yes" : "no") + "\n";
    }
  }
  // Summaries: median |error| per group and metric family, and overall.
  std::string summary = "label,group,family,compared,n,median_abs_err_pct,median_signed_err_pct,"
                        "serve_median_abs_err_pct,serve_median_signed_err_pct\n";
  std::set<std::string> notCompared;
  for (const ModernRow& r : modernRows())
    if (!modernCompared(r)) notCompared.insert(r.group);
  auto line = [&](const std::string& group, const std::string& fam, const ErrStat& e, const ErrStat& es) {
    std::vector<double> absA, absB;
    for (double x : e.signedPct) absA.push_back(std::fabs(x));
    for (double x : es.signedPct) absB.push_back(std::fabs(x));
    summary += shortLabel(group, fam) + "," + group + "," + fam + "," + (notCompared.count(group) ? "no" : "yes") + "," +
               std::to_string(e.signedPct.size()) + "," + fmtNum(median(absA), 2) + "," +
               fmtNum(median(e.signedPct), 2) + "," + fmtNum(median(absB), 2) + "," + fmtNum(median(es.signedPct), 2) +
               "\n";
    res.notes.push_back("  " + group + " " + fam + " (" + std::to_string(e.signedPct.size()) + " rows" +
                        (notCompared.count(group) ? ", not compared" : "") + "): median |error| " +
                        fmtNum(median(absA), 1) + " % (signed " + fmtNum(median(e.signedPct), 1) +
                        " %); with vllm-v1-serve " + fmtNum(median(absB), 1) + " % (signed " +
                        fmtNum(median(es.signedPct), 1) + " %)");
  };
  res.notes.push_back("rows with ShareGPT lengths are shown, not compared: ../shared's ShareGPT file holds whole "
                      "conversations (prompt median 1730 tokens), not the benchmarks' first-turn samples "
                      "(docs/validation.md \"Modern engines\")");
  res.notes.push_back("default cost model, no calibration; error = 100 (ServeLab - measured) / measured; " +
                      std::to_string(runs) + " runs" +
                      (skipped ? ", " + std::to_string(skipped) + " configurations skipped (ShareGPT lengths: ../shared/traces absent)" : std::string()) +
                      ":");
  for (const auto& [fam, e] : allErr) line("all compared", fam, e, allErrServe[fam]);
  for (const auto& [group, fams] : errs)
    for (const auto& [fam, e] : fams) line(group, fam, e, errsServe[group][fam]);
  std::vector<PlotSpec> plots;
  struct Plot {
    const char* suffix;
    std::pair<std::string, std::string> where;
    const char* what;
  };
  for (const Plot& k : {Plot{"_ttft", {"family", "ttft"}, "TTFT (ms)"}, Plot{"_tpot", {"family", "tpot/itl"}, "TPOT / ITL (ms)"},
                        Plot{"_e2e", {"family", "e2e"}, "E2E latency (ms)"},
                        Plot{"_output_tok_s", {"metric", "output_tok_s"}, "output tokens/s"},
                        Plot{"_total_tok_s", {"metric", "total_tok_s"}, "prompt + output tokens/s"},
                        Plot{"_req_s", {"metric", "req_s"}, "requests/s"}}) {
    PlotSpec p;
    p.suffix = k.suffix;
    p.x = "measured";
    p.ys = {"predicted", "measured"};
    p.where = {k.where, {"compared", "yes"}};
    p.scatter = true;
    p.title = std::string("modern engines: ") + k.what + ", ServeLab vs published";
    p.xLabel = std::string("published ") + k.what;
    p.yLabel = std::string("ServeLab ") + k.what;
    p.yNames = {"ServeLab (default cost model)", "y = x (published)"};
    plots.push_back(p);
  }
  res.charts.push_back({"predicted_vs_measured.csv", chart, plots});
  PlotSpec bars;
  bars.x = "label";
  bars.categoricalX = true;
  bars.ys = {"median_abs_err_pct", "serve_median_abs_err_pct"};
  bars.where = {{"compared", "yes"}};
  bars.title = "modern engines: median |error| by group and metric (compared rows)";
  bars.yLabel = "median |error| (%)";
  bars.xLabel = "group and metric";
  bars.yNames = {"default (no front end)", "vllm-v1-serve"};
  res.charts.push_back({"error_summary.csv", summary, {bars}});
  return res;
}

}  // namespace

void addModernValidationExperiment(std::vector<Experiment>& out) {
  out.push_back({"hw-validation-modern", "validation",
                 "ServeLab vs published 2024-2026 engine measurements (TensorRT-LLM, vLLM, SGLang, NIM)",
                 "Every configuration of resources/validation/modern/*.csv (offline throughput, fixed batches, "
                 "Poisson rates and closed-loop concurrency sweeps on H100/H200/L40S/B200) run under ServeLab's "
                 "default cost model, and again with the vllm-v1-serve engine preset (serving front end): each "
                 "published TTFT, TPOT/ITL, E2E and throughput with the signed error, and the median |error| per "
                 "group and metric. --quick: every fourth configuration, at most 200 requests.",
                 runModernValidation});
}

}  // namespace sl::exp
