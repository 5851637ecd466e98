#pragma once
// Arrow's global scheduler (paper §5, 30-schedulers.md "Arrow") and the
// static prefill/decode baselines built from the same parts.
//
// Every instance is stateless: it may prefill and decode. The policy keeps it
// in one of four elastic pools -- P, D, P→D (flipped to decode, still
// finishing prefills), D→P (flipped to prefill, still finishing decodes) --
// and maps the pool onto the engine's role: P and D→P hand each request off
// when its prefill ends (role Prefill), D and P→D decode their own prefills
// in place (role Decode).
//  - route()         = Algorithm 1 (SLO-aware prefill dispatch) with
//                      Algorithm 3 (try_move_decode_to_prefill) when decode
//                      load is low (the overload rule).
//  - onPrefillDone() = Algorithm 2 (SLO-aware decode dispatch) with
//                      Algorithm 4 (try_move_prefill_to_decode).
//  - onTick()        = the instance monitor: flip P→D when the D pool's mean
//                      token interval over the window exceeds the TPOT SLO,
//                      or when a P instance is idle while D is busy.
//  - P→D becomes D once it holds no prefill; D→P becomes P once it holds no
//    decode and none is on its way to it.
// Static modes (static-pd and its presets): fixed pools, no flips, dispatch
// by minimal load (prefill delay / decode tokens) or round-robin.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/decision_log.h"
#include "engine/instance.h"
#include "engine/policy_api.h"
#include "policy/arrow/ttft_predictor.h"
#include "util/time.h"

namespace sl {

class ArrowLocal;

enum class ArrowPool : std::uint8_t { P = 0, D = 1, PtoD = 2, DtoP = 3 };
const char* arrowPoolName(ArrowPool p);  // "P", "D", "P→D", "D→P"

enum class ArrowMode : std::uint8_t {
  SloAware,     // arrow: Alg. 1-4 and the monitor
  MinimalLoad,  // static-pd dispatch=minimal-load: least prefill delay / least decode tokens
  RoundRobin,   // static-pd dispatch=round-robin
};

/// Why an instance changed pool.
enum class FlipReason : std::uint8_t {
  PrefillSlo,    // Alg. 1 → Alg. 3: no prefill-capable instance met the TTFT SLO, decode load low
  DecodeSlo,     // Alg. 2 → Alg. 4: no decode instance under max_running_tokens and the TPOT SLO
  MonitorTpot,   // monitor: the D pool's mean token interval over the window exceeded the TPOT SLO
  MonitorIdle,   // monitor: a P instance idle while the D pool is busy
  Drained,       // P→D finished its prefills (→ D), D→P finished its decodes (→ P)
};
const char* flipReasonName(FlipReason r);

struct ArrowFlip {
  SimTime time = 0;
  std::int32_t instance = -1;
  ArrowPool from = ArrowPool::P, to = ArrowPool::P;
  FlipReason reason = FlipReason::PrefillSlo;
};

/// How a request was dispatched (counted for the report).
enum class PrefillRule : std::uint8_t { PoolP, PoolDtoP, Flipped, Fallback, Static, kCount };
enum class DecodeRule : std::uint8_t { InPlace, PoolD, PoolPtoD, Flipped, Fallback, Static, kCount };

struct ArrowConfig {
  ArrowMode mode = ArrowMode::SloAware;
  int prefillInstances = 0;          // initial (arrow) or fixed (static) P count; 0 = half
  double ttftSloS = 0;               // 0: the scenario's slo.ttft_s (3 s when unset)
  double tpotSloS = 0;               // 0: the scenario's slo.tpot_s (0.1 s when unset)
  double monitorTickS = 0.1;
  double monitorWindowS = 1.0;
  double flipTpotRatio = 1.0;        // monitor: D mean interval > ratio · TPOT SLO
  double lowLoadRatio = 1.0;         // Alg. 1: every D under ratio · max_running_tokens and ratio · TPOT SLO
  double busyRatio = 0.5;            // monitor: D busy at ratio · max_running_tokens or ratio · TPOT SLO
  std::int64_t maxRunningTokens = 0; // 0: from profiling
  std::int32_t profileMaxTokens = 0; // 0: the model's context window (capped by the KV capacity)
};

class ArrowGlobal : public GlobalPolicy {
public:
  explicit ArrowGlobal(const ArrowConfig& cfg) : cfg_(cfg) {}
  const char* name() const override;
  void attach(Simulator& sim) override;
  int route(const Request& r) override;
  void onPrefillDone(Request& r) override;
  void onMigrationDone(Request& r, int src, int dst) override;
  void onIterationEnd(int instance) override;
  SimTime tickInterval() const override;
  void onTick() override;
  bool setKnob(const std::string& name, double value) override;
  void publishInstance(int instance, std::vector<PolicyField>& out) const override;
  void publishCluster(std::vector<PolicyField>& out) const override;
  void report(std::vector<PolicyReportEntry>& out) const override;
  /// Every pool change (flips and drains) as an instance decision (request
  /// id -1): selection = the pool it moves to, action = the reason. Null
  /// while there is none (static-pd, vllm-colocated, a run without flips).
  const DecisionLog* decisionLog() const override { return log_.size() > 0 ? &log_ : nullptr; }
  const DecisionCodeNames* decisionCodeNames() const override;

