#include "workload/live_rate.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace sl {

LiveRateWorkload::LiveRateWorkload(std::unique_ptr<WorkloadSource> inner, double baseRate,
                                   std::optional<double> duration_s)
    : inner_(std::move(inner)), base_(baseRate) {
  if (!std::isfinite(baseRate) || baseRate <= 0) throw InputError("live rate: base rate must be > 0");
  if (duration_s) durationNs_ = secondsToNs(*duration_s);
}

std::int64_t LiveRateWorkload::expectedCount() const {
  return durationNs_ ? -1 : inner_->expectedCount();
}

bool LiveRateWorkload::next(RequestSpec& out) {
  if (ended_ || !inner_->next(out)) {
    ended_ = true;
    return false;
  }
  if (warped_) {
    const double dt = (static_cast<double>(out.arrival) - innerAnchor_) / scale_;
    out.arrival = outerAnchor_ + static_cast<SimTime>(std::llround(std::max(0.0, dt)));
  }
  out.arrival = std::max(out.arrival, last_);
  if (durationNs_ && out.arrival > *durationNs_) {
    ended_ = true;
    return false;
  }
  last_ = out.arrival;
  return true;
}

void LiveRateWorkload::setRate(SimTime at, double rate) {
  if (!std::isfinite(rate) || rate <= 0)
    throw InputError("arrival rate: must be > 0 (got " + std::to_string(rate) + ")");
  at = std::max(at, outerAnchor_);
  innerAnchor_ += static_cast<double>(at - outerAnchor_) * scale_;
  outerAnchor_ = at;
  scale_ = rate / base_;
  warped_ = true;
}

}  // namespace sl
