// servelab-bench-macro: the fixed macro scenarios of 70-quality.md "Speed".
//
//   B1  8 × h100-96g, R1-Distill-Qwen-32B, kv_capacity_fraction 0.5, no
//       chunked prefill, alpaca-reasoning chat at saturation, 1 simulated
//       hour; policy pascal, as the spec's B1 names (--policy fcfs
//       --router least-kv for the baseline).
//   B2  64 × h100-sxm-80g, Llama-3.1-8B, 10^6 Poisson requests (default
//       chat lengths), least-loaded + fcfs, at a busy but stable rate.
//   B3  B2's setting at 10^3, 10^4, 10^5, 10^6 requests.
//   V3  the Vidur comparison workload: 10^5 requests on 8 instances,
//       Azure conversation lengths, Poisson 72 req/s, fcfs + round-robin.
//   V3-out  V3 writing every output file (summary.json, requests.csv,
//       timeseries.csv, trace.json) into a temporary folder, removed after
//       (issue 27: <= 1.5x V3); wall time includes the writing.
//   B5  scale: 10^7 requests on 512 instances (B2's setting, 8x the rate);
//       long, so it runs only when named (--only B5) or with --quick.
//   H   hand-off heavy (issue 10): example-split, 2 prefill + 6 decode
//       instances, every request handed off, at 10^3, 10^4, 10^5 requests.
//   G   the instruction-count guard's fixed scenario (B2's setting, 4 000
//       requests); only when named, run under callgrind by CTest
//       (bench/check_instructions.cmake).
//   G-out  G writing every output file (the second guard: the recorders,
//       the rolling window, the file writers).
//
// Each scenario runs in a forked child, so its peak RSS (wait4's ru_maxrss)
// is its own. Wall time covers prepareRun + executeRun without output files
// (what `servelab-cli run` does minus writing). `--json` prints one object:
//   {"B1": {...}, "B2": {...}, "B3": [{...}, ...], "machine": {...}, ...}
// with wall_s, requests, sim_s, peak_rss_mb, sim_per_wall,
// requests_per_wall_s in every entry (B3 entries add wall_per_request_us).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cascade/cascade_experiments.h"
#include "run/execute.h"
#include "run/run.h"
#include "scenario/spec.h"
#include "workload/length_dist.h"

