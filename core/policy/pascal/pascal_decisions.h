#pragma once
// PASCAL's decision codes (DecisionLog's selection and action bytes) and
// their names: how Algorithm 1 / 2 formed the candidate set and what
// happened to the request. The engine knows only the bytes; the GUI and the
// outputs read the names through GlobalPolicy::decisionCodeNames().
#include <cstdint>

#include "engine/policy_api.h"

namespace sl {

/// How the candidate set was formed.
struct PascalSelection {
  enum : std::uint8_t {
    SloFiltered,  // candidates = instances whose answering requests all meet pace
    FallbackAll,  // Algorithm 1: no instance met pace, all instances
    FallbackRA,   // Algorithm 2: no instance met pace, all instances ranked by r_i + a_i
  };
};

/// What happened to the request.
struct PascalAction {
  enum : std::uint8_t {
    Placed,             // arrival routed to `chosen`
    Migrate,            // boundary: stop-and-copy to `chosen` started
    StayedAdaptive,     // boundary: current instance has room, `chosen` has not
    StayedSame,         // boundary: `chosen` is the current instance
    StayedNoMigration,  // boundary: the variant never migrates
    StayedRefused,      // boundary: Simulator::migrate refused (request cannot fit `chosen`)
  };
};

/// The names, indexed by code ("SLO-filtered", "migrate", ...).
const DecisionCodeNames& pascalDecisionNames();

}  // namespace sl
