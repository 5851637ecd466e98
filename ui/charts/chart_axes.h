#pragma once
// Axis ranges, round ticks and decimation for LiveChart (the generic chart
// widget): pure functions of the data and the chart's size.
#include <QList>
#include <QPointF>
#include <QRectF>
#include <QSize>

#include <cstddef>
#include <vector>

class QValueAxis;

namespace sl::ui::chartaxes {

/// A round step (1, 2, 2.5 or 5 times a power of ten) of about span /
/// intervals (4 when there is room).
double niceStep(double span, int intervals = 4);
/// Ticks at multiples of `step` whatever the range's ends (a zoomed view).
/// Qt 6.4 drops dynamic ticks with very small intervals: fixed ticks then.
void roundTicks(QValueAxis* a, double step);
/// Ticks from the range's start, `count` of them (ranges that are whole steps).
void fixedTicks(QValueAxis* a, int count);
/// Axis from 0 (or lo) to a round number just above hi, with round ticks,
/// at most `maxIntervals` of them (fewer in a narrow chart, so tick labels
/// keep their room instead of being elided).
void niceAxis(QValueAxis* a, double lo, double hi, int maxIntervals = 6);
/// The range niceAxis would set: [lo, top] with `ticks` ticks.
struct NiceRange {
  double lo = 0, top = 1;
  int ticks = 2;
  double step = 0;     // dataRange: the round tick step when the axis ends at the data
  bool atData = false;  // dataRange: [lo, hi] itself, ticks at multiples of step
};
NiceRange niceRange(double lo, double hi, int maxIntervals = 6);
/// An x axis: niceRange, unless its round top would overshoot the data by
/// more than a quarter of the span (a narrow chart allowed 2 intervals:
/// 0..60 became 0..100); then the axis ends at the data, with round ticks
/// inside it (0, 50).
NiceRange dataRange(double lo, double hi, int maxIntervals = 6);
void dataAxis(QValueAxis* a, double lo, double hi, int maxIntervals = 6);
/// An axis fitted to data in [lo, hi] (LiveChart::setFitToData, e.g. a
/// sweep's rates 8..16 and its TTFT 1.2..1.9 s): from a round number at or
/// below lo to one at or above hi, at most `maxIntervals` round steps; a
/// single value gets a span around it.
NiceRange fitRange(double lo, double hi, int maxIntervals = 6);
void fitAxis(QValueAxis* a, double lo, double hi, int maxIntervals = 6);
/// Min/max per pixel column, in x order: the drawn line looks the same as
/// the full one at this width.
void decimateLine(const std::vector<QPointF>& in, double x0, double x1, int columns, QList<QPointF>& out);
/// One point per 2x2-pixel cell.
void decimateScatter(const std::vector<QPointF>& in, const QRectF& range, QSize px, QList<QPointF>& out);

/// A bounded, deterministic sample of a series that only grows: every
/// stride-th point by index (0, s, 2s, …), the stride doubling (and every
/// other kept point dropped) whenever more than `cap` are kept. It holds
/// between cap/2 and cap points once the series has more than cap, spread
/// evenly over the series in arrival order, and depends only on the points
/// and their order, never on the batches they came in. O(1) amortized per
/// point; used to draw a live scatter of millions of requests
/// (LiveChart::setSeriesSampleCap, docs/user-guide.md "Charts").
class StrideSample {
public:
  /// cap 0: no bound (every point kept).
  StrideSample() = default;
  explicit StrideSample(std::size_t cap) : cap_(cap) {}
  void clear();
  /// The next points of the series, in order.
  void append(const QPointF* first, const QPointF* last);
  /// Start again from the whole series.
  void rebuild(const std::vector<QPointF>& all);
  std::size_t cap() const { return cap_; }
  const std::vector<QPointF>& points() const { return kept_; }
  /// Every stride()-th point of the series is kept.
  std::size_t stride() const { return stride_; }
  /// Points of the series seen so far.
  std::size_t seen() const { return seen_; }

private:
  std::size_t cap_ = 0, stride_ = 1, seen_ = 0;
  std::vector<QPointF> kept_;
};

}  // namespace sl::ui::chartaxes
