#include "engine/record.h"

namespace sl {

RequestRecord makeRecord(const Request& r, bool finished, const BlockingSplit* split, const FrontTimes* front) {
  RequestRecord rec;
  rec.id = r.id;
  rec.arrival = r.arrival;
  rec.input = r.input;
  rec.reasoning = r.reasoning;
  rec.answer = r.answer;
  rec.predicted = r.predicted;
  rec.generated = r.generated;
  rec.domain = r.domain;
  rec.instance = r.instance;
  rec.finished = finished;
  rec.first_token = r.gFirst;
  rec.reasoning_end = r.gReasoningEnd;
  rec.first_visible = r.gFirstVisible;
  rec.last_token = r.gLast;
  rec.queueing = r.firstScheduled >= 0 ? r.queueing : 0;
  rec.blocking = r.blocking;
  rec.preempted = r.preemptedTime;
  rec.swapped = r.swappedTime;
  rec.migrating = r.migratingTime;
  rec.handoff_wait = r.handoffTime;
  if (split && r.blocking >= 0) {
    rec.blk_transfer = split->transfer;
    rec.blk_dest_wait = split->destWait;
    rec.blk_displaced = split->displaced;
    rec.blk_preempted = split->preempted;
    rec.blk_dest_queue = split->destQueue;
  }
  rec.preemptions = r.preemptions;
  rec.migrations = r.migrations;
  rec.qoe = finished && r.pacer.complete() ? r.pacer.qoe() : -1;
  if (front && front->sent >= 0) {  // serving front end: as the client sees it (docs/engine.md)
    rec.arrival = front->sent;
    const auto shift = [](SimTime& t, std::int32_t d) {
      if (t >= 0) t += d;
    };
    shift(rec.first_token, front->outFirst);
    shift(rec.reasoning_end, front->outReasoningEnd);
    shift(rec.first_visible, front->outFirstVisible);
    shift(rec.last_token, front->outLast);
  }
  return rec;
}

}  // namespace sl
