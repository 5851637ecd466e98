#pragma once
// The simulation's single event queue: a binary heap ordered by (time,
// sequence number). Ties resolve in insertion order, so runs are
// reproducible (10-engine.md). Events are small PODs; no allocation per
// event once the heap has grown.
#include <cstdint>
#include <vector>

#include "util/time.h"

namespace sl {

enum class EventKind : std::uint8_t {
  Arrival,        // a = request slot
  InstanceWake,   // a = instance: start an iteration if idle
  IterationEnd,   // a = instance
  FlowStart,      // a = flow id: a KV transfer begins moving bytes (after latency)
  NetworkUpdate,  // a = network version: earliest flow completion
  MonitorTick,    // global policy tick
  Message,        // a = message slot: control message delivery
  Probe,          // time-series sampling tick
  StopRun,        // run.duration_s reached
  Timer,          // a = timer id: a global policy's named timer (Simulator::startTimer)
  FrontArrival,   // a = request slot: the request reaches the API server (front end on)
  FrontDone,      // a = request slot: its tokenisation ends (front end on)
};

const char* eventKindName(EventKind k);

struct Event {
  SimTime time;
  std::uint64_t seq;
  EventKind kind;
  std::int64_t a;
};

class EventQueue {
public:
  void push(SimTime time, EventKind kind, std::int64_t a);
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }

private:
  static bool later(const Event& x, const Event& y) {
    return x.time != y.time ? x.time > y.time : x.seq > y.seq;
  }
  std::vector<Event> heap_;
  std::uint64_t nextSeq_ = 0;
};

}  // namespace sl
