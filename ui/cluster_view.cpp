#include "cluster_view.h"
#include "cluster_view_paint.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QTimer>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "policy_view.h"
#include "sim_controller.h"
#include "theme.h"

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
}  // namespace clusterpaint

using namespace clusterpaint;

ClusterView::ClusterView(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMouseTracking(true);
  animTimer_ = new QTimer(this);
  animTimer_->setInterval(16);
  animTimer_->setTimerType(Qt::PreciseTimer);
  connect(animTimer_, &QTimer::timeout, this, &ClusterView::tick);
}

void ClusterView::setFrame(std::shared_ptr<const LiveFrame> frame) {
  frame_ = std::move(frame);
  if (!frame_) return update();
  const Snapshot& s = frame_->snapshot;
  if (frame_->generation != generation_) {  // a new run: forget the old one's animations
    generation_ = frame_->generation;
    anims_.clear();
    callouts_.clear();
    roles_.clear();
    counters_.clear();
    hasSynthetic_ = false;
    selectedRequest_ = -1;
    selectedInstance_ = -1;
  }
  // Role flips between two snapshots become callouts.
  if (roles_.size() == s.instances.size()) {
    for (std::size_t i = 0; i < s.instances.size(); ++i)
      if (lecture_ && roles_[i] != s.instances[i].role)
        callouts_.addRoleFlip(static_cast<int>(i), roles_[i], s.instances[i].role, animT_, s.now);
  }
  roles_.resize(s.instances.size());
  for (std::size_t i = 0; i < s.instances.size(); ++i) roles_[i] = s.instances[i].role;
  // A policy's per-instance counters that carry a callout text: their growth
  // between two snapshots is called out on the card ("3 requests: promoted").
  counters_.resize(s.instances.size());
  for (std::size_t i = 0; i < s.instances.size(); ++i) {
    auto& prev = counters_[i];
    const auto& fields = s.instances[i].policyFields;
    if (lecture_ && prev.size() == fields.size())
      for (std::size_t f = 0; f < fields.size(); ++f)
        if (!fields[f].callout.empty() && fields[f].value > prev[f])
          callouts_.addPolicyEvent(static_cast<int>(i), QString::fromStdString(fields[f].callout),
                                   static_cast<int>(fields[f].value - prev[f]), animT_, s.now);
    prev.resize(fields.size());
    for (std::size_t f = 0; f < fields.size(); ++f) prev[f] = fields[f].value;
  }
  // Rank prompts (or any work a policy injects) get a legend entry while they exist.
  if (!hasSynthetic_)
    hasSynthetic_ = std::any_of(s.instances.begin(), s.instances.end(), [](const InstanceSnapshot& in) {
      return std::any_of(in.queues.begin(), in.queues.end(), [](const QueueSnapshot& q) {
        return std::any_of(q.requests.begin(), q.requests.end(), [](const RequestChip& c) { return c.synthetic; });
      });
    });

  // Transfers: new snapshot progress becomes the interpolation anchor; the
  // rate is estimated in animation time from the previous anchor.
  for (auto& [id, a] : anims_)
    if (a.goneAt < 0) a.goneAt = -2;  // provisional: not seen in this snapshot
  for (const TransferSnapshot& t : s.transfers) {
    auto it = anims_.find(t.requestId);
    if (it == anims_.end() || it->second.goneAt >= 0) {
      TransferAnim a;
      a.src = t.src;
      a.dst = t.dst;
      a.live = t.live;
      a.snapProgress = a.shown = std::clamp(t.progress, 0.0, 1.0);
      a.snapAt = animT_;
      anims_[t.requestId] = a;
      continue;
    }
    TransferAnim& a = it->second;
    a.goneAt = -1;
    const double p = std::clamp(t.progress, 0.0, 1.0);
    const double dt = animT_ - a.snapAt;
    if (dt > 1e-4) {
      const double r = std::max(0.0, (p - a.snapProgress) / dt);
      a.rate = a.rate > 0 ? 0.5 * a.rate + 0.5 * r : r;
      a.snapProgress = p;
      a.snapAt = animT_;
    } else {
      a.snapProgress = std::max(a.snapProgress, p);
    }
    a.src = t.src;
    a.dst = t.dst;
    a.live = t.live;
  }
  const bool animated = frame_->running && frame_->mode == RunMode::Run;
  for (auto it = anims_.begin(); it != anims_.end();) {
    if (it->second.goneAt == -2) {
      if (!animated) {  // nothing to finish smoothly: drop it
        it = anims_.erase(it);
        continue;
      }
      it->second.goneAt = animT_;  // copy complete: run to the end and fade
    }
    ++it;
  }
  updateTimer();
  update();
}

