#pragma once
// Helpers shared by the workload tests.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../common/temp_dir.h"

#include "util/error.h"

namespace sl::testing {

/// A unique temp folder removed at scope exit (tests/common/temp_dir.h).
class TempDir : public sl::testutil::TempDir {
public:
  TempDir() : sl::testutil::TempDir("servelab-wl") {}
};

inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[i];
}

inline double meanOf(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

/// Runs f and returns the InputError message ("" and a test failure if none).
template <class F>
std::string inputErrorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected sl::InputError";
  return "";
}

}  // namespace sl::testing
