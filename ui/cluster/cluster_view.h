#pragma once
// The cluster at a glance: one card per instance in a grid that stays
// readable from 1 to 64 instances (dense cards, then compact ones, when
// space is short), and one tile per instance past that (hundreds to thousands: the GPU KV, CPU
// swap and phase-mix bars of a compact card, without text; all on hover). Queues
// are rows of request chips coloured by phase; outlines mark preempted
// (swapped to CPU) and migrating requests. Each card has a GPU KV bar and a
// CPU swap bar (numbers on hover), the running batch size, and what the
// running policy publishes for the instance (ui/cluster/policy_view.h): its pool
// label (or the engine role) as a badge, its named fields on one line.
//
// A cluster of mixed pools (cluster.pools, more than one) is drawn as groups:
// each pool's cards under a header naming its role, GPU, count × TP and
// price per hour (setPools; one pool looks as it always did).
//
// In-flight KV transfers are curved arrows from the source card to the
// destination card. In Run mode a head with a trail of particles moves along
// the arrow with the copy's progress, interpolated in *animation time*
// between snapshots (the view's own clock: it advances with wall time only
// while the run is animated, so it never mixes with wall or simulated time).
// Express mode draws no transfers while running.
//
// Clicking a chip emits requestClicked(id), clicking elsewhere on a card
// instanceClicked(index). In lecture mode, callouts from engine events are
// drawn on the card where they happened and fade out in animation time.
#include <QElapsedTimer>
#include <QPointF>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ui/cluster/spec_line.h"
#include "ui/common/pool_cost.h"
#include "ui/teaching/teaching_callouts.h"

class QTimer;

namespace sl::ui {

struct LiveFrame;
struct AnimationNote;

class ClusterView : public QWidget {
  Q_OBJECT
public:
  explicit ClusterView(QWidget* parent = nullptr);
  void setFrame(std::shared_ptr<const LiveFrame> frame);
  /// The scenario's pools (ui/common/pool_cost.h poolGroups): with more
  /// than one, cards are grouped per pool under a header. Empty or one: the
  /// plain grid.
  void setPools(std::vector<PoolGroup> pools);
  /// As last painted: each pool's header (where, text drawn); empty when
  /// the cards were not grouped.
  struct PoolHeader {
    QRect rect;
    QString text, toolTip;
  };
  const std::vector<PoolHeader>& poolHeaders() const { return poolHeaders_; }
  /// Cards drawn in compact mode at the current size (for tests): no chips,
  /// no queues. A card too small for the full layout but not for its chips
  /// (eight cards on a 1024×768 projector) is drawn dense instead: a
  /// smaller font, the two memory bars on one row, the queues' labels
  /// beside their chips.
  bool compact() const { return compact_; }
  bool dense() const { return dense_; }
  /// Instances drawn as tiles (too many for even compact cards; for tests).
  bool tiles() const { return tiles_; }
  /// Lecture mode's callout lane (0 when off): the strip above the legend
  /// where callouts go, never over a card.
  int calloutLaneHeight() const;
  /// As last painted: the cards' queue areas and the callouts' boxes.
  const std::vector<QRect>& queueRects() const { return queueRects_; }
  const std::vector<QRect>& calloutRects() const { return calloutRects_; }
  /// As last painted: card `instance`'s header, bars and fields line (what
  /// an arrow must not cover; empty for a compact card) and the transfer
  /// arrows' ends.
  QRect infoRect(int instance) const;
  const std::vector<QPointF>& arrowEnds() const { return arrowEnds_; }
  /// As last painted: where rows of request chips were drawn (one rect per
  /// queue's chips; the only part of a card a transfer arrow may cross).
  const std::vector<QRect>& chipAreas() const { return chipAreas_; }
  /// Paint without the transfer arrows (layout checks compare the two).
  void setTransfersHidden(bool hidden);
  /// The legend under the cards: its font (smaller where it would be cut)
  /// and the width it needs at a font.
  QFont legendFont() const;
  int legendWidth(const QFont& f) const;
  QSize sizeHint() const override { return {720, 420}; }
  QSize minimumSizeHint() const override { return {240, 160}; }

