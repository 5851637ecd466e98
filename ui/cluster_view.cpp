#include "cluster_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "sim_controller.h"
#include "theme.h"

namespace sl::ui {

namespace {
constexpr int kGap = 8;
constexpr int kLegendH = 22;
constexpr int kChip = 8;  // legend and smallest chip size
constexpr int kChipGap = 2;

const char* phaseLabel(int p) {
  switch (p) {
    case 0: return "prefill";
    case 1: return "reasoning";
    default: return "answering";
  }
}
const char* stateLabel(int s) {
  static const char* n[] = {"waiting", "running", "swapped to CPU", "migrating", "hand-off wait", "finished"};
  return s >= 0 && s < 6 ? n[s] : "?";
}
const char* roleLabel(int r) {
  switch (r) {
    case 1: return "prefill";
    case 2: return "decode";
    default: return "";
  }
}
QString pct(double v) { return QString::number(v * 100.0, 'f', v < 0.1 && v > 0 ? 1 : 0) + "%"; }

void drawChip(QPainter& p, const QRectF& r, const RequestChip& c) {
  QColor fill = theme::phaseColor(c.phase);
  const bool swapped = c.state == 2, migrating = c.state == 3;
  if (!c.inBatch) fill = fill.lighter(150);
  if (swapped || migrating) fill.setAlpha(70);
  p.setBrush(fill);
  if (swapped) p.setPen(QPen(theme::kSwapped, 1.6));
  else if (migrating) p.setPen(QPen(theme::kMigrating, 1.6));
  else p.setPen(Qt::NoPen);
  p.drawRoundedRect(r, 2, 2);
}

void drawBar(QPainter& p, const QRect& r, double used, double reserved, const QColor& c) {
  p.setPen(Qt::NoPen);
  p.setBrush(theme::kTrack);
  p.drawRoundedRect(r, 2, 2);
  const int wu = static_cast<int>(std::round(r.width() * std::clamp(used, 0.0, 1.0)));
  const int wr = static_cast<int>(std::round(r.width() * std::clamp(used + reserved, 0.0, 1.0))) - wu;
  if (wr > 0) {
    p.setBrush(theme::kReservedBar);
    p.drawRect(QRect(r.left() + wu, r.top(), wr, r.height()));
  }
  if (wu > 0) {
    p.setBrush(c);
    p.drawRoundedRect(QRect(r.left(), r.top(), wu, r.height()), 2, 2);
  }
}
}  // namespace

ClusterView::ClusterView(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMouseTracking(true);
}

void ClusterView::setFrame(std::shared_ptr<const LiveFrame> frame) {
  frame_ = std::move(frame);
  update();
}

std::vector<QRect> ClusterView::layoutCards(int n, const QRect& area) const {
  std::vector<QRect> out;
  if (n <= 0) return out;
  // Pick the column count that gives the largest card of a pleasant shape.
  int bestCols = 1;
  double best = -1;
  for (int cols = 1; cols <= n; ++cols) {
    const int rows = (n + cols - 1) / cols;
    const double cw = (area.width() - kGap * (cols + 1)) / static_cast<double>(cols);
    const double ch = (area.height() - kGap * (rows + 1)) / static_cast<double>(rows);
    if (cw <= 0 || ch <= 0) continue;
    const double score = std::min(cw, ch * 1.5);
    if (score > best) {
      best = score;
      bestCols = cols;
    }
  }
  const int cols = bestCols, rows = (n + cols - 1) / cols;
  const int cw = std::max(40, (area.width() - kGap * (cols + 1)) / cols);
  const int ch = std::max(30, (area.height() - kGap * (rows + 1)) / rows);
  for (int i = 0; i < n; ++i) {
    const int r = i / cols, c = i % cols;
    out.emplace_back(area.left() + kGap + c * (cw + kGap), area.top() + kGap + r * (ch + kGap), cw, ch);
  }
  return out;
}

void ClusterView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), theme::kBackground);
  hits_.clear();
  if (!frame_ || frame_->snapshot.instances.empty()) {
    p.setPen(theme::kMuted);
    p.drawText(rect(), Qt::AlignCenter, tr("Open a scenario (File ▸ Open or Presets) and press Play"));
    return;
  }
  const auto& inst = frame_->snapshot.instances;
  const QRect area = rect().adjusted(0, 0, 0, -kLegendH);
  const std::vector<QRect> cards = layoutCards(static_cast<int>(inst.size()), area);
  compact_ = !cards.empty() && (cards[0].height() < 120 || cards[0].width() < 150);
  for (std::size_t i = 0; i < cards.size(); ++i) {
    if (compact_) paintCompactCard(p, cards[i], static_cast<int>(i));
    else paintCard(p, cards[i], static_cast<int>(i));
  }
  // Transfers: arrows from source to destination, a dot at the copy's progress.
  for (const TransferSnapshot& t : frame_->snapshot.transfers) {
    if (t.src < 0 || t.dst < 0 || t.src >= static_cast<int>(cards.size()) || t.dst >= static_cast<int>(cards.size()))
      continue;
    const QPointF a = cards[static_cast<std::size_t>(t.src)].center();
    const QPointF b = cards[static_cast<std::size_t>(t.dst)].center();
    QPen pen(theme::kMigrating, 2);
    if (t.live) pen.setStyle(Qt::DashLine);
    p.setPen(pen);
    p.drawLine(a, b);
    const QPointF dir = b - a;
    const double len = std::hypot(dir.x(), dir.y());
    if (len > 1) {
      const QPointF u = dir / len, nrm(-u.y(), u.x());
      const QPointF tip = b - u * 14;
      QPolygonF head;
      head << tip << tip - u * 10 + nrm * 5 << tip - u * 10 - nrm * 5;
      p.setBrush(theme::kMigrating);
      p.setPen(Qt::NoPen);
      p.drawPolygon(head);
      const QPointF dot = a + dir * std::clamp(t.progress, 0.0, 1.0);
      p.setBrush(Qt::white);
      p.setPen(QPen(theme::kMigrating, 2));
      p.drawEllipse(dot, 5, 5);
      hits_.push_back({QRect(dot.toPoint() - QPoint(7, 7), QSize(14, 14)),
                       tr("request #%1: GPU %2 → GPU %3, %4 copied%5")
                           .arg(t.requestId).arg(t.src).arg(t.dst).arg(pct(t.progress))
                           .arg(t.live ? tr(" (live migration)") : QString())});
    }
  }
  paintLegend(p, QRect(0, height() - kLegendH, width(), kLegendH));
}

