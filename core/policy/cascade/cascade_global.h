#pragma once
// CascadeInfer's global scheduler (paper §4, 30-schedulers.md
// "CascadeInfer"): instances form stages over ordered length ranges; a new
// request goes to the first stage covering its prompt; a sequence that
// outgrows its instance's upper bound is handed to the next stage by live
// migration, the receiver chosen by the bid-ask protocol. Stages are planned
// (DP over exponential length buckets, latency model fitted at start-up),
// replanned every replan interval and their boundaries refined every refine
// interval; an instance whose KV demand is >= 25 % over its stage's mean
// sheds a request to a peer through the same protocol.
// Files: cascade_global.cpp (stages, planning, routing, hand-over,
// rebalancing, report), bid_ask.cpp (the bid-ask market), range_refine.cpp
// (range refinement). Llumnix, the baseline: llumnix_global.h.
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/policy_api.h"
#include "engine/request.h"
#include "policy/cascade/planner.h"
#include "policy/cascade/qoe_model.h"

namespace sl {

enum class CascadeLayout : std::uint8_t { Planned = 0, Chain = 1, Single = 2 };
enum class RefineMode : std::uint8_t { Qoe = 0, Quantity = 1, Memory = 2 };

struct CascadeConfig {
  CascadeLayout layout = CascadeLayout::Planned;
  RefineMode refine = RefineMode::Qoe;
  bool exactPlanner = false;       // exact DP instead of the two-phase heuristic
  bool prefillTerm = false;        // stage cost x prefillSlowdown(prefill load) (knob prefill_term)
  bool intraStage = true;          // intra-stage bid-ask rebalancing
  double replanIntervalS = 60;     // 0: plan once
  double refineIntervalS = 5;      // 0: no refinement
  double emaAlpha = 0.3;
  int refineMinRequests = 5;
  double messageLatencyS = 0.0002;
  int starveLimit = 3;
  int migrationCap = 3;            // live migrations per instance the policy starts (engine cap applies too)
  double rebalanceThreshold = 0.25;
  double rebalanceIntervalS = 0.5;
  double pumpIntervalS = 0.02;     // receivers retry their queues
  std::int64_t bucketBase = 256;   // first bucket edge, tokens
  int profileOutput = 128;         // decode steps of each profiling batch
  /// Prior for the start-up plan: (input, output) pairs drawn from the
  /// scenario's workload, and its arrival rate (req/s). Empty: one stage
  /// until the first replan.
  std::vector<std::pair<std::int64_t, std::int64_t>> prior;
  double priorRate = 0;
  /// Stage roles (cluster.pools[p].role "stage-k"): k of each pool (1 =
  /// the shortest lengths), one entry per pool; empty: no roles, the planner
  /// chooses how many instances each stage gets.
  std::vector<int> poolStage;
};

/// One bid (ask reply) from a receiver.
struct CascadeBid {
  int receiver = -1;
  double load = 0;          // KV demand, tokens
  double earliestS = 0;     // buffered tokens / measured transfer throughput
};

/// An entry of a receiver's priority queue.
struct PendingMove {
  RequestHandle h;
  std::int64_t id = 0;
  int sender = -1;
  double senderLoad = 0;  // priority (higher first)
  int skips = 0;
  int refusals = 0;  // migrations the receiver could not start (no room)
  std::int64_t tokens = 0;  // sequence length when it was queued (receiver's buffered load)
  bool interStage = true;
};

class CascadeGlobal : public GlobalPolicy {
public:
  explicit CascadeGlobal(CascadeConfig cfg);
  const char* name() const override { return "cascade"; }
  /// Reads progress through resolve/forEachActive/callbacks and instance counters only.
  bool laneAware() const override { return true; }
  void attach(Simulator& sim) override;
  void onArrival(Request& r) override;
  int route(const Request& r) override;
  void onLengthReached(Request& r) override;
  void onMigrationDone(Request& r, int src, int dst) override;
  void onFinished(const Request& r) override;
  void onTimer(int timer) override;
  bool setKnob(const std::string& name, double value) override;
  void publishInstance(int instance, std::vector<PolicyField>& out) const override;
  void publishCluster(std::vector<PolicyField>& out) const override;
  void report(std::vector<PolicyReportEntry>& out) const override;

