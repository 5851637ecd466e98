#pragma once
// A workload is a lazy stream of requests: the engine pulls one at a time,
// so a 10^6-request workload never exists as a vector.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "scenario/spec.h"
#include "workload/request_spec.h"

namespace sl {

class WorkloadSource {
public:
  virtual ~WorkloadSource();
  /// Next request into `out`; false when the workload is exhausted.
  /// Arrivals come in non-decreasing time order with ids 0, 1, 2, ...
  virtual bool next(RequestSpec& out) = 0;
  /// Number of requests next() will yield, or -1 if not known up front
  /// (closed loop: the requests it will issue in all).
  virtual std::int64_t expectedCount() const;

  // ---- completion feedback (closed loops; docs/workloads.md "Closed loop")
  // An open-loop source ignores all three. A source whose arrivals depend on
  // completions says so in wantsCompletions(); the engine then reports each
  // of its requests that leaves the run, and next() returning false only
  // means "nothing to issue now" until finished() says it is over.

  /// Asked once, when the Simulator is built. false (the default): the engine
  /// never calls onRequestDone and next() == false ends the workload.
  virtual bool wantsCompletions() const;
  /// Request `id` of this source left the run at `at`: finished (last token)
  /// or aborted by the engine (it can never fit). true: `out` is the
  /// follow-up request (arrival >= at), which the engine schedules at once,
  /// apart from next()'s look-ahead.
  virtual bool onRequestDone(std::int64_t id, SimTime at, RequestSpec& out);
  /// After next() returned false: true when the source will never yield
  /// another request (neither from next() nor as a follow-up). Default true.
  virtual bool finished() const;
};

/// Build the workload of a scenario.
///  - `spec.trace` set: replay the trace (trace_formats.h); `spec.requests`
///    is ignored (use trace.max_requests), lengths come from the file.
///  - otherwise: synthetic, `spec.arrival` for times and the three length
///    distributions for lengths, stopping after `spec.requests` arrivals.
///    `spec.preset` is only consulted for the domain tag (presets.h); the
///    scenario loader is expected to have applied the preset's
///    distributions already.
///  - `spec.arrival.process` closed: a ClosedLoopWorkload (closed_loop.h)
///    over the lengths of the synthetic distributions (`spec.requests` of
///    them) or of the trace rows in file order (timestamps ignored).
///  - `duration_s` set: also stop at the first arrival later than it.
/// Each request's lengths go through clipRequestLengths(max_context).
/// Random streams (derived from `seed`): "arrivals", "input", "reasoning",
/// "answer", "domain", "mixture" (the shared component pick of joint
/// mixtures) and "think" (closed-loop think times), so changing one
/// distribution never shifts another.
/// Joint mixtures: when two or three of the length fields are top-level
/// mixtures with the same number of parts and the same weights, one
/// component is drawn per request and used for all of them (so a
/// reasoning-heavy request gets long reasoning and a short answer together).
/// Relative paths (empirical data, traces) resolve against `base_dir`.
/// Throws InputError on invalid parameters.
std::unique_ptr<WorkloadSource> makeWorkload(const WorkloadSpec& spec, std::uint64_t seed, int max_context,
                                             const std::string& base_dir, std::optional<double> duration_s);

/// Context-window rule applied to every request, synthetic or trace:
///   input     -> [1, max_context - 1]
///   reasoning -> >= 0, answer -> >= 1
///   if reasoning + answer > max_context - input: reasoning is reduced
///   first (down to 0), then answer (down to 1).
/// max_context <= 0 disables the context part (only the lower bounds apply).
void clipRequestLengths(std::int64_t input, std::int64_t reasoning, std::int64_t answer, int max_context,
                        RequestSpec& out);

}  // namespace sl
