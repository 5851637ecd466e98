#include "engine/instance.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <unordered_map>

#include "engine/simulator.h"

namespace sl {

const char* roleName(InstanceRole r) {
  switch (r) {
    case InstanceRole::Both: return "both";
    case InstanceRole::Prefill: return "prefill";
    case InstanceRole::Decode: return "decode";
  }
  return "?";
}

Instance::Instance(int id, const InstanceConfig& cfg, std::unique_ptr<LocalPolicy> policy)
    : id_(id), cfg_(cfg), policy_(std::move(policy)) {
  if (cfg.blockSize > 0 && (cfg.blockSize & (cfg.blockSize - 1)) == 0) blockShift_ = std::countr_zero(
      static_cast<unsigned>(cfg.blockSize));
  batch_.reserve(static_cast<std::size_t>(cfg.maxNumSeqs));
  if (cfg.prefixCaching) cache_ = std::make_unique<PrefixCache>(cfg.prefixCpuBlocks);
}

double Instance::recentDecodeIntervalS(SimTime now) const {
  while (!decodeIters_.empty() && decodeIters_.front().first <= now - counterWindow_) {
    decodeDurSum_ -= decodeIters_.front().second;
    decodeIters_.pop_front();
  }
  if (decodeIters_.empty()) return 0;
  return nsToSeconds(decodeDurSum_) / static_cast<double>(decodeIters_.size());
}

SimTime IterationBuilder::now() const { return sim_.now(); }

std::int64_t IterationBuilder::blocksToRun(const Request& r) const {
  if (r.prefillDone()) return inst_.blocksFor(static_cast<std::int64_t>(r.kvTokens) + inst_.decodeAheadFor(r));
  return inst_.blocksFor(r.prefillTarget);
}

std::int64_t IterationBuilder::extraBlocksToRun(const Request& r) const {
  const std::int64_t extra = blocksToRun(r) - r.blocksGpu;
  const std::int64_t wm = r.state == ReqState::Waiting ? inst_.cfg_.watermarkBlocks : 0;
  return std::max<std::int64_t>(0, extra) + wm;
}

bool IterationBuilder::allocate(Request& r, std::int64_t blocks) {
  if (blocks <= 0) return true;
  if (blocks > inst_.freeGpuBlocks()) return false;
  inst_.gpuUsed_ += blocks;
  r.blocksGpu += static_cast<std::int32_t>(blocks);
  sim_.prefixReclaim(inst_);
  return true;
}

std::int64_t IterationBuilder::pinnedBlocks(const Request& r) const {
  return inst_.cache_ ? sim_.prefixState(r).shared : 0;
}

void IterationBuilder::addEntry(Request& r, std::int32_t tokens, bool prefill) {
  r.batchIndex = static_cast<std::int32_t>(inst_.batch_.size());
  inst_.batch_.push_back(BatchEntry{&r, tokens, prefill});
  tokenBudget_ -= tokens;
  const SimTime t = sim_.now();
  if (!r.scheduled) {  // line 0 only: firstScheduled lives with the cold timeline
    r.scheduled = true;
    r.firstScheduled = t;
    r.queueing = t - r.arrival;
    sim_.notify(RequestEvent::FirstScheduled, r, inst_.id_);
  }
  if (r.blockingStart >= 0) sim_.closeBlocking(r, t);
}

void IterationBuilder::runLane() {
  DecodeLane& lane = *inst_.lane_;
  const std::int64_t demand = lane.blockDemand();
  assert(demand <= inst_.freeGpuBlocks());
  inst_.gpuUsed_ += demand;
  sim_.prefixReclaim(inst_);
  const auto n = static_cast<std::int32_t>(lane.size());
  tokenBudget_ -= n;
  inst_.laneSeqs_ = n;
  lane.beginStep();
}

bool IterationBuilder::growForNextToken(Request& r) { return allocate(r, blocksToRun(r) - r.blocksGpu); }

bool IterationBuilder::addPrefillChunk(Request& r) {
  if (r.state != ReqState::Running || r.prefillDone() || r.batchIndex >= 0) return false;
  if (seqSlotsLeft() <= 0 || tokenBudget_ < 1) return false;
  const std::int32_t remaining = r.prefillTarget - r.prefilled;
  std::int32_t chunk = remaining;
  if (inst_.cfg_.chunkedPrefill) {
    chunk = std::min(remaining, tokenBudget_);
  } else if (remaining > tokenBudget_ && !empty()) {
    return false;  // whole prompts only; an oversized prompt runs alone
  }
  if (!allocate(r, blocksToRun(r) - r.blocksGpu)) return false;
  addEntry(r, chunk, true);
  return true;
}

bool IterationBuilder::admit(Request& r) {
  if (r.state != ReqState::Waiting || r.batchIndex >= 0) return false;
  if (seqSlotsLeft() <= 0 || tokenBudget_ < 1) return false;
  const std::int64_t need = inst_.blocksFor(r.prefillTarget);
  // Prefix caching: the cached leading blocks are taken, not computed; those
  // other requests hold already take no new memory.
  PrefixMatch hit{};
  if (inst_.cache_) hit = matchPrefix(*inst_.cache_, sim_.prefixState(r), r.prefillTarget, inst_.cfg_.blockSize);
  if (inst_.freeGpuBlocks() - (need - hit.liveShared) < inst_.cfg_.watermarkBlocks) return false;
  if (!inst_.cfg_.chunkedPrefill &&
      r.prefillTarget - r.prefilled - hit.blocks * inst_.cfg_.blockSize > tokenBudget_ && !empty())
    return false;
  if (inst_.cache_) sim_.prefixAdmit(inst_, r, hit);
  allocate(r, need - r.blocksGpu);
  const bool wasPreempted = r.everPreempted;
  sim_.setState(r, ReqState::Running);
  if (wasPreempted) sim_.notify(RequestEvent::Resumed, r, inst_.id_);
  const bool ok = addPrefillChunk(r);
  assert(ok);
  (void)ok;
  return true;
}

bool IterationBuilder::resume(Request& r) {
  if (r.state != ReqState::Swapped || r.batchIndex >= 0) return false;
  if (seqSlotsLeft() <= 0 || tokenBudget_ < (r.prefillDone() ? inst_.decodeAheadFor(r) : 1)) return false;
  const std::int64_t need = blocksToRun(r);
  // As vLLM 0.6.1's can_swap_in, a swap-in leaves the watermark free
  // (docs/engine.md) -- except on an instance that holds nothing else, where
  // no other sequence can need the headroom (without it a request that grew
  // to nearly the whole cache could never come back).
  const bool alone = inst_.gpuUsed_ == 0 && inst_.gpuReserved_ == 0;
  if (need + (alone ? 0 : inst_.cfg_.watermarkBlocks) > inst_.freeGpuBlocks()) return false;
  inst_.swapBytes_ += r.blocksCpu * inst_.cfg_.kvBytesPerBlock;
  inst_.cpuUsed_ -= r.blocksCpu;
  r.blocksCpu = 0;
  allocate(r, need);
  sim_.setState(r, ReqState::Running);
  sim_.notify(RequestEvent::Resumed, r, inst_.id_);
  const bool ok = r.prefillDone() ? addDecode(r) : addPrefillChunk(r);
  assert(ok);
  (void)ok;
  return true;
}

bool IterationBuilder::runOther(Request& r) {
  switch (r.state) {
    case ReqState::Running: return r.prefillDone() ? addDecode(r) : addPrefillChunk(r);
    case ReqState::Swapped: return resume(r);
    case ReqState::Waiting: return admit(r);
    default: return false;
  }
}

void IterationBuilder::preempt(Request& r) {
  if (r.state != ReqState::Running) return;
  if (r.batchIndex >= 0) {  // take it back out of this iteration's batch
    auto& batch = inst_.batch_;
    const auto idx = static_cast<std::size_t>(r.batchIndex);
    tokenBudget_ += batch[idx].newTokens;
    batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(idx));
    for (std::size_t i = idx; i < batch.size(); ++i) batch[i].r->batchIndex = static_cast<std::int32_t>(i);
    r.batchIndex = -1;
  }
  evict(sim_, inst_, r);
}

