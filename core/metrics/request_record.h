#pragma once
// One fixed-size record per request, filled by the engine as the request
// progresses and frozen when it finishes (or at the end of the run for a
// request still in flight). Times are absolute SimTime (ns); -1 = "not
// (yet) defined". Derived metrics (40-metrics.md) are accessors in seconds.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "util/time.h"

namespace sl {

inline constexpr SimTime kNoTime = -1;

struct RequestRecord {
  // Token counts are int32 as in Request (issue 16: 168 -> 144 bytes per
  // record; a 10^6-request run holds 10^6 of them).
  std::int64_t id = -1;
  SimTime arrival = 0;          // a
  std::int32_t input = 0;       // prompt tokens
  std::int32_t reasoning = 0;   // R
  std::int32_t answer = 0;      // A (= visible tokens)
  std::int32_t predicted = -1;  // predicted output length (self-scheduling); -1 = none
  std::int32_t generated = 0;   // output tokens produced so far (R + A once finished)
  std::int32_t domain = -1;     // index into the run's domain-name table; -1 = none
  std::int32_t instance = -1;   // final instance; -1 = never placed
  std::int32_t preemptions = 0;
  std::int32_t migrations = 0;
  bool finished = false;

  SimTime first_token = kNoTime;    // g_1
  SimTime reasoning_end = kNoTime;  // g_R; stays -1 when R = 0
  SimTime first_visible = kNoTime;  // g_{R+1}
  SimTime last_token = kNoTime;     // g_{R+A} once finished; last produced so far otherwise

  // Accumulated interval totals (ns).
  SimTime queueing = 0;       // arrival -> first scheduled
  SimTime blocking = kNoTime; // reasoning->answer transition -> first scheduled again; -1 if R = 0 / not yet
  SimTime preempted = 0;      // total time preempted (waiting for recompute or swapped)
  SimTime swapped = 0;        // total time with KV in CPU memory
  SimTime migrating = 0;      // total time with KV in flight
  SimTime handoff_wait = 0;   // disaggregated prefill->decode handoff wait
  // Blocking breakdown (docs/metrics.md): where `blocking` went. These parts
  // and blockingLocalQueue() sum to `blocking` exactly; all 0 while blocking
  // is undefined.
  SimTime blk_transfer = 0;    // its KV copy in flight
  SimTime blk_dest_wait = 0;   // stopped, its copy queued for room at the destination
  SimTime blk_displaced = 0;   // swapped out / dropped by a migrant, until scheduled again
  SimTime blk_preempted = 0;   // preempted otherwise (memory pressure), until scheduled again
  SimTime blk_dest_queue = 0;  // KV on its destination's GPU after a migration, not yet scheduled
  double qoe = -1;            // answer-stream QoE; < 0 = not scored

  /// The rest of `blocking`: KV on its instance's GPU, waiting to be picked
  /// without having migrated (the local queue); 0 while blocking is undefined.
  SimTime blockingLocalQueue() const {
    if (blocking < 0) return 0;
    return blocking - blk_transfer - blk_dest_wait - blk_displaced - blk_preempted - blk_dest_queue;
  }

  // ---- derived (seconds); std::nullopt when undefined --------------------
  bool hasQoe() const { return qoe >= 0; }
  std::int64_t outputTokens() const { return static_cast<std::int64_t>(reasoning) + answer; }

  /// g_{R+1} − a.
  std::optional<double> ttft() const {
    if (first_visible < 0) return std::nullopt;
    return nsToSeconds(first_visible - arrival);
  }
  /// (g_last − g_{R+1}) / (A − 1); 0 for a single visible token. Finished only.
  std::optional<double> tpot() const {
    if (!finished || first_visible < 0 || last_token < 0 || answer < 1) return std::nullopt;
    if (answer == 1) return 0.0;
    return nsToSeconds(last_token - first_visible) / static_cast<double>(answer - 1);
  }
  /// g_{R+1} − g_R; undefined for R = 0.
  std::optional<double> ttfat() const {
    if (reasoning <= 0 || reasoning_end < 0 || first_visible < 0) return std::nullopt;
    return nsToSeconds(first_visible - reasoning_end);
  }
  /// g_R − a; undefined for R = 0.
  std::optional<double> reasoningLatency() const {
    if (reasoning <= 0 || reasoning_end < 0) return std::nullopt;
    return nsToSeconds(reasoning_end - arrival);
  }
  /// g_last − a. Finished only.
  std::optional<double> e2e() const {
    if (!finished || last_token < 0) return std::nullopt;
    return nsToSeconds(last_token - arrival);
  }
  /// E2E / output tokens (R + A). Finished only.
  std::optional<double> normalizedLatency() const {
    const auto e = e2e();
    if (!e || outputTokens() <= 0) return std::nullopt;
    return *e / static_cast<double>(outputTokens());
  }
  std::optional<double> blockingLatency() const {
    if (blocking < 0) return std::nullopt;
    return nsToSeconds(blocking);
  }
  double queueingS() const { return nsToSeconds(queueing); }
  double preemptedS() const { return nsToSeconds(preempted); }
  double swappedS() const { return nsToSeconds(swapped); }
  double migratingS() const { return nsToSeconds(migrating); }
  double handoffWaitS() const { return nsToSeconds(handoff_wait); }
};
// 144 B (issue 16) + the five blocking-breakdown parts; finished records are
// held compactly (RecordStore, zero parts cost nothing there).
static_assert(sizeof(RequestRecord) <= 184, "RequestRecord: 184 bytes (docs/performance.md, issue 16)");

/// Header line of requests.csv (with trailing '\n'). Column order is stable.
std::string requestsCsvHeader();

/// Append one CSV row (with trailing '\n'). Absolute times and intervals are
/// written in seconds with 6 decimals from the integer ns (exact, rounded half
/// away from zero to the microsecond); ratios (tpot, normalized latency, qoe)
/// with std::to_chars fixed 6 decimals. Undefined values are blank.
/// `domainNames[domain]` is written when given, else the domain index.
void appendRequestCsvRow(const RequestRecord& r, std::string& out,
                         std::span<const std::string> domainNames = {});

// Deterministic, locale-independent number formatting shared by the writers.
void appendSecondsNs(SimTime ns, std::string& out);               ///< ns as seconds, 6 decimals
void appendFixed(double v, int decimals, std::string& out);      ///< std::to_chars fixed
void appendInt(std::int64_t v, std::string& out);

}  // namespace sl
