#include "metrics/summary.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "util/radix_sort.h"

namespace sl {

double percentileSorted(std::span<const double> sorted, double p) {
  const std::size_t n = sorted.size();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(n - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= n) return sorted[n - 1];
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void sortAscending(std::vector<double>& values) {
  const std::size_t n = values.size();
  // Small arrays: std::sort is as fast. Very large ones (B5's 10^7): the
  // radix sort's second buffer (8 bytes a value) would raise the summary's
  // peak (issue 16's 1 GiB), so std::sort there too.
  constexpr std::size_t kMinRadix = 512, kMaxRadix = std::size_t{1} << 22;
  if (n < kMinRadix || n > kMaxRadix) {
    std::sort(values.begin(), values.end());
    return;
  }
  // Keys whose unsigned order is the doubles' order: negative values have
  // every bit flipped, the others their sign bit set.
  constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
  std::vector<std::uint64_t> keys, tmp;
  radixSortKeys(
      n,
      [&](std::size_t i) {
        const auto b = std::bit_cast<std::uint64_t>(values[i]);
        return (b & kSign) ? ~b : (b | kSign);
      },
      keys, tmp);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = keys[i];
    values[i] = std::bit_cast<double>((k & kSign) ? (k & ~kSign) : ~k);
  }
}

LatencyStats computeStats(std::vector<double>& values) {
  LatencyStats st;
  st.n = static_cast<std::int64_t>(values.size());
  if (values.empty()) return st;
  sortAscending(values);
  double sum = 0;
  for (double v : values) sum += v;
  st.mean = sum / static_cast<double>(values.size());
  st.p50 = percentileSorted(values, 0.50);
  st.p90 = percentileSorted(values, 0.90);
  st.p95 = percentileSorted(values, 0.95);
  st.p99 = percentileSorted(values, 0.99);
  st.max = values.back();
  return st;
}

bool meetsSlo(const RequestRecord& rec, const SloSpec& slo) {
  if (!rec.finished) return false;
  if (slo.ttft_s) {
    const auto v = rec.ttft();
    if (!v || *v > *slo.ttft_s) return false;
  }
  if (slo.tpot_s) {
    const auto v = rec.tpot();
    if (!v || *v > *slo.tpot_s) return false;
  }
  if (rec.hasQoe() && rec.qoe < slo.qoe_threshold) return false;
  return true;
}

const char* blockingPartName(int i) {
  static constexpr const char* kNames[BlockingBreakdown::kParts] = {"transfer",   "dest_wait",  "displaced",
                                                                    "preempted",  "dest_queue", "local_queue"};
  return kNames[i];
}

SimTime blockingPartNs(const RequestRecord& r, int i) {
  switch (i) {
    case 0: return r.blk_transfer;
    case 1: return r.blk_dest_wait;
    case 2: return r.blk_displaced;
    case 3: return r.blk_preempted;
    case 4: return r.blk_dest_queue;
    default: return r.blockingLocalQueue();
  }
}

namespace {

// `forEach(f)` calls f(const RequestRecord&) for every record, the same
// records on every call (every statistic below is independent of their
// order: the latencies are sorted before anything is summed, the other
// totals are integers). `records`: how many there are. `visit`, if set, sees
// every record once, as read, in the first pass.
template <class ForEach>
Summary summarizeRecords(ForEach&& forEachRecord, std::size_t records, std::int64_t arrived, SimTime sim_end,
                         const SloSpec& slo, const MeasureWindow* window,
                         const std::function<void(const RequestRecord&)>* visit) {
  Summary s;
  s.arrived = arrived;
  s.sim_s = nsToSeconds(sim_end);
  // A window: a record counts as finished (latency, QoE, SLO) when it
  // finished inside it; one finished before it counts as not finished.
  std::int64_t finishedAll = 0;
  const auto inWindow = [&](const RequestRecord& r, auto&& f) {
    if (window && r.finished && r.last_token < window->start) {
      RequestRecord before = r;
      before.finished = false;
      f(before);
    } else {
      f(r);
    }
  };
  const auto forEach = [&](auto&& f) {
    forEachRecord([&](const RequestRecord& r) { inWindow(r, f); });
  };
  // Memory (issue 16): the latency metrics' values go into buffers reserved
  // once, as many as `k`: every metric at once in the first pass when the
  // records are few (at most kOnePass: a buffer per metric then costs
  // < 2.1 MB each), else two (B5's 10^7: two values per record instead of
  // eight), the others in one more pass per two defined metrics. Each
  // metric sees the same values as one vector per metric grown by push_back
  // did, so every statistic keeps its bits. Each pass decodes every compact
  // record (issue 27: the first pass also takes the totals, the counts and
  // `visit`).
  constexpr int kMetrics = 8;
  enum { kTtft, kTpot, kTtfat, kReasoning, kE2e, kBlocking, kQueueing, kQoe };
  using Get = std::optional<double> (*)(const RequestRecord&);
  static constexpr std::array<Get, kMetrics> kGet = {
      [](const RequestRecord& r) { return r.ttft(); },
      [](const RequestRecord& r) { return r.tpot(); },
      [](const RequestRecord& r) { return r.ttfat(); },
      [](const RequestRecord& r) { return r.reasoningLatency(); },
      [](const RequestRecord& r) { return r.e2e(); },
      [](const RequestRecord& r) { return r.blockingLatency(); },
      [](const RequestRecord& r) { return std::optional<double>(r.queueingS()); },
      [](const RequestRecord& r) { return r.hasQoe() ? std::optional<double>(r.qoe) : std::nullopt; }};
  constexpr std::size_t kOnePass = std::size_t{1} << 18;
  const int k = records <= kOnePass ? kMetrics : 2;
  std::array<std::vector<double>, kMetrics> buf;
  for (int m = 0; m < k; ++m) buf[static_cast<std::size_t>(m)].reserve(records);
  std::array<std::int64_t, kMetrics> count{};
  forEachRecord([&](const RequestRecord& raw) {
    finishedAll += raw.finished;
    if (visit) (*visit)(raw);
    inWindow(raw, [&](const RequestRecord& r) {
      s.output_tokens += r.generated;
      if (r.first_token != kNoTime) s.input_tokens += r.input;
      s.preemptions += r.preemptions;
      s.migrations += r.migrations;
      if (!r.finished) return;
      ++s.finished;
      for (int m = 0; m < kMetrics; ++m)
        if (const std::optional<double> v = kGet[static_cast<std::size_t>(m)](r)) {
          ++count[static_cast<std::size_t>(m)];
          if (m < k) buf[static_cast<std::size_t>(m)].push_back(*v);
        }
      if (meetsSlo(r, slo)) ++s.slo_met;
    });
  });
  const std::int64_t nBlocking = count[kBlocking];
  // A metric's statistics from its values (sorted here).
  const auto finishMetric = [&](int m, std::vector<double>& v) {
    switch (m) {
      case kTtft: s.ttft_s = computeStats(v); break;
      case kTpot: s.tpot_s = computeStats(v); break;
      case kTtfat: s.ttfat_s = computeStats(v); break;
      case kReasoning: s.reasoning_s = computeStats(v); break;
      case kE2e: s.e2e_s = computeStats(v); break;
      case kBlocking: s.blocking_s = computeStats(v); break;
      case kQueueing: s.queueing_s = computeStats(v); break;
      default: {
        s.qoe_n = static_cast<std::int64_t>(v.size());
        if (v.empty()) break;
        sortAscending(v);
        double sum = 0;
        std::int64_t viol = 0;
        for (double q : v) {
          sum += q;
          if (q < slo.qoe_threshold) ++viol;
        }
        s.qoe_mean = sum / static_cast<double>(v.size());
        s.qoe_violation_rate = static_cast<double>(viol) / static_cast<double>(v.size());
      }
    }
  };
  for (int m = 0; m < k; ++m) finishMetric(m, buf[static_cast<std::size_t>(m)]);
  // The rest (k = 2 only), two defined metrics a pass.
  std::vector<int> rest;
  for (int m = k; m < kMetrics; ++m)
    if (count[static_cast<std::size_t>(m)] > 0) rest.push_back(m);
  for (std::size_t g = 0; g < rest.size(); g += static_cast<std::size_t>(k)) {
    const std::size_t end = std::min(rest.size(), g + static_cast<std::size_t>(k));
    for (std::size_t j = g; j < end; ++j) buf[j - g].clear();
    forEach([&](const RequestRecord& r) {
      if (!r.finished) return;
      for (std::size_t j = g; j < end; ++j)
        if (const std::optional<double> v = kGet[static_cast<std::size_t>(rest[j])](r)) buf[j - g].push_back(*v);
    });
    for (std::size_t j = g; j < end; ++j) finishMetric(rest[j], buf[j - g]);
  }
  std::vector<double>& values = buf[0];
  std::vector<double>& values2 = buf[1];
  s.in_flight = arrived - finishedAll;
  double span_s = s.sim_s;
  if (window) {
    s.windowed = true;
    s.window_start_s = nsToSeconds(window->start);
    s.window_end_s = nsToSeconds(window->end);
    span_s = nsToSeconds(window->end - window->start);
    s.arrived = arrived - window->arrivedBefore;
    s.output_tokens -= window->tokensBefore;
    s.input_tokens -= window->inputBefore;
    s.preemptions -= window->preemptionsBefore;
    s.migrations -= window->migrationsBefore;
  }
  const auto fill = [&](std::int64_t n, auto&& get, std::int64_t n2, auto&& get2) {
    values.clear();
    values2.clear();
    if (n > 0 || n2 > 0)
      forEach([&](const RequestRecord& r) {
        if (!r.finished) return;
        if (n > 0)
          if (const std::optional<double> v = get(r)) values.push_back(*v);
        if (n2 > 0)
          if (const std::optional<double> v = get2(r)) values2.push_back(*v);
      });
  };
  if (nBlocking > 0) {
    BlockingBreakdown& bd = s.blocking_breakdown;
    constexpr int kParts = BlockingBreakdown::kParts;
    bd.n = nBlocking;
    bd.tail_threshold_s = s.blocking_s.p99;
    std::array<SimTime, kParts> sum{}, tailSum{};
    forEach([&](const RequestRecord& r) {
      if (!r.finished || r.blocking < 0) return;
      const bool tail = nsToSeconds(r.blocking) >= bd.tail_threshold_s;
      bd.tail_n += tail;
      for (int i = 0; i < kParts; ++i) {
        const SimTime v = blockingPartNs(r, i);
        sum[static_cast<std::size_t>(i)] += v;
        if (tail) tailSum[static_cast<std::size_t>(i)] += v;
      }
    });
    for (std::size_t i = 0; i < kParts; ++i) {
      bd.mean_s[i] = nsToSeconds(sum[i]) / static_cast<double>(bd.n);
      bd.tail_mean_s[i] = bd.tail_n > 0 ? nsToSeconds(tailSum[i]) / static_cast<double>(bd.tail_n) : 0.0;
    }
    for (int i = 0; i < kParts; i += 2) {
      const auto part = [i](int k) {
        return [k](const RequestRecord& r) {
          return r.blocking >= 0 ? std::optional<double>(nsToSeconds(blockingPartNs(r, k))) : std::nullopt;
        };
      };
      fill(nBlocking, part(i), nBlocking, part(i + 1));
      bd.p99_s[static_cast<std::size_t>(i)] = computeStats(values).p99;
      bd.p99_s[static_cast<std::size_t>(i) + 1] = computeStats(values2).p99;
    }
  }
  if (s.finished > 0) s.slo_attainment = static_cast<double>(s.slo_met) / static_cast<double>(s.finished);
  if (span_s > 0) {
    s.goodput_rps = static_cast<double>(s.slo_met) / span_s;
    s.tokens_per_s = static_cast<double>(s.output_tokens) / span_s;
    s.input_tokens_per_s = static_cast<double>(s.input_tokens) / span_s;
    s.requests_per_s = static_cast<double>(s.finished) / span_s;
  }
  return s;
}

}  // namespace

Summary summarize(const std::vector<RequestRecord>& records, std::int64_t arrived,
                  SimTime sim_end, const SloSpec& slo, const MeasureWindow* window) {
  return summarizeRecords(
      [&](auto&& f) {
        for (const RequestRecord& r : records) f(r);
      },
      records.size(), arrived, sim_end, slo, window, nullptr);
}

Summary summarize(const RecordStore& records, std::span<const RequestRecord> more, std::int64_t arrived,
                  SimTime sim_end, const SloSpec& slo, const MeasureWindow* window,
                  const std::function<void(const RequestRecord&)>& visit) {
  return summarizeRecords(
      [&](auto&& f) {
        // Merged by id, as std::merge would order the two (requests.csv's
        // order when `visit` writes it).
        std::size_t i = 0;
        const std::size_t n = records.size();
        for (const RequestRecord& o : more) {
          for (; i < n && records.idAt(i) <= o.id; ++i) f(records[i]);
          f(o);
        }
        for (; i < n; ++i) f(records[i]);
      },
      records.size() + more.size(), arrived, sim_end, slo, window, visit ? &visit : nullptr);
}

namespace {
nlohmann::ordered_json num(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}
nlohmann::ordered_json statsJson(const LatencyStats& st) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const bool has = st.n > 0;
  j["mean"] = has ? num(st.mean) : nullptr;
  j["p50"] = has ? num(st.p50) : nullptr;
  j["p90"] = has ? num(st.p90) : nullptr;
  j["p95"] = has ? num(st.p95) : nullptr;
  j["p99"] = has ? num(st.p99) : nullptr;
  j["max"] = has ? num(st.max) : nullptr;
  j["n"] = st.n;
  return j;
}
}  // namespace

