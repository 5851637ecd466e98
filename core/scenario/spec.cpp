#include "scenario/spec.h"

namespace sl {

namespace {

LengthDist lognormalByQuantiles(double median, double p90) {
  LengthDist d;
  d.kind = LengthDist::Kind::Lognormal;
  d.median = median;
  d.p90 = p90;
  return d;
}

}  // namespace

// Defaults of 60-cli-formats.md: a chat-like workload without reasoning.
WorkloadSpec::WorkloadSpec()
    : input_tokens(lognormalByQuantiles(512, 2048)),
      answer_tokens(lognormalByQuantiles(256, 1024)) {
  reasoning_tokens.kind = LengthDist::Kind::Constant;
  reasoning_tokens.value = 0;
}

}  // namespace sl
