// Self-scheduling experiments at the paper's setting (§4.2;
// docs/policies/selfsched.md "The paper's setting"): one vLLM 0.9.2 server
// on one A100-40G serving Qwen3-14B as one TP-1 engine (vLLM serves on one
// GPU unless tensor_parallel_size is set, and the paper never sets it),
// vLLM 0.9.2's V1 default preemption (recompute), no chunked prefill, a
// ranking batch of B = 10 closed after T = 1 s (Table 2: two rank prompts
// for 20 requests at 64 req/s), the paper's rates (10 req/s and up), the
// mean over seeds 1-4 (one seed with --quick). `-8gpu` runs the paper's
// eight GPUs as eight TP-1 engines behind one server (data parallel: the
// policy's own placement, FCFS's least-loaded router); `-tp8` as one TP-8
// engine.
#include "experiments/selfsched/selfsched_experiments.h"

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/kendall.h"
#include "run/execute.h"
#include "run/run.h"
#include "util/time.h"

namespace sl::exp {
namespace {

/// How the paper's one vLLM server maps onto ServeLab instances.
enum class Setting { OneGpu, Dp8, Tp8 };

struct Domain {
  const char* name;
  const char* preset;
  std::vector<double> rates;  // req/s
};
// The paper's rates, 10 req/s and up ("as the request rate increases, the
// batch size approaches its maximum (i.e., 10)", §5.1; Fig. 6 from 10 up),
// in every setting.
const std::vector<Domain>& domains() {
  static const std::vector<Domain> paper = {{"math", "selfsched-math", {10, 20, 40}},
                                            {"code", "selfsched-code", {10, 20, 40}},
                                            {"sharegpt", "selfsched-sharegpt", {10, 20, 40}}};
  return paper;
}

const std::vector<std::string>& modes() {
  static const std::vector<std::string> m = {"selfsched-prefill-only", "selfsched-rank-only", "selfsched-length-only"};
  return m;
}

Scenario base(const Domain& d, double rate, const std::string& policy, std::uint64_t seed, std::int64_t requests,
              Setting st = Setting::OneGpu) {
  Scenario s;
  s.cluster.gpu = "a100-40g";
  s.cluster.chunked_prefill = false;
  s.model = "qwen3-14b";
  s.workload.preset = d.preset;
  s.workload.arrival.rate = rate;
  s.workload.requests = requests;
  s.policy.id = policy;
  s.run.seed = seed;
  s.cluster.preemption = "recompute";
  switch (st) {
    case Setting::OneGpu:
      s.cluster.instances = 1;
      s.cluster.tp = 1;
      break;
    case Setting::Dp8:
      s.cluster.instances = 8;
      s.cluster.tp = 1;
      break;
    case Setting::Tp8:
      s.cluster.instances = 1;
      s.cluster.tp = 8;
      break;
  }
  // The policies' defaults are the paper's (B 10, T 1 s, vLLM 0.9.2's V1
  // rule: a waiting request never preempts; docs/policies/selfsched.md):
  // the experiments set only what a figure varies.
  return s;
}

std::vector<std::uint64_t> seeds(const ExperimentOptions& o) {
  if (o.seed) return {*o.seed};
  return o.quick ? std::vector<std::uint64_t>{1} : std::vector<std::uint64_t>{1, 2, 3, 4};
}
std::int64_t requests(const ExperimentOptions& o) { return o.quick ? 120 : 400; }

struct Run {
  nlohmann::ordered_json summary;
  std::vector<RequestRecord> records;
};
Run run(const Scenario& s, const ExperimentOptions& o, const std::string& label) {
  if (o.onRun) o.onRun(label);
  auto prepared = prepareRun(s, label);
  RunResult res = executeRun(*prepared, RunOptions{});
  Run r;
  r.summary = res.summaryJson;
  r.records = prepared->simulator->records();
  return r;
}

double p(const nlohmann::ordered_json& j, const char* metric, const char* q) {
  const auto& m = j[metric];
  return m.contains(q) && m[q].is_number() ? m[q].get<double>() : std::nan("");
}

// FCFS reveals no ranking: its "tau-b" is that of arrival order against the
// gold ranking, over consecutive groups of 10 arrivals (a batch's size).
double arrivalOrderTau(const std::vector<RequestRecord>& recs) {
  double sum = 0;
  int n = 0;
  for (std::size_t at = 0; at + 10 <= recs.size(); at += 10) {
    std::vector<double> len, order;
    for (std::size_t k = at; k < at + 10; ++k) {
      len.push_back(static_cast<double>(recs[k].reasoning + recs[k].answer));
      order.push_back(static_cast<double>(k));
    }
    if (auto t = servelab::metrics::kendallTauB(servelab::metrics::goldRanking(len, 0.1), order)) {
      sum += *t;
      ++n;
    }
  }
  return n ? sum / n : std::nan("");
}

ExperimentResult fig5(const ExperimentOptions& o) {
  ExperimentResult r;
  r.table.columns = {"domain", "fcfs", "prefill-only", "rank-only", "length-only"};
  // The chart: one line per domain over the modes (0 fcfs, 1 prefill-only,
  // 2 rank-only, 3 length-only).
  std::vector<std::vector<double>> byMode(4);
  for (const Domain& d : domains()) {
    std::vector<std::string> row = {d.name};
    const double rate = d.rates[1];
    double fcfs = 0;
    for (std::uint64_t seed : seeds(o))
      fcfs += arrivalOrderTau(run(base(d, rate, "fcfs", seed, requests(o)), o, std::string("fcfs on ") + d.name).records);
    fcfs /= static_cast<double>(seeds(o).size());
    row.push_back(num(fcfs, 3));
    byMode[0].push_back(fcfs);
    for (const std::string& m : modes()) {
      double tau = 0;
      for (std::uint64_t seed : seeds(o)) {
        Scenario s = base(d, rate, m, seed, requests(o));
        s.policy.knobs["batch_timeout_s"] = 60.0;  // full batches of 10, as the paper's ranking runs
        tau += run(s, o, m + " on " + d.name).summary["policy_report"]["tau_b"]["achieved_mean_per_batch"].get<double>();
      }
      tau /= static_cast<double>(seeds(o).size());
      row.push_back(num(tau, 3));
      byMode[static_cast<std::size_t>(row.size() - 2)].push_back(tau);
    }
    r.table.addRow(row);
  }
  std::string chart = "mode_index";
  for (const Domain& d : domains()) chart += std::string(",") + d.name + "_tau_b";
  chart += "\n";
  for (std::size_t m = 0; m < byMode.size(); ++m) {
    chart += std::to_string(m);
    for (double v : byMode[m]) {
      chart += ',';
      chart += num(v, 4);
    }
    chart += "\n";
  }
  std::vector<std::string> ys;
  for (const Domain& d : domains()) ys.push_back(std::string(d.name) + "_tau_b");
  r.charts.push_back({"fig5_tau_by_mode.csv", chart,
                      {{"", "mode_index", ys, {}, {}, "fig5: Kendall tau-b per mode and domain", "Kendall tau-b", true,
                        {"fcfs", "prefill-only", "rank-only", "length-only"}, false, std::make_pair(-0.25, 0.75), false,
                        "ranking mode", {"math", "code", "sharegpt"}}}});
  r.notes.push_back("Chart x: 0 fcfs, 1 prefill-only, 2 rank-only, 3 length-only.");
  r.notes.push_back("tau-b per ranking batch of 10 against the gold ranking (ties within 10 %); the modes' noise is "
                    "calibrated to 0.25 / 0.40 / 0.55 on each domain's lengths, so the order is the model's input, "
                    "not a finding; FCFS: arrival order.");
  return r;
}

ExperimentResult fig6(const ExperimentOptions& o, Setting st) {
  ExperimentResult r;
  r.table.columns = {"domain", "rate_rps", "policy", "ttft_p95_s", "tpot_p95_s", "e2e_p95_s", "ttft_p95_vs_fcfs"};
  std::string chart = "domain,rate_rps,policy,ttft_p95_s,tpot_p95_s,e2e_p95_s\n";
  std::vector<std::string> policies = {"fcfs"};
  for (const std::string& m : modes()) policies.push_back(m);
  for (const Domain& d : domains()) {
    for (double rate : d.rates) {
      double fcfsTtft = 0;
      for (const std::string& pol : policies) {
        double ttft = 0, tpot = 0, e2e = 0;
        for (std::uint64_t seed : seeds(o)) {
          const Run x = run(base(d, rate, pol, seed, requests(o), st), o, pol + " on " + d.name + " @ " + num(rate, 2));
          ttft += p(x.summary, "ttft_s", "p95");
          tpot += p(x.summary, "tpot_s", "p95");
          e2e += p(x.summary, "e2e_s", "p95");
        }
        const double k = static_cast<double>(seeds(o).size());
        ttft /= k;
        tpot /= k;
        e2e /= k;
        if (pol == "fcfs") fcfsTtft = ttft;
        r.table.addRow({d.name, num(rate, 2), pol, num(ttft, 2), num(tpot, 3), num(e2e, 1),
                        num(ttft > 0 ? fcfsTtft / ttft : std::nan(""), 2)});
        chart += std::string(d.name) + "," + num(rate, 2) + "," + pol + "," + num(ttft, 3) + "," + num(tpot, 4) + "," +
                 num(e2e, 2) + "\n";
      }
    }
  }
  // One PNG per domain (their rates differ) for TTFT and end-to-end latency.
  std::vector<PlotSpec> plots;
  for (const Domain& d : domains()) {
    const std::string n = d.name;
    plots.push_back({"_" + n + "_ttft", "rate_rps", {"ttft_p95_s"}, {"policy"}, {{"domain", n}},
                     "fig6: P95 TTFT vs rate, " + n, "P95 TTFT (s)"});
    plots.push_back({"_" + n + "_e2e", "rate_rps", {"e2e_p95_s"}, {"policy"}, {{"domain", n}},
                     "fig6: P95 end-to-end latency vs rate, " + n, "P95 latency (s)"});
  }
  r.charts.push_back({"fig6_p95_vs_rate.csv", chart, std::move(plots)});
  r.notes.push_back("ttft_p95_vs_fcfs: FCFS's P95 TTFT over the policy's (> 1: the policy is better).");
  return r;
}

ExperimentResult fig8(const ExperimentOptions& o, Setting st) {
  ExperimentResult r;
  r.table.columns = {"domain", "rate_rps", "anti_starvation", "tpot_p99_s", "e2e_p99_s", "promotions"};
  std::string chart = "domain,anti_starvation,tpot_p99_s,e2e_p99_s\n";
  for (const Domain& d : domains()) {
    const double rate = d.rates[2];
    for (const char* pol : {"selfsched-length-only", "selfsched-length-only-nostarve"}) {
      double tpot = 0, e2e = 0, promos = 0;
      for (std::uint64_t seed : seeds(o)) {
        const Run x = run(base(d, rate, pol, seed, requests(o), st), o, std::string(pol) + " on " + d.name);
        tpot += p(x.summary, "tpot_s", "p99");
        e2e += p(x.summary, "e2e_s", "p99");
        promos += x.summary["policy_report"]["promotions"].get<double>();
      }
      const double k = static_cast<double>(seeds(o).size());
      const bool on = std::string(pol).find("nostarve") == std::string::npos;
      r.table.addRow({d.name, num(rate, 2), on ? "on" : "off", num(tpot / k, 3), num(e2e / k, 1), num(promos / k, 0)});
      chart += std::string(d.name) + "," + (on ? "on" : "off") + "," + num(tpot / k, 4) + "," + num(e2e / k, 2) + "\n";
    }
  }
  r.charts.push_back({"fig8_starvation.csv", chart,
                      {{"_tpot", "domain", {"tpot_p99_s"}, {"anti_starvation"}, {},
                        "fig8: P99 TPOT with and without anti-starvation", "P99 TPOT (s)", true},
                       {"_e2e", "domain", {"e2e_p99_s"}, {"anti_starvation"}, {},
                        "fig8: P99 latency with and without anti-starvation", "P99 latency (s)", true}}});
  r.notes.push_back("LengthOnly at each domain's highest rate, with and without anti-starvation (threshold 4, "
                    "quantum 32, at most 16 promotions per iteration).");
  return r;
}

// Table 2 (paper §5.4, the worst case of the rank prompts' cost): 20 math
// requests at 64 req/s; the paper's run needed two rank prompts of 40 output
// tokens, i.e. batches of 10. Makespan (time to finish all 20) of FCFS and
// LengthOnly, and what the rank prompts themselves cost.
ExperimentResult table2(const ExperimentOptions& o, Setting st) {
  ExperimentResult r;
  r.table.columns = {"policy", "makespan_s", "extra_s", "rank_prompts", "rank_prompt_gpu_s", "mean_e2e_s"};
  const Domain& math = domains()[0];
  double fcfsMakespan = 0;
  std::string chart = "policy_index,makespan_s,mean_e2e_s\n";
  int index = 0;
  for (const char* pol : {"fcfs", "selfsched-length-only"}) {
    double makespan = 0, prompts = 0, gpu = 0, e2e = 0;
    for (std::uint64_t seed : seeds(o)) {
      Scenario s = base(math, 64.0, pol, seed, 20, st);
      if (std::string(pol) != "fcfs") s.policy.knobs["batch_size"] = 10;
      const Run x = run(s, o, std::string(pol) + ": 20 math requests @ 64 req/s");
      makespan += x.summary["sim_s"].get<double>();
      e2e += p(x.summary, "e2e_s", "mean");
      if (x.summary.contains("synthetic")) {
        prompts += x.summary["synthetic"]["requests"].get<double>();
        gpu += x.summary["synthetic"]["gpu_s"].get<double>();
      }
    }
    const double k = static_cast<double>(seeds(o).size());
    makespan /= k;
    if (index == 0) fcfsMakespan = makespan;
    r.table.addRow({pol, num(makespan, 3), num(makespan - fcfsMakespan, 3), num(prompts / k, 1), num(gpu / k, 3),
                    num(e2e / k, 2)});
    chart += std::to_string(index++) + "," + num(makespan, 4) + "," + num(e2e / k, 3) + "\n";
  }
  r.charts.push_back({"table2_overhead.csv", chart,
                      {{"", "policy_index", {"makespan_s"}, {}, {}, "table2: makespan of 20 math requests",
                        "makespan (s)", true, {"fcfs", "length-only"}, false, {}, false, "policy"}}});
  r.notes.push_back("extra_s: makespan minus FCFS's (the paper: 55 ms over 11 min 6.5 s). Chart x: 0 fcfs, 1 "
                    "length-only.");
  return r;
}

// Table 1 (paper §5.3): 3 000 requests per domain, FCFS vs LengthOnly;
// (i) requests finished in the first 10 minutes, (ii) minutes until 500 have
// finished. The paper does not give the arrival rate; ServeLab sends the
// requests at 64 req/s (Table 2's rate), so a backlog forms at once and the
// order the scheduler serves it in decides both figures.
struct Throughput {
  double finishedInWindow = 0;  // requests finished by the window's end
  double minutesToWorkload = 0;  // simulated minutes until `workload` requests finished (NaN: never)
};
Throughput throughput(const Scenario& s, const ExperimentOptions& o, const std::string& label, double windowS,
                      std::int64_t workload) {
  if (o.onRun) o.onRun(label);
  auto prepared = prepareRun(s, label);
  Simulator& sim = *prepared->simulator;
  const SimTime window = secondsToNs(windowS);
  sim.run(window);
  Throughput t;
  for (const RequestRecord& rec : sim.records())
    if (rec.last_token <= window) ++t.finishedInWindow;
  while (sim.finishedCount() < workload && sim.step()) {
  }
  if (sim.finishedCount() >= workload) {
    SimTime at = sim.records()[static_cast<std::size_t>(workload - 1)].last_token;
    t.minutesToWorkload = static_cast<double>(at) / 1e9 / 60.0;
  } else {
    t.minutesToWorkload = std::nan("");
  }
  return t;
}

// Tables 1 and 3 share their shape: `total` requests per domain at 64 req/s,
// requests finished in a window and minutes until `workload` have finished,
// FCFS vs length-only, averaged over the seeds.
struct ThroughputSetting {
  std::int64_t total;
  std::int64_t workload;
  double windowS;
  bool thinking;  // the domains' -thinking presets
  Setting setting = Setting::OneGpu;
};
ExperimentResult throughputTable(const ExperimentOptions& o, const ThroughputSetting& st) {
  ExperimentResult r;
  const std::string win = std::to_string(static_cast<int>(st.windowS / 60.0)) + "min";
  r.table.columns = {"domain", "fcfs_done_" + win, "length_only_done_" + win, "speedup_done",
                     "fcfs_min_to_" + std::to_string(st.workload),
                     "length_only_min_to_" + std::to_string(st.workload), "speedup_time"};
  std::string done = "policy,domain_index,requests_done\n", minutes = "policy,domain_index,minutes\n";
  int index = 0;
  for (Domain d : domains()) {
    const std::string preset = std::string(d.preset) + (st.thinking ? "-thinking" : "");
    d.preset = preset.c_str();
    Throughput f, l;
    for (std::uint64_t seed : seeds(o)) {
      for (const char* pol : {"fcfs", "selfsched-length-only"}) {
        Scenario s = base(d, 64.0, pol, seed, st.total, st.setting);
        const Throughput t = throughput(
            s, o, std::string(pol) + ": " + std::to_string(st.total) + " " + preset + " requests", st.windowS,
            st.workload);
        Throughput& acc = std::string(pol) == "fcfs" ? f : l;
        acc.finishedInWindow += t.finishedInWindow;
        acc.minutesToWorkload += t.minutesToWorkload;
      }
    }
    const double k = static_cast<double>(seeds(o).size());
    const double fd = f.finishedInWindow / k, ld = l.finishedInWindow / k;
    const double fm = f.minutesToWorkload / k, lm = l.minutesToWorkload / k;
    r.table.addRow({d.name, num(fd, 1), num(ld, 1), num(fd > 0 ? ld / fd : std::nan(""), 2), num(fm, 2), num(lm, 2),
                    num(lm > 0 ? fm / lm : std::nan(""), 2)});
    const std::string x = std::to_string(index++);
    done += "fcfs," + x + "," + num(fd, 2) + "\n" + "length-only," + x + "," + num(ld, 2) + "\n";
    minutes += "fcfs," + x + "," + num(fm, 3) + "\n" + "length-only," + x + "," + num(lm, 3) + "\n";
  }
  const std::string prefix = st.thinking ? "table3" : "table1";
  const std::vector<std::string> names = {"math", "code", "sharegpt"};
  r.charts.push_back({prefix + "_done_in_window.csv", done,
                      {{"", "domain_index", {"requests_done"}, {"policy"}, {},
                        prefix + ": requests finished in the first " + win, "requests finished", true, names, false, {},
                        false, "domain"}}});
  r.charts.push_back({prefix + "_minutes_to_workload.csv", minutes,
                      {{"", "domain_index", {"minutes"}, {"policy"}, {},
                        prefix + ": minutes until " + std::to_string(st.workload) + " requests have finished",
                        "minutes", true, names, false, {}, false, "domain"}}});
  r.notes.push_back("Requests arrive at 64 req/s (the paper gives no rate), so all are queued at once; "
                    "speedups: length-only over FCFS (requests done in the window; FCFS's minutes over "
                    "length-only's). Chart x: 0 math, 1 code, 2 sharegpt.");
  return r;
}

ExperimentResult table1(const ExperimentOptions& o, Setting st) {
  return o.quick ? throughputTable(o, {600, 100, 120.0, false, st}) : throughputTable(o, {3000, 500, 600.0, false, st});
}

// Table 3 (App. A.6): thinking mode, 1 000 requests, 20 minutes, 100 requests.
ExperimentResult table3(const ExperimentOptions& o, Setting st) {
  return o.quick ? throughputTable(o, {200, 20, 300.0, true, st}) : throughputTable(o, {1000, 100, 1200.0, true, st});
}

}  // namespace

void addSelfSchedExperiments(std::vector<Experiment>& out) {
  const std::string setting =
      " Setting (the paper's, Sec. 4.2): one vLLM server on 1 x a100-40g, qwen3-14b as one TP-1 engine, no "
      "chunked prefill, recompute preemption (vLLM 0.9.2's V1 default), no preemption by a waiting request "
      "(preempt_for_priority 0, V1's rule), B 10, T 1 s; selfsched-math / -code / "
      "-sharegpt presets, Poisson arrivals; 400 requests, mean of seeds 1-4 (120 requests, seed 1 with --quick).";
  const std::string dp8 =
      " Setting: as the paper-setting experiment but on 8 x a100-40g as eight TP-1 engines behind one server "
      "(the policy's own placement; FCFS: least-loaded).";
  const std::string tp8 = " Setting: as the paper-setting experiment but the server is one TP-8 engine on 8 GPUs.";
  using S = Setting;
  using Fn = ExperimentResult (*)(const ExperimentOptions&, Setting);
  // The experiment at the paper's setting, then its 8-GPU variants.
  struct Variant {
    const char* suffix;
    const char* titleSuffix;
    const std::string* text;
    S st;
  };
  const std::vector<Variant> variants = {{"", "", &setting, S::OneGpu},
                                         {"-8gpu", " on eight TP-1 engines", &dp8, S::Dp8},
                                         {"-tp8", " on one TP-8 engine", &tp8, S::Tp8}};
  auto add = [&](const std::string& id, const std::string& title, const std::string& what, Fn fn,
                 const std::vector<S>& settings) {
    for (const Variant& v : variants) {
      bool wanted = false;
      for (S x : settings) wanted = wanted || x == v.st;
      if (!wanted) continue;
      const S st = v.st;
      out.push_back({id + v.suffix, "Self-scheduling", title + v.titleSuffix, what + *v.text,
                     [fn, st](const ExperimentOptions& o) { return fn(o, st); }});
    }
  };
  add("selfsched-fig5-tau", "Fig. 5: Kendall tau-b of each predictor mode by domain",
      "Achieved tau-b per ranking batch for prefill-only, rank-only, length-only, and FCFS's arrival order, on "
      "math, code and ShareGPT-like requests at 20 req/s, full batches of 10.",
      [](const ExperimentOptions& o, Setting) { return fig5(o); }, {S::OneGpu});
  add("selfsched-fig6-p95", "Fig. 6: P95 TTFT, TPOT and latency vs rate",
      "P95 TTFT, TPOT and end-to-end latency of fcfs and the three modes at 10, 20 and 40 req/s per domain, and "
      "FCFS's P95 TTFT over each mode's.",
      fig6, {S::OneGpu, S::Dp8, S::Tp8});
  add("selfsched-table1-throughput", "Table 1: throughput, FCFS vs length-only",
      "3 000 requests per domain arriving at 64 req/s: requests finished in the first 10 minutes and minutes "
      "until 500 have finished, FCFS vs length-only, and the speedups (--quick: 600 requests, a 2-minute "
      "window and 100 requests).",
      table1, {S::OneGpu, S::Dp8, S::Tp8});
  add("selfsched-table3-thinking", "Table 3: throughput in thinking mode",
      "1 000 requests per domain in thinking mode (the -thinking presets: answers up to 16 384 tokens) arriving "
      "at 64 req/s: requests finished in the first 20 minutes and minutes until 100 have finished, FCFS vs "
      "length-only, and the speedups (--quick: 200 requests, a 5-minute window and 20 requests).",
      table3, {S::OneGpu, S::Dp8});
  add("selfsched-table2-overhead", "Table 2: the rank prompts' extra cost",
      "20 math requests at 64 req/s, FCFS vs length-only with batches of 10 (two rank prompts of 40 output "
      "tokens): makespan, its difference, and the rank prompts' GPU time; its makespan against the paper's "
      "11 min 6.5 s tests how the paper's server maps onto GPUs.",
      table2, {S::OneGpu, S::Dp8, S::Tp8});
  add("selfsched-fig8-starvation", "Fig. 8: anti-starvation on and off",
      "P99 TPOT and P99 latency of length-only with and without anti-starvation at 40 req/s.", fig8,
      {S::OneGpu, S::Dp8});
}

}  // namespace sl::exp
