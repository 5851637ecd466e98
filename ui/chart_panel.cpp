#include "chart_panel.h"

#include <QChart>
#include <QChartView>
#include <QBuffer>
#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QFile>
#include <QFileDialog>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QSaveFile>
#include <QTimer>
#include <QLegendMarker>
#include <QGridLayout>
#include <QLineSeries>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScatterSeries>
#include <QSvgGenerator>
#include <QTextStream>
#include <QToolButton>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <QTabWidget>
#include <QToolTip>
#include <QValueAxis>
#include <QWheelEvent>

#include <algorithm>
#include <QElapsedTimer>
#include <cmath>
#include <limits>

#include "metrics/binned_tail.h"

#include "sim_controller.h"
#include "theme.h"

namespace sl::ui {

namespace {
bool gUseOpenGL = false;

// A round step (1, 2, 2.5 or 5 times a power of ten) of about span /
// intervals (4 when there is room).
double niceStep(double span, int intervals = 4) {
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
void niceAxis(QValueAxis* a, double lo, double hi, int maxIntervals = 6) {
  const double span = std::max(hi - lo, 1e-9);
  const int most = std::clamp(maxIntervals, 1, 6);
  // The smallest round step that needs at most `most` intervals: the top
  // stays close to the data (401 -> 500, not 600).
  const double e = std::pow(10.0, std::floor(std::log10(span / most)));
  double step = 10 * e;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0})
    if (std::ceil(span / (m * e) - 1e-9) <= most) { step = m * e; break; }
  const double top = lo + std::ceil(span / step - 1e-9) * step;
  // Ticks first: Qt lays the axis out when the range changes.
  fixedTicks(a, static_cast<int>(std::lround((top - lo) / step)) + 1);
  a->setRange(lo, top);
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

}  // namespace

void setChartsUseOpenGL(bool on) { gUseOpenGL = on; }

struct LiveChart::Impl {
  QString id, title, xLabel, yLabel;
  QChart* chart = nullptr;
  QChartView* view = nullptr;
  QValueAxis* ax = nullptr;
  QValueAxis* ay = nullptr;
  struct S {
    QXYSeries* series;
    SeriesStyle style;
    std::vector<QPointF> data;
  };
  std::vector<S> series;
  std::vector<QLineSeries*> markers;
  std::vector<double> markerXs;
  std::optional<std::pair<double, double>> fixedY;
  std::optional<std::pair<double, double>> viewX;  // user zoom/pan; unset = automatic
  QToolButton* resetButton = nullptr;
  QString subtitle;
  QString shortTitle, shownTitle;  // shown: the title or its short form
  // keepTextsWhole's last check: for which size, font and series count, when.
  QSize checkedFor;
  QFont checkedFont;
  int checkedSeries = -1;
  QElapsedTimer sinceCheck;
  // Given up at this size and font because Qt still cut a text.
  bool dropLegend = false, dropXTitle = false, dropYTitle = false;
  QSize dropsFor;
  QFont dropsFont;
  bool legendWanted = true;
  bool gl = false;             // every series through OpenGL (a chart with a GL scatter)
  int maxXIntervals = 6, maxYIntervals = 6;
  QTimer* relayout = nullptr;  // refresh after a resize, once it settles
  bool dragging = false;
  QPoint dragStart;
  std::pair<double, double> dragRange{0, 0};
  int drawn = 0;

