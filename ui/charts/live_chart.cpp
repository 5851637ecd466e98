#include "ui/charts/live_chart.h"

#include <QCategoryAxis>
#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QGridLayout>
#include <QLegendMarker>
#include <QMouseEvent>
#include <QPainter>
#include <QScatterSeries>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/charts/chart_axes.h"
#include "ui/charts/live_chart_impl.h"
#include "ui/common/theme.h"

namespace sl::ui {

using namespace chartaxes;

namespace {
bool gUseOpenGL = false;
// Points drawn above which a rescale empties the series before setting the
// axes (see refresh()).
constexpr int kClearBeforeRescale = 2000;
}  // namespace

void setChartsUseOpenGL(bool on) { gUseOpenGL = on; }
bool chartsUseOpenGL() { return gUseOpenGL; }

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
  connect(d->chart, &QChart::plotAreaChanged, this, [this] {
    placeMarkerLabels();
    placeEndLabels();
    placeEmptyText();
  });
  applyFonts();
  setMinimumSize(150, 100);  // three across under a 1024 px window with both side docks
}

void LiveChart::setXCategories(const QStringList& labels) {
  auto* cat = new QCategoryAxis;
  cat->setGridLineColor(QColor(0xE3, 0xE6, 0xEB));
  cat->setTitleText(d->xLabel);
  cat->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  cat->setStartValue(-0.5);
  for (int i = 0; i < labels.size(); ++i) cat->append(labels[i], i + 0.5);
  for (auto& s : d->series) s.series->detachAxis(d->ax);
  d->chart->removeAxis(d->ax);
  delete d->ax;
  d->ax = cat;
  d->chart->addAxis(cat, Qt::AlignBottom);
  for (auto& s : d->series) s.series->attachAxis(cat);
  d->xCategories = static_cast<int>(labels.size());
  applyFonts();
  refresh();
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
void LiveChart::setYLabel(const QString& text) {
  d->yLabel = text;
  d->ay->setTitleText(text);
  d->dropsFor = {};  // a new title: try it whole again
}
QString LiveChart::seriesName(int i) const { return d->series.at(static_cast<std::size_t>(i)).series->name(); }
bool LiveChart::seriesUsesOpenGL(int i) const { return d->series.at(static_cast<std::size_t>(i)).series->useOpenGL(); }
QWidget* LiveChart::resetButton() const { return d->resetButton; }

void LiveChart::setHelp(const QString& text) {
  d->view->setToolTip(text + "\n" + tr("Wheel: zoom · drag: pan · double-click: reset · right-click: export"));
}

bool LiveChart::relayoutPending() const { return d->relayout->isActive(); }

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
  // No legend: the lines' names at their ends instead (issue 50), in a
  // margin right of the plot.
  fitEndLabels(legend, plotH, plotW);
  // The title (within the chart's margins, the line names' included): the
  // short form where the full one would be cut.
  const double titleRoom = sz.width() - 16 - d->endColumns * d->endColumnW;
  const QString title =
      !d->shortTitle.isEmpty() && tfm.horizontalAdvance(d->title) > titleRoom ? d->shortTitle : d->title;
  if (title != d->shownTitle) {
    d->shownTitle = title;
    updateTitle();
  }
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
    // A GL series makes the window compose through OpenGL; the view's
    // minimal updates then left old tick labels (and an old legend area)
    // on screen after a re-range, e.g. during a Fast run (Mesa under Xvfb).
    // The whole view is repainted on every change instead: one chart, a
    // few times a second.
    d->view->setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
  }
  if (style == SeriesStyle::Scatter) {
    auto* sc = new QScatterSeries;
    // Categories hold a few values each: large, solid dots; a scatter of
    // many points: small, translucent ones.
    sc->setMarkerSize((d->xCategories > 0 ? 13.0 : 4.5) * d->lineScale);
    QColor fill = color;
    fill.setAlpha(d->xCategories > 0 ? 230 : 150);
    sc->setColor(fill);
    sc->setBorderColor(Qt::transparent);
    s = sc;
  } else {
    auto* ln = new QLineSeries;
    QPen pen(color);
    pen.setWidthF(kSeriesPen * d->lineScale);
    ln->setPen(pen);
    s = ln;
  }
  s->setName(name);
  s->setUseOpenGL(d->gl);
  d->chart->addSeries(s);
  s->attachAxis(d->ax);
  s->attachAxis(d->ay);
  // The legend draws its labels as rich text: a name such as "migrated at
  // </think>" must reach it escaped, or the tag is swallowed.
  for (QLegendMarker* m : d->chart->legend()->markers(s)) m->setLabel(name.toHtmlEscaped());
  Impl::S added;
  added.series = s;
  added.style = style;
  d->series.push_back(std::move(added));
  return static_cast<int>(d->series.size()) - 1;
}

