#pragma once
// PASCAL's instance-level scheduler (30-schedulers.md "PASCAL (global)",
// paper §IV-B). Reads the *current* status of every instance (no staleness):
//   t_i  on pace: no unfinished answering request on instance i (held by its
//        pascal-local policy, or in flight to it) is behind its token pacer;
//        see PascalGlobal::behindPace for the exact rule;
//   m_i  KV footprint, GPU + CPU blocks (Instance::kvFootprintBlocks());
//   r_i  requests in its high-priority (reasoning) queue;
//   a_i  low-queue requests still in their first quantum (+ copies in flight to it).
// route()          = Algorithm 1: candidates on pace (else all), smallest m_i.
// onReasoningEnd() = Algorithm 2: candidates on pace, fewest r_i; if none is
//                    on pace, all, fewest r_i + a_i. Then adaptive migration:
//                    stay if the current instance has room for the request's
//                    KV plus `headroomTokens` and the chosen one has not;
//                    otherwise stop-and-copy to the chosen instance (its low queue).
// Every decision is recorded in a DecisionLog (decisionLog()).
#include <cstdint>
#include <vector>

#include "engine/decision_log.h"
#include "engine/policy_api.h"
#include "policy/pascal/pascal_decisions.h"
#include "policy/pascal/pascal_local.h"

namespace sl {

enum class PascalMigration : std::uint8_t {
  Adaptive,  // pascal
  Never,     // pascal-nomigration
  Always,    // pascal-nonadaptive
};

struct PascalGlobalConfig {
  PascalMigration migration = PascalMigration::Adaptive;
  std::int64_t paceLowWatermark = 0;  // tokens: buffered <= this is "behind pace"
  std::int64_t headroomTokens = 256;  // adaptive migration: room for the next tokens
  bool displace = true;               // a migrant evicts lower-ranked residents of a full destination
};

/// One instance as the PASCAL monitor sees it at a decision.
struct PascalInstanceStatus {
  bool onPace = true;               // t_i
  std::int64_t footprint = 0;       // m_i (blocks)
  std::int64_t reasoning = 0;       // r_i
  std::int64_t freshAnswering = 0;  // a_i
};

class PascalGlobal : public GlobalPolicy {
 public:
  explicit PascalGlobal(const PascalGlobalConfig& cfg) : cfg_(cfg) {}
  const char* name() const override;
  /// t_i, r_i, a_i, m_i as named fields (the generic path of the monitor).
  void publishInstance(int instance, std::vector<PolicyField>& out) const override;
  /// Decisions so far: migrations started and requests that stayed at </think>.
  void publishCluster(std::vector<PolicyField>& out) const override;
  const DecisionCodeNames* decisionCodeNames() const override { return &pascalDecisionNames(); }
  /// summary.json "policy_report": boundary decisions moved vs stayed, and
  /// every decision counted by its reason.
  void report(std::vector<PolicyReportEntry>& out) const override;
  /// Live pace_low_watermark and headroom_tokens (next decision).
  bool setKnob(const std::string& name, double value) override;
  void attach(Simulator& sim) override;
  int route(const Request& r) override;
  void onReasoningEnd(Request& r) override;
  void onMigrationDone(Request& r, int src, int dst) override;
  /// PascalLocal's lanes may run: this policy reads its members' pacers and
  /// quanta through PascalLocal::synced, and moves only a request at its
  /// reasoning end (never a member) or, by displacement, residents between
  /// their instance's iterations (PascalLocal::displaceable ends the lane).
  bool laneAware() const override { return true; }
  const DecisionLog* decisionLog() const override { return &log_; }

  const PascalGlobalConfig& config() const { return cfg_; }
  const DecisionLog& log() const { return log_; }
  /// The monitor's view of instance `i` now (`except`: a request left out of
  /// the counts, the one being decided on).
  PascalInstanceStatus status(int i, const Request* except = nullptr) const;
  /// Whether answering request `r` is behind its token pacer at `now`:
  /// buffered(now) <= paceLowWatermark once it has produced an answer token;
  /// before its first answer token, once now >= t0 + TTFAT* (the user then
  /// expects a token; before that the expected curve E(t) is still 0).
  bool behindPace(const Request& r, SimTime now) const;

 private:
  struct Inbound {
    Request* r;
    std::int64_t id;
  };
  PascalLocal* local(int i) const;
  bool inboundValid(const Inbound& in) const;
  // The parts of status(): t_i (stops at the first request behind pace), r_i, a_i.
  bool onPace(int i, const Request* except) const;
  std::int64_t reasoningCount(int i, const Request* except) const;
  std::int64_t freshAnsweringCount(int i, const Request* except) const;
  std::int64_t blocksWithHeadroom(const Request& r, int instance) const;
  // Free GPU blocks of instance i less those promised to copies bound for it
  // that have not reserved yet (Simulator::promisedBlocks).
  std::int64_t roomFor(int i) const;

  PascalGlobalConfig cfg_;
  DecisionLog log_;
  std::vector<PascalLocal*> locals_;
  std::vector<std::vector<Inbound>> inbound_;  // per destination: stop-and-copies in flight
  std::vector<PascalInstanceStatus> scratchStatus_;
  std::vector<std::int32_t> scratchCands_;
};

}  // namespace sl
