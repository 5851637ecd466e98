#pragma once
// LLM self-scheduling (self-scheduling paper; 30-schedulers.md
// "Self-scheduling"): arriving requests collect into a ranking batch; when it
// holds B requests or its oldest has waited T, a *rank prompt* (the batch's
// prompts plus a 150-token template) runs on an instance as a real synthetic
// request, with 0 (prefill-only), 20 (rank-only) or 40 (length-only) output
// tokens; when it finishes, each request of the batch gets its rank (or its
// predicted length) and the instance's priority queue orders by (promoted,
// rank, arrival), unranked requests behind ranked ones. Anti-starvation
// promotes requests left out of the batch for `starvation_threshold_steps`
// iterations. The ranking's quality is a noise model (noise.h), not an LLM.
// `oracle-sjf` orders by the true output length, with no rank prompts.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/policy_api.h"
#include "engine/request.h"
#include "policy/baselines/local_fcfs.h"
#include "policy/selfsched/noise.h"

namespace sl {

enum class RankMode : std::uint8_t { PrefillOnly, RankOnly, LengthOnly, Oracle };
const char* rankModeName(RankMode m);  // "prefill-only", "rank-only", "length-only", "oracle-sjf"

/// Request::policyKey of a request not ranked yet: behind every ranked one.
inline constexpr std::int64_t kUnranked = std::numeric_limits<std::int64_t>::max() / 4;

struct StarvationConfig {
  bool enabled = true;
  int thresholdSteps = 4;   // iterations left out of the batch before a promotion
  int quantumSteps = 32;    // iterations a promotion lasts
  int maxPerRound = 16;     // promotions per iteration, at most
};

/// vLLM's priority discipline (FcfsLocal's rules, ordered by (rank prompt,
/// promoted, Request::policyKey, arrival)) plus the paper's anti-starvation.
/// Request::queue holds the iterations of promotion left (> 0: promoted).
class SelfSchedLocal : public FcfsLocal {
public:
  static bool byPriority(const Request* a, const Request* b);
  /// `preemptForPriority`: a waiting request of higher priority preempts the
  /// lowest-priority running ones when it cannot otherwise be admitted
  /// (knob `preempt_for_priority`; FcfsLocal::preemptForPriority_).
  /// `rankPromptRidesAlong`: a running rank prompt's decode tokens join the
  /// prefill-only iterations too (knob `rank_prompt_rides_along`).
  explicit SelfSchedLocal(const StarvationConfig& cfg, bool preemptForPriority = false, bool rankPromptRidesAlong = true)
      : FcfsLocal(&SelfSchedLocal::byPriority), cfg_(cfg), ridesAlong_(rankPromptRidesAlong) {
    preemptForPriority_ = preemptForPriority;
  }
  const char* name() const override { return "selfsched-priority"; }
  void enqueue(Request& r) override;
  void schedule(IterationBuilder& b) override;
  bool setKnob(const std::string& name, double value) override;
  std::int64_t promotions() const { return promotions_; }
  /// Iterations `r` has been left out of the batch in a row (tests).
  int starvation(const Request& r) const;

protected:
  Request* pickVictim() override;

private:
  /// In Algorithm 1's R (ranked, not a rank prompt): counts starvation.
  static bool inR(const Request& r);
  std::int32_t& starveOf(const Request& r);
  void promote();

  StarvationConfig cfg_;
  bool ridesAlong_ = true;
  std::vector<std::int32_t> starve_;     // by slot: iterations in R left out of S in a row
  std::vector<std::int64_t> admitted_;   // by slot: admission stamp while running (0: none; victim_order 2 only)
  std::int64_t admitSeq_ = 0;
  int victimOrder_ = 0;                  // knob victim_order (selfsched.md)
  std::int64_t promotions_ = 0;
};

struct SelfSchedConfig {
  RankMode mode = RankMode::LengthOnly;
  int batchSize = 10;           // B
  double batchTimeoutS = 1.0;   // T (knob batch_timeout_s; the paper's setting)
  int templateTokens = 150;
  double targetTau = 0.55;
  double alpha = 0.10;          // gold-ranking tie threshold
  int calibrationSample = 4000;
  StarvationConfig starvation;
  bool preemptForPriority = false;  // knob preempt_for_priority (the paper's vLLM V1 rule)
  bool rankPromptRidesAlong = true;  // knob rank_prompt_rides_along
  bool neutralRank = false;       // knob neutral_rank: unranked requests sort at the middle rank, not last
};

/// Output tokens of a mode's rank prompt: 0, 20, 40 (oracle: none).
int rankPromptOutput(RankMode m);

class SelfSchedGlobal : public GlobalPolicy {
public:
  /// `outputSample`: output lengths drawn from the scenario's workload, for
  /// the σ calibration (empty: σ = 0).
  SelfSchedGlobal(const SelfSchedConfig& cfg, std::vector<double> outputSample);
  const char* name() const override;
  void attach(Simulator& sim) override;
  void onArrival(Request& r) override;
  int route(const Request& r) override;
  void onSyntheticDone(const Request& r) override;
  bool setKnob(const std::string& name, double value) override;
  void publishInstance(int instance, std::vector<PolicyField>& out) const override;
  void publishCluster(std::vector<PolicyField>& out) const override;
  void report(std::vector<PolicyReportEntry>& out) const override;

  const NoiseCalibration& calibration() const { return cal_; }
  std::int64_t batches() const { return batches_; }
  std::int64_t closedBySize() const { return bySize_; }
  std::int64_t closedByTimeout() const { return byTimeout_; }
  std::int64_t ranked() const { return ranked_; }
  std::size_t openBatch() const { return batch_.size(); }
  /// Mean tau-b of the ranks applied, per batch of >= 2 requests (-2: none).
  double meanBatchTau() const { return tauBatches_ ? tauSum_ / static_cast<double>(tauBatches_) : -2.0; }

private:
  struct Member {
    RequestHandle h;
    std::int64_t id = 0;
    double trueLen = 0;
    std::int32_t input = 0;
  };
  struct Pending {
    RequestHandle prompt;
    std::vector<Member> members;
    std::vector<double> predicted;
  };
  void closeBatch(bool bySize);
  std::int64_t neutralKey() const;
  int leastLoaded() const;
  std::int64_t totalPromotions() const;

  SelfSchedConfig cfg_;
  std::vector<double> outputSample_;
  std::int64_t neutralKey_ = kUnranked;  // Request::policyKey on arrival
  NoiseCalibration cal_;
  std::vector<double> calEps_;  // the calibration's ε, kept for a live target_tau
  std::vector<Member> batch_;
  std::uint64_t batchSeq_ = 0;
  std::vector<Pending> pending_;
  std::vector<std::int64_t> promptsAt_;  // rank prompts injected, by instance
  std::int64_t batches_ = 0, bySize_ = 0, byTimeout_ = 0, ranked_ = 0, members_ = 0;
  double tauSum_ = 0;
  std::int64_t tauBatches_ = 0;
  std::vector<SelfSchedLocal*> locals_;
};

}  // namespace sl
