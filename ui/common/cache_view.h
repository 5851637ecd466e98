#pragma once
// The prefix cache (cluster.prefix_caching; docs/engine.md "Prefix
// caching") as the GUI words it: the cache band's tooltip on the cards, the
// inspector's cache block, and the lecture-mode "cache hit" callout's
// numbers. Everything here reads InstanceSnapshot::cache and says nothing
// when caching is off.
#include <QString>

#include <cstdint>

#include "engine/snapshot.h"

namespace sl::ui::cacheview {

/// Token counts as a card shows them: "512", "3.1k", "12k", "1.4M".
QString tokenCount(std::int64_t tokens);
/// Hit rate so far (cached / prompt tokens of first admissions), "41.3%";
/// "–" before any admission.
QString hitRateText(const PrefixCacheSnapshot& c);
/// Lines added to the KV bar's tooltip: the cache band (free-able blocks)
/// and what the cache holds; "" when caching is off.
QString kvBarTip(const PrefixCacheSnapshot& c, std::int64_t gpuBlocks);
/// The CPU bar's tooltip with a CPU tier (swap space and the tier side by
/// side); "" without a tier.
QString cpuTierTip(const PrefixCacheSnapshot& c, std::int64_t swapUsed, std::int64_t swapBlocks);
/// The inspector's cache rows for an instance (an HTML table); "" when off.
QString inspectorHtml(const PrefixCacheSnapshot& c);
/// The callout for `hits` new cache hits that skipped `tokens` prompt
/// tokens: "cache hit: 3.1k prompt tokens skipped", "4 cache hits: 9.3k
/// prompt tokens skipped".
QString hitCallout(int hits, std::int64_t tokens);

}  // namespace sl::ui::cacheview
