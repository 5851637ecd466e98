#include "run/execute.h"

#include "cost/pricing.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <iterator>
#include <optional>
#include <ostream>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "engine/decision_log.h"
#include "metrics/record_store.h"
#include "metrics/request_record.h"
#include "metrics/binned_tail.h"
#include "output/policy_series_recorder.h"
#include "output/timeseries_recorder.h"
#include "output/trace_recorder.h"
#include "scenario/scenario_io.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/strings.h"
#include "workload/closed_loop.h"
#include "workload/presets.h"
#include "workload/trace_formats.h"

namespace sl {

std::string fingerprintHex(std::uint64_t f) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(f));
  return buf;
}

nlohmann::ordered_json traceStatsJson(const TraceStats& t) {
  nlohmann::ordered_json j;
  j["format"] = t.format;
  j["rows"] = t.rows;
  j["emitted"] = t.emitted;
  j["skipped"] = t.skipped();
  j["malformed"] = t.malformed;
  j["failed"] = t.failed;
  j["before_window"] = t.before_window;
  j["raised_to_one"] = t.raised_to_one;
  j["context_clipped"] = t.context_clipped;
  j["first_malformed"] = t.first_malformed.empty() ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(t.first_malformed);
  return j;
}


nlohmann::ordered_json policyReportJson(const std::vector<PolicyReportEntry>& entries) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const PolicyReportEntry& e : entries) {
    nlohmann::ordered_json* at = &out;
    std::string_view key = e.key;
    for (std::size_t slash; (slash = key.find('/')) != std::string_view::npos; key.remove_prefix(slash + 1))
      at = &(*at)[std::string(key.substr(0, slash))];
    const double v = e.value;
    (*at)[std::string(key)] = v == static_cast<double>(static_cast<std::int64_t>(v))
                                  ? nlohmann::ordered_json(static_cast<std::int64_t>(v))
                                  : nlohmann::ordered_json(v);
  }
  return out;
}

namespace {

// A live run's changes, applied at their event boundaries, and the
// fingerprint check of a saved run.
struct LiveReplay {
  LiveRun& live;
  const ChangeLog& log;
  std::int64_t checkAt = -1;
  std::size_t next = 0;
  std::optional<std::uint64_t> atCheck;
  // Idempotent: the changes at the current event count, then the check.
  void boundary() {
    Simulator& sim = live.sim();
    while (next < log.size() && sim.eventsProcessed() == log[next].events) live.apply(log[next++]);
    if (checkAt >= 0 && !atCheck && sim.eventsProcessed() == checkAt) atCheck = sim.fingerprint();
  }
};

// requests.csv, streamed to `os` in chunks of ~1 MB, one row per row()
// call (finished and in-flight records merged by id: the summary's first
// pass calls it, so the compact records are decoded once for both; issue 27).
class RequestsCsvWriter {
public:
  RequestsCsvWriter(const Simulator& sim, std::ostream& os) : os_(os), buf_(requestsCsvHeader()) {
    for (int d = 0; d < 8; ++d) domains_.push_back(domainName(d));
    buf_.reserve(kChunk + 4096);
    if (sim.prefixCaching()) {
      // One more column, cached_tokens (prompt tokens served from the cache
      // at the request's first admission; -1 if never admitted), only when
      // caching is on so every other requests.csv keeps its bytes.
      if (!buf_.empty() && buf_.back() == '\n') buf_.pop_back();
      buf_ += ",cached_tokens\n";
      cached_ = sim.cachedTokensById();
      prefix_ = true;
    }
    if (sim.speculative()) {
      // Two more, draft_tokens and accepted_tokens (the draft tokens its
      // steps verified, and those accepted), only with speculation on.
      if (!buf_.empty() && buf_.back() == '\n') buf_.pop_back();
      buf_ += ",draft_tokens,accepted_tokens\n";
      spec_ = sim.speculativeTokensById();
    }
  }
  void row(const RequestRecord& r) {
    appendRequestCsvRow(r, buf_, domains_);
    if (prefix_) {
      if (!buf_.empty() && buf_.back() == '\n') buf_.pop_back();
      const auto it =
          std::lower_bound(cached_.begin(), cached_.end(), std::pair<std::int64_t, std::int32_t>{r.id, -1});
      buf_ += ',';
      buf_ += std::to_string(it != cached_.end() && it->first == r.id ? it->second : -1);
      buf_ += '\n';
    }
    if (!spec_.empty()) {
      if (!buf_.empty() && buf_.back() == '\n') buf_.pop_back();
      const auto it = std::lower_bound(spec_.begin(), spec_.end(), Simulator::SpecCounts{r.id, 0, 0});
      const bool found = it != spec_.end() && it->id == r.id;
      buf_ += ',';
      buf_ += std::to_string(found ? it->drafted : 0);
      buf_ += ',';
      buf_ += std::to_string(found ? it->accepted : 0);
      buf_ += '\n';
    }
    if (buf_.size() >= kChunk) flush();
  }
  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::ostream& os_;
  std::string buf_;
  std::vector<std::string> domains_;
  std::vector<std::pair<std::int64_t, std::int32_t>> cached_;
  bool prefix_ = false;
  std::vector<Simulator::SpecCounts> spec_;
};

// The folders a run creates for its outputs before it runs (trace.json is
// streamed into its temporary as the run goes), removed again, deepest
// first and only when empty, unless the run got to commit its files: a run
// refused part-way leaves no output folder behind.
class CreatedFolders {
public:
  CreatedFolders() = default;
  CreatedFolders(const CreatedFolders&) = delete;
  CreatedFolders& operator=(const CreatedFolders&) = delete;
  ~CreatedFolders() {
    for (const std::filesystem::path& p : created_) {
      std::error_code ec;
      std::filesystem::remove(p, ec);  // fails, harmlessly, when not empty
    }
  }
  void ensure(const std::string& dir) {
    std::error_code ec;
    for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
      created_.push_back(p);
      if (p == p.parent_path()) break;
    }
    ensureDirectory(dir);
  }
  void keep() { created_.clear(); }

private:
  std::vector<std::filesystem::path> created_;
};

