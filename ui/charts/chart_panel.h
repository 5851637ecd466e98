#pragma once
// The chart set of a live run (ChartPanel): the "Live" grid (TTFT vs
// reasoning with its binned tail, rolling TTFT and TPOT, QoE/SLO,
// throughput, KV per instance), the end-of-run CDFs, and the "Policy" page
// charting whatever cluster-level series the running policy publishes. Each
// chart is a LiveChart (live_chart.h).
#include <QElapsedTimer>
#include <QMap>
#include <QString>
#include <QWidget>

class QComboBox;
class QTabWidget;

#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/observer.h"
#include "ui/charts/live_chart.h"
#include "run/live_run.h"

namespace sl::ui {

struct FinishedPoint;
struct PolicySample;

/// (x = value, y = fraction of values <= x) of `values`, sorted: a CDF.
std::vector<QPointF> cdfPoints(std::vector<double> values);
/// The same from values already sorted ascending (no copy, no sort).
std::vector<QPointF> cdfPointsSorted(const std::vector<double>& sorted);

/// Values kept sorted as they arrive: a batch is sorted on its own and
/// merged in, O(k log k + n) instead of re-sorting all n (the CDFs of a
/// long run: re-sorting 10^6 values per refresh stalled the GUI, B4).
class SortedValues {
public:
  void add(double v) { v_.push_back(v); }
  void clear() { v_.clear(); sorted_ = 0; }
  std::size_t size() const { return v_.size(); }
  /// All values, ascending.
  const std::vector<double>& sorted();

private:
  std::vector<double> v_;
  std::size_t sorted_ = 0;  // v_[0, sorted_) is sorted
};

/// How File ▸ Export ▸ Charts… draws each chart (docs/user-guide.md
/// "Exporting"): laid out at `size` logical pixels, the PNG `scale` times
/// that, and the text sized from the canvas.
struct ChartExportOptions {
  QSize size = LiveChart::kDefaultExportSize;
  qreal scale = 2.0;
  /// Tick-label and legend text height (the font's pixel size) as a fraction
  /// of the canvas height; the title is 1.19× that. 0: the charts' own font
  /// (as on screen, larger in lecture mode).
  double textFraction = 0;
  /// Line widths (series, axes, grid, markers) scale with the text: label
  /// pixels / 10 (the screen's and the paper presets' label size), at least
  /// 1: ×3 on a slide preset (series 4.8 px on a 900 px high canvas).
  double lineScale() const;
  /// Live-change markers: dashed lines labelled with the change ("rate 12/s").
  bool markers = true;
};

/// A named export size (the export dialog's choices; `servelab --export-preset`).
struct ChartExportPreset {
  QString id;     // "slide", "slide-2x", …
  QString label;  // as the dialog lists it
  ChartExportOptions options;
};
/// Screen, slides (text 1/30 of the slide's height: readable at the back of a
/// room) and paper columns (10 px text on the layout canvas).
const std::vector<ChartExportPreset>& chartExportPresets();
/// The preset with this id, or nullptr.
const ChartExportPreset* chartExportPreset(const QString& id);

/// A live change as its marker's label: "rate 12/s", "clients 8", "quantum 500".
QString changeMarkerLabel(const KnobChange& c);

/// The charts of a live run, in a grid ("Live" tab), and the CDFs of the
/// finished requests' TTFT, TPOT and E2E ("Distributions" tab).
class ChartPanel : public QWidget {
  Q_OBJECT
public:
  explicit ChartPanel(QWidget* parent = nullptr);

  void clear(int instances);
  void addProbes(const std::vector<ProbeSample>& probes);
  void addFinished(const std::vector<FinishedPoint>& points);
  /// The running policy's cluster-level series (one sample per probe), for
  /// the "Policy" page; a label seen for the first time becomes a series.
  void addPolicySamples(const std::vector<PolicySample>& samples);
  void setChanges(const ChangeLog& changes);
  /// The run's measurement window [start, end) in simulated seconds
  /// (run.measure), drawn as two solid lines on every time chart; nullopt =
  /// none. Kept across clear() (a new run of the same scenario).
  void setMeasureWindow(std::optional<std::pair<double, double>> window);
  /// Redraw charts whose data changed (call at most a few times per second).
  void refresh();
  /// For a run going on in Fast or Express mode: as refresh(), but the
  /// O(finished requests) parts (the binned-tail overlay, the CDFs) are
  /// brought up to date at most once a second and the overlay off the GUI
  /// thread; refresh() when the run stops makes them exact.
  void refreshLive();
  /// While a run goes on, the scatter's dots are drawn from at most this
  /// many finished requests, an even sample (chartaxes::StrideSample), and
  /// its caption says "showing N of M requests"; all of them once the run
  /// pauses or ends. CSV exports always hold every request.
  static constexpr std::size_t kLiveScatterSample = 20000;
  /// For a running animation: hand the new data to the charts now, but let
  /// refreshOne() redraw them one per call, so no single GUI frame pays for
  /// all of them (a full refresh costs tens of ms with long series); the
  /// per-instance KV chart (> 8 instances) and a scatter of > 20k requests
  /// get new data at most once a second.
  void prepareAnimated();
  /// Redraw the next chart prepareAnimated() left pending; false when none is.
  bool refreshOne();