  // The plot area in the view's viewport coordinates (where mouse events land).
  QRectF plotRect() const { return view->mapFromScene(chart->mapRectToScene(chart->plotArea())).boundingRect(); }
  double xAt(double px) const {
    const QRectF r = plotRect();
    return ax->min() + (px - r.left()) / std::max(1.0, r.width()) * (ax->max() - ax->min());
  }
};

LiveChart::LiveChart(const QString& id, const QString& title, const QString& xLabel, const QString& yLabel,
                     QWidget* parent)
    : QWidget(parent), d(std::make_unique<Impl>()) {
  d->id = id;
  d->title = title;
  d->xLabel = xLabel;
  d->yLabel = yLabel;
  d->chart = new QChart();
  d->chart->setTitle(title);
  d->chart->setMargins(QMargins(2, 2, 2, 2));
  d->chart->layout()->setContentsMargins(0, 0, 0, 0);
  d->chart->setBackgroundRoundness(4);
  d->chart->setAnimationOptions(QChart::NoAnimation);
  d->chart->legend()->setAlignment(Qt::AlignTop);
  d->chart->legend()->setMarkerShape(QLegend::MarkerShapeRectangle);
  d->ax = new QValueAxis;
  d->ay = new QValueAxis;
  for (QValueAxis* a : {d->ax, d->ay}) {
    a->setGridLineColor(QColor(0xE3, 0xE6, 0xEB));
    a->setLabelFormat("%g");
    a->setTickCount(5);
  }
  d->ax->setTitleText(xLabel);
  d->ay->setTitleText(yLabel);
  d->ax->setRange(0, 10);
  d->ay->setRange(0, 1);
  d->chart->addAxis(d->ax, Qt::AlignBottom);
  d->chart->addAxis(d->ay, Qt::AlignLeft);
  d->view = new QChartView(d->chart, this);
  d->view->setRenderHint(QPainter::Antialiasing);
  d->view->setFrameShape(QFrame::NoFrame);
  d->view->setContextMenuPolicy(Qt::NoContextMenu);
  d->view->setMouseTracking(true);
  d->view->viewport()->setMouseTracking(true);
  d->view->viewport()->installEventFilter(this);
  d->view->setToolTip(tr("Wheel: zoom · drag: pan · double-click: reset · right-click: export"));
  auto* lay = new QGridLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(d->view, 0, 0);
  d->resetButton = new QToolButton(this);
  d->resetButton->setText(tr("Reset zoom"));
  d->resetButton->setToolTip(tr("Back to the automatic range (or double-click the chart)"));
  d->resetButton->setAutoRaise(true);
  d->resetButton->hide();
  connect(d->resetButton, &QToolButton::clicked, this, [this] {
    resetView();
    emit viewChanged(d->ax->min(), d->ax->max(), false);
  });
  // Bottom left, under the y axis labels: never over the title or legend.
  lay->addWidget(d->resetButton, 0, 0, Qt::AlignBottom | Qt::AlignLeft);
  d->relayout = new QTimer(this);
  d->relayout->setSingleShot(true);
  d->relayout->setInterval(40);
  connect(d->relayout, &QTimer::timeout, this, [this] { refresh(); });
  applyFonts();
  setMinimumSize(150, 100);  // three across under a 1024 px window with both side docks
}

void LiveChart::applyFonts() {
  QFont tf = font();
  tf.setBold(true);
  tf.setPointSizeF(tf.pointSizeF() * 0.95);
  d->chart->setTitleFont(tf);
  const QFont lf = labelFont();
  d->chart->legend()->setFont(lf);
  for (QValueAxis* a : {d->ax, d->ay}) {
    a->setLabelsFont(lf);
    a->setTitleFont(lf);
  }
  d->resetButton->setFont(lf);
}

QFont LiveChart::labelFont() const {
  QFont lf = font();
  lf.setPointSizeF(std::max(6.5, lf.pointSizeF() * 0.8));
  return lf;
}

void LiveChart::changeEvent(QEvent* e) {
  QWidget::changeEvent(e);
  if (e->type() == QEvent::FontChange) {
    applyFonts();
    updateTitle();
    refresh();
  }
}

void LiveChart::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  d->relayout->start();  // ticks and legend for the new size, once the drag settles
}

void LiveChart::updateTitle() {
  const QString& title = d->shownTitle.isEmpty() ? d->title : d->shownTitle;
  if (d->subtitle.isEmpty()) {
    d->chart->setTitle(title);
    return;
  }
  const int small = std::max(6, static_cast<int>(std::lround(labelFont().pointSizeF())));
  d->chart->setTitle(QString("%1<br><span style=\"font-weight:normal; font-size:%2pt\">%3</span>")
                         .arg(title.toHtmlEscaped())
                         .arg(small)
                         .arg(d->subtitle.toHtmlEscaped()));
}

void LiveChart::setSubtitle(const QString& text) {
  d->subtitle = text;
  updateTitle();
}
QString LiveChart::subtitle() const { return d->subtitle; }
QString LiveChart::xLabel() const { return d->xLabel; }
QString LiveChart::yLabel() const { return d->yLabel; }
QString LiveChart::seriesName(int i) const { return d->series.at(static_cast<std::size_t>(i)).series->name(); }
bool LiveChart::seriesUsesOpenGL(int i) const { return d->series.at(static_cast<std::size_t>(i)).series->useOpenGL(); }
QWidget* LiveChart::resetButton() const { return d->resetButton; }

void LiveChart::setHelp(const QString& text) {
  d->view->setToolTip(text + "\n" + tr("Wheel: zoom · drag: pan · double-click: reset · right-click: export"));
}

QStringList LiveChart::paintedTexts() const {
  QStringList out;
  for (QGraphicsItem* it : d->chart->scene()->items()) {
    if (!it->isVisible()) continue;
    bool shown = true;
    for (QGraphicsItem* p = it->parentItem(); p; p = p->parentItem()) shown = shown && p->isVisible();
    if (!shown) continue;
    if (auto* t = dynamic_cast<QGraphicsTextItem*>(it)) out << t->toPlainText();
    else if (auto* st = dynamic_cast<QGraphicsSimpleTextItem*>(it)) out << st->text();
  }
  out.removeAll(QString());
  return out;
}

