// reproduce --summary: the papers' headline claims in one generated table
// (summary.h; docs/fidelity.md's front table).
#include "experiments/summary.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "experiments/arrow/arrow_experiments.h"

namespace sl::exp {

namespace {

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A table's text and numeric cells by column name (-1 / NaN when absent).
std::string strAt(const Table& t, std::size_t row, const std::string& col) {
  const int c = t.column(col);
  if (c < 0 || row >= t.rows.size()) return "";
  return t.rows[row][static_cast<std::size_t>(c)];
}
double numAt(const Table& t, std::size_t row, const std::string& col) {
  const std::string s = strAt(t, row, col);
  if (s.empty()) return std::nan("");
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return std::nan("");
  }
}
// The first row whose columns equal the given values ("" = any); -1 if none.
long rowWhere(const Table& t, const std::vector<std::pair<std::string, std::string>>& eq) {
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    bool all = true;
    for (const auto& [col, val] : eq) all = all && strAt(t, i, col) == val;
    if (all) return static_cast<long>(i);
  }
  return -1;
}
// The row of the largest value of `numCol` (a rate) among rows with eq.
long lastRowWhere(const Table& t, const std::string& numCol,
                  const std::vector<std::pair<std::string, std::string>>& eq = {}) {
  long best = -1;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    bool all = true;
    for (const auto& [col, val] : eq) all = all && strAt(t, i, col) == val;
    if (all && (best < 0 || numAt(t, i, numCol) > numAt(t, static_cast<std::size_t>(best), numCol)))
      best = static_cast<long>(i);
  }
  return best;
}

ClaimReading missing(const std::string& what) {
  ClaimReading r;
  r.text = "not in the table: " + what;
  return r;
}

ClaimReading reading(bool direction, double value, std::string text) {
  ClaimReading r;
  r.ok = std::isfinite(value);
  r.direction = direction;
  r.value = value;
  r.text = std::move(text);
  return r;
}

// --- PASCAL -------------------------------------------------------------

ClaimReading pascalTailCut(const ExperimentResult& e, const std::string& baseline) {
  const long i = rowWhere(e.table, {{"policy", baseline}});
  if (i < 0) return missing(baseline + " row");
  const double cut = numAt(e.table, static_cast<std::size_t>(i), "pascal_max_reduction_pct");
  const double worst = numAt(e.table, static_cast<std::size_t>(i), "pascal_worst_increase_pct");
  return reading(cut > 0, cut, fixed(cut, 1) + " % (worst bin +" + fixed(worst, 1) + " %)");
}

ClaimReading pascalSlo(const ExperimentResult& e) {
  const long i = lastRowWhere(e.table, "rate_rps");
  if (i < 0) return missing("rates");
  const auto k = static_cast<std::size_t>(i);
  const double p = numAt(e.table, k, "pascal_slo_violation_pct"), f = numAt(e.table, k, "fcfs_slo_violation_pct"),
               r = numAt(e.table, k, "rr_slo_violation_pct");
  ClaimReading x = reading(p <= f && p <= r + 0.5, p,
                           "PASCAL " + fixed(p, 1) + " %, FCFS " + fixed(f, 1) + " %, RR " + fixed(r, 1) + " % at " +
                               fixed(numAt(e.table, k, "rate_rps"), 0) + " req/s");
  x.value.reset();  // the paper gives an order, no number
  return x;
}

ClaimReading pascalNoMigration(const ExperimentResult& e) {
  const long n = lastRowWhere(e.table, "rate_rps", {{"policy", "pascal-nomigration"}});
  const long p = lastRowWhere(e.table, "rate_rps", {{"policy", "pascal"}});
  if (n < 0 || p < 0) return missing("pascal / pascal-nomigration rows");
  const double bn = numAt(e.table, static_cast<std::size_t>(n), "blocking_p99_s");
  const double bp = numAt(e.table, static_cast<std::size_t>(p), "blocking_p99_s");
  return reading(bn > bp, bn, "NoMigration " + fixed(bn, 2) + " s vs PASCAL " + fixed(bp, 2) + " s");
}

