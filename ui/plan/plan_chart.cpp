#include "ui/plan/plan_chart.h"

#include <QBuffer>
#include <QChart>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QSaveFile>
#include <QScatterSeries>
#include <QSvgGenerator>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "ui/charts/chart_axes.h"
#include "ui/common/theme.h"

namespace sl::ui {

namespace {
// The y axis (attainment %): a little past both ends so markers at 0 and
// 100 % are drawn whole; ticks every 25 %.
constexpr double kYLo = -4, kYHi = 104;
}  // namespace

PlanChart::PlanChart(QWidget* parent) : QChartView(parent) {
  auto* c = new QChart;
  c->setBackgroundBrush(theme::kCard);
  c->setBackgroundRoundness(0);
  c->setMargins(QMargins(6, 6, 10, 6));
  c->legend()->setAlignment(Qt::AlignTop);
  c->legend()->setLabelColor(theme::kText);
  QFont tf = font();
  tf.setBold(true);
  c->setTitleFont(tf);
  c->setTitleBrush(theme::kText);
  setChart(c);
  setRenderHint(QPainter::Antialiasing);
  setMouseTracking(true);
  viewport()->setMouseTracking(true);

  ax_ = new QValueAxis;
  ay_ = new QValueAxis;
  ax_->setTitleText(tr("cost ($/hour)"));
  ay_->setTitleText(tr("SLO attainment (%)"));
  for (QValueAxis* a : {ax_, ay_}) {
    a->setLabelsColor(theme::kText);
    a->setTitleBrush(theme::kText);
    a->setGridLineColor(theme::kTrack);
    a->setLinePenColor(theme::kCardBorder);
    a->setLabelFormat("%g");
  }
  ay_->setRange(kYLo, kYHi);
  chartaxes::roundTicks(ay_, 25);
  ay_->setLabelFormat("%.0f");
  c->addAxis(ax_, Qt::AlignBottom);
  c->addAxis(ay_, Qt::AlignLeft);

  target_ = new QLineSeries;
  QPen tp(theme::kMarker, 1.5, Qt::DashLine);
  target_->setPen(tp);
  step_ = new QLineSeries;
  step_->setName(tr("Pareto front"));
  step_->setPen(QPen(theme::kSwapped, 2.5));
  all_ = new QScatterSeries;
  all_->setName(tr("simulated"));
  all_->setMarkerSize(8);
  QColor fill = theme::kSeriesA;
  fill.setAlpha(170);
  all_->setBrush(fill);
  all_->setPen(QPen(theme::kSeriesA.darker(120), 0.8));
  frontPts_ = new QScatterSeries;
  frontPts_->setMarkerSize(10);
  frontPts_->setBrush(theme::kSwapped);
  frontPts_->setPen(QPen(theme::kSwapped.darker(140), 1));
  winner_ = new QScatterSeries;
  winner_->setName(tr("winner"));
  winner_->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  winner_->setMarkerSize(15);
  winner_->setBrush(theme::kAlert);
  winner_->setPen(QPen(Qt::white, 2));
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{target_, step_, all_, frontPts_, winner_}) {
    c->addSeries(s);
    s->attachAxis(ax_);
    s->attachAxis(ay_);
  }
  for (QLegendMarker* m : c->legend()->markers(frontPts_)) m->setVisible(false);  // the step's points

  winnerBack_ = new QGraphicsRectItem(c);
  winnerBack_->setBrush(QColor(255, 255, 255, 225));
  winnerBack_->setPen(QPen(theme::kAlert, 1));
  winnerBack_->setZValue(19);
  winnerText_ = new QGraphicsSimpleTextItem(c);
  winnerText_->setBrush(theme::kAlert.darker(130));
  QFont wf = font();
  wf.setBold(true);
  winnerText_->setFont(wf);
  winnerText_->setZValue(20);
  emptyText_ = new QGraphicsSimpleTextItem(c);
  emptyText_->setBrush(theme::kMuted);
  emptyText_->setZValue(20);
  connect(c, &QChart::plotAreaChanged, this, [this] { placeLabels(); });
  clearData(tr("no plan yet"));
}

void PlanChart::setData(Data d) {
  data_ = std::move(d);
  empty_.clear();
  rebuild();
}

void PlanChart::clearData(const QString& text) {
  data_ = Data();
  empty_ = text;
  rebuild();
}

std::vector<QPointF> PlanChart::stepLine() const {
  std::vector<QPointF> out;
  for (std::size_t k = 0; k < data_.front.size(); ++k) {
    if (k > 0) out.emplace_back(data_.front[k].x(), out.back().y());
    out.push_back(data_.front[k]);
  }
  return out;
}

std::vector<std::pair<QString, std::vector<QPointF>>> PlanChart::drawnSeries() const {
  std::vector<std::pair<QString, std::vector<QPointF>>> out;
  for (const QXYSeries* s : std::initializer_list<const QXYSeries*>{target_, step_, all_, winner_}) {
    const QList<QPointF> p = s->points();
    out.emplace_back(s->name(), std::vector<QPointF>(p.begin(), p.end()));
  }
  return out;
}

bool PlanChart::zoomUseful() const {
  if (data_.simulated.empty() || data_.front.empty()) return false;
  double hi = 0, focus = 0;
  for (const QPointF& p : data_.simulated) hi = std::max(hi, p.x());
  for (const QPointF& p : data_.front) focus = std::max(focus, p.x());
  if (data_.winner) focus = std::max(focus, data_.winner->x());
  return 1.5 * focus < 0.8 * hi;
}