QRect LiveChart::titleRect() const {
  for (QGraphicsItem* it : d->chart->scene()->items())
    if (auto* t = dynamic_cast<QGraphicsTextItem*>(it); t && t->isVisible() &&
        t->toPlainText().startsWith(d->shownTitle.isEmpty() ? d->title : d->shownTitle)) {
      const QRect inView = d->view->mapFromScene(t->sceneBoundingRect()).boundingRect();
      return QRect(d->view->mapTo(this, inView.topLeft()), inView.size());
    }
  return {};
}

// How many tick intervals fit, and where the legend goes, at the chart's
// current size: a tick label needs its width between ticks, a legend its
// full names (on one line at the top, else stacked at the right, else none:
// hovering names the series).
void LiveChart::fitToSize() {
  const QSizeF sz = d->chart->size();
  if (sz.toSize() != d->dropsFor || font() != d->dropsFont) d->dropLegend = d->dropXTitle = d->dropYTitle = false;
  const QFontMetricsF fm(labelFont());
  QFont tf = font();
  tf.setBold(true);
  tf.setPointSizeF(tf.pointSizeF() * 0.95);
  const QFontMetricsF tfm(tf);
  // The title: the short form where the full one would be cut.
  const QString title =
      !d->shortTitle.isEmpty() && tfm.horizontalAdvance(d->title) > sz.width() - 16 ? d->shortTitle : d->title;
  if (title != d->shownTitle) {
    d->shownTitle = title;
    updateTitle();
  }
  auto widest = [&](double lo, double hi) {
    return std::max({fm.horizontalAdvance(QString::number(lo, 'g', 6)), fm.horizontalAdvance(QString::number(hi, 'g', 6)),
                     fm.horizontalAdvance("0.25")});
  };
  // Heights: chart title, x tick labels and x title around the plot; a
  // legend row on top if there is room for it and a usable plot.
  const double titleH = tfm.height() * (d->subtitle.isEmpty() ? 1.3 : 2.5);
  const double rowH = fm.height() + 10;
  const double minPlotH = 3 * fm.height();
  double plotH = sz.height() - titleH - 2 * (fm.height() + 5) - 14;
  // Too short for the x axis title: drop it (the tick labels stay whole).
  const bool xTitle = plotH >= minPlotH && !d->dropXTitle;
  d->ax->setTitleVisible(xTitle);
  d->ay->setTitleVisible(!d->dropYTitle);
  if (!xTitle) plotH += fm.height() + 5;
  // Widths: y labels and title on the left.
  const double yLabelW = widest(d->ay->min(), d->ay->max()) + fm.height() + 16;
  double plotW = sz.width() - yLabelW - 12;

  QLegend* lg = d->chart->legend();
  bool legend = false;
  if (d->legendWanted && !d->series.empty() && !d->dropLegend) {
    double rowW = 0, colW = 0;
    for (const auto& s : d->series) {
      const double w = fm.height() + 10 + fm.horizontalAdvance(s.series->name()) + 14;
      rowW += w;
      colW = std::max(colW, w);
    }
    const double colH = static_cast<double>(d->series.size()) * (fm.height() + 6) + 10;
    if (rowW <= sz.width() - 16 && plotH - rowH >= minPlotH) {
      lg->setAlignment(Qt::AlignTop);
      plotH -= rowH;
      legend = true;
    } else if (colW <= sz.width() * 0.4 && colH <= plotH + 2 * fm.height() && plotW - colW >= 80) {
      lg->setAlignment(Qt::AlignRight);
      plotW -= colW + 8;
      legend = true;
    }
  }
  lg->setVisible(legend);
  const double xLabelW = widest(d->ax->min(), d->ax->max()) + fm.horizontalAdvance("00");
  d->maxXIntervals = std::clamp(static_cast<int>(std::max(40.0, plotW) / xLabelW), 1, 6);
  d->maxYIntervals = std::clamp(static_cast<int>(std::max(30.0, plotH) / (fm.height() * 1.8)), 1, 6);
}

void LiveChart::setShortTitle(const QString& text) {
  d->shortTitle = text;
  fitToSize();
}

LiveChart::~LiveChart() = default;

QString LiveChart::id() const { return d->id; }
QString LiveChart::title() const { return d->title; }
int LiveChart::seriesCount() const { return static_cast<int>(d->series.size()); }
int LiveChart::drawnPoints() const { return d->drawn; }

