#pragma once
// The discrete-event simulator of one cluster: event loop, arrivals,
// iteration scheduling, KV transfers (stop-and-copy, live, disaggregated
// hand-off), control messages, monitor and probe ticks. Policies act on it
// through the public "policy API" section; observers watch it. Its
// configuration is engine/sim_config.h; the head of simulator.cpp maps the
// .cpp files that implement it, one concept each.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "cost/frontend.h"
#include "engine/event_queue.h"
#include "engine/instance.h"
#include "engine/network.h"
#include "engine/observer.h"
#include "engine/policy_api.h"
#include "engine/record.h"
#include "engine/request.h"
#include "engine/sim_config.h"
#include "engine/snapshot.h"
#include "metrics/record_store.h"
#include "metrics/request_record.h"
#include "metrics/rolling.h"
#include "scenario/spec.h"
#include "util/rng.h"
#include "workload/workload_source.h"

namespace sl {

using LocalPolicyFactory = std::function<std::unique_ptr<LocalPolicy>(int instance)>;

class Simulator {
public:
  Simulator(const SimConfig& cfg, const CostModel& cost, std::unique_ptr<WorkloadSource> workload,
            std::unique_ptr<GlobalPolicy> global, const LocalPolicyFactory& makeLocal);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Observers see every request exact: attaching one stops lazy decode
  /// lanes (engine/decode_lane.h) from taking new steps.
  void addObserver(SimObserver* o);

  /// Process one event. Returns false when the run is over.
  bool step();
  /// Run until the end (or until simulated time `until`, if given).
  void run(SimTime until = kTimeNever);
  bool done() const { return done_; }
  /// A workload with completion feedback (a closed loop) has new requests to
  /// hand out through next() (a live raise of its client count): pull them
  /// now if no look-ahead arrival is pending. No-op for other workloads.
  void pollWorkload();
  /// The workload the simulator pulls from (live controls reach it here).
  WorkloadSource* workloadSource() { return workload_.get(); }
  const WorkloadSource* workloadSource() const { return workload_.get(); }
  /// True when the run ended because nothing could progress any more while
  /// requests were still in flight (a policy deadlock); they stay in flight.
  bool stalled() const { return stalled_; }