ClaimReading pascalNonAdaptive(const ExperimentResult& e) {
  const long n = lastRowWhere(e.table, "rate_rps", {{"policy", "pascal-nonadaptive"}});
  const long p = lastRowWhere(e.table, "rate_rps", {{"policy", "pascal"}});
  if (n < 0 || p < 0) return missing("pascal / pascal-nonadaptive rows");
  const double vn = numAt(e.table, static_cast<std::size_t>(n), "slo_violation_pct");
  const double vp = numAt(e.table, static_cast<std::size_t>(p), "slo_violation_pct");
  return reading(vn > vp, vn, "NonAdaptive " + fixed(vn, 1) + " % vs PASCAL " + fixed(vp, 1) + " %");
}

ClaimReading pascalKvCopy(const ExperimentResult& e) {
  const long i = rowWhere(e.table, {{"dataset", "alpaca-reasoning"}, {"load", "high"}});
  if (i < 0) return missing("alpaca high row");
  const auto k = static_cast<std::size_t>(i);
  const double p99 = numAt(e.table, k, "transfer_p99_s"), ttft = numAt(e.table, k, "ttft_p50_s");
  return reading(p99 < 0.1 * ttft, p99, fixed(p99, 3) + " s (TTFT p50 " + fixed(ttft, 1) + " s)");
}

// --- Arrow ----------------------------------------------------------------

ClaimReading arrowRatio(const ExperimentResult& e, const std::string& system, const std::string& trace = "") {
  std::vector<std::pair<std::string, std::string>> eq = {{"system", system}};
  if (!trace.empty()) eq.emplace_back("trace", trace);
  const long i = rowWhere(e.table, eq);
  if (i < 0) return missing(system + " row");
  const double r = numAt(e.table, static_cast<std::size_t>(i), "ratio_arrow_over_system");
  return reading(r > 1, r, fixed(r, 2) + "x");
}

// --- CascadeInfer ---------------------------------------------------------

ClaimReading cascadeThroughput(const ExperimentResult& e, const std::string& system) {
  double sum = 0, lo = 1e300;
  int n = 0;
  for (std::size_t i = 0; i < e.table.rows.size(); ++i)
    if (strAt(e.table, i, "system") == system) {
      const double v = numAt(e.table, i, "cascade_over_system");
      sum += v;
      lo = std::min(lo, v);
      ++n;
    }
  if (n == 0) return missing(system + " rows");
  return reading(lo > 1, sum / n,
                 fixed(sum / n, 2) + "x mean over " + std::to_string(n) + " models (lowest " + fixed(lo, 2) + "x)");
}

ClaimReading cascadeSlo(const ExperimentResult& e) {
  // Llama-3.2-3B at 5x (the paper's panel); a --quick table has other
  // models and scales: its first model at the largest scale up to 5.
  long i = rowWhere(e.table, {{"model", "llama-3.2-3b"}, {"slo_scale", "5"}, {"system", "round-robin"}});
  if (i < 0) {
    for (std::size_t k = 0; k < e.table.rows.size(); ++k)
      if (strAt(e.table, k, "system") == "round-robin" && strAt(e.table, k, "model") == strAt(e.table, 0, "model") &&
          numAt(e.table, k, "slo_scale") <= 5 &&
          (i < 0 || numAt(e.table, k, "slo_scale") > numAt(e.table, static_cast<std::size_t>(i), "slo_scale")))
        i = static_cast<long>(k);
  }
  if (i < 0) return missing("a round-robin row");
  const auto k = static_cast<std::size_t>(i);
  const double r = numAt(e.table, k, "cascade_over_system");
  return reading(r > 1, r,
                 fixed(r, 2) + "x (" + strAt(e.table, k, "model") + ", " + strAt(e.table, k, "slo_scale") + "x SLO)");
}