namespace {

using nlohmann::ordered_json;

struct Options {
  bool json = false;
  bool quick = false;
  std::vector<std::string> only;  // empty: all
  std::string b1Policy = "pascal";
  std::string b1Router = "least-kv";
  std::optional<double> b1Rate, b2Rate;
  std::optional<std::int64_t> b2Requests;
  std::optional<std::int64_t> b5Requests;
  std::string v3Trace;  // empty: the embedded fit of the Azure conversation lengths
  std::string aTrace;   // A's Azure conversation trace (default: ../shared's, when present)
  int repeat = 1;
  bool fork = true;
};

// Default rates (documented in docs/performance.md, "Scenarios"):
//  B1: the fcfs cluster's throughput plateaus at about 5.2 req/s (7.8 K
//      tokens/s); 6 req/s keeps it saturated (preempting, backlog growing
//      slowly) for the whole hour, under fcfs and pascal alike.
//  B2: the cluster's capacity is about 700 req/s (queues build at 750);
//      600 req/s keeps it busy (≈ 85 %) but stable (queueing p99 0.2 s).
//  V3: Vidur's comparison setting (72 req/s on 8 replicas); on 8 H100s with
//      Llama-3.1-8B it is busy but stable (docs/performance.md).
//  B5: B2's per-instance load (600 req/s on 64 instances) on 512 instances.
//  H:  2 prefill instances hand every request to 6 decode instances; 24 req/s
//      keeps both pools busy but stable (docs/performance.md).
constexpr double kB1Rate = 6.0;
constexpr double kB2Rate = 600.0;
constexpr double kV3Rate = 72.0;
constexpr double kB5Rate = 600.0 * 8;
constexpr double kHRate = 24.0;
constexpr std::int64_t kGuardRequests = 4'000;

sl::Scenario scenarioB1(const Options& o, double durationS) {
  sl::Scenario s;
  s.cluster.instances = 8;
  s.cluster.gpu = "h100-96g";
  s.cluster.kv_capacity_fraction = 0.5;
  s.cluster.chunked_prefill = false;
  s.cluster.preemption = "swap";
  s.cluster.fabric.gpus_per_node = 1;
  s.cluster.fabric.nic_gbps = 100;
  s.model = "r1-distill-qwen-32b";
  s.workload.preset = "alpaca-reasoning";
  s.workload.arrival.process = sl::ArrivalSpec::Process::Poisson;
  s.workload.arrival.rate = o.b1Rate.value_or(kB1Rate);
  // Enough requests that arrivals never run out before the hour ends.
  s.workload.requests = static_cast<std::int64_t>(s.workload.arrival.rate * durationS * 2 + 1000);
  s.policy.id = o.b1Policy;
  s.policy.router = o.b1Router;
  s.run.duration_s = durationS;
  s.run.seed = 1;
  return s;
}

sl::Scenario scenarioB2(const Options& o, std::int64_t requests) {
  sl::Scenario s;
  s.cluster.instances = 64;
  s.cluster.gpu = "h100-sxm-80g";
  s.model = "llama-3.1-8b";
  s.workload.arrival.process = sl::ArrivalSpec::Process::Poisson;
  s.workload.arrival.rate = o.b2Rate.value_or(kB2Rate);
  s.workload.requests = requests;
  s.policy.id = "fcfs";
  s.policy.router = "least-loaded";
  s.run.seed = 1;
  return s;
}

// Azure LLM inference trace 2023, conversation service (19 366 rows):
// ContextTokens median 1020, p90 2735, min 2, max 14 050; GeneratedTokens
// median 129, p90 424, min 7, max 1000. V3 uses lognormals with these
// quantiles, clipped to the trace's range, so the bench needs no trace file
// and measures the same workload everywhere; --v3-trace FILE draws the
// lengths from the trace's own columns instead (empirical).
sl::Scenario scenarioV3(const Options& o, std::int64_t requests) {
  sl::Scenario s;
  s.cluster.instances = 8;
  s.cluster.gpu = "h100-sxm-80g";
  s.model = "llama-3.1-8b";
  s.workload.arrival.process = sl::ArrivalSpec::Process::Poisson;
  s.workload.arrival.rate = kV3Rate;
  if (o.v3Trace.empty()) {
    s.workload.input_tokens = sl::clipped(sl::lognormalDist(1020, 2735), 2, 14050);
    s.workload.answer_tokens = sl::clipped(sl::lognormalDist(129, 424), 7, 1000);
  } else {
    s.workload.input_tokens = sl::empiricalDist(o.v3Trace, "ContextTokens");
    s.workload.answer_tokens = sl::empiricalDist(o.v3Trace, "GeneratedTokens");
  }
  s.workload.reasoning_tokens = sl::constantDist(0);
  s.workload.requests = requests;
  s.policy.id = "fcfs";
  s.policy.router = "round-robin";
  s.run.seed = 1;
  return s;
}

// A (issue 11 item 8): Arrow on the full Azure conversation trace (19 366
// requests, one hour) on 8 × h800-80g, side by side with vllm-colocated on
// the same trace and with FCFS + round-robin (issue 27: Arrow <= 1.5x of
// FCFS + round-robin wall time). The SLOs are
// Table 1's for this trace (2 s / 0.15 s); QoE is left out of attainment as
// in Arrow's experiments. `maxRequests` > 0 keeps only the first rows (--quick).
sl::Scenario scenarioA(const std::string& trace, const std::string& policy, const std::string& router,
                       std::int64_t maxRequests) {
  sl::Scenario s;
  s.cluster.instances = 8;
  s.cluster.gpu = "h800-80g";
  s.cluster.chunked_prefill = true;
  s.cluster.max_num_batched_tokens = 8192;
  s.model = "llama-3.1-8b";
  sl::TraceSpec t;
  t.path = trace;
  t.format = "azure";
  if (maxRequests > 0) t.max_requests = maxRequests;
  s.workload.trace = t;
  s.policy.id = policy;
  s.policy.router = router;
  s.slo.ttft_s = 2.0;
  s.slo.tpot_s = 0.15;
  s.slo.qoe_threshold = 1e-6;
  s.run.seed = 1;
  return s;
}

// C (issue 12 item 7): CascadeInfer on 16 × h20-141g, Llama-3.1-8B, 10^5
// ShareGPT-like Poisson requests at the heavy rate of cascade-fig6-7-latency
// for this setting, side by side with round-robin on the same workload
// (target: cascade <= 2x the baseline's wall time). The lengths come from
// the shared ShareGPT statistics when present, else their lognormal fit
// (the experiments' own choice: exp::cascadeScenario).
sl::Scenario scenarioC(const std::string& policy, std::int64_t requests) {
  return sl::exp::cascadeScenario(policy, "llama-3.1-8b", "h20-141g", 16, 1,
                                  sl::exp::cascadeHeavyRate("llama-3.1-8b", "h20-141g", 16, 1), requests, 1);
}

sl::Scenario scenarioB5(const Options& o, std::int64_t requests) {
  sl::Scenario s = scenarioB2(o, requests);
  s.cluster.instances = 512;
  s.workload.arrival.rate = kB5Rate;
  return s;
}

// Every request is handed off: answers are at least 2 tokens (one made by
// the prefill instance, the rest after the hand-off), and the rebalancing
// live migrations of example-split are off (a gap above 1 never occurs), so
// the run measures hand-offs alone.
sl::Scenario scenarioH(std::int64_t requests) {
  sl::Scenario s;
  s.cluster.instances = 8;
  s.cluster.gpu = "h100-sxm-80g";
  s.model = "llama-3.1-8b";
  s.workload.arrival.process = sl::ArrivalSpec::Process::Poisson;
  s.workload.arrival.rate = kHRate;
  s.workload.answer_tokens = sl::clipped(sl::lognormalDist(256, 1024), 2, std::nullopt);
  s.workload.requests = requests;
  s.policy.id = "example-split";
  s.policy.knobs = {{"prefill_instances", 2}, {"rebalance_gap", 1.0}, {"rebalance_interval_s", 60.0}};
  s.run.seed = 1;
  return s;
}

// ---------------------------------------------------------------- one run

struct Measured {
  double wall_s = 0;          // prepareRun + executeRun
  double loop_s = 0;          // the event loop alone (RunResult::wallSeconds)
  std::int64_t requests = 0;  // arrived
  std::int64_t finished = 0;
  std::int64_t events = 0;
  std::int64_t handoffs = 0;
  double sim_s = 0;
  double peak_rss_mb = 0;
  double cpu_s = -1;  // child's user + system CPU time (wait4); -1 in-process
  std::string fingerprint;
  bool stalled = false;
  std::int64_t bytes_written = 0;  // output files (V3-out)
  std::string error;
};

ordered_json toJson(const Measured& m) {
  ordered_json j;
  if (!m.error.empty()) {
    j["error"] = m.error;
    return j;
  }
  j["wall_s"] = m.wall_s;
  j["requests"] = m.requests;
  j["sim_s"] = m.sim_s;
  j["peak_rss_mb"] = m.peak_rss_mb;
  j["sim_per_wall"] = m.wall_s > 0 ? m.sim_s / m.wall_s : 0.0;
  j["requests_per_wall_s"] = m.wall_s > 0 ? static_cast<double>(m.requests) / m.wall_s : 0.0;
  j["loop_s"] = m.loop_s;
  if (m.cpu_s >= 0) j["cpu_s"] = m.cpu_s;
  j["finished"] = m.finished;
  j["events"] = m.events;
  j["handoffs"] = m.handoffs;
  j["events_per_wall_s"] = m.wall_s > 0 ? static_cast<double>(m.events) / m.wall_s : 0.0;
  j["fingerprint"] = m.fingerprint;
  j["stalled"] = m.stalled;
  if (m.bytes_written > 0) j["bytes_written"] = m.bytes_written;
  return j;
}

// `writeOutputs`: every output file into a fresh temporary folder (removed
// after the measurement); otherwise none.
Measured runInProcess(const sl::Scenario& s, bool writeOutputs = false) {
  Measured m;
  std::string dir;
  if (writeOutputs) {
    char tmpl[] = "/tmp/servelab-bench-out-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto prepared = sl::prepareRun(s, "bench");
  sl::RunOptions opt;  // no progress; output files only when asked
  opt.outDir = dir;
  const sl::RunResult r = sl::executeRun(*prepared, opt);
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (writeOutputs) {
    for (const std::string& f : r.files) m.bytes_written += static_cast<std::int64_t>(std::filesystem::file_size(f));
    std::filesystem::remove_all(dir);
  }
  m.loop_s = r.wallSeconds;
  const sl::Simulator& sim = *prepared->simulator;
  m.requests = sim.arrived();
  m.finished = sim.finishedCount();
  m.events = r.events;
  m.handoffs = sim.handoffs();
  m.sim_s = sl::nsToSeconds(sim.now());
  m.fingerprint = sl::fingerprintHex(r.fingerprint);
  m.stalled = r.stalled;
  return m;
}

double vmHwmMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return 0;
}

// Runs `s` in a forked child; the child sends its result as JSON through a
// pipe and the parent reads the child's own peak RSS from wait4.
Measured runIsolated(const sl::Scenario& s, bool fork, bool writeOutputs = false) {
  if (!fork) {
    Measured m = runInProcess(s, writeOutputs);
    m.peak_rss_mb = vmHwmMb();
    return m;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  int fds[2];
  if (pipe(fds) != 0) {
    Measured m;
    m.error = "pipe failed";
    return m;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    close(fds[0]);
    ordered_json j;
    try {
      const Measured m = runInProcess(s, writeOutputs);
      j = toJson(m);
      j["vm_hwm_mb"] = vmHwmMb();
    } catch (const std::exception& e) {
      j["error"] = e.what();
    }
    const std::string text = j.dump();
    std::size_t off = 0;
    while (off < text.size()) {
      const ssize_t w = write(fds[1], text.data() + off, text.size() - off);
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  Measured m;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
    m.error = "child failed (status " + std::to_string(status) + ")";
    return m;
  }
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || j.contains("error")) {
    m.error = j.is_discarded() ? "bad child output" : j["error"].get<std::string>();
    return m;
  }
  m.wall_s = j["wall_s"];
  m.loop_s = j["loop_s"];
  m.requests = j["requests"];
  m.finished = j["finished"];
  m.events = j["events"];
  m.handoffs = j["handoffs"];
  m.sim_s = j["sim_s"];
  m.fingerprint = j["fingerprint"];
  m.stalled = j["stalled"];
  m.bytes_written = j.value("bytes_written", std::int64_t{0});
  // ru_maxrss is in KiB on Linux; VmHWM agrees (the child's own high-water mark).
  m.peak_rss_mb = std::max(static_cast<double>(ru.ru_maxrss) / 1024.0, j.value("vm_hwm_mb", 0.0));
  // CPU time includes the child's set-up and teardown; on a busy machine it
  // is the better guide to single-core speed than wall time.
  m.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  return m;
}

// Best (least wall) of `repeat` runs; all walls are kept for the record.
ordered_json measure(const sl::Scenario& s, const Options& o, const std::string& label, bool writeOutputs = false) {
  std::vector<double> walls;
  Measured best;
  for (int i = 0; i < std::max(1, o.repeat); ++i) {
    const Measured m = runIsolated(s, o.fork, writeOutputs);
    if (!m.error.empty()) return toJson(m);
    walls.push_back(m.wall_s);
    if (i == 0 || m.wall_s < best.wall_s) best = m;
    if (!o.json)
      std::fprintf(stderr, "  %s run %d: wall %.3f s (cpu %.3f s), %lld requests, sim %.1f s, peak RSS %.1f MB\n",
                   label.c_str(), i + 1, m.wall_s, m.cpu_s, static_cast<long long>(m.requests), m.sim_s, m.peak_rss_mb);
  }
  ordered_json j = toJson(best);
  j["walls_s"] = walls;
  return j;
}

bool wanted(const Options& o, const std::string& id) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), id) != o.only.end();
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto p = line.find(':');
      return p == std::string::npos ? line : line.substr(p + 2);
    }
  return "unknown";
}

