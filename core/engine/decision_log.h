#pragma once
// A global policy's record of its placement decisions (PASCAL's Algorithm 1
// at arrival, Algorithm 2 + adaptive migration at the </think> boundary).
// Plain data, no engine types: the GUI and the outputs (decisions.csv) read it
// through GlobalPolicy::decisionLog(). Recording it has no simulation effect.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/time.h"

namespace sl {

struct DecisionCodeNames;  // engine/policy_api.h

/// How the candidate set was formed.
enum class DecisionSelection : std::uint8_t {
  SloFiltered,  // candidates = instances whose answering requests all meet pace
  FallbackAll,  // Algorithm 1: no instance met pace, all instances
  FallbackRA,   // Algorithm 2: no instance met pace, all instances ranked by r_i + a_i
};
const char* decisionSelectionName(DecisionSelection s);

/// What happened to the request.
enum class DecisionAction : std::uint8_t {
  Placed,             // arrival routed to `chosen`
  Migrate,            // boundary: stop-and-copy to `chosen` started
  StayedAdaptive,     // boundary: current instance has room, `chosen` has not
  StayedSame,         // boundary: `chosen` is the current instance
  StayedNoMigration,  // boundary: the variant never migrates
  StayedRefused,      // boundary: Simulator::migrate refused (request cannot fit `chosen`)
};
const char* decisionActionName(DecisionAction a);

struct Decision {
  SimTime time = 0;
  std::int64_t requestId = -1;
  bool boundary = false;       // false: placement of a new request; true: </think> boundary
  std::int32_t from = -1;      // current instance (-1 for a placement)
  std::int32_t chosen = -1;    // the algorithm's choice
  std::int32_t instance = -1;  // where the request is after the decision (target when migrating)
  DecisionSelection selection = DecisionSelection::SloFiltered;
  DecisionAction action = DecisionAction::Placed;
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

  /// "SLO-filtered; migrate" style label of a decision.
  static std::string reason(const Decision& d);
  /// The same label from a policy's own name table (GlobalPolicy::decisionCodeNames).
  static std::string reason(const Decision& d, const DecisionCodeNames& names);
  /// PASCAL's table: the names of DecisionSelection and DecisionAction.
  static const DecisionCodeNames& pascalNames();
  /// decisions.csv: time_s,request_id,kind,from,chosen,instance,candidates,selection,action
  /// (candidates space-separated).
  std::string csv() const;

 private:
  std::size_t max_;
  std::vector<Decision> entries_;
  std::vector<std::int32_t> cands_;
  std::int64_t dropped_ = 0;
};

}  // namespace sl
