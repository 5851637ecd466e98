#pragma once
// Limits a scenario file's fields are checked against (scenario_io.cpp),
// shared with the app's form so it accepts every value a file may hold.

namespace sl {

inline constexpr int kMaxInstances = 4096;  // cluster.instances

}  // namespace sl