void IterationBuilder::evict(Simulator& sim, Instance& inst, Request& r) {
  assert(r.state == ReqState::Running && r.batchIndex < 0);
  sim.cancelLive(r);
  const std::int64_t blocks = r.blocksGpu;
  sim.releaseGpu(inst, r);
  if (inst.cfg_.swapPreemption && blocks <= inst.freeCpuBlocks()) {
    inst.cpuUsed_ += blocks;
    r.blocksCpu = static_cast<std::int32_t>(blocks);
    inst.swapBytes_ += blocks * inst.cfg_.kvBytesPerBlock;
    sim.setState(r, ReqState::Swapped);
  } else {  // recompute: drop the KV; prefill re-runs over prompt + generated tokens
    inst.queuedPrefill_ -= r.prefillTarget - r.prefilled;
    r.kvTokens = 0;
    r.prefilled = 0;
    r.prefillTarget = r.input + r.generated;
    inst.queuedPrefill_ += r.prefillTarget;
    r.everPreempted = true;
    sim.setState(r, ReqState::Waiting);
  }
  ++r.preemptions;
  ++sim.preemptions_;
  ++inst.preemptionsThisIter_;
  sim.notify(RequestEvent::Preempted, r, inst.id_);
}

PrefixPlan IterationBuilder::planPrefix(std::span<Request* const> order) const {
  // Blocks the prefix may use: everything not held by requests outside `order`.
  std::int64_t heldByOrder = 0;
  std::size_t runningInOrder = 0;
  for (const Request* r : order)
    if (r->state == ReqState::Running) {
      heldByOrder += r->blocksGpu - pinnedBlocks(*r);  // private blocks
      ++runningInOrder;
    }
  // Prefix caching: a cached block counts once, and is freed by preempting
  // requests of `order` only if they hold every reference to it.
  std::unordered_map<std::uint64_t, std::int32_t> orderOnly;  // key -> 1 while not yet in `cum`
  if (inst_.cache_) {
    for (const Request* r : order)
      if (r->state == ReqState::Running)
        for (const std::uint64_t key : sim_.prefixState(*r).table)
          if (key != 0) ++orderOnly[key];
    for (auto it = orderOnly.begin(); it != orderOnly.end();) {
      if (it->second == inst_.cache_->find(it->first)->refs) {
        it->second = 1;
        ++heldByOrder;
        ++it;
      } else {
        it = orderOnly.erase(it);
      }
    }
  }
  const std::int64_t avail = inst_.cfg_.gpuBlocks - inst_.gpuReserved_ - (inst_.gpuUsed_ - heldByOrder);
  // Admissions (and swap-ins, as vLLM's can_swap_in) happen while every
  // other prefix member holds its blocks, so once the prefix contains one
  // the whole prefix must leave the watermark free (not just the blocks
  // counted before it).
  std::int64_t cum = 0;
  bool admits = false, anyNew = false;
  std::size_t n = 0, runningInPrefix = 0;
  const std::size_t limit = std::min(order.size(), static_cast<std::size_t>(std::max(0, inst_.cfg_.maxNumSeqs)));
  const std::int64_t bs = inst_.cfg_.blockSize;
  for (; n < limit; ++n) {
    const Request& r = *order[n];
    const ReqState st = r.state;
    // max(blocksToRun(r), blocksGpu): a running decode whose next token fits
    // the blocks it holds needs just those (no division; issue 16).
    const std::int64_t need =
        st == ReqState::Running && r.prefillDone() &&
                static_cast<std::int64_t>(r.kvTokens) + inst_.decodeAheadFor(r) <= r.blocksGpu * bs
            ? r.blocksGpu
            : std::max<std::int64_t>(blocksToRun(r), r.blocksGpu);
    bool admitsNow = admits;
    if (!admitsNow) {
      // A swap-in into an otherwise empty instance needs no headroom (as in resume()).
      if (st == ReqState::Waiting) admitsNow = true;
      else if (st == ReqState::Swapped) admitsNow = !(n == 0 && avail == inst_.cfg_.gpuBlocks);
    }
    // A running request's cache blocks count once: those other requests hold
    // are outside `avail`; those only `order` holds count at their first holder.
    std::int64_t own = need;
    if (st == ReqState::Running && inst_.cache_) {
      own -= pinnedBlocks(r);
      for (const std::uint64_t key : sim_.prefixState(r).table)
        if (key != 0)
          if (const auto it = orderOnly.find(key); it != orderOnly.end() && it->second == 1) {
            ++own;  // first prefix member holding it: its block counts here
            it->second = 2;
          }
    }
    if (cum + own + (admitsNow ? inst_.cfg_.watermarkBlocks : 0) > avail) break;
    cum += own;
    admits = admitsNow;
    runningInPrefix += st == ReqState::Running;
    anyNew |= st == ReqState::Waiting;
  }
  return PrefixPlan{n, runningInPrefix, runningInOrder, anyNew};
}