  // ---- state (tests, experiments)
  int stages() const { return static_cast<int>(bounds_.size()); }
  int stageOf(int instance) const { return stageOf_[static_cast<std::size_t>(instance)]; }
  /// Upper bound of stage s (tokens); the last stage's is "none" (INT32_MAX).
  std::int32_t upper(int s) const { return uppers_[static_cast<std::size_t>(s)]; }
  std::int32_t lower(int s) const { return s == 0 ? 0 : upper(s - 1); }
  /// The length watch of a request in stage s: its upper bound (none in the last stage).
  std::int32_t watchThreshold(int s) const { return s + 1 < stages() ? upper(s) : -1; }
  const std::vector<int>& members(int s) const { return members_[static_cast<std::size_t>(s)]; }
  /// The first pool's latency model (the only one without cluster.pools).
  const QoeModel& qoe() const { return qoe_; }
  double qoeFitError() const { return qoeErr_; }
  /// The latency model of instance i: its pool's (mixed pools, issue 49).
  const QoeModel& qoeOf(int instance) const {
    return profiles_[static_cast<std::size_t>(profileOf_[static_cast<std::size_t>(instance)])].q;
  }
  /// Whether the pools' profiles differ (then a stage costs what its instances cost).
  bool mixedPools() const { return mixed_; }
  /// Stage roles: each stage's pinned instance count (empty: none).
  const std::vector<int>& pinnedStages() const { return pinned_; }
  /// The planning order: stage s takes the next members(s).size() instances of it.
  const std::vector<int>& planOrder() const { return order_; }
  /// The planner's costs at the last plan (its instance models in planning order).
  const PlanCosts& planCosts() const { return planCosts_; }
  const Plan& plan() const { return plan_; }
  const std::vector<PendingMove>& queueOf(int receiver) const { return queues_[static_cast<std::size_t>(receiver)]; }
  std::int64_t handovers() const { return handovers_; }
  std::int64_t rebalances() const { return rebalances_; }
  std::int64_t refinements() const { return refinements_; }
  std::int64_t frozenRefinements() const { return frozen_; }
  std::int64_t starvations() const { return starvations_; }
  std::int64_t bidRounds() const { return bidRounds_; }
  std::int64_t refusedMigrations() const { return refused_; }
  /// Moves a full receiver handed back to be asked for again.
  std::int64_t handedBack() const { return reasks_; }
  /// Boundary history: (time, stage, new upper bound).
  struct BoundaryChange { SimTime t; int stage; std::int32_t upper; };
  const std::vector<BoundaryChange>& boundaryLog() const { return boundaryLog_; }
  /// Stage layout (tests, experiments): stage s gets instances given (the next
  /// ones of planOrder()), upper bounds `uppers` (S-1 values).
  void setLayout(const std::vector<int>& instancesPerStage, const std::vector<std::int32_t>& uppers);
  /// KV demand of an instance: tokens of its requests plus those on their way to it.
  double demand(int instance) const;
  /// Can move live: running on an instance, prefilled, not synthetic, not
  /// already moving (CascadeInfer's and Llumnix's picks).
  static bool movable(const Request& r);

  // ---- the algorithms on their own (tests)
  /// Bid-ask choice: drop the more loaded half, keep the 3 earliest, then the
  /// first reply (all replies arrive together: ties by `pick` in [0, kept)).
  static int chooseBid(std::vector<CascadeBid> bids, std::uint64_t pick);
  /// Range refinement's target boundary for `local` lengths and the
  /// successors' average (pairs of prompt, current length); -1 when frozen
  /// (fewer than minRequests in the pooled set).
  static std::int32_t refineTarget(const QoeModel& q, RefineMode mode, std::vector<std::pair<double, double>> pooled,
                                   int minRequests);
  /// Set division (§4.2 footnote): every m-th element of the sorted set, from the m/2-th.
  static std::vector<std::pair<double, double>> divide(std::vector<std::pair<double, double>> set, int m);
  /// Narrowest length range a stage may have after refinement (tokens):
  /// half the first bucket edge, the shortest length the model is profiled at.
  double minStageWidth() const { return std::max(1.0, static_cast<double>(cfg_.bucketBase) / 2.0); }
  /// The replanner's (input, output) sample: the last arrivals, finished or
  /// not, outputs of unfinished ones estimated (see the definition).
  std::vector<std::pair<std::int64_t, std::int64_t>> lengthSample() const;
  /// Runs one refinement pass now (the timer's work).
  void refineNow();
  /// Runs one receiver pump now.
  void pump(int receiver);
  /// Puts `r` in `receiver`'s priority queue as the confirm message does (tests).
  void enqueueMove(int receiver, const Request& r, double senderLoad, bool interStage = true);
  /// Starts the bid-ask for moving `r` (sender = its instance) to one of `candidates`.
  void ask(Request& r, const std::vector<int>& candidates, bool interStage);

private:
  /// One bid-ask round in flight (pooled: rounds_[slot], free slots in freeRounds_).
  struct AskRound {
    struct Head {  // what the confirm needs (copied out: the slot is freed before it acts)
      RequestHandle h;
      std::int64_t id = 0;
      int sender = -1;
      bool interStage = true;
      SimTime latency = 0;  // of each of the round's messages
      int winner = -1;
      double senderLoad = 0;
    } head;
    std::vector<int> candidates;
    std::vector<CascadeBid> bids;
  };
  /// chooseBid on `bids` in place (they are left sorted and cut).
  static int chooseBidIn(std::vector<CascadeBid>& bids, std::uint64_t pick);
  void bidsFor(std::size_t slot);     // the ask reaches the candidates: they bid
  void chooseFor(std::size_t slot);   // the bids reach the sender: it picks the winner
  void confirmFor(std::size_t slot);  // the confirm reaches the winner: the move is queued
  void setBounds(std::size_t stages);  // every stage unbounded
  void setBound(int s, double b);
  void planNow(bool startup);
  void applyPlan(const Plan& p, const LengthHistogram& h);
  void profilePools(const Simulator& sim);
  /// Pinned stages before a plan: upper bounds bucketBase · 2^s.
  void defaultPinnedLayout();
  /// The instances' models in `order`.
  std::vector<QoeModel> modelsIn(const std::vector<int>& order) const;
  void armWatch(Request& r);
  int stageForLength(std::int64_t len) const;
  std::string stageLabel(int s) const;
  void rebalanceNow();
  double earliestStart(int receiver) const;
  bool senderTransmitting(int sender);
  void pumpAll();
  void markStale(std::int64_t id);

