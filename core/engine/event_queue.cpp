#include "engine/event_queue.h"

#include <algorithm>

namespace sl {

const char* eventKindName(EventKind k) {
  switch (k) {
    case EventKind::Arrival: return "arrival";
    case EventKind::InstanceWake: return "wake";
    case EventKind::IterationEnd: return "iteration_end";
    case EventKind::FlowStart: return "flow_start";
    case EventKind::NetworkUpdate: return "network_update";
    case EventKind::MonitorTick: return "monitor_tick";
    case EventKind::Message: return "message";
    case EventKind::Probe: return "probe";
    case EventKind::StopRun: return "stop";
    case EventKind::Timer: return "timer";
    case EventKind::FrontArrival: return "front_arrival";
    case EventKind::FrontDone: return "front_done";
  }
  return "?";
}

// The heap algorithms get a lambda, not the function pointer `later`, so
// the comparison is inlined into them (same order, same heap: the
// trajectory is unchanged; issue 16).
void EventQueue::push(SimTime time, EventKind kind, std::int64_t a) {
  heap_.push_back(Event{time, nextSeq_++, kind, a});
  std::push_heap(heap_.begin(), heap_.end(), [](const Event& x, const Event& y) { return later(x, y); });
}

Event EventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), [](const Event& x, const Event& y) { return later(x, y); });
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace sl
