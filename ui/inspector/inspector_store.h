#pragma once
// Per-request timelines and per-instance histories for the inspector
// (50-gui.md "Cluster view": clicking a chip shows its timeline, clicking an
// instance its history). Qt-free. The worker thread feeds it through
// TimelineRecorder (a SimObserver); the GUI thread queries copies. Every
// method locks, so both sides may call at any time.
//
// Memory stays bounded on runs of any length: every in-flight request is
// kept (the engine bounds those), plus the last `keepFinished` finished
// ones; a request keeps at most kMaxEvents events (the rest are counted);
// an instance keeps at most kMaxSamples probe samples (older ones are
// thinned two to one when full, so the whole run stays covered).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/decision_log.h"
#include "engine/observer.h"
#include "metrics/request_record.h"

namespace sl::ui {

struct TimelineEvent {
  SimTime time = 0;
  RequestEvent kind = RequestEvent::Arrived;
  std::int32_t instance = -1;
  std::int32_t generated = 0;  // output tokens produced when it happened
  std::uint8_t state = 0;      // ReqState right after it (Swapped vs Waiting tells swap from recompute)
};

/// A decision the running policy logged about a request (DecisionLog), with
/// the reason in the policy's own words (GlobalPolicy::decisionCodeNames).
struct TimelineDecision {
  SimTime time = 0;
  std::int32_t from = -1;      // where the request was (-1: a placement)
  std::int32_t instance = -1;  // where it is after the decision
  bool boundary = false;
  std::string reason;
};

struct RequestTimeline {
  std::int64_t id = -1;
  SimTime arrival = 0;
  std::int32_t input = 0, reasoning = 0, answer = 0;
  std::int32_t generated = 0;  // at the latest event
  std::int32_t rank = -1, predicted = -1;  // the policy's rank / predicted output length (-1: none)
  std::int32_t cachedTokens = -1;  // prompt tokens served from the prefix cache at its first admission (-1: not yet, or caching off)
  std::uint8_t state = 0;      // ReqState at the latest event
  // Token times as the engine knew them at the latest event (-1 = not yet).
  SimTime firstScheduled = -1, firstToken = -1, reasoningEnd = -1, firstVisible = -1, lastToken = -1;
  std::vector<TimelineEvent> events;
  std::int32_t droppedEvents = 0;  // beyond kMaxEvents
  std::vector<TimelineDecision> decisions;  // at most kMaxEvents
  bool finished = false;
  std::optional<RequestRecord> record;  // once finished

  /// Instances the request lived on, in order (0 → 3 for one migration).
  std::vector<int> instances() const;
};

/// One probe sample of one instance.
struct InstanceSample {
  double timeS = 0;
  double kvUsed = 0;  // GPU KV fraction in use, 0..1
  double cpuUsed = 0;  // CPU swap blocks in use (count)
  std::int32_t queued = 0, running = 0, batch = 0;
  std::int32_t role = 0;
};

struct InstanceHistory {
  int id = 0;
  std::vector<InstanceSample> samples;  // time-ordered, thinned when long
  std::int64_t arrivals = 0;       // routed here on arrival
  std::int64_t served = 0;         // finished here
  std::int64_t preemptions = 0;
  std::int64_t migrationsOut = 0;  // MigrationStart with this instance as source
  std::int64_t migrationsIn = 0;   // MigrationEnd with this instance as destination
  std::int64_t roleChanges = 0;    // seen between probe samples
};

class TimelineStore {
public:
  static constexpr std::size_t kMaxEvents = 256;
  static constexpr std::size_t kMaxSamples = 2048;

  explicit TimelineStore(std::size_t keepFinished = 2000) : keepFinished_(keepFinished) {}

  // ---- producer side (the worker thread)
  void clear();
  /// `cachedTokens`: Simulator::cachedPromptTokens(r) (-1: unknown or caching off).
  void onEvent(RequestEvent e, const Request& r, int instance, SimTime t, std::int32_t cachedTokens = -1);
  void onFinished(const RequestRecord& rec);
  void onProbe(const ProbeSample& s);
  /// New entries of the policy's decision log: each is added to its request's
  /// timeline (when the store keeps one), named with `names` (null: the
  /// log's built-in names).
  void onDecisions(std::span<const Decision> decisions, const DecisionCodeNames* names);
  /// Refresh the token times of an in-flight request between its events (the
  /// worker does it at each publish for the watched request only).
  void refresh(const Request& r);
  /// The request the inspector shows (-1: none).
  void setWatched(std::int64_t id);
  std::int64_t watched() const;

  // ---- consumer side (the GUI thread); copies, so no lock is held after return
  std::optional<RequestTimeline> request(std::int64_t id) const;
  std::optional<InstanceHistory> instance(int id) const;
  std::size_t inFlightCount() const;
  std::size_t finishedCount() const;  // finished timelines kept
  std::size_t keepFinished() const { return keepFinished_; }
  /// Rough heap footprint of everything held (bytes).
  std::size_t approxBytes() const;

private:
  InstanceHistory& hist(int id);  // lock held
  mutable std::mutex m_;
  std::size_t keepFinished_;
  std::int64_t watched_ = -1;
  // Hashed, not ordered: the worker looks a request up at each of its
  // events, and with ~10^5 in flight (B5) a tree's ~17 dependent cache
  // misses per lookup were the worker's largest cost after the engine.
  using Timelines = std::unordered_map<std::int64_t, RequestTimeline>;
  Timelines live_;
  Timelines done_;
  std::deque<std::int64_t> doneOrder_;  // oldest first
  std::vector<InstanceHistory> inst_;
  std::vector<std::int64_t> stride_;  // keep every stride-th probe sample per instance
  std::vector<std::int64_t> seen_;    // probe samples seen per instance
};

/// The SimObserver that feeds a TimelineStore (attach it to the simulator).
/// Lane-safe (engine/observer.h): it reads request events (never raised for
/// an unsynced decode-lane member), probe samples and finished records.
class TimelineRecorder final : public SimObserver {
public:
  explicit TimelineRecorder(TimelineStore& store) : store_(store) {}
  bool laneSafe() const override { return true; }
  void onRequestEvent(RequestEvent e, const Request& r, int instance, SimTime t) override {
    store_.onEvent(e, r, instance, t);
  }
  void onProbe(const ProbeSample& s) override { store_.onProbe(s); }
  void onFinished(const RequestRecord& rec) override { store_.onFinished(rec); }

private:
  TimelineStore& store_;
};

/// Coloured spans of a request's life for the timeline bar, in order.
enum class SpanKind : std::uint8_t { Queued, Prefill, Reasoning, Transition, Answering, Preempted, Migrating };
const char* spanName(SpanKind k);
struct TimelineSpan {
  SimTime start = 0, end = 0;
  SpanKind kind = SpanKind::Queued;
};
/// Phase spans (queued, prefill, reasoning, transition = </think> until the
/// first answer token, answering) first, then the preempted and migrating
/// intervals that overlay them. An open span ends at `now`.
std::vector<TimelineSpan> timelineSpans(const RequestTimeline& t, SimTime now);

}  // namespace sl::ui
