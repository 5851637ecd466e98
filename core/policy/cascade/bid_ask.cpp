// CascadeInfer's bid-ask market (paper §5): a sender asks the candidate
// instances for bids, picks one, and the winner's priority queue (highest
// sender load first) pumps live migrations under the transfer caps, with
// starvation and refusal limits. The rest of the policy: planning and
// rebalancing in cascade_global.cpp, range refinement in range_refine.cpp.
#include <algorithm>

#include "engine/simulator.h"
#include "policy/cascade/cascade_global.h"

namespace sl {

int CascadeGlobal::chooseBid(std::vector<CascadeBid> bids, std::uint64_t pick) { return chooseBidIn(bids, pick); }

int CascadeGlobal::chooseBidIn(std::vector<CascadeBid>& bids, std::uint64_t pick) {
  if (bids.empty()) return -1;
  std::sort(bids.begin(), bids.end(), [](const CascadeBid& a, const CascadeBid& b) {
    return a.load != b.load ? a.load < b.load : a.receiver < b.receiver;
  });
  bids.resize((bids.size() + 1) / 2);  // drop the more loaded half
  std::sort(bids.begin(), bids.end(), [](const CascadeBid& a, const CascadeBid& b) {
    return a.earliestS != b.earliestS ? a.earliestS < b.earliestS : a.receiver < b.receiver;
  });
  bids.resize(std::min<std::size_t>(3, bids.size()));  // the 3 earliest
  return bids[static_cast<std::size_t>(pick % bids.size())].receiver;
}

double CascadeGlobal::earliestStart(int receiver) const {
  // The queue's tokens: inboundTokens_ is their running sum (the same value
  // as summing the entries in doubles: whole numbers far below 2^53).
  const double buffered = static_cast<double>(inboundTokens_[static_cast<std::size_t>(receiver)]);
  return buffered * sim_->config().kvBytesPerToken / transferBps_[static_cast<std::size_t>(receiver)];
}

void CascadeGlobal::ask(Request& r, const std::vector<int>& candidates, bool interStage) {
  const int sender = r.instance;
  if (std::none_of(candidates.begin(), candidates.end(), [&](int c) { return c != sender; })) return;
  asked_.insert(r.id);
  ++bidRounds_;
  ++asks_[static_cast<std::size_t>(sender)];
  if (!interStage) rebalancing_[static_cast<std::size_t>(sender)] = 1;
  // The round's state lives in a pooled slot (its vectors keep their
  // capacity), so its three messages carry only the slot: no allocation.
  std::size_t slot = rounds_.size();
  if (freeRounds_.empty()) {
    rounds_.emplace_back();
  } else {
    slot = freeRounds_.back();
    freeRounds_.pop_back();
  }
  AskRound& a = rounds_[slot];
  a.head.h = sim_->handleOf(r);
  a.head.id = r.id;
  a.head.sender = sender;
  a.head.interStage = interStage;
  a.head.latency = secondsToNs(cfg_.messageLatencyS);  // the round's three messages: the knob as it was at the ask
  a.candidates.clear();
  for (int c : candidates)
    if (c != sender) a.candidates.push_back(c);
  // Ask: reaches every candidate after one message latency; each bids its
  // load and earliest start as it stands then; the bids travel back.
  sim_->sendMessage(a.head.latency, [this, slot] { bidsFor(slot); });
}

void CascadeGlobal::bidsFor(std::size_t slot) {
  AskRound& a = rounds_[slot];
  a.bids.clear();
  for (int c : a.candidates) {
    a.bids.push_back({c, demand(c), earliestStart(c)});
    ++bids_[static_cast<std::size_t>(c)];
  }
  sim_->sendMessage(a.head.latency, [this, slot] { chooseFor(slot); });
}

void CascadeGlobal::chooseFor(std::size_t slot) {
  AskRound& round = rounds_[slot];
  AskRound::Head& a = round.head;
  const Request* q = sim_->peek(a.h);  // reads only what a decode lane never changes
  if (!q || q->instance != a.sender || q->state == ReqState::Finished) {
    asked_.erase(a.id);
    if (!a.interStage) rebalancing_[static_cast<std::size_t>(a.sender)] = 0;
    freeRounds_.push_back(slot);
    return;
  }
  // All bids arrive together: the "first reply" among the kept ones is a seeded tie-break.
  a.winner = chooseBidIn(round.bids, sim_->rng("cascade-bidask").next());
  a.senderLoad = demand(a.sender);
  // Confirm: ownership passes to the winner's priority queue.
  sim_->sendMessage(a.latency, [this, slot] { confirmFor(slot); });
}

void CascadeGlobal::confirmFor(std::size_t slot) {
  const AskRound::Head a = rounds_[slot].head;
  freeRounds_.push_back(slot);
  if (!a.interStage) rebalancing_[static_cast<std::size_t>(a.sender)] = 0;
  Request* q2 = sim_->resolve(a.h);
  if (!q2 || q2->instance != a.sender) {
    asked_.erase(a.id);
    return;
  }
  ++wins_[static_cast<std::size_t>(a.winner)];
  enqueueMove(a.winner, *q2, a.senderLoad, a.interStage);
  pump(a.winner);
}

void CascadeGlobal::enqueueMove(int receiver, const Request& r, double senderLoad, bool interStage) {
  asked_.insert(r.id);
  PendingMove m;
  m.h = sim_->handleOf(r);
  m.id = r.id;
  m.sender = r.instance;
  m.senderLoad = senderLoad;
  m.tokens = static_cast<std::int64_t>(r.input) + r.generated;
  m.interStage = interStage;
  auto& qu = queues_[static_cast<std::size_t>(receiver)];
  // Highest sender load first; by request id on ties. The queue is kept in
  // that order (entries only leave; their keys never change), so the new
  // entry goes where a stable sort would put it: after every entry not
  // ordered behind it.
  const auto behind = std::upper_bound(qu.begin(), qu.end(), m, [](const PendingMove& a, const PendingMove& b) {
    return a.senderLoad != b.senderLoad ? a.senderLoad > b.senderLoad : a.id < b.id;
  });
  qu.insert(behind, m);
  inboundTokens_[static_cast<std::size_t>(receiver)] += m.tokens;
  queuedAt_.emplace(m.id, receiver);
  mayBeStale_[static_cast<std::size_t>(receiver)] = 1;  // (tests queue any request)
}

void CascadeGlobal::markStale(std::int64_t id) {
  const auto [first, last] = queuedAt_.equal_range(id);
  for (auto it = first; it != last; ++it) mayBeStale_[static_cast<std::size_t>(it->second)] = 1;
}

bool CascadeGlobal::senderTransmitting(int sender) {
  auto& out = outgoing_[static_cast<std::size_t>(sender)];
  std::vector<Request*> cancelled;
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const RequestHandle& h) {
                             Request* r = sim_->peek(h);  // migration and instance: no lane sync needed
                             if (r && r->migration < 0 && r->instance == sender) cancelled.push_back(r);
                             return !r || r->migration < 0 || r->instance != sender;
                           }),
            out.end());
  // A live move the engine abandoned (the request was preempted on its
  // source): the request may be asked for again.
  for (Request* r : cancelled) {
    asked_.erase(r->id);
    armWatch(*r);
  }
  return !out.empty();
}

