#include "engine/prefix_cache.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "util/rng.h"

namespace sl {

bool PrefixCache::registerBlock(std::uint64_t key) {
  auto [it, fresh] = map_.try_emplace(key);
  Entry& e = it->second;
  if (!fresh) {
    if (e.tier == Tier::Gpu) return false;  // already cached on GPU: a duplicate stays private
    lruCpu_.erase(e.stamp);                 // the GPU copy replaces the offloaded one
  }
  e = Entry{1, Tier::Gpu, 0};
  ++gpuEntries_;
  return true;
}

void PrefixCache::acquire(std::uint64_t key, std::int64_t& gpuUsed) {
  Entry& e = map_.at(key);
  assert(e.tier == Tier::Gpu);
  if (e.refs++ == 0) {
    lruGpu_.erase(e.stamp);
    ++gpuUsed;
  }
}

void PrefixCache::load(std::uint64_t key, std::int64_t& gpuUsed) {
  Entry& e = map_.at(key);
  assert(e.tier == Tier::Cpu && e.refs == 0);
  lruCpu_.erase(e.stamp);
  e = Entry{1, Tier::Gpu, 0};
  ++gpuEntries_;
  ++gpuUsed;
  ++stats_.offloadHits;
}

void PrefixCache::release(std::uint64_t key, std::int64_t& gpuUsed) {
  Entry& e = map_.at(key);
  assert(e.tier == Tier::Gpu && e.refs > 0);
  if (--e.refs == 0) {
    e.stamp = ++clock_;
    lruGpu_.emplace(e.stamp, key);
    --gpuUsed;
  }
}

void PrefixCache::evictOne() {
  const auto oldest = lruGpu_.begin();
  const std::uint64_t key = oldest->second;
  lruGpu_.erase(oldest);
  --gpuEntries_;
  ++stats_.evictions;
  if (cpuCapacity_ <= 0) {
    map_.erase(key);
    return;
  }
  if (static_cast<std::int64_t>(lruCpu_.size()) >= cpuCapacity_) {  // the CPU tier drops its oldest
    const auto old = lruCpu_.begin();
    map_.erase(old->second);
    lruCpu_.erase(old);
    ++stats_.cpuEvictions;
  }
  Entry& e = map_.at(key);
  e.tier = Tier::Cpu;
  e.stamp = ++clock_;
  lruCpu_.emplace(e.stamp, key);
  ++stats_.offloaded;
}

void PrefixCache::reclaim(std::int64_t used, std::int64_t reserved, std::int64_t capacity) {
  while (!lruGpu_.empty() && used + reserved + evictableGpu() > capacity) evictOne();
  assert(used + reserved + evictableGpu() <= capacity);
}

void extendChain(PrefixState& s, std::int32_t blocks, std::int32_t blockSize) {
  const auto have = static_cast<std::int32_t>(s.chain.size());
  if (blocks <= have) return;
  // The token identity as pieces: the named segments clipped at the
  // prompt's end, the rest of the prompt, then the generated tokens.
  std::vector<TokenSegment> pieces;
  pieces.reserve(s.segments.size() + 2);
  std::int64_t covered = 0;
  for (const TokenSegment& g : s.segments) {
    if (covered >= s.input) break;
    if (g.length <= 0) continue;
    const auto len = static_cast<std::int32_t>(std::min<std::int64_t>(g.length, s.input - covered));
    pieces.push_back(TokenSegment{g.id, g.offset, len});
    covered += len;
  }
  if (covered < s.input)
    pieces.push_back(TokenSegment{promptTailSegmentId(s.id), 0, static_cast<std::int32_t>(s.input - covered)});
  pieces.push_back(TokenSegment{outputSegmentId(s.id), 0, std::numeric_limits<std::int32_t>::max()});
  // Walk to the first token of block `have`.
  std::size_t p = 0;
  std::int64_t inPiece = static_cast<std::int64_t>(have) * blockSize;  // tokens to skip
  while (inPiece >= pieces[p].length) {
    inPiece -= pieces[p].length;
    ++p;
  }
  std::uint64_t h = have > 0 ? s.chain.back() : fnv1a64("servelab-prefix-root");
  s.chain.reserve(static_cast<std::size_t>(blocks));
  for (std::int32_t k = have; k < blocks; ++k) {
    std::int32_t left = blockSize;
    // Adjacent pieces that continue one another (same id, contiguous
    // offsets) hash as one, so the same tokens give the same key however
    // a workload split them.
    std::uint64_t curId = 0;
    std::int64_t curOff = -1, curLen = 0;
    std::uint64_t bh = h;
    auto flush = [&] {
      if (curLen > 0)
        bh = hashCombine(hashCombine(hashCombine(bh, curId), static_cast<std::uint64_t>(curOff)),
                         static_cast<std::uint64_t>(curLen));
    };
    while (left > 0) {
      const TokenSegment& g = pieces[p];
      const std::int64_t take = std::min<std::int64_t>(left, g.length - inPiece);
      const std::int64_t off = g.offset + inPiece;
      if (curLen > 0 && g.id == curId && off == curOff + curLen) {
        curLen += take;
      } else {
        flush();
        curId = g.id;
        curOff = off;
        curLen = take;
      }
      left -= static_cast<std::int32_t>(take);
      inPiece += take;
      if (inPiece >= g.length) {
        inPiece = 0;
        ++p;
      }
    }
    flush();
    h = bh == 0 ? 1 : bh;
    s.chain.push_back(h);
  }
}

PrefixMatch matchPrefix(const PrefixCache& c, PrefixState& s, std::int32_t tokens, std::int32_t blockSize) {
  PrefixMatch m;
  const std::int32_t most = tokens > 0 ? (tokens - 1) / blockSize : 0;
  if (most <= 0) return m;
  extendChain(s, most, blockSize);
  for (std::int32_t k = 0; k < most; ++k) {
    const PrefixCache::Entry* e = c.find(s.chain[static_cast<std::size_t>(k)]);
    if (!e) break;
    ++m.blocks;
    if (e->tier == PrefixCache::Tier::Cpu) ++m.cpuBlocks;
    else if (e->refs > 0) ++m.liveShared;
  }
  return m;
}

}  // namespace sl