void LiveChart::setSeriesData(int i, std::vector<QPointF> points) {
  auto& s = d->series.at(static_cast<std::size_t>(i));
  s.data = std::move(points);
  s.any = false;
  s.x0 = s.x1 = s.y0 = s.y1 = 0;
  s.sample.clear();
  s.extend(s.data.data(), s.data.data() + s.data.size());
}

void LiveChart::appendSeriesData(int i, const std::vector<QPointF>& points) {
  auto& s = d->series.at(static_cast<std::size_t>(i));
  s.data.insert(s.data.end(), points.begin(), points.end());
  s.extend(points.data(), points.data() + points.size());
}

void LiveChart::setSeriesSampleCap(int i, std::size_t cap) {
  auto& s = d->series.at(static_cast<std::size_t>(i));
  if (cap == s.sample.cap()) return;
  s.sample = chartaxes::StrideSample(cap);
  if (cap > 0) s.sample.rebuild(s.data);
}

std::size_t LiveChart::sampledPoints(int i) const { return d->series.at(static_cast<std::size_t>(i)).drawn().size(); }

const std::vector<QPointF>& LiveChart::seriesData(int i) const { return d->series.at(static_cast<std::size_t>(i)).data; }

void LiveChart::removeAllSeries() {
  for (auto& s : d->series) {
    d->chart->removeSeries(s.series);
    delete s.series;
  }
  d->series.clear();
}

void LiveChart::setFixedYRange(double lo, double hi) { d->fixedY = std::make_pair(lo, hi); }
void LiveChart::setLegendVisible(bool on) {
  d->legendWanted = on;
  fitToSize();
}
void LiveChart::setFitToData(bool on) { d->fitData = on; }
void LiveChart::setTitle(const QString& text) {
  d->title = text;
  d->shownTitle.clear();
  updateTitle();
  fitToSize();
}
void LiveChart::setPointsVisible(bool on) {
  for (auto& s : d->series)
    if (s.style == SeriesStyle::Line) static_cast<QLineSeries*>(s.series)->setPointsVisible(on);
}