void usage() {
  std::puts(
      "servelab-bench-macro [--json] [--quick] [--only B1[,B2,B3,V3,V3-out,B5,H,G,G-out,A,C]] [--policy ID] [--router ID]\n"
      "                     [--b1-rate R] [--b2-rate R] [--b2-requests N] [--b5-requests N]\n"
      "                     [--v3-trace FILE] [--a-trace FILE] [--repeat N] [--no-fork]\n"
      "  --json      print the results as one JSON object on stdout\n"
      "  --quick     small sizes (smoke test, a few seconds); includes B5 at a small size\n"
      "  --only      run only these scenarios (default: all but B5, which is long, and G and\n"
      "              G-out, the instruction guards' scenarios)\n"
      "  --policy    B1's policy id (default pascal, the spec's B1; e.g. fcfs)\n"
      "  --router    B1's router (default least-kv; ignored by policies with their own placement, e.g. pascal)\n"
      "  --b1-rate, --b2-rate, --b2-requests  override B1's/B2's arrival rate, B2's size (profiling)\n"
      "  --b5-requests N  B5's size (default 10^7)\n"
      "  --v3-trace FILE  V3's lengths from an Azure conversation trace CSV (ContextTokens,\n"
      "                   GeneratedTokens) instead of the embedded fit\n"
      "  --a-trace FILE  A's Azure conversation trace (default: ../shared/traces/azure-2023/\n"
      "                   AzureLLMInferenceTrace_conv.csv next to the source tree; A is skipped without it)\n"
      "  --repeat N  run each scenario N times, report the fastest (all walls in walls_s)\n"
      "  --no-fork   run in-process (peak RSS then accumulates over scenarios)");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "servelab-bench-macro: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--json")
      o.json = true;
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--no-fork")
      o.fork = false;
    else if (a == "--only") {
      std::string v = value();
      std::size_t p = 0;
      while (p <= v.size()) {
        const std::size_t q = std::min(v.find(',', p), v.size());
        if (q > p) o.only.push_back(v.substr(p, q - p));
        p = q + 1;
      }
    } else if (a == "--policy")
      o.b1Policy = value();
    else if (a == "--router")
      o.b1Router = value();
    else if (a == "--b1-rate")
      o.b1Rate = std::atof(value().c_str());
    else if (a == "--b2-rate")
      o.b2Rate = std::atof(value().c_str());
    else if (a == "--b2-requests")
      o.b2Requests = std::max<std::int64_t>(1, std::atoll(value().c_str()));
    else if (a == "--b5-requests")
      o.b5Requests = std::max<std::int64_t>(1, std::atoll(value().c_str()));
    else if (a == "--v3-trace")
      o.v3Trace = value();
    else if (a == "--a-trace")
      o.aTrace = value();
    else if (a == "--repeat")
      o.repeat = std::max(1, std::atoi(value().c_str()));
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "servelab-bench-macro: unknown option %s\n", a.c_str());
      usage();
      return 2;
    }
  }
  for (const std::string& id : o.only)
    if (id != "B1" && id != "B2" && id != "B3" && id != "V3" && id != "V3-out" && id != "B5" && id != "H" && id != "G" && id != "G-out" && id != "A" &&
        id != "C") {
      std::fprintf(stderr, "servelab-bench-macro: --only: unknown scenario %s (B1, B2, B3, V3, V3-out, B5, H, G, G-out, A, C)\n",
                   id.c_str());
      return 2;
    }

  const double b1Duration = o.quick ? 60.0 : 3600.0;
  const std::int64_t b2Requests = o.b2Requests.value_or(o.quick ? 5'000 : 1'000'000);
  const std::vector<std::int64_t> b3Sizes =
      o.quick ? std::vector<std::int64_t>{1'000, 3'000} : std::vector<std::int64_t>{1'000, 10'000, 100'000, 1'000'000};
  const std::int64_t v3Requests = o.quick ? 2'000 : 100'000;
  const std::int64_t b5Requests = o.b5Requests.value_or(o.quick ? 20'000 : 10'000'000);
  const std::vector<std::int64_t> hSizes =
      o.quick ? std::vector<std::int64_t>{300, 1'000} : std::vector<std::int64_t>{1'000, 10'000, 100'000};

  ordered_json out;
  out["servelab_version"] = sl::kServeLabVersion;
  out["quick"] = o.quick;
  out["machine"] = {{"cpu", cpuModel()}, {"online_cpus", sysconf(_SC_NPROCESSORS_ONLN)}};
#ifdef NDEBUG
  out["build"] = "release (NDEBUG)";
#else
  out["build"] = "debug (assertions on)";
#endif
  int failures = 0;
  auto check = [&](const ordered_json& j) {
    if (j.contains("error")) ++failures;
  };

  if (wanted(o, "B1")) {
    const sl::Scenario s = scenarioB1(o, b1Duration);
    if (!o.json)
      std::fprintf(stderr, "B1 (%s + %s, rate %.2f req/s, %.0f s simulated)\n", s.policy.id.c_str(),
                   s.policy.router.c_str(), s.workload.arrival.rate, b1Duration);
    ordered_json j = measure(s, o, "B1");
    j["policy"] = s.policy.id;
    j["router"] = s.policy.router;
    j["rate"] = s.workload.arrival.rate;
    j["instances"] = s.cluster.instances;
    check(j);
    out["B1"] = j;
  }
  ordered_json b2;
  if (wanted(o, "B2")) {
    const sl::Scenario s = scenarioB2(o, b2Requests);
    if (!o.json)
      std::fprintf(stderr, "B2 (fcfs + least-loaded, rate %.0f req/s, %lld requests)\n", s.workload.arrival.rate,
                   static_cast<long long>(b2Requests));
    b2 = measure(s, o, "B2");
    b2["rate"] = s.workload.arrival.rate;
    b2["instances"] = s.cluster.instances;
    check(b2);
    out["B2"] = b2;
  }
  // A list of runs of one setting at growing sizes, with the wall per
  // request of each and the spread (max / min) of that figure.
  auto series = [&](const std::string& id, const std::vector<std::int64_t>& sizes, auto makeScenario,
                    const ordered_json* reuse, std::int64_t reuseSize) {
    ordered_json list = ordered_json::array();
    double lo = 0, hi = 0;
    for (const std::int64_t n : sizes) {
      ordered_json j;
      if (reuse && n == reuseSize && !reuse->is_null() && !reuse->contains("error")) {
        j = *reuse;  // the same run as B2
        j["same_run_as"] = "B2";
      } else {
        if (!o.json) std::fprintf(stderr, "%s (%lld requests)\n", id.c_str(), static_cast<long long>(n));
        j = measure(makeScenario(n), o, id + "/" + std::to_string(n));
      }
      check(j);
      if (!j.contains("error")) {
        const double perReq = j["wall_s"].get<double>() / static_cast<double>(n) * 1e6;
        j["wall_per_request_us"] = perReq;
        lo = lo == 0 ? perReq : std::min(lo, perReq);
        hi = std::max(hi, perReq);
      }
      j["target_requests"] = n;
      list.push_back(j);
    }
    out[id] = list;
    out[id + "_per_request_spread"] = lo > 0 ? hi / lo : 0.0;
  };
  if (wanted(o, "B3"))
    series("B3", b3Sizes, [&](std::int64_t n) { return scenarioB2(o, n); }, &b2, b2Requests);
  if (wanted(o, "V3")) {
    const sl::Scenario s = scenarioV3(o, v3Requests);
    if (!o.json)
      std::fprintf(stderr, "V3 (fcfs + round-robin, 8 instances, Azure conversation lengths%s, %.0f req/s, %lld requests)\n",
                   o.v3Trace.empty() ? " (fit)" : " (trace)", s.workload.arrival.rate,
                   static_cast<long long>(v3Requests));
    ordered_json j = measure(s, o, "V3");
    j["rate"] = s.workload.arrival.rate;
    j["instances"] = s.cluster.instances;
    j["lengths"] = o.v3Trace.empty() ? "azure-conv-fit" : o.v3Trace;
    check(j);
    out["V3"] = j;
  }
  // V3 with every output file written (issue 27 target: <= 1.5x V3).
  if (wanted(o, "V3-out")) {
    const sl::Scenario s = scenarioV3(o, v3Requests);
    if (!o.json) std::fprintf(stderr, "V3-out (V3 writing every output file)\n");
    ordered_json j = measure(s, o, "V3-out", true);
    check(j);
    if (out.contains("V3") && !out["V3"].contains("error") && !j.contains("error"))
      j["over_v3"] = j["wall_s"].get<double>() / out["V3"]["wall_s"].get<double>();
    out["V3-out"] = j;
  }
  // B5 is long (10^7 requests): only when named, or at its --quick size.
  if (o.quick ? wanted(o, "B5") : std::find(o.only.begin(), o.only.end(), "B5") != o.only.end()) {
    const sl::Scenario s = scenarioB5(o, b5Requests);
    if (!o.json)
      std::fprintf(stderr, "B5 (fcfs + least-loaded, 512 instances, rate %.0f req/s, %lld requests)\n",
                   s.workload.arrival.rate, static_cast<long long>(b5Requests));
    ordered_json j = measure(s, o, "B5");
    j["rate"] = s.workload.arrival.rate;
    j["instances"] = s.cluster.instances;
    check(j);
    out["B5"] = j;
  }
  if (wanted(o, "H")) {
    series("H", hSizes, [](std::int64_t n) { return scenarioH(n); }, nullptr, 0);
    // Every finished request must have been handed off (the row's premise).
    for (auto& j : out["H"])
      if (!j.contains("error")) j["all_handed_off"] = j["handoffs"].get<std::int64_t>() == j["finished"].get<std::int64_t>();
  }

  // A: Arrow vs vllm-colocated on the Azure conversation trace; skipped
  // (with the reason in the JSON) when the trace is not there.
  if (wanted(o, "A")) {
    std::string trace = o.aTrace;
    if (trace.empty()) trace = std::string(SERVELAB_SOURCE_DIR) + "/../shared/traces/azure-2023/AzureLLMInferenceTrace_conv.csv";
    ordered_json a;
    if (!std::ifstream(trace).good()) {
      a["skipped"] = "no trace at " + trace + " (--a-trace FILE)";
      if (!o.json) std::fprintf(stderr, "A skipped: %s\n", a["skipped"].get<std::string>().c_str());
    } else {
      const std::int64_t maxRequests = o.quick ? 500 : 0;
      // Arrow routes by itself; its baselines are FCFS (vllm-colocated:
      // every instance prefills and decodes) with the least-loaded router
      // and with round-robin, the issue 27 reference.
      struct Row {
        const char* key;
        const char* policy;
        const char* router;
      };
      for (const Row& r : {Row{"arrow", "arrow", "least-loaded"}, Row{"vllm-colocated", "vllm-colocated", "least-loaded"},
                           Row{"fcfs-rr", "vllm-colocated", "round-robin"}}) {
        if (!o.json) std::fprintf(stderr, "A (%s + %s, 8 x h800-80g, Azure conversation trace)\n", r.policy, r.router);
        ordered_json j = measure(scenarioA(trace, r.policy, r.router, maxRequests), o, std::string("A/") + r.key);
        check(j);
        a[r.key] = j;
      }
      if (!a["arrow"].contains("error") && !a["vllm-colocated"].contains("error"))
        a["arrow_over_baseline"] = a["arrow"]["wall_s"].get<double>() / a["vllm-colocated"]["wall_s"].get<double>();
      if (!a["arrow"].contains("error") && !a["fcfs-rr"].contains("error"))
        a["arrow_over_fcfs_rr"] = a["arrow"]["wall_s"].get<double>() / a["fcfs-rr"]["wall_s"].get<double>();
      a["trace"] = trace;
    }
    out["A"] = a;
  }

  // C: cascade vs round-robin, 10^5 ShareGPT-like requests on 16 instances.
  if (wanted(o, "C")) {
    ordered_json c;
    const std::int64_t requests = o.quick ? 2000 : 100000;
    for (const char* policy : {"cascade", "round-robin"}) {
      if (!o.json) std::fprintf(stderr, "C (%s, 16 x h20-141g, ShareGPT-like lengths)\n", policy);
      const sl::Scenario s = scenarioC(policy, requests);
      ordered_json j = measure(s, o, std::string("C/") + policy);
      j["instances"] = s.cluster.instances;
      j["rate"] = s.workload.arrival.rate;
      check(j);
      c[policy] = j;
    }
    if (!c["cascade"].contains("error") && !c["round-robin"].contains("error"))
      c["cascade_over_baseline"] = c["cascade"]["wall_s"].get<double>() / c["round-robin"]["wall_s"].get<double>();
    c["lengths"] = sl::exp::cascadeShareGptPath().value_or("lognormal fit (no ShareGPT file)");
    out["C"] = c;
  }

  // The instruction guards' scenarios: only when named (--only G, G-out).
  for (const bool writing : {false, true}) {
    const std::string id = writing ? "G-out" : "G";
    if (std::find(o.only.begin(), o.only.end(), id) == o.only.end()) continue;
    Options g = o;
    g.b2Rate.reset();
    ordered_json j = measure(scenarioB2(g, kGuardRequests), g, id, writing);
    check(j);
    out[id] = j;
  }

  if (o.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("%-10s %10s %10s %12s %12s %12s %14s\n", "scenario", "wall s", "requests", "sim s", "peak RSS MB",
                "sim/wall", "requests/s");
    auto row = [](const std::string& name, const ordered_json& j) {
      if (j.contains("error")) {
        std::printf("%-10s error: %s\n", name.c_str(), j["error"].get<std::string>().c_str());
        return;
      }
      std::printf("%-10s %10.3f %10lld %12.1f %12.1f %12.1f %14.0f\n", name.c_str(), j["wall_s"].get<double>(),
                  static_cast<long long>(j["requests"].get<std::int64_t>()), j["sim_s"].get<double>(),
                  j["peak_rss_mb"].get<double>(), j["sim_per_wall"].get<double>(),
                  j["requests_per_wall_s"].get<double>());
    };
    if (out.contains("B1")) row("B1", out["B1"]);
    if (out.contains("B2")) row("B2", out["B2"]);
    for (const char* id : {"B3", "H"}) {
      if (!out.contains(id)) continue;
      for (const auto& j : out[id]) row(std::string(id) + "/" + std::to_string(j["target_requests"].get<std::int64_t>()), j);
      std::printf("%s wall per request: max/min = %.2f\n", id, out[std::string(id) + "_per_request_spread"].get<double>());
    }
    if (out.contains("V3")) row("V3", out["V3"]);
    if (out.contains("V3-out")) row("V3-out", out["V3-out"]);
    if (out.contains("V3-out") && out["V3-out"].contains("over_v3"))
      std::printf("V3-out / V3 wall = %.2f (target <= 1.5)\n", out["V3-out"]["over_v3"].get<double>());
    if (out.contains("B5")) row("B5", out["B5"]);
    if (out.contains("A") && out["A"].contains("arrow")) {
      row("A/arrow", out["A"]["arrow"]);
      row("A/vllm-col", out["A"]["vllm-colocated"]);
      row("A/fcfs-rr", out["A"]["fcfs-rr"]);
      if (out["A"].contains("arrow_over_baseline"))
        std::printf("A: arrow / vllm-colocated (least-loaded) wall = %.2f\n", out["A"]["arrow_over_baseline"].get<double>());
      if (out["A"].contains("arrow_over_fcfs_rr"))
        std::printf("A: arrow / fcfs + round-robin wall = %.2f (target <= 1.5)\n", out["A"]["arrow_over_fcfs_rr"].get<double>());
    }
    if (out.contains("C")) {
      row("C/cascade", out["C"]["cascade"]);
      row("C/rr", out["C"]["round-robin"]);
      if (out["C"].contains("cascade_over_baseline"))
        std::printf("C: cascade / round-robin wall = %.2f (target <= 1.5)\n", out["C"]["cascade_over_baseline"].get<double>());
    }
  }
  return failures ? 1 : 0;
}