  // ---- the monitor's view (tests, GUI)
  ArrowPool pool(int i) const { return pools_[static_cast<std::size_t>(i)]; }
  int poolSize(ArrowPool p) const { return counts_[static_cast<std::size_t>(p)]; }
  /// Predicted seconds before a new prompt on `i` would start (its queued prefills).
  double prefillDelay(int i) const;
  /// Decode load: tokens (prompt + generated) of the requests it holds plus
  /// those whose KV is on its way to it.
  std::int64_t decodeLoad(int i) const;
  /// Mean decode-iteration duration of `i` over the monitor window (0: none).
  double tokenInterval(int i) const;
  /// The start-up profile of instance i's pool (its GPU, TP and KV
  /// capacity; one profile without cluster.pools). Without an argument: the
  /// first pool's.
  const TtftPredictor& predictor(int i = 0) const { return profile(i).pred; }
  std::int64_t maxRunningTokens(int i = 0) const { return profile(i).maxRunning; }
  std::int64_t kvCapacityTokens(int i = 0) const { return profile(i).kvTokens; }
  std::int64_t tpotBatchTokens(int i = 0) const { return profile(i).tpotTokens; }
  double ttftSlo() const { return ttft_; }
  double tpotSlo() const { return tpot_; }
  const std::vector<ArrowFlip>& flips() const { return flips_; }
  std::int64_t prefillCount(PrefillRule r) const { return prefillRules_[static_cast<std::size_t>(r)]; }
  std::int64_t decodeCount(DecodeRule r) const { return decodeRules_[static_cast<std::size_t>(r)]; }

  // ---- the algorithms, callable on their own (tests)
  /// Algorithm 1: the instance for a new prompt of `inputTokens` (may flip).
  int dispatchPrefill(std::int32_t inputTokens);
  /// Algorithm 2: the decode instance for a request prefilled on `prefillInstance` (may flip).
  int dispatchDecode(int prefillInstance);
  /// Algorithm 3: flips a decode-capable instance towards prefill; -1 when refused.
  int tryMoveDecodeToPrefill(FlipReason why = FlipReason::PrefillSlo);
  /// Algorithm 4: flips a prefill-capable instance towards decode; -1 when refused.
  int tryMovePrefillToDecode(FlipReason why = FlipReason::DecodeSlo);
  /// Alg. 1's overload test: every D instance under low_load_ratio of
  /// max_running_tokens and of the TPOT SLO.
  bool decodeLoadLow() const;
  /// Puts `i` in `pool` (tests build their cases with it; also the flips' path).
  void setPool(int i, ArrowPool pool, FlipReason why);

private:
  /// Start-up profiling (paper §5.3) of one pool: KV capacity in tokens, the
  /// largest decode batch meeting the TPOT SLO, the running-token cap and the
  /// TTFT curve.
  struct Profile {
    TtftPredictor pred;
    std::int64_t kvTokens = 0, tpotTokens = 0, maxRunning = 0;
  };
  const Profile& profile(int i) const {
    return profiles_[static_cast<std::size_t>(profileOf_.empty() ? 0 : profileOf_[static_cast<std::size_t>(i)])];
  }
  Profile makeProfile(const CostModel& cost, const InstanceConfig& ic) const;
  ArrowLocal* local(int i) const { return locals_[static_cast<std::size_t>(i)]; }
  bool prefillCapable(int i) const { return pool(i) == ArrowPool::P || pool(i) == ArrowPool::DtoP; }
  bool decodeCapable(int i) const { return pool(i) == ArrowPool::D || pool(i) == ArrowPool::PtoD; }
  bool hasPrefillWork(int i) const;
  bool hasDecodeWork(int i) const;
  void flipToPrefill(int i, FlipReason why);
  void flipToDecode(int i, FlipReason why);
  void settle(int i);
  int argminDelay(ArrowPool p) const;
  int argminLoad(ArrowPool p) const;
  int nextRoundRobin(ArrowPool p, int& cursor) const;
  void handoffTo(Request& r, int dst);

  ArrowConfig cfg_;
  std::vector<Profile> profiles_;  // one per pool (cluster.pools), in pool order
  std::vector<int> profileOf_;     // each instance's profile
  double ttft_ = 3.0, tpot_ = 0.1;
  std::vector<ArrowLocal*> locals_;
  std::vector<ArrowPool> pools_;
  int counts_[4] = {0, 0, 0, 0};
  std::vector<std::int64_t> inboundRequests_, inboundTokens_;
  std::vector<ArrowFlip> flips_;
  DecisionLog log_;
  std::int64_t prefillRules_[static_cast<std::size_t>(PrefillRule::kCount)] = {};
  std::int64_t decodeRules_[static_cast<std::size_t>(DecodeRule::kCount)] = {};
  int rrPrefill_ = 0, rrDecode_ = 0;
  bool single_ = false;  // one instance: it does everything, no pools to flip
};

}  // namespace sl
