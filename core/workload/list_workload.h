#pragma once
// A workload given as a ready list of requests (tests, the GUI's replay of a
// recorded run, programmatic scenarios). Ids are kept as given, or renumbered
// 0, 1, 2, ... in list order.
#include <cstdint>
#include <utility>
#include <vector>

#include "workload/workload_source.h"

namespace sl {

class ListWorkload : public WorkloadSource {
public:
  explicit ListWorkload(std::vector<RequestSpec> v, bool renumber = false) : v_(std::move(v)) {
    if (renumber)
      for (std::size_t i = 0; i < v_.size(); ++i) v_[i].id = static_cast<std::int64_t>(i);
  }
  bool next(RequestSpec& out) override {
    if (i_ >= v_.size()) return false;
    out = v_[i_++];
    return true;
  }
  std::int64_t expectedCount() const override { return static_cast<std::int64_t>(v_.size()); }

private:
  std::vector<RequestSpec> v_;
  std::size_t i_ = 0;
};

}  // namespace sl
