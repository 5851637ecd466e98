#pragma once
// Compare mode's numbers (50-gui.md "Compare mode"), apart from the widgets:
// one CompareRunStats per policy accumulates what its SimController
// publishes (finished requests, frames) into the summary-table row, with the
// same definitions as metrics/summary (TTFT percentiles over finished
// requests, QoE violation share of the scored ones, output tokens per
// simulated second, engine totals of migrations and preemptions). Deltas are
// in % against the first (reference) policy.
#include <QString>
#include <QStringList>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "scenario/spec.h"

namespace sl::ui {

struct FinishedPoint;
struct LiveFrame;

inline constexpr int kCompareMinPolicies = 2;
inline constexpr int kCompareMaxPolicies = 4;

/// One row of the summary table; NaN = not defined yet (e.g. nothing finished).
struct CompareRow {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  QString policy;
  double simS = 0;        // the run's simulated clock: the compare toolbar's time (issue 50)
  double lastEventS = 0;  // its engine's last event (summary.json's sim_s, the throughput's span)
  std::int64_t arrived = 0, finished = 0;
  double ttftP50 = kNaN, ttftP99 = kNaN;
  /// PASCAL's binned tail TTFT (metrics/binned_tail.h): the mean over the
  /// 256-token reasoning-length bins of each bin's tail (p99, or p95 / p90 /
  /// max in small bins), as tail_ttft_mean_s of `reproduce pascal-fig10`.
  double tailTtft = kNaN;
  double qoeViolation = kNaN;  // share of scored finished requests with QoE < threshold
  double tokensPerS = kNaN;    // output tokens (reasoning + answer) per simulated second
  std::int64_t migrations = 0, preemptions = 0;
};

enum class CompareMetric { TtftP50, TtftP99, TailTtft, QoeViolation, Throughput, Migrations, Preemptions };
/// Which way is better: lower (latency, violations, preemptions), higher
/// (throughput) or neither (migrations are a means, not a cost or a gain).
enum class Better { Lower, Higher, Neither };
/// How a delta reads: better (green), worse (red), equal, or not applicable.
enum class Verdict { Better, Worse, Same, None };

struct CompareMetricInfo {
  CompareMetric metric;
  const char* key;     // CSV column stem, e.g. "ttft_p99_s"
  const char* header;  // table header, e.g. "TTFT p99"
  Better better;
};
const std::vector<CompareMetricInfo>& compareMetrics();
/// Whether the table shows `m` for a comparison of `policies`: the binned
/// tail TTFT only where a PASCAL policy is compared (its paper's metric,
/// which the overall p99 can contradict); every other metric always.
bool compareMetricShown(CompareMetric m, const QStringList& policies);

double metricValue(const CompareRow& r, CompareMetric m);
/// (v − ref) / |ref| × 100; 0 when both are 0; NaN when either is undefined
/// or ref is 0 and v is not.
double deltaPct(double v, double ref);
Verdict verdict(double deltaPercent, Better better);

/// Text of a value in the table ("0.412 s", "12.5%", "3,210 tok/s", "17").
QString formatMetric(CompareMetric m, double v);
/// "+12.3%", "−4.0%", "±0%"; "–" when undefined.
QString formatDelta(double pct);

/// The scenario of one compared run: `base` with policy `id`; the knobs are
/// kept when `id` is the scenario's own policy, defaults otherwise (as
/// `servelab-cli compare`).
Scenario scenarioForPolicy(const Scenario& base, const std::string& id);

/// Checks a policy list for compare mode: 2–4 known, distinct ids. Returns ""
/// when fine, else a message naming the offending entry.
QString checkComparePolicies(const QStringList& ids);

/// A hint when the comparison cannot tell the policies apart (empty when it
/// can, or too early to say): no run ever ran short of KV memory, or every
/// run's TTFT p99 is within 2 % of the reference.
QString compareHint(const std::vector<CompareRow>& rows);
/// The default selection: the scenario's policy, then fcfs and rr when they differ.
QStringList defaultComparePolicies(const QString& current);

/// Accumulates one run's published data into its table row.
class CompareRunStats {
public:
  explicit CompareRunStats(QString policy = {}, double qoeThreshold = 0.95);
  void clear();
  void addFinished(const std::vector<FinishedPoint>& points);
  void setFrame(const LiveFrame& f);
  /// The row as of the last frame (percentiles recomputed when needed).
  CompareRow row() const;

private:
  QString policy_;
  double qoeThreshold_ = 0.95;
  mutable std::vector<double> ttft_;
  mutable bool sorted_ = true;
  std::vector<std::pair<std::int64_t, double>> tail_;  // (reasoning tokens, TTFT s)
  mutable double tailValue_ = CompareRow::kNaN;
  mutable std::size_t tailFor_ = 0;  // tail_.size() when tailValue_ was computed
  std::int64_t scored_ = 0, violated_ = 0;
  CompareRow frame_;  // counters from the latest frame
  std::int64_t tokens_ = 0;
};

/// The summary table as CSV: a header, then one line per row with each
/// metric's value and its delta (%) against rows[0]; undefined cells empty.
std::string compareCsv(const std::vector<CompareRow>& rows);

}  // namespace sl::ui