  CascadeConfig cfg_;
  QoeModel qoe_;
  double qoeErr_ = 0;
  bool unfitted_ = false;
  struct PoolProfile {
    QoeModel q;
    double err = 0;
    std::int64_t kvTokens = 0;
    int maxBatch = 0;
  };
  std::vector<PoolProfile> profiles_;  // one per pool (cluster.pools), in pool order
  std::vector<int> profileOf_;         // each instance's profile
  bool mixed_ = false;                 // the profiles differ
  std::vector<int> pinned_;            // stage roles: instances per stage
  std::vector<int> order_;             // planning order of the instances
  PlanCosts planCosts_;
  Plan plan_;
  std::vector<std::int64_t> edges_;
  std::vector<double> bounds_;                // upper bound of each stage (last: +inf), EMA state
  std::vector<std::int32_t> uppers_;          // bounds_ rounded (upper()): kept with it by setBound(s)
  std::vector<std::vector<int>> members_;
  std::vector<int> stageOf_;
  std::vector<std::vector<PendingMove>> queues_;  // per receiver
  std::vector<std::int64_t> inboundTokens_;
  std::vector<std::vector<RequestHandle>> outgoing_;  // live moves this policy started, per sender
  std::vector<std::int64_t> starvingId_;      // per receiver: request id it waits for (-1 none)
  std::vector<std::size_t> starvedAt_;        // per receiver: where its last pump saw the starved entry
  std::vector<std::uint8_t> rebalancing_;     // per sender: a rebalance ask in flight
  std::unordered_set<std::int64_t> asked_;    // ids with an ask or a queued move (never iterated)
  // Which receivers' queues may hold an entry gone stale (finished, aborted
  // or moved) since their last pump: a clean queue's waiting entries need no
  // look while its receiver waits for a starved request.
  std::unordered_multimap<std::int64_t, int> queuedAt_;  // queued move's id -> receiver
  std::vector<std::uint8_t> mayBeStale_;      // per receiver
  std::vector<std::int64_t> abortsSeen_;      // per receiver: Simulator::aborted() at its last pump
  std::vector<AskRound> rounds_;              // bid-ask rounds, pooled
  std::vector<std::size_t> freeRounds_;
  std::vector<double> transferBps_;           // measured per receiver
  std::vector<std::int64_t> asks_, bids_, wins_;  // bid-ask rounds per instance: started, bid in, won
  struct ArrivalSample {
    std::int64_t id = 0, in = 0, out = -1;  // out: -1 until it finishes
  };
  static constexpr std::size_t kLengthSample = 4096;
  std::deque<ArrivalSample> arrivals_;  // the last arrivals, by id (ascending)
  /// Index of `id` in arrivals_, or -1.
  std::ptrdiff_t arrivalIndex(std::int64_t id) const;
  std::int64_t arrivalsSinceReplan_ = 0;
  SimTime lastReplan_ = 0;
  int tReplan_ = -1, tRefine_ = -1, tRebalance_ = -1, tPump_ = -1;
  double cutSecondsPerToken_ = 0;
  std::vector<BoundaryChange> boundaryLog_;
  std::int64_t handovers_ = 0, rebalances_ = 0, refinements_ = 0, frozen_ = 0, starvations_ = 0, bidRounds_ = 0,
               replans_ = 0, refused_ = 0, skips_ = 0, reasks_ = 0;
  double planSeconds_ = 0;
};

}  // namespace sl
