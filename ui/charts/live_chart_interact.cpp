// LiveChart: what the user does with a chart and what is drawn over it: zoom
// (wheel, rubber band), pan, reset, hover read-outs, live-change markers
// and their labels, the measurement window. Series, axes and layout:
// live_chart.cpp; images: live_chart_export.cpp.
#include "ui/charts/live_chart.h"

#include <QCategoryAxis>
#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QGraphicsLayout>
#include <QGraphicsRectItem>
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

void LiveChart::setMarkers(const std::vector<double>& xs, const QStringList& labels) {
  d->markerXs = xs;
  d->markerTexts = labels;
}

void LiveChart::setWindowMarkers(const std::vector<double>& xs, const QStringList& labels) {
  d->windowXs = xs;
  d->windowTexts = labels;
}

QStringList LiveChart::shownMarkerLabels() const {
  QStringList out;
  for (const QGraphicsSimpleTextItem* t : d->markerLabels)
    if (t->isVisible()) out << t->text();
  return out;
}

void LiveChart::placeMarkerLabels() {
  // Change markers first, then the window's edges (as in d->markers); a
  // marker without a text gets no label.
  std::vector<double> xs = d->markerXs;
  QStringList texts = d->markerTexts.mid(0, static_cast<int>(xs.size()));
  while (texts.size() < static_cast<int>(xs.size())) texts << QString();
  if (!d->windowTexts.isEmpty()) {
    xs.insert(xs.end(), d->windowXs.begin(), d->windowXs.end());
    for (std::size_t k = 0; k < d->windowXs.size(); ++k)
      texts << (k < static_cast<std::size_t>(d->windowTexts.size()) ? d->windowTexts[static_cast<int>(k)] : QString());
  }
  while (!texts.isEmpty() && texts.back().isEmpty()) {
    texts.pop_back();
    xs.pop_back();
  }
  const std::size_t n = std::min(d->markers.size(), static_cast<std::size_t>(texts.size()));
  while (d->markerLabels.size() > n) {
    delete d->markerLabels.back()->parentItem();  // its backdrop, and with it the label
    d->markerLabels.pop_back();
  }
  while (d->markerLabels.size() < n) {
    // The label on a pale backdrop: readable where it crosses a series.
    auto* backdrop = new QGraphicsRectItem(d->chart);
    backdrop->setPen(Qt::NoPen);
    backdrop->setBrush(QColor(255, 255, 255, 215));
    backdrop->setZValue(10);
    auto* t = new QGraphicsSimpleTextItem(backdrop);
    t->setBrush(theme::kMarker);
    d->markerLabels.push_back(t);
  }
  // Beside its line, never over it, nor over a series' line or an earlier
  // label (issue 50: a label at the top covered the very line whose change it
  // named, which rose there right after it): the first free place of the
  // right or left side, top row, second row, bottom row, row above it. Left
  // out where none is free of other labels; where all cross a series, the
  // one crossing it least.
  const QRectF area = d->chart->plotArea();
  std::vector<QRectF> placed;
  for (std::size_t i = 0; i < n; ++i) {
    QGraphicsSimpleTextItem* t = d->markerLabels[i];
    QGraphicsItem* backdrop = t->parentItem();
    t->setFont(labelFont());
    t->setText(texts[static_cast<int>(i)]);
    if (t->text().isEmpty()) {
      backdrop->setVisible(false);
      continue;
    }
    const double x = d->chart->mapToPosition(QPointF(xs[i], d->ay->max()), d->markers[i]).x();
    const QRectF box = t->boundingRect();
    const QRectF best = x >= area.left() - 0.5 && x <= area.right() + 0.5 ? freeLabelPlace(x, box.size(), placed)
                                                                           : QRectF();
    backdrop->setVisible(!best.isNull());
    if (best.isNull()) continue;
    static_cast<QGraphicsRectItem*>(backdrop)->setRect(-1, 0, box.width() + 2, box.height());
    backdrop->setPos(best.topLeft());
    placed.push_back(best);
  }
}