bool ClusterView::animating() const {
  if (!frame_) return false;
  const bool clockRuns = animationsEnabled_ && frame_->running && frame_->mode != RunMode::Express;
  return clockRuns && (!anims_.empty() || !callouts_.empty());
}

void ClusterView::updateTimer() {
  if (animating()) {
    if (!animTimer_->isActive()) {
      wall_.restart();
      animTimer_->start();
    }
  } else {
    animTimer_->stop();
  }
}

void ClusterView::tick() {
  // Wall time since the last tick, capped so a stall does not jump the animation.
  const double dt = std::min(0.1, wall_.restart() / 1000.0);
  if (animating()) advanceAnimation(dt);
  updateTimer();
}

void ClusterView::advanceAnimation(double seconds) {
  if (seconds <= 0) return;
  animT_ += seconds;
  const double k = 1.0 - std::exp(-seconds / 0.08);  // smoothing toward the target
  for (auto it = anims_.begin(); it != anims_.end();) {
    TransferAnim& a = it->second;
    double target = 1.0;
    if (a.goneAt < 0) target = std::min(1.0, a.snapProgress + a.rate * std::min(animT_ - a.snapAt, 0.5));
    a.shown = std::max(a.shown, a.shown + (target - a.shown) * k);
    if (a.goneAt >= 0 && animT_ - a.goneAt > 0.45) it = anims_.erase(it);
    else ++it;
  }
  callouts_.advance(animT_);
  update();
}

void ClusterView::setAnimationsEnabled(bool on) {
  if (on == animationsEnabled_) return;
  animationsEnabled_ = on;
  if (!on) anims_.clear();
  updateTimer();
  update();
}

double ClusterView::shownTransferProgress(std::int64_t id) const {
  auto it = anims_.find(id);
  return it == anims_.end() ? -1.0 : it->second.shown;
}

void ClusterView::setLecture(bool on) {
  lecture_ = on;
  if (!on) callouts_.clear();
  update();
}

void ClusterView::addNotes(const std::vector<AnimationNote>& notes) {
  if (!lecture_ || !animationsEnabled_ || notes.empty()) return;  // none while Express runs
  // Only recent events: after a long unanimated jump (run to t, Express) the
  // callouts speak of the last few simulated seconds, not of all of them.
  const SimTime now = frame_ ? frame_->snapshot.now : notes.back().time;
  const SimTime cutoff = now - kCalloutMaxSimAge;
  callouts_.expireBefore(cutoff);
  for (const AnimationNote& n : notes)
    if (n.time >= cutoff) callouts_.add(n, animT_);
  updateTimer();
  update();
}

void ClusterView::setSelectedRequest(std::int64_t id) {
  selectedRequest_ = id;
  update();
}

void ClusterView::setSelectedInstance(int instance) {
  selectedInstance_ = instance;
  update();
}

std::optional<std::int64_t> ClusterView::requestAt(QPoint pos) const {
  for (auto it = hits_.rbegin(); it != hits_.rend(); ++it)
    if (it->kind == HitKind::Chip && it->rect.contains(pos)) return it->id;
  return std::nullopt;
}

int ClusterView::instanceAt(QPoint pos) const {
  for (std::size_t i = 0; i < cards_.size(); ++i)
    if (cards_[i].contains(pos)) return static_cast<int>(i);
  return -1;
}

QRect ClusterView::chipRect(std::int64_t id) const {
  for (const Hit& h : hits_)
    if (h.kind == HitKind::Chip && h.id == id) return h.rect;
  return {};
}

QRect ClusterView::cardRect(int instance) const {
  if (instance < 0 || static_cast<std::size_t>(instance) >= cards_.size()) return {};
  return cards_[static_cast<std::size_t>(instance)];
}

std::vector<std::int64_t> ClusterView::drawnRequests() const {
  std::vector<std::int64_t> out;
  for (const Hit& h : hits_)
    if (h.kind == HitKind::Chip) out.push_back(h.id);
  return out;
}

