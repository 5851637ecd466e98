#pragma once
// Internal to the cluster view (cluster_cards.cpp: cards and chips;
// cluster_view_overlays.cpp: transfers, callouts, legend): the layout
// constants and drawing helpers both halves use.
#include <QFontMetrics>
#include <QPainter>
#include <QRectF>
#include <QStringList>

#include "engine/snapshot.h"
#include "util/time.h"

namespace sl::ui::clusterpaint {

inline constexpr int kGap = 8;
inline constexpr int kLegendH = 22;
inline constexpr int kChip = 8;  // legend and smallest chip size
inline constexpr int kChipGap = 2;
inline constexpr int kMinCompactW = 40, kMinCompactH = 30;  // the smallest compact card
inline constexpr int kMinFullW = 150, kMinFullH = 120;      // the smallest card of the full layout
inline constexpr int kMinDenseW = 120, kMinDenseH = 76;     // the smallest dense card (chips, queues)
inline constexpr double kDenseFonts[] = {0.85, 0.78, 0.72, 0.66};  // a dense card's text, of the view's font
inline constexpr int kMinTile = 4;                           // the smallest tile
// Callouts older than this in simulated time go, whatever the animation clock
// says (runs to a time or in Fast mode move the simulated clock far ahead).
inline constexpr SimTime kCalloutMaxSimAge = 5 * kNsPerSecond;

QString firstThatFits(const QStringList& forms, const QFontMetrics& fm, int width);
const char* phaseLabel(int p);
const char* stateLabel(int s);
QString pct(double v);
void drawChip(QPainter& p, const QRectF& r, const RequestChip& c);
void drawBar(QPainter& p, const QRect& r, double used, double reserved, const QColor& c);

/// An instance's memory as shares of its blocks.
struct MemoryShares {
  double gpuUsed = 0;      // GPU KV blocks in use
  double gpuReserved = 0;  // GPU KV blocks reserved for incoming copies
  double cpuUsed = 0;      // CPU swap blocks in use
  // Prefix caching on only (else 0): blocks held only as cache, free-able.
  double gpuCached = 0;    // GPU blocks cached with no reference (free memory kept as cache)
  double cpuCached = 0;    // the cache's CPU tier; with a tier the CPU bar spans swap + tier
};
/// `withCache` false: the shares of the bars as without prefix caching
/// (swap as a share of swap space, for tooltips' numbers).
MemoryShares memoryShares(const InstanceSnapshot& in, bool withCache = true);
/// The GPU KV bar, full and compact cards alike: the one place it is
/// painted (a new band, e.g. cached prefixes, goes here).
void paintKvBar(QPainter& p, const QRect& r, const MemoryShares& m);
/// The CPU swap bar (with the prefix cache's CPU tier after it, if any).
void paintCpuBar(QPainter& p, const QRect& r, const MemoryShares& m);
/// The prefix cache's teal band: `share` of bar `r` after its first `from`.
void drawCacheBand(QPainter& p, const QRect& r, double from, double share);
/// The bars' tooltips (the cache band and CPU tier explained when caching is on).
QString kvBarToolTip(const InstanceSnapshot& in, const MemoryShares& m);
QString cpuBarToolTip(const InstanceSnapshot& in, const MemoryShares& m);
/// "\n" + the CPU tier's tooltip line ("" without a tier).
QString cpuTierLine(const InstanceSnapshot& in);

}  // namespace sl::ui::clusterpaint
