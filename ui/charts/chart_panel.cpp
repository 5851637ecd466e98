#include "ui/charts/chart_panel.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QGraphicsView>
#include <QGraphicsWidget>
#include <QStringList>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>
#include <cstring>
#include <chrono>
#include <cmath>

#include "metrics/binned_tail.h"

#include "ui/controller/sim_controller.h"
#include "ui/common/theme.h"

namespace sl::ui {

namespace {

// The scatter's binned tail overlay: the tail TTFT of the metrics module
// (bins of 256 reasoning tokens; the same numbers as tail_ttft.csv).
using TailSamples = std::vector<std::pair<std::int64_t, double>>;

void appendTailSamples(TailSamples& to, const QPointF* first, const QPointF* last) {
  to.reserve(to.size() + static_cast<std::size_t>(last - first));
  for (const QPointF* p = first; p != last; ++p) to.emplace_back(static_cast<std::int64_t>(std::llround(p->x())), p->y());
}

std::vector<QPointF> tailOverlay(const TailSamples& samples) {
  std::vector<QPointF> tail;
  for (const TailBin& b : binnedTailTtft(samples))
    tail.emplace_back(0.5 * static_cast<double>(b.bin_lo + b.bin_hi), b.value);
  return tail;
}

// A count as the scatter's caption writes it: 20 000, 3.10 M.
QString countText(std::size_t n) {
  if (n >= 1000000) return QString::number(static_cast<double>(n) / 1e6, 'f', 2) + " M";
  QString digits = QString::number(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, QChar(0x2009));  // thin space
  return digits;
}

std::vector<QPointF> tailOverlay(const std::vector<QPointF>& pts) {
  TailSamples samples;
  appendTailSamples(samples, pts.data(), pts.data() + pts.size());
  return tailOverlay(samples);
}

}  // namespace

std::vector<QPointF> cdfPoints(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return cdfPointsSorted(values);
}

std::vector<QPointF> cdfPointsSorted(const std::vector<double>& sorted) {
  std::vector<QPointF> out;
  out.reserve(sorted.size());
  const double n = static_cast<double>(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) out.emplace_back(sorted[i], static_cast<double>(i + 1) / n);
  return out;
}

const std::vector<double>& SortedValues::sorted() {
  if (sorted_ < v_.size()) {
    const auto mid = v_.begin() + static_cast<std::ptrdiff_t>(sorted_);
    std::sort(mid, v_.end());
    std::inplace_merge(v_.begin(), mid, v_.end());
    sorted_ = v_.size();
  }
  return v_;
}

ChartPanel::ChartPanel(QWidget* parent) : QWidget(parent) {
  // Two pages: the live charts, and the end-of-run distributions.
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  tabs_ = new QTabWidget;
  tabs_->setDocumentMode(true);
  outer->addWidget(tabs_);
  auto* livePage = new QWidget;
  auto* grid = new QGridLayout(livePage);
  grid->setContentsMargins(4, 4, 4, 4);
  grid->setSpacing(6);
  scatter_ = new LiveChart("ttft_vs_reasoning", tr("TTFT vs reasoning length"), tr("reasoning tokens"), tr("TTFT (s)"));
  scatter_->setShortTitle(tr("TTFT vs reasoning"));
  scatter_->addSeries(tr("requests"), theme::kReasoning, SeriesStyle::Scatter);
  scatter_->addSeries(tr("tail per bin"), theme::kAlert);
  scatter_->setHelp(tr("Dots: finished requests (while a run goes on, an even sample of at most %1 of them, "
                       "as the caption says; all of them once it pauses or ends). Line: the binned tail TTFT "
                       "per 256-token bin of reasoning length (p99, or p95/p90/max for bins of fewer requests), "
                       "from every request, as in tail_ttft.csv")
                        .arg(countText(kLiveScatterSample)));
  ttft_ = new LiveChart("ttft", tr("TTFT, rolling"), tr("time (s)"), tr("seconds"));
  ttft_->addSeries("p50", theme::kSeriesA);
  ttft_->addSeries("p99", theme::kSeriesB);
  tpot_ = new LiveChart("tpot", tr("TPOT, rolling"), tr("time (s)"), tr("seconds"));
  tpot_->addSeries("p50", theme::kSeriesA);
  tpot_->addSeries("p99", theme::kSeriesB);
  qoe_ = new LiveChart("qoe_slo", tr("QoE violations · SLO attainment"), tr("time (s)"), tr("fraction"));
  qoe_->addSeries(tr("QoE violation"), theme::kAlert);
  qoe_->addSeries(tr("SLO attained"), theme::kAnswering);
  qoe_->setFixedYRange(0, 1);
  qoe_->setShortTitle(tr("QoE · SLO"));
  thru_ = new LiveChart("throughput", tr("Throughput"), tr("time (s)"), tr("k tok/s"));
  thru_->addSeries(tr("output tokens"), theme::kSeriesA);
  kv_ = new LiveChart("kv_usage", tr("GPU KV usage per instance"), tr("time (s)"), tr("fraction"));
  kv_->setFixedYRange(0, 1);
  kv_->setShortTitle(tr("KV usage per GPU"));
  charts_ = {scatter_, ttft_, tpot_, qoe_, thru_, kv_};
  for (std::size_t i = 0; i < charts_.size(); ++i)
    grid->addWidget(charts_[i], static_cast<int>(i / 3), static_cast<int>(i % 3));
  // Equal thirds, whatever room each chart's line names take.
  for (int c = 0; c < 3; ++c) grid->setColumnStretch(c, 1);
  tabs_->addTab(livePage, tr("Live"));
  // CDFs of the finished requests (each metric on its own axis: TPOT is
  // milliseconds where E2E is minutes).
  auto* cdfPage = new QWidget;
  auto* row = new QHBoxLayout(cdfPage);
  row->setContentsMargins(4, 4, 4, 4);
  row->setSpacing(6);
  auto cdf = [&](const char* id, const QString& title, const QString& x) {
    auto* c = new LiveChart(id, title, x, tr("fraction of requests"));
    c->addSeries(tr("finished requests"), theme::kSeriesA);
    c->setFixedYRange(0, 1);
    c->setLegendVisible(false);
    row->addWidget(c);
    charts_.push_back(c);
    return c;
  };
  cdfTtft_ = cdf("ttft_cdf", tr("TTFT distribution (CDF)"), tr("TTFT (s)"));
  cdfTpot_ = cdf("tpot_cdf", tr("TPOT distribution (CDF)"), tr("TPOT (s)"));
  cdfE2e_ = cdf("e2e_cdf", tr("End-to-end latency (CDF)"), tr("E2E (s)"));
  tabs_->addTab(cdfPage, tr("Distributions (CDF)"));
  tabs_->setTabToolTip(1, tr("Cumulative distributions of TTFT, TPOT and end-to-end latency over the finished "
                             "requests so far (complete at the end of a run)"));
  // What the running policy publishes for the whole cluster, over time:
  // whatever series it names (GlobalPolicy::publishCluster), one line each.
  auto* policyPage = new QWidget;
  auto* prow = new QHBoxLayout(policyPage);
  prow->setContentsMargins(4, 4, 4, 4);
  policy_ = new LiveChart("policy", tr("Published by the policy"), tr("time (s)"), tr("value"));
  policy_->setShortTitle(tr("Policy"));
  prow->addWidget(policy_);
  tabs_->addTab(policyPage, tr("Policy"));
  tabs_->setTabToolTip(2, tr("The cluster-level values the running policy publishes, sampled with the probes"));
  // Prefix caching: the cluster's hit rate over time (a page of its own,
  // shown only for a run with cluster.prefix_caching).
  auto* prefixPage = new QWidget;
  auto* xrow = new QHBoxLayout(prefixPage);
  xrow->setContentsMargins(4, 4, 4, 4);
  prefix_ = new LiveChart("prefix_hit_rate", tr("Prefix cache hit rate, cluster"), tr("time (s)"), tr("fraction"));
  prefix_->setShortTitle(tr("Prefix cache"));
  prefix_->addSeries(tr("so far"), theme::kSeriesA);
  prefix_->addSeries(tr("last interval"), theme::kSeriesB);
  prefix_->setFixedYRange(0, 1);
  prefix_->setHelp(tr("Prompt tokens served from the prefix cache / prompt tokens of first admissions, all "
                      "instances: so far, and over each probe interval"));
  xrow->addWidget(prefix_);
  prefixTab_ = tabs_->addTab(prefixPage, tr("Prefix cache"));
  tabs_->setTabToolTip(prefixTab_, tr("The cluster's prefix-cache hit rate over time"));
  tabs_->setTabVisible(prefixTab_, false);
  // Speculative decoding: TPOT against load with speculation on and off (a
  // page of its own, shown only for a run with cluster.speculative).
  auto* specPage = new QWidget;
  auto* srow = new QHBoxLayout(specPage);
  srow->setContentsMargins(4, 4, 4, 4);
  spec_ = new LiveChart("tpot_vs_load", tr("TPOT vs load, speculation on and off"), tr("arrival rate (req/s)"),
                        tr("TPOT p50 (ms)"));
  spec_->setShortTitle(tr("TPOT vs load"));
  spec_->addSeries(tr("speculation on (k > 0)"), theme::kSeriesA, SeriesStyle::Scatter);
  spec_->addSeries(tr("off (k = 0)"), theme::kSeriesB, SeriesStyle::Scatter);
  spec_->setLegendVisible(true);
  srow->addWidget(spec_);
  specTab_ = tabs_->addTab(specPage, tr("Speculation"));
  tabs_->setTabToolTip(specTab_, tr("Speculative decoding: TPOT against load with speculation on and off"));
  tabs_->setTabVisible(specTab_, false);
  updateSpeculationTexts();
  // Linked time axes: zooming or panning one time chart moves the others.
  for (LiveChart* c : timeCharts())
    connect(c, &LiveChart::viewChanged, this, [this, c](double lo, double hi, bool zoomed) {
      if (!linked_) return;
      for (LiveChart* o : timeCharts())
        if (o != c) zoomed ? o->setViewX(lo, hi) : o->resetView();
    });
  clear(0);
}

LiveChart* ChartPanel::chart(const QString& id) const {
  for (LiveChart* c : charts_)
    if (c->id() == id) return c;
  if (prefix_ && prefix_->id() == id) return prefix_;
  if (spec_ && spec_->id() == id) return spec_;
  return policy_ && policy_->id() == id ? policy_ : nullptr;
}

void ChartPanel::addPolicySamples(const std::vector<PolicySample>& samples) {
  for (const PolicySample& ps : samples)
    for (const PolicyField& f : ps.fields) {
      auto it = std::find_if(policyLines_.begin(), policyLines_.end(),
                             [&](const PolicyLine& l) { return l.label == f.label; });
      if (it == policyLines_.end()) {
        policyLines_.push_back({f.label, f.unit, f.tooltip, {}});
        const QString unit = QString::fromStdString(f.unit);
        QString name = QString::fromStdString(f.label);
        if (!unit.isEmpty() && unit != "bool") name += " (" + unit + ")";
        policy_->addSeries(name, theme::instanceColor(static_cast<int>(policyLines_.size()) - 1));
        policy_->setLegendVisible(true);
        it = policyLines_.end() - 1;
      }
      it->points.emplace_back(ps.timeS, f.value);
    }
  if (!samples.empty()) {
    policyDirty_ = true;
    updatePolicyTexts();
  }
}

// The y axis names the unit the series share ("value" when they differ);
// the help lists each series' own tooltip; without series, the subtitle
// says the policy publishes none (once the run has probes to show).
void ChartPanel::updatePolicyTexts() {
  QString unit;
  bool same = true;
  QStringList help;
  for (const PolicyLine& l : policyLines_) {
    const QString u = l.unit == "bool" ? tr("0 / 1") : QString::fromStdString(l.unit);
    if (&l == &policyLines_.front()) unit = u;
    else same = same && u == unit;
    help << QString::fromStdString(l.label) + (l.tooltip.empty() ? QString() : ": " + QString::fromStdString(l.tooltip));
  }
  // LiveChart's y label is fixed at construction; the subtitle carries the unit.
  if (policyLines_.empty())
    policy_->setSubtitle(probeCount_ == 0 ? QString() : tr("the running policy publishes no cluster-level series"));
  else
    policy_->setSubtitle(same && !unit.isEmpty() ? tr("in %1").arg(unit) : QString());
  policy_->setHelp(help.isEmpty() ? tr("The cluster-level values the running policy publishes, over time")
                                  : help.join('\n'));
}

void ChartPanel::rebuildKvSeries(int instances) {
  kv_->removeAllSeries();
  for (int i = 0; i < instances; ++i) kv_->addSeries(tr("GPU %1").arg(i), theme::instanceColor(i));
  kv_->setLegendVisible(true);  // shown whenever the names fit (fitToSize)
}

double ChartPanel::prefixHitRate() const {
  return prefixPrompt_ > 0 ? static_cast<double>(prefixCached_) / static_cast<double>(prefixPrompt_)
                           : std::numeric_limits<double>::quiet_NaN();
}

void ChartPanel::clear(int instances) {
  probeCount_ = 0;
  prefixPrompt_ = -1;
  prefixCached_ = 0;
  prefixDirty_ = false;
  for (int s = 0; s < prefix_->seriesCount(); ++s) prefix_->setSeriesData(s, {});
  prefix_->setSubtitle({});
  prefix_->refresh();
  tabs_->setTabVisible(prefixTab_, false);
  specRecent_.clear();
  specOn_.clear();
  specOff_.clear();
  specDirty_ = specMixed_ = false;
  for (int s = 0; s < spec_->seriesCount(); ++s) spec_->setSeriesData(s, {});
  spec_->refresh();
  updateSpeculationTexts();  // (the tab stays as the loaded scenario set it: setSpeculationShown)
  policyLines_.clear();
  policy_->removeAllSeries();
  policyDirty_ = false;
  scatterPts_.clear();
  scatterSent_ = tailCount_ = 0;
  ++tailGen_;  // a tail job still running belongs to the old run
  tailSamples_ = std::make_shared<TailSamples>();  // ... and keeps the old samples
  tailHanded_ = 0;
  ttfts_.clear();
  tpots_.clear();
  e2es_.clear();
  anyReasoning_ = false;
  cdfDirty_ = false;
  scatter_->setEmptyText({});
  scatter_->setSubtitle({});
  tailJobMs_ = 0;
  changes_.clear();
  pending_.clear();
  kvStale_ = false;
  if (instances != instances_ || kv_->seriesCount() == 0) rebuildKvSeries(instances);
  instances_ = instances;
  updatePolicyTexts();
  for (LiveChart* c : charts_) {
    for (int s = 0; s < c->seriesCount(); ++s) c->setSeriesData(s, {});
    c->setMarkers({});
    c->refresh();
  }
  policy_->setMarkers({});
  policy_->refresh();
  probesDirty_ = scatterDirty_ = false;
  // The window's edges come back at the next refresh; a change of window
  // not drawn yet stays due (a new scenario: the main window clears the
  // panel, sets the new window, then clears again on the run's first frame;
  // the old window's edges stayed on the charts).
  markersDirty_ = markersDirty_ || window_.has_value();
}

// Each probe becomes one point of each time series, appended once: a pull
// costs O(new probes), however long the run (rebuilding every series from
// every probe cost O(probes × instances) per chart refresh).
void ChartPanel::addProbes(const std::vector<ProbeSample>& probes) {
  if (probes.empty()) return;
  std::vector<QPointF> t50, t99, p50, p99, viol, slo, tok;
  std::vector<std::vector<QPointF>> kv(static_cast<std::size_t>(kv_->seriesCount()));
  for (const ProbeSample& s : probes) {
    const double t = nsToSeconds(s.time);
    if (s.ttftP50 >= 0) t50.emplace_back(t, s.ttftP50);
    if (s.ttftP99 >= 0) t99.emplace_back(t, s.ttftP99);
    if (s.tpotP50 >= 0) p50.emplace_back(t, s.tpotP50);
    if (s.tpotP99 >= 0) p99.emplace_back(t, s.tpotP99);
    if (s.qoeViolationRate >= 0) viol.emplace_back(t, s.qoeViolationRate);
    if (s.sloAttainment >= 0) slo.emplace_back(t, s.sloAttainment);
    tok.emplace_back(t, static_cast<double>(s.tokens) / std::max(1e-9, s.intervalS) / 1000.0);
    for (std::size_t i = 0; i < s.instances.size() && i < kv.size(); ++i) {
      const ProbeInstance& pi = s.instances[i];
      kv[i].emplace_back(t, pi.gpuCapacity > 0 ? static_cast<double>(pi.gpuBlocks) / static_cast<double>(pi.gpuCapacity) : 0.0);
    }
  }
  ttft_->appendSeriesData(0, t50);
  ttft_->appendSeriesData(1, t99);
  tpot_->appendSeriesData(0, p50);
  tpot_->appendSeriesData(1, p99);
  qoe_->appendSeriesData(0, viol);
  qoe_->appendSeriesData(1, slo);
  thru_->appendSeriesData(0, tok);
  for (std::size_t i = 0; i < kv.size(); ++i) kv_->appendSeriesData(static_cast<int>(i), kv[i]);
  // The cluster's prefix-cache hit rate: so far, and over each interval.
  std::vector<QPointF> hitSoFar, hitInterval;
  for (const ProbeSample& s : probes) {
    std::int64_t prompt = 0, cached = 0;
    bool on = false;
    for (const ProbeInstance& pi : s.instances)
      if (pi.promptTokens >= 0) {
        on = true;
        prompt += pi.promptTokens;
        cached += pi.cachedTokens;
      }
    if (!on) continue;
    const double t = nsToSeconds(s.time);
    if (prompt > 0) hitSoFar.emplace_back(t, static_cast<double>(cached) / static_cast<double>(prompt));
    const std::int64_t dp = prompt - std::max<std::int64_t>(0, prefixPrompt_), dc = cached - prefixCached_;
    if (dp > 0) hitInterval.emplace_back(t, static_cast<double>(dc) / static_cast<double>(dp));
    prefixPrompt_ = prompt;
    prefixCached_ = cached;
  }
  if (prefixPrompt_ >= 0) {
    prefix_->appendSeriesData(0, hitSoFar);
    prefix_->appendSeriesData(1, hitInterval);
    if (!tabs_->isTabVisible(prefixTab_)) tabs_->setTabVisible(prefixTab_, true);
    const double rate = prefixHitRate();
    prefix_->setSubtitle(std::isfinite(rate) ? tr("so far %1 % of the prompt tokens").arg(rate * 100, 0, 'f', 1)
                                             : QString());
    prefixDirty_ = true;
  }
  for (const ProbeSample& s : probes) addSpeculationProbe(s);
  const bool first = probeCount_ == 0;
  probeCount_ += probes.size();
  probesDirty_ = true;
  if (first && policyLines_.empty()) {
    updatePolicyTexts();
    markPending(policy_);
  }
}

void ChartPanel::setRollingWindow(double seconds) {
  if (!(seconds > 0) || seconds == rollingWindowS_) return;
  rollingWindowS_ = seconds;
  updateSpeculationTexts();
}

void ChartPanel::setSpeculationShown(bool on) {
  if (tabs_->isTabVisible(specTab_) != on) tabs_->setTabVisible(specTab_, on);
}

bool ChartPanel::speculationShown() const {
  return tabs_->isTabVisible(specTab_);
}

void ChartPanel::updateSpeculationTexts() {
  const QString w = QString::number(rollingWindowS_, 'g', 3);
  spec_->setHelp(tr("One dot per probe: the rolling TPOT p50 (finished requests of the last %1 s) against the "
                    "arrival rate over the same %1 s. Blue: every step of the window speculated (k > 0 on some "
                    "instance); red: none did (k = 0). A window that mixes both draws no dot, so after the "
                    "Speculation control changes, the dots resume %1 s later. Move the arrival-rate slider and "
                    "toggle speculation to see where it stops paying.")
                     .arg(w));
  spec_->setSubtitle(specMixed_ ? tr("k changed: dots resume after %1 s at one setting").arg(w)
                                : tr("TPOT and arrivals over the last %1 s, a dot per probe").arg(w));
}

// A probe of a run with speculation: its setting (any instance stepping with
// k > 0) and arrivals join the window; a window at one setting gives a dot.
void ChartPanel::addSpeculationProbe(const ProbeSample& s) {
  bool any = false, on = false;
  for (const ProbeInstance& pi : s.instances) {
    any = any || pi.specK >= 0;
    on = on || pi.specK > 0;
  }
  if (!any) return;
  const double t = nsToSeconds(s.time);
  specRecent_.push_back({t, s.intervalS, s.arrivals, on});
  while (!specRecent_.empty() && specRecent_.front().t <= t - rollingWindowS_ + 1e-9) specRecent_.pop_front();
  double span = 0;
  std::int64_t arrivals = 0;
  bool mixed = false;
  for (const SpecProbe& p : specRecent_) {
    span += p.intervalS;
    arrivals += p.arrivals;
    mixed = mixed || p.on != on;
  }
  if (mixed != specMixed_) {
    specMixed_ = mixed;
    updateSpeculationTexts();
  }
  setSpeculationShown(true);
  if (mixed || s.tpotP50 < 0 || span <= 0) return;
  (on ? specOn_ : specOff_).emplace_back(static_cast<double>(arrivals) / span, s.tpotP50 * 1000.0);
  specDirty_ = true;
}

void ChartPanel::addFinished(const std::vector<FinishedPoint>& points) {
  for (const FinishedPoint& p : points) {
    if (p.ttftS >= 0) scatterPts_.emplace_back(p.reasoning, p.ttftS);
    if (p.ttftS >= 0) ttfts_.add(p.ttftS);
    if (p.tpotS >= 0) tpots_.add(p.tpotS);
    if (p.e2eS >= 0) e2es_.add(p.e2eS);
    anyReasoning_ = anyReasoning_ || p.reasoning > 0;
  }
  cdfDirty_ = cdfDirty_ || !points.empty();
  scatterDirty_ = scatterDirty_ || !points.empty();
}

void ChartPanel::setMeasureWindow(std::optional<std::pair<double, double>> window) {
  if (window == window_) return;
  window_ = window;
  markersDirty_ = true;
}

void ChartPanel::setChanges(const ChangeLog& changes) {
  if (changes == changes_) return;
  changes_ = changes;
  markersDirty_ = true;
}

void ChartPanel::markPending(LiveChart* c) {
  if (std::find(pending_.begin(), pending_.end(), c) == pending_.end()) pending_.push_back(c);
  if (c == kv_) kvStale_ = false;
}

void ChartPanel::refresh() {
  animating_ = live_ = false;
  prepare();
  redrawPending();
}

void ChartPanel::refreshLive() {
  animating_ = false;
  live_ = true;
  prepare();
  redrawPending();
}

void ChartPanel::redrawPending() {
  if (kvStale_) markPending(kv_);
  for (LiveChart* c : pending_) {
    c->refresh();
    if (c == kv_) kvSince_.restart();
  }
  pending_.clear();
}

bool ChartPanel::refreshOne() {
  if (pending_.empty()) return false;
  LiveChart* c = pending_.front();
  pending_.erase(pending_.begin());
  c->refresh();
  if (c == kv_) kvSince_.restart();
  return true;
}

void ChartPanel::prepareAnimated() {
  animating_ = live_ = true;
  prepare();
}

void ChartPanel::prepare() {
  if (tailJob_.valid() && tailJob_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    TailJob job = tailJob_.get();
    tailJobEnded_.restart();
    tailJobMs_ = job.ms;
    if (tailJobGen_ == tailGen_) {
      scatter_->setSeriesData(1, std::move(job.overlay));
      tailCount_ = tailJobCount_;
      markPending(scatter_);
    }
  }
  if (markersDirty_) {
    applyMarkers();
    markPending(policy_);
  }
  if (prefixDirty_) {
    markPending(prefix_);
    prefixDirty_ = false;
  }
  if (probesDirty_ || markersDirty_) {
    for (LiveChart* c : {ttft_, tpot_, qoe_, thru_}) markPending(c);
    // One line per instance: with many instances this chart alone costs a
    // frame or two to redraw, so while animating it is redrawn once a second.
    if (!animating_ || instances_ <= 8 || !kvSince_.isValid() || kvSince_.elapsed() >= 1000)
      markPending(kv_);
    else
      kvStale_ = true;
  }
  // The scatter with its tail overlay is O(finished requests): with many of
  // them, while a run goes on (any mode), it too gets new data once a second.
  const bool scatterDue = !live_ || scatterPts_.size() <= 20000 || !scatterSince_.isValid() ||
                          scatterSince_.elapsed() >= 1000;
  bool keepScatterDirty = false;
  if (scatterDirty_ && !scatterDue) keepScatterDirty = true;
  if (scatterDirty_ && scatterDue) {
    scatterSince_.restart();
    scatter_->appendSeriesData(0, std::vector<QPointF>(scatterPts_.begin() + static_cast<std::ptrdiff_t>(scatterSent_),
                                                       scatterPts_.end()));
    scatterSent_ = scatterPts_.size();
    // The overlay, off the GUI thread while a run goes on (7-20 ms at 300k
    // requests: a dropped frame a second, B4; 100+ ms per Fast-mode pull at
    // 10^6); a job still running is left to finish first, and the next one
    // waits kTailJobIdle times as long as the last one took, so the jobs
    // (O(finished requests) each: ~1 s at 10^7) use at most a fifth of a
    // core next to the worker (issue 27).
    const bool tailRested = !tailJobEnded_.isValid() || tailJobEnded_.elapsed() >= kTailJobIdle * tailJobMs_;
    if (live_ && !tailJob_.valid() && tailRested) {
      tailJobGen_ = tailGen_;
      tailJobCount_ = scatterPts_.size();
      // The job keeps the samples it has seen (tailSamples_, touched by
      // one job at a time) and gets only the points new since the last one:
      // O(new points) on the GUI thread, not a copy of all (B4).
      std::vector<QPointF> fresh(scatterPts_.begin() + static_cast<std::ptrdiff_t>(tailHanded_), scatterPts_.end());
      tailHanded_ = scatterPts_.size();
      tailJob_ = std::async(std::launch::async, [state = tailSamples_, fresh = std::move(fresh)] {
        QElapsedTimer took;
        took.start();
        appendTailSamples(*state, fresh.data(), fresh.data() + fresh.size());
        TailJob job;
        job.overlay = tailOverlay(*state);
        job.ms = took.elapsed();
        return job;
      });
    }
    // A workload without reasoning would put every dot at 0: the chart
    // says so instead of drawing a column of dots.
    scatter_->setEmptyText(!scatterPts_.empty() && !anyReasoning_ ? tr("no reasoning requests in this workload")
                                                                  : QString());
    markPending(scatter_);
  }
  // While a run goes on, the dots are drawn from a bounded, even sample of
  // the finished requests (kLiveScatterSample; the caption says how many):
  // the refresh costs the same at 10^7 requests as at 10^4. Paused or
  // finished: from all of them again. The data stays whole (CSV export).
  const std::size_t cap = live_ ? kLiveScatterSample : 0;
  if (cap != scatterCap_) {
    scatterCap_ = cap;
    scatter_->setSeriesSampleCap(0, cap);
    markPending(scatter_);
  }
  const std::size_t drawnFrom = scatter_->sampledPoints(0), all = scatter_->seriesData(0).size();
  // (No caption over "no reasoning requests": no dots are drawn then.)
  const QString caption = drawnFrom < all && anyReasoning_
                              ? tr("showing %1 of %2 requests").arg(countText(drawnFrom), countText(all))
                              : QString();
  if (caption != scatter_->subtitle()) {
    scatter_->setSubtitle(caption);
    markPending(scatter_);
  }
  // No run going on (paused, finished): the overlay is exact for every
  // point shown, computed here.
  if (!live_ && tailCount_ != scatterPts_.size()) {
    if (tailJob_.valid()) tailJob_.wait();
    tailJob_ = {};
    ++tailGen_;  // whatever a job computed is older than this
    scatter_->setSeriesData(1, tailOverlay(scatterPts_));
    tailCount_ = scatterPts_.size();
    markPending(scatter_);
  }
  // The policy page: few points (one per probe), redrawn while animating
  // only when it is shown.
  if (policyDirty_ && (!animating_ || tabs_->currentIndex() == 2)) {
    for (std::size_t i = 0; i < policyLines_.size(); ++i)
      policy_->setSeriesData(static_cast<int>(i), policyLines_[i].points);
    markPending(policy_);
    policyDirty_ = false;
  }
  // The speculation page: a dot per probe, redrawn while animating only
  // when it is shown (its x is not time: the series are set whole).
  if (specDirty_ && (!animating_ || tabs_->currentIndex() == specTab_)) {
    spec_->setSeriesData(0, specOn_);
    spec_->setSeriesData(1, specOff_);
    markPending(spec_);
    specDirty_ = false;
  }
  // The CDFs are O(finished requests) (a merge of the new values, then a
  // point each): while a run goes on, only when their page is shown, at
  // most once a second.
  const bool cdfShown = tabs_->currentIndex() == 1;
  if (cdfDirty_ && (!live_ || (cdfShown && (!cdfSince_.isValid() || cdfSince_.elapsed() >= 1000)))) {
    cdfSince_.restart();
    cdfTtft_->setSeriesData(0, cdfPointsSorted(ttfts_.sorted()));
    cdfTpot_->setSeriesData(0, cdfPointsSorted(tpots_.sorted()));
    cdfE2e_->setSeriesData(0, cdfPointsSorted(e2es_.sorted()));
    for (LiveChart* c : {cdfTtft_, cdfTpot_, cdfE2e_}) markPending(c);
    cdfDirty_ = false;
  }
  probesDirty_ = markersDirty_ = false;
  scatterDirty_ = keepScatterDirty;
}

void ChartPanel::applyMarkers() const {
  std::vector<double> xs;
  QStringList labels;
  for (const KnobChange& c : changes_) {
    xs.push_back(nsToSeconds(c.time));
    labels << changeMarkerLabel(c);
  }
  std::vector<double> edges;
  QStringList edgeLabels;
  if (window_) {
    edges = {window_->first, window_->second};
    edgeLabels = {QObject::tr("warm-up ends"), QObject::tr("window ends")};
  }
  for (LiveChart* c : timeCharts()) {
    c->setMarkers(xs, labels);
    c->setWindowMarkers(edges, edgeLabels);
  }
}

}  // namespace sl::ui
