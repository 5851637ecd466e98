#pragma once
// Builds trace.json in the Chrome trace-event format that Perfetto and
// chrome://tracing open: one process per instance; in it a track per request
// (spans: queued, reasoning, answering, preempted, migrating, handoff) and an
// "iterations" track; migrations are flow arrows between instances. A global
// policy's placement / </think> boundary decisions (DecisionLog, e.g. PASCAL)
// are instant events on each instance's "decisions" track.
// Requests with id >= the request limit are not drawn, and iteration spans
// stop after a cap, so huge runs give a trace a viewer can still open.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>
#include <unordered_map>
#include <vector>

#include "engine/observer.h"

namespace sl {

class DecisionLog;
struct DecisionCodeNames;

class TraceRecorder : public SimObserver {
public:
  TraceRecorder(int instances, std::int64_t requestLimit, std::int64_t iterationLimit = 50000);
  void onRequestEvent(RequestEvent e, const Request& r, int instance, SimTime t) override;
  void onIteration(const Instance& in, SimTime start, SimTime end) override;
  /// Close open spans at `end` and return the whole JSON document. With a
  /// decision log, each decision about a drawn request (id < the request
  /// limit) becomes an instant event ("ph":"i", category "decision") on the
  /// "decisions" track of the instance it was taken on (a placement: the
  /// chosen instance; a boundary: the instance the request was on), with
  /// args request, kind, from, candidates, chosen, instance, reason.
  std::string finish(SimTime end, const DecisionLog* decisions = nullptr, const DecisionCodeNames* names = nullptr);
  /// The same document written to `os` in pieces, never copied into one
  /// string (issue 27: trace.json of a big run is tens of MB).
  void finishTo(std::ostream& os, SimTime end, const DecisionLog* decisions = nullptr,
                const DecisionCodeNames* names = nullptr);
  /// Stream the document to `os` as the run goes (issue 27: a big run's
  /// trace is never held whole): the head now, each full block of events as
  /// it fills, the rest at finishTo() with the same `os`. The same bytes as
  /// finish(). Call before the first event.
  void streamTo(std::ostream& os);
  /// The thread id of the instances' "decisions" tracks (above every
  /// request's track).
  std::int64_t decisionsTid() const;
  /// Reads only what a decode lane keeps exact (SimObserver::laneSafe).
  bool laneSafe() const override { return true; }

private:
  void appendDecisions(const DecisionLog& log, const DecisionCodeNames* names);
  /// Decisions, then every open span closed at `end`: events_ is complete.
  void closeAll(SimTime end, const DecisionLog* decisions, const DecisionCodeNames* names);
  struct Open {
    const char* name = nullptr;  // nullptr: no span open
    SimTime start = 0;
    int instance = 0;
  };
  void span(const char* name, const char* cat, int pid, std::int64_t tid, SimTime start, SimTime end,
            std::int64_t request);
  void openSpan(std::int64_t id, const char* name, SimTime t, int instance);
  void closeSpan(std::int64_t id, SimTime t);
  /// The "request <id>" name of its track on instance `inst`.
  void threadName(int inst, std::int64_t id);
  static const char* runningName(const Request& r);

  // The events so far: full blocks of ~1 MB, then the one being filled
  // (issue 27: a single growing string copied itself at every doubling).
  // A full block is kept (or, streaming, written to sink_) without its last
  // event's ",\n", which begins the next block: the document's last event
  // has none.
  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  void roll() {
    if (events_.size() >= kBlock) [[unlikely]] rollOver();
  }
  void rollOver();
  std::vector<std::string> full_;
  std::string events_;
  std::ostream* sink_ = nullptr;
  std::int64_t requestLimit_, iterationLimit_, iterations_ = 0;
  std::int64_t flowIds_ = 0;
  std::vector<Open> open_;  // by request id (ids are dense from 0)
  std::size_t openCount_ = 0;
  std::unordered_map<std::int64_t, std::int64_t> flowOf_;
  int instances_;
};

}  // namespace sl