QRectF LiveChart::freeLabelPlace(double x, QSizeF box, const std::vector<QRectF>& placed) const {
  const QRectF area = d->chart->plotArea();
  const double h = box.height();
  std::vector<double> lefts{x + 3, x - 3 - box.width()};
  // Neither side of its line has room (a narrow chart): against the plot's
  // right edge.
  std::erase_if(lefts, [&](double l) { return l < area.left() || l + box.width() > area.right(); });
  if (lefts.empty() && box.width() <= area.width()) lefts.push_back(area.right() - box.width());
  const double tops[] = {area.top() + 1, area.top() + 1 + h, area.bottom() - 1 - h, area.bottom() - 1 - 2 * h};
  // How much of a series' drawn line passes through r (points in it, and
  // segments across it, sampled every few pixels).
  auto crossings = [&](const QRectF& r) {
    const QRectF in = r.adjusted(-2, -2, 2, 2);
    int hits = 0;
    for (const auto& s : d->series) {
      if (!s.series->isVisible()) continue;
      const QList<QPointF> pts = s.series->points();
      QPointF prev;
      bool havePrev = false;
      for (const QPointF& p : pts) {
        const QPointF q = d->chart->mapToPosition(p, s.series);
        if (in.contains(q)) ++hits;
        else if (havePrev && s.style == SeriesStyle::Line && std::max(prev.x(), q.x()) >= in.left() &&
                 std::min(prev.x(), q.x()) <= in.right()) {
          const int steps = std::clamp(static_cast<int>(QLineF(prev, q).length() / 4), 1, 200);
          for (int k = 1; k < steps; ++k)
            if (in.contains(prev + (q - prev) * (static_cast<double>(k) / steps))) {
              ++hits;
              break;
            }
        }
        prev = q;
        havePrev = true;
      }
    }
    return hits;
  };
  QRectF best;
  int bestHits = std::numeric_limits<int>::max();
  for (double top : tops) {
    if (top < area.top() || top + h > area.bottom()) continue;
    for (double left : lefts) {
      const QRectF r(left - 1, top, box.width() + 2, h);
      if (std::any_of(placed.begin(), placed.end(), [&](const QRectF& o) { return o.adjusted(-4, 0, 4, 0).intersects(r); }))
        continue;
      const int hits = crossings(r);
      if (hits == 0) return QRectF(left, top, box.width(), h);
      if (hits < bestHits) {
        bestHits = hits;
        best = QRectF(left, top, box.width(), h);
      }
    }
  }
  return best;
}

QList<QRectF> LiveChart::shownMarkerLabelRects() const {
  QList<QRectF> out;
  for (const QGraphicsSimpleTextItem* t : d->markerLabels)
    if (t->parentItem()->isVisible()) {
      const QRectF r = d->chart->mapRectToScene(QRectF(t->parentItem()->pos(), t->boundingRect().size()));
      out << QRectF(d->view->mapFromScene(r.topLeft()), r.size());
    }
  return out;
}

void LiveChart::setEmptyText(const QString& text) {
  if (text == emptyText().simplified()) return;
  if (!d->emptyLabel) {
    d->emptyLabel = new QGraphicsSimpleTextItem(d->chart);
    d->emptyLabel->setBrush(theme::kMuted);
    d->emptyLabel->setZValue(10);
  }
  d->emptyLabel->setText(text);
  d->emptyLabel->setVisible(!text.isEmpty());
  for (auto& s : d->series) s.series->setVisible(text.isEmpty());
  placeEmptyText();
}

QString LiveChart::emptyText() const { return d->emptyLabel ? d->emptyLabel->text() : QString(); }

void LiveChart::placeEmptyText() {
  if (!d->emptyLabel || d->emptyLabel->text().isEmpty()) return;
  d->emptyLabel->setFont(labelFont());
  const QRectF area = d->chart->plotArea();
  // On two lines where one is wider than the plot; on as many as it takes
  // where even a half is (a narrow chart: the text stays off the axis labels).
  QString text = d->emptyLabel->text().simplified();
  const QFontMetricsF fm(labelFont());
  const double avail = area.width() - 8;
  if (fm.horizontalAdvance(text) > avail) {
    const qsizetype mid = text.size() / 2;
    qsizetype cut = text.lastIndexOf(' ', mid);
    if (const qsizetype after = text.indexOf(' ', mid); cut < 0 || (after >= 0 && after - mid < mid - cut)) cut = after;
    if (cut > 0) text[cut] = '\n';
    bool fits = true;
    for (const QString& line : text.split('\n')) fits = fits && fm.horizontalAdvance(line) <= avail;
    if (!fits) {
      QStringList lines;
      for (const QString& word : d->emptyLabel->text().simplified().split(' ')) {
        if (!lines.isEmpty() && fm.horizontalAdvance(lines.back() + ' ' + word) <= avail)
          lines.back() += ' ' + word;
        else
          lines << word;
      }
      text = lines.join('\n');
    }
  }
  d->emptyLabel->setText(text);
  const QRectF box = d->emptyLabel->boundingRect();
  d->emptyLabel->setPos(std::max(area.left() + 2, area.center().x() - box.width() / 2),
                        area.center().y() - box.height() / 2);
}

void LiveChart::setViewX(double lo, double hi) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || d->xCategories > 0) return;
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

}  // namespace sl::ui