void ClusterView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
  const QPoint pos = e->position().toPoint();
  if (auto id = requestAt(pos)) {
    setSelectedRequest(*id);
    emit requestClicked(*id);
    return;
  }
  if (const int i = instanceAt(pos); i >= 0) {
    setSelectedInstance(i);
    emit instanceClicked(i);
    return;
  }
  QWidget::mousePressEvent(e);
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
  cards_.clear();
  policyTexts_.clear();
  queueRects_.clear();
  calloutRects_.clear();
  arrowEnds_.clear();
  infoRects_.clear();
  if (!frame_ || frame_->snapshot.instances.empty()) {
    p.setPen(theme::kMuted);
    p.drawText(rect(), Qt::AlignCenter, tr("Open a scenario (File ▸ Open or Presets) and press Play"));
    return;
  }
  const auto& inst = frame_->snapshot.instances;
  // Lecture mode: callouts get a lane of their own above the legend, so
  // they never cover a card's queues.
  const int lane = calloutLaneHeight();
  const QRect area = rect().adjusted(0, 0, 0, -kLegendH - lane);
  const std::vector<QRect> cards = layoutCards(static_cast<int>(inst.size()), area);
  compact_ = !cards.empty() && (cards[0].height() < 120 || cards[0].width() < 150);
  cards_ = cards;
  policyTexts_.assign(cards.size(), {});
  infoRects_.assign(cards.size(), {});
  for (std::size_t i = 0; i < cards.size(); ++i) {
    if (compact_) paintCompactCard(p, cards[i], static_cast<int>(i));
    else paintCard(p, cards[i], static_cast<int>(i));
  }
  // Transfers: animated in Run mode, static arrows when paused or in Fast
  // mode, none while Express runs.
  const bool running = frame_->running;
  const RunMode mode = frame_->mode;
  if (running && mode == RunMode::Run) {
    for (const auto& [id, a] : anims_) paintTransfer(p, id, a.src, a.dst, a.live, a.shown, true);
  } else if (!(running && mode == RunMode::Express)) {
    for (const TransferSnapshot& t : frame_->snapshot.transfers)
      paintTransfer(p, t.requestId, t.src, t.dst, t.live, t.progress, false);
  }
  if (lecture_) paintCallouts(p, QRect(0, height() - kLegendH - lane, width(), lane));
  paintLegend(p, QRect(0, height() - kLegendH, width(), kLegendH));
}

