#include "ui/compare/compare_model.h"

#include <QLocale>
#include <QSet>

#include <algorithm>
#include <cmath>

#include "metrics/binned_tail.h"
#include "metrics/request_record.h"
#include "metrics/summary.h"
#include "policy/registry.h"
#include "ui/controller/sim_controller.h"
#include "util/error.h"

namespace sl::ui {

const std::vector<CompareMetricInfo>& compareMetrics() {
  static const std::vector<CompareMetricInfo> m = {
      {CompareMetric::TtftP50, "ttft_p50_s", "TTFT p50", Better::Lower},
      {CompareMetric::TtftP99, "ttft_p99_s", "TTFT p99", Better::Lower},
      {CompareMetric::TailTtft, "tail_ttft_mean_s", "Tail TTFT", Better::Lower},
      {CompareMetric::QoeViolation, "qoe_violation_rate", "QoE violations", Better::Lower},
      {CompareMetric::Throughput, "tokens_per_s", "Throughput", Better::Higher},
      {CompareMetric::Migrations, "migrations", "Migrations", Better::Neither},
      {CompareMetric::Preemptions, "preemptions", "Preemptions", Better::Lower},
  };
  return m;
}

double metricValue(const CompareRow& r, CompareMetric m) {
  switch (m) {
    case CompareMetric::TtftP50: return r.ttftP50;
    case CompareMetric::TtftP99: return r.ttftP99;
    case CompareMetric::TailTtft: return r.tailTtft;
    case CompareMetric::QoeViolation: return r.qoeViolation;
    case CompareMetric::Throughput: return r.tokensPerS;
    case CompareMetric::Migrations: return static_cast<double>(r.migrations);
    case CompareMetric::Preemptions: return static_cast<double>(r.preemptions);
  }
  return CompareRow::kNaN;
}

bool compareMetricShown(CompareMetric m, const QStringList& policies) {
  if (m != CompareMetric::TailTtft) return true;
  return std::any_of(policies.begin(), policies.end(), [](const QString& p) { return p.trimmed().startsWith("pascal"); });
}

double deltaPct(double v, double ref) {
  if (!std::isfinite(v) || !std::isfinite(ref)) return CompareRow::kNaN;
  if (ref == 0) return v == 0 ? 0.0 : CompareRow::kNaN;
  return (v - ref) / std::fabs(ref) * 100.0;
}

Verdict verdict(double d, Better better) {
  if (!std::isfinite(d)) return Verdict::None;
  // Below 0.05% the cell reads "±0.0%": call it equal.
  if (std::fabs(d) < 0.05) return Verdict::Same;
  switch (better) {
    case Better::Lower: return d < 0 ? Verdict::Better : Verdict::Worse;
    case Better::Higher: return d > 0 ? Verdict::Better : Verdict::Worse;
    case Better::Neither: return Verdict::None;
  }
  return Verdict::None;
}

QString formatMetric(CompareMetric m, double v) {
  if (!std::isfinite(v)) return QStringLiteral("–");
  const QLocale c(QLocale::English);
  switch (m) {
    case CompareMetric::TtftP50:
    case CompareMetric::TtftP99:
    case CompareMetric::TailTtft:
      return QString::number(v, 'f', v < 10 ? 3 : v < 100 ? 2 : 1) + " s";
    case CompareMetric::QoeViolation: return QString::number(v * 100.0, 'f', 1) + "%";
    case CompareMetric::Throughput: return c.toString(v, 'f', 0) + " tok/s";
    case CompareMetric::Migrations:
    case CompareMetric::Preemptions: return c.toString(static_cast<qlonglong>(std::llround(v)));
  }
  return {};
}

QString formatDelta(double pct) {
  if (!std::isfinite(pct)) return QStringLiteral("–");
  if (std::fabs(pct) < 0.05) return QString::fromUtf8("±0.0%");
  const QString num = QString::number(std::fabs(pct), 'f', std::fabs(pct) < 100 ? 1 : 0);
  return (pct > 0 ? QStringLiteral("+") : QString::fromUtf8("−")) + num + "%";
}

Scenario scenarioForPolicy(const Scenario& base, const std::string& id) {
  Scenario s = base;
  s.policy.id = id;
  if (id != base.policy.id) s.policy.knobs = nlohmann::json::object();
  return s;
}

QString checkComparePolicies(const QStringList& ids) {
  if (ids.size() < kCompareMinPolicies || ids.size() > kCompareMaxPolicies)
    return QObject::tr("compare %1 to %2 policies (got %3)")
        .arg(kCompareMinPolicies)
        .arg(kCompareMaxPolicies)
        .arg(ids.size());
  QSet<QString> seen;
  for (const QString& id : ids) {
    if (id.trimmed().isEmpty()) return QObject::tr("empty policy id in the list");
    try {
      (void)policyInfo(id.trimmed().toStdString());
    } catch (const InputError& e) {
      return QString::fromStdString(e.what());
    }
    if (seen.contains(id.trimmed())) return QObject::tr("policy '%1' is listed twice").arg(id.trimmed());
    seen.insert(id.trimmed());
  }
  return {};
}

QStringList defaultComparePolicies(const QString& current) {
  QStringList out;
  if (!current.isEmpty()) out << current;
  for (const QString& p : {QStringLiteral("fcfs"), QStringLiteral("rr")})
    if (!out.contains(p)) out << p;
  return out.mid(0, kCompareMaxPolicies);
}

// ------------------------------------------------------------------ stats

CompareRunStats::CompareRunStats(QString policy, double qoeThreshold)
    : policy_(std::move(policy)), qoeThreshold_(qoeThreshold) {
  clear();
}

void CompareRunStats::clear() {
  ttft_.clear();
  sorted_ = true;
  tail_.clear();
  tailValue_ = CompareRow::kNaN;
  tailFor_ = 0;
  scored_ = violated_ = 0;
  frame_ = CompareRow{};
  frame_.policy = policy_;
  tokens_ = 0;
}

void CompareRunStats::addFinished(const std::vector<FinishedPoint>& points) {
  for (const FinishedPoint& p : points) {
    if (p.ttftS >= 0) {
      ttft_.push_back(p.ttftS);
      sorted_ = false;
      tail_.emplace_back(static_cast<std::int64_t>(std::llround(p.reasoning)), p.ttftS);
    }
    if (p.qoe >= 0) {
      ++scored_;
      if (p.qoe < qoeThreshold_) ++violated_;
    }
  }
}

void CompareRunStats::setFrame(const LiveFrame& f) {
  const Snapshot& s = f.snapshot;
  frame_.simS = f.clockS;
  frame_.lastEventS = nsToSeconds(s.now);
  frame_.arrived = s.arrived;
  frame_.finished = s.finished;
  frame_.migrations = f.migrations;
  frame_.preemptions = f.preemptions;
  tokens_ = 0;
  for (const InstanceSnapshot& i : s.instances) tokens_ += i.tokensProduced;
}

CompareRow CompareRunStats::row() const {
  CompareRow r = frame_;
  if (!sorted_) {
    std::sort(ttft_.begin(), ttft_.end());
    sorted_ = true;
  }
  if (!ttft_.empty()) {
    r.ttftP50 = percentileSorted(ttft_, 0.50);
    r.ttftP99 = percentileSorted(ttft_, 0.99);
  }
  // The bins cost a sort per bin: past 200 000 requests they are redone
  // only when 2 % more have finished (the value moves by less meanwhile).
  if (tail_.size() != tailFor_ && (tail_.size() < 200000 || tail_.size() >= tailFor_ + tailFor_ / 50)) {
    const std::vector<TailBin> bins = binnedTailTtft(tail_);
    double sum = 0;
    for (const TailBin& b : bins) sum += b.value;
    tailValue_ = bins.empty() ? CompareRow::kNaN : sum / static_cast<double>(bins.size());
    tailFor_ = tail_.size();
  }
  r.tailTtft = tailValue_;
  if (scored_ > 0) r.qoeViolation = static_cast<double>(violated_) / static_cast<double>(scored_);
  if (r.lastEventS > 0) r.tokensPerS = static_cast<double>(tokens_) / r.lastEventS;
  return r;
}

// ------------------------------------------------------------------ CSV

namespace {
void appendCell(double v, int decimals, std::string& out) {
  out += ',';
  if (std::isfinite(v)) appendFixed(v, decimals, out);
}
std::string csvText(const QString& s) {
  std::string t = s.toStdString();
  if (t.find_first_of(",\"\n") == std::string::npos) return t;
  std::string q = "\"";
  for (char c : t) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}
int decimalsFor(CompareMetric m) {
  switch (m) {
    case CompareMetric::TtftP50:
    case CompareMetric::TtftP99:
    case CompareMetric::TailTtft:
    case CompareMetric::QoeViolation: return 6;
    case CompareMetric::Throughput: return 3;
    default: return 0;
  }
}
}  // namespace

std::string compareCsv(const std::vector<CompareRow>& rows) {
  std::string out = "policy,sim_s,arrived,finished";
  for (const CompareMetricInfo& m : compareMetrics()) {
    out += ',';
    out += m.key;
    out += ',';
    out += m.key;
    out += "_delta_pct";
  }
  out += '\n';
  for (const CompareRow& r : rows) {
    out += csvText(r.policy);
    appendCell(r.simS, 6, out);
    out += ',';
    appendInt(r.arrived, out);
    out += ',';
    appendInt(r.finished, out);
    for (const CompareMetricInfo& m : compareMetrics()) {
      const double v = metricValue(r, m.metric);
      appendCell(v, decimalsFor(m.metric), out);
      appendCell(rows.empty() ? CompareRow::kNaN : deltaPct(v, metricValue(rows.front(), m.metric)), 2, out);
    }
    out += '\n';
  }
  return out;
}

QString compareHint(const std::vector<CompareRow>& rows) {
  if (rows.size() < 2) return {};
  for (const CompareRow& r : rows)
    if (r.finished < 50) return {};  // too early to say
  const bool noPressure =
      std::all_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.preemptions == 0; });
  if (noPressure)
    return QObject::tr("Hint: no run here has run short of KV memory (0 preemptions), so policies that differ in "
                       "how they share memory look alike. Raise the arrival rate or lower the KV cap fraction.");
  const double ref = rows.front().ttftP99;
  const bool alike = std::isfinite(ref) && ref > 0 && std::all_of(rows.begin(), rows.end(), [&](const CompareRow& r) {
                       return std::isfinite(r.ttftP99) && std::fabs(r.ttftP99 - ref) <= 0.02 * ref;
                     });
  if (alike)
    return QObject::tr("Hint: every run's TTFT p99 is within 2 % of the reference: at this load the policies "
                       "do not separate. Try a higher rate or a longer run.");
  return {};
}

}  // namespace sl::ui