int LiveChart::addSeries(const QString& name, const QColor& color, SeriesStyle style) {
  QXYSeries* s = nullptr;
  // OpenGL series are drawn over every software one: a chart with a GL
  // scatter draws all its series through GL, so they stack in the order
  // they were added (the binned tail over the requests' dots).
  if (style == SeriesStyle::Scatter && gUseOpenGL && !d->gl) {
    d->gl = true;
    for (auto& o : d->series) o.series->setUseOpenGL(true);
  }
  if (style == SeriesStyle::Scatter) {
    auto* sc = new QScatterSeries;
    sc->setMarkerSize(4.5);
    QColor fill = color;
    fill.setAlpha(150);
    sc->setColor(fill);
    sc->setBorderColor(Qt::transparent);
    s = sc;
  } else {
    auto* ln = new QLineSeries;
    QPen pen(color);
    pen.setWidthF(1.6);
    ln->setPen(pen);
    s = ln;
  }
  s->setName(name);
  s->setUseOpenGL(d->gl);
  d->chart->addSeries(s);
  s->attachAxis(d->ax);
  s->attachAxis(d->ay);
  d->series.push_back({s, style, {}});
  return static_cast<int>(d->series.size()) - 1;
}

void LiveChart::setSeriesData(int i, std::vector<QPointF> points) {
  d->series.at(static_cast<std::size_t>(i)).data = std::move(points);
}

const std::vector<QPointF>& LiveChart::seriesData(int i) const { return d->series.at(static_cast<std::size_t>(i)).data; }

void LiveChart::removeAllSeries() {
  for (auto& s : d->series) {
    d->chart->removeSeries(s.series);
    delete s.series;
  }
  d->series.clear();
}

void LiveChart::setMarkers(const std::vector<double>& xs) { d->markerXs = xs; }
void LiveChart::setFixedYRange(double lo, double hi) { d->fixedY = std::make_pair(lo, hi); }
void LiveChart::setLegendVisible(bool on) {
  d->legendWanted = on;
  fitToSize();
}
void LiveChart::setPointsVisible(bool on) {
  for (auto& s : d->series)
    if (s.style == SeriesStyle::Line) static_cast<QLineSeries*>(s.series)->setPointsVisible(on);
}

void LiveChart::refresh() {
  // Ranges from the full data, or from the user's view (y then follows the
  // data inside it).
  double x0 = 0, x1 = 0, y1 = 0;
  bool any = false;
  const bool zoomed = d->viewX.has_value();
  const double vLo = zoomed ? d->viewX->first : -std::numeric_limits<double>::infinity();
  const double vHi = zoomed ? d->viewX->second : std::numeric_limits<double>::infinity();
  for (const auto& s : d->series)
    for (const QPointF& p : s.data) {
      if (!any) { x0 = x1 = p.x(); any = true; }
      x0 = std::min(x0, p.x());
      x1 = std::max(x1, p.x());
      if (p.x() >= vLo && p.x() <= vHi) y1 = std::max(y1, p.y());
    }
  if (!any) { x0 = 0; x1 = 10; }
  for (double m : d->markerXs) x1 = std::max(x1, m);
  if (x1 - x0 < 1e-9) x1 = x0 + 1;
  double xLo = x0 >= 0 ? 0 : x0;
  fitToSize();
  if (zoomed) {
    xLo = vLo;
    roundTicks(d->ax, niceStep(vHi - vLo, d->maxXIntervals));
    d->ax->setRange(vLo, vHi);
  } else {
    niceAxis(d->ax, xLo, x1, d->maxXIntervals);
  }
  if (d->fixedY) {
    fixedTicks(d->ay, d->maxYIntervals >= 4 ? 5 : 3);
    d->ay->setRange(d->fixedY->first, d->fixedY->second);
  } else {
    niceAxis(d->ay, 0, y1 > 0 ? y1 * 1.02 : 1.0, d->maxYIntervals);
  }
  const double xHi = d->ax->max(), yLo = d->ay->min(), yHi = d->ay->max();
  const QSize px = d->chart->plotArea().size().toSize().expandedTo(QSize(200, 100));
  QList<QPointF> buf;
  std::vector<QPointF> visible;
  d->drawn = 0;
  for (auto& s : d->series) {
    const std::vector<QPointF>* in = &s.data;
    if (zoomed) {
      // Only what is in view (lines keep one point either side, so they run
      // to the edges).
      visible.clear();
      const std::size_t n = s.data.size();
      for (std::size_t i = 0; i < n; ++i) {
        const double x = s.data[i].x();
        const bool inView = x >= vLo && x <= vHi;
        const bool edge = s.style == SeriesStyle::Line &&
                          ((i + 1 < n && x < vLo && s.data[i + 1].x() >= vLo) ||
                           (i > 0 && x > vHi && s.data[i - 1].x() <= vHi));
        if (inView || edge) visible.push_back(s.data[i]);
      }
      in = &visible;
    }
    if (s.style == SeriesStyle::Scatter) decimateScatter(*in, QRectF(xLo, yLo, xHi - xLo, yHi - yLo), px, buf);
    else decimateLine(*in, xLo, xHi, px.width(), buf);
    d->drawn += static_cast<int>(buf.size());
    s.series->replace(buf);
  }
  // Markers: one two-point series each (few of them: one per live change).
  while (d->markers.size() > d->markerXs.size()) {
    d->chart->removeSeries(d->markers.back());
    delete d->markers.back();
    d->markers.pop_back();
  }
  while (d->markers.size() < d->markerXs.size()) {
    auto* m = new QLineSeries;
    QPen pen(theme::kMarker);
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.2);
    m->setPen(pen);
    d->chart->addSeries(m);
    m->attachAxis(d->ax);
    m->attachAxis(d->ay);
    const auto markers = d->chart->legend()->markers(m);
    for (auto* lm : markers) lm->setVisible(false);
    d->markers.push_back(m);
  }
  for (std::size_t i = 0; i < d->markers.size(); ++i)
    d->markers[i]->replace(QList<QPointF>{{d->markerXs[i], yLo}, {d->markerXs[i], yHi}});
  // Axis labels that moved (a zoom) leave their old pixels behind unless the
  // whole view is repainted.
  if (d->view->isVisible()) d->view->viewport()->update();
  keepTextsWhole();
}

