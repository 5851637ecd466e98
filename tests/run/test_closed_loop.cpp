// Closed-loop clients through the engine (workload/closed_loop.h, the
// Simulator's completion hook): exactly N clients in flight at every event,
// think time honoured to the ns, the request total, determinism, every
// policy and router, bad input naming the field, and a live change of the
// client count replayed exactly.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "engine/observer.h"
#include "engine/policy_api.h"
#include "engine/request.h"
#include "metrics/request_record.h"
#include "policy/routers.h"
#include "run/execute.h"
#include "run/live_run.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "util/error.h"
#include "util/rng.h"
#include "workload/closed_loop.h"
#include "workload/length_dist.h"

using namespace sl;

namespace {

Scenario closedScenario(int clients, std::int64_t requests, std::optional<LengthDist> think = std::nullopt) {
  Scenario s;
  s.cluster.instances = 2;
  s.workload.arrival.process = ArrivalSpec::Process::Closed;
  s.workload.arrival.concurrency = clients;
  s.workload.arrival.think_s = std::move(think);
  s.workload.requests = requests;
  s.run.seed = 5;
  return s;
}

// Forwards to the real source and counts what it issues and what comes back.
class CountingSource final : public WorkloadSource {
public:
  explicit CountingSource(std::unique_ptr<WorkloadSource> in) : in_(std::move(in)) {}
  bool next(RequestSpec& out) override {
    const bool ok = in_->next(out);
    issued += ok;
    return ok;
  }
  std::int64_t expectedCount() const override { return in_->expectedCount(); }
  bool wantsCompletions() const override { return in_->wantsCompletions(); }
  bool onRequestDone(std::int64_t id, SimTime at, RequestSpec& out) override {
    ++done;
    const bool ok = in_->onRequestDone(id, at, out);
    issued += ok;
    return ok;
  }
  bool finished() const override { return in_->finished(); }
  std::int64_t issued = 0, done = 0;

private:
  std::unique_ptr<WorkloadSource> in_;
};

// At every request event: issued and not finished == N while requests remain.
struct InFlightObserver final : SimObserver {
  const CountingSource* src = nullptr;
  std::int64_t clients = 0, total = 0, checks = 0, violations = 0;
  std::vector<std::pair<SimTime, std::int64_t>> arrivals, finishes;  // (time, id)
  void check() {
    ++checks;
    // From the moment the N first requests are out until the last is issued.
    if (src->issued >= clients && src->issued < total && src->issued - src->done != clients) ++violations;
  }
  void onRequestEvent(RequestEvent e, const Request& r, int, SimTime t) override {
    check();
    if (e == RequestEvent::Arrived) arrivals.emplace_back(t, r.id);
    if (e == RequestEvent::Finished || e == RequestEvent::Aborted) finishes.emplace_back(t, r.id);
  }
  void onIteration(const Instance&, SimTime, SimTime) override { check(); }
  void onProbe(const ProbeSample&) override { check(); }
  void onFinished(const RequestRecord&) override { check(); }
};

struct Counted {
  std::unique_ptr<PreparedRun> run;
  CountingSource* src = nullptr;
  InFlightObserver obs;
};

// The scenario's run with its source counted and an InFlightObserver on it.
std::unique_ptr<Counted> prepareCounted(const Scenario& s) {
  auto owner = std::make_unique<Counted>();  // the observer's address stays put
  Counted& c = *owner;
  c.run = prepareRun(s, "test", [&](const WorkloadSpec& w, std::uint64_t seed, int ctx, const std::string& dir,
                                   std::optional<double> dur) -> std::unique_ptr<WorkloadSource> {
    auto src = std::make_unique<CountingSource>(makeWorkload(w, seed, ctx, dir, dur));
    c.src = src.get();
    return src;
  });
  c.obs.src = c.src;
  c.obs.clients = s.workload.arrival.concurrency;
  c.obs.total = s.workload.requests;
  c.run->simulator->addObserver(&c.obs);
  return owner;
}

template <class F> std::string errorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string parseError(const std::string& arrival, const std::string& extra = "") {
  return errorOf([&] {
    parseScenario(nlohmann::json::parse(R"({"workload": {"arrival": )" + arrival + extra + "}}"), "s.json");
  });
}

}  // namespace

