#pragma once
// A request in flight: identity, progress, KV residency and the timeline
// counters that become its RequestRecord when it finishes (10-engine.md).
#include <cstddef>
#include <cstdint>

#include "metrics/token_pacer.h"
#include "util/time.h"

namespace sl {

enum class ReqState : std::uint8_t {
  Waiting,      // never ran, or queued for recompute (no KV)
  Running,      // KV on GPU, owned by an instance's local policy
  Swapped,      // KV in CPU memory
  Migrating,    // KV in flight to another instance (stop-and-copy) or awaiting it
  HandoffWait,  // disaggregated: prefill done, waiting for a decode instance
  Finished,
};
const char* reqStateName(ReqState s);

enum class Phase : std::uint8_t { Prefill, Reasoning, Answering };
const char* phaseName(Phase p);

/// A reference to a request that is safe to keep across time (a delayed
/// message, a timer, a queued decision): its pool slot plus the slot's
/// generation. Simulator::resolve(h) gives the request back, or nullptr once
/// it has finished or been aborted -- also after its slot has been reused by
/// another request (a new generation), so a stale handle is detected, never
/// silently taken for someone else. A `Request*` is only valid until the
/// request finishes.
struct RequestHandle {
  std::int32_t slot = -1;
  std::uint32_t generation = 0;
  bool empty() const { return slot < 0; }
  friend bool operator==(const RequestHandle&, const RequestHandle&) = default;
};

// Layout: what every iteration reads or writes for every request it runs
// (the local policy's pass, IterationBuilder, the end of the iteration and
// the token it emits) fills the first cache line, the answer-stream pacer
// the second; everything touched once per request or per rare event
// follows. A decode token then touches two cache lines of its request
// instead of five (profile: docs/performance.md).
struct alignas(64) Request {
  // ---- hot: progress and per-iteration state (cache line 0)
  std::int32_t generated = 0;      // output tokens produced so far (0..R+A)
  std::int32_t prefilled = 0;      // tokens of the current prefill target computed
  std::int32_t prefillTarget = 0;  // tokens whose KV must exist before decoding
  std::int32_t kvTokens = 0;       // tokens whose KV exists (on GPU or CPU)
  std::int32_t blocksGpu = 0;      // KV blocks held on the instance's GPU
  std::int32_t batchIndex = -1;    // index in the current iteration's batch, -1 if none
  std::int32_t reasoning = 0;      // R
  std::int32_t answer = 1;         // A
  std::int32_t quantumUsed = 0;    // tokens since last (re)placement (RR; local-policy scratch)
  std::int32_t lengthWatch = -1;   // Simulator::watchLength threshold (sequence tokens), -1 if none
  ReqState state = ReqState::Waiting;
  bool synthetic = false;          // injected by a policy (Simulator::injectRequest): real work, no user metrics
  bool scheduled = false;          // has run in an iteration (firstScheduled >= 0)
  bool pendingMigration = false;   // migrate at the current iteration's end (local-policy scratch)
  std::int32_t queue = 0;          // which queue of the policy (local-policy scratch)
  SimTime gLast = -1;              // last token so far
  SimTime blockingStart = -1;      // reasoning->answer transition awaiting a schedule

  // ---- hot for answer tokens (cache line 1)
  TokenPacer pacer;                // answer-stream QoE, O(1) state

  // ---- identity (from the workload)
  std::int64_t id = 0;
  SimTime arrival = 0;
  std::int32_t input = 1;
  std::int32_t domain = -1;
  std::int32_t predicted = -1;  // predicted output length (self-scheduling)
  std::int32_t slot = -1;       // index in the simulator's request pool
  std::uint32_t generation = 0; // bumped each time the pool slot is handed out (RequestHandle)

  // ---- KV residency, placement
  std::int32_t blocksCpu = 0;      // KV blocks held in the instance's swap space
  std::int32_t instance = -1;      // owning instance (-1 before routing)
  std::int32_t rank = -1;          // a policy's rank for it (self-scheduling: within its batch), -1 if none

  // ---- local-policy scratch (owned by whichever policy holds the request)
  std::int64_t policyKey = 0;      // ordering key (RR position, priority ...)

  // ---- engine bookkeeping (O(1) lookups; policies read, never write)
  std::int32_t migration = -1;     // the simulator's active transfer of this request, -1 if none
  bool heldLocally = false;        // held by its instance's local policy (between enqueue and remove)
  bool everPreempted = false;      // currently preempted for recompute (Waiting with history)

  // ---- timeline accounting
  SimTime stateSince = 0;          // when `state` was entered
  SimTime firstScheduled = -1;     // first iteration start that included it
  SimTime queueing = 0;            // arrival -> first schedule
  SimTime preemptedTime = 0;       // time preempted (Swapped, or Waiting for recompute)
  SimTime swappedTime = 0;         // time with KV on CPU
  SimTime migratingTime = 0;       // time in Migrating
  SimTime handoffTime = 0;         // disaggregated wait for a decode instance
  std::int32_t preemptions = 0;
  std::int32_t migrations = 0;
  std::int32_t specDrafted = 0;   // draft tokens verified for it (speculative decoding)
  std::int32_t specAccepted = 0;  // of them, accepted and emitted

  SimTime gFirst = -1;             // g_1
  SimTime gReasoningEnd = -1;      // g_R
  SimTime gFirstVisible = -1;      // g_{R+1}
  SimTime blocking = -1;           // PASCAL blocking latency (ns), -1 when undefined

  // ---- lazy decode lane (engine/decode_lane.h); engine bookkeeping
  std::int64_t laneSince = 0;      // lane steps completed when its fields were last synced
  std::int64_t laneTicket = 0;     // its current membership (stale finish entries do not match)
  std::int32_t laneIndex = -1;     // index among the lane's members, -1 if not in a lane
  std::int32_t laneBucket = 0;     // the lane's block bucket it is counted in

  std::int32_t outputLen() const { return reasoning + answer; }
  bool prefillDone() const { return prefilled >= prefillTarget; }
  bool finished() const { return generated >= reasoning + answer; }
  Phase phase() const {
    if (!prefillDone()) return Phase::Prefill;
    return generated < reasoning ? Phase::Reasoning : Phase::Answering;
  }
  /// Reasoning phase in PASCAL's sense: prefill counts as reasoning.
  bool inReasoning() const { return generated == 0 || generated < reasoning; }
};
/// Arrival order, then id (ids are unique): FCFS's queue order, and the
/// batch order of a lane's decodes (engine/decode_lane.h).
inline bool arrivalOrder(const Request* a, const Request* b) {
  return a->arrival != b->arrival ? a->arrival < b->arrival : a->id < b->id;
}

static_assert(offsetof(Request, pacer) == 64 && sizeof(TokenPacer) <= 64,
              "Request: the per-iteration fields fill cache line 0, the pacer line 1");
static_assert(sizeof(Request) <= 320, "Request: five cache lines at most (docs/performance.md)");

}  // namespace sl
