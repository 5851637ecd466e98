// LiveChart: which line is which where the legend has no room (issue 50: at
// 1024 and 1280 px the default Live charts hid their legends, so p50 and
// p99, or one GPU and another, could not be told apart). Each line's name is
// drawn in its colour at the line's right end, in a margin right of the
// plot; names that would collide move apart, and where there are more than
// the plot's height holds they go in columns.
#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ui/charts/live_chart.h"
#include "ui/charts/live_chart_impl.h"

namespace sl::ui {

namespace {
constexpr double kGap = 4;  // px between the plot and the names, and between columns
}

void LiveChart::fitEndLabels(bool legendShown, double plotH, double& plotW) {
  d->endFittedFor = d->series.size();
  int lines = 0;
  const QFontMetricsF fm(labelFont());
  // A first word all the names share ("GPU 0" … "GPU 7"): left out when the
  // names go in columns (the title says "per GPU"; the colours tell them apart).
  QString shared;
  for (const auto& s : d->series)
    if (s.style == SeriesStyle::Line) {
      const QString word = s.series->name().section(' ', 0, 0) + ' ';
      shared = lines++ == 0 ? word : (word == shared ? shared : QString());
    }
  if (lines < 2 || shared.size() < 2) shared.clear();
  auto widestOf = [&](int skip) {
    double w = 0;
    for (const auto& s : d->series)
      if (s.style == SeriesStyle::Line) w = std::max(w, fm.horizontalAdvance(s.series->name().mid(skip)));
    return w;
  };
  double widest = widestOf(0);
  d->endPrefix = 0;
  // Wanted where a legend was, for two lines or more (one line's name is the
  // chart's title; dots and a line are told apart by their shape).
  const bool on = !legendShown && d->legendWanted && d->xCategories == 0 && lines >= 2;
  const int perColumn = std::max(1, static_cast<int>(std::max(fm.height(), plotH) / fm.height()));
  d->endColumns = on ? (lines + perColumn - 1) / perColumn : 0;
  if (d->endColumns > 1 && !shared.isEmpty()) {
    d->endPrefix = static_cast<int>(shared.size());
    widest = widestOf(d->endPrefix);
  }
  d->endColumnW = on ? widest + kGap : 0;
  // Names in columns that would take more than a third of the plot's width
  // (hundreds of instances: 512 names in dozens of columns leave no plot)
  // are not drawn; hovering a line still names it. One column (a few
  // lines: p50 and p99) is always drawn.
  if (d->endColumns > 1 && d->endColumns * d->endColumnW > plotW / 3) {
    d->endColumns = 0;
    d->endColumnW = 0;
  }
  const bool shown = d->endColumns > 0;
  const double margin = d->endColumns * d->endColumnW;
  d->chart->setMargins(QMargins(2, 2, 2 + static_cast<int>(std::ceil(margin)), 2));
  // The margin must not widen the chart's minimum (Qt's own, from its
  // layout), or the view grows past the widget and the names are cut off.
  d->chart->setMinimumSize(QSizeF(1, 1));
  plotW -= margin;
  if (!shown)
    for (QGraphicsSimpleTextItem* t : d->endLabels) t->setVisible(false);
}

void LiveChart::placeEndLabels() {
  // Series added since the margin was sized (a new run's instances): size it again.
  if (d->endFittedFor != d->series.size()) {
    fitToSize();
    if (d->endFittedFor != d->series.size()) return;
  }
  std::vector<const Impl::S*> lines;
  for (const auto& s : d->series)
    if (s.style == SeriesStyle::Line) lines.push_back(&s);
  while (d->endLabels.size() < lines.size()) {
    auto* t = new QGraphicsSimpleTextItem(d->chart);
    t->setZValue(10);
    d->endLabels.push_back(t);
  }
  for (std::size_t i = lines.size(); i < d->endLabels.size(); ++i) d->endLabels[i]->setVisible(false);
  if (d->endColumns == 0) {
    for (QGraphicsSimpleTextItem* t : d->endLabels) t->setVisible(false);
    return;
  }
  const QRectF area = d->chart->plotArea();
  const QFont font = labelFont();
  const double h = QFontMetricsF(font).height();
  // Each name wants the height of its line's last point (the middle of the
  // plot for a line without points yet).
  std::vector<double> want(lines.size(), area.center().y() - h / 2);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const QXYSeries* s = lines[i]->series;
    if (s->count() > 0)
      want[i] = std::clamp(d->chart->mapToPosition(s->at(s->count() - 1), const_cast<QXYSeries*>(s)).y() - h / 2,
                           area.top(), area.bottom() - h);
  }
  std::vector<std::size_t> order(lines.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return want[a] < want[b]; });
  // Per column, top to bottom without overlaps, then pulled up as a block
  // where the last would pass the plot's bottom.
  const int perColumn = std::max(1, static_cast<int>((lines.size() + d->endColumns - 1) / d->endColumns));
  for (int c = 0; c < d->endColumns; ++c) {
    const std::size_t first = static_cast<std::size_t>(c) * static_cast<std::size_t>(perColumn);
    const std::size_t last = std::min(lines.size(), first + static_cast<std::size_t>(perColumn));
    std::vector<double> y;
    for (std::size_t k = first; k < last; ++k) y.push_back(std::max(want[order[k]], y.empty() ? area.top() : y.back() + h));
    for (std::size_t k = y.size(); k-- > 0;) {
      const double limit = (k + 1 < y.size() ? y[k + 1] : area.bottom() + h * 0.5) - h;  // a name may reach the tick labels
      y[k] = std::max(area.top() - h * 0.5, std::min(y[k], limit));
    }
    for (std::size_t k = first; k < last; ++k) {
      QGraphicsSimpleTextItem* t = d->endLabels[order[k]];
      const Impl::S& s = *lines[order[k]];
      t->setFont(font);
      t->setText(s.series->name().mid(d->endPrefix));
      t->setBrush(s.series->color());
      t->setPos(area.right() + kGap + c * d->endColumnW, y[k - first]);
      t->setVisible(s.series->isVisible());
    }
  }
}

bool LiveChart::legendShown() const { return d->chart->legend()->isVisible(); }

namespace {
int ticksOf(const QValueAxis* a) {
  if (a->tickType() == QValueAxis::TicksFixed || a->tickInterval() <= 0) return a->tickCount();
  const double step = a->tickInterval(), anchor = a->tickAnchor();
  const double first = anchor + std::ceil((a->min() - anchor) / step - 1e-9) * step;
  return std::max(0, static_cast<int>(std::floor((a->max() - first) / step + 1e-9)) + 1);
}
}  // namespace

int LiveChart::xTickCount() const { return ticksOf(d->ax); }
int LiveChart::yTickCount() const { return ticksOf(d->ay); }

QStringList LiveChart::shownSeriesKeys() const {
  QStringList out;
  if (legendShown()) {
    for (const QLegendMarker* m : d->chart->legend()->markers())
      if (m->isVisible()) out << m->label();
    return out;
  }
  for (const QGraphicsSimpleTextItem* t : d->endLabels)
    if (t->isVisible() && d->chart->rect().contains(t->mapRectToItem(d->chart, t->boundingRect()))) out << t->text();
  return out;
}

}  // namespace sl::ui
