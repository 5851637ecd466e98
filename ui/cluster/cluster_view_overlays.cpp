// The cluster view's overlays: transfer arrows between cards, lecture
// mode's callouts and the legend (cards and chips: cluster_view.cpp).
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/cluster_view_paint.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

#include "ui/common/theme.h"

namespace sl::ui {

using namespace clusterpaint;

namespace {
// Where the segment from the centre of `r` towards `to` leaves `r`.
QPointF edgePoint(const QRectF& r, const QPointF& to) {
  const QPointF c = r.center(), d = to - c;
  const double sx = std::abs(d.x()) > 1e-9 ? (r.width() / 2.0) / std::abs(d.x()) : 1e18;
  const double sy = std::abs(d.y()) > 1e-9 ? (r.height() / 2.0) / std::abs(d.y()) : 1e18;
  const double s = std::min({sx, sy, 1.0});
  return c + d * s;
}
QPointF bezier(const QPointF& a, const QPointF& c, const QPointF& b, double t) {
  const double u = 1 - t;
  return a * (u * u) + c * (2 * u * t) + b * (t * t);
}
QPointF bezierTangent(const QPointF& a, const QPointF& c, const QPointF& b, double t) {
  return (c - a) * (2 * (1 - t)) + (b - c) * (2 * t);
}
}  // namespace

void ClusterView::paintTransfer(QPainter& p, std::int64_t id, int src, int dst, bool live, double progress,
                                bool animated) {
  const int n = static_cast<int>(cards_.size());
  if (src < 0 || dst < 0 || src >= n || dst >= n || src == dst) return;
  const QRectF ra = cards_[static_cast<std::size_t>(src)], rb = cards_[static_cast<std::size_t>(dst)];
  // A gentle curve, bent to one side by direction so A→B and B→A stay apart.
  const QPointF a0 = ra.center(), b0 = rb.center();
  QPointF dir = b0 - a0;
  const double len0 = std::hypot(dir.x(), dir.y());
  if (len0 < 1) return;
  const QPointF nrm(-dir.y() / len0, dir.x() / len0);
  const QPointF ctrl = (a0 + b0) / 2 + nrm * (0.18 * len0);
  // From well inside the source card to well inside the destination card, so
  // that neighbours (8 px apart) still get a visible arrow. Both ends sit on
  // the card's rows of chips, the only part of a card an arrow is drawn
  // over (paintEvent clips it to them and to the gaps between cards): never
  // on a badge, a KV %, a value or a queue's label.
  auto onChips = [this](QPointF pt, int card) {
    QRect land = landings_[static_cast<std::size_t>(card)];
    if (land.isEmpty()) return pt;
    const int dx = std::min(4, (land.width() - 1) / 2), dy = std::min(4, (land.height() - 1) / 2);
    land.adjust(dx, dy, -dx, -dy);
    return QPointF(std::clamp<double>(pt.x(), land.left(), land.right()), std::clamp<double>(pt.y(), land.top(), land.bottom()));
  };
  const QPointF a = onChips(a0 + (edgePoint(ra, ctrl) - a0) * 0.45, src),
                b = onChips(b0 + (edgePoint(rb, ctrl) - b0) * 0.45, dst);
  const double t = std::clamp(progress, 0.0, 1.0);
  arrowEnds_.push_back(a);
  arrowEnds_.push_back(b);

  QPainterPath track(a);
  track.quadTo(ctrl, b);
  QColor faint = theme::kMigrating;
  faint.setAlpha(90);
  QPen trackPen(faint, 2);
  if (live) trackPen.setStyle(Qt::DashLine);
  p.setBrush(Qt::NoBrush);
  p.setPen(trackPen);
  p.drawPath(track);
  // The copied part, solid.
  QPainterPath done(a);
  const int steps = 24;
  for (int i = 1; i <= steps; ++i) done.lineTo(bezier(a, ctrl, b, t * i / steps));
  p.setPen(QPen(theme::kMigrating, 3, Qt::SolidLine, Qt::RoundCap));
  p.drawPath(done);
  // Source dot, destination ring where the KV lands.
  p.setPen(Qt::NoPen);
  p.setBrush(theme::kMigrating);
  p.drawEllipse(a, 3, 3);
  p.setPen(QPen(theme::kMigrating, 2));
  p.setBrush(Qt::white);
  p.drawEllipse(b, 5, 5);

  const QPointF head = bezier(a, ctrl, b, t);
  QPointF tan = bezierTangent(a, ctrl, b, t);
  const double tl = std::hypot(tan.x(), tan.y());
  if (tl > 1e-6) tan /= tl;
  if (animated) {
    // Particles trail the head; they flow in animation time so the copy
    // looks alive even when its progress is slow.
    p.setPen(Qt::NoPen);
    for (int k = 0; k < 5; ++k) {
      const double phase = std::fmod(animT_ * 1.6 + k / 5.0, 1.0);
      const double s = t * phase;
      QColor c = theme::kMigrating;
      c.setAlphaF(0.25 + 0.6 * phase);
      p.setBrush(c);
      p.drawEllipse(bezier(a, ctrl, b, s), 2.2, 2.2);
    }
    QColor halo = theme::kMigrating;
    halo.setAlphaF(0.18);
    p.setBrush(halo);
    p.drawEllipse(head, 9 + 2 * std::sin(animT_ * 6.0), 9 + 2 * std::sin(animT_ * 6.0));
  }
  // Arrowhead at the copy's progress.
  const QPointF side(-tan.y(), tan.x());
  QPolygonF arrow;
  arrow << head + tan * 7 << head - tan * 5 + side * 5.5 << head - tan * 5 - side * 5.5;
  p.setBrush(theme::kMigrating);
  p.setPen(QPen(Qt::white, 1));
  p.drawPolygon(arrow);
  hits_.push_back({QRect(head.toPoint() - QPoint(9, 9), QSize(18, 18)),
                   tr("request #%1: GPU %2 → GPU %3, %4 copied%5")
                       .arg(id).arg(src).arg(dst).arg(pct(t))
                       .arg(live ? tr(" (live migration)") : QString())});
}

QFont ClusterView::calloutFont() const {
  QFont f = font();
  f.setPointSizeF(font().pointSizeF() * 0.9);
  return f;
}

int ClusterView::calloutLaneHeight() const {
  if (!lecture_) return 0;
  const int rows = laneRows();
  return rows * (QFontMetrics(calloutFont()).height() + 8) + (rows + 1) * 3;
}

int ClusterView::laneRows() const {
  // A view too short for two rows of callouts and two rows of cards with
  // their chips (eight cards on a 1024×768 projector, a 1280×720 laptop)
  // keeps one row: the newest callouts, and the cards' queues.
  const int row = QFontMetrics(calloutFont()).height() + 11;
  return height() - kLegendH - kLaneRows * row < 2 * kMinFullH + 3 * kGap ? 1 : kLaneRows;
}

void ClusterView::paintCallouts(QPainter& p, const QRect& lane) {
  p.fillRect(lane, theme::kBackground.darker(104));
  if (callouts_.empty()) {
    p.setFont(calloutFont());
    p.setPen(theme::kMuted);
    p.drawText(lane.adjusted(10, 0, -10, 0), Qt::AlignLeft | Qt::AlignVCenter,
               firstThatFits(hasCache_ ? QStringList{tr("Callouts appear here: preemptions, migrations, role changes, cache hits"),
                                                     tr("Callouts appear here: preemptions, migrations, cache hits")}
                                         : QStringList{tr("Callouts appear here: preemptions, migrations, role changes")},
                             QFontMetrics(calloutFont()), lane.width() - 20));
    return;
  }
  const QFont f = calloutFont();
  p.setFont(f);
  const QFontMetrics fm(f);
  const int h = fm.height() + 8;
  int row = 0, x = lane.left() + 6;
  // Newest first, left to right, then the next row; each names its card,
  // and the card gets an outline in the callout's colour.
  for (auto it = callouts_.items().rbegin(); it != callouts_.items().rend(); ++it) {
    const Callout& c = *it;
    if (c.instance < 0 || static_cast<std::size_t>(c.instance) >= cards_.size()) continue;
    const QString text = fm.elidedText(tr("GPU %1 · %2").arg(c.instance).arg(c.caption()), Qt::ElideRight,
                                       lane.width() - 40);
    const int w = fm.horizontalAdvance(text) + 28;
    if (x + w > lane.right() - 4 && x > lane.left() + 6) {
      if (++row >= laneRows()) break;
      x = lane.left() + 6;
    }
    const QRect box(x, lane.top() + 3 + row * (h + 3), w, h);
    x += w + 6;
    const double alpha = CalloutBoard::opacity(c, animT_);
    p.setOpacity(alpha);
    p.setPen(QPen(c.color, 1.5));
    p.setBrush(QColor(255, 255, 255, 245));
    p.drawRoundedRect(box, 8, 8);
    p.setPen(Qt::NoPen);
    p.setBrush(c.color);
    p.drawEllipse(QPointF(box.left() + 11, box.center().y() + 0.5), 4, 4);
    p.setPen(theme::kText);
    p.drawText(box.adjusted(20, 0, -6, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
    const QRect card = cards_[static_cast<std::size_t>(c.instance)];
    p.setPen(QPen(c.color, 2.5));
    p.setBrush(Qt::NoBrush);
    p.drawRoundedRect(QRectF(card).adjusted(1.5, 1.5, -1.5, -1.5), 6, 6);
    p.setOpacity(1.0);
    calloutRects_.push_back(box);
  }
}

int ClusterView::legendWidth(const QFont& f) const {
  const QFontMetrics fm(f);
  int w = kGap + 2;
  for (int ph = 0; ph < 3; ++ph) w += kChip + 4 + fm.horizontalAdvance(phaseLabel(ph)) + 14;
  for (const QString& l : {tr("waiting"), tr("swapped"), tr("migrating"), tr("GPU KV"), tr("CPU swap")})
    w += kChip + 4 + fm.horizontalAdvance(l) + 14;
  if (hasSynthetic_) w += kChip + 4 + fm.horizontalAdvance(tr("rank prompt")) + 14;
  if (hasCache_) w += kChip + 4 + fm.horizontalAdvance(cacheLegendLabel()) + 14;
  return w;
}

QFont ClusterView::legendFont() const {
  // 0.85 of the view's font, smaller (down to 0.6) where the legend would be cut.
  QFont small = font();
  for (double k : {0.85, 0.78, 0.7, 0.64, 0.6}) {
    small.setPointSizeF(font().pointSizeF() * k);
    if (legendWidth(small) <= width()) break;
  }
  return small;
}

void ClusterView::paintLegend(QPainter& p, const QRect& r) {
  const QFont small = legendFont();
  p.setFont(small);
  const QFontMetrics fm(small);
  int x = r.left() + kGap + 2;
  const int cy = r.center().y();
  auto item = [&](const QString& label, auto&& drawSwatch) {
    // What does not fit even at the smallest font is left out, never cut.
    if (x + kChip + 4 + fm.horizontalAdvance(label) > r.right()) {
      x = r.right() + 1;
      return;
    }
    drawSwatch(QRectF(x, cy - kChip / 2.0, kChip, kChip));
    x += kChip + 4;
    p.setPen(theme::kMuted);
    p.drawText(QRect(x, r.top(), fm.horizontalAdvance(label) + 2, r.height()), Qt::AlignVCenter, label);
    x += fm.horizontalAdvance(label) + 14;
  };
  for (int ph = 0; ph < 3; ++ph)
    item(phaseLabel(ph), [&](const QRectF& s) { drawChip(p, s, RequestChip{0, static_cast<std::uint8_t>(ph), 1, 0, true}); });
  item(tr("waiting"), [&](const QRectF& s) { drawChip(p, s, RequestChip{0, 1, 0, 0, false}); });
  item(tr("swapped"), [&](const QRectF& s) { drawChip(p, s, RequestChip{0, 1, 2, 0, false}); });
  item(tr("migrating"), [&](const QRectF& s) { drawChip(p, s, RequestChip{0, 1, 3, 0, false}); });
  if (hasSynthetic_)
    item(tr("rank prompt"), [&](const QRectF& s) {
      RequestChip c;
      c.inBatch = c.synthetic = true;
      drawChip(p, s, c);
    });
  item(tr("GPU KV"), [&](const QRectF& s) { drawBar(p, s.toAlignedRect(), 1, 0, theme::kGpuBar); });
  item(tr("CPU swap"), [&](const QRectF& s) { drawBar(p, s.toAlignedRect(), 1, 0, theme::kCpuBar); });
  if (hasCache_)  // the KV bar's teal band (prefix caching on)
    item(cacheLegendLabel(), [&](const QRectF& s) { drawCacheBand(p, s.toAlignedRect(), 0, 1); });
}

QFont ClusterView::poolHeaderFont() const {
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 0.92);
  f.setBold(true);
  return f;
}

void ClusterView::paintPoolHeaders(QPainter& p, const std::vector<QRect>& headers, const std::vector<QRect>& blocks,
                                   const QFont& font) {
  p.save();
  p.setPen(Qt::NoPen);
  p.setBrush(theme::kPoolBlock);
  for (const QRect& b : blocks) p.drawRoundedRect(QRectF(b), 6, 6);
  p.setFont(font);
  const QFontMetrics fm(font);
  for (std::size_t g = 0; g < headers.size() && g < pools_.size(); ++g) {
    const PoolGroup& pool = pools_[g];
    const QRect& r = headers[g];
    // A dot in the role's colour: prefill blue, decode green (the phases'
    // chip colours), colocated grey.
    const QColor dot = pool.role == "prefill"  ? theme::kPrefill
                       : pool.role == "decode" ? theme::kAnswering
                                               : theme::kMuted;
    p.setPen(Qt::NoPen);
    p.setBrush(dot);
    p.drawEllipse(QRectF(r.left() + 1, r.center().y() - 3.5, 7, 7));
    const QRect textRect = r.adjusted(12, 0, 0, 0);
    const QString text = firstThatFits(pool.headerForms(), fm, textRect.width());
    p.setPen(theme::kText);
    p.drawText(textRect, Qt::AlignLeft | Qt::AlignVCenter, text);
    const QRect drawn(textRect.left(), r.top(), std::min(textRect.width(), fm.horizontalAdvance(text)), r.height());
    poolHeaders_.push_back({QRect(r.topLeft(), drawn.bottomRight()), text, pool.toolTip()});
    hits_.push_back({r, pool.toolTip()});
  }
  p.restore();
}

QString ClusterView::cacheLegendLabel() { return tr("cached, free-able"); }

}  // namespace sl::ui