void LiveChart::refresh() {
  // Ranges from the full data, or from the user's view (y then follows the
  // data inside it).
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  bool any = false;
  const bool zoomed = d->viewX.has_value();
  const double vLo = zoomed ? d->viewX->first : -std::numeric_limits<double>::infinity();
  const double vHi = zoomed ? d->viewX->second : std::numeric_limits<double>::infinity();
  for (const auto& s : d->series) {
    if (!s.any) continue;
    if (!any) { x0 = s.x0; x1 = s.x1; y0 = s.y0; any = true; }
    x0 = std::min(x0, s.x0);
    x1 = std::max(x1, s.x1);
    y0 = std::min(y0, s.y0);
    if (!zoomed) {
      y1 = std::max(y1, s.y1);
      continue;
    }
    // Zoomed: y follows what is drawn inside the view (a sampled series'
    // sample).
    for (const QPointF& p : s.drawn())
      if (p.x() >= vLo && p.x() <= vHi) y1 = std::max(y1, p.y());
  }
  if (!any) { x0 = 0; x1 = 10; }
  for (double m : d->markerXs) x1 = std::max(x1, m);
  for (double m : d->windowXs) x1 = std::max(x1, m);
  if (x1 - x0 < 1e-9) x1 = x0 + 1;
  double xLo = x0 >= 0 ? 0 : x0;
  fitToSize();
  // A new axis range makes Qt Charts recompute every series' geometry from
  // the points it holds, and the replace() below does it again for the new
  // points. With many points drawn (the KV chart: 32 instances' lines, 25k
  // points, 15 ms each time) the series are emptied first so that the work
  // is done once (B4).
  if (d->drawn > kClearBeforeRescale) {
    const auto xr = zoomed ? std::make_pair(vLo, vHi) : [&] {
      const chartaxes::NiceRange r = chartaxes::dataRange(xLo, x1, d->maxXIntervals);
      return std::make_pair(r.lo, r.top);
    }();
    const auto yr = d->fixedY ? *d->fixedY : std::make_pair(0.0, chartaxes::niceRange(0, y1 > 0 ? y1 * 1.02 : 1.0,
                                                                                      d->maxYIntervals).top);
    if (xr.first != d->ax->min() || xr.second != d->ax->max() || yr.first != d->ay->min() ||
        yr.second != d->ay->max())
      for (auto& s : d->series) s.series->clear();
  }
  const bool fit = d->fitData && any && !zoomed && d->xCategories == 0;
  if (fit) {
    // Both axes fitted to the data (setFitToData): from the first point,
    // not from 0.
    fitAxis(d->ax, x0, x1, d->maxXIntervals);
    xLo = d->ax->min();
  } else if (d->xCategories > 0) {
    xLo = -0.5;
    d->ax->setRange(-0.5, d->xCategories - 0.5);
  } else if (zoomed) {
    xLo = vLo;
    roundTicks(d->ax, niceStep(vHi - vLo, d->maxXIntervals));
    d->ax->setRange(vLo, vHi);
  } else {
    dataAxis(d->ax, xLo, x1, d->maxXIntervals);
  }
  if (d->fixedY) {
    fixedTicks(d->ay, d->maxYIntervals >= 4 ? 5 : 3);
    d->ay->setRange(d->fixedY->first, d->fixedY->second);
  } else if (fit) {
    fitAxis(d->ay, y0, std::max(y0, y1), d->maxYIntervals);
  } else {
    niceAxis(d->ay, 0, y1 > 0 ? y1 * 1.02 : 1.0, d->maxYIntervals);
  }
  const double xHi = d->ax->max(), yLo = d->ay->min(), yHi = d->ay->max();
  const QSize px = d->chart->plotArea().size().toSize().expandedTo(QSize(200, 100));
  // Many lines on top of each other (one per instance): min/max per 2-pixel
  // column; they look the same and cost Qt Charts half the points.
  const int lineColumns = d->series.size() > 16 ? std::max(100, px.width() / 4)
                          : d->series.size() > 8 ? std::max(100, px.width() / 2)
                                                 : px.width();
  QList<QPointF> buf;
  std::vector<QPointF> visible;
  d->drawn = 0;
  for (auto& s : d->series) {
    const std::vector<QPointF>& all = s.drawn();
    const std::vector<QPointF>* in = &all;
    if (zoomed) {
      // Only what is in view (lines keep one point either side, so they run
      // to the edges).
      visible.clear();
      const std::size_t n = all.size();
      for (std::size_t i = 0; i < n; ++i) {
        const double x = all[i].x();
        const bool inView = x >= vLo && x <= vHi;
        const bool edge = s.style == SeriesStyle::Line &&
                          ((i + 1 < n && x < vLo && all[i + 1].x() >= vLo) ||
                           (i > 0 && x > vHi && all[i - 1].x() <= vHi));
        if (inView || edge) visible.push_back(all[i]);
      }
      in = &visible;
    }
    if (s.style == SeriesStyle::Scatter) decimateScatter(*in, QRectF(xLo, yLo, xHi - xLo, yHi - yLo), px, buf);
    else decimateLine(*in, xLo, xHi, lineColumns, buf);
    d->drawn += static_cast<int>(buf.size());
    s.series->replace(buf);
  }
  // Markers: one two-point series each (few of them: one per live change),
  // then the measurement window's edges, drawn solid.
  std::vector<double> xs = d->markerXs;
  xs.insert(xs.end(), d->windowXs.begin(), d->windowXs.end());
  while (d->markers.size() > xs.size()) {
    d->chart->removeSeries(d->markers.back());
    delete d->markers.back();
    d->markers.pop_back();
  }
  while (d->markers.size() < xs.size()) {
    auto* m = new QLineSeries;
    d->chart->addSeries(m);
    m->attachAxis(d->ax);
    m->attachAxis(d->ay);
    const auto markers = d->chart->legend()->markers(m);
    for (auto* lm : markers) lm->setVisible(false);
    d->markers.push_back(m);
  }
  for (std::size_t i = 0; i < d->markers.size(); ++i) {
    const bool window = i >= d->markerXs.size();
    QPen pen(theme::kMarker);
    pen.setStyle(window ? Qt::SolidLine : Qt::DashLine);
    pen.setWidthF((window ? 2.0 : 1.2) * d->lineScale);
    if (d->markers[i]->pen() != pen) d->markers[i]->setPen(pen);
    d->markers[i]->replace(QList<QPointF>{{xs[i], yLo}, {xs[i], yHi}});
  }
  placeMarkerLabels();
  placeEndLabels();
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

std::pair<double, double> LiveChart::xRange() const { return {d->ax->min(), d->ax->max()}; }
std::pair<double, double> LiveChart::yRange() const { return {d->ay->min(), d->ay->max()}; }
QWidget* LiveChart::plotWidget() const { return d->view->viewport(); }

}  // namespace sl::ui
