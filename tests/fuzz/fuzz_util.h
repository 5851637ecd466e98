#pragma once
// Shared helpers for the libFuzzer targets (docs/hardening.md). A target feeds
// the bytes to one loader; sl::InputError is the expected outcome for bad
// input. Any other exception escapes LLVMFuzzerTestOneInput, which libFuzzer
// reports as a crash (uncaught exception -> abort), as it does sanitizer reports.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "util/error.h"
#include "workload/request_spec.h"
#include "workload/trace_formats.h"

namespace sl::fuzz {

inline std::unique_ptr<std::istream> stream(const std::uint8_t* data, std::size_t size) {
  return std::make_unique<std::istringstream>(std::string(reinterpret_cast<const char*>(data), size));
}

/// The option sets every trace target runs the same bytes through: strict;
/// lenient; lenient with a window, scale, cap and context clip; lenient with
/// a huge time_scale.
inline TraceOptions traceOptionSet(int i) {
  TraceOptions o;
  if (i >= 1) o.lenient = true;
  if (i >= 2) {
    o.time_scale = 0.5;
    o.window_start_s = 0.001;
    o.window_end_s = 1e6;
    o.max_requests = 1000;
    o.max_context = 64;
    o.duration_s = 1e5;
  }
  if (i == 3) {  // a large time_scale: scaled times near the end of the int64 ns clock
    o.time_scale = 1e9;
    o.window_start_s.reset();
    o.window_end_s.reset();
    o.duration_s.reset();
  }
  return o;
}
constexpr int kTraceOptionSets = 4;

/// Read every request from `make(options)`; InputError ends the read quietly.
template <class Make>
void drain(const std::uint8_t* data, std::size_t size, Make make) {
  for (int i = 0; i < kTraceOptionSets; ++i) {
    try {
      auto reader = make(stream(data, size), traceOptionSet(i));
      RequestSpec r;
      SimTime prev = 0;
      int n = 0;
      while (reader->next(r) && ++n < 100000) {
        // What every reader promises (workload_source.h, request_spec.h).
        if (r.input < 1 || r.answer < 1 || r.reasoning < 0 || r.arrival < prev) __builtin_trap();
        prev = r.arrival;
      }
    } catch (const InputError&) {
      // expected for bad input
    }
  }
}

}  // namespace sl::fuzz