// The estimates of fitToSize can be beaten by Qt's own spacing (large
// fonts, short charts): when Qt still had to cut a text ("…"), give up the
// legend, then the x axis title, for this size and font.
void LiveChart::keepTextsWhole() {
  const QSize sz = d->chart->size().toSize();
  if (sz.width() <= 0 || sz.height() <= 0) return;
  // The check relays the chart out: after a clean one, repeat it only when
  // the size, font or series changed, or a second has passed (new data can
  // widen the tick labels). Keeps animated redraws cheap (B4).
  if (sz == d->checkedFor && font() == d->checkedFont && static_cast<int>(d->series.size()) == d->checkedSeries &&
      d->sinceCheck.isValid() && d->sinceCheck.elapsed() < 1000)
    return;
  d->checkedFor = sz;
  d->checkedFont = font();
  d->checkedSeries = static_cast<int>(d->series.size());
  d->sinceCheck.restart();
  auto cut = [this] {
    d->chart->layout()->activate();
    for (const QString& t : paintedTexts())
      if (t.contains(QChar(0x2026)) || t.contains("...")) return true;  // Qt Charts elides with "..."
    return false;
  };
  for (int step = 0; step < 3 && cut(); ++step) {
    if (d->chart->legend()->isVisible()) d->dropLegend = true;
    else if (d->ax->isTitleVisible()) d->dropXTitle = true;
    else if (!d->dropYTitle) d->dropYTitle = true;
    else return;
    d->dropsFor = sz;
    d->dropsFont = font();
    fitToSize();
    // Ranges stay; only the layout changes.
  }
}

void LiveChart::setViewX(double lo, double hi) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return;
  d->viewX = std::make_pair(lo, hi);
  d->resetButton->show();
  refresh();
}

void LiveChart::resetView() {
  d->viewX.reset();
  d->resetButton->hide();
  refresh();
}

bool LiveChart::zoomed() const { return d->viewX.has_value(); }
std::pair<double, double> LiveChart::xRange() const { return {d->ax->min(), d->ax->max()}; }
std::pair<double, double> LiveChart::yRange() const { return {d->ay->min(), d->ay->max()}; }
QWidget* LiveChart::plotWidget() const { return d->view->viewport(); }

QPoint LiveChart::viewPosOf(QPointF v) const {
  const QRectF r = d->plotRect();
  const double fx = (v.x() - d->ax->min()) / std::max(1e-300, d->ax->max() - d->ax->min());
  const double fy = (v.y() - d->ay->min()) / std::max(1e-300, d->ay->max() - d->ay->min());
  return QPointF(r.left() + fx * r.width(), r.bottom() - fy * r.height()).toPoint();
}

QString LiveChart::hoverText(QPoint pos) const {
  const QRectF r = d->plotRect().adjusted(-4, -4, 4, 4);
  if (!r.contains(pos)) return {};
  const double xLo = d->ax->min(), xHi = d->ax->max();
  double best = 24.0 * 24.0;
  const Impl::S* bestS = nullptr;
  QPointF bestP;
  for (const auto& s : d->series) {
    if (!s.series->isVisible()) continue;
    for (const QPointF& p : s.data) {
      if (p.x() < xLo || p.x() > xHi) continue;
      const QPointF q = viewPosOf(p);
      const double dx = q.x() - pos.x(), dy = q.y() - pos.y();
      const double dist = dx * dx + dy * dy;
      if (dist < best) {
        best = dist;
        bestS = &s;
        bestP = p;
      }
    }
  }
  if (!bestS) return {};
  return QString("%1\n%2: %3\n%4: %5")
      .arg(bestS->series->name(), d->xLabel)
      .arg(bestP.x(), 0, 'g', 5)
      .arg(d->yLabel)
      .arg(bestP.y(), 0, 'g', 5);
}

