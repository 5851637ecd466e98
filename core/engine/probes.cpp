// Simulator: what observers and the GUI see -- periodic probe samples
// (time series) and snapshots of the whole cluster. Neither changes the run.
#include "engine/simulator.h"

#include "engine/record.h"
#include "metrics/summary.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sl {
// ---------------------------------------------------------------- probes

void Simulator::probe() {
  ProbeSample& s = probeSample_;
  s.time = now_;
  s.intervalS = nsToSeconds(cfg_.probeInterval);
  s.arrivals = probeArrivals_;
  s.completions = probeCompletions_;
  s.tokens = probeTokens_;
  s.inFlight = inFlight_;
  probeArrivals_ = probeCompletions_ = probeTokens_ = 0;
  const RollingSample st = rolling_.sample(now_);
  s.ttftP50 = st.ttft_p50;
  s.ttftP99 = st.ttft_p99;
  s.tpotP50 = st.tpot_p50;
  s.tpotP99 = st.tpot_p99;
  s.sloAttainment = st.slo_attainment;
  s.qoeViolationRate = st.qoe_violation_rate;
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const Instance& in = *instances_[i];
    ProbeInstance& p = s.instances[i];
    p.gpuBlocks = in.gpuUsed_;
    p.cpuBlocks = in.cpuUsed_;
    p.gpuCapacity = in.cfg_.gpuBlocks;
    p.batch = in.batchSequences();
    p.role = static_cast<std::int32_t>(in.role_);
    if (in.cache_) {
      p.cachedGpuBlocks = in.cache_->gpuBlocks();
      p.cachedCpuBlocks = in.cache_->cpuBlocks();
      p.promptTokens = in.cache_->stats().promptTokens;
      p.cachedTokens = in.cache_->stats().cachedTokens;
    }
    if (cfg_.speculative.on()) {
      p.specK = in.decodeAhead_ - 1;
      p.draftedTokens = in.specDrafted_;
      p.acceptedTokens = in.specAccepted_;
    }
    p.queued = probeCounts_[i].queued;
    p.running = probeCounts_[i].running;
  }
  for (SimObserver* o : observers_) o->onProbe(s);
}

// ---------------------------------------------------------------- snapshot

namespace {
// The prefix cache of one instance as the GUI sees it (counters only: no
// allocation, O(1)).
void copyCacheSnapshot(const PrefixCache* c, std::int64_t cpuCapacity, PrefixCacheSnapshot& out) {
  out = PrefixCacheSnapshot{};
  if (!c) return;
  const PrefixCacheStats& st = c->stats();
  out.on = true;
  out.gpuFreeBlocks = c->evictableGpu();
  out.gpuBlocks = c->gpuBlocks();
  out.cpuBlocks = c->cpuBlocks();
  out.cpuCapacity = cpuCapacity;
  out.promptTokens = st.promptTokens;
  out.cachedTokens = st.cachedTokens;
  out.hits = st.hits;
  out.evictions = st.evictions;
  out.offloadHits = st.offloadHits;
}
}  // namespace

void Simulator::fillMoeSnapshot(const CostModel& cost, const BatchShape& shape, MoeStepSnapshot& m) const {
  const double N = batchTokens(shape);
  const CostBreakdown b = cost.breakdown(shape);
  m.tokens = N;
  m.rankPairs = cost.rankLoads(N);
  const ExpertPlacement& p = cost.placement();
  m.stragglerPairs = 0;
  for (int r = 0; r < p.ranks(); ++r)
    m.stragglerPairs =
        std::max(m.stragglerPairs, N * p.rankShare(r) + p.stragglerZ() * std::sqrt(N * p.rankVariance(r)));
  m.expertsTouched = 0;
  for (int r = 0; r < p.ranks(); ++r) m.expertsTouched += p.rankTouched(r, N);
  m.attentionS = b.prefill_attn_s + b.decode_attn_s;
  m.expertS = b.expert_s;
  m.allToAllS = b.a2a_s;
  m.commS = b.comm_s;
  m.otherS = b.total_s - m.attentionS - m.expertS - m.allToAllS - m.commS;
}

void Simulator::fillSnapshot(Snapshot& s) const {
  syncLanes();
  s.now = now_;
  s.arrived = arrived_;
  s.finished = static_cast<std::int64_t>(records_.size());
  s.inFlight = inFlight_;
  s.inputPrefilled = inputPrefilled_;
  s.events = events_;
  s.instances.resize(instances_.size());
  std::vector<QueueView> views;
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const Instance& in = *instances_[i];
    InstanceSnapshot& is = s.instances[i];
    is.id = in.id_;
    is.role = static_cast<std::uint8_t>(in.role_);
    is.gpuBlocksUsed = in.gpuUsed_;
    is.gpuBlocksReserved = in.gpuReserved_;
    is.gpuBlocks = in.cfg_.gpuBlocks;
    is.cpuBlocksUsed = in.cpuUsed_;
    is.cpuBlocks = in.cfg_.cpuBlocks;
    is.batchSize = in.batchSequences();
    is.busy = in.busy_;
    is.tokensProduced = in.tokensProduced_;
    copyCacheSnapshot(in.cache_.get(), in.cfg_.prefixCpuBlocks, is.cache);
    if (in.cost_->model().isMoe()) fillMoeSnapshot(*in.cost_, in.shape_, is.moe);
    if (cfg_.speculative.on()) is.spec = {in.decodeAhead_ - 1, in.specDrafted_, in.specAccepted_, in.specSteps_};
    views.clear();
    in.policy_->describe(views);
    is.poolLabel = poolLabels_[i];
    is.policyFields.clear();
    if (global_) global_->publishInstance(static_cast<int>(i), is.policyFields);
    is.queues.resize(views.size());
    for (std::size_t q = 0; q < views.size(); ++q) {
      is.queues[q].name = views[q].name;
      auto& chips = is.queues[q].requests;
      chips.clear();
      for (const Request* r : views[q].requests)
        chips.push_back(RequestChip{r->id, static_cast<std::uint8_t>(r->phase()),
                                    static_cast<std::uint8_t>(r->state), r->kvTokens,
                                    r->batchIndex >= 0 || (r->laneIndex >= 0 && in.laneSeqs_ > 0),
                                    r->synthetic, r->rank, r->predicted, r->generated});
    }
  }
  s.transfers.clear();
  for (const Migration& m : migrations_) {
    if (!m.active || !m.r) continue;
    TransferSnapshot t;
    t.requestId = m.r->id;
    t.src = m.src;
    t.dst = m.dst;
    t.live = m.live;
    t.progress = m.flow >= 0 ? std::max(0.0, net_.progress(m.flow, now_)) : 0.0;
    s.transfers.push_back(t);
  }
  s.policySeries.clear();
  if (global_) global_->publishCluster(s.policySeries);
  s.decisions = 0;
  s.recentDecisions.clear();
  if (const DecisionLog* log = global_ ? global_->decisionLog() : nullptr) {
    const auto& e = log->entries();
    s.decisions = static_cast<std::int64_t>(e.size()) + log->dropped();
    const std::size_t from = e.size() > Snapshot::kRecentDecisions ? e.size() - Snapshot::kRecentDecisions : 0;
    const DecisionCodeNames* names = global_->decisionCodeNames();
    for (std::size_t k = from; k < e.size(); ++k)
      s.recentDecisions.push_back({e[k], DecisionLog::reason(e[k], names)});
  }
}

}  // namespace sl