// The run loop and the outputs, shared by the plain and the live run.
// `step` advances one event (false once the run has ended); the plain run's
// loop stays a bare sim.step().
template <class Step> RunResult runAndWrite(PreparedRun& run, const RunOptions& opt, Step&& step,
                                            LiveReplay* live) {
  Simulator& sim = *run.simulator;
  const Scenario& s = run.scenario;
  const bool writing = !opt.outDir.empty();
  const OutputSet& want = opt.outputs;
  const std::string tracePath = !want.trace       ? std::string()
                                : opt.tracePath   ? *opt.tracePath
                                : writing         ? opt.outDir + "/trace.json"
                                                  : std::string();
  // The recorders are lane-safe (SimObserver::laneSafe): the decode lanes
  // keep running while they watch (issue 27), and their files are the same
  // bytes as an eager run's (tests/run/test_outputs_lane.cpp).
  TimeSeriesRecorder series(s.cluster.instances, sim.prefixCaching(), sim.speculative());
  PolicySeriesRecorder policySeries(sim.globalPolicy());
  TraceRecorder trace(s.cluster.instances, s.run.trace_request_limit);
  if (writing && want.timeseries) sim.addObserver(&series);
  if (writing && want.timeseries) sim.addObserver(&policySeries);
  if (!tracePath.empty()) sim.addObserver(&trace);
  // trace.json goes to its temporary while the run goes (issue 27: held
  // whole, W3's 12.5 MB were ~3 % of its `run --out` in page faults alone).
  CreatedFolders folders;
  const auto stopIfCancelled = [&opt] {
    if (opt.cancel && opt.cancel->load(std::memory_order_relaxed)) throw RunCancelled();
  };
  std::optional<AtomicFileWriter> traceFile;
  if (!tracePath.empty()) {
    if (writing) folders.ensure(opt.outDir);
    traceFile.emplace(tracePath);
    trace.streamTo(traceFile->stream());
  }

  // Measurement window (run.measure): the totals when it opens, taken
  // before the first event at or after its start (or at the end of a run
  // that never got there).
  std::optional<MeasureWindow> window;
  const auto openWindow = [&] {
    MeasureWindow w;
    w.start = secondsToNs(s.run.measure->warmup_s);
    w.end = secondsToNs(s.run.measure->endS());
    w.arrivedBefore = sim.arrived();
    const auto add = [&w](const RequestRecord& r) {
      w.tokensBefore += r.generated;
      if (r.first_token != kNoTime) w.inputBefore += r.input;
      w.preemptionsBefore += r.preemptions;
      w.migrationsBefore += r.migrations;
    };
    sim.records().forEach(add);
    for (const RequestRecord& r : sim.inFlightRecords()) add(r);
    window = w;
  };
  const bool measuring = s.run.measure.has_value();
  const SimTime windowStart = measuring ? secondsToNs(s.run.measure->warmup_s) : 0;

  const auto t0 = std::chrono::steady_clock::now();
  const double total = run.expectedRequests > 0 ? static_cast<double>(run.expectedRequests) : 0.0;
  std::int64_t n = 0;
  bool ended = false;
  for (;;) {
    if (opt.stopAfterEvents >= 0 && sim.eventsProcessed() >= opt.stopAfterEvents) break;
    if (measuring && !window && sim.nextEventTime() >= windowStart) openWindow();
    if (!step()) {
      ended = true;
      break;
    }
    if ((++n & 0xFFFF) == 0) {
      stopIfCancelled();
      if (opt.progress) {
        double frac = 0;
        if (const auto stop = s.run.stopTimeS()) frac = nsToSeconds(sim.now()) / *stop;
        else if (total > 0) frac = static_cast<double>(sim.finishedCount()) / total;
        opt.progress(std::clamp(frac, 0.0, 1.0), nsToSeconds(sim.now()));
      }
    }
  }
  // The changes at the boundary where the loop stopped (the end, or
  // stopAfterEvents) belong to the run too.
  if (live) live->boundary();
  if (measuring && !window) openWindow();  // ended before the window opened: it is empty
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.progress) opt.progress(1.0, nsToSeconds(sim.now()));

  RunResult res;
  if (live) {
    res.changesApplied = live->next;
    res.fingerprintAtCheck = live->atCheck;
  }
  res.wallSeconds = wall;
  res.fingerprint = sim.fingerprint();
  res.events = sim.eventsProcessed();
  res.stalled = sim.stalled();
  res.complete = ended || sim.done();

  // Finished + in-flight records by id. The finished ones are held compactly
  // by the simulator (RecordStore) and sorted by moving their index entries;
  // those still in flight are visited after them (summary) or merged in by
  // id (requests.csv). Nothing copies the finished records (issue 16).
  const std::vector<RequestRecord> open = sim.inFlightRecords();
  // Nothing in flight: the request pool's memory goes before the sort's keys
  // and the summary's buffer come (issue 16: B2's and B5's peak RSS). The
  // pool's chunks sit amid the heap, so glibc keeps their pages until asked
  // to hand them back: B5's pool (~0.5 GB at its high-water mark) would
  // otherwise stay resident under them.
  if (sim.releaseIdlePool()) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
  }
  sim.sortRecordsById();
  const RecordStore& finished = sim.records();
  // requests.csv's rows and tail_ttft.csv's samples come from the summary's
  // first pass (one decode of the records; issue 27).
  std::optional<AtomicFileWriter> requestsFile;
  std::optional<RequestsCsvWriter> requestsCsv;
  if (writing && want.requests) {
    folders.ensure(opt.outDir);  // (removed again if the run is cancelled)
    requestsFile.emplace(opt.outDir + "/requests.csv");
    requestsCsv.emplace(sim, requestsFile->stream());
  }
  // PASCAL's binned tail TTFT (bins of 256 reasoning tokens), for reasoning
  // workloads: (reasoning, ttft) of the finished records with a TTFT, by id.
  // Taken in the summary's pass when the records are few; a large run (B5)
  // takes them in a pass of their own after the summary's buffers are gone,
  // so its peak does not grow by 16 bytes a record (issue 16).
  const bool tailSamples = writing && want.summary && finished.size() <= (std::size_t{1} << 18);
  std::vector<std::pair<std::int64_t, double>> samples;
  if (tailSamples) samples.reserve(finished.size());
  std::function<void(const RequestRecord&)> visit;
  if (requestsCsv || tailSamples)
    visit = [&](const RequestRecord& r) {
      if (requestsCsv) requestsCsv->row(r);
      if (tailSamples)
        if (const auto t = r.finished ? r.ttft() : std::nullopt) samples.emplace_back(r.reasoning, *t);
    };
  res.summary = summarize(finished, open, sim.arrived(), sim.now(), s.slo, window ? &*window : nullptr, visit);
  if (requestsCsv) requestsCsv->flush();

  nlohmann::ordered_json j;
  j["servelab_version"] = kServeLabVersion;
  j["policy"] = s.policy.id;
  j["seed"] = s.run.seed;
  j["fingerprint"] = fingerprintHex(res.fingerprint);
  j["events"] = res.events;
  j["aborted"] = sim.aborted();
  j["stalled"] = sim.stalled();
  const nlohmann::ordered_json metrics = summaryToJson(res.summary);
  for (auto it = metrics.begin(); it != metrics.end(); ++it) j[it.key()] = it.value();
  // Disaggregated hand-offs, counted apart from migrations; only written by
  // runs that had some, so other summaries keep their exact bytes.
  if (sim.handoffs() > 0) j["handoffs"] = sim.handoffs();
  // Prefix caching (docs/metrics.md "Prefix cache"); only written when on.
  if (sim.prefixCaching()) j["prefix_cache"] = prefixCacheJson(sim.prefixCacheStats());
  j["cost"] = costJson(s, res.summary.tokens_per_s, res.summary.goodput_rps, res.summary.input_tokens_per_s);
  // Speculative decoding (docs/metrics.md "Speculative decoding"); only written when on.
  if (sim.speculative()) {
    std::int64_t drafted = 0, accepted = 0, steps = 0;
    for (int i = 0; i < sim.numInstances(); ++i) {
      const Instance& in = sim.instance(i);
      drafted += in.draftedTokens();
      accepted += in.acceptedTokens();
      steps += in.speculativeSteps();
    }
    const SpeculativeScenario& sp = s.cluster.speculative;
    nlohmann::ordered_json o;
    o["method"] = sp.method;
    o["k"] = sp.k;
    o["draft_tokens"] = drafted;
    o["accepted_tokens"] = accepted;
    o["acceptance_rate"] = drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0;
    o["tokens_per_step"] = steps > 0 ? static_cast<double>(steps + accepted) / static_cast<double>(steps) : 1.0;
    j["speculative"] = std::move(o);
  }
  // Serving front end (docs/engine.md "Serving front end"); only written
  // when on, so other summaries keep their exact bytes.
  if (const FrontEndSpec& fe = sim.config().frontend; fe.on()) {
    const Simulator::FrontEndStats& st = sim.frontEndStats();
    nlohmann::ordered_json fj;
    fj["settings"] = fe.toJson();
    fj["requests"] = st.requests;
    fj["inbound_mean_ms"] = st.requests > 0 ? nsToSeconds(st.inboundSum) * 1e3 / static_cast<double>(st.requests) : 0.0;
    fj["inbound_max_ms"] = nsToSeconds(st.inboundMax) * 1e3;
    fj["max_waiting"] = st.maxWaiting;
    fj["outbound_mean_ms"] =
        st.finished > 0 ? nsToSeconds(st.outboundSum) * 1e3 / static_cast<double>(st.finished) : 0.0;
    j["frontend"] = fj;
  }
  // Stop-and-copy migrations abandoned on a wait cycle (the request resumed
  // on its source; engine/transfer.cpp); likewise only written when nonzero.
  if (sim.migrationsAbandoned() > 0) j["migrations_abandoned"] = sim.migrationsAbandoned();
  // Work the policy injected (synthetic requests), reported apart from the
  // user's figures; only written by runs that had some.
  if (const Simulator::SyntheticCost& sc = sim.syntheticCost(); sc.injected > 0) {
    nlohmann::ordered_json sj;
    sj["requests"] = sc.injected;
    sj["completed"] = sc.completed;
    sj["aborted"] = sc.aborted;
    sj["prompt_tokens"] = sc.promptTokens;
    sj["output_tokens"] = sc.outputTokens;
    sj["gpu_s"] = sc.gpuSeconds;
    j["synthetic"] = sj;
  }
  j["wall_s"] = opt.recordWallTime ? nlohmann::ordered_json(wall) : nlohmann::ordered_json(nullptr);
  // Trace workloads (azure, burstgpt, mooncake readers): what the reader
  // read and skipped. Absent for synthetic workloads, so their summaries
  // are unchanged.
  if (run.traceStats) j["trace"] = traceStatsJson(*run.traceStats);
  // Closed loop (docs/workloads.md): the client count (as configured, and at
  // the end after live changes) and the requests issued. Absent otherwise.
  if (const auto* loop = dynamic_cast<const ClosedLoopWorkload*>(sim.workloadSource())) {
    nlohmann::ordered_json cj;
    cj["concurrency"] = s.workload.arrival.concurrency;
    cj["final_concurrency"] = loop->concurrency();
    cj["issued"] = loop->issued();
    j["closed_loop"] = cj;
  }
  // Figures only the policy knows (GlobalPolicy::report); absent when it has none.
  std::vector<PolicyReportEntry> report;
  sim.globalPolicy().report(report);
  if (!report.empty()) j["policy_report"] = policyReportJson(report);
  j["scenario"] = scenarioToJson(s);
  // A run with live changes (a GUI run, a saved run): the changes applied,
  // so summary.json alone says how to reproduce it. Absent otherwise.
  if (live && !live->log.empty()) j["live_changes"] = changeLogToJson(live->live.changes);
  res.summaryJson = j;

  // Build everything first, then write: nothing half-written on error.
  // requests.csv and trace.json are the exception in form, not in effect:
  // they are streamed into their temporaries (requests.csv never held as one
  // string: 10^7 rows are ~1.6 GB; trace.json not copied once more) and
  // renamed into place with the others, in the same order as before
  // (commitAll, util/atomic_file.h).
  struct Pending {
    std::string path, text;
    AtomicFileWriter* stream = nullptr;  // content already streamed
  };
  std::vector<Pending> files;
  if (writing) {
    if (want.summary) files.push_back({opt.outDir + "/summary.json", j.dump(2) + "\n"});
    if (want.requests) files.push_back({requestsFile->path(), {}, &*requestsFile});
    if (want.timeseries) files.push_back({opt.outDir + "/timeseries.csv", series.csv()});
  }
  if (traceFile) {
    trace.finishTo(traceFile->stream(), sim.now(), sim.globalPolicy().decisionLog(),
                   sim.globalPolicy().decisionCodeNames());
    files.push_back({traceFile->path(), {}, &*traceFile});
  }
  if (writing) {
    if (want.summary) {
      // PASCAL's binned tail TTFT (samples taken in the summary's pass above).
      if (!tailSamples) {
        samples.reserve(finished.size());
        for (const RequestRecord& r : finished)
          if (const auto t = r.finished ? r.ttft() : std::nullopt) samples.emplace_back(r.reasoning, *t);
      }
      const auto bins = binnedTailTtft(samples);
      if (!bins.empty()) files.push_back({opt.outDir + "/tail_ttft.csv", binnedTailCsv(bins)});
      // The policy's decision log (policies that keep one, e.g. pascal*): one
      // row per decision, codes named by the policy's table.
      if (const DecisionLog* dl = sim.globalPolicy().decisionLog())
        files.push_back({opt.outDir + "/decisions.csv", dl->csv(sim.globalPolicy().decisionCodeNames())});
    }
    // What the policy publishes about the cluster, at every probe (Arrow's
    // pool sizes, PASCAL's migrations …): only for policies that publish.
    if (want.timeseries)
      if (std::string ps = policySeries.csv(); !ps.empty())
        files.push_back({opt.outDir + "/policy_series.csv", std::move(ps)});
    folders.ensure(opt.outDir);
  }
  // One group commit: the fsyncs run together (issue 27: one at a time they
  // were ~50 ms of W3's `--out` wall time) and nothing is renamed unless
  // every file was written and synced.
  std::vector<AtomicFileWriter> texts;
  texts.reserve(files.size());
  std::vector<AtomicFileWriter*> group;
  for (Pending& f : files) {
    if (!f.stream) {
      texts.emplace_back(f.path);
      texts.back().stream().write(f.text.data(), static_cast<std::streamsize>(f.text.size()));
      std::string().swap(f.text);
    }
    group.push_back(f.stream ? f.stream : &texts.back());
    res.files.push_back(f.path);
  }
  stopIfCancelled();
  commitAll(group);
  folders.keep();
  if (opt.recordWallTime || !writing) res.summaryJson["wall_s"] = wall;
  return res;
}

}  // namespace

