#include "metrics/summary.h"

#include <algorithm>
#include <cmath>

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

LatencyStats computeStats(std::vector<double>& values) {
  LatencyStats st;
  st.n = static_cast<std::int64_t>(values.size());
  if (values.empty()) return st;
  std::sort(values.begin(), values.end());
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

namespace {

// `forEach(f)` calls f(const RequestRecord&) for every record, the same
// records in the same order on every call.
template <class ForEach>
Summary summarizeRecords(ForEach&& forEachRecord, std::int64_t arrived, SimTime sim_end, const SloSpec& slo,
                         const MeasureWindow* window) {
  Summary s;
  s.arrived = arrived;
  s.sim_s = nsToSeconds(sim_end);
  // A window: a record counts as finished (latency, QoE, SLO) when it
  // finished inside it; one finished before it counts as not finished.
  std::int64_t finishedAll = 0;
  const auto forEach = [&](auto&& f) {
    forEachRecord([&](const RequestRecord& r) {
      if (window && r.finished && r.last_token < window->start) {
        RequestRecord before = r;
        before.finished = false;
        f(before);
      } else {
        f(r);
      }
    });
  };
  // Memory (issue 16): one pass for the totals and each metric's count, then
  // one pass per two defined metrics into two buffers reserved once. Each
  // metric sees the same values in the same (record) order as one vector per
  // metric grown by push_back did, so every statistic keeps its bits; the
  // peak is two values per finished request instead of seven, without the
  // doubling growth's freed-but-retained buffers.
  std::int64_t nTtft = 0, nTpot = 0, nTtfat = 0, nReasoning = 0, nE2e = 0, nBlocking = 0, nQoe = 0;
  forEachRecord([&](const RequestRecord& r) { finishedAll += r.finished; });
  forEach([&](const RequestRecord& r) {
    s.output_tokens += r.generated;
    s.preemptions += r.preemptions;
    s.migrations += r.migrations;
    if (!r.finished) return;
    ++s.finished;
    nTtft += r.ttft().has_value();
    nTpot += r.tpot().has_value();
    nTtfat += r.ttfat().has_value();
    nReasoning += r.reasoningLatency().has_value();
    nE2e += r.e2e().has_value();
    nBlocking += r.blockingLatency().has_value();
    nQoe += r.hasQoe();
    if (meetsSlo(r, slo)) ++s.slo_met;
  });
  s.in_flight = arrived - finishedAll;
  double span_s = s.sim_s;
  if (window) {
    s.windowed = true;
    s.window_start_s = nsToSeconds(window->start);
    s.window_end_s = nsToSeconds(window->end);
    span_s = nsToSeconds(window->end - window->start);
    s.arrived = arrived - window->arrivedBefore;
    s.output_tokens -= window->tokensBefore;
    s.preemptions -= window->preemptionsBefore;
    s.migrations -= window->migrationsBefore;
  }
  // Two metrics per pass (each pass decodes every record when they are
  // held compactly): two buffers of one value per finished request.
  std::vector<double> values, values2;
  values.reserve(static_cast<std::size_t>(s.finished));
  values2.reserve(static_cast<std::size_t>(s.finished));
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
  const auto stats = [&](LatencyStats& a, std::int64_t n, auto&& get, LatencyStats& b, std::int64_t n2, auto&& get2) {
    fill(n, get, n2, get2);
    a = computeStats(values);
    b = computeStats(values2);
  };
  stats(s.ttft_s, nTtft, [](const RequestRecord& r) { return r.ttft(); },
        s.tpot_s, nTpot, [](const RequestRecord& r) { return r.tpot(); });
  stats(s.ttfat_s, nTtfat, [](const RequestRecord& r) { return r.ttfat(); },
        s.reasoning_s, nReasoning, [](const RequestRecord& r) { return r.reasoningLatency(); });
  stats(s.e2e_s, nE2e, [](const RequestRecord& r) { return r.e2e(); },
        s.blocking_s, nBlocking, [](const RequestRecord& r) { return r.blockingLatency(); });
  fill(s.finished, [](const RequestRecord& r) { return std::optional<double>(r.queueingS()); },
       nQoe, [](const RequestRecord& r) { return r.hasQoe() ? std::optional<double>(r.qoe) : std::nullopt; });
  s.queueing_s = computeStats(values);

  std::vector<double>& qoe = values2;
  s.qoe_n = static_cast<std::int64_t>(qoe.size());
  if (!qoe.empty()) {
    std::sort(qoe.begin(), qoe.end());
    double sum = 0;
    std::int64_t viol = 0;
    for (double q : qoe) {
      sum += q;
      if (q < slo.qoe_threshold) ++viol;
    }
    s.qoe_mean = sum / static_cast<double>(qoe.size());
    s.qoe_violation_rate = static_cast<double>(viol) / static_cast<double>(qoe.size());
  }
  if (s.finished > 0) s.slo_attainment = static_cast<double>(s.slo_met) / static_cast<double>(s.finished);
  if (span_s > 0) {
    s.goodput_rps = static_cast<double>(s.slo_met) / span_s;
    s.tokens_per_s = static_cast<double>(s.output_tokens) / span_s;
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
      arrived, sim_end, slo, window);
}

Summary summarize(const RecordStore& records, std::span<const RequestRecord> more, std::int64_t arrived,
                  SimTime sim_end, const SloSpec& slo, const MeasureWindow* window) {
  return summarizeRecords(
      [&](auto&& f) {
        records.forEach(f);
        for (const RequestRecord& r : more) f(r);
      },
      arrived, sim_end, slo, window);
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
  out += "throughput      " + fixed(s.tokens_per_s, 1) + " tok/s, " + fixed(s.requests_per_s, 3) +
         " req/s\n";
  out += "preemptions     " + integer(s.preemptions) + ", migrations " + integer(s.migrations) +
         ", simulated " + fixed(s.sim_s, 3) + " s\n";
  if (s.windowed)
    out += "window          [" + fixed(s.window_start_s, 3) + ", " + fixed(s.window_end_s, 3) +
           ") s: metrics count only what happened in it (drain excluded)\n";
  return out;
}

}  // namespace sl
