#pragma once
// Block-level prefix cache of one instance (docs/engine.md "Prefix
// caching"): full KV blocks keyed by a hash chain of their tokens'
// identity, reference-counted while requests use them, kept as cache once
// free and evicted least recently freed first when memory is needed; an
// optional CPU tier takes the evicted blocks (`cluster.prefix_cache_cpu_gb`).
//
// Accounting, with Instance: `gpuUsed_` counts the physical blocks that
// requests hold (their private blocks, plus every cached block with at
// least one reference, once); the cache's free blocks (no reference) are
// `evictableGpu()` and count as free memory, as in vLLM. After anything
// takes memory, reclaim() evicts until used + reserved + evictable fits.
#include <cstdint>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "workload/request_spec.h"

namespace sl {

/// Prefix-cache counters of one instance (summary.json "prefix_cache").
struct PrefixCacheStats {
  std::int64_t promptTokens = 0;   // prompt tokens of first admissions
  std::int64_t cachedTokens = 0;   // of those, served from the cache
  std::int64_t hits = 0;           // first admissions with >= 1 cached block
  std::int64_t recomputeCachedTokens = 0;  // cached tokens of re-admissions (recompute preemption)
  std::int64_t evictions = 0;      // GPU blocks evicted (dropped or offloaded)
  std::int64_t offloaded = 0;      // of those, moved to the CPU tier
  std::int64_t offloadHits = 0;    // blocks loaded back from the CPU tier on a hit
  std::int64_t cpuEvictions = 0;   // CPU-tier blocks dropped
};

class PrefixCache {
public:
  enum class Tier : std::uint8_t { Gpu, Cpu };
  struct Entry {
    std::int32_t refs = 0;
    Tier tier = Tier::Gpu;
    std::uint64_t stamp = 0;  // LRU position while free
  };

  explicit PrefixCache(std::int64_t cpuCapacity) : cpuCapacity_(cpuCapacity) {}

  const Entry* find(std::uint64_t key) const {
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }
  /// A request's block just computed on GPU becomes a cached block with one
  /// reference. False (nothing changed) when the key is already cached on
  /// GPU: the request keeps its block private (a duplicate). A CPU-tier copy
  /// is dropped (the GPU one replaces it).
  bool registerBlock(std::uint64_t key);
  /// A hit on a GPU block: one more reference; a free block leaves the LRU
  /// and becomes used (`gpuUsed` + 1).
  void acquire(std::uint64_t key, std::int64_t& gpuUsed);
  /// A hit on a CPU-tier block: loaded back into a new GPU block with one
  /// reference (`gpuUsed` + 1; the caller charges the copy).
  void load(std::uint64_t key, std::int64_t& gpuUsed);
  /// One reference dropped; at none the block is free cache (`gpuUsed` - 1).
  void release(std::uint64_t key, std::int64_t& gpuUsed);
  /// Evict free GPU blocks, least recently freed first, until
  /// used + reserved + evictable <= capacity.
  void reclaim(std::int64_t used, std::int64_t reserved, std::int64_t capacity);

  std::int64_t evictableGpu() const { return static_cast<std::int64_t>(lruGpu_.size()); }
  std::int64_t cpuBlocks() const { return static_cast<std::int64_t>(lruCpu_.size()); }
  /// GPU blocks cached (in use or free).
  std::int64_t gpuBlocks() const { return gpuEntries_; }
  PrefixCacheStats& stats() { return stats_; }
  const PrefixCacheStats& stats() const { return stats_; }

private:
  void evictOne();

  std::unordered_map<std::uint64_t, Entry> map_;  // looked up only, never iterated
  std::map<std::uint64_t, std::uint64_t> lruGpu_, lruCpu_;  // stamp -> key of free blocks
  std::uint64_t clock_ = 0;
  std::int64_t gpuEntries_ = 0;
  std::int64_t cpuCapacity_ = 0;
  PrefixCacheStats stats_;
};

/// A request's cache bookkeeping (engine; kept by the Simulator per pool
/// slot while caching is on).
struct PrefixState {
  std::vector<TokenSegment> segments;  // the prompt's named identity (RequestSpec::segments)
  std::int64_t id = 0;
  std::int64_t session = -1;           // RequestSpec::session
  std::uint64_t affinityKey = 0;       // Simulator::sessionKey, set at arrival
  std::int32_t input = 0;
  std::vector<std::uint64_t> chain;    // chain hash of block k, computed as far as needed
  std::vector<std::uint64_t> table;    // key each leading GPU block references, 0: private
  std::int32_t shared = 0;             // non-zero entries of `table`
  std::int32_t cachedTokens = -1;      // tokens served from the cache at its first admission, -1 before
  bool admittedOnce = false;
};

/// Extend `s.chain` to `blocks` blocks of `blockSize` tokens. Token t's
/// identity: its piece of `s.segments` (clipped at the prompt's end), the
/// rest of the prompt (promptTailSegmentId), then the generated tokens
/// (outputSegmentId). Block k's key = hash(key of block k-1, its pieces),
/// never 0.
void extendChain(PrefixState& s, std::int32_t blocks, std::int32_t blockSize);

/// What a waiting request would find in an instance's cache: the longest
/// run of its leading blocks cached (on GPU or CPU), at most
/// floor((tokens-1)/blockSize) blocks (the last token is always computed).
struct PrefixMatch {
  std::int32_t blocks = 0;      // cached leading blocks
  std::int32_t cpuBlocks = 0;   // of those, in the CPU tier
  std::int32_t liveShared = 0;  // of those, on GPU with a reference (no new memory)
};
PrefixMatch matchPrefix(const PrefixCache& c, PrefixState& s, std::int32_t tokens, std::int32_t blockSize);

}  // namespace sl