  // ---- results
  SimTime now() const { return now_; }
  /// Time of the next event step() would process; -1 when none is queued.
  SimTime nextEventTime() const { return events_q_.empty() ? SimTime{-1} : events_q_.top().time; }
  std::int64_t arrived() const { return arrived_; }
  std::int64_t finishedCount() const { return static_cast<std::int64_t>(records_.size()); }
  std::int64_t inFlight() const { return inFlight_; }
  std::int64_t aborted() const { return aborted_; }
  std::int64_t eventsProcessed() const { return events_; }
  std::int64_t preemptions() const { return preemptions_; }
  std::int64_t migrations() const { return migrationsDone_; }
  /// Stop-and-copy migrations abandoned because their copy could never start
  /// (a wait cycle: every destination on it waits for blocks held by a copy
  /// waiting on the next); the request resumed on its source.
  std::int64_t migrationsAbandoned() const { return migrationsAbandoned_; }
  /// GPU blocks promised to copies bound for `instance` that hold no
  /// reservation there yet: deferred to their source's iteration end, or
  /// queued (FCFS) at `instance` for room. Reserved blocks of started copies
  /// are already out of Instance::freeGpuBlocks().
  std::int64_t promisedBlocks(int instance) const;
  /// Disaggregated hand-offs completed (counted apart from migrations).
  std::int64_t handoffs() const { return handoffsDone_; }
  /// What synthetic requests (injectRequest) cost, reported apart from the
  /// user's: count injected / completed / aborted, prompt and output tokens
  /// computed, and GPU-seconds (each iteration's duration shared pro rata
  /// by the tokens it computed).
  struct SyntheticCost {
    std::int64_t injected = 0, completed = 0, aborted = 0;
    std::int64_t promptTokens = 0, outputTokens = 0;
    double gpuSeconds = 0;
  };
  const SyntheticCost& syntheticCost() const { return synthetic_; }
  /// Finished requests' records, in finishing order until sortRecordsById()
  /// (held compactly: metrics/record_store.h).
  const RecordStore& records() const { return records_; }
  /// Sorts records() by request id in place (ids are unique), so the end of
  /// a run can summarize them without a copy. Call at the end of a run.
  void sortRecordsById();
  /// Records of requests still in flight (call at the end of a run).
  std::vector<RequestRecord> inFlightRecords() const;
  /// Frees the request pool's memory when it holds no request (the end of a
  /// drained run, before its summary), so the run's peak memory is not the
  /// pool's high-water mark plus the summary's buffer. A request allocated
  /// later gets a fresh pool whose generations continue past every handle
  /// given out so far (stale handles stay stale). Returns whether it freed.
  bool releaseIdlePool();
  /// The serving front end's totals (docs/engine.md "Serving front end"):
  /// requests that passed it, their time from the client's send to the
  /// engine's arrival (sum and max), the most requests waiting for a
  /// tokeniser at once, and the output path's delay summed over finished
  /// requests' last tokens. All zero while it is off.
  struct FrontEndStats {
    std::int64_t requests = 0;
    SimTime inboundSum = 0, inboundMax = 0;
    std::int64_t maxWaiting = 0;
    SimTime outboundSum = 0;
    std::int64_t finished = 0;
  };
  const FrontEndStats& frontEndStats() const { return feStats_; }
  bool frontEndOn() const { return frontOn_; }
  /// Requests sent by their clients that have not reached the engine yet.
  std::int64_t inFrontEnd() const { return feInFlight_; }
  /// Hash over the event trajectory (time, kind, ids): the run's fingerprint.
  std::uint64_t fingerprint() const { return fingerprint_; }
  const SimConfig& config() const { return cfg_; }
  const CostModel& cost() const { return cost_; }
  /// The node instance i sits on (KV transfers: its NVLink ports inside a
  /// node, the nodes' NICs across; every pool starts a node of its own).
  int nodeOf(int i) const { return nodeOf_[static_cast<std::size_t>(i)]; }
  /// The cluster.pools entry instance i belongs to (0 without pools).
  int poolOf(int i) const { return poolOf_[static_cast<std::size_t>(i)]; }
  /// Its pool's role: Both = colocated, Prefill / Decode = fixed by the
  /// scenario for a disaggregated policy (cluster.pools[].role).
  InstanceRole poolRole(int i) const { return poolRole_[static_cast<std::size_t>(i)]; }
  /// True when a pool has a prefill or decode role.
  bool poolRolesGiven() const { return poolRolesGiven_; }
  /// An MoE model's split and per-rank load for one step (fillSnapshot).
  void fillMoeSnapshot(const CostModel& cost, const BatchShape& shape, MoeStepSnapshot& m) const;
  void fillSnapshot(Snapshot& s) const;