void ClusterView::paintCard(QPainter& p, const QRect& r, int index) {
  const InstanceSnapshot& in = frame_->snapshot.instances[static_cast<std::size_t>(index)];
  p.setPen(QPen(theme::kCardBorder, 1));
  p.setBrush(theme::kCard);
  p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
  const QRect c = r.adjusted(10, 6, -10, -6);
  QFont f = font();
  QFont bold = f;
  bold.setBold(true);
  QFont small = f;
  small.setPointSizeF(f.pointSizeF() * 0.85);
  const int lh = QFontMetrics(f).height();
  const int sh = QFontMetrics(small).height();

  // Header: name, role, batch, busy dot.
  p.setFont(bold);
  p.setPen(theme::kText);
  const QRect head(c.left(), c.top(), c.width(), lh);
  p.drawText(head, Qt::AlignLeft | Qt::AlignVCenter, tr("GPU %1").arg(in.id));
  p.setFont(small);
  const QString role = roleLabel(in.role);
  QString right = tr("batch %1").arg(in.batchSize);
  p.setPen(theme::kMuted);
  p.drawText(head.adjusted(0, 0, -14, 0), Qt::AlignRight | Qt::AlignVCenter, right);
  p.setPen(Qt::NoPen);
  p.setBrush(in.busy ? theme::kAnswering : theme::kTrack);
  p.drawEllipse(QPointF(head.right() - 4, head.center().y() + 1), 4, 4);
  if (!role.isEmpty()) {
    const int nameW = QFontMetrics(bold).horizontalAdvance(tr("GPU %1").arg(in.id));
    const QRect badge(head.left() + nameW + 8, head.top() + 2, QFontMetrics(small).horizontalAdvance(role) + 10, lh - 4);
    p.setBrush(role == "prefill" ? theme::kPrefill.lighter(175) : theme::kAnswering.lighter(175));
    p.drawRoundedRect(badge, 4, 4);
    p.setPen(theme::kText);
    p.drawText(badge, Qt::AlignCenter, role);
  }
  hits_.push_back({head, tr("GPU %1%2\nbatch: %3 sequences\n%4 tokens produced")
                             .arg(in.id).arg(role.isEmpty() ? QString() : " (" + role + ")")
                             .arg(in.batchSize).arg(in.tokensProduced)});

  // Memory bars.
  int y = head.bottom() + 5;
  const int labelW = QFontMetrics(small).horizontalAdvance("CPU ") + 2;
  const int numW = QFontMetrics(small).horizontalAdvance("100% ");
  auto bar = [&](const QString& label, double used, double reserved, const QColor& col, const QString& tip) {
    p.setFont(small);
    p.setPen(theme::kMuted);
    const QRect row(c.left(), y, c.width(), sh);
    p.drawText(QRect(row.left(), row.top(), labelW, sh), Qt::AlignLeft | Qt::AlignVCenter, label);
    p.drawText(QRect(row.right() - numW, row.top(), numW, sh), Qt::AlignRight | Qt::AlignVCenter, pct(used + reserved));
    const QRect b(row.left() + labelW, row.top() + sh / 2 - 4, row.width() - labelW - numW - 4, 8);
    drawBar(p, b, used, reserved, col);
    hits_.push_back({row, tip});
    y += sh + 2;
  };
  const double g = in.gpuBlocks > 0 ? static_cast<double>(in.gpuBlocksUsed) / static_cast<double>(in.gpuBlocks) : 0;
  const double gr = in.gpuBlocks > 0 ? static_cast<double>(in.gpuBlocksReserved) / static_cast<double>(in.gpuBlocks) : 0;
  const double cpu = in.cpuBlocks > 0 ? static_cast<double>(in.cpuBlocksUsed) / static_cast<double>(in.cpuBlocks) : 0;
  bar(tr("KV"), g, gr, theme::kGpuBar,
      tr("GPU KV cache: %1 of %2 blocks used (%3), %4 reserved for incoming copies")
          .arg(in.gpuBlocksUsed).arg(in.gpuBlocks).arg(pct(g)).arg(in.gpuBlocksReserved));
  bar(tr("CPU"), cpu, 0, theme::kCpuBar,
      tr("CPU swap space: %1 of %2 blocks used (%3)").arg(in.cpuBlocksUsed).arg(in.cpuBlocks).arg(pct(cpu)));

  // Queues: a label then rows of chips, each queue sharing the space left.
  y += 3;
  const int nq = static_cast<int>(in.queues.size());
  if (nq == 0) return;
  const int avail = c.bottom() - y;
  const int perQueue = avail / nq;
  // Largest chip (8..14 px) at which the longest queue still fits.
  std::size_t longest = 0;
  for (const QueueSnapshot& q : in.queues) longest = std::max(longest, q.requests.size());
  int chip = 14;
  for (; chip > kChip; --chip) {
    const int perRowC = std::max(1, (c.width() + kChipGap) / (chip + kChipGap));
    const int rowsC = std::max(0, (perQueue - sh - 2 + kChipGap) / (chip + kChipGap));
    if (static_cast<std::size_t>(perRowC * rowsC) >= longest) break;
  }
  const int perRow = std::max(1, (c.width() + kChipGap) / (chip + kChipGap));
  for (const QueueSnapshot& q : in.queues) {
    const QRect qr(c.left(), y, c.width(), perQueue);
    p.setFont(small);
    p.setPen(theme::kMuted);
    p.drawText(QRect(qr.left(), qr.top(), qr.width(), sh), Qt::AlignLeft | Qt::AlignVCenter,
               QString("%1 · %2").arg(QString::fromStdString(q.name)).arg(q.requests.size()));
    const int rows = std::max(0, (perQueue - sh - 2 + kChipGap) / (chip + kChipGap));
    const int capacity = rows * perRow;
    const int n = static_cast<int>(q.requests.size());
    const int shown = n > capacity ? std::max(0, capacity - 3) : n;  // room for "+N"
    for (int i = 0; i < shown; ++i) {
      const QRectF cr(qr.left() + (i % perRow) * (chip + kChipGap), qr.top() + sh + 2 + (i / perRow) * (chip + kChipGap),
                      chip, chip);
      const RequestChip& chip = q.requests[static_cast<std::size_t>(i)];
      drawChip(p, cr, chip);
      hits_.push_back({cr.toAlignedRect().adjusted(-1, -1, 1, 1),
                       tr("request #%1\nphase: %2\nstate: %3%4\nKV: %5 tokens")
                           .arg(chip.id).arg(phaseLabel(chip.phase)).arg(stateLabel(chip.state))
                           .arg(chip.inBatch ? tr(" (in batch)") : QString()).arg(chip.kvTokens)});
    }
    if (shown < n && rows > 0) {
      p.setPen(theme::kMuted);
      const int i = shown;
      p.drawText(QRect(qr.left() + (i % perRow) * (chip + kChipGap), qr.top() + sh + 2 + (i / perRow) * (chip + kChipGap) - 3,
                       40, chip + 6),
                 Qt::AlignLeft | Qt::AlignVCenter, QString("+%1").arg(n - shown));
    }
    y += perQueue;
  }
}