ClaimReading cascadeLayout(const ExperimentResult& e) {
  const long i = rowWhere(e.table, {{"system", "cascade-chain"}});
  if (i < 0) return missing("cascade-chain row");
  const double d = numAt(e.table, static_cast<std::size_t>(i), "cascade_latency_vs_pct");
  return reading(d < 0, d, fixed(d, 1) + " %");
}

// --- Self-scheduling ------------------------------------------------------

ClaimReading selfschedDone(const ExperimentResult& e, const std::string& domain) {
  const long i = rowWhere(e.table, {{"domain", domain}});
  if (i < 0) return missing(domain + " row");
  const double s = numAt(e.table, static_cast<std::size_t>(i), "speedup_done");
  return reading(s > 1, s, fixed(s, 2) + "x");
}

ClaimReading selfschedTtftGain(const ExperimentResult& e) {
  // The middle rate of math's three.
  std::vector<double> rates;
  for (std::size_t i = 0; i < e.table.rows.size(); ++i)
    if (strAt(e.table, i, "domain") == "math" && strAt(e.table, i, "policy") == "fcfs")
      rates.push_back(numAt(e.table, i, "rate_rps"));
  if (rates.empty()) return missing("math rows");
  const double rate = rates[rates.size() / 2];
  for (std::size_t i = 0; i < e.table.rows.size(); ++i)
    if (strAt(e.table, i, "domain") == "math" && strAt(e.table, i, "policy") == "selfsched-length-only" &&
        numAt(e.table, i, "rate_rps") == rate) {
      const double g = numAt(e.table, i, "ttft_p95_vs_fcfs");
      return reading(g > 1, g, fixed(g, 2) + "x at " + fixed(rate, 0) + " req/s");
    }
  return missing("length-only math row");
}

ClaimReading selfschedOverhead(const ExperimentResult& e) {
  const long i = rowWhere(e.table, {{"policy", "selfsched-length-only"}});
  const long f = rowWhere(e.table, {{"policy", "fcfs"}});
  if (i < 0 || f < 0) return missing("fcfs / length-only rows");
  const double extra = numAt(e.table, static_cast<std::size_t>(i), "extra_s");
  const double makespan = numAt(e.table, static_cast<std::size_t>(f), "makespan_s");
  return reading(extra >= 0 && extra < 0.01 * makespan, extra,
                 fixed(extra, 3) + " s of " + fixed(makespan, 1) + " s");
}

ClaimReading selfschedStarvation(const ExperimentResult& e) {
  // Math, the first rate: P99 TPOT with anti-starvation against without.
  const long on = rowWhere(e.table, {{"domain", "math"}, {"anti_starvation", "on"}});
  if (on < 0) return missing("math rows");
  const std::string rate = strAt(e.table, static_cast<std::size_t>(on), "rate_rps");
  const long off = rowWhere(e.table, {{"domain", "math"}, {"rate_rps", rate}, {"anti_starvation", "off"}});
  if (off < 0) return missing("math anti_starvation off row");
  const double a = numAt(e.table, static_cast<std::size_t>(on), "tpot_p99_s");
  const double b = numAt(e.table, static_cast<std::size_t>(off), "tpot_p99_s");
  const double d = 100.0 * (a - b) / b;
  return reading(d < 0, d, fixed(d, 1) + " % (" + fixed(a, 3) + " vs " + fixed(b, 3) + " s at " + rate + " req/s)");
}

}  // namespace

