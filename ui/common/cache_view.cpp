#include "ui/common/cache_view.h"

#include <QObject>

#include <cmath>

namespace sl::ui::cacheview {

QString tokenCount(std::int64_t tokens) {
  const double a = std::abs(static_cast<double>(tokens));
  if (a < 1000) return QString::number(tokens);
  const double k = static_cast<double>(tokens) / 1e3;
  if (a < 1e6) return QString::number(k, 'f', a < 1e4 ? 1 : 0) + "k";
  return QString::number(k / 1e3, 'f', a < 1e7 ? 1 : 0) + "M";
}

QString hitRateText(const PrefixCacheSnapshot& c) {
  if (c.promptTokens <= 0) return QStringLiteral("–");
  return QString::number(100.0 * static_cast<double>(c.cachedTokens) / static_cast<double>(c.promptTokens), 'f', 1) +
         "%";
}

QString kvBarTip(const PrefixCacheSnapshot& c, std::int64_t gpuBlocks) {
  if (!c.on) return {};
  const std::int64_t inUse = c.gpuBlocks - c.gpuFreeBlocks;
  return QObject::tr("\nTeal band: %1 of %2 blocks held only as prefix cache (no request uses them: free memory, "
                     "kept for later hits, evicted least recently used first when memory is needed)\n"
                     "%3 cached blocks shared by running requests (counted as used)\n"
                     "hit rate so far %4 (%5 of %6 prompt tokens), %7 hits, %8 blocks evicted")
      .arg(c.gpuFreeBlocks).arg(gpuBlocks).arg(inUse).arg(hitRateText(c))
      .arg(tokenCount(c.cachedTokens), tokenCount(c.promptTokens)).arg(c.hits).arg(c.evictions);
}

QString cpuTierTip(const PrefixCacheSnapshot& c, std::int64_t swapUsed, std::int64_t swapBlocks) {
  if (!c.on || c.cpuCapacity <= 0) return {};
  return QObject::tr("Host memory: CPU swap space %1 of %2 blocks used, then the prefix cache's CPU tier "
                     "(teal band) %3 of %4 blocks: blocks evicted from the GPU, loaded back on a hit "
                     "(%5 blocks so far)")
      .arg(swapUsed).arg(swapBlocks).arg(c.cpuBlocks).arg(c.cpuCapacity).arg(c.offloadHits);
}

QString inspectorHtml(const PrefixCacheSnapshot& c) {
  if (!c.on) return {};
  auto cell = [](const QString& k, const QString& v) {
    return QString("<td style='color:#6B7280; padding-right:6px'>%1</td><td style='padding-right:14px'><b>%2</b></td>")
        .arg(k, v);
  };
  // Short labels, four columns: as narrow as the counters above (a wider
  // table would widen the dock and, at 1024 px, the window).
  QString rows;
  rows += "<tr>" + cell(QObject::tr("cache hit rate"), hitRateText(c)) +
          cell(QObject::tr("hits"), QString::number(c.hits)) + "</tr>";
  rows += "<tr>" + cell(QObject::tr("GPU cached"), QObject::tr("%1 blocks").arg(c.gpuBlocks)) +
          cell(QObject::tr("free"), QString::number(c.gpuFreeBlocks)) + "</tr>";
  if (c.cpuCapacity > 0)
    rows += "<tr>" + cell(QObject::tr("CPU tier"), QObject::tr("%1 / %2").arg(c.cpuBlocks).arg(c.cpuCapacity)) +
            cell(QObject::tr("loaded"), QString::number(c.offloadHits)) + "</tr>";
  rows += "<tr>" + cell(QObject::tr("tokens skipped"), QObject::tr("%1 / %2").arg(tokenCount(c.cachedTokens), tokenCount(c.promptTokens))) +
          cell(QObject::tr("evicted"), QString::number(c.evictions)) + "</tr>";
  return "<table>" + rows + "</table>";
}

QString hitCallout(int hits, std::int64_t tokens) {
  if (hits <= 1) return QObject::tr("cache hit: %1 prompt tokens skipped").arg(tokenCount(tokens));
  return QObject::tr("%1 cache hits: %2 prompt tokens skipped").arg(hits).arg(tokenCount(tokens));
}

}  // namespace sl::ui::cacheview
