// Simulator: a request leaving the run -- finished (its RequestRecord) or
// aborted (it can never fit) -- and the records of those still in flight.
#include "engine/simulator.h"

#include "engine/record.h"
#include "metrics/summary.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sl {

void Simulator::finish(Instance& in, Request& r) {
  cancelLive(r);
  releaseGpu(in, r);
  in.cpuUsed_ -= r.blocksCpu;
  r.blocksCpu = 0;
  --in.assigned_;
  in.assignedTokens_ -= static_cast<std::int64_t>(r.input) + r.generated;
  removeLocal(in, r);
  setState(r, ReqState::Finished);
  if (r.synthetic) {  // the policy's own work: no record, metrics or user fingerprint
    --syntheticInFlight_;
    ++synthetic_.completed;
    global_->onSyntheticDone(r);
    releaseRequest(&r);
    return;
  }
  --inFlight_;
  ++probeCompletions_;
  if (prefixCaching()) cachedDone_.emplace_back(r.id, prefixState(r).cachedTokens);
  if (cfg_.speculative.on()) specDone_.push_back({r.id, r.specDrafted, r.specAccepted});
  SimTime outLast = 0;
  if (frontOn_) [[unlikely]] {
    outLast = iterOutDelay_;
    frontTimes(r).outLast = static_cast<std::int32_t>(outLast);
    feStats_.outboundSum += outLast;
    ++feStats_.finished;
  }
  RequestRecord rec = makeRecord(r, true, blockingSplitOf(r), frontTimesOf(r));
  fingerprint_ = hashCombine(hashCombine(fingerprint_, static_cast<std::uint64_t>(r.id)),
                             static_cast<std::uint64_t>(r.gLast));
  rolling_.add(now_, rec.ttft().value_or(0.0), rec.tpot().value_or(0.0), meetsSlo(rec, cfg_.slo),
               qoeViolated(rec, cfg_.slo));
  notify(RequestEvent::Finished, r, in.id_);
  global_->onFinished(r);
  for (SimObserver* o : observers_) o->onFinished(rec);
  records_.push_back(rec);
  const std::int64_t id = r.id;
  const SimTime seen = now_ + outLast;  // the client has the last token (front end: later)
  releaseRequest(&r);
  if (feedback_) clientRequestDone(id, seen);  // a closed loop's client sends its next request
}

void Simulator::abortRequest(Instance& in, Request& r) {
  releaseGpu(in, r);
  in.cpuUsed_ -= r.blocksCpu;
  r.blocksCpu = 0;
  --in.assigned_;
  in.assignedTokens_ -= static_cast<std::int64_t>(r.input) + r.generated;
  if (r.state != ReqState::Waiting || r.firstScheduled >= 0 || in.policy_->size() > 0) removeLocal(in, r);
  setState(r, ReqState::Finished);
  if (r.synthetic) {
    --syntheticInFlight_;
    ++synthetic_.aborted;
    releaseRequest(&r);
    tryStartIncoming(in.id_);
    checkDrained(in.id_);
    return;
  }
  --inFlight_;
  ++aborted_;
  notify(RequestEvent::Aborted, r, in.id_);
  const std::int64_t id = r.id;
  releaseRequest(&r);
  // A client never hangs on a rejected request (front end: the error streams back).
  if (feedback_) clientRequestDone(id, now_ + (frontOn_ ? cfg_.frontend.outputNs(0) : 0));
  tryStartIncoming(in.id_);  // copies waiting for the memory it held
  checkDrained(in.id_);
}

void Simulator::sortRecordsById() {
  records_.sortById();
}

std::vector<RequestRecord> Simulator::inFlightRecords() const {
  std::vector<RequestRecord> out;
  forEachActive([&](const Request& r) {
    if (r.arrival <= now_ && r.instance >= 0 && !r.synthetic) out.push_back(makeRecord(r, false, blockingSplitOf(r), frontTimesOf(r)));
  });
  std::sort(out.begin(), out.end(), [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  return out;
}

}  // namespace sl