nlohmann::ordered_json summaryToJson(const Summary& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["requests"] = {{"arrived", s.arrived}, {"finished", s.finished}, {"in_flight", s.in_flight}};
  j["ttft_s"] = statsJson(s.ttft_s);
  j["tpot_s"] = statsJson(s.tpot_s);
  j["ttfat_s"] = statsJson(s.ttfat_s);
  j["reasoning_s"] = statsJson(s.reasoning_s);
  j["e2e_s"] = statsJson(s.e2e_s);
  j["blocking_s"] = statsJson(s.blocking_s);
  if (const BlockingBreakdown& bd = s.blocking_breakdown; bd.n > 0) {
    const auto parts = [](const std::array<double, BlockingBreakdown::kParts>& v) {
      nlohmann::ordered_json p = nlohmann::ordered_json::object();
      for (int i = 0; i < BlockingBreakdown::kParts; ++i) p[blockingPartName(i)] = num(v[static_cast<std::size_t>(i)]);
      return p;
    };
    nlohmann::ordered_json b = nlohmann::ordered_json::object();
    b["n"] = bd.n;
    b["mean_s"] = parts(bd.mean_s);
    b["p99_s"] = parts(bd.p99_s);
    b["p99_tail"] = {{"threshold_s", num(bd.tail_threshold_s)}, {"n", bd.tail_n}, {"mean_s", parts(bd.tail_mean_s)}};
    j["blocking_breakdown"] = std::move(b);
  }
  j["queueing_s"] = statsJson(s.queueing_s);
  nlohmann::ordered_json q = nlohmann::ordered_json::object();
  q["mean"] = num(s.qoe_mean);
  q["violation_rate"] = num(s.qoe_violation_rate);
  q["n"] = s.qoe_n;
  j["qoe"] = q;
  j["slo_attainment"] = num(s.slo_attainment);
  j["goodput_rps"] = num(s.goodput_rps);
  nlohmann::ordered_json t = nlohmann::ordered_json::object();
  t["tokens_per_s"] = num(s.tokens_per_s);
  t["input_tokens_per_s"] = num(s.input_tokens_per_s);
  t["requests_per_s"] = num(s.requests_per_s);
  j["throughput"] = t;
  j["preemptions"] = s.preemptions;
  j["migrations"] = s.migrations;
  j["sim_s"] = num(s.sim_s);
  if (s.windowed) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    m["start_s"] = num(s.window_start_s);
    m["end_s"] = num(s.window_end_s);
    m["window_s"] = num(s.window_end_s - s.window_start_s);
    j["measure"] = m;
  }
  return j;
}

