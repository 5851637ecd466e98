#pragma once
// Helpers shared by the trace tests.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"
#include "workload/workload_source.h"

namespace sl::tracetest {

/// A unique temp folder removed at scope exit.
class TempDir {
public:
  TempDir() {
    static std::atomic<int> n{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("servelab-traces-" + std::string(info ? info->name() : "x") + "-" + std::to_string(n++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string str() const { return path_.string(); }

private:
  std::filesystem::path path_;
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