bool LiveChart::eventFilter(QObject* o, QEvent* e) {
  if (o != d->view->viewport()) return QWidget::eventFilter(o, e);
  switch (e->type()) {
    case QEvent::Wheel: {
      auto* w = static_cast<QWheelEvent*>(e);
      const QPointF pos = w->position();
      if (!d->plotRect().contains(pos) || w->angleDelta().y() == 0) return false;
      const double lo = d->ax->min(), hi = d->ax->max(), c = d->xAt(pos.x());
      const double f = std::pow(0.8, w->angleDelta().y() / 120.0);
      const double nlo = c - (c - lo) * f, nhi = c + (hi - c) * f;
      if (nhi - nlo < 1e-9) return true;
      setViewX(nlo, nhi);
      emit viewChanged(nlo, nhi, true);
      return true;
    }
    case QEvent::MouseButtonPress: {
      auto* m = static_cast<QMouseEvent*>(e);
      if (m->button() != Qt::LeftButton || !d->plotRect().contains(m->position())) return false;
      d->dragging = true;
      d->dragStart = m->position().toPoint();
      d->dragRange = {d->ax->min(), d->ax->max()};
      d->view->viewport()->setCursor(Qt::ClosedHandCursor);
      return true;
    }
    case QEvent::MouseMove: {
      auto* m = static_cast<QMouseEvent*>(e);
      if (d->dragging) {
        const double w = std::max(1.0, d->plotRect().width());
        const double dx = (m->position().x() - d->dragStart.x()) / w * (d->dragRange.second - d->dragRange.first);
        if (dx == 0) return true;
        setViewX(d->dragRange.first - dx, d->dragRange.second - dx);
        emit viewChanged(d->dragRange.first - dx, d->dragRange.second - dx, true);
        return true;
      }
      const QString text = hoverText(m->position().toPoint());
      if (text.isEmpty()) QToolTip::hideText();
      else QToolTip::showText(d->view->viewport()->mapToGlobal(m->position().toPoint()), text, d->view->viewport());
      return false;
    }
    case QEvent::MouseButtonRelease:
      if (!d->dragging) return false;
      d->dragging = false;
      d->view->viewport()->unsetCursor();
      return true;
    case QEvent::MouseButtonDblClick:
      if (!d->viewX) return true;
      resetView();
      emit viewChanged(d->ax->min(), d->ax->max(), false);
      return true;
    case QEvent::Leave:
      QToolTip::hideText();
      return false;
    default:
      return false;
  }
}

namespace {
// Draw a chart's OpenGL series in software for the duration of an export
// (they are not part of the scene a painter renders).
class SoftwareSeries {
public:
  explicit SoftwareSeries(const std::vector<QXYSeries*>& all) {
    for (QXYSeries* s : all)
      if (s->useOpenGL()) {
        s->setUseOpenGL(false);
        gl_.push_back(s);
      }
  }
  ~SoftwareSeries() {
    for (QXYSeries* s : gl_) s->setUseOpenGL(true);
  }
  SoftwareSeries(const SoftwareSeries&) = delete;
  SoftwareSeries& operator=(const SoftwareSeries&) = delete;

private:
  std::vector<QXYSeries*> gl_;
};
}  // namespace

template <class Draw> void LiveChart::renderAt(QSize size, Draw&& draw) {
  // Lay the chart out at `size` on its own (whatever the view's size), with
  // ticks and legend fitted to it, draw it, then give it back to the view.
  std::vector<QXYSeries*> all;
  for (const auto& s : d->series) all.push_back(s.series);
  const SoftwareSeries software(all);
  const QSizeF old = d->chart->size();
  d->chart->resize(QSizeF(size));
  d->chart->layout()->activate();
  refresh();
  d->chart->layout()->activate();  // the refreshed ticks and legend
  draw();
  d->chart->resize(old);
  d->chart->layout()->activate();
  refresh();
}

QImage LiveChart::renderImage(QSize size, qreal scale) {
  QImage img(size * scale, QImage::Format_ARGB32_Premultiplied);
  img.setDevicePixelRatio(scale);
  img.fill(Qt::white);
  renderAt(size, [&] {
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    d->chart->scene()->render(&p, QRectF(QPointF(0, 0), QSizeF(size)), d->chart->sceneBoundingRect());
  });
  return img;
}

QByteArray LiveChart::renderPng(QSize size, qreal scale, const QMap<QString, QString>& meta) {
  QByteArray bytes;
  QBuffer buf(&bytes);
  buf.open(QIODevice::WriteOnly);
  QImage img = renderImage(size, scale);
  for (auto it = meta.begin(); it != meta.end(); ++it) img.setText(it.key(), it.value());
  img.save(&buf, "PNG");
  return bytes;
}