  // ---- policy API
  int numInstances() const { return static_cast<int>(instances_.size()); }
  Instance& instance(int i) { return *instances_[static_cast<std::size_t>(i)]; }
  const Instance& instance(int i) const { return *instances_[static_cast<std::size_t>(i)]; }
  GlobalPolicy& globalPolicy() { return *global_; }
  /// Hands a live knob change to the global policy and every instance's local
  /// policy (call between events); true when at least one of them took it.
  /// Validation is the registry's (applyLiveKnob).
  bool setPolicyKnob(const std::string& name, double value);
  /// Speculative decoding's draft length from the next step on (a live
  /// change; 0 = off, up to 16): false, changing nothing, when the run has
  /// no speculation (cluster.speculative) or k is out of range.
  bool setSpeculativeK(int k);
  Rng& rng(const std::string& stream);
  /// Stop-and-copy move of `r` to `dst` (deferred to the end of the source's
  /// running iteration when `r` is in it). The destination reserves blocks
  /// first; copies wait FCFS in its incoming queue until it can. With
  /// `displace`, a copy at the head of that queue that lacks room evicts
  /// (swaps out) the destination's residents that rank below it
  /// (LocalPolicy::displaceable), between the destination's iterations, when
  /// that makes room; otherwise it waits. A copy that can never start (a
  /// wait cycle) is abandoned: `r` resumes on its source.
  bool migrate(Request& r, int dst, bool displace = false);
  /// Residents evicted by displacing migrants (also counted as preemptions).
  std::int64_t displacements() const { return displacements_; }
  /// Disaggregated hand-off of a request in HandoffWait to decode instance `dst`.
  void handoff(Request& r, int dst);
  /// A hand-off still queued at its destination (waiting for room, its copy
  /// not started) is withdrawn: the request stays in HandoffWait on its
  /// prefill instance until the policy calls handoff() again. False when
  /// there is none to withdraw (never queued, or its copy already runs).
  bool cancelHandoff(Request& r);
  /// Moves a queued hand-off to another destination (cancelHandoff + handoff).
  bool retargetHandoff(Request& r, int dst);
  /// Live migration: `r` keeps decoding on its source while its KV is copied
  /// in rounds. Returns false if a concurrency cap or memory refuses it.
  bool migrateLive(Request& r, int dst);
  int liveMigrations(int instance) const { return liveCount_[static_cast<std::size_t>(instance)]; }
  /// Deliver `fn` after `delay` (control messages, bid-ask).
  void sendMessage(SimTime delay, std::function<void()> fn);
  void setRole(int instance, InstanceRole role);
  /// A policy-defined pool label for an instance (shown on its card; no
  /// engine meaning: capabilities are the role). "" = none.
  void setPoolLabel(int instance, std::string label) { poolLabels_[static_cast<std::size_t>(instance)] = std::move(label); }
  const std::string& poolLabel(int instance) const { return poolLabels_[static_cast<std::size_t>(instance)]; }
  /// Call GlobalPolicy::onInstanceDrained(instance) once it holds no request:
  /// its local policy holds none, no iteration runs, no request is assigned
  /// to it (hand-off waits and outgoing copies included) and none is being
  /// copied to it. A policy draining an instance (to flip its role, to take
  /// it out of a pool) stops routing to it and watches it; an instance that
  /// is drained already is reported at once, from within this call.
  void watchDrain(int instance);
  bool drained(int instance) const;
  /// Wake an idle instance (an iteration starts at the current time).
  void wake(int instance);
  // ---- requests held across time (engine/request.h RequestHandle)
  RequestHandle handleOf(const Request& r) const { return {r.slot, r.generation}; }
  /// The request `h` names, or nullptr once it has finished or been aborted
  /// (also when its slot now holds another request).
  Request* resolve(RequestHandle h);
  const Request* resolve(RequestHandle h) const;
  /// `resolve` without syncing a decode-lane member first: for reads of
  /// fields a lane never changes (state, instance, migration, id, input,
  /// prefill progress, arrival), as `forEachActiveUnsynced` is for scans.
  /// Calls that act on the request (migrateLive, watchLength) sync it
  /// themselves.
  Request* peek(RequestHandle h);
  const Request* peek(RequestHandle h) const;
  /// As resolve, for a handle the policy knows is live: a stale one throws
  /// std::logic_error (a policy bug) instead of returning another request.
  Request& request(RequestHandle h);

  /// A request of the policy's own (e.g. a rank prompt) on `instance`, now:
  /// real work for the engine (prefill, decode, KV blocks, preemption like
  /// any request) with `output` >= 0 tokens (0: it completes at the end of
  /// its prefill). It never counts as user traffic: no arrival, record,
  /// requests.csv row, SLO/QoE, throughput or user fingerprint, no observer
  /// event; GlobalPolicy::onSyntheticDone tells the policy it completed.
  /// Ids are negative (-1, -2, ...). Returns its handle.
  RequestHandle injectRequest(int instance, std::int32_t input, std::int32_t output);

  // ---- hooks driven by the engine (GlobalPolicy::onLengthReached, onTimer)
  /// Tell the global policy (onLengthReached) at the end of the iteration in
  /// which `r`'s sequence (prompt + generated tokens) reaches `tokens`. One
  /// threshold per request: a new call replaces it, -1 clears it. Checked by
  /// one comparison per token, no virtual call per token.
  void watchLength(Request& r, std::int32_t tokens) {
    if (r.lengthWatch == tokens) return;  // (a lane member's entry for it stays valid)
    r.lengthWatch = tokens;
    if (r.laneIndex >= 0) [[unlikely]]
      laneRewatch(r);
  }
  /// Many watchLength calls at once (a policy re-watching every request
  /// when a stage boundary moves): while a guard lives, lane members' new
  /// watches are only appended, and each lane rebuilds its watch heap once
  /// when the guard ends. The watches fire exactly as without it. Not nested.
  class WatchBatch {
  public:
    explicit WatchBatch(Simulator& sim);
    ~WatchBatch();
    WatchBatch(const WatchBatch&) = delete;
    WatchBatch& operator=(const WatchBatch&) = delete;

