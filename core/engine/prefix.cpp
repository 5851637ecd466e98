// Simulator: prefix caching (cluster.prefix_caching; docs/engine.md
// "Prefix caching") -- a request's token identity, its hits at admission,
// the blocks it registers and what it gives back to the cache.
#include <algorithm>
#include <cassert>

#include "engine/simulator.h"

namespace sl {

void Simulator::prefixOnArrival(Request& r, const RequestSpec* spec) {
  if (!prefixCaching()) return;
  const auto slot = static_cast<std::size_t>(r.slot);
  if (prefix_.size() <= slot) prefix_.resize(std::max(slot + 1, prefix_.size() * 2));
  PrefixState& s = prefix_[slot];
  s = PrefixState{};
  if (spec) {
    s.segments = spec->segments;
    s.session = spec->session;
  }
  s.id = r.id;
  s.input = r.input;
  s.affinityKey = affinityKeyOnArrival(s, r.id);
}

std::uint64_t Simulator::affinityKeyOnArrival(const PrefixState& s, std::int64_t id) {
  if (s.session >= 0) return hashCombine(1, static_cast<std::uint64_t>(s.session));
  if (s.segments.empty()) return hashCombine(3, static_cast<std::uint64_t>(id));
  // Shorten the prefix every session-less request has shared so far to
  // this one's, then key on it plus this request's next segment.
  const std::size_t n = s.segments.size();
  if (!commonLeadSet_) {
    commonLeadSet_ = true;
    commonLead_.resize(n);
    for (std::size_t k = 0; k < n; ++k) commonLead_[k] = s.segments[k].id;
  } else {
    std::size_t k = 0;
    while (k < commonLead_.size() && k < n && commonLead_[k] == s.segments[k].id) ++k;
    commonLead_.resize(k);
  }
  std::uint64_t h = 2;
  for (std::size_t k = 0; k < std::min(n, commonLead_.size() + 1); ++k) h = hashCombine(h, s.segments[k].id);
  return h;
}

std::int32_t Simulator::cachedPrefixBlocks(const Request& r, int i) const {
  const Instance& in = instance(i);
  if (!in.cache_ || r.slot < 0) return 0;
  return matchPrefix(*in.cache_, prefixState(r), r.prefillTarget, in.cfg_.blockSize).blocks;
}

std::int32_t Simulator::cachedPromptTokens(const Request& r) const {
  if (!prefixCaching() || r.slot < 0) return -1;
  return prefixState(r).cachedTokens;
}

std::uint64_t Simulator::sessionKey(const Request& r) const {
  if (prefixCaching() && r.slot >= 0) return prefixState(r).affinityKey;
  return hashCombine(3, static_cast<std::uint64_t>(r.id));
}

std::vector<std::pair<std::int64_t, std::int32_t>> Simulator::cachedTokensById() const {
  std::vector<std::pair<std::int64_t, std::int32_t>> out = cachedDone_;
  if (prefixCaching())
    forEachActive([&](const Request& r) {
      if (!r.synthetic && r.arrival <= now_ && r.instance >= 0) out.emplace_back(r.id, prefixState(r).cachedTokens);
    });
  std::sort(out.begin(), out.end());
  return out;
}

PrefixCacheStats Simulator::prefixCacheStats() const {
  PrefixCacheStats t;
  for (const auto& in : instances_) {
    if (!in->cache_) continue;
    const PrefixCacheStats& s = in->cache_->stats();
    t.promptTokens += s.promptTokens;
    t.cachedTokens += s.cachedTokens;
    t.hits += s.hits;
    t.recomputeCachedTokens += s.recomputeCachedTokens;
    t.evictions += s.evictions;
    t.offloaded += s.offloaded;
    t.offloadHits += s.offloadHits;
    t.cpuEvictions += s.cpuEvictions;
  }
  return t;
}

void Simulator::prefixAdmit(Instance& in, Request& r, const PrefixMatch& m) {
  PrefixState& s = prefixState(r);
  PrefixCacheStats& st = in.cache_->stats();
  const std::int32_t tokens = m.blocks * in.cfg_.blockSize;
  if (!s.admittedOnce) {
    s.admittedOnce = true;
    s.cachedTokens = tokens;
    st.promptTokens += r.prefillTarget;
    st.cachedTokens += tokens;
    if (m.blocks > 0) ++st.hits;
  } else {
    st.recomputeCachedTokens += tokens;
  }
  if (m.blocks == 0) return;
  assert(r.blocksGpu == 0 && r.prefilled == 0 && r.kvTokens == 0 && s.table.empty());
  s.table.assign(s.chain.begin(), s.chain.begin() + m.blocks);
  s.shared = m.blocks;
  for (const std::uint64_t key : s.table) {
    if (in.cache_->find(key)->tier == PrefixCache::Tier::Cpu) {
      in.cache_->load(key, in.gpuUsed_);
      in.swapBytes_ += in.cfg_.kvBytesPerBlock;  // loaded over the host link in this iteration
    } else {
      in.cache_->acquire(key, in.gpuUsed_);
    }
  }
  r.blocksGpu = m.blocks;
  // A hit skips these tokens' prefill compute; the chunk that follows still
  // attends over them (its context starts at `prefilled`).
  r.prefilled = tokens;
  r.kvTokens = tokens;
  in.queuedPrefill_ -= tokens;
  prefixReclaim(in);
}

void Simulator::prefixRegister(Instance& in, Request& r) {
  PrefixState& s = prefixState(r);
  const std::int32_t bs = in.cfg_.blockSize;
  const std::int32_t full = std::min(r.kvTokens / bs, r.blocksGpu);
  if (static_cast<std::int32_t>(s.table.size()) >= full) return;
  extendChain(s, full, bs);
  for (auto k = static_cast<std::int32_t>(s.table.size()); k < full; ++k) {
    const std::uint64_t key = s.chain[static_cast<std::size_t>(k)];
    if (in.cache_->registerBlock(key)) {  // private -> cached with one reference: still one used block
      s.table.push_back(key);
      ++s.shared;
    } else {
      s.table.push_back(0);  // computed here too: a private duplicate
    }
  }
}

void Simulator::releaseGpu(Instance& in, Request& r) {
  if (!in.cache_) {
    in.gpuUsed_ -= r.blocksGpu;
    r.blocksGpu = 0;
    return;
  }
  PrefixState& s = prefixState(r);
  if (r.blocksGpu > 0) prefixRegister(in, r);
  in.gpuUsed_ -= r.blocksGpu - s.shared;
  // Tail blocks first, so the LRU evicts a prompt's end before its start (vLLM).
  for (auto k = s.table.size(); k-- > 0;)
    if (s.table[k] != 0) in.cache_->release(s.table[k], in.gpuUsed_);
  s.table.clear();
  s.shared = 0;
  r.blocksGpu = 0;
}

}  // namespace sl
