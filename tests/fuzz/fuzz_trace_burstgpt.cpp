// libFuzzer target: bytes -> BurstGptTraceReader (strict, lenient, and lenient with every
// option), reading every request. InputError is the expected outcome for bad
// input; a crash, another exception or a sanitizer report is a finding.
#include "fuzz_util.h"
#include "workload/burstgpt_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sl::fuzz::drain(data, size, [](std::unique_ptr<std::istream> in, const sl::TraceOptions& o) {
    return std::make_unique<sl::BurstGptTraceReader>(std::move(in), "fuzz.trace", o);
  });
  return 0;
}
