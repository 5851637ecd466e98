#pragma once
// Aggregate metrics of a run (40-metrics.md) and their summary.json form
// (60-cli-formats.md).
//
// Percentiles are exact (full sort) with LINEAR interpolation between the two
// closest ranks (numpy's default, Hyndman–Fan type 7): for sorted x[0..n-1],
// h = (n−1)·p, p_q = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/record_store.h"
#include "metrics/request_record.h"
#include "scenario/spec.h"
#include "util/time.h"

namespace sl {

struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  std::int64_t n = 0;  // samples; all values are 0 (JSON null) when n = 0
};

/// Linear-interpolated percentile of an ascending array; p in [0, 1].
/// Returns NaN for an empty array.
double percentileSorted(std::span<const double> sorted, double p);

/// Sorts `values` ascending in place: the order std::sort gives by `<` for
/// every value but NaN (an LSD radix sort on the bits, issue 27: 3-5x
/// fewer instructions than std::sort at 10^5 values). Values that compare
/// equal have equal bits except -0.0 and +0.0 (here -0.0 first).
void sortAscending(std::vector<double>& values);

/// Sorts `values` in place and fills the stats (mean summed in sorted order,
/// so the result does not depend on the input order).
LatencyStats computeStats(std::vector<double>& values);

/// Does a finished request meet every SLO the scenario sets?
/// TTFT <= ttft_s if set; TPOT <= tpot_s if set; QoE >= qoe_threshold if the
/// request's answer stream was scored (rec.hasQoe()). Unfinished: false.
bool meetsSlo(const RequestRecord& rec, const SloSpec& slo);
/// Scored QoE below the threshold.
inline bool qoeViolated(const RequestRecord& rec, const SloSpec& slo) {
  return rec.hasQoe() && rec.qoe < slo.qoe_threshold;
}

/// A measurement window [start, end) and the run's totals when it opened
/// (docs/metrics.md "Measurement window"). Totals are over every request
/// that had arrived by `start` (finished or in flight).
struct MeasureWindow {
  SimTime start = 0, end = 0;
  std::int64_t arrivedBefore = 0;      // requests arrived before start
  std::int64_t tokensBefore = 0;       // output tokens generated before start
  std::int64_t inputBefore = 0;        // prompt tokens of requests prefilled (first token) before start
  std::int64_t preemptionsBefore = 0;  // preemptions before start
  std::int64_t migrationsBefore = 0;   // migrations before start
};

/// Where the blocking latency went (docs/metrics.md "Blocking breakdown"),
/// over the finished requests with blocking defined. Part i of a record is
/// blockingPartNs(r, i); the parts sum to its blocking exactly, so the means
/// sum to blocking_s.mean and the tail means to the tail's mean blocking.
struct BlockingBreakdown {
  static constexpr int kParts = 6;
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::int64_t n = 0;
  std::array<double, kParts> mean_s{};       // each part's mean over all n
  std::array<double, kParts> p99_s{};        // each part's own p99 (these do not sum)
  double tail_threshold_s = kNaN;            // blocking_s.p99
  std::int64_t tail_n = 0;                   // requests with blocking >= the threshold
  std::array<double, kParts> tail_mean_s{};  // each part's mean over those
};
/// "transfer", "dest_wait", "displaced", "preempted", "dest_queue", "local_queue".
const char* blockingPartName(int i);
/// Part i of r's blocking (ns); 0 while blocking is undefined.
SimTime blockingPartNs(const RequestRecord& r, int i);

struct Summary {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  std::int64_t arrived = 0, finished = 0, in_flight = 0;
  // Over finished requests with the metric defined.
  LatencyStats ttft_s, tpot_s, ttfat_s, reasoning_s, e2e_s, blocking_s, queueing_s;
  BlockingBreakdown blocking_breakdown;  // n = 0 when blocking_s.n = 0
  std::int64_t qoe_n = 0;             // finished requests with a scored QoE
  double qoe_mean = kNaN;             // NaN (null) when qoe_n = 0
  double qoe_violation_rate = kNaN;   // share of scored with QoE < threshold
  std::int64_t slo_met = 0;           // finished requests meeting every set SLO
  double slo_attainment = kNaN;       // slo_met / finished; NaN when finished = 0
  double goodput_rps = kNaN;          // slo_met / sim_s
  std::int64_t output_tokens = 0;     // Σ generated (reasoning + answer) over all records
  double tokens_per_s = kNaN;         // output_tokens / sim_s
  std::int64_t input_tokens = 0;      // Σ prompt tokens of the records whose prefill is done (first token out)
  double input_tokens_per_s = kNaN;   // input_tokens / sim_s
  double requests_per_s = kNaN;       // finished / sim_s
  std::int64_t preemptions = 0, migrations = 0;  // over all records
  double sim_s = 0;
  // Measurement window (run.measure): latency/QoE/SLO over requests that
  // finished in [start, end); arrived, tokens, preemptions and migrations
  // counted in it; rates over its length. in_flight: at the run's end.
  bool windowed = false;
  double window_start_s = 0, window_end_s = 0;
};

/// `records`: finished requests plus those still in flight at the end (only
/// finished ones feed latency/QoE/SLO; all feed tokens, preemptions,
/// migrations). `arrived`: requests that arrived during the run.
/// `sim_end`: simulated end time (the run spans [0, sim_end]).
/// With `window`: only what happens in it counts (see Summary::windowed);
/// `arrived` is then the run's total, window->arrivedBefore is subtracted.
Summary summarize(const std::vector<RequestRecord>& records, std::int64_t arrived,
                  SimTime sim_end, const SloSpec& slo, const MeasureWindow* window = nullptr);
/// The same over `records` followed by `more` (e.g. a run's finished
/// records, then those still in flight): each pass decodes the compact
/// records one at a time, so the peak is the store plus one value per
/// finished request. Every statistic is the one summarize() gives for the
/// two concatenated into one vector.
///
/// `records` and `more` must each be ascending by id: the records are
/// visited merged by id (every statistic is independent of the order).
/// `visit`, when set, is called once for every record in that order, as
/// read from the store (before any window adjustment), during the summary's
/// first pass: requests.csv is written from the summary's own decode
/// (issue 27).
Summary summarize(const RecordStore& records, std::span<const RequestRecord> more, std::int64_t arrived,
                  SimTime sim_end, const SloSpec& slo, const MeasureWindow* window = nullptr,
                  const std::function<void(const RequestRecord&)>& visit = {});

/// summary.json metric groups, stable key order:
/// requests{arrived,finished,in_flight}, ttft_s, tpot_s, ttfat_s, reasoning_s,
/// e2e_s, blocking_s, [blocking_breakdown when blocking_s.n > 0: {n,
/// mean_s{part..}, p99_s{part..}, p99_tail{threshold_s,n,mean_s{part..}}}],
/// queueing_s (each {mean,p50,p90,p95,p99,max,n}; values null when n = 0), qoe{mean,violation_rate,n}, slo_attainment,
/// goodput_rps, throughput{tokens_per_s,input_tokens_per_s,requests_per_s}, preemptions, migrations, sim_s; windowed
/// runs add measure{start_s,end_s,window_s} (absent otherwise). NaN values are written as null. (wall_s, scenario echo
/// etc. are added by the output module.)
nlohmann::ordered_json summaryToJson(const Summary& s);

/// Plain-text table for the CLI: per latency metric n, mean, p50, p90, p99,
/// max in milliseconds; then QoE, SLO attainment, throughput.
std::string formatSummaryTable(const Summary& s);

}  // namespace sl