OutputSet parseOutputSet(const std::string& list, const std::string& option) {
  static const std::vector<std::string> names = {"summary", "requests", "timeseries", "trace", "all"};
  OutputSet o{false, false, false, false};
  if (list.empty())
    throw InputError(option + ": empty; give a comma-separated list of summary, requests, timeseries, trace (or all)");
  for (std::string_view part : split(list, ',')) {
    const std::string name(part);
    if (name == "summary") o.summary = true;
    else if (name == "requests") o.requests = true;
    else if (name == "timeseries") o.timeseries = true;
    else if (name == "trace") o.trace = true;
    else if (name == "all") o = OutputSet{};
    else {
      std::string msg = option + ": unknown output '" + name + "'";
      if (const auto near = didYouMean(name, names)) msg += " (did you mean '" + *near + "'?)";
      throw InputError(msg + "; choose from summary, requests, timeseries, trace, all");
    }
  }
  return o;
}

std::string outputSetString(const OutputSet& o) {
  std::string out;
  const auto add = [&out](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += name;
  };
  add(o.summary, "summary");
  add(o.requests, "requests");
  add(o.timeseries, "timeseries");
  add(o.trace, "trace");
  return out;
}

nlohmann::ordered_json costJson(const Scenario& s, double outputTokensPerS, double goodputRps, double inputTokensPerS) {
  const ClusterSpec& c = s.cluster;
  std::vector<PoolSpec> pools = c.pools;
  if (pools.empty()) pools.push_back({c.gpu, c.instances, c.tp, c.ep, c.attention_dp, std::nullopt});
  std::vector<PoolCost> costs;
  nlohmann::ordered_json prices = nlohmann::ordered_json::array();
  for (const PoolSpec& p : pools) {
    PoolCost pc{p.gpu, p.instances * p.tp, std::nullopt, gpuBoardPowerW(p.gpu)};
    std::string source;
    if (const auto set = p.price_usd_per_gpu_hour ? p.price_usd_per_gpu_hour : c.price_usd_per_gpu_hour) {
      pc.usdPerGpuHour = *set;
      source = "scenario";
    } else if (const GpuPrice* g = gpuPrice(p.gpu)) {
      pc.usdPerGpuHour = g->usdPerGpuHour;
      source = g->provider + " " + g->instance + ", " + g->date;
    }
    nlohmann::ordered_json e;
    e["gpu"] = p.gpu;
    e["gpus"] = pc.gpus;
    e["usd_per_gpu_hour"] = pc.usdPerGpuHour ? nlohmann::ordered_json(*pc.usdPerGpuHour) : nlohmann::ordered_json();
    e["price_source"] = source.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(source);
    e["board_power_w"] = pc.powerW ? nlohmann::ordered_json(*pc.powerW) : nlohmann::ordered_json();
    prices.push_back(std::move(e));
    costs.push_back(pc);
  }
  const CostMetrics m = costMetrics(costs, outputTokensPerS, goodputRps, inputTokensPerS);
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json j;
  j["gpus"] = m.gpus;
  j["usd_per_hour"] = opt(m.usdPerHour);
  j["usd_per_million_tokens"] = opt(m.usdPerMillionTokens);
  j["usd_per_million_input_tokens"] = opt(m.usdPerMillionInputTokens);
  j["tokens_per_joule"] = opt(m.tokensPerJoule);
  j["goodput_per_usd"] = opt(m.goodputPerUsd);
  j["pools"] = std::move(prices);
  return j;
}

