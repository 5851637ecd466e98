#include "policy/arrow/arrow_global.h"

#include <algorithm>
#include <stdexcept>

#include "engine/instance.h"
#include "engine/request.h"
#include "engine/simulator.h"
#include "engine/snapshot.h"
#include "policy/arrow/arrow_local.h"

namespace sl {

const char* arrowPoolName(ArrowPool p) {
  switch (p) {
    case ArrowPool::P: return "P";
    case ArrowPool::D: return "D";
    case ArrowPool::PtoD: return "P→D";
    case ArrowPool::DtoP: return "D→P";
  }
  return "?";
}

const char* flipReasonName(FlipReason r) {
  switch (r) {
    case FlipReason::PrefillSlo: return "prefill-slo";
    case FlipReason::DecodeSlo: return "decode-slo";
    case FlipReason::MonitorTpot: return "monitor-tpot";
    case FlipReason::MonitorIdle: return "monitor-idle-prefill";
    case FlipReason::Drained: return "drained";
  }
  return "?";
}

namespace {
const char* prefillRuleName(std::size_t r) {
  static const char* names[] = {"pool_p", "pool_d_to_p", "flipped", "fallback", "static"};
  return names[r];
}
const char* poolKey(ArrowPool p) {  // ASCII, for summary.json keys
  static const char* names[] = {"P", "D", "P_to_D", "D_to_P"};
  return names[static_cast<std::size_t>(p)];
}
const char* decodeRuleName(std::size_t r) {
  static const char* names[] = {"in_place", "pool_d", "pool_p_to_d", "flipped", "fallback", "static"};
  return names[r];
}
}  // namespace

const DecisionCodeNames* ArrowGlobal::decisionCodeNames() const {
  // Indexed by ArrowPool and FlipReason.
  static const DecisionCodeNames names{{"to P", "to D", "to P→D", "to D→P"},
                                       {"prefill-slo", "decode-slo", "monitor-tpot", "monitor-idle-prefill",
                                        "drained"}};
  return &names;
}

const char* ArrowGlobal::name() const {
  switch (cfg_.mode) {
    case ArrowMode::SloAware: return "arrow";
    case ArrowMode::MinimalLoad: return "static-pd/minimal-load";
    case ArrowMode::RoundRobin: return "static-pd/round-robin";
  }
  return "arrow";
}

void ArrowGlobal::attach(Simulator& sim) {
  GlobalPolicy::attach(sim);
  const int n = sim.numInstances();
  locals_.assign(static_cast<std::size_t>(n), nullptr);
  for (int i = 0; i < n; ++i) {
    locals_[static_cast<std::size_t>(i)] = dynamic_cast<ArrowLocal*>(&sim.instance(i).policy());
    if (!locals_[static_cast<std::size_t>(i)])
      throw std::logic_error("arrow: instance " + std::to_string(i) + " does not run Arrow's local scheduler");
  }
  inboundRequests_.assign(static_cast<std::size_t>(n), 0);
  inboundTokens_.assign(static_cast<std::size_t>(n), 0);
  const SimConfig& sc = sim.config();
  ttft_ = cfg_.ttftSloS > 0 ? cfg_.ttftSloS : sc.slo.ttft_s.value_or(3.0);
  tpot_ = cfg_.tpotSloS > 0 ? cfg_.tpotSloS : sc.slo.tpot_s.value_or(0.1);

  // ---- start-up profiling (paper §5.3), per pool: each pool's GPU, TP and
  // KV capacity give its own TTFT curve and decode caps.
  profileOf_.assign(static_cast<std::size_t>(n), 0);
  profiles_.clear();
  for (int i = 0; i < n; ++i) {
    const int p = sim.poolOf(i);
    while (static_cast<int>(profiles_.size()) <= p)
      profiles_.push_back(makeProfile(sim.instance(i).cost(), sim.instance(i).config()));
    profileOf_[static_cast<std::size_t>(i)] = p;
  }

  // ---- initial pools: the scenario's pool roles when given, else the
  // first prefill_instances instances prefill and the rest decode.
  pools_.assign(static_cast<std::size_t>(n), ArrowPool::P);
  single_ = n < 2;
  if (single_) {  // one instance does everything (role Both), nothing to flip
    counts_[static_cast<std::size_t>(ArrowPool::P)] = 1;
    sim.setRole(0, InstanceRole::Both);
    sim.setPoolLabel(0, "P+D");
    return;
  }
  const int np = std::clamp(cfg_.prefillInstances > 0 ? cfg_.prefillInstances : n / 2, 1, n - 1);
  for (int i = 0; i < n; ++i) {
    const bool prefill = sim.poolRolesGiven() ? sim.poolRole(i) == InstanceRole::Prefill : i < np;
    const ArrowPool p = prefill ? ArrowPool::P : ArrowPool::D;
    pools_[static_cast<std::size_t>(i)] = p;
    ++counts_[static_cast<std::size_t>(p)];
    sim.setRole(i, p == ArrowPool::P ? InstanceRole::Prefill : InstanceRole::Decode);
    sim.setPoolLabel(i, arrowPoolName(p));
  }
}

ArrowGlobal::Profile ArrowGlobal::makeProfile(const CostModel& cost, const InstanceConfig& ic) const {
  Profile pr;
  pr.kvTokens = ic.gpuBlocks * ic.blockSize;
  const int seqs = std::max(1, ic.maxNumSeqs);
  auto decodeSeconds = [&](double tokens) {
    BatchShape b;
    for (int k = 0; k < seqs; ++k) addDecodeSeq(b, tokens / seqs);
    return cost.iterationSeconds(b);
  };
  // Largest total context of a full homogeneous decode batch (max_num_seqs
  // sequences) whose iteration meets the TPOT SLO; searched up to 8x the KV
  // capacity so the report shows which of the two binds.
  double lo = 0, hi = 8.0 * static_cast<double>(std::max<std::int64_t>(pr.kvTokens, 1));
  if (decodeSeconds(hi) <= tpot_) {
    lo = hi;
  } else {
    for (int it = 0; it < 60 && hi - lo > 1; ++it) {
      const double mid = 0.5 * (lo + hi);
      (decodeSeconds(mid) <= tpot_ ? lo : hi) = mid;
    }
  }
  pr.tpotTokens = static_cast<std::int64_t>(lo);
  pr.maxRunning = cfg_.maxRunningTokens > 0 ? cfg_.maxRunningTokens : std::min(pr.kvTokens, pr.tpotTokens);
  std::int32_t profileMax = cfg_.profileMaxTokens > 0 ? cfg_.profileMaxTokens : cost.model().max_context;
  if (profileMax <= 0) profileMax = 32768;
  profileMax = static_cast<std::int32_t>(std::min<std::int64_t>(profileMax, std::max<std::int64_t>(pr.kvTokens, 64)));
  pr.pred = TtftPredictor::fit(cost, profileMax, ic.chunkedPrefill ? ic.maxBatchedTokens : profileMax);
  return pr;
}

// ---------------------------------------------------------------- monitor view

double ArrowGlobal::prefillDelay(int i) const {
  return local(i)->prefillDelay(profile(i).pred);
}

std::int64_t ArrowGlobal::decodeLoad(int i) const {
  return sim_->instance(i).assignedTokens() + inboundTokens_[static_cast<std::size_t>(i)];
}

double ArrowGlobal::tokenInterval(int i) const {
  return local(i)->tokenInterval(sim_->now(), secondsToNs(cfg_.monitorWindowS));
}

bool ArrowGlobal::hasPrefillWork(int i) const { return local(i)->prefillRequests() > 0; }

bool ArrowGlobal::hasDecodeWork(int i) const {
  return local(i)->decoding() > 0 || inboundRequests_[static_cast<std::size_t>(i)] > 0;
}

int ArrowGlobal::argminDelay(ArrowPool p) const {
  int best = -1;
  double bestD = 0;
  for (int i = 0; i < sim_->numInstances(); ++i) {
    if (pool(i) != p) continue;
    const double d = prefillDelay(i);
    if (best < 0 || d < bestD) best = i, bestD = d;
  }
  return best;
}

int ArrowGlobal::argminLoad(ArrowPool p) const {
  int best = -1;
  std::int64_t bestL = 0;
  for (int i = 0; i < sim_->numInstances(); ++i) {
    if (pool(i) != p) continue;
    const std::int64_t l = decodeLoad(i);
    if (best < 0 || l < bestL) best = i, bestL = l;
  }
  return best;
}

int ArrowGlobal::nextRoundRobin(ArrowPool p, int& cursor) const {
  const int n = sim_->numInstances();
  for (int k = 0; k < n; ++k) {
    const int i = (cursor + k) % n;
    if (pool(i) == p) {
      cursor = (i + 1) % n;
      return i;
    }
  }
  return -1;
}

bool ArrowGlobal::decodeLoadLow() const {
  for (int i = 0; i < sim_->numInstances(); ++i) {
    if (pool(i) != ArrowPool::D) continue;
    if (static_cast<double>(decodeLoad(i)) > cfg_.lowLoadRatio * static_cast<double>(profile(i).maxRunning))
      return false;
    if (tokenInterval(i) > cfg_.lowLoadRatio * tpot_) return false;
  }
  return true;
}

// ---------------------------------------------------------------- pools and flips

void ArrowGlobal::setPool(int i, ArrowPool p, FlipReason why) {
  const ArrowPool from = pool(i);
  if (from == p) return;
  --counts_[static_cast<std::size_t>(from)];
  ++counts_[static_cast<std::size_t>(p)];
  pools_[static_cast<std::size_t>(i)] = p;
  flips_.push_back({sim_->now(), i, from, p, why});
  Decision d;
  d.time = sim_->now();
  d.from = d.chosen = d.instance = i;
  d.selection = static_cast<std::uint8_t>(p);
  d.action = static_cast<std::uint8_t>(why);
  log_.add(d, {});
  const bool prefillRole = p == ArrowPool::P || p == ArrowPool::DtoP;
  if ((sim_->instance(i).role() == InstanceRole::Prefill) != prefillRole)
    sim_->setRole(i, prefillRole ? InstanceRole::Prefill : InstanceRole::Decode);
  sim_->setPoolLabel(i, arrowPoolName(p));
}

void ArrowGlobal::flipToPrefill(int i, FlipReason why) {
  setPool(i, hasDecodeWork(i) ? ArrowPool::DtoP : ArrowPool::P, why);
}

void ArrowGlobal::flipToDecode(int i, FlipReason why) {
  setPool(i, hasPrefillWork(i) ? ArrowPool::PtoD : ArrowPool::D, why);
}

void ArrowGlobal::settle(int i) {
  if (pool(i) == ArrowPool::PtoD && !hasPrefillWork(i)) setPool(i, ArrowPool::D, FlipReason::Drained);
  else if (pool(i) == ArrowPool::DtoP && !hasDecodeWork(i)) setPool(i, ArrowPool::P, FlipReason::Drained);
}

int ArrowGlobal::tryMoveDecodeToPrefill(FlipReason why) {
  // Algorithm 3: keep at least one decode-capable instance.
  if (single_ || poolSize(ArrowPool::D) + poolSize(ArrowPool::PtoD) <= 1) return -1;
  const int p = poolSize(ArrowPool::PtoD) > 0 ? argminLoad(ArrowPool::PtoD) : argminLoad(ArrowPool::D);
  flipToPrefill(p, why);
  return p;
}

int ArrowGlobal::tryMovePrefillToDecode(FlipReason why) {
  // Algorithm 4: keep at least one prefill-capable instance.
  if (single_ || poolSize(ArrowPool::P) + poolSize(ArrowPool::DtoP) <= 1) return -1;
  const int d = poolSize(ArrowPool::DtoP) > 0 ? argminDelay(ArrowPool::DtoP) : argminDelay(ArrowPool::P);
  flipToDecode(d, why);
  return d;
}

// ---------------------------------------------------------------- Algorithm 1

int ArrowGlobal::dispatchPrefill(std::int32_t inputTokens) {
  if (single_) return 0;
  auto count = [this](PrefillRule r) { ++prefillRules_[static_cast<std::size_t>(r)]; };
  if (cfg_.mode == ArrowMode::RoundRobin) {
    count(PrefillRule::Static);
    return nextRoundRobin(ArrowPool::P, rrPrefill_);
  }
  const int t1 = argminDelay(ArrowPool::P);
  if (cfg_.mode == ArrowMode::MinimalLoad) {
    count(PrefillRule::Static);
    return t1;
  }
  const int t2 = argminDelay(ArrowPool::DtoP);
  // The prompt's own prefill, predicted on the candidate's pool.
  const auto own = [&](int t) { return profile(t).pred.predict(inputTokens); };
  if (t1 >= 0 && prefillDelay(t1) + own(t1) <= ttft_) {
    count(PrefillRule::PoolP);
    return t1;
  }
  if (t2 >= 0 && prefillDelay(t2) + own(t2) <= ttft_) {
    count(PrefillRule::PoolDtoP);
    return t2;
  }
  // The overload rule: never take a decode instance while decode load is high.
  if (decodeLoadLow()) {
    const int t3 = tryMoveDecodeToPrefill(FlipReason::PrefillSlo);
    if (t3 >= 0) {
      count(PrefillRule::Flipped);
      return t3;
    }
  }
  count(PrefillRule::Fallback);
  return t1 >= 0 ? t1 : t2;
}

int ArrowGlobal::route(const Request& r) {
  const int t = dispatchPrefill(r.prefillTarget > 0 ? r.prefillTarget : r.input);
  if (t < 0) throw std::logic_error("arrow: no prefill-capable instance");
  return t;
}

// ---------------------------------------------------------------- Algorithm 2

int ArrowGlobal::dispatchDecode(int src) {
  if (single_) return src;
  auto count = [this](DecodeRule r) { ++decodeRules_[static_cast<std::size_t>(r)]; };
  if (decodeCapable(src)) {  // the prefill instance has become D or P→D: no transfer
    count(DecodeRule::InPlace);
    return src;
  }
  if (cfg_.mode == ArrowMode::RoundRobin) {
    count(DecodeRule::Static);
    return nextRoundRobin(ArrowPool::D, rrDecode_);
  }
  const int t1 = argminLoad(ArrowPool::D);
  if (cfg_.mode == ArrowMode::MinimalLoad) {
    count(DecodeRule::Static);
    return t1;
  }
  const int t2 = argminLoad(ArrowPool::PtoD);
  auto ok = [&](int t) { return t >= 0 && decodeLoad(t) <= profile(t).maxRunning && tokenInterval(t) <= tpot_; };
  if (ok(t1)) {
    count(DecodeRule::PoolD);
    return t1;
  }
  if (ok(t2)) {
    count(DecodeRule::PoolPtoD);
    return t2;
  }
  const int t3 = tryMovePrefillToDecode(FlipReason::DecodeSlo);
  if (t3 >= 0) {
    count(DecodeRule::Flipped);
    return t3;
  }
  count(DecodeRule::Fallback);
  if (t1 < 0) return t2;
  if (t2 < 0) return t1;
  return decodeLoad(t1) <= decodeLoad(t2) ? t1 : t2;
}

void ArrowGlobal::handoffTo(Request& r, int dst) {
  if (dst != r.instance) {
    ++inboundRequests_[static_cast<std::size_t>(dst)];
    inboundTokens_[static_cast<std::size_t>(dst)] += static_cast<std::int64_t>(r.input) + r.generated;
  }
  sim_->handoff(r, dst);
}

void ArrowGlobal::onPrefillDone(Request& r) {
  int dst = dispatchDecode(r.instance);
  if (dst < 0) dst = r.instance;  // cannot happen with >= 1 decode-capable instance; decode in place
  handoffTo(r, dst);
}

void ArrowGlobal::onMigrationDone(Request& r, int src, int dst) {
  auto& n = inboundRequests_[static_cast<std::size_t>(dst)];
  if (n > 0) {
    --n;
    inboundTokens_[static_cast<std::size_t>(dst)] -= static_cast<std::int64_t>(r.input) + r.generated;
  }
  if (!single_) {
    settle(src);
    settle(dst);
  }
}

void ArrowGlobal::onIterationEnd(int instance) {
  if (!single_) settle(instance);
}

// ---------------------------------------------------------------- the monitor

SimTime ArrowGlobal::tickInterval() const {
  if (cfg_.mode != ArrowMode::SloAware || single_) return 0;
  return std::max<SimTime>(1, secondsToNs(cfg_.monitorTickS));
}

void ArrowGlobal::onTick() {
  if (cfg_.mode != ArrowMode::SloAware || single_) return;
  const int n = sim_->numInstances();
  for (int i = 0; i < n; ++i) settle(i);
  // Rule 1: the D pool's token interval over the window exceeds the TPOT SLO.
  double sum = 0, loadFrac = 0;
  int measured = 0, nd = 0;
  for (int i = 0; i < n; ++i) {
    if (pool(i) != ArrowPool::D) continue;
    ++nd;
    loadFrac +=
        static_cast<double>(decodeLoad(i)) / static_cast<double>(std::max<std::int64_t>(1, profile(i).maxRunning));
    const double t = tokenInterval(i);
    if (t > 0) sum += t, ++measured;
  }
  const double meanInterval = measured ? sum / measured : 0;
  if (measured && meanInterval > cfg_.flipTpotRatio * tpot_) {
    tryMovePrefillToDecode(FlipReason::MonitorTpot);
    return;
  }
  // Rule 2: a P instance is idle while the D pool is busy.
  const bool busy = nd > 0 && (loadFrac / nd >= cfg_.busyRatio || meanInterval >= cfg_.busyRatio * tpot_);
  if (!busy || poolSize(ArrowPool::P) + poolSize(ArrowPool::DtoP) <= 1) return;
  for (int i = 0; i < n; ++i) {
    if (pool(i) != ArrowPool::P || hasPrefillWork(i) || sim_->instance(i).busy()) continue;
    flipToDecode(i, FlipReason::MonitorIdle);
    return;
  }
}

bool ArrowGlobal::setKnob(const std::string& name, double value) {
  if (name == "ttft_slo_s") {
    cfg_.ttftSloS = value;
    ttft_ = value > 0 ? value : sim_->config().slo.ttft_s.value_or(3.0);
  } else if (name == "tpot_slo_s") {
    cfg_.tpotSloS = value;
    tpot_ = value > 0 ? value : sim_->config().slo.tpot_s.value_or(0.1);
  } else if (name == "monitor_tick_s") {
    cfg_.monitorTickS = value;
  } else if (name == "monitor_window_s") {
    cfg_.monitorWindowS = value;
  } else if (name == "flip_tpot_ratio") {
    cfg_.flipTpotRatio = value;
  } else if (name == "low_load_ratio") {
    cfg_.lowLoadRatio = value;
  } else if (name == "busy_ratio") {
    cfg_.busyRatio = value;
  } else {
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- publishing

void ArrowGlobal::publishInstance(int i, std::vector<PolicyField>& out) const {
  if (!sim_ || i < 0 || i >= static_cast<int>(pools_.size())) return;
  // The pool itself is the card's badge (Simulator::setPoolLabel). The
  // fields are the ones its pool's algorithms read, short enough for a card:
  // prefill side (Alg. 1) first on P / D→P, decode side (Alg. 2, the
  // monitor, the KV-migration queue) first on D / P→D.
  const ArrowPool p = pools_[static_cast<std::size_t>(i)];
  auto queued = [&] {
    out.push_back({"queued", static_cast<double>(sim_->instance(i).queuedPrefillTokens()), "tokens",
                   "prompt tokens still to prefill on this instance"});
  };
  auto delay = [&] {
    out.push_back({"delay", prefillDelay(i), "s",
                   "predicted time (a + b·I + c·I²) of its queued prefills; Alg. 1 adds the new prompt's and "
                   "compares with the TTFT SLO"});
  };
  auto kvQueue = [&] {
    out.push_back({"KV queue", static_cast<double>(inboundRequests_[static_cast<std::size_t>(i)]), "requests",
                   "hand-offs to this instance whose KV is waiting (FCFS) or being copied"});
  };
  auto load = [&] {
    out.push_back({"load", static_cast<double>(decodeLoad(i)), "tokens",
                   "decode load: tokens of the requests it holds plus hand-offs on their way; Alg. 2 compares "
                   "with max_running_tokens"});
  };
  auto interval = [&] {
    out.push_back({"interval", tokenInterval(i), "s",
                   "mean decode-iteration time over the monitor window (token interval); compared with the "
                   "TPOT SLO"});
  };
  switch (p) {
    case ArrowPool::P: queued(); delay(); break;
    case ArrowPool::DtoP: queued(); delay(); load(); break;
    case ArrowPool::D: kvQueue(); load(); interval(); break;
    case ArrowPool::PtoD: kvQueue(); load(); queued(); break;
  }
}

void ArrowGlobal::publishCluster(std::vector<PolicyField>& out) const {
  out.push_back({"pool P", static_cast<double>(poolSize(ArrowPool::P)), "instances", "instances in the prefill pool"});
  out.push_back({"pool D", static_cast<double>(poolSize(ArrowPool::D)), "instances", "instances in the decode pool"});
  out.push_back({"pool P→D", static_cast<double>(poolSize(ArrowPool::PtoD)), "instances",
                 "flipped to decode, still finishing prefills"});
  out.push_back({"pool D→P", static_cast<double>(poolSize(ArrowPool::DtoP)), "instances",
                 "flipped to prefill, still finishing decodes"});
  out.push_back({"flips", static_cast<double>(flips_.size()), "flips", "pool changes so far (drains included)"});
}

void ArrowGlobal::report(std::vector<PolicyReportEntry>& out) const {
  const Profile& p0 = profiles_.front();
  const TtftFit& f = p0.pred.fitInfo();
  out.push_back({"ttft_predictor/a_s", f.a});
  out.push_back({"ttft_predictor/b_s_per_token", f.b});
  out.push_back({"ttft_predictor/c_s_per_token2", f.c});
  out.push_back({"ttft_predictor/fit_mape", f.mape});
  out.push_back({"ttft_predictor/fit_max_rel_error", f.maxRelError});
  out.push_back({"ttft_predictor/profile_max_tokens", static_cast<double>(f.maxTokens)});
  out.push_back({"max_running_tokens", static_cast<double>(p0.maxRunning)});
  out.push_back({"kv_capacity_tokens", static_cast<double>(p0.kvTokens)});
  out.push_back({"tpot_batch_tokens", static_cast<double>(p0.tpotTokens)});
  // The later pools' profiles (mixed pools; the keys above are the first's).
  for (std::size_t k = 1; k < profiles_.size(); ++k) {
    const std::string pre = "pool" + std::to_string(k) + "/";
    out.push_back({pre + "ttft_predictor/b_s_per_token", profiles_[k].pred.fitInfo().b});
    out.push_back({pre + "max_running_tokens", static_cast<double>(profiles_[k].maxRunning)});
    out.push_back({pre + "kv_capacity_tokens", static_cast<double>(profiles_[k].kvTokens)});
    out.push_back({pre + "tpot_batch_tokens", static_cast<double>(profiles_[k].tpotTokens)});
  }
  out.push_back({"ttft_slo_s", ttft_});
  out.push_back({"tpot_slo_s", tpot_});
  for (std::size_t k = 0; k < static_cast<std::size_t>(PrefillRule::kCount); ++k)
    if (prefillRules_[k]) out.push_back({std::string("prefill_dispatch/") + prefillRuleName(k), static_cast<double>(prefillRules_[k])});
  for (std::size_t k = 0; k < static_cast<std::size_t>(DecodeRule::kCount); ++k)
    if (decodeRules_[k]) out.push_back({std::string("decode_dispatch/") + decodeRuleName(k), static_cast<double>(decodeRules_[k])});
  out.push_back({"flips", static_cast<double>(flips_.size())});
  std::int64_t byReason[5] = {};
  for (const ArrowFlip& fl : flips_) ++byReason[static_cast<std::size_t>(fl.reason)];
  for (std::size_t k = 0; k < 5; ++k)
    if (byReason[k]) out.push_back({std::string("flips_by_reason/") + flipReasonName(static_cast<FlipReason>(k)), static_cast<double>(byReason[k])});
  for (ArrowPool p : {ArrowPool::P, ArrowPool::D, ArrowPool::PtoD, ArrowPool::DtoP})
    out.push_back({std::string("final_pool/") + poolKey(p), static_cast<double>(poolSize(p))});
}

}  // namespace sl