void CascadeGlobal::pump(int rcv) {
  auto& qu = queues_[static_cast<std::size_t>(rcv)];
  const auto drop = [&](std::size_t k) {
    const auto [first, last] = queuedAt_.equal_range(qu[k].id);
    for (auto it = first; it != last; ++it)
      if (it->second == rcv) {
        queuedAt_.erase(it);
        break;
      }
    inboundTokens_[static_cast<std::size_t>(rcv)] -= qu[k].tokens;
    if (starvingId_[static_cast<std::size_t>(rcv)] == qu[k].id) starvingId_[static_cast<std::size_t>(rcv)] = -1;
    qu.erase(qu.begin() + static_cast<std::ptrdiff_t>(k));
  };
  // The receiver's live count changes within a pump only by its own
  // migrateLive below (nothing here cancels a transfer).
  int rcvLive = sim_->liveMigrations(rcv);
  // Clean: the last pump looked at every entry and none went stale since
  // (none finished, was aborted or moved; nothing within a pump does either).
  // A pump that returns early leaves entries unseen: the queue stays unclean.
  const bool clean = !mayBeStale_[static_cast<std::size_t>(rcv)] &&
                     abortsSeen_[static_cast<std::size_t>(rcv)] == sim_->aborted();
  mayBeStale_[static_cast<std::size_t>(rcv)] = 1;
  abortsSeen_[static_cast<std::size_t>(rcv)] = sim_->aborted();
  std::size_t k = 0;
  if (!qu.empty() && rcvLive >= cfg_.migrationCap) return;  // (what the loop's first test does)
  if (clean && starvingId_[static_cast<std::size_t>(rcv)] >= 0) {
    // The loop below skips every entry before the starved one without
    // reading or changing anything (rcvLive included): start at it.
    // A clean queue is the one the last pump left (entries leave only in a
    // pump, a new one makes the queue unclean), so the starved entry is
    // where that pump saw it; found by id otherwise.
    const std::int64_t starved = starvingId_[static_cast<std::size_t>(rcv)];
    k = starvedAt_[static_cast<std::size_t>(rcv)];
    if (k >= qu.size() || qu[k].id != starved)
      k = static_cast<std::size_t>(
          std::find_if(qu.begin(), qu.end(), [&](const PendingMove& m) { return m.id == starved; }) - qu.begin());
  }
  while (k < qu.size()) {
    if (rcvLive >= cfg_.migrationCap) return;
    PendingMove& m = qu[k];
    if (clean && starvingId_[static_cast<std::size_t>(rcv)] >= 0 && starvingId_[static_cast<std::size_t>(rcv)] != m.id)
      break;  // past the starved entry, still starved and nothing stale: the rest is skipped unread
    if (starvingId_[static_cast<std::size_t>(rcv)] == m.id) starvedAt_[static_cast<std::size_t>(rcv)] = k;
    // Most entries wait (their sender transmits): the checks below read only
    // fields a decode lane never changes, and migrateLive and armWatch sync
    // the request themselves, so it is not synced here.
    Request* r = sim_->peek(m.h);
    if (!r || r->instance != m.sender) {  // finished, or moved elsewhere
      asked_.erase(m.id);
      drop(k);
      continue;
    }
    const std::int64_t starving = starvingId_[static_cast<std::size_t>(rcv)];
    if (starving >= 0 && starving != m.id) {  // waiting for a starved request: nothing else
      ++k;
      continue;
    }
    if (senderTransmitting(m.sender) || sim_->liveMigrations(m.sender) >= cfg_.migrationCap) {
      if (starving < 0) {
        ++m.skips;
        ++skips_;
        if (m.skips > cfg_.starveLimit) {
          starvingId_[static_cast<std::size_t>(rcv)] = m.id;
          starvedAt_[static_cast<std::size_t>(rcv)] = k;
          ++starvations_;
          return;  // the sender sends it right after its current transmission
        }
      }
      ++k;
      continue;
    }
    if (!movable(*r)) {  // preempted or prefilling on its sender: try again later
      ++k;
      continue;
    }
    if (!sim_->migrateLive(*r, rcv)) {
      // No idle KV slots here (or the engine's transfer cap): the paper
      // skips the migration and the request keeps running on its sender
      // (§5 "Migration flow control"). Retried at every pump; after more
      // than starve_limit refusals the receiver hands the request back and
      // the sender asks again, so a peer with room can win it instead of
      // the request waiting on a full receiver (issue 25). The new ask waits
      // for the request's next token on its sender (the length watch):
      // asking again at once can loop through zero-latency messages and
      // refusals without simulated time advancing (a livelock the random
      // invariants found, seeds 339 and 1204 with starve_limit 0).
      ++refused_;
      if (++m.refusals > cfg_.starveLimit) {
        const bool inter = m.interStage;
        asked_.erase(m.id);
        drop(k);
        ++reasks_;
        if (inter) armWatch(*r);  // a new bid-ask for the next stage at its next token
        continue;
      }
      ++k;
      continue;
    }
    rcvLive = sim_->liveMigrations(rcv);
    outgoing_[static_cast<std::size_t>(m.sender)].push_back(m.h);
    if (m.interStage) ++handovers_;
    else ++rebalances_;
    drop(k);
  }
  mayBeStale_[static_cast<std::size_t>(rcv)] = 0;
}

void CascadeGlobal::pumpAll() {
  for (int i = 0; i < sim_->numInstances(); ++i)
    if (!queues_[static_cast<std::size_t>(i)].empty()) pump(i);
}

void CascadeGlobal::onMigrationDone(Request& r, int src, int dst) {
  (void)dst;
  markStale(r.id);
  asked_.erase(r.id);
  senderTransmitting(src);  // prunes the finished transfer
  armWatch(r);
  pumpAll();
}

}  // namespace sl