  private:
    Simulator& sim_;
  };
  /// A named periodic timer: GlobalPolicy::onTimer(id) every `period`
  /// (first at now + period). A policy may run several, each with its own
  /// period. Returns the timer's id.
  int startTimer(const std::string& name, SimTime period);
  /// Stops a timer (no more onTimer calls); its id is not reused.
  void stopTimer(int id);
  /// New period from the timer's next firing on.
  void setTimerPeriod(int id, SimTime period);
  const std::string& timerName(int id) const { return timers_[static_cast<std::size_t>(id)].name; }
  int timerCount() const { return static_cast<int>(timers_.size()); }

  /// Requests on instance i that are queued (Waiting or Swapped) and
  /// running, as probe samples report them: counters the engine keeps as
  /// states and instances change (issue 27: the probe no longer scans the
  /// pool). Equal to a scan of forEachActiveUnsynced (tests/run compare).
  std::int32_t probeQueued(int i) const { return probeCounts_[static_cast<std::size_t>(i)].queued; }
  std::int32_t probeRunning(int i) const { return probeCounts_[static_cast<std::size_t>(i)].running; }

  /// Every request currently held by an instance's local policy or in flight to it.
  template <class F> void forEachActive(F&& f) const {
    syncLanes();
    forEachActiveUnsynced(f);
  }
  /// `r.generated` as a sync would make it, without syncing: a lane
  /// member's tokens since its last sync counted from the lane's steps
  /// (its pacer and other fields stay as they are). For scans that read
  /// lengths only (forEachActiveUnsynced), which then leave the replay to a
  /// later, longer sync.
  std::int32_t generatedNow(const Request& r) const;
  /// The same without syncing lane members first: for readers of fields a
  /// lane never changes (state, instance, arrival, id), such as the probe.
  template <class F> void forEachActiveUnsynced(F&& f) const {
    for (const auto& chunk : pool_)
      for (std::size_t i = 0; i < kChunk; ++i)
        if (chunk[i].slot >= 0 && chunk[i].state != ReqState::Finished) f(chunk[i]);
  }

  // ---- prefix caching (cluster.prefix_caching; engine/prefix_cache.h)
  bool prefixCaching() const { return cfg_.instance.prefixCaching; }
  /// Leading blocks of `r`'s prompt (prompt + generated after a recompute
  /// preemption) cached on `instance` (GPU or CPU tier), as its admission
  /// there would find them now; 0 when caching is off.
  std::int32_t cachedPrefixBlocks(const Request& r, int instance) const;
  /// Tokens served from the cache at `r`'s first admission (-1: not yet
  /// admitted or caching off).
  std::int32_t cachedPromptTokens(const Request& r) const;
  /// A key for session affinity: the request's session (workload.prefix
  /// turns); else, for a prompt with named token segments (Mooncake
  /// hash_ids, a system prompt), its leading segments up to the first one
  /// that not every request before it shared (a prefix all share, such as
  /// a system prompt every Mooncake request starts with, names no
  /// conversation); else its own id. Fixed at arrival.
  std::uint64_t sessionKey(const Request& r) const;
  /// (id, cachedPromptTokens) of every user request that finished or is in
  /// flight, by id (requests.csv's cached_tokens; caching on only).
  std::vector<std::pair<std::int64_t, std::int32_t>> cachedTokensById() const;
  /// Speculative decoding is on (cluster.speculative).
  bool speculative() const { return cfg_.speculative.on(); }
  /// (id, draft tokens, accepted tokens) of every user request that finished
  /// or is in flight, by id (requests.csv's draft_tokens / accepted_tokens;
  /// speculation on only).
  struct SpecCounts {
    std::int64_t id;
    std::int32_t drafted, accepted;
    friend bool operator<(const SpecCounts& a, const SpecCounts& b) { return a.id < b.id; }
  };
  std::vector<SpecCounts> speculativeTokensById() const;
  /// `r`'s cache bookkeeping (nullptr when caching is off); tests read it.
  const PrefixState* prefixStateOf(const Request& r) const {
    return prefixCaching() && r.slot >= 0 && static_cast<std::size_t>(r.slot) < prefix_.size() ? &prefixState(r)
                                                                                               : nullptr;
  }
  /// Cluster totals of the instances' prefix-cache counters.
  PrefixCacheStats prefixCacheStats() const;

private:
  friend class IterationBuilder;
  static constexpr std::size_t kChunk = 4096;
  struct Migration {
    Request* r = nullptr;
    int src = -1, dst = -1;
    bool live = false;
    bool handoff = false;
    bool finalCopy = false;       // live: the stop-and-copy remainder
    std::int32_t copiedTokens = 0;
    std::int32_t round = 0;
    std::int64_t reserved = 0;    // blocks reserved on dst
    std::int64_t flow = -1;
    std::int32_t flowTokens = 0;
    SimTime flowStart = 0;
    bool active = false;
    ReqState before = ReqState::Running;  // stop-and-copy: its state when it left (resumed on abandonment)
    std::int64_t queuedSeq = 0;           // order in which copies were queued at a destination
    bool displace = false;                // may evict lower-ranked residents of dst (migrate)
  };

