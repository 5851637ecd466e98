#pragma once
// Records what the running policy publishes about the whole cluster
// (GlobalPolicy::publishCluster: Arrow's pool sizes and flips, PASCAL's
// migrations at </think>, …) at every probe, as policy_series.csv rows:
// time_s,series,value,unit (one row per series per probe, long format, so a
// series that appears later needs no new column). The GUI's Policy chart
// tab draws the same samples. Empty for a policy that publishes nothing.
#include <string>
#include <vector>

#include "engine/observer.h"
#include "engine/snapshot.h"

namespace sl {

class GlobalPolicy;

class PolicySeriesRecorder : public SimObserver {
public:
  explicit PolicySeriesRecorder(const GlobalPolicy& policy);
  void onProbe(const ProbeSample& s) override;
  /// The CSV (header included), or "" when the policy published nothing.
  std::string csv() const;
  std::size_t rows() const { return rows_; }
  /// Reads only what a decode lane keeps exact (SimObserver::laneSafe).
  bool laneSafe() const override { return true; }

private:
  const GlobalPolicy& policy_;
  std::vector<PolicyField> fields_;
  std::string body_;
  std::size_t rows_ = 0;
};

}  // namespace sl
