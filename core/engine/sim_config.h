#pragma once
// The configuration of one simulated cluster (run/run.cpp builds it from a
// scenario; engine/simulator.h runs it).
#include <cstdint>
#include <optional>

#include "cost/frontend.h"
#include "engine/instance.h"
#include "scenario/spec.h"
#include "util/time.h"

namespace sl {

struct SimConfig {
  int instances = 4;
  InstanceConfig instance;
  int tp = 1;
  int gpusPerNode = 8;
  double nvlinkBytesPerSec = 0;  // per instance port; 0 = no NVLink (use host link)
  double nicBytesPerSec = 12.5e9;
  SimTime linkLatency = 5'000;   // per transfer start-up
  double kvBytesPerToken = 0;    // whole instance
  SimTime probeInterval = kNsPerSecond;
  double rollingWindowS = 30;
  std::optional<SimTime> stopAt;
  SloSpec slo;
  std::uint64_t seed = 1;
  int liveMaxConcurrent = 3;     // live migrations per instance (as source or destination)
  int liveMaxRounds = 8;
  SimTime counterWindow = kNsPerSecond;  // Instance::recentDecodeIntervalS window
  FrontEndSpec frontend;         // serving front end (all zero: off)
};

}  // namespace sl