  /// A lane member moved or watched: a progress-blind global policy
  /// promised never to (a policy bug: throws); for a lane-aware one
  /// (GlobalPolicy::laneAware) the member is synced (laneSyncMember), a new
  /// watch re-keyed (laneRewatch), and a member that starts to move leaves
  /// its lane (laneRelease: LocalPolicy::releaseFromLane).
  void laneSyncMember(Request& r, const char* what);
  void laneRewatch(Request& r);
  void laneRelease(Request& r, const char* what);
  [[noreturn]] void laneViolation(const char* what) const;
  /// Decide once, at the first event, whether lanes may run.
  void startLanes();
  /// Bring every lane member's fields up to date (logically const: what a
  /// reader sees is what the eager path would have written).
  void syncLanes() const;
  Request* allocRequest();
  void releaseRequest(Request* r);
  void setState(Request& r, ReqState s);
  /// Blocking breakdown (engine/record.h): open r's split at </think>; add
  /// [max(stateSince, blockingStart), t) to the part of r's current state;
  /// close it at r's first schedule after </think> (sets r.blocking).
  void openBlocking(Request& r);
  void accountBlocking(Request& r, SimTime t);
  void closeBlocking(Request& r, SimTime t);
  BlockingSplit& blockingSplit(const Request& r) { return blockingSplits_[static_cast<std::size_t>(r.slot)]; }
  const BlockingSplit* blockingSplitOf(const Request& r) const {
    return r.blocking >= 0 && static_cast<std::size_t>(r.slot) < blockingSplits_.size()
               ? &blockingSplits_[static_cast<std::size_t>(r.slot)]
               : nullptr;
  }
  void notify(RequestEvent e, const Request& r, int inst);

  void scheduleNextArrival();
  std::int32_t pushArrival(const RequestSpec& spec);
  void clientRequestDone(std::int64_t id, SimTime at);
  void pullAfterArrival(std::int64_t slot);
  void onArrival(std::int64_t slot);
  // serving front end (frontend.cpp)
  void onFrontArrival(std::int64_t slot);
  void onFrontDone(std::int64_t slot);
  void startTokenize(Request& r);
  /// Everything sent has left the run (the run may end).
  bool allDone() const { return workloadDone_ && inFlight_ == 0 && syntheticInFlight_ == 0 && feInFlight_ == 0; }
  void startIteration(Instance& inst);
  void endIteration(Instance& inst);
  void emitToken(Instance& inst, Request& r, std::vector<Request*>& boundary);
  /// A decode sequence's speculative step: draws how many of the step's k
  /// draft tokens the target accepts (per request and position, from
  /// cfg_.speculative's α; docs/engine.md) and emits 1 + accepted tokens,
  /// never past the request's output length.
  void speculativeDecode(Instance& inst, Request& r, int k, std::vector<Request*>& boundary);
  /// Draft tokens of `r`'s step starting at output position `pos` that are
  /// accepted (0..k): the leading run of positions whose uniform is below α_i.
  int acceptedDrafts(const Request& r, int k) const;
  void finish(Instance& inst, Request& r);
  void abortRequest(Instance& inst, Request& r);
  void probe();
  // stall guard (stall.cpp)
  bool idleWithWork() const;
  void checkStall();
  bool stallFallback(bool tick);
  void onTimerEvent(std::int64_t id);
  // The local policy of `in` takes / gives up `r` (keeps the O(1) counters).
  void enqueueLocal(Instance& in, Request& r);
  void removeLocal(Instance& in, Request& r);

