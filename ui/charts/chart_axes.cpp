#include "ui/charts/chart_axes.h"

#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sl::ui::chartaxes {

// A round step (1, 2, 2.5 or 5 times a power of ten) of about span /
// intervals (4 when there is room).
double niceStep(double span, int intervals) {
  const double raw = std::max(span, 1e-9) / std::clamp(intervals, 1, 4);
  const double e = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * e >= raw) return m * e;
  return 10 * e;
}

// Ticks at multiples of `step` whatever the range's ends (a zoomed view).
// Qt 6.4 drops dynamic ticks with very small intervals: fixed ticks then.
void roundTicks(QValueAxis* a, double step) {
  if (step < 0.05) {
    a->setTickType(QValueAxis::TicksFixed);
    a->setTickCount(5);
    return;
  }
  a->setTickType(QValueAxis::TicksDynamic);
  a->setTickAnchor(0);
  a->setTickInterval(step);
}

// Ticks from the range's start, `count` of them (ranges that are whole steps).
void fixedTicks(QValueAxis* a, int count) {
  a->setTickType(QValueAxis::TicksFixed);
  a->setTickCount(count);
}

// Axis from 0 (or lo) to a round number just above hi, with round ticks,
// at most `maxIntervals` of them (fewer in a narrow chart, so tick labels
// keep their room instead of being elided).
NiceRange niceRange(double lo, double hi, int maxIntervals) {
  const double span = std::max(hi - lo, 1e-9);
  const int most = std::clamp(maxIntervals, 1, 6);
  // The smallest round step that needs at most `most` intervals: the top
  // stays close to the data (401 -> 500, not 600).
  const double e = std::pow(10.0, std::floor(std::log10(span / most)));
  double step = 10 * e;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0})
    if (std::ceil(span / (m * e) - 1e-9) <= most) { step = m * e; break; }
  NiceRange r;
  r.lo = lo;
  r.top = lo + std::ceil(span / step - 1e-9) * step;
  r.ticks = static_cast<int>(std::lround((r.top - lo) / step)) + 1;
  return r;
}

NiceRange dataRange(double lo, double hi, int maxIntervals) {
  NiceRange r = niceRange(lo, hi, maxIntervals);
  if (r.ticks > 1 && r.top - hi > 0.25 * (hi - lo)) {
    r.step = (r.top - r.lo) / (r.ticks - 1);
    r.top = hi;
    r.atData = true;
  }
  return r;
}

void dataAxis(QValueAxis* a, double lo, double hi, int maxIntervals) {
  const NiceRange r = dataRange(lo, hi, maxIntervals);
  if (!r.atData) return niceAxis(a, lo, hi, maxIntervals);
  roundTicks(a, r.step);
  a->setRange(r.lo, r.top);
}

NiceRange fitRange(double lo, double hi, int maxIntervals) {
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {  // one value: a span around it
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const int most = std::clamp(maxIntervals, 1, 6);
  const double span = hi - lo;
  const double e = std::pow(10.0, std::floor(std::log10(span / most)));
  NiceRange r;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0}) {
    const double step = m * e;
    const double a = std::floor(lo / step + 1e-9) * step, b = std::ceil(hi / step - 1e-9) * step;
    const int n = static_cast<int>(std::lround((b - a) / step));
    if (n <= most) {
      r.lo = a;
      r.top = b;
      r.step = step;
      r.ticks = n + 1;
      return r;
    }
  }
  r.lo = lo;
  r.top = hi;
  r.ticks = 2;
  r.step = span;
  return r;
}

void fitAxis(QValueAxis* a, double lo, double hi, int maxIntervals) {
  const NiceRange r = fitRange(lo, hi, maxIntervals);
  fixedTicks(a, r.ticks);
  a->setRange(r.lo, r.top);
}

void niceAxis(QValueAxis* a, double lo, double hi, int maxIntervals) {
  const NiceRange r = niceRange(lo, hi, maxIntervals);
  // Ticks first: Qt lays the axis out when the range changes.
  fixedTicks(a, r.ticks);
  a->setRange(r.lo, r.top);
}

// Min/max per pixel column, in x order: the drawn line looks the same as the
// full one at this width.
void decimateLine(const std::vector<QPointF>& in, double x0, double x1, int columns, QList<QPointF>& out) {
  out.clear();
  if (in.size() <= static_cast<std::size_t>(2 * columns) || x1 <= x0) {
    out.reserve(static_cast<qsizetype>(in.size()));
    for (const QPointF& p : in) out.push_back(p);
    return;
  }
  const double w = (x1 - x0) / columns;
  std::size_t i = 0;
  while (i < in.size()) {
    const long col = static_cast<long>(std::floor((in[i].x() - x0) / w));
    std::size_t lo = i, hi = i, j = i;
    for (; j < in.size() && static_cast<long>(std::floor((in[j].x() - x0) / w)) == col; ++j) {
      if (in[j].y() < in[lo].y()) lo = j;
      if (in[j].y() > in[hi].y()) hi = j;
    }
    if (lo == hi) out.push_back(in[lo]);
    else if (lo < hi) { out.push_back(in[lo]); out.push_back(in[hi]); }
    else { out.push_back(in[hi]); out.push_back(in[lo]); }
    i = j;
  }
}

// One point per 2x2-pixel cell.
void decimateScatter(const std::vector<QPointF>& in, const QRectF& range, QSize px, QList<QPointF>& out) {
  out.clear();
  const int cw = std::max(1, px.width() / 2), ch = std::max(1, px.height() / 2);
  if (in.size() <= 2000 || range.width() <= 0 || range.height() <= 0) {
    for (const QPointF& p : in) out.push_back(p);
    return;
  }
  std::vector<bool> seen(static_cast<std::size_t>(cw) * static_cast<std::size_t>(ch), false);
  for (const QPointF& p : in) {
    const int cx = std::clamp(static_cast<int>((p.x() - range.left()) / range.width() * cw), 0, cw - 1);
    const int cy = std::clamp(static_cast<int>((p.y() - range.top()) / range.height() * ch), 0, ch - 1);
    const std::size_t cell = static_cast<std::size_t>(cy) * static_cast<std::size_t>(cw) + static_cast<std::size_t>(cx);
    if (seen[cell]) continue;
    seen[cell] = true;
    out.push_back(p);
  }
}

void StrideSample::clear() {
  stride_ = 1;
  seen_ = 0;
  kept_.clear();
}

void StrideSample::append(const QPointF* first, const QPointF* last) {
  for (const QPointF* p = first; p != last; ++p, ++seen_) {
    if (seen_ % stride_ != 0) continue;
    kept_.push_back(*p);
    // Kept point k has index k * stride: keeping the even k is the sample
    // at twice the stride.
    while (cap_ > 0 && kept_.size() > cap_) {
      std::size_t w = 0;
      for (std::size_t k = 0; k < kept_.size(); k += 2) kept_[w++] = kept_[k];
      kept_.resize(w);
      stride_ *= 2;
    }
  }
}

void StrideSample::rebuild(const std::vector<QPointF>& all) {
  clear();
  append(all.data(), all.data() + all.size());
}

}  // namespace sl::ui::chartaxes