void PlanChart::setZoomToFront(bool on) {
  zoom_ = on;
  rebuild();
}

std::pair<double, double> PlanChart::xRange() const {
  return {ax_->min(), ax_->max()};
}

void PlanChart::rebuild() {
  chart()->setTitle(data_.title);
  target_->setName(data_.targetName);
  const auto toList = [](const std::vector<QPointF>& v) { return QList<QPointF>(v.begin(), v.end()); };
  double hi = 0;
  for (const QPointF& p : data_.simulated) hi = std::max(hi, p.x());
  if (zoom_ && zoomUseful()) {
    double focus = 0;
    for (const QPointF& p : data_.front) focus = std::max(focus, p.x());
    if (data_.winner) focus = std::max(focus, data_.winner->x());
    hi = 1.5 * focus;
  }
  const chartaxes::NiceRange xr = chartaxes::niceRange(0, hi > 0 ? hi * 1.03 : 1.0, 6);
  ax_->setRange(0, xr.top);
  chartaxes::roundTicks(ax_, xr.ticks > 1 ? xr.top / (xr.ticks - 1) : xr.top);
  all_->replace(toList(data_.simulated));
  frontPts_->replace(toList(data_.front));
  std::vector<QPointF> step = stepLine();
  step_->replace(toList(step));
  if (!data_.simulated.empty())
    target_->replace({QPointF(0, data_.target), QPointF(xr.top, data_.target)});
  else
    target_->clear();
  winner_->clear();
  if (data_.winner) winner_->append(*data_.winner);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{target_, step_, all_, winner_})
    for (QLegendMarker* m : chart()->legend()->markers(s)) m->setVisible(!data_.simulated.empty());
  placeLabels();
}

void PlanChart::placeLabels() {
  const QRectF plot = chart()->plotArea();
  emptyText_->setText(empty_);
  emptyText_->setVisible(!empty_.isEmpty());
  emptyText_->setPos(plot.center() - emptyText_->boundingRect().center());
  winnerText_->setVisible(data_.winner.has_value() && data_.winner->x() <= ax_->max());
  winnerBack_->setVisible(winnerText_->isVisible());
  if (!data_.winner) return;
  winnerText_->setText(data_.winnerLabel);
  // Below and right of the marker (the winner sits high: at or above the
  // target); left of it where the plot ends, above it where the plot's floor is.
  const QPointF p = chart()->mapToPosition(*data_.winner, winner_);
  const QSizeF s = winnerText_->boundingRect().size();
  QPointF at(p.x() + 14, p.y() + 10);
  if (at.x() + s.width() > plot.right() - 4) at.setX(p.x() - 14 - s.width());
  if (at.y() + s.height() > plot.bottom() - 4) at.setY(p.y() - 10 - s.height());
  at.setX(std::max(at.x(), plot.left() + 4));
  winnerText_->setPos(at);
  winnerBack_->setRect(QRectF(at, s).adjusted(-4, -2, 4, 2));
}

QRectF PlanChart::winnerLabelRect() const {
  return winnerText_->isVisible() ? winnerText_->sceneBoundingRect() : QRectF();
}

QPoint PlanChart::viewPosOf(QPointF value) const {
  return mapFromScene(chart()->mapToPosition(value, all_));
}

void PlanChart::resizeEvent(QResizeEvent* e) {
  QChartView::resizeEvent(e);
  placeLabels();
}

QImage PlanChart::renderImage(QSize size, qreal scale) const {
  // A twin laid out at exactly `size` (never the on-screen size).
  PlanChart twin;
  twin.setAttribute(Qt::WA_DontShowOnScreen);
  twin.zoom_ = zoom_;
  twin.setData(data_);
  twin.resize(size);
  twin.show();  // offscreen: lays the scene out at `size`
  twin.chart()->resize(size);
  twin.placeLabels();
  QImage img(size * scale, QImage::Format_ARGB32_Premultiplied);
  img.setDevicePixelRatio(scale);
  img.fill(Qt::white);
  QPainter p(&img);
  p.setRenderHint(QPainter::Antialiasing);
  twin.scene()->render(&p, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), size));
  return img;
}

bool PlanChart::exportPng(const QString& path, QSize size, qreal scale) const {
  const QImage img = renderImage(size, scale);
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  if (!img.save(&f, "PNG")) {
    f.cancelWriting();
    return false;
  }
  return f.commit();
}

bool PlanChart::exportSvg(const QString& path, QSize size) const {
  PlanChart twin;
  twin.setAttribute(Qt::WA_DontShowOnScreen);
  twin.zoom_ = zoom_;
  twin.setData(data_);
  twin.resize(size);
  twin.show();
  twin.chart()->resize(size);
  twin.placeLabels();
  QBuffer buf;
  QSvgGenerator gen;
  gen.setOutputDevice(&buf);
  gen.setSize(size);
  gen.setViewBox(QRect(QPoint(0, 0), size));
  gen.setTitle(data_.title);
  {
    QPainter p(&gen);
    twin.scene()->render(&p, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), size));
  }
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  if (f.write(buf.data()) != buf.data().size()) {
    f.cancelWriting();
    return false;
  }
  return f.commit();
}

}  // namespace sl::ui
