#pragma once
// The two policy interfaces every scheduler implements (30-schedulers.md):
// a LocalPolicy per instance builds each iteration's batch; one GlobalPolicy
// per cluster routes arrivals and may move requests between instances.
// Policies are small classes registered by id (policy/registry.h).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/time.h"

namespace sl {

struct Request;
class IterationBuilder;
class Simulator;
class DecisionLog;
class DecodeLane;

/// One queue of a local policy as the GUI shows it.
struct QueueView {
  std::string name;
  std::vector<const Request*> requests;
};

class LocalPolicy {
public:
  virtual ~LocalPolicy() = default;
  virtual const char* name() const = 0;
  /// A request joins this instance: new arrival (Waiting), migrated in
  /// (Running, KV on GPU), handed off. The policy takes ownership of its order.
  virtual void enqueue(Request& r) = 0;
  /// The request leaves (finished, migrating away, aborted).
  virtual void remove(Request& r) = 0;
  /// Build this iteration's batch. Called at each iteration start.
  virtual void schedule(IterationBuilder& b) = 0;
  /// After each output token of a request that ran in the iteration: called
  /// at the iteration's end, once its tokens are all produced, in batch
  /// order, before its completions and phase-boundary calls. This
  /// default does nothing and marks the hook unused, so the engine stops
  /// calling it (one virtual call per token saved; issue 16). An override
  /// must not call it.
  virtual void onToken(Request& /*r*/) { tokenHookUnused_ = true; }
  /// The iteration's tokens at once: onToken for each request, in batch
  /// order (what the engine calls; a policy may override it to save the
  /// call per token, keeping onToken for single tokens).
  virtual void onTokens(std::span<Request* const> rs) {
    for (Request* r : rs) onToken(*r);
  }
  /// False once the default onToken has run: the policy does not override it.
  bool wantsTokens() const { return !tokenHookUnused_; }
  /// Number of requests held (any state).
  virtual std::size_t size() const = 0;
  /// Queues for snapshots (cleared and refilled; cheap, no simulation effect).
  virtual void describe(std::vector<QueueView>& out) const = 0;
  /// A live knob change (GUI slider), already validated by the registry; it
  /// takes effect at the next scheduling decision. False when not this policy's knob.
  virtual bool setKnob(const std::string& /*name*/, double /*value*/) { return false; }
  /// End of each iteration of this policy's instance: after its tokens,
  /// completions and phase-boundary calls, before the next iteration is
  /// built. One call per iteration (O(1) unless the policy does more).
  virtual void onIterationEnd() {}
  /// The policy's lazy decode lane (engine/decode_lane.h), or null when it
  /// keeps none. A policy with one moves requests into it only when
  /// IterationBuilder::laneAllowed(), steps it with runLane() and answers
  /// size(), describe() and remove() for its members too.
  virtual DecodeLane* decodeLane() { return nullptr; }
  /// A lane member is being moved (a lane-aware global policy migrates it):
  /// it leaves the lane for good (DecodeLane::release), back into the
  /// policy's running requests now, or at the running step's end through
  /// laneReturned(). Only a policy with a lane is ever asked.
  virtual void releaseFromLane(Request& r);
  /// Members released during the step that just ended, synced, out of the lane.
  virtual void laneReturned(std::span<Request* const> rs);
  /// Displacement (a stop-and-copy migrant may make room at its destination,
  /// Simulator::migrate): the residents that rank below `incoming` once it
  /// is enqueued here, in the order they would be preempted (first victim
  /// first). The engine evicts the Running ones among them, in this order,
  /// only as far as the migrant's blocks need. Default: none (the migrant
  /// waits for room).
  virtual void displaceable(const Request& /*incoming*/, std::vector<Request*>& /*out*/) const {}

private:
  bool tokenHookUnused_ = false;
};

struct PolicyField;

/// One figure of a policy's own report (summary.json "policy_report"):
/// `key` may contain '/' to group, e.g. "decisions_by_reason/SLO-filtered; migrate".
struct PolicyReportEntry {
  std::string key;
  double value = 0;
};

/// Names of a policy's decision codes (DecisionLog's selection and action
/// bytes), so the GUI and outputs need no policy-specific table.
struct DecisionCodeNames {
  std::vector<std::string> selections;  // index = code
  std::vector<std::string> actions;
};

class GlobalPolicy {
public:
  virtual ~GlobalPolicy() = default;
  virtual const char* name() const = 0;
  virtual void attach(Simulator& sim) { sim_ = &sim; }
  /// A request arrives, before route(): the policy may edit it (predicted
  /// length, domain, its scratch fields, Simulator::watchLength ...). Its id,
  /// arrival and engine bookkeeping are not the policy's to change.
  virtual void onArrival(Request& /*r*/) {}
  /// Instance for a newly arrived request: must be in [0, instances); any
  /// other value stops the run with std::logic_error (a policy bug).
  virtual int route(const Request& r) = 0;
  /// The request produced its R-th token (`</think>`); it is at an iteration
  /// boundary on its instance. May call Simulator::migrate.
  virtual void onReasoningEnd(Request& /*r*/) {}
  /// Disaggregated: prefill finished on a prefill-role instance. Must hand the
  /// request to a decode instance; the default picks the least-loaded one.
  virtual void onPrefillDone(Request& r);
  virtual void onFinished(const Request& /*r*/) {}
  /// An instance watched with Simulator::watchDrain holds no request any
  /// more (none queued, running, or moving to or from it).
  virtual void onInstanceDrained(int /*instance*/) {}
  /// A synthetic request this policy injected (Simulator::injectRequest)
  /// completed: prefill done and its output tokens produced. It never
  /// reaches onFinished.
  virtual void onSyntheticDone(const Request& /*r*/) {}
  virtual void onMigrationDone(Request& /*r*/, int /*src*/, int /*dst*/) {}
  /// Monitor tick period (0 = none) and handler.
  virtual SimTime tickInterval() const { return 0; }
  virtual void onTick() {}
  /// A named timer started with Simulator::startTimer fired (its id).
  virtual void onTimer(int /*timer*/) {}
  /// End of each iteration of `instance` (after LocalPolicy::onIterationEnd).
  virtual void onIterationEnd(int /*instance*/) {}
  /// `r`'s sequence (prompt + generated tokens) reached the threshold set
  /// with Simulator::watchLength; called at the end of that iteration, once
  /// (the watch is cleared first, so the policy may set a new one).
  virtual void onLengthReached(Request& /*r*/) {}
  /// The policy's placement-decision log (engine/decision_log.h), or null
  /// when it keeps none. Read-only, for the GUI and decisions.csv.
  virtual const DecisionLog* decisionLog() const { return nullptr; }
  /// Named per-instance values for snapshots (appended to `out`; cheap, no
  /// simulation effect). The GUI shows them on the instance card.
  virtual void publishInstance(int /*instance*/, std::vector<PolicyField>& /*out*/) const {}
  /// Cluster-level values for snapshots, charted over time by the GUI.
  virtual void publishCluster(std::vector<PolicyField>& /*out*/) const {}
  /// The names of this policy's decision codes (null when it logs none).
  virtual const DecisionCodeNames* decisionCodeNames() const { return nullptr; }
  /// Figures only the policy knows, for summary.json "policy_report" (called
  /// once at the end of a run; nothing appended = no report).
  virtual void report(std::vector<PolicyReportEntry>& /*out*/) const {}
  /// A live knob change, as LocalPolicy::setKnob.
  virtual bool setKnob(const std::string& /*name*/, double /*value*/) { return false; }
  /// True when the policy never reads an in-flight request's progress
  /// (generated, KV tokens and blocks, token times, pacer) between events
  /// and never moves, hands off, watches or injects requests: the engine may
  /// then keep plain decode progress lazily (engine/decode_lane.h).
  virtual bool progressBlind() const { return false; }
  /// True when the policy reads an in-flight request's progress only
  /// through what the engine hands it or resolves for it (callback
  /// arguments, Simulator::resolve, forEachActive) and instance counters:
  /// the engine may then keep plain decode progress lazily too, and syncs a
  /// member the policy watches (watchLength) or moves (migrate,
  /// migrateLive), taking a moved one out of its lane (issue 27).
  virtual bool laneAware() const { return false; }

protected:
  Simulator* sim_ = nullptr;
};

}  // namespace sl