QByteArray LiveChart::renderSvg(QSize size) {
  QByteArray bytes;
  QBuffer buf(&bytes);
  buf.open(QIODevice::WriteOnly);
  QSvgGenerator gen;
  gen.setOutputDevice(&buf);
  gen.setSize(size);
  gen.setViewBox(QRect(QPoint(0, 0), size));
  gen.setTitle(d->title);
  gen.setDescription("ServeLab chart");
  renderAt(size, [&] {
    QPainter p;
    if (p.begin(&gen)) {
      d->chart->scene()->render(&p, QRectF(QPointF(0, 0), QSizeF(size)), d->chart->sceneBoundingRect());
      p.end();
    }
  });
  return bytes;
}

namespace {
bool writeAtomic(const QString& path, const QByteArray& bytes) {
  QSaveFile f(path);
  return !bytes.isEmpty() && f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size() && f.commit();
}
}  // namespace

bool LiveChart::exportPng(const QString& path, QSize size, qreal scale, const QMap<QString, QString>& meta) {
  return writeAtomic(path, renderPng(size, scale, meta));
}

bool LiveChart::exportSvg(const QString& path, QSize size) { return writeAtomic(path, renderSvg(size)); }

bool LiveChart::exportCsv(const QString& path) const {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
  QTextStream out(&f);
  auto quote = [](QString s) { return s.contains(',') || s.contains('"') ? "\"" + s.replace("\"", "\"\"") + "\"" : s; };
  out << "series," << quote(d->xLabel) << "," << quote(d->yLabel) << "\n";
  for (const auto& s : d->series)
    for (const QPointF& p : s.data)
      out << quote(s.series->name()) << "," << QString::number(p.x(), 'g', 10) << ","
          << QString::number(p.y(), 'g', 10) << "\n";
  return f.error() == QFile::NoError;
}

void LiveChart::contextMenuEvent(QContextMenuEvent* e) {
  QMenu menu(this);
  auto exportAs = [this](const QString& ext, const QString& filter) {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), d->id + "." + ext, filter);
    if (path.isEmpty()) return;
    if (ext == "png") exportPng(path);
    else if (ext == "svg") exportSvg(path);
    else exportCsv(path);
  };
  menu.addAction(tr("Export PNG…"), this, [=] { exportAs("png", tr("PNG image (*.png)")); });
  menu.addAction(tr("Export SVG…"), this, [=] { exportAs("svg", tr("SVG image (*.svg)")); });
  menu.addAction(tr("Export CSV…"), this, [=] { exportAs("csv", tr("CSV data (*.csv)")); });
  menu.exec(e->globalPos());
}

// ------------------------------------------------------------------ panel

std::vector<QPointF> cdfPoints(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::vector<QPointF> out;
  out.reserve(values.size());
  const double n = static_cast<double>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out.emplace_back(values[i], static_cast<double>(i + 1) / n);
  return out;
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
  scatter_->setHelp(tr("Dots: finished requests. Line: the binned tail TTFT per 256-token bin of reasoning "
                       "length (p99, or p95/p90/max for bins of fewer requests), as in tail_ttft.csv"));
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
  return nullptr;
}

void ChartPanel::rebuildKvSeries(int instances) {
  kv_->removeAllSeries();
  for (int i = 0; i < instances; ++i) kv_->addSeries(tr("GPU %1").arg(i), theme::instanceColor(i));
  kv_->setLegendVisible(true);  // shown whenever the names fit (fitToSize)
}

void ChartPanel::clear(int instances) {
  probes_.clear();
  scatterPts_.clear();
  ttfts_.clear();
  tpots_.clear();
  e2es_.clear();
  anyReasoning_ = false;
  cdfDirty_ = false;
  scatter_->setSubtitle({});
  changes_.clear();
  pending_.clear();
  kvStale_ = false;
  if (instances != instances_ || kv_->seriesCount() == 0) rebuildKvSeries(instances);
  instances_ = instances;
  for (LiveChart* c : charts_) {
    for (int s = 0; s < c->seriesCount(); ++s) c->setSeriesData(s, {});
    c->setMarkers({});
    c->refresh();
  }
  probesDirty_ = scatterDirty_ = markersDirty_ = false;
}

void ChartPanel::addProbes(const std::vector<ProbeSample>& probes) {
  if (probes.empty()) return;
  probes_.insert(probes_.end(), probes.begin(), probes.end());
  probesDirty_ = true;
}

