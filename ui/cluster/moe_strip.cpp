// The MoE layout line and per-rank heat strip of an instance card
// (moe_strip.h): the history kept from frame to frame, the colours, and the
// painting on a full card.
#include "ui/cluster/moe_strip.h"

#include <QFontMetrics>
#include <QWidget>

#include <algorithm>
#include <cmath>
#include <exception>
#include <numeric>

#include "run/run.h"
#include "ui/common/theme.h"
#include "ui/controller/sim_controller.h"

namespace sl::ui::moestrip {

namespace {
QString number(double v) { return QString::number(v, 'g', 3); }

QColor mix(const QColor& a, const QColor& b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

// The strip's scale: white at the mean, blue at half of it, orange at 1.25×,
// deep red from 2× (a rank at twice the mean doubles the MoE layer's time).
// Red minus blue grows along it, so "hotter" is one number.
const QColor kCold{0x6F, 0xA3, 0xDC};
const QColor kEven{0xE4, 0xE1, 0xD9};  // a neutral grey, apart from the white card
const QColor kWarm{0xF2, 0x9B, 0x38};
const QColor kHot{0xC0, 0x14, 0x04};
}  // namespace

QStringList layoutForms(const Scenario& s) {
  MoeDeployment d;
  try {
    d = makeMoeDeployment(s);
  } catch (const std::exception&) {
    return {};  // the load reported it; the card just has no layout line
  }
  const QString ep = QStringLiteral("EP%1").arg(d.ep);
  QString routing, routingShort;
  switch (d.routing.kind) {
    case RoutingKind::Zipf:
      routing = QStringLiteral("zipf %1").arg(number(d.routing.skew));
      routingShort = QStringLiteral("z%1").arg(number(d.routing.skew));
      break;
    case RoutingKind::File:
      routing = QObject::tr("routing file");
      routingShort = QObject::tr("file");
      break;
    case RoutingKind::Balanced:
      routing = QObject::tr("balanced");
      routingShort = QObject::tr("bal");
      break;
  }
  QStringList full = {ep, d.attentionDp ? QObject::tr("DP attn") : QObject::tr("TP attn"), routing};
  QStringList mid = {ep, d.attentionDp ? QStringLiteral("DP") : QStringLiteral("TP"), routing};
  QStringList tight = {ep, mid[1], routingShort};
  if (d.placement == Placement::Eplb) {
    const QString extra = d.redundant > 0 ? QStringLiteral(" +%1").arg(d.redundant) : QString();
    full << QStringLiteral("EPLB") + extra;
    mid << (d.redundant > 0 ? extra.trimmed() : QStringLiteral("EPLB"));
    tight << mid.back();
  } else if (d.redundant > 0) {
    full << QObject::tr("+%1 replicas").arg(d.redundant);
    mid << QStringLiteral("+%1").arg(d.redundant);
    tight << mid.back();
  }
  const QString dot = QStringLiteral(" · ");
  return {full.join(dot), mid.join(dot), tight.join(' ')};
}

std::vector<double> loadRatios(const MoeStepSnapshot& m) {
  std::vector<double> r(m.rankPairs.size(), 0.0);
  if (r.empty()) return r;
  const double mean = std::accumulate(m.rankPairs.begin(), m.rankPairs.end(), 0.0) / static_cast<double>(r.size());
  if (mean <= 0) return r;
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = m.rankPairs[i] / mean;
  return r;
}

double stragglerRatio(const MoeStepSnapshot& m) {
  if (m.rankPairs.empty()) return 0;
  const double mean = std::accumulate(m.rankPairs.begin(), m.rankPairs.end(), 0.0) / static_cast<double>(m.rankPairs.size());
  return mean > 0 ? m.stragglerPairs / mean : 0.0;
}

QColor heatColor(double ratio) {
  if (ratio <= 1) return mix(kCold, kEven, (ratio - 0.5) / 0.5);
  if (ratio <= 1.25) return mix(kEven, kWarm, (ratio - 1) / 0.25);
  return mix(kWarm, kHot, (ratio - 1.25) / 0.75);
}

// ---- history

void MoeHistory::record(const LiveFrame& f, const Scenario& s) {
  if (f.generation != generation_) {
    generation_ = f.generation;
    layout_ = layoutForms(s);
    rows_.clear();
    painted_.clear();
  }
  const std::vector<InstanceSnapshot>& ins = f.snapshot.instances;
  if (rows_.size() < ins.size()) rows_.resize(ins.size());
  for (std::size_t i = 0; i < ins.size(); ++i) {
    const MoeStepSnapshot& m = ins[i].moe;
    if (m.rankPairs.empty() || m.tokens <= 0) continue;  // dense, or no step yet
    InstanceRows& h = rows_[i];
    std::vector<double> r = loadRatios(m);
    // A new row only when the instance ran a step since its last one (an
    // idle instance keeps showing its last step, not copies of it).
    if (!h.ratios.empty() && h.produced == ins[i].tokensProduced && h.tokens == m.tokens && h.ratios.back() == r)
      continue;
    h.ratios.push_back(std::move(r));
    while (h.ratios.size() > static_cast<std::size_t>(kRows)) h.ratios.pop_front();
    h.straggler = stragglerRatio(m);
    h.tokens = m.tokens;
    h.produced = ins[i].tokensProduced;
    const std::vector<double>& last = h.ratios.back();
    h.busiest = static_cast<int>(std::max_element(last.begin(), last.end()) - last.begin());
  }
}

const InstanceRows* MoeHistory::rows(int i) const {
  if (i < 0 || static_cast<std::size_t>(i) >= rows_.size() || rows_[static_cast<std::size_t>(i)].ratios.empty())
    return nullptr;
  return &rows_[static_cast<std::size_t>(i)];
}

QRect MoeHistory::stripRect(int i) const {
  return i >= 0 && static_cast<std::size_t>(i) < painted_.size() ? painted_[static_cast<std::size_t>(i)].strip : QRect();
}

QRect MoeHistory::cellRect(int i, int row, int rank) const {
  if (i < 0 || static_cast<std::size_t>(i) >= painted_.size()) return {};
  const Painted& pt = painted_[static_cast<std::size_t>(i)];
  if (pt.cells.isNull() || pt.ranks <= 0 || pt.rows <= 0 || rank < 0 || rank >= pt.ranks || row < 0 || row >= kRows) return {};
  const int rowsShown = pt.rows;
  const int firstRow = kRows - rowsShown;  // a one-row strip shows the newest only
  if (row < firstRow) return {};
  const int rowH = pt.cells.height() / rowsShown;
  const int x0 = pt.cells.left() + pt.cells.width() * rank / pt.ranks;
  const int x1 = pt.cells.left() + pt.cells.width() * (rank + 1) / pt.ranks;
  const int gap = pt.cells.width() / pt.ranks >= 5 ? 1 : 0;
  return QRect(x0, pt.cells.top() + (row - firstRow) * rowH, std::max(1, x1 - x0 - gap), rowH);
}

void MoeHistory::setPainted(int i, const QRect& strip, const QRect& cells, int ranks, int rows) {
  if (i < 0) return;
  if (painted_.size() <= static_cast<std::size_t>(i)) painted_.resize(static_cast<std::size_t>(i) + 1);
  painted_[static_cast<std::size_t>(i)] = {strip, cells, ranks, rows};
}

MoeHistory* history(QWidget* view, bool create) {
  auto* h = view->findChild<MoeHistory*>(QString(), Qt::FindDirectChildrenOnly);
  if (!h && create) h = new MoeHistory(view);
  return h;
}

const MoeHistory* history(const QWidget* view) {
  return view->findChild<const MoeHistory*>(QString(), Qt::FindDirectChildrenOnly);
}

void record(QWidget* view, const LiveFrame& f, const Scenario& s) { history(view, true)->record(f, s); }

// ---- painting

Painted paintOnCard(QPainter& p, QWidget& view, const QRect& c, int y, int index, const QFont& small, int minBelow) {
  MoeHistory* h = history(&view);
  const InstanceRows* rows = h ? h->rows(index) : nullptr;
  if (!rows) return {};
  h->setPainted(index, {}, {}, 0, 0);
  const std::vector<double>& newest = rows->ratios.back();
  const int ranks = static_cast<int>(newest.size());
  const int nRows = static_cast<int>(rows->ratios.size());
  const int shownRows = std::min(nRows, kRows);
  const QFontMetrics sfm(small);
  const int sh = sfm.height();
  const int labelW = sfm.horizontalAdvance(QStringLiteral("CPU ")) + 2;  // as the card's bars
  const int numW = sfm.horizontalAdvance(QStringLiteral("100% "));
  const int room = c.bottom() - y - minBelow;
  // The layout line above a strip of kRows rows, 3 or 2 pixels each; where
  // even that does not fit, one row (the newest step) beside the layout.
  int rowH = 0;
  for (int candidate : {3, 2})
    if (sh + 2 + std::max(sh, kRows * candidate) <= room) {
      rowH = candidate;
      break;
    }
  const bool oneLine = rowH == 0;
  if (oneLine && sh > room) return {};
  const int cellsW0 = c.width() - labelW - numW - 4;
  if (cellsW0 < ranks) return {};

  p.save();
  p.setFont(small);
  const QString ratio = QStringLiteral("%1×").arg(rows->straggler, 0, 'f', 2);
  QRect strip, cells;
  if (!oneLine) {
    const QRect line(c.left(), y, c.width(), sh);
    p.setPen(theme::kMuted);
    QString text;
    if (!h->layout().isEmpty()) {
      text = sfm.elidedText(h->layout().back(), Qt::ElideRight, line.width());
      for (const QString& f : h->layout())
        if (sfm.horizontalAdvance(f) <= line.width()) {
          text = f;
          break;
        }
    }
    p.drawText(line, Qt::AlignLeft | Qt::AlignVCenter, text);
    const int stripH = std::max(sh, kRows * rowH);
    const QRect row(c.left(), line.bottom() + 3, c.width(), stripH);
    p.drawText(QRect(row.left(), row.top(), labelW, stripH), Qt::AlignLeft | Qt::AlignVCenter, QObject::tr("EP"));
    p.setPen(rows->straggler >= 1.5 ? theme::kAlert : theme::kMuted);
    p.drawText(QRect(row.right() - numW, row.top(), numW, stripH), Qt::AlignRight | Qt::AlignVCenter, ratio);
    // Fewer steps than rows so far (a new run): the steps seen share the
    // strip's height, newest at the bottom.
    const int rowPx = kRows * rowH / shownRows;
    cells = QRect(row.left() + labelW, row.top() + (stripH - kRows * rowH) / 2 + kRows * rowH - shownRows * rowPx,
                  cellsW0, shownRows * rowPx);
    strip = QRect(c.left(), y, c.width(), row.bottom() - y + 1);
  } else {
    // One line: "EP8 · DP · zipf 0.8 · +16 ▮▮▮▮▮▮▮▮ 1.42×" where it fits.
    const int cellsW = std::min(cellsW0, std::max(ranks * 6, c.width() / 3));
    const int textW = c.width() - cellsW - numW - 8;
    QString text;
    for (const QString& f : h->layout())
      if (sfm.horizontalAdvance(f) <= textW) {
        text = f;
        break;
      }
    p.setPen(theme::kMuted);
    p.drawText(QRect(c.left(), y, std::max(0, textW), sh), Qt::AlignLeft | Qt::AlignVCenter, text);
    p.setPen(rows->straggler >= 1.5 ? theme::kAlert : theme::kMuted);
    p.drawText(QRect(c.right() - numW, y, numW, sh), Qt::AlignRight | Qt::AlignVCenter, ratio);
    cells = QRect(c.right() - numW - 4 - cellsW, y + sh / 2 - 3, cellsW, 6);
    strip = QRect(c.left(), y, c.width(), sh);
  }
  h->setPainted(index, strip, cells, ranks, oneLine ? 1 : shownRows);

  // The cells: the newest step at the bottom, older ones above.
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setPen(Qt::NoPen);
  for (int row = kRows - (oneLine ? 1 : shownRows); row < kRows; ++row) {
    const std::vector<double>& step = rows->ratios[static_cast<std::size_t>(nRows - kRows + row)];  // row kRows − 1: the newest
    for (int r = 0; r < ranks; ++r) {
      p.setBrush(static_cast<std::size_t>(r) < step.size() ? heatColor(step[static_cast<std::size_t>(r)]) : theme::kTrack);
      p.drawRect(h->cellRect(index, row, r));
    }
  }
  // The busiest rank of the newest step, outlined.
  if (rows->busiest >= 0) {
    const QRect b = h->cellRect(index, kRows - 1, rows->busiest);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(theme::kText, 1));
    p.drawRect(b.adjusted(0, 0, -1, -1));
  }
  p.restore();

  QStringList loads;
  for (double v : newest) loads << QString::number(v, 'f', 2);
  Painted out;
  out.rect = strip;
  out.tip = QObject::tr("Expert parallelism: %1\n"
                        "Load per expert-parallel rank over the last %2 steps (newest at the bottom): each rank's "
                        "expected token-expert pairs / the mean over the %3 ranks; white is even, red above the "
                        "mean, blue below.\nNewest step: %4 tokens; ranks %5; busiest rank %6 (outlined).\n"
                        "Straggler estimate (busiest rank's mean + z·sd) %7 the mean: the MoE layer waits for it.")
                .arg(h->layout().isEmpty() ? QObject::tr("EP%1").arg(ranks) : h->layout().front())
                .arg(nRows).arg(ranks).arg(QString::number(rows->tokens, 'f', 0)).arg(loads.join(' '))
                .arg(rows->busiest).arg(ratio);
  return out;
}

}  // namespace sl::ui::moestrip
