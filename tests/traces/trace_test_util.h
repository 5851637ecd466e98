#pragma once
// Helpers shared by the trace tests.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../common/temp_dir.h"

#include "util/error.h"
#include "workload/workload_source.h"

namespace sl::tracetest {

/// A unique temp folder removed at scope exit (tests/common/temp_dir.h).
class TempDir : public sl::testutil::TempDir {
public:
  TempDir() : sl::testutil::TempDir("servelab-traces") {}
};

inline std::vector<RequestSpec> drain(WorkloadSource& s) {
  std::vector<RequestSpec> v;
  RequestSpec r;
  while (s.next(r)) v.push_back(r);
  return v;
}

/// Runs f and returns the InputError message ("" and a test failure if none).
template <class F>
std::string inputErrorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

}  // namespace sl::tracetest
