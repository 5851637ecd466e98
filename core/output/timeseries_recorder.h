#pragma once
// Records the engine's probe samples as timeseries.csv rows (40-metrics.md
// "Time series"): cluster rates, rolling tail latencies and per-instance KV,
// queue and batch columns.
#include <string>

#include "engine/observer.h"

namespace sl {

class TimeSeriesRecorder : public SimObserver {
public:
  /// `prefixCache`: add each instance's cache occupancy columns (only then,
  /// so runs without caching keep their exact bytes).
  explicit TimeSeriesRecorder(int instances, bool prefixCache = false);
  void onProbe(const ProbeSample& s) override;
  const std::string& csv() const { return csv_; }
  std::size_t rows() const { return rows_; }
  /// Reads only what a decode lane keeps exact (SimObserver::laneSafe).
  bool laneSafe() const override { return true; }

private:
  std::string csv_;
  std::size_t rows_ = 0;
  bool prefixCache_ = false;
};

}  // namespace sl
