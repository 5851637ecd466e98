#include "policy/pascal/pascal_global.h"

#include <algorithm>

#include "engine/instance.h"
#include "engine/request.h"
#include "engine/simulator.h"
#include "engine/snapshot.h"

namespace sl {

const DecisionCodeNames& pascalDecisionNames() {
  static const DecisionCodeNames names{
      {"SLO-filtered", "fallback all", "fallback r+a"},
      {"placed", "migrate", "stayed: adaptive", "stayed: same instance", "stayed: no migration",
       "stayed: migrate refused"}};
  return names;
}

const char* PascalGlobal::name() const {
  switch (cfg_.migration) {
    case PascalMigration::Adaptive:
      return "pascal";
    case PascalMigration::Never:
      return "pascal-nomigration";
    case PascalMigration::Always:
      return "pascal-nonadaptive";
  }
  return "pascal";
}

void PascalGlobal::attach(Simulator& sim) {
  GlobalPolicy::attach(sim);
  const int n = sim.numInstances();
  locals_.assign(static_cast<std::size_t>(n), nullptr);
  for (int i = 0; i < n; ++i)
    locals_[static_cast<std::size_t>(i)] = dynamic_cast<PascalLocal*>(&sim.instance(i).policy());
  inbound_.assign(static_cast<std::size_t>(n), {});
  scratchStatus_.resize(static_cast<std::size_t>(n));
  scratchCands_.reserve(static_cast<std::size_t>(n));
}

PascalLocal* PascalGlobal::local(int i) const {
  return locals_[static_cast<std::size_t>(i)];
}

bool PascalGlobal::inboundValid(const Inbound& in) const {
  return in.r->slot >= 0 && in.r->id == in.id && in.r->state == ReqState::Migrating;
}

bool PascalGlobal::behindPace(const Request& r, SimTime now) const {
  if (r.pacer.generated() == 0) return now >= r.pacer.start() + secondsToNs(sim_->config().slo.ttfat_s);
  return r.pacer.buffered(now) <= cfg_.paceLowWatermark;
}

bool PascalGlobal::onPace(int i, const Request* except) const {
  const SimTime now = sim_->now();
  if (const PascalLocal* L = local(i)) {
    // A request behind pace tends to stay so: the one found last time first.
    // A member of the instance's lane is read unsynced first: its phase
    // does not change in the lane (its landmarks are horizons), and tokens
    // it made since its last sync only add to its buffer, so when it is on
    // pace unsynced it is on pace; else it is synced and looked at again.
    const auto behind = [&](const Request& q) {
      return &q != except && !q.inReasoning() && behindPace(q, now) &&
             (q.laneIndex < 0 || behindPace(L->synced(q), now));
    };
    const Request* w = L->paceWitness();
    if (w && behind(*w)) return false;
    for (const Request* q : L->lowQueue())
      if (behind(*q)) {
        L->setPaceWitness(q);
        return false;
      }
  }
  // Answering requests in flight to `i` will join its low queue.
  for (const Inbound& b : inbound_[static_cast<std::size_t>(i)])
    if (inboundValid(b) && b.r != except && !b.r->inReasoning() && behindPace(*b.r, now)) return false;
  return true;
}

std::int64_t PascalGlobal::reasoningCount(int i, const Request* except) const {
  const PascalLocal* L = local(i);
  if (!L) return 0;
  std::int64_t n = L->reasoningCount();
  if (except && except->queue == PascalLocal::kHigh)  // else it is in no high queue
    for (const Request* q : L->highQueue())
      if (q == except) --n;
  return n;
}

std::int64_t PascalGlobal::freshAnsweringCount(int i, const Request* except) const {
  std::int64_t n = 0;
  if (const PascalLocal* L = local(i)) n = L->freshAnsweringCount(except);
  // Answering requests in flight to `i` will join its low queue, fresh.
  for (const Inbound& b : inbound_[static_cast<std::size_t>(i)])
    if (inboundValid(b) && b.r != except) ++n;
  return n;
}

PascalInstanceStatus PascalGlobal::status(int i, const Request* except) const {
  PascalInstanceStatus st;
  st.footprint = sim_->instance(i).kvFootprintBlocks();
  st.onPace = onPace(i, except);
  st.reasoning = reasoningCount(i, except);
  st.freshAnswering = freshAnsweringCount(i, except);
  return st;
}

void PascalGlobal::publishInstance(int instance, std::vector<PolicyField>& out) const {
  if (!sim_ || instance < 0 || instance >= static_cast<int>(locals_.size())) return;
  const PascalInstanceStatus st = status(instance);
  out.push_back({"on pace", st.onPace ? 1.0 : 0.0, "bool",
                 "t_i: every answering request on the instance has tokens buffered (Alg. 1 and 2 prefer these)"});
  out.push_back({"r", static_cast<double>(st.reasoning), "requests",
                 "r_i: requests in the reasoning (high-priority) queue; Alg. 2 sends </think> to the fewest"});
  out.push_back({"a", static_cast<double>(st.freshAnswering), "requests",
                 "a_i: answering requests still in their first quantum, plus copies in flight to it"});
  out.push_back({"m", static_cast<double>(st.footprint), "blocks",
                 "m_i: KV blocks on GPU + CPU; Alg. 1 places new requests on the smallest"});
}

namespace {
struct BoundaryCounts {
  std::int64_t moved = 0, stayed = 0;
};
BoundaryCounts boundaryCounts(const DecisionLog& log) {
  BoundaryCounts c;
  for (const Decision& d : log.entries()) {
    if (!d.boundary) continue;
    if (d.action == PascalAction::Migrate) ++c.moved;
    else ++c.stayed;
  }
  return c;
}
}  // namespace

void PascalGlobal::publishCluster(std::vector<PolicyField>& out) const {
  const BoundaryCounts c = boundaryCounts(log_);
  out.push_back({"migrated at </think>", static_cast<double>(c.moved), "requests",
                 "boundary decisions that started a stop-and-copy migration (so far)"});
  out.push_back({"stayed at </think>", static_cast<double>(c.stayed), "requests",
                 "boundary decisions that kept the request where it was (so far)"});
}

void PascalGlobal::report(std::vector<PolicyReportEntry>& out) const {
  const BoundaryCounts c = boundaryCounts(log_);
  out.push_back({"boundary_migrated", static_cast<double>(c.moved)});
  out.push_back({"boundary_stayed", static_cast<double>(c.stayed)});
  out.push_back({"decisions_dropped", static_cast<double>(log_.dropped())});
  std::vector<std::pair<std::string, std::int64_t>> byReason;  // first-seen order, then sorted
  for (const Decision& d : log_.entries()) {
    const std::string r = DecisionLog::reason(d, &pascalDecisionNames());
    auto it = std::find_if(byReason.begin(), byReason.end(), [&](const auto& p) { return p.first == r; });
    if (it == byReason.end()) byReason.emplace_back(r, 1);
    else ++it->second;
  }
  std::sort(byReason.begin(), byReason.end());
  for (const auto& [r, n] : byReason) out.push_back({"decisions_by_reason/" + r, static_cast<double>(n)});
}

bool PascalGlobal::setKnob(const std::string& name, double value) {
  if (name == "pace_low_watermark") {
    cfg_.paceLowWatermark = static_cast<std::int64_t>(value);
  } else if (name == "headroom_tokens") {
    cfg_.headroomTokens = static_cast<std::int64_t>(value);
  } else if (name == "migrant_displaces") {
    cfg_.displace = value != 0;
  } else {
    return false;
  }
  return true;
}

int PascalGlobal::route(const Request& r) {
  const int n = sim_->numInstances();
  auto& st = scratchStatus_;
  auto& cands = scratchCands_;
  cands.clear();
  for (int i = 0; i < n; ++i) {  // Algorithm 1 reads t_i and m_i only
    st[static_cast<std::size_t>(i)].footprint = sim_->instance(i).kvFootprintBlocks();
    if (onPace(i, nullptr)) cands.push_back(i);
  }
  std::uint8_t sel = PascalSelection::SloFiltered;
  if (cands.empty()) {  // Algorithm 1, lines 4-5
    sel = PascalSelection::FallbackAll;
    for (int i = 0; i < n; ++i) cands.push_back(i);
  }
  int best = -1;
  for (int c : cands)  // line 7: argmin m_i, ties to the lowest index
    if (best < 0 || st[static_cast<std::size_t>(c)].footprint < st[static_cast<std::size_t>(best)].footprint) best = c;
  Decision d;
  d.time = sim_->now();
  d.requestId = r.id;
  d.boundary = false;
  d.chosen = d.instance = best;
  d.selection = sel;
  d.action = PascalAction::Placed;
  log_.add(d, cands);
  return best;
}

std::int64_t PascalGlobal::blocksWithHeadroom(const Request& r, int instance) const {
  const std::int64_t tokens = static_cast<std::int64_t>(r.kvTokens) + std::max<std::int64_t>(1, cfg_.headroomTokens);
  return sim_->instance(instance).blocksFor(tokens);
}

std::int64_t PascalGlobal::roomFor(int i) const {
  return sim_->instance(i).freeGpuBlocks() - sim_->promisedBlocks(i);
}

void PascalGlobal::onReasoningEnd(Request& r) {
  const int n = sim_->numInstances();
  const int cur = r.instance;
  auto& st = scratchStatus_;
  auto& cands = scratchCands_;
  cands.clear();
  for (int i = 0; i < n; ++i) {  // a_i only matters in the fallback
    st[static_cast<std::size_t>(i)].reasoning = reasoningCount(i, &r);
    if (onPace(i, &r)) cands.push_back(i);
  }
  std::uint8_t sel = PascalSelection::SloFiltered;
  if (cands.empty()) {  // Algorithm 2, lines 4-9: all instances, r_i + a_i
    sel = PascalSelection::FallbackRA;
    for (int i = 0; i < n; ++i) {
      st[static_cast<std::size_t>(i)].freshAnswering = freshAnsweringCount(i, &r);
      cands.push_back(i);
    }
  }
  auto key = [&](int i) {
    const PascalInstanceStatus& s = st[static_cast<std::size_t>(i)];
    return sel == PascalSelection::FallbackRA ? s.reasoning + s.freshAnswering : s.reasoning;
  };
  // Line 10: argmin; ties go to the current instance (no move for nothing),
  // else to the most GPU room net of what is promised to copies already
  // bound there (no herding: a burst of boundaries in one instant spreads),
  // else to the lowest index.
  int chosen = -1;
  std::int64_t chosenRoom = 0;
  for (int c : cands) {
    if (chosen < 0 || key(c) < key(chosen)) {
      chosen = c;
      chosenRoom = -1;  // computed on the first tie only
    } else if (key(c) == key(chosen) && chosen != cur) {
      if (c == cur) {
        chosen = c;
        continue;
      }
      if (chosenRoom < 0) chosenRoom = roomFor(chosen);
      const std::int64_t room = roomFor(c);
      if (room > chosenRoom) {
        chosen = c;
        chosenRoom = room;
      }
    }
  }

  Decision d;
  d.time = sim_->now();
  d.requestId = r.id;
  d.boundary = true;
  d.from = cur;
  d.chosen = chosen;
  d.instance = cur;
  d.selection = sel;
  if (cfg_.migration == PascalMigration::Never) {
    d.action = PascalAction::StayedNoMigration;
  } else if (chosen == cur) {
    d.action = PascalAction::StayedSame;
  } else {
    bool stay = false;
    if (cfg_.migration == PascalMigration::Adaptive) {
      // Room net of the blocks promised to copies bound for each side
      // (queued or deferred; started ones have reserved theirs): decisions
      // in one instant see each other.
      const std::int64_t need = blocksWithHeadroom(r, cur);
      const bool hereFits = std::max<std::int64_t>(0, need - r.blocksGpu) <= roomFor(cur);
      const bool thereFits = blocksWithHeadroom(r, chosen) <= roomFor(chosen);
      stay = hereFits && !thereFits;
    }
    if (stay) {
      d.action = PascalAction::StayedAdaptive;
    } else if (sim_->migrate(r, chosen, cfg_.displace)) {
      d.action = PascalAction::Migrate;
      d.instance = chosen;
      auto& in = inbound_[static_cast<std::size_t>(chosen)];
      std::erase_if(in, [this](const Inbound& b) { return !inboundValid(b); });
      in.push_back(Inbound{&r, r.id});
    } else {
      d.action = PascalAction::StayedRefused;
    }
  }
  log_.add(d, cands);
}

void PascalGlobal::onMigrationDone(Request& r, int /*src*/, int dst) {
  auto& in = inbound_[static_cast<std::size_t>(dst)];
  std::erase_if(in, [&](const Inbound& b) { return b.r == &r || !inboundValid(b); });
}

}  // namespace sl
