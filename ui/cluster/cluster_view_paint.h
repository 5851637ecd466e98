#pragma once
// Internal to the cluster view (cluster_view.cpp: cards and chips;
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
// Callouts older than this in simulated time go, whatever the animation clock
// says (runs to a time or in Fast mode move the simulated clock far ahead).
inline constexpr SimTime kCalloutMaxSimAge = 5 * kNsPerSecond;

QString firstThatFits(const QStringList& forms, const QFontMetrics& fm, int width);
const char* phaseLabel(int p);
const char* stateLabel(int s);
QString pct(double v);
void drawChip(QPainter& p, const QRectF& r, const RequestChip& c);
void drawBar(QPainter& p, const QRect& r, double used, double reserved, const QColor& c);

}  // namespace sl::ui::clusterpaint