  // ---- hit testing (valid after a paint; tests use it to click)
  /// The request whose chip is at `pos`, if any.
  std::optional<std::int64_t> requestAt(QPoint pos) const;
  /// The instance whose card is at `pos`, -1 if none.
  int instanceAt(QPoint pos) const;
  /// Where request `id`'s chip was last drawn (empty if it was not).
  QRect chipRect(std::int64_t id) const;
  QRect cardRect(int instance) const;
  /// The tooltip the view shows at `pos` ("" where none).
  QString toolTipAt(QPoint pos) const;
  /// A request chip's tooltip: id (or "rank prompt"), phase, state, KV, and
  /// the policy's rank and predicted length where it set them.
  static QString chipToolTip(const RequestChip& c);
  /// What card `instance` drew of the running policy at the last paint: its
  /// badge (pool label or role), flag texts and the published values line.
  QStringList policyTexts(int instance) const;
  /// Instance `i`'s speculative-decoding figures as its card shows them
  /// (spec_line.h; `on` false when the run does not speculate), and where
  /// the card drew its line at the last paint (empty: not drawn).
  specline::SpecRates specRates(int instance) const { return spec_.rates(instance); }
  QRect specLineRect(int instance) const;
  QString specLineText(int instance) const;
  /// Ids of the chips drawn at the last paint, in drawing order.
  std::vector<std::int64_t> drawnRequests() const;

  /// Highlight one request chip / one card (-1: none).
  void setSelectedRequest(std::int64_t id);
  void setSelectedInstance(int instance);

  // ---- animation and lecture mode
  /// Seconds of animation time so far (advances only while the run animates).
  double animationTime() const { return animT_; }
  /// Move animation time on by `seconds` (the view's timer does this from
  /// wall time while running; tests call it directly).
  void advanceAnimation(double seconds);
  /// Progress drawn for request `id`'s transfer (-1 if none is animated).
  double shownTransferProgress(std::int64_t id) const;
  /// Off while Express mode runs: no transfer animation, the clock stops.
  void setAnimationsEnabled(bool on);
  void setLecture(bool on);
  bool lecture() const { return lecture_; }
  /// Engine events since the last call; they become callouts in lecture mode.
  void addNotes(const std::vector<AnimationNote>& notes);
  const CalloutBoard& callouts() const { return callouts_; }

signals:
  void requestClicked(qint64 id);
  void instanceClicked(int instance);

protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;

private:
  enum class HitKind { Tip, Chip, Card };
  struct Hit {
    QRect rect;
    QString tip;
    HitKind kind = HitKind::Tip;
    std::int64_t id = -1;
  };
  struct TransferAnim {
    int src = 0, dst = 0;
    bool live = false;
    double snapProgress = 0;  // progress in the latest snapshot
    double snapAt = 0;        // animation time of that snapshot
    double rate = 0;          // progress per animation second, estimated
    double shown = 0;         // what is drawn (monotone)
    double goneAt = -1;       // animation time the copy completed, -1 while running
  };
  std::vector<QRect> layoutCards(int n, const QRect& area) const;
  /// Cards grouped per pool (stacked bands or side by side, whichever
  /// gives the larger card), each group under a header of `headerH`;
  /// `headers` gets the headers' rects, `blocks` each group's outline.
  /// Empty when even compact cards would not fit (then: the plain grid).
  std::vector<QRect> layoutPoolCards(const QRect& area, int headerH, std::vector<QRect>& headers,
                                     std::vector<QRect>& blocks) const;
  bool grouped() const;
  QFont poolHeaderFont() const;
  /// The groups' backgrounds and their headers (role dot, the longest text
  /// that fits); fills poolHeaders_ and the headers' tooltips.
  void paintPoolHeaders(QPainter& p, const std::vector<QRect>& headers, const std::vector<QRect>& blocks,
                        const QFont& font);
  static std::vector<QRect> layoutTiles(int n, const QRect& area);
  /// `denseScale`: 0 for the full layout, else a dense card's font scale.
  void paintCard(QPainter& p, const QRect& r, int index, double denseScale);
  /// Whether instance `in` fits a card of `size` (its fields wrapped, a row
  /// of chips for each queue) in the full layout (`denseScale` 0) or the
  /// dense one at that font scale.
  bool cardFits(const InstanceSnapshot& in, QSize size, double denseScale) const;
  void paintCompactCard(QPainter& p, const QRect& r, int index);
  void paintTile(QPainter& p, const QRect& r, int index);
  /// A compact card's or tile's tooltip: the instance, its pool, batch,
  /// held requests by phase, memory, what the policy publishes and, when the
  /// run speculates, card `index`'s speculation figures.
  QString instanceToolTip(const InstanceSnapshot& in, int index) const;
  void paintTransfer(QPainter& p, std::int64_t id, int src, int dst, bool live, double progress, bool animated);
  void paintCallouts(QPainter& p, const QRect& lane);
  QFont calloutFont() const;
  void paintLegend(QPainter& p, const QRect& r);
  void tick();
  bool animating() const;
  void updateTimer();

