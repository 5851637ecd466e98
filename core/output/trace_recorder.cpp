#include "output/trace_recorder.h"

#include <algorithm>
#include <cassert>
#include <sstream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/decision_log.h"
#include "engine/policy_api.h"
#include "engine/instance.h"
#include "engine/request.h"
#include "metrics/request_record.h"
#include "metrics/decimal.h"

namespace sl {
namespace {
// Trace timestamps are microseconds; 3 decimals keep nanosecond precision.
// Written from the integer ns (appendDecimal: the same text as the double
// quotient's below 4e15 ns, ~46 days; issue 27).
void appendUs(SimTime ns, std::string& o) {
  constexpr SimTime kExact = 4'000'000'000'000'000;
  if (ns > -kExact && ns < kExact) appendDecimal(ns, 3, o);
  else appendFixed(static_cast<double>(ns) / 1000.0, 3, o);
}
// A policy-defined name inside a JSON string (nlohmann escapes; quotes dropped).
void appendEscaped(const std::string& text, std::string& o) {
  const std::string quoted = nlohmann::json(text).dump();
  o.append(quoted, 1, quoted.size() - 2);
}
}  // namespace

TraceRecorder::TraceRecorder(int instances, std::int64_t requestLimit, std::int64_t iterationLimit)
    : requestLimit_(requestLimit), iterationLimit_(iterationLimit), instances_(instances) {
  for (int i = 0; i < instances; ++i) {
    events_ += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(i + 1) +
               ",\"args\":{\"name\":\"instance " + std::to_string(i) + "\"}},\n";
    events_ += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(i + 1) +
               ",\"args\":{\"sort_index\":" + std::to_string(i) + "}},\n";
    events_ += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(i + 1) +
               ",\"tid\":0,\"args\":{\"name\":\"iterations\"}},\n";
  }
}

void TraceRecorder::span(const char* name, const char* cat, int pid, std::int64_t tid, SimTime start,
                         SimTime end, std::int64_t request) {
  roll();
  std::string& o = events_;
  o += "{\"name\":\"";
  o += name;
  o += "\",\"cat\":\"";
  o += cat;
  o += "\",\"ph\":\"X\",\"ts\":";
  appendUs(start, o);
  o += ",\"dur\":";
  appendUs(end - start, o);
  o += ",\"pid\":";
  appendInt(pid, o);
  o += ",\"tid\":";
  appendInt(tid, o);
  if (request >= 0) {
    o += ",\"args\":{\"request\":";
    appendInt(request, o);
    o += '}';
  }
  o += "},\n";
}

const char* TraceRecorder::runningName(const Request& r) {
  if (r.reasoning == 0) return "running";
  return r.generated < r.reasoning ? "reasoning" : "answering";
}

void TraceRecorder::openSpan(std::int64_t id, const char* name, SimTime t, int instance) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= open_.size()) open_.resize(std::max(i + 1, 2 * open_.size()));
  if (!open_[i].name) ++openCount_;
  open_[i] = Open{name, t, instance};
}

void TraceRecorder::closeSpan(std::int64_t id, SimTime t) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= open_.size() || !open_[i].name) return;
  const Open o = open_[i];
  open_[i].name = nullptr;
  --openCount_;
  span(o.name, "request", o.instance + 1, id + 1, o.start, t, id);
}

void TraceRecorder::threadName(int inst, std::int64_t id) {
  std::string& o = events_;
  o += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":";
  appendInt(inst + 1, o);
  o += ",\"tid\":";
  appendInt(id + 1, o);
  o += ",\"args\":{\"name\":\"request ";
  appendInt(id, o);
  o += "\"}},\n";
}

void TraceRecorder::onRequestEvent(RequestEvent e, const Request& r, int inst, SimTime t) {
  if (r.id >= requestLimit_) return;
  roll();
  const std::int64_t id = r.id;
  switch (e) {
    case RequestEvent::Arrived:
      threadName(inst, id);
      openSpan(id, "queued", t, inst);
      break;
    case RequestEvent::FirstScheduled:
    case RequestEvent::Resumed:
      closeSpan(id, t);
      openSpan(id, runningName(r), t, inst);
      break;
    case RequestEvent::ReasoningEnd:
      closeSpan(id, t);
      openSpan(id, "answering", t, inst);
      break;
    case RequestEvent::Preempted:
      closeSpan(id, t);
      openSpan(id, "preempted", t, inst);
      break;
    case RequestEvent::HandoffStart:
      closeSpan(id, t);
      openSpan(id, "handoff", t, inst);
      break;
    case RequestEvent::MigrationStart: {
      closeSpan(id, t);
      openSpan(id, "migrating", t, inst);
      const std::int64_t fid = ++flowIds_;
      flowOf_[id] = fid;
      events_ += "{\"name\":\"migration\",\"cat\":\"migration\",\"ph\":\"s\",\"id\":" + std::to_string(fid) +
                 ",\"pid\":" + std::to_string(inst + 1) + ",\"tid\":" + std::to_string(id + 1) + ",\"ts\":";
      appendUs(t, events_);
      events_ += "},\n";
      break;
    }
    case RequestEvent::MigrationEnd: {
      closeSpan(id, t);
      threadName(inst, id);
      openSpan(id, r.state == ReqState::Running ? runningName(r) : "queued", t, inst);
      if (auto f = flowOf_.find(id); f != flowOf_.end()) {
        events_ += "{\"name\":\"migration\",\"cat\":\"migration\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" +
                   std::to_string(f->second) + ",\"pid\":" + std::to_string(inst + 1) +
                   ",\"tid\":" + std::to_string(id + 1) + ",\"ts\":";
        appendUs(t, events_);
        events_ += "},\n";
        flowOf_.erase(f);
      }
      break;
    }
    case RequestEvent::Finished:
    case RequestEvent::Aborted:
      closeSpan(id, t);
      break;
  }
}

