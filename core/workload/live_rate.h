#pragma once
// Live arrival-rate control (50-gui.md "Live sliders"): wraps a workload and
// warps its arrival clock so that, from a chosen simulated time on, requests
// arrive `rate / base` times faster. A time change of a Poisson process of
// rate b by a factor k is a Poisson process of rate k·b (a Gamma renewal
// process keeps its cv), so the lengths and the random streams stay exactly
// those of the scenario: scenario + seed + the list of (time, rate) changes
// replays a run exactly. Until the first change the arrival times pass through
// untouched, so an unchanged run has the CLI's fingerprint.
//
// The arrival the simulator has already drawn (one look-ahead) keeps its time;
// the new rate shapes every later gap.
#include <cstdint>
#include <memory>
#include <optional>

#include "util/time.h"
#include "workload/workload_source.h"

namespace sl {

class LiveRateWorkload final : public WorkloadSource {
public:
  /// `inner` must be built without a duration cut-off: the cut-off at
  /// `duration_s` is applied here, on the warped clock. `baseRate` (> 0) is
  /// the rate `inner` produces (the scenario's workload.arrival.rate).
  LiveRateWorkload(std::unique_ptr<WorkloadSource> inner, double baseRate, std::optional<double> duration_s);

  bool next(RequestSpec& out) override;
  std::int64_t expectedCount() const override;

  /// From simulated time `at` on, arrivals come at `rate` req/s. `at` must not
  /// precede the previous change. InputError if rate is not finite and > 0.
  void setRate(SimTime at, double rate);
  double rate() const { return base_ * scale_; }
  double baseRate() const { return base_; }

private:
  std::unique_ptr<WorkloadSource> inner_;
  double base_;
  double scale_ = 1.0;         // current rate / base rate
  bool warped_ = false;
  SimTime outerAnchor_ = 0;    // simulated time of the last change
  double innerAnchor_ = 0;     // the inner clock (ns) at that moment
  SimTime last_ = 0;           // last arrival handed out (keeps times non-decreasing)
  std::optional<SimTime> durationNs_;
  bool ended_ = false;
};

}  // namespace sl
