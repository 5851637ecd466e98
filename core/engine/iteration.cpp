// Simulator: the continuous-batching loop of one instance -- starting an
// iteration (the local policy builds the batch, the cost model times it),
// producing its tokens at its end, and the end-of-iteration decisions
// (phase boundaries, hand-offs, length thresholds, deferred moves).
#include "engine/simulator.h"

#include "engine/record.h"
#include "metrics/summary.h"

#include <algorithm>
#include <iterator>
#include <cassert>
#include <cmath>

namespace sl {

namespace {
constexpr std::size_t kPrefetchAhead = 12;  // requests ahead in a batch loop
}  // namespace

// ---------------------------------------------------------------- iterations

void Simulator::startIteration(Instance& in) {
  if (in.busy_ || in.policy_->size() == 0) return;
  in.batch_.clear();
  in.laneSeqs_ = 0;
  in.swapBytes_ = 0;
  in.preemptionsThisIter_ = 0;
  // Speculative decoding: the step's draft length, from the previous step's
  // batch (the engines decide before they build the batch; dynamic k).
  if (cfg_.speculative.on()) [[unlikely]]
    in.decodeAhead_ = 1 + cfg_.speculative.stepK(in.shape_.decode_seqs + in.shape_.prefill_seqs);
  IterationBuilder b(*this, in);
  b.tokenBudget_ = in.cfg_.maxBatchedTokens;
  in.policy_->schedule(b);
  if (in.batch_.empty() && in.laneSeqs_ == 0) {
    // Nothing can run (memory held by transfers, or only requests that cannot
    // fit). A lone request that can never grow further is aborted so the
    // instance cannot deadlock.
    if (in.gpuUsed_ > 0 && in.gpuReserved_ == 0 && in.batch_.empty()) {
      Request* stuck = nullptr;
      bool othersHoldGpu = false;
      forEachActive([&](const Request& q) {
        if (q.instance != in.id_ || q.state == ReqState::Migrating) return;
        if (q.state == ReqState::Running && q.blocksGpu == in.gpuUsed_) stuck = const_cast<Request*>(&q);
        else if (q.blocksGpu > 0) othersHoldGpu = true;
      });
      if (stuck && !othersHoldGpu && b.blocksToRun(*stuck) > in.cfg_.gpuBlocks) abortRequest(in, *stuck);
    } else if (in.gpuUsed_ == 0 && in.gpuReserved_ == 0) {
      // Memory is empty and still nothing runs: a request that cannot fit even
      // an empty instance (grown past capacity, then swapped out or dropped
      // for recompute) would block it forever. Abort it and carry on.
      std::vector<Request*> never;  // rare path
      forEachActive([&](const Request& q) {
        if (q.instance == in.id_ && (q.state == ReqState::Waiting || q.state == ReqState::Swapped) &&
            q.arrival <= now_ && b.extraBlocksToRun(q) > in.cfg_.gpuBlocks)
          never.push_back(const_cast<Request*>(&q));
      });
      for (Request* q : never) abortRequest(in, *q);
      if (!never.empty()) wake(in.id_);
    }
    return;
  }
  BatchShape shape{};
  // The decode context sums in integers: every partial sum is an integer
  // far below 2^53, so the doubles summed one by one were exact and equal
  // these (bit for bit), without a conversion per request (issue 16).
  std::int64_t running = 0, ctxSum = 0, ctxSumSq = 0, verify = 0;
  int decodes = 0;
  for (const BatchEntry& e : in.batch_) {
    const Request& r = *e.r;
    running += static_cast<std::int64_t>(r.kvTokens) + e.newTokens;
    if (e.prefill) [[unlikely]] {
      ++shape.prefill_seqs;
      shape.prefill_tokens += e.newTokens;
      shape.prefill_attn += static_cast<double>(e.newTokens) * (r.prefilled + e.newTokens / 2.0);
    } else {
      const std::int64_t L = static_cast<std::int64_t>(r.kvTokens) + 1;
      verify += e.newTokens - 1;  // a speculative decode's drafts to verify
      ++decodes;
      ctxSum += L;
      ctxSumSq += L * L;
    }
  }
  if (in.laneSeqs_ > 0) {  // the lane's step: its members' decode tokens, kept as sums
    const DecodeLane& lane = *in.lane_;
    running += lane.ctxSum();
    decodes += in.laneSeqs_;
    ctxSum += lane.ctxSum();
    ctxSumSq += lane.ctxSumSq();
  }
  in.runningTokens_ = running;
  shape.decode_seqs = decodes;
  shape.decode_ctx_sum = static_cast<double>(ctxSum);
  shape.decode_ctx_sumsq = static_cast<double>(ctxSumSq);
  double secs;
  if (verify > 0) [[unlikely]] {
    // Speculative step: the draft side drafts k tokens per decode sequence,
    // then the target verifies k + 1 tokens per sequence in one pass (a
    // sequence near the KV capacity drafts fewer: the entry's tokens - 1).
    shape.verify_tokens = static_cast<double>(verify);
    secs = in.cost_->iterationSeconds(shape) +
           in.specCost_->draftSeconds(decodes, static_cast<double>(ctxSum), in.decodeAhead_ - 1);
  } else {
    secs = in.cost_->iterationSeconds(shape);
  }
  if (in.swapBytes_ > 0) secs += in.swapBytes_ / in.cfg_.hostLinkBytesPerSec;
  const SimTime dur = std::max<SimTime>(1, secondsToNs(secs));
  in.shape_ = shape;
  in.busy_ = true;
  in.iterStart_ = now_;
  in.iterEnd_ = now_ + dur;
  ++in.iterations_;
  events_q_.push(in.iterEnd_, EventKind::IterationEnd, in.id_);
}

void Simulator::emitToken(Instance& in, Request& r, std::vector<Request*>& boundary) {
  ++r.generated;
  ++in.assignedTokens_;
  if (r.synthetic) {
    ++synthetic_.outputTokens;  // reported apart: not the user's throughput
  } else {
    ++in.tokensProduced_;
    ++probeTokens_;
  }
  const std::int32_t k = r.generated;
  if (k == 1) {
    r.gFirst = now_;
    if (!r.synthetic) inputPrefilled_ += r.input;
  }
  if (frontOn_ && !r.synthetic) [[unlikely]] {  // the client sees this token later (output path)
    FrontTimes& ft = frontTimes(r);
    const auto d = static_cast<std::int32_t>(iterOutDelay_);
    if (k == 1) ft.outFirst = d;
    if (k == r.reasoning) ft.outReasoningEnd = d;
    if (k == r.reasoning + 1) ft.outFirstVisible = d;
    ft.outLast = d;
  }
  if (k <= r.reasoning) {
    if (k == r.reasoning) {
      r.gReasoningEnd = now_;
      openBlocking(r);
      r.pacer = TokenPacer(now_, secondsToNs(cfg_.slo.ttfat_s), secondsToNs(cfg_.slo.qoe_tpot_s), r.answer);
      boundary.push_back(&r);
    }
  } else {
    if (k == r.reasoning + 1) {
      r.gFirstVisible = now_;
      if (r.reasoning == 0) r.pacer = TokenPacer(now_, secondsToNs(cfg_.slo.ttfat_s), secondsToNs(cfg_.slo.qoe_tpot_s), r.answer);
    }
    r.pacer.onToken(now_);
  }
  r.gLast = now_;
  ++r.quantumUsed;
  if (r.lengthWatch >= 0 && static_cast<std::int64_t>(r.input) + r.generated >= r.lengthWatch) {
    r.lengthWatch = -1;
    lengthHits_.push_back(&r);
  }
}

void Simulator::endIteration(Instance& in) {
  in.busy_ = false;
  if (frontOn_) [[unlikely]]
    iterOutDelay_ = std::min<SimTime>(cfg_.frontend.outputNs(in.batchSequences()), INT32_MAX);
  std::vector<Request*>& boundary = scratchBoundary_;
  boundary.clear();
  std::vector<Request*>& prefillDone = pendingMoves_;
  prefillDone.clear();
  lengthHits_.clear();
  std::vector<Request*>& finishers = scratchFinished_;  // in batch order
  finishers.clear();
  // Decode entries come before prefill entries in a batch built with a
  // lane (FcfsLocal): the lane's finishers merge with the decode ones.
  std::size_t decodeFinishers = 0, decodeHits = 0;
  bool decoded = false;
  std::int64_t tokens = 0, syntheticTokens = 0;  // computed in this iteration (synthetic cost share)
  // A decode token that is none of a stream's landmarks (first token,
  // reasoning end, first answer token, a length threshold), of a user
  // request, is emitToken's common case: done inline, the instance counters
  // summed once after the loop (nothing reads them in between). The local
  // policy's token hook runs after the loop, in batch order, for every
  // request that produced a token (issue 16: no hook call inside the loop).
  const bool hook = in.policy_->wantsTokens();
  std::vector<Request*>& tokened = scratchTokened_;
  tokened.clear();
  std::int64_t plain = 0;
  const BatchEntry* const batch = in.batch_.data();
  const std::size_t batchSize = in.batch_.size();
  // Other instances' iterations ran since this batch was built: its
  // requests' two hot lines are fetched ahead, the first kPrefetchAhead at
  // once (their misses overlap), then one request ahead of that window (B2
  // and B5 are bound by these misses, not by instructions; issue 16).
  const auto prefetch = [&](std::size_t i) {
    const char* p = reinterpret_cast<const char*>(batch[i].r);
    __builtin_prefetch(p, 1);
    __builtin_prefetch(p + 64, 1);
  };
  for (std::size_t i = 0; i < std::min(batchSize, kPrefetchAhead); ++i) prefetch(i);
  for (std::size_t i = 0; i < batchSize; ++i) {
    const BatchEntry& e = batch[i];
    if (i + kPrefetchAhead < batchSize) prefetch(i + kPrefetchAhead);
    Request& r = *e.r;
    r.batchIndex = -1;
    tokens += e.newTokens;
    if (r.synthetic) syntheticTokens += e.newTokens;
    if (e.prefill) {
      r.prefilled += e.newTokens;
      in.queuedPrefill_ -= e.newTokens;
      r.kvTokens += e.newTokens;
      if (in.cache_) [[unlikely]] prefixRegister(in, r);  // computed full blocks become cache
      if (r.synthetic) synthetic_.promptTokens += e.newTokens;
      if (!r.prefillDone()) continue;
      if (r.finished()) {  // a synthetic request without output: done at its prefill's end
        finishers.push_back(&r);
        continue;
      }
      emitToken(in, r, boundary);
      if (hook) tokened.push_back(&r);
      if (r.finished()) finishers.push_back(&r);
      else if (in.role_ == InstanceRole::Prefill) prefillDone.push_back(&r);
    } else if (e.newTokens > 1) [[unlikely]] {
      decoded = true;
      speculativeDecode(in, r, e.newTokens - 1, boundary);
      decodeHits = lengthHits_.size();
      if (hook) tokened.push_back(&r);
      if (r.finished()) {
        finishers.push_back(&r);
        decodeFinishers = finishers.size();
      }
    } else {
      r.kvTokens += 1;
      decoded = true;
      const std::int32_t k = r.generated + 1;
      if (k > 1 && k != r.reasoning && k != r.reasoning + 1 && r.lengthWatch < 0 && !r.synthetic) [[likely]] {
        r.generated = k;
        if (k > r.reasoning) r.pacer.onToken(now_);
        r.gLast = now_;
        ++r.quantumUsed;
        ++plain;
      } else {
        emitToken(in, r, boundary);
        decodeHits = lengthHits_.size();
      }
      if (hook) tokened.push_back(&r);
      if (r.finished()) {
        finishers.push_back(&r);
        decodeFinishers = finishers.size();
      }
    }
  }
  if (in.laneSeqs_ > 0) {
    // The lane's step: every member produced a plain token at now_.
    std::vector<Request*>& laneDone = scratchLaneDone_;
    std::vector<Request*>& laneHits = scratchLaneHits_;
    std::vector<Request*>& laneLeft = scratchLaneLeft_;
    laneDone.clear();
    laneHits.clear();
    laneLeft.clear();
    const std::int64_t n = in.lane_->endStep(now_, laneDone, laneHits, laneLeft);
    tokens += n;
    plain += n;
    decoded = true;
    // Members released during the step (a move started) are the policy's
    // again, before anything below removes or reads its queues.
    if (!laneLeft.empty()) [[unlikely]]
      in.policy_->laneReturned(laneLeft);
    // Batch order: the decodes in arrival order (then id), as the local
    // policy's running list, then the prefill entries.
    const auto mergeDecodes = [&](std::vector<Request*>& list, std::size_t decodePart, const std::vector<Request*>& lane) {
      std::vector<Request*>& merged = scratchMerged_;
      merged.clear();
      std::merge(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(decodePart), lane.begin(), lane.end(),
                 std::back_inserter(merged), arrivalOrder);
      merged.insert(merged.end(), list.begin() + static_cast<std::ptrdiff_t>(decodePart), list.end());
      list.swap(merged);
    };
    if (!laneDone.empty()) mergeDecodes(finishers, decodeFinishers, laneDone);
    if (!laneHits.empty()) [[unlikely]]
      mergeDecodes(lengthHits_, decodeHits, laneHits);
  }
  in.assignedTokens_ += plain;
  in.tokensProduced_ += plain;
  probeTokens_ += plain;
  if (!tokened.empty()) in.policy_->onTokens(tokened);
  if (syntheticTokens > 0)
    synthetic_.gpuSeconds += nsToSeconds(in.iterEnd_ - in.iterStart_) * in.tp_ * static_cast<double>(syntheticTokens) /
                             static_cast<double>(tokens);
  if (decoded) {
    in.decodeIters_.emplace_back(now_, in.iterEnd_ - in.iterStart_);
    in.decodeDurSum_ += in.iterEnd_ - in.iterStart_;
    // What left the window is dropped by the next reader, or here once the
    // list grows long (bounded memory, O(1) amortized, no call per iteration).
    if (in.decodeIters_.size() > 512) (void)in.recentDecodeIntervalS(now_);
  }
  // Observers see the whole iteration (batchSequences() counts the lane's
  // step); the step is over once they have.
  for (SimObserver* o : observers_) o->onIteration(in, in.iterStart_, in.iterEnd_);
  in.laneSeqs_ = 0;
  // Completions first (they free memory), then phase-boundary decisions.
  for (Request* r : finishers) finish(in, *r);
  in.batch_.clear();
  for (Request* r : boundary) {
    if (r->state == ReqState::Finished || r->slot < 0) continue;
    notify(RequestEvent::ReasoningEnd, *r, in.id_);
    global_->onReasoningEnd(*r);
  }
  for (Request* r : prefillDone) {
    if (r->state != ReqState::Running) continue;
    cancelLive(*r);  // a live copy started at its reasoning end: the hand-off moves it instead
    removeLocal(in, *r);
    setState(*r, ReqState::HandoffWait);
    notify(RequestEvent::HandoffStart, *r, in.id_);
    global_->onPrefillDone(*r);
  }
  // Length thresholds (watchLength) reached in this iteration, in batch order.
  for (std::size_t k = 0; k < lengthHits_.size(); ++k) {
    Request* r = lengthHits_[k];
    if (r->state == ReqState::Finished || r->slot < 0) continue;
    global_->onLengthReached(*r);
  }
  in.policy_->onIterationEnd();
  global_->onIterationEnd(in.id_);
  // Stop-and-copy moves requested while the request was in this iteration:
  // this instance's deferred ones, in transfer-id order (as a scan of every
  // transfer would visit them), without scanning the others.
  auto& pend = pendingStops_[static_cast<std::size_t>(in.id_)];
  if (!pend.empty()) {
    std::vector<std::int64_t>& ids = scratchIds_;
    ids.assign(pend.begin(), pend.end());
    pend.clear();
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (const std::int64_t id : ids) {
      const Migration& m = migrations_[static_cast<std::size_t>(id)];
      if (!m.active || !m.r || m.src != in.id_ || !m.r->pendingMigration) continue;  // done or cancelled
      if (m.flow < 0 && (!m.live || m.finalCopy)) {
        m.r->pendingMigration = false;
        beginStopAndCopy(id);
      } else {
        pend.push_back(id);  // not due yet: looked at again at a later iteration end
      }
    }
  }
  tryStartIncoming(in.id_);
  startIteration(in);
  checkDrained(in.id_);
}

}  // namespace sl
