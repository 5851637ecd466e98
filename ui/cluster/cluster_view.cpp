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

#include "ui/cluster/policy_view.h"
#include "ui/controller/sim_controller.h"
#include "ui/common/theme.h"

namespace sl::ui {

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
    cacheHits_.clear();
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
  noteCacheHits(s);
  spec_.record(frame_->generation, s);  // speculative decoding's recent rates (spec_line.h)
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

void ClusterView::noteCacheHits(const Snapshot& s) {
  // An instance's prefix-cache hits between two snapshots become one
  // callout on its card: "cache hit: 3.1k prompt tokens skipped".
  hasCache_ = !s.instances.empty() && s.instances.front().cache.on;
  if (!hasCache_) {
    cacheHits_.clear();
    return;
  }
  // After an unanimated jump of the simulated clock (Run to t, Fast) the
  // hits counted since the last frame are old news: the baseline moves on,
  // nothing is called out (as for engine events, kCalloutMaxSimAge).
  const bool baseline = cacheHits_.size() != s.instances.size() || s.now - cacheSeenAt_ > kCalloutMaxSimAge;
  cacheSeenAt_ = s.now;
  cacheHits_.resize(s.instances.size());
  for (std::size_t i = 0; i < s.instances.size(); ++i) {
    const PrefixCacheSnapshot& c = s.instances[i].cache;
    auto& [hits, tokens] = cacheHits_[i];
    if (lecture_ && !baseline && c.hits > hits)
      callouts_.addCacheHit(static_cast<int>(i), static_cast<int>(c.hits - hits), c.cachedTokens - tokens, animT_, s.now);
    hits = c.hits;
    tokens = c.cachedTokens;
  }
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

void ClusterView::setTransfersHidden(bool hidden) {
  transfersHidden_ = hidden;
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
  const int cw = (area.width() - kGap * (cols + 1)) / cols;
  const int ch = (area.height() - kGap * (rows + 1)) / rows;
  // Even a compact card needs 40 x 30: past that (hundreds of instances)
  // every instance gets a tile instead, so the whole cluster stays in view.
  if (cw < kMinCompactW || ch < kMinCompactH) return layoutTiles(n, area);
  for (int i = 0; i < n; ++i) {
    const int r = i / cols, c = i % cols;
    out.emplace_back(area.left() + kGap + c * (cw + kGap), area.top() + kGap + r * (ch + kGap), cw, ch);
  }
  return out;
}

void ClusterView::setPools(std::vector<PoolGroup> pools) {
  pools_ = std::move(pools);
  update();
}

bool ClusterView::grouped() const {
  if (pools_.size() < 2 || !frame_) return false;
  int n = 0;
  for (const PoolGroup& g : pools_) n += g.count;
  return n == static_cast<int>(frame_->snapshot.instances.size());
}

std::vector<QRect> ClusterView::layoutPoolCards(const QRect& area, int headerH, std::vector<QRect>& headers,
                                                std::vector<QRect>& blocks) const {
  // Two arrangements, each scored as the plain grid is (the largest card of
  // a pleasant shape): pools stacked in bands of rows, all `cols` wide, or
  // side by side, each `rows` high; cards keep one size throughout.
  const int groups = static_cast<int>(pools_.size());
  int most = 1;
  for (const PoolGroup& g : pools_) most = std::max(most, g.count);
  constexpr int kTop = 4;  // above each header
  struct Pick {
    bool stacked = true;
    int k = 1;  // columns (stacked) or rows (side by side)
    int cw = 0, ch = 0;
    double score = -1;
  } best;
  auto consider = [&](bool stacked, int k, int cw, int ch) {
    if (cw <= 0 || ch <= 0) return;
    const double score = std::min<double>(cw, ch * 1.5);
    if (score > best.score) best = {stacked, k, cw, ch, score};
  };
  for (int cols = 1; cols <= most; ++cols) {
    int rows = 0;
    for (const PoolGroup& g : pools_) rows += (g.count + cols - 1) / cols;
    const int cw = (area.width() - kGap * (cols + 1)) / cols;
    const int ch = (area.height() - groups * (kTop + headerH)) / rows - kGap;
    consider(true, cols, cw, ch);
  }
  for (int rows = 1; rows <= most; ++rows) {
    int cols = 0;
    for (const PoolGroup& g : pools_) cols += (g.count + rows - 1) / rows;
    const int cw = (area.width() - kGap * (groups - 1)) / cols - kGap - (kGap / cols);
    const int ch = (area.height() - kTop - headerH - kGap) / rows - kGap;
    consider(false, rows, cw, ch);
  }
  if (best.score < 0 || best.cw < kMinCompactW || best.ch < kMinCompactH) return {};
  std::vector<QRect> out;
  const int cw = best.cw, ch = best.ch;
  int x0 = area.left() + kGap, y0 = area.top();
  for (const PoolGroup& g : pools_) {
    const int cols = best.stacked ? best.k : (g.count + best.k - 1) / best.k;
    const int rows = (g.count + cols - 1) / cols;
    const int blockW = best.stacked ? area.width() - kGap : cols * (cw + kGap);
    const QRect header(x0, y0 + kTop, blockW - kGap, headerH);
    headers.push_back(header);
    const int top = header.bottom() + 1;
    for (int i = 0; i < g.count; ++i)
      out.emplace_back(x0 + (i % cols) * (cw + kGap), top + (i / cols) * (ch + kGap), cw, ch);
    const int bottom = top + rows * (ch + kGap) - kGap;  // below the last row
    blocks.emplace_back(QPoint(x0 - kGap / 2, header.top() - kTop / 2),
                        QPoint(x0 + blockW - kGap / 2 - 1, bottom + kGap / 2 - 1));
    if (best.stacked)
      y0 = bottom + kGap / 2;
    else
      x0 += blockW + kGap;
  }
  return out;
}

std::vector<QRect> ClusterView::layoutTiles(int n, const QRect& area) {
  // The largest tile of a pleasant shape (as for cards), with a 2 px gap,
  // 1 px once tiles are small; never below kMinTile (a run of thousands of
  // instances in a small window then runs past the bottom edge, as cards
  // did before tiles: the tooltip and the inspector still reach each one).
  int bestCols = 1, gap = 1;
  double best = -1;
  for (int cols = 1; cols <= n; ++cols) {
    const int rows = (n + cols - 1) / cols;
    for (const int g : {2, 1}) {
      const double cw = (area.width() - g * (cols + 1)) / static_cast<double>(cols);
      const double ch = (area.height() - g * (rows + 1)) / static_cast<double>(rows);
      if (cw < kMinTile || ch < kMinTile || (g == 2 && std::min(cw, ch) < 12)) continue;
      const double score = std::min(cw, ch * 1.5);
      if (score > best) {
        best = score;
        bestCols = cols;
        gap = g;
      }
      break;  // the 2 px gap where tiles stay large enough
    }
  }
  if (best < 0) {  // not even kMinTile fits: as many columns as the width takes
    gap = 1;
    bestCols = std::clamp((area.width() - gap) / (kMinTile + gap), 1, n);
  }
  const int cols = bestCols, rows = (n + cols - 1) / cols;
  const int cw = std::max(kMinTile, (area.width() - gap * (cols + 1)) / cols);
  const int ch = std::max(kMinTile, (area.height() - gap * (rows + 1)) / rows);
  std::vector<QRect> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int r = i / cols, c = i % cols;
    out.emplace_back(area.left() + gap + c * (cw + gap), area.top() + gap + r * (ch + gap), cw, ch);
  }
  return out;
}

void ClusterView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), theme::kBackground);
  hits_.clear();
  cards_.clear();
  poolHeaders_.clear();
  policyTexts_.clear();
  queueRects_.clear();
  calloutRects_.clear();
  arrowEnds_.clear();
  chipAreas_.clear();
  arrowRoom_ = QRegion();
  infoRects_.clear();
  specLines_.clear();
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
  // Mixed pools: the cards grouped per pool under headers (else, or where
  // even compact cards would not fit, the plain grid).
  std::vector<QRect> headers, blocks;
  const QFont headerFont = poolHeaderFont();
  std::vector<QRect> cards;
  if (grouped()) cards = layoutPoolCards(area, QFontMetrics(headerFont).height() + 4, headers, blocks);
  if (cards.empty()) {
    headers.clear();
    blocks.clear();
    cards = layoutCards(static_cast<int>(inst.size()), area);
  }
  poolHeaders_.clear();
  if (!headers.empty()) paintPoolHeaders(p, headers, blocks, headerFont);
  // Full cards where every card's fields and a row of chips per queue fit
  // the full layout; else dense ones (at the largest font at which they
  // fit); else compact.
  const QSize cs = cards.empty() ? QSize() : cards[0].size();
  auto allFit = [&](double dense) {
    return std::all_of(inst.begin(), inst.end(), [&](const InstanceSnapshot& in) { return cardFits(in, cs, dense); });
  };
  const bool small = !cards.empty() && (cs.height() < kMinFullH || cs.width() < kMinFullW || !allFit(0));
  denseScale_ = 0;
  if (small && cs.height() >= kMinDenseH && cs.width() >= kMinDenseW && inst.size() <= 64)
    for (const double k : kDenseFonts)
      if (allFit(k)) {
        denseScale_ = k;
        break;
      }
  dense_ = denseScale_ > 0;
  compact_ = small && !dense_;
  tiles_ = !cards.empty() && (cs.height() < kMinCompactH || cs.width() < kMinCompactW);
  cards_ = cards;
  policyTexts_.assign(cards.size(), {});
  infoRects_.assign(cards.size(), {});
  landings_.assign(cards.size(), {});
  specLines_.assign(cards.size(), {});
  for (std::size_t i = 0; i < cards.size(); ++i) {
    if (tiles_) paintTile(p, cards[i], static_cast<int>(i));
    else if (compact_) paintCompactCard(p, cards[i], static_cast<int>(i));
    else paintCard(p, cards[i], static_cast<int>(i), denseScale_);
  }
  // Transfers: animated in Run mode, static arrows when paused or in Fast
  // mode, none while Express runs.
  const bool running = frame_->running;
  const RunMode mode = frame_->mode;
  // Arrows are drawn in the gaps between cards and over the cards' rows of
  // chips only (their ends sit on the chips): a curve crossing a card never
  // covers its header, badge, bars, fields or a queue's label, a value the
  // tour names ("interval", a KV %) included.
  QRegion arrowClip(area);  // (never over the legend or the callout lane)
  for (const QRect& card : cards_) arrowClip -= card;
  for (const PoolHeader& h : poolHeaders_) arrowClip -= h.rect;
  arrowClip += arrowRoom_.intersected(area);
  p.save();
  p.setClipRegion(arrowClip);
  if (transfersHidden_) {
    // none (a layout check's reference picture)
  } else if (running && mode == RunMode::Run) {
    for (const auto& [id, a] : anims_) paintTransfer(p, id, a.src, a.dst, a.live, a.shown, true);
  } else if (!(running && mode == RunMode::Express)) {
    for (const TransferSnapshot& t : frame_->snapshot.transfers)
      paintTransfer(p, t.requestId, t.src, t.dst, t.live, t.progress, false);
  }
  p.restore();
  if (lecture_) paintCallouts(p, QRect(0, height() - kLegendH - lane, width(), lane));
  paintLegend(p, QRect(0, height() - kLegendH, width(), kLegendH));
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

QRect ClusterView::specLineRect(int instance) const {
  if (instance < 0 || static_cast<std::size_t>(instance) >= specLines_.size()) return {};
  return specLines_[static_cast<std::size_t>(instance)].first;
}

QString ClusterView::specLineText(int instance) const {
  if (instance < 0 || static_cast<std::size_t>(instance) >= specLines_.size()) return {};
  return specLines_[static_cast<std::size_t>(instance)].second;
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