TEST(ClosedLoop, ExactlyNClientsInFlightAtEveryEvent) {
  const int n = 6;
  const Scenario s = closedScenario(n, 300);
  const auto owner = prepareCounted(s);
  Counted& c = *owner;
  Simulator& sim = *c.run->simulator;
  const InFlightObserver& obs = c.obs;
  // Engine view: after the last event of each instant (think 0), the
  // simulator has exactly N requests arrived and not finished.
  std::int64_t instants = 0, wrong = 0;
  SimTime prev = -1;
  std::int64_t lastInFlight = 0;
  bool lastBeforeEnd = true;
  while (sim.step()) {
    if (sim.now() != prev && prev >= 0 && lastBeforeEnd) {
      ++instants;
      if (lastInFlight != n) ++wrong;
    }
    prev = sim.now();
    lastInFlight = sim.inFlight();
    lastBeforeEnd = c.src->issued < 300;
  }
  EXPECT_GT(obs.checks, 1000);
  EXPECT_EQ(obs.violations, 0);
  EXPECT_GT(instants, 100);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(sim.arrived(), 300);
  EXPECT_EQ(sim.finishedCount() + sim.aborted(), 300);
  EXPECT_EQ(sim.inFlight(), 0);
  EXPECT_EQ(c.src->issued, 300);
  EXPECT_EQ(c.src->done, 300);
}

TEST(ClosedLoop, ThinkTimeHonouredToTheNanosecond) {
  // One client: every arrival is the previous finish plus the next draw of
  // the "think" stream, exactly.
  const LengthDist think = exponentialDist(0.5);
  const Scenario s = closedScenario(1, 40, think);
  const auto owner = prepareCounted(s);
  Counted& c = *owner;
  c.run->simulator->run();
  const InFlightObserver& obs = c.obs;
  ASSERT_EQ(obs.arrivals.size(), 40u);
  ASSERT_EQ(obs.finishes.size(), 40u);
  LengthSampler sampler(think, ".", "think");
  Rng rng = Rng::forStream(s.run.seed, "think");
  EXPECT_EQ(obs.arrivals[0].first, 0);
  for (std::size_t i = 1; i < 40; ++i) {
    EXPECT_EQ(obs.arrivals[i].second, static_cast<std::int64_t>(i));
    EXPECT_EQ(obs.finishes[i - 1].second, static_cast<std::int64_t>(i - 1));
    EXPECT_EQ(obs.arrivals[i].first, obs.finishes[i - 1].first + secondsToNs(sampler.sampleReal(rng))) << i;
  }
}

TEST(ClosedLoop, ConstantThinkForManyClients) {
  // N clients, think 0.3 s: the arrivals after the first N are, as a
  // multiset, the finishes (all but the last N) plus 0.3 s.
  const Scenario s = closedScenario(4, 120, constantDist(0.3));
  const auto owner = prepareCounted(s);
  Counted& c = *owner;
  c.run->simulator->run();
  const InFlightObserver& obs = c.obs;
  ASSERT_EQ(obs.arrivals.size(), 120u);
  std::vector<SimTime> a, f;
  for (std::size_t i = 4; i < obs.arrivals.size(); ++i) a.push_back(obs.arrivals[i].first);
  for (std::size_t i = 0; i + 4 < obs.finishes.size(); ++i) f.push_back(obs.finishes[i].first + 300'000'000);
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, f);  // finishes come in time order already
  EXPECT_EQ(obs.violations, 0);
}