namespace {
void padLeft(std::string& out, const std::string& cell, std::size_t width) {
  if (cell.size() < width) out.append(width - cell.size(), ' ');
  out += cell;
}
std::string fixed(double v, int decimals) {
  std::string s;
  if (!std::isfinite(v)) return "-";
  appendFixed(v, decimals, s);
  return s;
}
std::string integer(std::int64_t v) {
  std::string s;
  appendInt(v, s);
  return s;
}
}  // namespace

std::string formatSummaryTable(const Summary& s) {
  std::string out;
  constexpr std::size_t kName = 16, kCol = 12;
  out += "metric (ms)";
  out.append(kName - 11, ' ');
  for (const char* h : {"n", "mean", "p50", "p90", "p99", "max"}) padLeft(out, h, kCol);
  out += '\n';
  const std::pair<const char*, const LatencyStats*> rows[] = {
      {"ttft", &s.ttft_s},       {"tpot", &s.tpot_s},         {"ttfat", &s.ttfat_s},
      {"reasoning", &s.reasoning_s}, {"blocking", &s.blocking_s}, {"queueing", &s.queueing_s},
      {"e2e", &s.e2e_s}};
  for (const auto& [name, st] : rows) {
    const std::string n(name);
    out += n;
    out.append(kName - n.size(), ' ');
    padLeft(out, integer(st->n), kCol);
    for (double v : {st->mean, st->p50, st->p90, st->p99, st->max})
      padLeft(out, st->n > 0 ? fixed(v * 1e3, 1) : "-", kCol);
    out += '\n';
  }
  out += '\n';
  out += "requests        arrived " + integer(s.arrived) + ", finished " + integer(s.finished) +
         ", in flight " + integer(s.in_flight) + '\n';
  out += "QoE             mean " + fixed(s.qoe_mean, 4) + ", violation rate " +
         (std::isfinite(s.qoe_violation_rate) ? fixed(s.qoe_violation_rate * 100, 2) + " %" : "-") +
         " (n " + integer(s.qoe_n) + ")\n";
  out += "SLO attainment  " +
         (std::isfinite(s.slo_attainment) ? fixed(s.slo_attainment * 100, 2) + " %" : std::string("-")) +
         ", goodput " + fixed(s.goodput_rps, 3) + " req/s\n";
  out += "throughput      " + fixed(s.tokens_per_s, 1) + " tok/s out, " + fixed(s.input_tokens_per_s, 1) +
         " tok/s in, " + fixed(s.requests_per_s, 3) + " req/s\n";
  out += "preemptions     " + integer(s.preemptions) + ", migrations " + integer(s.migrations) +
         ", simulated " + fixed(s.sim_s, 3) + " s\n";
  if (s.windowed)
    out += "window          [" + fixed(s.window_start_s, 3) + ", " + fixed(s.window_end_s, 3) +
           ") s: metrics count only what happened in it (drain excluded)\n";
  return out;
}

}  // namespace sl
