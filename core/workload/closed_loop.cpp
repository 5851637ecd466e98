#include "workload/closed_loop.h"

#include <cmath>

#include "util/error.h"
#include "workload/parse_util.h"

namespace sl {

namespace {
constexpr double kMaxClients = 1000000;
const char* const kTimestampFields =
    ": acts on the trace's timestamps, which a closed loop (workload.arrival.process 'closed') ignores; "
    "remove it or use an open-loop arrival process";
}  // namespace

void checkClosedLoopTrace(const TraceSpec& t) {
  if (t.time_scale != 1.0) throw InputError(std::string("workload.trace.time_scale") + kTimestampFields);
  if (t.window_start_s || t.window_end_s) throw InputError(std::string("workload.trace.window") + kTimestampFields);
}

ClosedLoopWorkload::ClosedLoopWorkload(std::unique_ptr<WorkloadSource> lengths, const ArrivalSpec& spec,
                                       std::uint64_t seed, const std::string& base_dir,
                                       std::optional<double> duration_s)
    : lengths_(std::move(lengths)), rngThink_(Rng::forStream(seed, "think")) {
  if (spec.concurrency < 1)
    throw InputError("workload.arrival.concurrency: must be an integer >= 1 (got " +
                     std::to_string(spec.concurrency) + ")");
  if (spec.think_s) think_.emplace(*spec.think_s, base_dir, "workload.arrival.think_s");
  if (duration_s) {
    if (!(*duration_s >= 0)) throw InputError("run.duration_s: must be >= 0");
    durationNs_ = secondsToNs(*duration_s);
  }
  target_ = spec.concurrency;
  pendingNew_ = spec.concurrency;
}

std::int64_t ClosedLoopWorkload::expectedCount() const {
  return durationNs_ ? -1 : lengths_->expectedCount();
}

bool ClosedLoopWorkload::issue(SimTime at, RequestSpec& out, std::int64_t prev) {
  if (exhausted_ || (durationNs_ && at > *durationNs_)) return false;
  if (!lengths_->next(out)) {
    exhausted_ = true;
    return false;
  }
  out.id = issued_++;
  out.arrival = at;
  if (sessions_) sessions_->issue(prev, out);
  return true;
}

bool ClosedLoopWorkload::next(RequestSpec& out) {
  if (pendingNew_ <= 0) return false;
  if (!issue(newAt_, out)) {
    pendingNew_ = 0;  // used up, or past the duration: these clients never start
    return false;
  }
  --pendingNew_;
  ++active_;
  return true;
}

bool ClosedLoopWorkload::onRequestDone(std::int64_t id, SimTime at, RequestSpec& out) {
  if (active_ > target_) {  // lowered live: this client retires
    --active_;
    if (sessions_) sessions_->forget(id);
    return false;
  }
  const double think = think_ ? think_->sampleReal(rngThink_) : 0.0;
  if (issue(at + secondsToNs(think), out, id)) return true;
  --active_;
  if (sessions_) sessions_->forget(id);
  return false;
}

// Over once no client is left: every client retires for good (lengths used
// up, or past the duration; a live lowering keeps at least one), and until
// then a client's follow-up may still be on its way to the engine.
bool ClosedLoopWorkload::finished() const { return active_ == 0 && pendingNew_ == 0; }

void ClosedLoopWorkload::setConcurrency(SimTime at, double n) {
  if (!std::isfinite(n) || n != std::floor(n) || n < 1 || n > kMaxClients)
    throw InputError("closed-loop clients: must be an integer from 1 to 1000000 (got " + detail::fmt(n) + ")");
  target_ = static_cast<int>(n);
  pendingNew_ = target_ > active_ ? target_ - active_ : 0;
  if (pendingNew_ > 0) newAt_ = at;
}

}  // namespace sl
