#pragma once
// Records the engine's probe samples as timeseries.csv rows (40-metrics.md
// "Time series"): cluster rates, rolling tail latencies and per-instance KV,
// queue and batch columns.
#include <string>
#include <utility>
#include <vector>

#include "engine/observer.h"

namespace sl {

class TimeSeriesRecorder : public SimObserver {
public:
 /// `prefixCache`: add each instance's cache occupancy columns (only then,
 /// so runs without caching keep their exact bytes).
 /// `speculative`: add each instance's draft length and acceptance rate
 /// over the probe interval (same reason).
 explicit TimeSeriesRecorder(int instances, bool prefixCache = false, bool speculative = false);
 void onProbe(const ProbeSample& s) override;
 const std::string& csv() const { return csv_; }
 std::size_t rows() const { return rows_; }
 /// Reads only what a decode lane keeps exact (SimObserver::laneSafe).
 bool laneSafe() const override { return true; }

private:
  std::string csv_;
  std::size_t rows_ = 0;
  bool prefixCache_ = false;
  bool speculative_ = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> lastSpec_;  // (drafted, accepted) at the previous probe
};

}  // namespace sl