nlohmann::ordered_json prefixCacheJson(const PrefixCacheStats& s) {
  nlohmann::ordered_json j;
  j["hit_rate"] = s.promptTokens > 0 ? static_cast<double>(s.cachedTokens) / static_cast<double>(s.promptTokens) : 0.0;
  j["hits"] = s.hits;
  j["prompt_tokens"] = s.promptTokens;
  j["cached_tokens"] = s.cachedTokens;
  j["recompute_cached_tokens"] = s.recomputeCachedTokens;
  j["evictions"] = s.evictions;
  j["offloaded"] = s.offloaded;
  j["offload_hits"] = s.offloadHits;
  j["offload_evictions"] = s.cpuEvictions;
  return j;
}

RunResult executeRun(PreparedRun& run, const RunOptions& opt) {
  Simulator& sim = *run.simulator;
  return runAndWrite(run, opt, [&sim] { return sim.step(); }, nullptr);
}

RunResult executeRun(LiveRun& live, const ChangeLog& log, const RunOptions& opt) {
  Simulator& sim = live.sim();
  LiveReplay rep{live, log, opt.checkAtEvents, 0, std::nullopt};
  return runAndWrite(*live.prepared, opt, [&] {
    rep.boundary();
    return sim.step();
  }, &rep);
}

}  // namespace sl
