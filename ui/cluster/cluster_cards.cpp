// ClusterView: the cards (full and compact), their chips, memory bars and
// policy fields, and the drawing helpers shared with the overlays
// (cluster_view_paint.h). The KV bar is painted in one place, paintKvBar.
// The widget itself (frames, animation, hit tests): cluster_view.cpp;
// transfers, callouts, legend: cluster_view_overlays.cpp.
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/cluster_view_paint.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QTimer>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "ui/common/cache_view.h"
#include "ui/cluster/moe_strip.h"
#include "ui/cluster/policy_view.h"
#include "ui/controller/sim_controller.h"
#include "ui/common/theme.h"

namespace sl::ui {

namespace clusterpaint {
// The first of `forms` (longest first) that fits `width` at `fm`, else the last.
QString firstThatFits(const QStringList& forms, const QFontMetrics& fm, int width) {
  for (const QString& f : forms)
    if (fm.horizontalAdvance(f) <= width) return f;
  return forms.back();
}

// Items ("demand 77k", "inq 0", …) on as few lines of `width` as they fit,
// two spaces apart within a line (narrower than " · ": fewer lines, more
// room for the queues).
QStringList wrapItems(const QStringList& items, const QFontMetrics& fm, int width) {
  QStringList lines;
  const QString sep = QStringLiteral("  ");
  width -= 2;  // a line's advance and its elided width differ by a pixel at fractional font sizes
  for (const QString& it : items) {
    if (!lines.isEmpty() && fm.horizontalAdvance(lines.back() + sep + it) <= width)
      lines.back() += sep + it;
    else
      lines << it;
  }
  return lines;
}

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
QString pct(double v) { return QString::number(v * 100.0, 'f', v < 0.1 && v > 0 ? 1 : 0) + "%"; }

void drawChip(QPainter& p, const QRectF& r, const RequestChip& c) {
  if (c.synthetic) {
    // Work the policy injected (a rank prompt): a slate diamond, pale while it waits.
    QColor fill = theme::kSynthetic;
    if (!c.inBatch) fill = fill.lighter(220);
    const QPointF m = r.center();
    const double h = r.width() / 2.0 + 0.5;
    const QPointF pts[4] = {{m.x(), m.y() - h}, {m.x() + h, m.y()}, {m.x(), m.y() + h}, {m.x() - h, m.y()}};
    p.setBrush(fill);
    p.setPen(c.state == 2 ? QPen(theme::kSwapped, 1.6) : QPen(theme::kSynthetic, 1.0));
    p.drawPolygon(pts, 4);
    return;
  }
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
MemoryShares memoryShares(const InstanceSnapshot& in, bool withCache) {
  auto share = [](auto part, auto whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  MemoryShares m{share(in.gpuBlocksUsed, in.gpuBlocks), share(in.gpuBlocksReserved, in.gpuBlocks),
                 share(in.cpuBlocksUsed, in.cpuBlocks)};
  if (withCache && in.cache.on) {
    m.gpuCached = share(in.cache.gpuFreeBlocks, in.gpuBlocks);
    if (in.cache.cpuCapacity > 0) {  // host memory: swap space, then the cache's tier
      const std::int64_t host = in.cpuBlocks + in.cache.cpuCapacity;
      m.cpuUsed = share(in.cpuBlocksUsed, host);
      m.cpuCached = share(in.cache.cpuBlocks, host);
    }
  }
  return m;
}

// The prefix cache's band: `share` of the bar after the first `from`, in
// teal (nothing drawn when caching is off or the cache holds nothing free).
void drawCacheBand(QPainter& p, const QRect& r, double from, double share) {
  if (share <= 0) return;
  const double a = std::clamp(from, 0.0, 1.0);
  const int x0 = static_cast<int>(std::round(r.width() * a));
  const int x1 = static_cast<int>(std::round(r.width() * std::clamp(a + share, 0.0, 1.0)));
  const int w = std::max(x1 - x0, x0 < r.width() ? 1 : 0);  // a cache of a few blocks still shows
  if (w <= 0) return;
  p.setPen(Qt::NoPen);
  p.setBrush(theme::kCachedBar);
  p.drawRect(QRect(r.left() + x0, r.top(), w, r.height()));
}

void paintKvBar(QPainter& p, const QRect& r, const MemoryShares& m) {
  drawBar(p, r, m.gpuUsed, m.gpuReserved, theme::kGpuBar);
  drawCacheBand(p, r, m.gpuUsed + m.gpuReserved, m.gpuCached);
}

void paintCpuBar(QPainter& p, const QRect& r, const MemoryShares& m) {
  drawBar(p, r, m.cpuUsed, 0, theme::kCpuBar);
  drawCacheBand(p, r, m.cpuUsed, m.cpuCached);
}

QString kvBarToolTip(const InstanceSnapshot& in, const MemoryShares& m) {
  return QObject::tr("GPU KV cache: %1 of %2 blocks used (%3), %4 reserved for incoming copies")
             .arg(in.gpuBlocksUsed).arg(in.gpuBlocks).arg(pct(m.gpuUsed)).arg(in.gpuBlocksReserved) +
         cacheview::kvBarTip(in.cache, in.gpuBlocks);
}

QString cpuTierLine(const InstanceSnapshot& in) {
  const QString tier = cacheview::cpuTierTip(in.cache, in.cpuBlocksUsed, in.cpuBlocks);
  return tier.isEmpty() ? tier : "\n" + tier;
}

QString cpuBarToolTip(const InstanceSnapshot& in, const MemoryShares& m) {
  const QString tier = cacheview::cpuTierTip(in.cache, in.cpuBlocksUsed, in.cpuBlocks);
  if (!tier.isEmpty()) return tier;
  return QObject::tr("CPU swap space: %1 of %2 blocks used (%3)").arg(in.cpuBlocksUsed).arg(in.cpuBlocks).arg(pct(m.cpuUsed));
}

}  // namespace clusterpaint

using namespace clusterpaint;

bool ClusterView::cardFits(const InstanceSnapshot& in, QSize size, double denseScale) const {
  // The heights paintCard uses, added up.
  const bool dense = denseScale > 0;
  QFont f = font();
  if (dense) f.setPointSizeF(font().pointSizeF() * denseScale);
  QFont small = f;
  if (!dense) small.setPointSizeF(f.pointSizeF() * 0.85);
  const QFontMetrics sfm(small);
  const int lh = QFontMetrics(f).height(), sh = sfm.height();
  const int lineStep = sh + (dense ? 1 : 2);
  const int width = size.width() - (dense ? 12 : 20);
  int need = lh + (dense ? 3 : 5) + (dense ? 1 : 2) * lineStep;  // header, bars
  const QString badge = policyview::badgeText(in);
  QFont bold = f;
  bold.setBold(true);
  const int nameW = QFontMetrics(bold).horizontalAdvance(tr("GPU %1").arg(in.id));
  const int room = width - nameW - 8 - sfm.horizontalAdvance(QString::number(in.batchSize)) - 14 - 8;
  if (!badge.isEmpty() && room < sfm.horizontalAdvance(badge) + 10) need += sh + 4;  // the badge's own row
  const QStringList forms = policyview::valueForms(in.policyFields);
  int flagsW = 0;
  for (const PolicyField& fl : in.policyFields)
    if (policyview::isFlag(fl)) flagsW += 12 + sfm.horizontalAdvance(policyview::flagText(fl)) + 8;
  if (!forms.isEmpty()) {
    if (flagsW + sfm.horizontalAdvance(forms.back()) <= width) need += lineStep;
    else need += (flagsW > 0 ? lineStep : 0) + static_cast<int>(wrapItems(forms.front().split(QStringLiteral(" · ")), sfm, width).size()) * lineStep;
  } else if (flagsW > 0) {
    need += lineStep;
  }
  if (in.spec.on()) need += lineStep;  // speculative decoding's line (spec_line.h)
  // Each queue: a label beside one row of chips at least.
  need += (dense ? 2 : 3) + static_cast<int>(in.queues.size()) * (std::max(sh, kChip) + 2);
  return need <= size.height() - (dense ? 6 : 12);
}

void ClusterView::paintCard(QPainter& p, const QRect& r, int index, double denseScale) {
  // Dense (`denseScale` > 0): a card too small for this layout keeps every
  // part of it (badge, bars, fields, queues with their chips) in a smaller
  // font and less padding, its two memory bars side by side on one row.
  const InstanceSnapshot& in = frame_->snapshot.instances[static_cast<std::size_t>(index)];
  const bool dense = denseScale > 0;
  const bool selected = index == selectedInstance_;
  p.setPen(selected ? QPen(theme::kSeriesA, 2) : QPen(theme::kCardBorder, 1));
  p.setBrush(theme::kCard);
  p.drawRoundedRect(QRectF(r).adjusted(1, 1, -1, -1), 6, 6);
  const QRect c = dense ? r.adjusted(6, 3, -6, -3) : r.adjusted(10, 6, -10, -6);
  QFont f = font();
  if (dense) f.setPointSizeF(font().pointSizeF() * denseScale);
  QFont bold = f;
  bold.setBold(true);
  QFont small = f;
  if (!dense) small.setPointSizeF(f.pointSizeF() * 0.85);
  const int lh = QFontMetrics(f).height();
  const int sh = QFontMetrics(small).height();

  // Header: name, role, batch, busy dot.
  p.setFont(bold);
  p.setPen(theme::kText);
  const QRect head(c.left(), c.top(), c.width(), lh);
  p.drawText(head, Qt::AlignLeft | Qt::AlignVCenter, tr("GPU %1").arg(in.id));
  p.setFont(small);
  // The badge: the policy's pool label (a length range is part of it) or,
  // without one, the engine role. It is what a tour asks students to watch,
  // so it is never elided: on a narrow card the word "batch" goes first (the
  // count stays; hovering says what it is), then the badge takes a row of
  // its own under the name.
  const QString badge = policyview::badgeText(in);
  const QString poolRole = policyview::poolAndRoleText(in);
  const QFontMetrics sfm(small);
  const int nameW = QFontMetrics(bold).horizontalAdvance(tr("GPU %1").arg(in.id));
  const int badgeW = sfm.horizontalAdvance(badge) + 10;
  auto roomBeside = [&](const QString& right) { return head.width() - nameW - 8 - sfm.horizontalAdvance(right) - 14 - 8; };
  QString right = tr("batch %1").arg(in.batchSize);
  if (!badge.isEmpty() && roomBeside(right) < badgeW) right = QString::number(in.batchSize);
  const bool badgeRow = !badge.isEmpty() && roomBeside(right) < badgeW;
  p.setPen(theme::kMuted);
  p.drawText(head.adjusted(0, 0, -14, 0), Qt::AlignRight | Qt::AlignVCenter, right);
  p.setPen(Qt::NoPen);
  p.setBrush(in.busy ? theme::kAnswering : theme::kTrack);
  p.drawEllipse(QPointF(head.right() - 4, head.center().y() + 1), 4, 4);
  int y = head.bottom() + (dense ? 3 : 5);
  if (!badge.isEmpty()) {
    const QString shown = sfm.elidedText(badge, Qt::ElideRight, c.width() - 10);  // only if wider than the card
    const QRect badgeRect = badgeRow ? QRect(c.left(), head.bottom() + 3, sfm.horizontalAdvance(shown) + 10, sh + 2)
                                     : QRect(head.left() + nameW + 8, head.top() + 2, badgeW, lh - 4);
    if (badgeRow) y = badgeRect.bottom() + (dense ? 2 : 4);
    p.setPen(Qt::NoPen);
    p.setBrush(in.role == 1   ? theme::kPrefill.lighter(175)
               : in.role == 2 ? theme::kAnswering.lighter(175)
                              : theme::kTrack);
    p.drawRoundedRect(badgeRect, 4, 4);
    p.setPen(theme::kText);
    p.drawText(badgeRect, Qt::AlignCenter, shown);
    policyTexts_[static_cast<std::size_t>(index)] << shown;
  }
  hits_.push_back({head, tr("GPU %1%2\nbatch: %3 sequences\n%4 tokens produced")
                             .arg(in.id).arg(poolRole.isEmpty() ? QString() : "\n" + poolRole)
                             .arg(in.batchSize).arg(in.tokensProduced)});

  // Memory bars: one row each, or side by side on a dense card.
  const int labelW = sfm.horizontalAdvance(dense ? "CPU" : "CPU ") + (dense ? 3 : 2);
  const int numW = sfm.horizontalAdvance(dense ? "100%" : "100% ") + (dense ? 2 : 0);
  auto bar = [&](const QString& label, double shown, auto paintBar, const QString& tip, int x, int w) {
    p.setFont(small);
    p.setPen(theme::kMuted);
    const QRect row(x, y, w, sh);
    p.drawText(QRect(row.left(), row.top(), labelW, sh), Qt::AlignLeft | Qt::AlignVCenter, label);
    p.drawText(QRect(row.right() - numW, row.top(), numW, sh), Qt::AlignRight | Qt::AlignVCenter, pct(shown));
    const int bh = dense ? 6 : 8;
    const QRect b(row.left() + labelW, row.top() + sh / 2 - bh / 2, row.width() - labelW - numW - 4, bh);
    paintBar(b);
    hits_.push_back({row, tip});
  };
  const MemoryShares mem = memoryShares(in);
  const int kvW = dense ? (c.width() - 10) / 2 : c.width();
  bar(tr("KV"), mem.gpuUsed + mem.gpuReserved, [&](const QRect& b) { paintKvBar(p, b, mem); }, kvBarToolTip(in, mem),
      c.left(), kvW);
  if (!dense) y += sh + 2;
  bar(tr("CPU"), mem.cpuUsed + mem.cpuCached, [&](const QRect& b) { paintCpuBar(p, b, mem); }, cpuBarToolTip(in, mem),
      dense ? c.right() + 1 - kvW : c.left(), kvW);
  y += sh + (dense ? 1 : 2);

  // What the running policy publishes for this instance (its named fields):
  // flags as dots with their label, values as "label value" on one line.
  // Nothing here knows the policy; hover shows each field's own tooltip.
  // The lowest a line of text may reach: into the card's bottom padding,
  // inside its border.
  const int textBottom = r.bottom() - 2;
  const int lineStep = sh + (dense ? 1 : 2);
  QRect lastFieldLine;  // the last line of fields drawn, as wide as its text
  if (!in.policyFields.empty()) {
    p.setFont(small);
    QRect row(c.left(), y + (dense ? 0 : 1), c.width(), sh);
    const QStringList forms = policyview::valueForms(in.policyFields);
    const int valuesW = forms.isEmpty() ? 0 : sfm.horizontalAdvance(forms.back());
    // Flags first: a dot each; their text where it fits beside the values.
    int x = row.left();
    for (const PolicyField& f : in.policyFields) {
      if (!policyview::isFlag(f)) continue;
      const QColor dot = f.value != 0 ? theme::kAnswering : theme::kAlert;
      p.setPen(Qt::NoPen);
      p.setBrush(dot);
      p.drawEllipse(QPointF(x + 4, row.center().y() + 1), 3.5, 3.5);
      x += 12;
      const QString t = policyview::flagText(f);
      const int tw = sfm.horizontalAdvance(t);
      // Beside the values where both fit; else the flag stays and the values
      // wrap to the rows below.
      if (x + tw + 10 + valuesW <= row.right() || x + tw <= row.right()) {
        p.setPen(f.value != 0 ? theme::kMuted : dot);
        p.drawText(QRect(x, row.top(), tw + 2, sh), Qt::AlignLeft | Qt::AlignVCenter, t);
        policyTexts_[static_cast<std::size_t>(index)] << t;
        x += tw + 8;
      }
    }
    int fieldRows = 1;
    if (!forms.isEmpty()) {
      p.setPen(theme::kMuted);
      const QRect valuesRect(x, row.top(), row.right() - x + 1, sh);
      if (sfm.horizontalAdvance(forms.back()) <= valuesRect.width()) {
        const QString values = firstThatFits(forms, sfm, valuesRect.width());
        p.drawText(valuesRect, (x > row.left() ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter, values);
        policyTexts_[static_cast<std::size_t>(index)] << values;
        if (x == row.left()) lastFieldLine = QRect(row.left(), row.top(), sfm.horizontalAdvance(values), sh);
      } else {
        // Too many fields for one line: they wrap, whole (a tour names
        // them), on the rows under the flags.
        const QStringList lines = wrapItems(forms.front().split(QStringLiteral(" · ")), sfm, row.width());
        int ly = x > row.left() ? row.top() + lineStep : row.top();
        for (const QString& line : lines) {
          // A line past the card's edge is not drawn half-cut; it counts as
          // cut ("…") for the layout test.
          if (ly + sh > textBottom) {
            policyTexts_[static_cast<std::size_t>(index)] << line + QChar(0x2026);
            continue;
          }
          const QString shown = sfm.elidedText(line, Qt::ElideRight, row.width());
          p.drawText(QRect(row.left(), ly, row.width(), sh), Qt::AlignLeft | Qt::AlignVCenter, shown);
          policyTexts_[static_cast<std::size_t>(index)] << shown;
          lastFieldLine = QRect(row.left(), ly, sfm.horizontalAdvance(shown), sh);
          ly += lineStep;
        }
        fieldRows = (ly - row.top()) / lineStep;
      }
    }
    row.setHeight(fieldRows * lineStep - (lineStep - sh));
    hits_.push_back({row, policyview::fieldsTooltip(in.policyFields)});
    y += fieldRows * lineStep;
  }

  // Speculative decoding: the step's draft length and the recent tokens per
  // step and acceptance (spec_line.h), one line under the fields.
  if (const specline::SpecRates sr = spec_.rates(index); sr.on) {
    const QRect row(c.left(), y + (dense ? 0 : 1), c.width(), sh);
    if (row.bottom() <= textBottom) {
      p.setFont(small);
      p.setPen(theme::kMuted);
      const QString shown =
          sfm.elidedText(firstThatFits(specline::forms(sr), sfm, row.width()), Qt::ElideRight, row.width());
      p.drawText(row, Qt::AlignLeft | Qt::AlignVCenter, shown);
      const QRect drawn(row.left(), row.top(), sfm.horizontalAdvance(shown), sh);
      specLines_[static_cast<std::size_t>(index)] = {drawn, shown};
      hits_.push_back({row, specline::tooltip(sr)});
      lastFieldLine = drawn;
      y += lineStep;
    }
  }

  // MoE: the expert-parallel layout and per-rank load strip (moe_strip.h).
  if (const auto moe = moestrip::paintOnCard(p, *this, c, y + 1, index, small, sh + kChip + 6); !moe.rect.isNull()) {
    hits_.push_back({moe.rect, moe.tip});
    y = moe.rect.bottom() + 3;
  }
  infoRects_[static_cast<std::size_t>(index)] = QRect(r.left(), r.top(), r.width(), y - r.top());
  // Queues: a label then rows of chips, each queue sharing the space left.
  y += dense ? 2 : 3;
  const int nq = static_cast<int>(in.queues.size());
  if (nq == 0) return;
  const int avail = c.bottom() - y;
  const int perQueue = avail / nq;
  if (perQueue < std::max(sh, kChip) + 1) {
    // Too short for a row per queue (a card with many fields in lecture
    // mode): the queues share one row of counts, "running · 1  waiting · 9",
    // rather than overlap; hover and the inspector give the chips.
    // Narrower: each name cut to four letters ("reas. 34 answ. 12") rather
    // than the row elided ("reasoning 34 answeri…": a count lost).
    QStringList counts, tight, shortNames;
    for (const QueueSnapshot& q : in.queues) {
      const QString name = QString::fromStdString(q.name);
      counts << tr("%1 · %2").arg(name).arg(q.requests.size());
      tight << QString("%1 %2").arg(name).arg(q.requests.size());
      shortNames << QString("%1 %2").arg(name.size() > 5 ? name.left(4) + '.' : name).arg(q.requests.size());
    }
    const QStringList forms = {counts.join(QStringLiteral("  ")), tight.join(' '), shortNames.join(' ')};
    QRect qr(c.left(), y, c.width(), sh);
    if (qr.bottom() + 1 > textBottom) {
      // No row left under the fields: beside their last line where the
      // counts fit whole, else left out (hover and the inspector have
      // them), never drawn half-cut at the card's edge.
      if (lastFieldLine.isNull()) return;
      qr = QRect(lastFieldLine.right() + 1 + sfm.horizontalAdvance(QStringLiteral("  ")), lastFieldLine.top(), 0, sh);
      qr.setRight(c.right());
      if (sfm.horizontalAdvance(forms.back()) > qr.width()) return;
    }
    queueRects_.push_back(qr);
    p.setFont(small);
    p.setPen(theme::kMuted);
    p.drawText(qr, Qt::AlignLeft | Qt::AlignVCenter, sfm.elidedText(firstThatFits(forms, sfm, qr.width()), Qt::ElideRight, qr.width()));
    return;
  }
  // Too short for a label row above a chip row: the label goes left of one
  // row of chips ("reasoning · 31 ■■■■ +20"), so the chips stay visible.
  const bool inlineLabel = (perQueue - sh - 2 + kChipGap) / (kChip + kChipGap) < 1;
  int qLabelW = 0;
  if (inlineLabel)
    for (const QueueSnapshot& q : in.queues)
      qLabelW = std::max(qLabelW, sfm.horizontalAdvance(tr("%1 · %2").arg(QString::fromStdString(q.name)).arg(q.requests.size())) + 8);
  qLabelW = std::min(qLabelW, c.width() * 11 / 20);
  const int chipsTop = inlineLabel ? 0 : sh + 2;  // below the label row, or beside the label
  const int chipsW = c.width() - qLabelW;
  auto rowsFor = [&](int chip) { return std::max(inlineLabel ? 1 : 0, (perQueue - chipsTop + kChipGap) / (chip + kChipGap)); };
  // Largest chip (8..14 px) at which the longest queue still fits.
  std::size_t longest = 0;
  for (const QueueSnapshot& q : in.queues) longest = std::max(longest, q.requests.size());
  int chip = 14;
  for (; chip > kChip; --chip) {
    const int perRowC = std::max(1, (chipsW + kChipGap) / (chip + kChipGap));
    if (static_cast<std::size_t>(perRowC * rowsFor(chip)) >= longest) break;
  }
  const int perRow = std::max(1, (chipsW + kChipGap) / (chip + kChipGap));
  for (const QueueSnapshot& q : in.queues) {
    const QRect qr(c.left(), y, c.width(), perQueue);
    queueRects_.push_back(qr);
    p.setFont(small);
    p.setPen(theme::kMuted);
    // "rr queue · 9 requests" (shorter forms on a narrow card); hover says more.
    const QString qname = QString::fromStdString(q.name);
    const QStringList qforms = {tr("%1 queue · %2 requests").arg(qname).arg(q.requests.size()),
                                tr("%1 queue · %2").arg(qname).arg(q.requests.size()),
                                tr("%1 · %2").arg(qname).arg(q.requests.size())};
    const QRect qlabel = inlineLabel ? QRect(qr.left(), qr.top(), qLabelW, std::max(sh, chip))
                                     : QRect(qr.left(), qr.top(), qr.width(), sh);
    p.drawText(qlabel, Qt::AlignLeft | Qt::AlignVCenter,
               inlineLabel ? sfm.elidedText(firstThatFits({qforms.back(), qname}, sfm, qLabelW - 4), Qt::ElideRight, qLabelW - 4)
                           : firstThatFits(qforms, sfm, qr.width()));
    hits_.push_back({QRect(qlabel.topLeft(), QSize(std::min(qlabel.width(), sfm.horizontalAdvance(qforms.back()) + 4), qlabel.height())),
                     tr("The policy's queue \"%1\": %2 requests (running and waiting)").arg(qname).arg(q.requests.size())});
    const int rows = rowsFor(chip);
    const int capacity = rows * perRow;
    const int n = static_cast<int>(q.requests.size());
    const int shown = n > capacity ? std::max(0, capacity - 3) : n;  // room for "+N"
    const int x0 = qr.left() + qLabelW;
    if (rows > 0) {
      // The chip rows: where arrows may cross this card and end on it.
      const QRect chipRows(x0, qr.top() + chipsTop, perRow * (chip + kChipGap) - kChipGap, rows * (chip + kChipGap) - kChipGap);
      arrowRoom_ += chipRows;
      QRect& landing = landings_[static_cast<std::size_t>(index)];
      if (chipRows.width() * chipRows.height() > landing.width() * landing.height()) landing = chipRows;
    }
    for (int i = 0; i < shown; ++i) {
      const QRectF cr(x0 + (i % perRow) * (chip + kChipGap), qr.top() + chipsTop + (i / perRow) * (chip + kChipGap),
                      chip, chip);
      const RequestChip& chip = q.requests[static_cast<std::size_t>(i)];
      drawChip(p, cr, chip);
      if (chip.id == selectedRequest_) {
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(theme::kText, 2));
        p.drawRoundedRect(cr.adjusted(-2, -2, 2, 2), 3, 3);
      }
      // A rank prompt has a tooltip but no timeline to open (it is no user request).
      if (chip.synthetic) hits_.push_back({cr.toAlignedRect().adjusted(-1, -1, 1, 1), chipToolTip(chip)});
      else hits_.push_back({cr.toAlignedRect().adjusted(-1, -1, 1, 1), chipToolTip(chip), HitKind::Chip, chip.id});
    }
    if (shown > 0) {
      const int usedRows = (shown + perRow - 1) / perRow;
      chipAreas_.emplace_back(x0, qr.top() + chipsTop, std::min(shown, perRow) * (chip + kChipGap) - kChipGap,
                              usedRows * (chip + kChipGap) - kChipGap);
    }
    if (shown < n && rows > 0) {
      p.setPen(theme::kMuted);
      const int i = shown;
      const QRect more(x0 + (i % perRow) * (chip + kChipGap), qr.top() + chipsTop + (i / perRow) * (chip + kChipGap) - 3,
                       40, chip + 6);
      p.drawText(more, Qt::AlignLeft | Qt::AlignVCenter, QString("+%1").arg(n - shown));
      arrowRoom_ -= more;  // a count, not a chip: no arrow over it
    }
    y += perQueue;
  }
}

namespace {
/// Requests an instance holds, and how many are in each phase (prefill,
/// reasoning, answering).
struct Held {
  int total = 0;
  int phases[3] = {0, 0, 0};
};
Held heldRequests(const InstanceSnapshot& in) {
  Held h;
  for (const QueueSnapshot& q : in.queues)
    for (const RequestChip& ch : q.requests) {
      ++h.total;
      ++h.phases[std::min<int>(ch.phase, 2)];
    }
  return h;
}
/// The phase mix of what an instance holds as a bar (nothing when it holds
/// nothing): compact cards and tiles.
void paintPhaseMix(QPainter& p, const QRect& r, const Held& h) {
  if (h.total <= 0) return;
  int x = r.left();
  p.setPen(Qt::NoPen);
  for (int ph = 0; ph < 3; ++ph) {
    const int w = static_cast<int>(std::round(r.width() * h.phases[ph] / static_cast<double>(h.total)));
    p.setBrush(theme::phaseColor(ph));
    p.drawRect(QRect(x, r.top(), std::min(w, r.right() - x + 1), r.height()));
    x += w;
  }
}

/// "\n" + an instance's speculation line and its tooltip ("" when the run
/// does not speculate): compact cards' and tiles' tooltips.
QString specTip(const specline::SpecRates& r) {
  if (!r.on) return {};
  return "\n" + specline::forms(r).front() + "\n" + specline::tooltip(r);
}
}  // namespace

void ClusterView::paintCompactCard(QPainter& p, const QRect& r, int index) {
  const InstanceSnapshot& in = frame_->snapshot.instances[static_cast<std::size_t>(index)];
  p.setPen(index == selectedInstance_ ? QPen(theme::kSeriesA, 2) : QPen(theme::kCardBorder, 1));
  p.setBrush(theme::kCard);
  p.drawRoundedRect(QRectF(r).adjusted(1, 1, -1, -1), 4, 4);
  const QRect c = r.adjusted(4, 3, -4, -3);
  queueRects_.push_back(c);  // a compact card is all queue summary
  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.8);
  p.setFont(small);
  const int sh = QFontMetrics(small).height();
  const Held held = heldRequests(in);
  const int queued = held.total;
  p.setPen(theme::kText);
  // "3 P", "3 ≤4.1k": the badge in short (pool label or role); hover says it all.
  const QString badge = policyview::badgeText(in);
  const QString tag = badge.isEmpty() ? QString() : " " + policyview::compactBadgeText(badge);
  p.drawText(QRect(c.left(), c.top(), c.width(), sh), Qt::AlignLeft | Qt::AlignVCenter,
             QString("%1%2").arg(in.id).arg(tag));
  if (!tag.isEmpty()) policyTexts_[static_cast<std::size_t>(index)] << tag.trimmed();
  p.setPen(theme::kMuted);
  {
    // "batch 16 · 40 held" where it fits, shorter on a tiny card, nothing
    // where even "16 · 40" would run into the id (hover: the card's tooltip).
    const QFontMetrics sfm(small);
    const int nameW = sfm.horizontalAdvance(QString("%1%2 ").arg(in.id).arg(tag));
    p.drawText(QRect(c.left(), c.top(), c.width(), sh), Qt::AlignRight | Qt::AlignVCenter,
               firstThatFits({tr("batch %1 · %2 held").arg(in.batchSize).arg(queued),
                              tr("batch %1 · %2").arg(in.batchSize).arg(queued),
                              tr("%1 · %2").arg(in.batchSize).arg(queued), QString()},
                             sfm, c.width() - nameW - sfm.horizontalAdvance(QStringLiteral("  "))));
  }
  int y = c.top() + sh + 1;
  const MemoryShares mem = memoryShares(in);
  const int bh = std::clamp((c.bottom() - y - 4) / 3, 3, 7);
  paintKvBar(p, QRect(c.left(), y, c.width(), bh), mem);
  y += bh + 2;
  paintCpuBar(p, QRect(c.left(), y, c.width(), bh), mem);
  y += bh + 2;
  // Phase mix of everything the instance holds.
  if (y + bh <= c.bottom() + 1) paintPhaseMix(p, QRect(c.left(), y, c.width(), bh), held);
  y += bh + 3;
  // The policy's fields in their tight form where the card has a line to
  // spare (flags as dots only); the tooltip has them all.
  if (!in.policyFields.empty() && y + sh <= c.bottom() + 1) {
    int x = c.left();
    for (const PolicyField& f : in.policyFields) {
      if (!policyview::isFlag(f)) continue;
      p.setPen(Qt::NoPen);
      p.setBrush(f.value != 0 ? theme::kAnswering : theme::kAlert);
      p.drawEllipse(QPointF(x + 3, y + sh / 2.0), 3, 3);
      x += 9;
    }
    const QStringList forms = policyview::valueForms(in.policyFields);
    if (!forms.isEmpty() && c.right() - x > 8) {
      const QFontMetrics sfm(small);
      const QString values = sfm.elidedText(forms.back(), Qt::ElideRight, c.right() - x + 1);
      p.setPen(theme::kMuted);
      p.drawText(QRect(x, y, c.right() - x + 1, sh), Qt::AlignLeft | Qt::AlignVCenter, values);
      policyTexts_[static_cast<std::size_t>(index)] << values;
    }
  } else if (const specline::SpecRates sr = spec_.rates(index); sr.on && y + sh <= c.bottom() + 1) {
    // Speculative decoding in short ("k=3 · 2.4/step") on the same line
    // when the policy publishes nothing there (the tooltip has it all).
    const QFontMetrics sfm(small);
    const QStringList forms = specline::forms(sr);
    const QString shown = firstThatFits(forms, sfm, c.width());
    if (sfm.horizontalAdvance(shown) <= c.width()) {
      p.setPen(theme::kMuted);
      p.drawText(QRect(c.left(), y, c.width(), sh), Qt::AlignLeft | Qt::AlignVCenter, shown);
      specLines_[static_cast<std::size_t>(index)] = {QRect(c.left(), y, sfm.horizontalAdvance(shown), sh), shown};
    }
  }
  hits_.push_back({r, instanceToolTip(in, index)});
}

QString ClusterView::instanceToolTip(const InstanceSnapshot& in, int index) const {
  const Held held = heldRequests(in);
  const MemoryShares mem = memoryShares(in);
  const QString poolRole = policyview::poolAndRoleText(in);
  const QString published = policyview::fieldsTooltip(in.policyFields);
  return tr("GPU %1%2\nbatch %3, %4 requests held (%5 prefill, %6 reasoning, %7 answering)\n"
            "GPU KV %8 of %9 blocks (%10)\nCPU swap %11 of %12 blocks (%13)%14")
             .arg(in.id)
             .arg(poolRole.isEmpty() ? QString() : "\n" + poolRole)
             .arg(in.batchSize)
             .arg(held.total)
             .arg(held.phases[0])
             .arg(held.phases[1])
             .arg(held.phases[2])
             .arg(in.gpuBlocksUsed)
             .arg(in.gpuBlocks)
             .arg(pct(mem.gpuUsed))
             .arg(in.cpuBlocksUsed)
             .arg(in.cpuBlocks)
             .arg(pct(memoryShares(in, false).cpuUsed))
             .arg(published.isEmpty() ? QString() : "\n" + published) +
         cacheview::kvBarTip(in.cache, in.gpuBlocks) + cpuTierLine(in) + specTip(spec_.rates(index));
}

void ClusterView::paintTile(QPainter& p, const QRect& r, int index) {
  // A compact card without its text: the GPU KV bar, the CPU swap bar and
  // the phase mix of the requests held, stacked; a tile too short for three
  // bars keeps the KV bar and the phase mix. The tooltip has the numbers.
  const InstanceSnapshot& in = frame_->snapshot.instances[static_cast<std::size_t>(index)];
  const bool selected = index == selectedInstance_;
  const bool framed = r.width() >= 8 && r.height() >= 8;
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);  // crisp bars a few pixels high
  p.setPen(selected ? QPen(theme::kSeriesA, 2) : framed ? QPen(theme::kCardBorder, 1) : Qt::NoPen);
  p.setBrush(theme::kCard);
  p.drawRect(r.adjusted(0, 0, -1, -1));
  const int inset = framed ? 2 : 0;
  const QRect c = r.adjusted(inset, inset, -inset, -inset);
  queueRects_.push_back(c);  // a tile is all summary
  hits_.push_back({r, instanceToolTip(in, index)});
  if (c.width() <= 0 || c.height() <= 0) return p.restore();
  const MemoryShares mem = memoryShares(in);
  const Held held = heldRequests(in);
  const bool three = c.height() >= 9;
  const int bars = three ? 3 : 2;
  const int gap = c.height() >= 12 ? 1 : 0;
  const int bh = std::max(1, (c.height() - gap * (bars - 1)) / bars);
  int y = c.top();
  paintKvBar(p, QRect(c.left(), y, c.width(), bh), mem);
  y += bh + gap;
  if (three) {
    paintCpuBar(p, QRect(c.left(), y, c.width(), bh), mem);
    y += bh + gap;
  }
  paintPhaseMix(p, QRect(c.left(), y, c.width(), c.bottom() - y + 1), held);
  p.restore();
}

QString ClusterView::chipToolTip(const RequestChip& c) {
  QString head = c.synthetic ? tr("rank prompt #%1 (the policy's own work: the model ranks a batch of requests; "
                                  "no user request)").arg(-c.id)
                             : tr("request #%1").arg(c.id);
  QString tip = tr("%1\nphase: %2\nstate: %3%4\nKV: %5 tokens")
                    .arg(head, phaseLabel(c.phase), stateLabel(c.state), c.inBatch ? tr(" (in batch)") : QString())
                    .arg(c.kvTokens);
  if (c.rank >= 0) tip += tr("\nrank in its batch: %1 (0 runs first)").arg(c.rank);
  if (c.predicted >= 0) tip += tr("\npredicted output: %1 tokens").arg(c.predicted);
  return c.synthetic ? tip : tip + tr("\n(click for its timeline)");
}

}  // namespace sl::ui
