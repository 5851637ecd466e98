#pragma once
// Error types that map to CLI exit codes: InputError (bad user input: exit 2,
// the message names the file and the place) versus anything else (exit 1).
#include <stdexcept>
#include <string>

namespace sl {

/// Bad user input: scenario field, trace row, preset id, CLI value.
/// `what()` is the full user-facing message, e.g.
///   "scenario.json: workload.arrival.rate: must be > 0 (got -3)".
class InputError : public std::runtime_error {
public:
  explicit InputError(const std::string& msg) : std::runtime_error(msg) {}
};

}  // namespace sl