void TraceRecorder::onIteration(const Instance& in, SimTime start, SimTime end) {
  if (iterations_ >= iterationLimit_) return;
  ++iterations_;
  roll();
  std::string& o = events_;
  o += "{\"name\":\"iteration\",\"cat\":\"iteration\",\"ph\":\"X\",\"ts\":";
  appendUs(start, o);
  o += ",\"dur\":";
  appendUs(end - start, o);
  o += ",\"pid\":";
  appendInt(in.id() + 1, o);
  o += ",\"tid\":0,\"args\":{\"batch\":";
  appendInt(in.batchSequences(), o);  // the lane's step included (issue 27)
  o += "}},\n";
}

void TraceRecorder::rollOver() {
  // Every event ends with ",\n": a full block keeps its events, the ",\n"
  // of its last one begins the next block.
  const std::size_t body = events_.size() - 2;
  if (sink_) {
    sink_->write(events_.data(), static_cast<std::streamsize>(body));
    events_.erase(0, body);
    return;
  }
  full_.push_back(std::move(events_));
  full_.back().resize(body);
  events_ = std::string();
  events_.reserve(kBlock + 4096);
  events_ = ",\n";
}

std::int64_t TraceRecorder::decisionsTid() const {
  // Request tracks use tid = id + 1 <= requestLimit_; viewers keep tids in
  // 32 bits.
  return std::min<std::int64_t>(std::max<std::int64_t>(requestLimit_, 0), 2'000'000'000) + 1;
}

void TraceRecorder::appendDecisions(const DecisionLog& log, const DecisionCodeNames* names) {
  const std::int64_t tid = decisionsTid();
  std::vector<bool> named(static_cast<std::size_t>(instances_), false);
  std::string& o = events_;
  for (const Decision& d : log.entries()) {
    // Decisions about a request (within the trace's request limit), and
    // decisions about an instance (request id -1: e.g. Arrow's pool flips).
    const bool aboutInstance = d.requestId < 0;
    if (!aboutInstance && d.requestId >= requestLimit_) continue;
    int inst = d.boundary ? d.from : d.instance;
    if (inst < 0 || inst >= instances_) inst = d.chosen;
    if (inst < 0 || inst >= instances_) continue;
    roll();
    const int pid = inst + 1;
    if (!named[static_cast<std::size_t>(inst)]) {
      named[static_cast<std::size_t>(inst)] = true;
      o += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
           ",\"args\":{\"name\":\"decisions\"}},\n";
      o += "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"sort_index\":-1}},\n";
    }
    o += "{\"name\":\"";
    appendEscaped(DecisionLog::actionName(d, names), o);
    o += "\",\"cat\":\"decision\",\"ph\":\"i\",\"s\":\"t\",\"ts\":";
    appendUs(d.time, o);
    o += ",\"pid\":";
    appendInt(pid, o);
    o += ",\"tid\":";
    appendInt(tid, o);
    o += ",\"args\":{";
    if (!aboutInstance) {
      o += "\"request\":";
      appendInt(d.requestId, o);
      o += ',';
    }
    o += "\"kind\":\"";
    o += aboutInstance ? "instance" : d.boundary ? "boundary" : "placement";
    o += "\",\"from\":";
    appendInt(d.from, o);
    o += ",\"candidates\":[";
    bool first = true;
    for (std::int32_t c : log.candidatesOf(d)) {
      if (!first) o += ',';
      appendInt(c, o);
      first = false;
    }
    o += "],\"chosen\":";
    appendInt(d.chosen, o);
    o += ",\"instance\":";
    appendInt(d.instance, o);
    o += ",\"reason\":\"";
    appendEscaped(DecisionLog::reason(d, names), o);  // the policy's names
    o += "\"}},\n";
  }
}

void TraceRecorder::closeAll(SimTime end, const DecisionLog* decisions, const DecisionCodeNames* names) {
  if (decisions) appendDecisions(*decisions, names);
  for (std::size_t id = 0; id < open_.size() && openCount_ > 0; ++id)  // by id: deterministic
    closeSpan(static_cast<std::int64_t>(id), end);
}

namespace {
constexpr std::string_view kTraceHead = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
constexpr std::string_view kTraceTail = "\n]}\n";
}  // namespace

std::string TraceRecorder::finish(SimTime end, const DecisionLog* decisions, const DecisionCodeNames* names) {
  std::ostringstream os;
  finishTo(os, end, decisions, names);
  return std::move(os).str();
}

void TraceRecorder::streamTo(std::ostream& os) {
  assert(!sink_ && full_.empty());
  os.write(kTraceHead.data(), static_cast<std::streamsize>(kTraceHead.size()));
  sink_ = &os;
}

void TraceRecorder::finishTo(std::ostream& os, SimTime end, const DecisionLog* decisions,
                             const DecisionCodeNames* names) {
  closeAll(end, decisions, names);
  if (sink_) {
    assert(&os == sink_);  // the head and the full blocks are written already
  } else {
    os.write(kTraceHead.data(), static_cast<std::streamsize>(kTraceHead.size()));
    for (const std::string& b : full_) os.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  const std::size_t body = events_.empty() ? 0 : events_.size() - 2;  // without the last ",\n"
  os.write(events_.data(), static_cast<std::streamsize>(body));
  os.write(kTraceTail.data(), static_cast<std::streamsize>(kTraceTail.size()));
}

}  // namespace sl