const std::vector<Claim>& fidelityClaims() {
  static const std::vector<Claim> claims = [] {
    using R = std::function<ClaimReading(const ExperimentResult&)>;
    std::vector<Claim> v;
    auto add = [&](std::string paper, std::string fig, std::string what, std::string ptext, std::optional<double> pv,
                   std::string id, R read, std::vector<std::uint64_t> seeds = {}) {
      v.push_back({std::move(paper), std::move(fig), std::move(what), std::move(ptext), pv, std::move(id),
                   std::move(seeds), std::move(read)});
    };
    add("PASCAL", "Fig. 10", "largest binned tail-TTFT cut vs FCFS, 8 req/s", "up to 61 %", 61.0,
        "pascal-fig10-tail-ttft", [](const ExperimentResult& e) { return pascalTailCut(e, "fcfs"); });
    add("PASCAL", "Fig. 10", "largest binned tail-TTFT cut vs RR, 8 req/s", "up to 33 %", 33.0,
        "pascal-fig10-tail-ttft", [](const ExperimentResult& e) { return pascalTailCut(e, "rr"); });
    add("PASCAL", "Fig. 11", "answering SLO violation at the highest rate: PASCAL at or below both baselines",
        "lower or comparable", std::nullopt, "pascal-fig11-slo", pascalSlo);
    add("PASCAL", "Fig. 13", "p99 blocking, NoMigration above PASCAL at 8 req/s (seeds 1-4)", "27.39 s vs near zero",
        27.39, "pascal-fig13-nomigration", pascalNoMigration, {1, 2, 3, 4});
    add("PASCAL", "Fig. 15", "SLO violation of NonAdaptive above PASCAL's at 8 req/s", "7.45 % vs 0.69 %", 7.45,
        "pascal-fig15-nonadaptive", pascalNonAdaptive);
    add("PASCAL", "KV transfer", "p99 KV copy at the high rate (AlpacaEval), negligible against TTFT", "0.14 s",
        0.14, "pascal-kv-transfer", pascalKvCopy);
    add("Arrow", "Fig. 7", "max sustainable rate on Azure Code, Arrow over vLLM (colocated)", "5.62x", 5.62,
        "arrow-fig7-azure-code", [](const ExperimentResult& e) { return arrowRatio(e, "vllm-colocated"); });
    add("Arrow", "Fig. 7", "max sustainable rate on Azure Code, Arrow over vLLM disaggregated", "7.78x", 7.78,
        "arrow-fig7-azure-code", [](const ExperimentResult& e) { return arrowRatio(e, "vllm-disaggregated"); });
    add("Arrow", "Fig. 8", "SLO-aware over minimal-load dispatch on Azure Code", "1.67x", 1.67,
        "arrow-fig8-ablation",
        [](const ExperimentResult& e) { return arrowRatio(e, "static-pd/minimal-load", "azure-code"); });
    add("CascadeInfer", "Fig. 10", "saturated throughput over round-robin (vLLM)", "1.99x", 1.99,
        "cascade-fig10-throughput", [](const ExperimentResult& e) { return cascadeThroughput(e, "round-robin"); });
    add("CascadeInfer", "Fig. 10", "saturated throughput over Llumnix", "1.71x", 1.71, "cascade-fig10-throughput",
        [](const ExperimentResult& e) { return cascadeThroughput(e, "llumnix"); });
    add("CascadeInfer", "Fig. 12", "SLO attainment at 5x SLO over round-robin, Llama-3.2-3B", "3.8-7.6x", 5.4,
        "cascade-fig12-slo", cascadeSlo);
    add("CascadeInfer", "Fig. 14", "normalized latency of the planned pipeline vs the chain", "-30 %", -30.0,
        "cascade-fig14-layouts", cascadeLayout);
    for (const auto& [domain, paper] : {std::pair{"math", 4.49}, std::pair{"code", 2.04}, std::pair{"sharegpt", 1.43}})
      add("Self-scheduling", "Table 1", std::string("requests done, length-only over FCFS, ") + domain,
          fixed(paper, 2) + "x", paper, "selfsched-table1-throughput",
          [d = std::string(domain)](const ExperimentResult& e) { return selfschedDone(e, d); });
    add("Self-scheduling", "Fig. 6", "P95 TTFT, FCFS over length-only, math", "about 5x", 5.0, "selfsched-fig6-p95",
        selfschedTtftGain);
    add("Self-scheduling", "Table 2", "rank-prompt cost for 20 math requests, under 1 % of the makespan", "0.055 s",
        0.055, "selfsched-table2-overhead", selfschedOverhead);
    add("Self-scheduling", "Fig. 8", "P99 TPOT change from anti-starvation, math", "about -50 %", -50.0,
        "selfsched-fig8-starvation", selfschedStarvation);
    return v;
  }();
  return claims;
}

