#include "output/policy_series_recorder.h"

#include <cmath>

#include "engine/policy_api.h"
#include "metrics/request_record.h"
#include "util/csv.h"
#include "util/strings.h"

namespace sl {

PolicySeriesRecorder::PolicySeriesRecorder(const GlobalPolicy& policy) : policy_(policy) {}

void PolicySeriesRecorder::onProbe(const ProbeSample& s) {
  fields_.clear();
  policy_.publishCluster(fields_);
  for (const PolicyField& f : fields_) {
    appendSecondsNs(s.time, body_);
    body_ += ',';
    body_ += csvQuote(f.label);
    body_ += ',';
    if (std::isfinite(f.value)) body_ += formatDouble(f.value);
    body_ += ',';
    body_ += csvQuote(f.unit);
    body_ += '\n';
    ++rows_;
  }
}

std::string PolicySeriesRecorder::csv() const {
  if (rows_ == 0) return {};
  return "time_s,series,value,unit\n" + body_;
}

}  // namespace sl