  std::shared_ptr<const LiveFrame> frame_;
  std::vector<Hit> hits_;
  std::vector<QRect> queueRects_, calloutRects_;  // as last painted
  std::vector<QRect> infoRects_;                   // per card, as last painted
  std::vector<QPointF> arrowEnds_;                 // as last painted
  std::vector<QRect> chipAreas_;                   // as last painted
  std::vector<QRect> landings_;                    // per card: where its arrows end (its chip rows)
  QRegion arrowRoom_;                              // chip rows, less their "+N": arrows may cross them
  bool transfersHidden_ = false;
  static constexpr int kLaneRows = 2;
  /// Rows of the callout lane at the current height (one on a short view,
  /// so that the cards keep their chips).
  int laneRows() const;
  std::vector<QRect> cards_;
  std::vector<PoolGroup> pools_;
  std::vector<PoolHeader> poolHeaders_;   // as last painted
  std::vector<QStringList> policyTexts_;  // per card, as last painted
  bool compact_ = false;
  bool dense_ = false;
  double denseScale_ = 0;  // the dense cards' font scale (0: not dense)
  bool tiles_ = false;
  std::int64_t selectedRequest_ = -1;
  int selectedInstance_ = -1;

  QTimer* animTimer_ = nullptr;
  QElapsedTimer wall_;
  double animT_ = 0;
  std::map<std::int64_t, TransferAnim> anims_;
  int generation_ = -1;
  std::vector<int> roles_;  // per instance, from the previous frame
  std::vector<std::vector<double>> counters_;  // per instance: its policy fields' values in the previous frame
  bool hasSynthetic_ = false;  // this run has shown work a policy injected (legend entry)
  // Prefix caching (cluster_view.cpp noteCacheHits): per instance, hits and
  // cached tokens in the previous frame; whether this run caches (legend).
  void noteCacheHits(const Snapshot& s);
  static QString cacheLegendLabel();
  std::vector<std::pair<std::int64_t, std::int64_t>> cacheHits_;
  SimTime cacheSeenAt_ = 0;  // the simulated time of that frame
  bool hasCache_ = false;

  // Speculative decoding: recent rates per instance (spec_line.h) and the
  // card lines as last painted.
  specline::SpecMeter spec_;
  std::vector<std::pair<QRect, QString>> specLines_;

  bool lecture_ = false;
  bool animationsEnabled_ = true;
  CalloutBoard callouts_;
};

}  // namespace sl::ui
