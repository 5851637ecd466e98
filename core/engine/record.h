#pragma once
// Turning an in-flight Request into its fixed-size RequestRecord.
#include "engine/request.h"
#include "metrics/request_record.h"

namespace sl {

/// Where a request's blocking latency went (docs/metrics.md "Blocking
/// breakdown"): the engine adds each piece of [</think>, first scheduled
/// again) to the part of the state the request was in, so the parts sum to
/// `blocking` exactly. Kept beside the request pool (Request is at its size
/// bound), indexed by pool slot, only for requests that reached </think>.
struct BlockingSplit {
  SimTime transfer = 0;    // Migrating, its KV copy started (latency + bytes)
  SimTime destWait = 0;    // Migrating, its copy queued for room at the destination
  SimTime displaced = 0;   // Swapped / Waiting after a migrant displaced it
  SimTime preempted = 0;   // Swapped / Waiting after an ordinary preemption
  SimTime destQueue = 0;   // Running (KV on GPU) unscheduled after a migration landed
  SimTime localQueue = 0;  // Running unscheduled where it was (no migration landed yet)
  SimTime flowSince = -1;  // when the current copy's flow started, -1 if none
  bool byMigrant = false;  // its current preemption was a displacement
  bool landed = false;     // a migration landed since </think>
};

/// A request's times in the serving front end (docs/engine.md "Serving
/// front end"), beside the pool like BlockingSplit, only while it is on:
/// the client's send time (the request's `arrival` is then the engine's)
/// and the output path's delay (ns) of g_1, g_R, g_{R+1} and the last token
/// (of the latest token the engine emitted outside a plain decode step,
/// until it finishes).
struct FrontTimes {
  SimTime sent = -1;
  std::int32_t outFirst = 0;
  std::int32_t outReasoningEnd = 0;
  std::int32_t outFirstVisible = 0;
  std::int32_t outLast = 0;
};

/// With `front`, the record is the client's view: arrival = sent, each
/// token time plus its output delay.
RequestRecord makeRecord(const Request& r, bool finished, const BlockingSplit* split = nullptr,
                         const FrontTimes* front = nullptr);

}  // namespace sl