  // transfers
  std::int64_t newMigration(Request& r, int src, int dst, bool live, bool handoff);
  void beginStopAndCopy(std::int64_t mid);
  void tryStartIncoming(int dst);
  void startFlow(std::int64_t mid, std::int32_t tokens);
  void onFlowStart(std::int64_t mid);
  void onNetworkUpdate();
  void onFlowDone(std::int64_t mid);
  void completeMigration(std::int64_t mid);
  void cancelLive(Request& r);
  void resolveWaitCycles();
  void abandonStopAndCopy(std::int64_t mid);
  bool abandonNewestQueuedCopy();
  bool displaceFor(Instance& dst, const Request& incoming, std::int64_t need);
  void scheduleNetworkWake();
  void resourcesFor(int src, int dst, int& a, int& b) const;
  std::int64_t blocksToHold(const Request& r) const;

  // prefix caching (prefix.cpp): per pool slot while caching is on
  PrefixState& prefixState(const Request& r) const { return prefix_[static_cast<std::size_t>(r.slot)]; }
  void prefixOnArrival(Request& r, const RequestSpec* spec);
  std::uint64_t affinityKeyOnArrival(const PrefixState& s, std::int64_t id);
  /// Admission: take the cached leading blocks `m` (prefilled, KV, table).
  void prefixAdmit(Instance& in, Request& r, const PrefixMatch& m);
  /// Register `r`'s computed full blocks not yet in the cache.
  void prefixRegister(Instance& in, Request& r);
  /// `r` gives up its GPU blocks (finish, preemption, leaving by copy):
  /// its computed blocks go to the cache, the private rest is freed.
  void releaseGpu(Instance& in, Request& r);
  /// Evict free cache blocks until the instance's memory fits.
  void prefixReclaim(Instance& in) {
    if (in.cache_) in.cache_->reclaim(in.gpuUsed_, in.gpuReserved_, in.cfg_.gpuBlocks);
  }

  SimConfig cfg_;
  const CostModel& cost_;
  std::unique_ptr<WorkloadSource> workload_;
  std::unique_ptr<GlobalPolicy> global_;
  std::vector<std::unique_ptr<Instance>> instances_;
  std::vector<SimObserver*> observers_;

  EventQueue events_q_;
  SimTime now_ = 0;
  bool done_ = false;
  bool stalled_ = false;
  int stallChecks_ = 0;
  bool workloadDone_ = false;
  bool started_ = false;
  bool anyLane_ = false;
  bool laneAware_ = false;  // the global policy is lane-aware (GlobalPolicy::laneAware)
  std::int64_t events_ = 0;
  std::uint64_t fingerprint_ = 1469598103934665603ull;

  // request pool: stable addresses, slots reused
  std::vector<std::unique_ptr<Request[]>> pool_;
  std::vector<std::int32_t> freeSlots_;
  std::uint32_t generationFloor_ = 0;  // releaseIdlePool(): generations already handed out
  RequestSpec nextSpec_{};
  bool haveNext_ = false;
  // Completion feedback (WorkloadSource::wantsCompletions, closed loops):
  // the slot of next()'s pending look-ahead arrival (-1: none pending).
  bool feedback_ = false;
  std::int64_t lookaheadSlot_ = -1;
  // serving front end (frontend.cpp)
  bool frontOn_ = false;             // cfg_.frontend.requestPathOn()
  std::vector<SpecCounts> specDone_;  // finished user requests' speculative counts
  std::vector<int> nodeOf_;           // each instance's node (transfers: NVLink inside, NIC across)
  std::vector<int> poolOf_;           // each instance's cluster.pools entry
  std::vector<InstanceRole> poolRole_;  // each instance's pool role (Both: colocated)
  bool poolRolesGiven_ = false;
  std::deque<std::int32_t> feQueue_;  // slots waiting for a tokeniser, FIFO
  int feBusy_ = 0;                   // tokenisers at work
  std::int64_t feInFlight_ = 0;      // sent, not yet arrived at the engine
  SimTime iterOutDelay_ = 0;         // output-path delay of the ending iteration's tokens
  FrontEndStats feStats_;

