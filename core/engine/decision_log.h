#pragma once
// A global policy's record of its decisions (e.g. PASCAL's Algorithm 1 at
// arrival, Algorithm 2 + adaptive migration at the </think> boundary). The
// selection and action are the policy's own one-byte codes, named by its
// GlobalPolicy::decisionCodeNames() table. Plain data, no engine types: the
// GUI and the outputs (decisions.csv, trace.json) read it through
// GlobalPolicy::decisionLog(). Recording it has no simulation effect.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/time.h"

namespace sl {

struct DecisionCodeNames;  // engine/policy_api.h

struct Decision {
  SimTime time = 0;
  std::int64_t requestId = -1;
  bool boundary = false;       // false: placement of a new request; true: </think> boundary
  std::int32_t from = -1;      // current instance (-1 for a placement)
  std::int32_t chosen = -1;    // the algorithm's choice
  std::int32_t instance = -1;  // where the request is after the decision (target when migrating)
  std::uint8_t selection = 0;  // how the candidates were formed (the policy's code)
  std::uint8_t action = 0;     // what happened (the policy's code)
  std::uint32_t candBegin = 0, candCount = 0;  // slice of DecisionLog::candidates()
};

class DecisionLog {
 public:
  /// At most `maxEntries` decisions are kept (later ones are counted in dropped()).
  explicit DecisionLog(std::size_t maxEntries = 2'000'000) : max_(maxEntries) {}

  void add(Decision d, std::span<const std::int32_t> candidates) {
    if (entries_.size() >= max_) {
      ++dropped_;
      return;
    }
    d.candBegin = static_cast<std::uint32_t>(cands_.size());
    d.candCount = static_cast<std::uint32_t>(candidates.size());
    cands_.insert(cands_.end(), candidates.begin(), candidates.end());
    entries_.push_back(d);
  }
  const std::vector<Decision>& entries() const { return entries_; }
  std::span<const std::int32_t> candidatesOf(const Decision& d) const {
    return std::span<const std::int32_t>(cands_).subspan(d.candBegin, d.candCount);
  }
  std::int64_t dropped() const { return dropped_; }
  std::size_t size() const { return entries_.size(); }

  /// "SLO-filtered; migrate" style label of a decision, from the policy's
  /// name table (GlobalPolicy::decisionCodeNames); a code without a name
  /// (or no table) reads "code N".
  static std::string reason(const Decision& d, const DecisionCodeNames* names);
  static std::string selectionName(const Decision& d, const DecisionCodeNames* names);
  static std::string actionName(const Decision& d, const DecisionCodeNames* names);
  /// decisions.csv: time_s,request_id,kind,from,chosen,instance,candidates,selection,action
  /// (candidates space-separated; selection and action by name).
  std::string csv(const DecisionCodeNames* names) const;

 private:
  std::size_t max_;
  std::vector<Decision> entries_;
  std::vector<std::int32_t> cands_;
  std::int64_t dropped_ = 0;
};

}  // namespace sl