TEST(ClosedLoop, DeterministicAndSeeded) {
  const Scenario s = closedScenario(8, 250, exponentialDist(0.2));
  const ReplayResult a = replayRun(s, {});
  const ReplayResult b = replayRun(s, {});
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.finished, 250);
  Scenario other = s;
  other.run.seed = 6;
  EXPECT_NE(replayRun(other, {}).fingerprint, a.fingerprint);
  // The summary says how the run was driven.
  auto run = prepareRun(s);
  const RunResult r = executeRun(*run, RunOptions{});
  EXPECT_EQ(r.summaryJson["closed_loop"]["concurrency"], 8);
  EXPECT_EQ(r.summaryJson["closed_loop"]["issued"], 250);
  EXPECT_EQ(r.summaryJson["scenario"]["workload"]["arrival"]["process"], "closed");
  EXPECT_EQ(r.summaryJson["scenario"]["workload"]["arrival"]["think_s"]["dist"], "exponential");
}

TEST(ClosedLoop, EveryPolicyAndRouterCompletesTheRequests) {
  int ran = 0;
  for (const PolicyInfo& p : policyCatalog()) {
    Scenario s = closedScenario(5, 60, constantDist(0.05));
    s.policy.id = p.id;
    Scenario open = s;
    open.workload.arrival = ArrivalSpec{};
    // Policies that need a setting this small cluster lacks refuse the open
    // loop just the same; the closed loop must run wherever the open one does.
    if (!errorOf([&] { (void)prepareRun(open); }).empty()) continue;
    ++ran;
    auto run = prepareRun(s);
    run->simulator->run();
    EXPECT_FALSE(run->simulator->stalled()) << p.id;
    EXPECT_EQ(run->simulator->arrived(), 60) << p.id;
    EXPECT_EQ(run->simulator->finishedCount() + run->simulator->aborted(), 60) << p.id;
  }
  EXPECT_GE(ran, 8);
  for (const char* router : {"round-robin", "least-loaded", "least-kv", "random", "power-of-two"}) {
    Scenario s = closedScenario(5, 60);
    s.policy.router = router;
    auto run = prepareRun(s);
    run->simulator->run();
    EXPECT_EQ(run->simulator->finishedCount() + run->simulator->aborted(), 60) << router;
  }
}

// A local policy that never schedules anything: its requests wait for ever.
class IdleLocal final : public LocalPolicy {
public:
  const char* name() const override { return "idle"; }
  void enqueue(Request&) override { ++n_; }
  void remove(Request&) override { --n_; }
  void schedule(IterationBuilder&) override {}
  std::size_t size() const override { return n_; }
  void describe(std::vector<QueueView>&) const override {}

private:
  std::size_t n_ = 0;
};

TEST(ClosedLoop, AStalledClosedLoopEnds) {
  // Every client waits on a request that never runs and no arrival is due:
  // the stall check ends the run instead of ticking for ever.
  const Scenario s = closedScenario(3, 40);
  auto run = prepareRun(s);
  Simulator sim(run->sim, *run->cost, makeWorkload(s.workload, s.run.seed, run->model.max_context, ".", std::nullopt),
                std::make_unique<RouterPolicy>(RouterKind::RoundRobin),
                [](int) { return std::make_unique<IdleLocal>(); });
  sim.run();
  EXPECT_TRUE(sim.stalled());
  EXPECT_EQ(sim.arrived(), 3);
  EXPECT_EQ(sim.inFlight(), 3);
}

TEST(ClosedLoop, AbortedRequestsFreeTheirClient) {
  // Prompts that never fit are aborted at arrival: the client goes on.
  Scenario s = closedScenario(2, 30);
  s.workload.input_tokens = constantDist(120000);
  s.model = "llama-3.1-8b";
  s.cluster.gpu_memory_utilization = 0.3;
  auto run = prepareRun(s);
  run->simulator->run();
  EXPECT_EQ(run->simulator->arrived(), 30);
  EXPECT_EQ(run->simulator->aborted(), 30);
}

