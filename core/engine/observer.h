#pragma once
// Whoever watches a simulation (trace writer, time-series recorder, GUI
// bridge, tests) implements SimObserver. The engine calls it only when at
// least one observer is attached, so batch runs pay nothing (the OMNeT++
// "cenvir" idea).
#include <cstdint>
#include <vector>

#include "util/time.h"

namespace sl {

struct Request;
struct RequestRecord;
class Instance;

enum class RequestEvent : std::uint8_t {
  Arrived,         // routed to `instance`
  FirstScheduled,  // first iteration that includes it
  Preempted,       // swapped out or dropped for recompute
  Resumed,         // back in a batch after a preemption
  ReasoningEnd,    // produced its R-th token
  MigrationStart,  // left `instance` (stop-and-copy or final live hand-over)
  MigrationEnd,    // arrived on `instance`
  HandoffStart,    // disaggregated: prefill done, waiting for a decode instance
  Finished,
  Aborted,         // can never fit this instance's memory
};
const char* requestEventName(RequestEvent e);

/// One probe sample: counters over the last interval and instant state.
struct ProbeInstance {
  std::int64_t gpuBlocks = 0, cpuBlocks = 0, gpuCapacity = 0;
  std::int32_t queued = 0;    // waiting + swapped
  std::int32_t running = 0;   // KV on GPU
  std::int32_t batch = 0;     // sequences in the last iteration
  std::int32_t role = 0;
  // Prefix caching (-1 when off): GPU blocks holding cache entries (in use
  // or free) and the CPU tier's blocks.
  std::int64_t cachedGpuBlocks = -1, cachedCpuBlocks = -1;
  // Prefix caching (-1 when off): prompt tokens of first admissions so far and,
  // of those, tokens served from the cache (the hit rate's two terms).
  std::int64_t promptTokens = -1, cachedTokens = -1;
  // Speculative decoding (-1 when off): the last step's draft length, and
  // the draft tokens verified and accepted so far.
  std::int32_t specK = -1;
  std::int64_t draftedTokens = -1, acceptedTokens = -1;
};
struct ProbeSample {
  SimTime time = 0;
  double intervalS = 1;
  std::int64_t arrivals = 0, completions = 0, tokens = 0;
  std::int64_t inFlight = 0;
  double ttftP50 = -1, ttftP99 = -1, tpotP50 = -1, tpotP99 = -1;  // rolling window, -1 = none
  double sloAttainment = -1, qoeViolationRate = -1;
  std::vector<ProbeInstance> instances;
};

class SimObserver {
public:
  virtual ~SimObserver() = default;
  virtual void onRequestEvent(RequestEvent, const Request&, int /*instance*/, SimTime) {}
  virtual void onIteration(const Instance&, SimTime /*start*/, SimTime /*end*/) {}
  virtual void onTransfer(const Request&, int /*src*/, int /*dst*/, SimTime /*start*/,
                          SimTime /*end*/, double /*bytes*/) {}
  virtual void onProbe(const ProbeSample&) {}
  virtual void onFinished(const RequestRecord&) {}
  /// Whether this observer may watch a run whose decode lanes run
  /// (engine/decode_lane.h): it reads only probe samples, request events,
  /// finished records and Instance::batchSequences() in onIteration -- never
  /// a lane member's progress fields between events, nor Instance::batch()
  /// as the full list of sequences. The output recorders are (issue 27);
  /// anything else (the GUI's bridge, tests) keeps the default: attaching
  /// it turns the lanes off, as before.
  virtual bool laneSafe() const { return false; }
};

}  // namespace sl