void IterationBuilder::preemptPastPrefix(std::span<Request* const> order, const PrefixPlan& plan) {
  // Tail first; when the prefix holds every running request (the common
  // case) there is none to look for in a long tail of waiting ones (issue 16).
  if (plan.runningInPrefix == plan.runningInOrder) return;
  for (std::size_t i = order.size(); i-- > plan.length;) {
    Request& r = *order[i];
    if (r.state != ReqState::Running) continue;
    if (r.laneIndex >= 0) inst_.lane_->leave(r);  // a lane member leaves the lane first
    preempt(r);
  }
}

std::size_t IterationBuilder::runPlanned(std::span<Request* const> order, const PrefixPlan& plan) {
  const std::size_t n = plan.length;
  preemptPastPrefix(order, plan);
  const auto prefix = order.first(n);
  if (!inst_.cfg_.chunkedPrefill) {
    if (plan.prompts) {  // vLLM V0: an iteration that admits prompts is prefill-only
      for (Request* r : prefix)
        if (r->state == ReqState::Waiting && !admit(*r)) break;
    } else {
      for (Request* r : prefix) run(*r);
    }
    return n;
  }
  for (Request* r : prefix)  // decodes first ...
    if (r->prefillDone() && r->state != ReqState::Waiting) run(*r);
  for (Request* r : prefix) {  // ... then prefill chunks fill the token budget
    if (tokenBudget_ <= 0) break;
    if (r->batchIndex < 0 && (!r->prefillDone() || r->state == ReqState::Waiting)) run(*r);
  }
  return n;
}

}  // namespace sl