  /// The live and distribution charts (always exported).
  const std::vector<LiveChart*>& charts() const { return charts_; }
  /// The "Policy" page's chart: one line per series the policy publishes
  /// (exported only when there is one).
  LiveChart* policyChart() const { return policy_; }
  /// The tabs: 0 live charts, 1 distributions (CDFs), 2 the policy's series.
  QTabWidget* tabs() const { return tabs_; }
  LiveChart* chart(const QString& id) const;
  /// Export every chart (the policy chart when the policy publishes
  /// series) as <dir>/<id>.{png,svg,csv}, images at `size`
  /// (PNG × `scale`). Returns files written.
  int exportAll(const QString& dir, QSize size = LiveChart::kDefaultExportSize, qreal scale = 2.0,
                const QMap<QString, QString>& meta = {}) const;
  /// The same with text size and markers as `options` say (each chart's
  /// font and markers are put back afterwards).
  int exportAll(const QString& dir, const ChartExportOptions& options, const QMap<QString, QString>& meta = {}) const;
  /// Zooming or panning one time-series chart moves the others too (on by default).
  void setLinkedTimeAxes(bool on) { linked_ = on; }
  bool linkedTimeAxes() const { return linked_; }
  /// The charts whose x axis is simulated time.
  std::vector<LiveChart*> timeCharts() const { return {ttft_, tpot_, qoe_, thru_, kv_, policy_}; }

  /// Lecture mode (issue 50): one chart alone on its page, as large as the
  /// page, so a room can read its ticks, units and legend; a chooser at the
  /// tabs' right end switches to another. Empty: every chart in its grid
  /// again. An unknown id is ignored (the grid stays).
  void setFocusChart(const QString& id);
  QString focusChart() const { return focus_; }
  /// The chart a text (a tour step's) points at: the chart it names,
  /// by its title or the words a text uses for it ("TTFT-vs-reasoning
  /// chart", "the Policy chart tab"), the first one named; empty when none.
  QString chartNamedIn(const QString& text) const;
  /// The chart lecture mode shows when nothing points at another: the
  /// rolling TTFT (p50 and p99).
  static QString mainChartId() { return QStringLiteral("ttft"); }

  /// The "Prefix cache" page's chart (shown once a probe carries prefix-cache
  /// counters): the cluster's hit rate (cached / prompt tokens of first
  /// admissions) so far and over each probe interval.
  LiveChart* prefixChart() const { return prefix_; }
  /// The cluster's hit rate so far, as the chart's subtitle reads; NaN when
  /// no probe had prefix-cache counters.
  double prefixHitRate() const;

  /// The "Speculation" page's chart (shown once a probe carries speculative
  /// decoding's counters, cluster.speculative): TPOT against load, one dot
  /// per probe, in two series — 0 "speculation on (k > 0)" and 1 "off
  /// (k = 0)" — so that moving the rate slider and toggling speculation
  /// draws where speculation stops paying. A dot is (arrival rate over the
  /// last rolling window in req/s, the probe's rolling TPOT p50 in ms); it is
  /// drawn only when every probe in that window had the same setting (any
  /// instance stepping with k > 0: on; all at k = 0: off), so that both
  /// figures describe one setting.
  LiveChart* speculationChart() const { return spec_; }
  /// The rolling window of the run's metrics (run.rolling_window_s): the
  /// speculation chart's window. Kept across clear().
  void setRollingWindow(double seconds);
  /// Show the Speculation tab from the start (the loaded scenario has
  /// cluster.speculative) or hide it (it has not). Kept across clear(); a
  /// probe with speculation shows it too.
  void setSpeculationShown(bool on);
  bool speculationShown() const;