void ClusterView::paintCompactCard(QPainter& p, const QRect& r, int index) {
  const InstanceSnapshot& in = frame_->snapshot.instances[static_cast<std::size_t>(index)];
  p.setPen(QPen(theme::kCardBorder, 1));
  p.setBrush(theme::kCard);
  p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
  const QRect c = r.adjusted(4, 3, -4, -3);
  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.8);
  p.setFont(small);
  const int sh = QFontMetrics(small).height();
  int queued = 0;
  int phases[3] = {0, 0, 0};
  for (const QueueSnapshot& q : in.queues)
    for (const RequestChip& ch : q.requests) {
      ++queued;
      ++phases[std::min<int>(ch.phase, 2)];
    }
  p.setPen(theme::kText);
  const QString role = roleLabel(in.role);
  p.drawText(QRect(c.left(), c.top(), c.width(), sh), Qt::AlignLeft | Qt::AlignVCenter,
             QString("%1%2").arg(in.id).arg(role.isEmpty() ? QString() : " " + role.left(1).toUpper()));
  p.setPen(theme::kMuted);
  p.drawText(QRect(c.left(), c.top(), c.width(), sh), Qt::AlignRight | Qt::AlignVCenter,
             QString("b%1 · %2").arg(in.batchSize).arg(queued));
  int y = c.top() + sh + 1;
  const double g = in.gpuBlocks > 0 ? static_cast<double>(in.gpuBlocksUsed) / static_cast<double>(in.gpuBlocks) : 0;
  const double gr = in.gpuBlocks > 0 ? static_cast<double>(in.gpuBlocksReserved) / static_cast<double>(in.gpuBlocks) : 0;
  const double cpu = in.cpuBlocks > 0 ? static_cast<double>(in.cpuBlocksUsed) / static_cast<double>(in.cpuBlocks) : 0;
  const int bh = std::clamp((c.bottom() - y - 4) / 3, 3, 7);
  drawBar(p, QRect(c.left(), y, c.width(), bh), g, gr, theme::kGpuBar);
  y += bh + 2;
  drawBar(p, QRect(c.left(), y, c.width(), bh), cpu, 0, theme::kCpuBar);
  y += bh + 2;
  // Phase mix of everything the instance holds.
  if (queued > 0 && y + bh <= c.bottom() + 1) {
    int x = c.left();
    for (int ph = 0; ph < 3; ++ph) {
      const int w = static_cast<int>(std::round(c.width() * phases[ph] / static_cast<double>(queued)));
      p.setPen(Qt::NoPen);
      p.setBrush(theme::phaseColor(ph));
      p.drawRect(QRect(x, y, std::min(w, c.right() - x + 1), bh));
      x += w;
    }
  }
  hits_.push_back({r, tr("GPU %1%2\nbatch %3, %4 requests held (%5 prefill, %6 reasoning, %7 answering)\n"
                         "GPU KV %8 of %9 blocks (%10)\nCPU swap %11 of %12 blocks (%13)")
                          .arg(in.id).arg(role.isEmpty() ? QString() : " (" + role + ")")
                          .arg(in.batchSize).arg(queued).arg(phases[0]).arg(phases[1]).arg(phases[2])
                          .arg(in.gpuBlocksUsed).arg(in.gpuBlocks).arg(pct(g))
                          .arg(in.cpuBlocksUsed).arg(in.cpuBlocks).arg(pct(cpu))});
}

void ClusterView::paintLegend(QPainter& p, const QRect& r) {
  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.85);
  p.setFont(small);
  const QFontMetrics fm(small);
  int x = r.left() + kGap + 2;
  const int cy = r.center().y();
  auto item = [&](const QString& label, auto&& drawSwatch) {
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
  item(tr("GPU KV"), [&](const QRectF& s) { drawBar(p, s.toAlignedRect(), 1, 0, theme::kGpuBar); });
  item(tr("CPU swap"), [&](const QRectF& s) { drawBar(p, s.toAlignedRect(), 1, 0, theme::kCpuBar); });
}

bool ClusterView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(e);
    for (auto it = hits_.rbegin(); it != hits_.rend(); ++it)
      if (it->rect.contains(he->pos())) {
        QToolTip::showText(he->globalPos(), it->tip, this, it->rect);
        return true;
      }
    QToolTip::hideText();
    e->ignore();
    return true;
  }
  return QWidget::event(e);
}

}  // namespace sl::ui