void ClusterView::paintCard(QPainter& p, const QRect& r, int index) {
  const InstanceSnapshot& in = frame_->snapshot.instances[static_cast<std::size_t>(index)];
  const bool selected = index == selectedInstance_;
  p.setPen(selected ? QPen(theme::kSeriesA, 2) : QPen(theme::kCardBorder, 1));
  p.setBrush(theme::kCard);
  p.drawRoundedRect(QRectF(r).adjusted(1, 1, -1, -1), 6, 6);
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
  int y = head.bottom() + 5;
  if (!badge.isEmpty()) {
    const QString shown = sfm.elidedText(badge, Qt::ElideRight, c.width() - 10);  // only if wider than the card
    const QRect badgeRect = badgeRow ? QRect(c.left(), head.bottom() + 3, sfm.horizontalAdvance(shown) + 10, sh + 2)
                                     : QRect(head.left() + nameW + 8, head.top() + 2, badgeW, lh - 4);
    if (badgeRow) y = badgeRect.bottom() + 4;
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

  // Memory bars.
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

  // What the running policy publishes for this instance (its named fields):
  // flags as dots with their label, values as "label value" on one line.
  // Nothing here knows the policy; hover shows each field's own tooltip.
  if (!in.policyFields.empty()) {
    p.setFont(small);
    QRect row(c.left(), y + 1, c.width(), sh);
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
      } else {
        // Too many fields for one line: they wrap, whole (a tour names
        // them), on the rows under the flags.
        const QStringList lines = wrapItems(forms.front().split(QStringLiteral(" · ")), sfm, row.width());
        int ly = x > row.left() ? row.top() + sh + 2 : row.top();
        for (const QString& line : lines) {
          const QString shown = sfm.elidedText(line, Qt::ElideRight, row.width());
          p.drawText(QRect(row.left(), ly, row.width(), sh), Qt::AlignLeft | Qt::AlignVCenter, shown);
          policyTexts_[static_cast<std::size_t>(index)] << shown;
          ly += sh + 2;
        }
        fieldRows = (ly - row.top()) / (sh + 2);
      }
    }
    row.setHeight(fieldRows * (sh + 2) - 2);
    hits_.push_back({row, policyview::fieldsTooltip(in.policyFields)});
    y += fieldRows * (sh + 2);
  }

  infoRects_[static_cast<std::size_t>(index)] = QRect(r.left(), r.top(), r.width(), y - r.top());
  // Queues: a label then rows of chips, each queue sharing the space left.
  y += 3;
  const int nq = static_cast<int>(in.queues.size());
  if (nq == 0) return;
  const int avail = c.bottom() - y;
  const int perQueue = avail / nq;
  if (nq > 1 && perQueue < std::max(sh, kChip) + 1) {
    // Too short for a row per queue (a card with many fields in lecture
    // mode): the queues share one row of counts, "running · 1  waiting · 9",
    // rather than overlap; hover and the inspector give the chips.
    QStringList counts, tight;
    for (const QueueSnapshot& q : in.queues) {
      counts << tr("%1 · %2").arg(QString::fromStdString(q.name)).arg(q.requests.size());
      tight << QString("%1 %2").arg(QString::fromStdString(q.name)).arg(q.requests.size());
    }
    const QRect qr(c.left(), y, c.width(), std::min(sh, std::max(0, c.bottom() - y)));
    queueRects_.push_back(qr);
    p.setFont(small);
    p.setPen(theme::kMuted);
    p.drawText(qr, Qt::AlignLeft | Qt::AlignVCenter, sfm.elidedText(firstThatFits({counts.join(QStringLiteral("  ")), tight.join(' ')}, sfm, qr.width()),
                                Qt::ElideRight, qr.width()));
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
    if (shown < n && rows > 0) {
      p.setPen(theme::kMuted);
      const int i = shown;
      p.drawText(QRect(x0 + (i % perRow) * (chip + kChipGap), qr.top() + chipsTop + (i / perRow) * (chip + kChipGap) - 3,
                       40, chip + 6),
                 Qt::AlignLeft | Qt::AlignVCenter, QString("+%1").arg(n - shown));
    }
    y += perQueue;
  }
}

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
  int queued = 0;
  int phases[3] = {0, 0, 0};
  for (const QueueSnapshot& q : in.queues)
    for (const RequestChip& ch : q.requests) {
      ++queued;
      ++phases[std::min<int>(ch.phase, 2)];
    }
  p.setPen(theme::kText);
  // "3 P", "3 ≤4.1k": the badge in short (pool label or role); hover says it all.
  const QString badge = policyview::badgeText(in);
  const QString tag = badge.isEmpty() ? QString() : " " + policyview::compactBadgeText(badge);
  p.drawText(QRect(c.left(), c.top(), c.width(), sh), Qt::AlignLeft | Qt::AlignVCenter,
             QString("%1%2").arg(in.id).arg(tag));
  if (!tag.isEmpty()) policyTexts_[static_cast<std::size_t>(index)] << tag.trimmed();
  p.setPen(theme::kMuted);
  {
    // "batch 16 · 40 held" where it fits, shorter on a tiny card (hover: the card's tooltip).
    const QFontMetrics sfm(small);
    const int nameW = sfm.horizontalAdvance(QString("%1%2 ").arg(in.id).arg(tag));
    p.drawText(QRect(c.left(), c.top(), c.width(), sh), Qt::AlignRight | Qt::AlignVCenter,
               firstThatFits({tr("batch %1 · %2 held").arg(in.batchSize).arg(queued),
                              tr("batch %1 · %2").arg(in.batchSize).arg(queued),
                              tr("%1 · %2").arg(in.batchSize).arg(queued)},
                             sfm, c.width() - nameW - sfm.horizontalAdvance(QStringLiteral("  "))));
  }
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
  }
  const QString poolRole = policyview::poolAndRoleText(in);
  const QString published = policyview::fieldsTooltip(in.policyFields);
  hits_.push_back({r, tr("GPU %1%2\nbatch %3, %4 requests held (%5 prefill, %6 reasoning, %7 answering)\n"
                         "GPU KV %8 of %9 blocks (%10)\nCPU swap %11 of %12 blocks (%13)%14")
                          .arg(in.id).arg(poolRole.isEmpty() ? QString() : "\n" + poolRole)
                          .arg(in.batchSize).arg(queued).arg(phases[0]).arg(phases[1]).arg(phases[2])
                          .arg(in.gpuBlocksUsed).arg(in.gpuBlocks).arg(pct(g))
                          .arg(in.cpuBlocksUsed).arg(in.cpuBlocks).arg(pct(cpu))
                          .arg(published.isEmpty() ? QString() : "\n" + published)});
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

QString ClusterView::toolTipAt(QPoint pos) const {
  for (auto it = hits_.rbegin(); it != hits_.rend(); ++it)
    if (it->rect.contains(pos)) return it->tip;
  return {};
}

QRect ClusterView::infoRect(int instance) const {
  if (instance < 0 || static_cast<std::size_t>(instance) >= infoRects_.size()) return {};
  return infoRects_[static_cast<std::size_t>(instance)];
}

QStringList ClusterView::policyTexts(int instance) const {
  if (instance < 0 || static_cast<std::size_t>(instance) >= policyTexts_.size()) return {};
  return policyTexts_[static_cast<std::size_t>(instance)];
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