void ChartPanel::addFinished(const std::vector<FinishedPoint>& points) {
  for (const FinishedPoint& p : points) {
    if (p.ttftS >= 0) scatterPts_.emplace_back(p.reasoning, p.ttftS);
    if (p.ttftS >= 0) ttfts_.push_back(p.ttftS);
    if (p.tpotS >= 0) tpots_.push_back(p.tpotS);
    if (p.e2eS >= 0) e2es_.push_back(p.e2eS);
    anyReasoning_ = anyReasoning_ || p.reasoning > 0;
  }
  cdfDirty_ = cdfDirty_ || !points.empty();
  scatterDirty_ = scatterDirty_ || !points.empty();
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
  animating_ = false;
  prepare();
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
  animating_ = true;
  prepare();
}

void ChartPanel::prepare() {
  if (markersDirty_) {
    std::vector<double> xs;
    for (const KnobChange& c : changes_) xs.push_back(nsToSeconds(c.time));
    for (LiveChart* c : {ttft_, tpot_, qoe_, thru_, kv_}) c->setMarkers(xs);
  }
  if (probesDirty_ || markersDirty_) {
    std::vector<QPointF> t50, t99, p50, p99, viol, slo, tok;
    std::vector<std::vector<QPointF>> kv(static_cast<std::size_t>(instances_));
    for (const ProbeSample& s : probes_) {
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
    ttft_->setSeriesData(0, std::move(t50));
    ttft_->setSeriesData(1, std::move(t99));
    tpot_->setSeriesData(0, std::move(p50));
    tpot_->setSeriesData(1, std::move(p99));
    qoe_->setSeriesData(0, std::move(viol));
    qoe_->setSeriesData(1, std::move(slo));
    thru_->setSeriesData(0, std::move(tok));
    for (std::size_t i = 0; i < kv.size() && static_cast<int>(i) < kv_->seriesCount(); ++i)
      kv_->setSeriesData(static_cast<int>(i), std::move(kv[i]));
    for (LiveChart* c : {ttft_, tpot_, qoe_, thru_}) markPending(c);
    // One line per instance: with many instances this chart alone costs a
    // frame or two to redraw, so while animating it is redrawn once a second.
    if (!animating_ || instances_ <= 8 || !kvSince_.isValid() || kvSince_.elapsed() >= 1000)
      markPending(kv_);
    else
      kvStale_ = true;
  }
  // The scatter with its tail overlay is O(finished requests): with many of
  // them, while animating, it too gets new data once a second.
  const bool scatterDue = !animating_ || scatterPts_.size() <= 20000 || !scatterSince_.isValid() ||
                          scatterSince_.elapsed() >= 1000;
  bool keepScatterDirty = false;
  if (scatterDirty_ && !scatterDue) keepScatterDirty = true;
  if (scatterDirty_ && scatterDue) {
    scatterSince_.restart();
    // PASCAL Fig. 9 overlay: the binned tail TTFT of the metrics module
    // (bins of 256 reasoning tokens; the same numbers as tail_ttft.csv).
    std::vector<std::pair<std::int64_t, double>> samples;
    samples.reserve(scatterPts_.size());
    for (const QPointF& p : scatterPts_) samples.emplace_back(static_cast<std::int64_t>(std::llround(p.x())), p.y());
    std::vector<QPointF> tail;
    for (const TailBin& b : binnedTailTtft(samples))
      tail.emplace_back(0.5 * static_cast<double>(b.bin_lo + b.bin_hi), b.value);
    scatter_->setSeriesData(0, scatterPts_);
    scatter_->setSeriesData(1, std::move(tail));
    // A workload without reasoning puts every dot at 0: say so.
    scatter_->setSubtitle(!scatterPts_.empty() && !anyReasoning_
                              ? tr("no reasoning tokens in this workload: every request is at 0")
                              : QString());
    markPending(scatter_);
  }
  // The CDFs sort every finished request: while a run animates, only when
  // their page is shown, at most once a second.
  const bool cdfShown = tabs_->currentIndex() == 1;
  if (cdfDirty_ && (!animating_ || (cdfShown && (!cdfSince_.isValid() || cdfSince_.elapsed() >= 1000)))) {
    cdfSince_.restart();
    cdfTtft_->setSeriesData(0, cdfPoints(ttfts_));
    cdfTpot_->setSeriesData(0, cdfPoints(tpots_));
    cdfE2e_->setSeriesData(0, cdfPoints(e2es_));
    for (LiveChart* c : {cdfTtft_, cdfTpot_, cdfE2e_}) markPending(c);
    cdfDirty_ = false;
  }
  probesDirty_ = markersDirty_ = false;
  scatterDirty_ = keepScatterDirty;
}

int ChartPanel::exportAll(const QString& dir, QSize size, qreal scale, const QMap<QString, QString>& meta) const {
  int n = 0;
  for (LiveChart* c : charts_) {
    n += c->exportPng(dir + "/" + c->id() + ".png", size, scale, meta);
    n += c->exportSvg(dir + "/" + c->id() + ".svg", size);
    n += c->exportCsv(dir + "/" + c->id() + ".csv");
  }
  return n;
}

}  // namespace sl::ui