  std::int64_t arrived_ = 0, inFlight_ = 0, aborted_ = 0, preemptions_ = 0, migrationsDone_ = 0;
  std::int64_t handoffsDone_ = 0;
  std::int64_t migrationsAbandoned_ = 0;
  std::int64_t displacements_ = 0;
  std::vector<Request*> scratchVictims_;
  // by pool slot while the front end is on (FrontTimes, engine/record.h)
  std::vector<FrontTimes> frontTimes_;
  FrontTimes& frontTimes(const Request& r);
  const FrontTimes* frontTimesOf(const Request& r) const {
    return frontOn_ && !r.synthetic && static_cast<std::size_t>(r.slot) < frontTimes_.size()
               ? &frontTimes_[static_cast<std::size_t>(r.slot)]
               : nullptr;
  }
  std::vector<BlockingSplit> blockingSplits_;  // by pool slot, grown at </think> (openBlocking)
  std::int64_t queuedSeq_ = 0;
  std::int64_t syntheticInFlight_ = 0;
  SyntheticCost synthetic_;
  std::vector<Request*> lengthHits_;  // watchLength thresholds reached in the running endIteration

  struct Timer {
    std::string name;
    SimTime period = 0;
    SimTime due = kTimeNever;  // the queued firing; a queued event at another time is stale
    bool active = false;
  };
  std::vector<Timer> timers_;
  std::vector<std::string> poolLabels_;
  std::vector<char> drainWatch_;
  void checkDrained(int instance);
  RecordStore records_;

  // transfers
  Network net_;
  std::vector<int> nicRes_, linkOutRes_, linkInRes_;
  std::vector<Migration> migrations_;
  std::vector<std::int64_t> freeMigrations_;
  std::vector<std::vector<std::int64_t>> incoming_;  // per dst: FCFS copies awaiting blocks
  std::vector<int> liveCount_;
  // Per source instance: stop-and-copies deferred to the end of its running
  // iteration (Migration ids; checked there, no scan of all transfers).
  std::vector<std::vector<std::int64_t>> pendingStops_;
  std::vector<std::int64_t> scratchIds_;
  std::vector<std::int64_t> scratchTags_;
  std::vector<Request*> scratchBoundary_;
  std::vector<Request*> scratchFinished_;
  std::vector<Request*> scratchLaneDone_;
  std::vector<Request*> scratchLaneHits_;  // lane members whose watch their step reached
  std::vector<Request*> scratchLaneLeft_;  // lane members released during the step
  std::vector<Request*> scratchTokened_;
  std::vector<Request*> scratchMerged_;
  std::vector<Request*> pendingMoves_;
  std::uint64_t netWakeVersion_ = 0;

  // messages
  std::vector<std::function<void()>> messages_;
  std::vector<std::int64_t> freeMessages_;

  // probes
  std::int64_t probeArrivals_ = 0, probeCompletions_ = 0, probeTokens_ = 0;
  std::int64_t inputPrefilled_ = 0;  // Σ prompt tokens of (non-synthetic) requests past their first token
  // Per instance: its requests queued (Waiting, Swapped) and running. Every
  // change of a pooled request's state (setState), instance (routing,
  // injection, migration landing) or release goes through countProbe.
  struct ProbeCount {
    std::int32_t queued = 0, running = 0;
  };
  std::vector<ProbeCount> probeCounts_;
  void countProbe(const Request& r, std::int32_t delta) {
    if (r.instance < 0) return;
    ProbeCount& c = probeCounts_[static_cast<std::size_t>(r.instance)];
    if (r.state == ReqState::Running) c.running += delta;
    else if (r.state == ReqState::Waiting || r.state == ReqState::Swapped) c.queued += delta;
  }
  RollingWindow rolling_;
  ProbeSample probeSample_;

  std::deque<std::pair<std::string, Rng>> rngs_;  // deque: rng() references stay valid
  std::vector<std::pair<std::int64_t, std::int32_t>> cachedDone_;  // finished user requests' cached tokens
  mutable std::vector<PrefixState> prefix_;  // by pool slot, caching on only (chains are computed lazily)
  std::vector<std::uint64_t> commonLead_;  // segment ids every session-less request so far began with
  bool commonLeadSet_ = false;
};

// Inline: lane-aware policies peek at every queued move on each pump.
inline const Request* Simulator::peek(RequestHandle h) const {
  if (h.slot < 0 || static_cast<std::size_t>(h.slot) >= pool_.size() * kChunk) return nullptr;
  const Request& r = pool_[static_cast<std::size_t>(h.slot) / kChunk][static_cast<std::size_t>(h.slot) % kChunk];
  if (r.slot != h.slot || r.generation != h.generation || r.state == ReqState::Finished) return nullptr;
  return &r;
}

inline Request* Simulator::peek(RequestHandle h) {
  return const_cast<Request*>(static_cast<const Simulator&>(*this).peek(h));
}

}  // namespace sl
