#pragma once
// Closed-loop clients (docs/workloads.md "Closed loop"): `concurrency`
// clients; at t = 0 each issues its first request; a client issues its next
// request when its previous one leaves the run (last token, or aborted by
// the engine) plus a think time drawn from `think_s` (seconds; none = 0).
// The lengths come, in order, from another source (the synthetic length
// distributions, or a trace's rows with their timestamps ignored): the
// closed loop ends when that source is used up (`workload.requests`
// requests, or the trace's rows up to trace.max_requests).
//
// The engine reports completions through WorkloadSource::onRequestDone and
// schedules the follow-up it returns; next() hands out only the first
// requests of new clients (at t = 0, or at a live change of the client
// count). Ids are 0, 1, 2, ... in the order requests are issued; think
// times use the "think" random stream, one draw per follow-up. finished()
// waits for every client to retire, so the engine never ends the run while
// a client's follow-up is still on its way (during its think time).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "scenario/spec.h"
#include "util/rng.h"
#include "util/time.h"
#include "workload/length_dist.h"
#include "workload/shared_prefix.h"
#include "workload/workload_source.h"

namespace sl {

class ClosedLoopWorkload final : public WorkloadSource {
public:
  /// `lengths` yields the requests' lengths in order (its arrival times and
  /// ids are ignored). `spec.concurrency` >= 1 and a valid `spec.think_s`
  /// (InputError naming workload.arrival.*). With `duration_s`, no request is
  /// issued for a time later than it.
  ClosedLoopWorkload(std::unique_ptr<WorkloadSource> lengths, const ArrivalSpec& spec, std::uint64_t seed,
                     const std::string& base_dir, std::optional<double> duration_s);

  bool next(RequestSpec& out) override;
  std::int64_t expectedCount() const override;
  bool wantsCompletions() const override { return true; }
  bool onRequestDone(std::int64_t id, SimTime at, RequestSpec& out) override;
  bool finished() const override;

  /// Live change of the client count from simulated time `at` on: raising it
  /// adds clients whose first requests arrive at `at` (the engine pulls them
  /// through next(): Simulator::pollWorkload); lowering it retires clients,
  /// each as its current request leaves the run. InputError unless n is an
  /// integer in [1, 1000000].
  void setConcurrency(SimTime at, double n);
  /// The client count asked for (the scenario's, or the last live change).
  int concurrency() const { return target_; }
  /// Clients with a request issued and not yet left the run.
  int activeClients() const { return active_; }
  std::int64_t issued() const { return issued_; }
  /// Shared prefixes (workload.prefix): each client's requests form
  /// sessions of `p.turns` turns, a session's first prompt led by the
  /// system prompt (workload/shared_prefix.h). Call before the first next().
  void setSessions(const PrefixSpec& p, int maxContext) { sessions_.emplace(p, maxContext); }
  const SessionBook* sessions() const { return sessions_ ? &*sessions_ : nullptr; }
  /// The source the lengths come from (trace statistics).
  const WorkloadSource& lengthSource() const { return *lengths_; }

private:
  bool issue(SimTime at, RequestSpec& out, std::int64_t prev = -1);
  std::optional<SessionBook> sessions_;

  std::unique_ptr<WorkloadSource> lengths_;
  std::optional<LengthSampler> think_;
  Rng rngThink_;
  std::optional<SimTime> durationNs_;
  int target_ = 1;         // clients asked for
  int active_ = 0;         // clients with a request in the engine
  int pendingNew_ = 0;     // new clients whose first request next() still owes
  SimTime newAt_ = 0;      // ... and its arrival time
  std::int64_t issued_ = 0;
  bool exhausted_ = false;  // the length source is used up (clients retire as their requests finish)
};

/// The trace fields that act on timestamps (time_scale != 1, window) make no
/// sense for a closed loop: InputError naming the field.
void checkClosedLoopTrace(const TraceSpec& t);

}  // namespace sl