  /// Figures of the finished requests so far (tour texts quote them):
  /// TTFT quantile q in [0, 1], means of TTFT and TPOT; NaN when none.
  double ttftQuantile(double q);
  double meanTtft();
  double meanTpot();
  /// The latest rolling SLO attainment (fraction), NaN before the first probe.
  double latestSloAttainment() const;

private:
  void rebuildKvSeries(int instances);
  void applyMarkers() const;
  std::vector<LiveChart*> charts_;
  LiveChart *scatter_ = nullptr, *ttft_ = nullptr, *tpot_ = nullptr, *qoe_ = nullptr, *thru_ = nullptr,
            *kv_ = nullptr;
  std::size_t probeCount_ = 0;  // probe samples charted so far (each appended once)
  std::vector<QPointF> scatterPts_;
  SortedValues ttfts_, tpots_, e2es_;  // finished requests, for the CDFs
  bool anyReasoning_ = false;
  bool cdfDirty_ = false;
  QElapsedTimer cdfSince_;
  QTabWidget* tabs_ = nullptr;
  LiveChart *cdfTtft_ = nullptr, *cdfTpot_ = nullptr, *cdfE2e_ = nullptr;
  // The policy page: series in the order their labels were first published.
  LiveChart* policy_ = nullptr;
  // The prefix cache page: cumulative counters of the latest probe.
  LiveChart* prefix_ = nullptr;
  int prefixTab_ = -1;
  std::int64_t prefixPrompt_ = -1, prefixCached_ = 0;
  bool prefixDirty_ = false;
  // The speculation page: the probes of the last rolling window (time,
  // arrivals, interval, setting) and the dots so far.
  LiveChart* spec_ = nullptr;
  int specTab_ = -1;
  double rollingWindowS_ = 30;
  struct SpecProbe {
    double t = 0, intervalS = 1;
    std::int64_t arrivals = 0;
    bool on = false;
  };
  std::deque<SpecProbe> specRecent_;
  std::vector<QPointF> specOn_, specOff_;
  bool specDirty_ = false;
  bool specMixed_ = false;  // the latest window mixes both settings (no dot)
  void addSpeculationProbe(const ProbeSample& s);
  void updateSpeculationTexts();
  struct PolicyLine {
    std::string label, unit, tooltip;
    std::vector<QPointF> points;
  };
  std::vector<PolicyLine> policyLines_;
  bool policyDirty_ = false;
  void updatePolicyTexts();
  ChangeLog changes_;
  std::optional<std::pair<double, double>> window_;
  int instances_ = 0;
  bool probesDirty_ = false, scatterDirty_ = false, markersDirty_ = false;
  std::vector<LiveChart*> pending_;  // prepared, not redrawn yet
  bool kvStale_ = false;             // the KV chart has data it has not drawn
  QElapsedTimer kvSince_;            // since the KV chart was last redrawn
  QElapsedTimer scatterSince_;       // since the scatter last got new data
  bool animating_ = false;           // prepareAnimated(): heavy charts at most once a second
  bool live_ = false;                // a run goes on (any mode): O(finished) work throttled, off-thread
  void redrawPending();
  std::size_t scatterSent_ = 0;      // scatter points already handed to the chart
  // The binned-tail overlay is O(finished requests): while a run animates it
  // is computed on a worker thread from a copy of the points, and applied on
  // a later pull if no clear() came in between (tailGen_).
  struct TailJob {
    std::vector<QPointF> overlay;
    qint64 ms = 0;  // what the job took
  };
  std::future<TailJob> tailJob_;
  QElapsedTimer tailJobEnded_;  // since the last job's result was taken
  qint64 tailJobMs_ = 0;        // what it took
  static constexpr qint64 kTailJobIdle = 4;
  std::size_t scatterCap_ = 0;  // the scatter's sample cap now (0: drawn from all)
  std::uint64_t tailGen_ = 0, tailJobGen_ = 0;
  std::size_t tailCount_ = 0, tailJobCount_ = 0;  // points the overlay shown / being computed covers
  std::shared_ptr<std::vector<std::pair<std::int64_t, double>>> tailSamples_ =
      std::make_shared<std::vector<std::pair<std::int64_t, double>>>();  // what the jobs have seen
  std::size_t tailHanded_ = 0;  // scatterPts_ handed to the jobs so far
  void markPending(LiveChart* c);
  void prepare();
  bool linked_ = true;
  QString focus_;                 // setFocusChart
  QComboBox* focusPick_ = nullptr;  // its chooser, shown while a chart is focused
};

}  // namespace sl::ui
