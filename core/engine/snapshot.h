#pragma once
// A read-only picture of the cluster for the GUI, filled on request by
// Simulator::fillSnapshot(Snapshot&) const. Vectors are reused between
// fills, so a steady GUI allocates nothing per frame. Taking a snapshot
// never changes the simulation.
#include <cstdint>
#include <string>
#include <vector>

#include "util/time.h"

namespace sl {

struct RequestChip {
  std::int64_t id = 0;
  std::uint8_t phase = 0;  // Phase
  std::uint8_t state = 0;  // ReqState
  std::int32_t kvTokens = 0;
  bool inBatch = false;
};

struct QueueSnapshot {
  std::string name;
  std::vector<RequestChip> requests;
};

struct InstanceSnapshot {
  int id = 0;
  std::uint8_t role = 0;  // InstanceRole
  std::int64_t gpuBlocksUsed = 0, gpuBlocksReserved = 0, gpuBlocks = 0;
  std::int64_t cpuBlocksUsed = 0, cpuBlocks = 0;
  std::int32_t batchSize = 0;
  bool busy = false;
  std::int64_t tokensProduced = 0;
  std::vector<QueueSnapshot> queues;
};

struct TransferSnapshot {
  std::int64_t requestId = 0;
  int src = 0, dst = 0;
  double progress = 0;  // 0..1
  bool live = false;
};

struct Snapshot {
  SimTime now = 0;
  std::int64_t arrived = 0, finished = 0, inFlight = 0;
  std::int64_t events = 0;
  std::vector<InstanceSnapshot> instances;
  std::vector<TransferSnapshot> transfers;
};

}  // namespace sl