std::string fidelityVerdict(const Claim& c, const ClaimReading& r) {
  if (!r.ok) return "not run";
  if (!r.direction) return "not reproduced";
  if (c.paperValue && r.value && *c.paperValue != 0) {
    const double q = *r.value / *c.paperValue;
    if (q >= 0.5 && q <= 2.0) return "size within 2x";
  }
  return "direction only";
}

ExperimentResult runFidelitySummary(const ExperimentOptions& o) {
  ExperimentResult res;
  res.table.columns = {"paper", "figure", "claim", "paper_value", "servelab_value", "verdict", "command"};
  std::map<std::pair<std::string, std::uint64_t>, ExperimentResult> cache;
  std::map<std::string, std::map<std::string, int>> counts;
  for (const Claim& c : fidelityClaims()) {
    const Experiment* e = findExperiment(c.experiment);
    std::vector<std::uint64_t> seeds = c.seeds;
    if (o.quick || seeds.empty()) seeds = {o.seed.value_or(0)};  // 0: the experiment's own seeds
    const bool needsTraces = c.experiment.rfind("arrow-", 0) == 0;
    ClaimReading total;
    std::string verdict;
    if (!e) {
      total.text = "unknown experiment";
    } else if (needsTraces && !arrowTracesDir()) {
      total.text = "../shared/traces absent";
    } else {
      double sum = 0;
      int n = 0;
      bool dir = true, ok = true;
      std::string texts;
      for (std::uint64_t s : seeds) {
        auto key = std::make_pair(c.experiment, s);
        if (!cache.count(key)) {
          ExperimentOptions eo = o;
          if (s != 0) eo.seed = s;
          else if (!o.seed) eo.seed.reset();
          cache[key] = e->run(eo);
        }
        const ClaimReading r = c.read(cache[key]);
        ok = ok && r.ok;
        dir = dir && r.direction;
        if (r.value) {
          sum += *r.value;
          ++n;
        }
        texts += (texts.empty() ? "" : "; ") + (seeds.size() > 1 ? "seed " + std::to_string(s) + ": " : "") + r.text;
      }
      total.ok = ok;
      total.direction = dir;
      if (n > 0) total.value = sum / n;
      total.text = texts;
    }
    verdict = fidelityVerdict(c, total);
    ++counts[c.paper][verdict];
    std::string command = "servelab-cli reproduce " + c.experiment;
    if (!o.quick && c.seeds.size() > 1) {
      command += " --seed N (N = ";
      for (std::size_t k = 0; k < c.seeds.size(); ++k) command += (k ? ", " : "") + std::to_string(c.seeds[k]);
      command += ")";
    }
    res.table.addRow({c.paper, c.figure, c.claim, c.paperText, total.text, verdict, command});
  }
  for (const auto& [paper, byVerdict] : counts) {
    std::string line = paper + ":";
    bool first = true;
    for (const char* v : {"size within 2x", "direction only", "not reproduced", "not run"}) {
      const auto it = byVerdict.find(v);
      if (it == byVerdict.end()) continue;
      line += std::string(first ? " " : ", ") + std::to_string(it->second) + " " + v;
      first = false;
    }
    res.notes.push_back(line);
  }
  return res;
}

}  // namespace sl::exp