TEST(ClosedLoop, LiveClientChangesReplayExactly) {
  const Scenario s = closedScenario(4, 800, exponentialDist(0.1));
  auto live = prepareLiveRun(s, "test");
  ASSERT_NE(live->clients, nullptr);
  Simulator& sim = live->sim();
  while (sim.eventsProcessed() < 400 && sim.step()) {}
  live->apply(KnobChange{sim.now(), 0, kKnobConcurrency, 12});
  std::int64_t peak = 0;
  while (sim.eventsProcessed() < 3000 && sim.step()) peak = std::max(peak, sim.inFlight());
  EXPECT_GT(peak, 4);
  EXPECT_LE(peak, 12);
  live->apply(KnobChange{sim.now(), 0, kKnobConcurrency, 2});
  // Clients retire as their requests finish: once down to 2, never above.
  bool down = false, above = false;
  while (sim.step()) {
    down = down || sim.inFlight() <= 2;
    above = above || (down && sim.inFlight() > 2);
  }
  EXPECT_TRUE(down);
  EXPECT_FALSE(above);
  EXPECT_EQ(live->clients->concurrency(), 2);
  EXPECT_EQ(sim.arrived(), 800);
  ASSERT_EQ(live->changes.size(), 2u);
  validateChangeLog(s, live->changes, "log");
  const ReplayResult r = replayRun(s, live->changes);
  EXPECT_EQ(r.fingerprint, sim.fingerprint());
  EXPECT_EQ(r.events, sim.eventsProcessed());
  EXPECT_EQ(r.finished, sim.finishedCount());
  EXPECT_NE(r.fingerprint, replayRun(s, {}).fingerprint);
  // The saved-run path (executeRun with the log) reports the final count.
  auto again = prepareLiveRun(s, "test");
  const RunResult rr = executeRun(*again, live->changes, RunOptions{});
  EXPECT_EQ(rr.fingerprint, sim.fingerprint());
  EXPECT_EQ(rr.summaryJson["closed_loop"]["final_concurrency"], 2);
}

TEST(ClosedLoop, ChangeLogChecksTheClientCount) {
  const Scenario closed = closedScenario(4, 100);
  EXPECT_NE(errorOf([&] { validateChangeLog(closed, {{0, 0, "concurrency", 0}}, "log"); }).find("log[0].value"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { validateChangeLog(closed, {{0, 0, "concurrency", 2.5}}, "log"); }).find("integer"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { validateChangeLog(Scenario{}, {{0, 0, "concurrency", 3}}, "log"); }).find("closed loop"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { validateChangeLog(closed, {{0, 0, "arrival_rate", 3}}, "log"); }).find("log[0].knob"),
            std::string::npos);
}

TEST(ClosedLoop, ScenarioErrorsNameTheField) {
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": 0})").find("workload.arrival.concurrency"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": -3})").find("workload.arrival.concurrency"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": 2.5})").find("workload.arrival.concurrency"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed"})").find("concurrency"), std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": 4, "rate": 5})").find("workload.arrival.rate"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": 4, "think_s": {"dist": "constant", "value": -1}})")
                .find("workload.arrival.think_s.value"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": 4, "think_s": {"dist": "exponential", "mean": 0}})")
                .find("workload.arrival.think_s.mean"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": 4})", R"(, "trace": {"path": "t.csv", "time_scale": 2})")
                .find("workload.trace.time_scale"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"process": "closed", "concurrency": 4})",
                       R"(, "trace": {"path": "t.csv", "window": {"start_s": 10}})")
                .find("workload.trace.window"),
            std::string::npos);
  // Accepted forms round-trip through the canonical JSON.
  const Scenario s = parseScenario(nlohmann::json::parse(
      R"({"workload": {"arrival": {"process": "closed", "concurrency": 3, "think_s": {"dist": "exponential", "mean": 2, "max": 10}}}})"),
      "s.json");
  EXPECT_EQ(s.workload.arrival.concurrency, 3);
  ASSERT_TRUE(s.workload.arrival.think_s);
  EXPECT_EQ(s.workload.arrival.think_s->kind, LengthDist::Kind::Exponential);
  const Scenario back = parseScenario(nlohmann::json::parse(scenarioToJson(s).dump()), "s.json");
  EXPECT_EQ(scenarioToJson(back).dump(), scenarioToJson(s).dump());
}
