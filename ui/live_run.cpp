#include "live_run.h"

#include "policy/registry.h"
#include "util/error.h"

namespace sl::ui {

nlohmann::ordered_json changeLogToJson(const ChangeLog& log) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const KnobChange& c : log)
    a.push_back({{"time_s", nsToSeconds(c.time)}, {"time_ns", c.time}, {"events", c.events},
                 {"knob", c.knob}, {"value", c.value}});
  return a;
}

ChangeLog changeLogFromJson(const nlohmann::json& j) {
  if (!j.is_array()) throw InputError("change log: expected an array");
  ChangeLog log;
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("time_ns") || !e.contains("events") || !e.contains("knob") ||
        !e.contains("value"))
      throw InputError("change log: each entry needs time_ns, events, knob and value");
    KnobChange c;
    c.time = e.at("time_ns").get<SimTime>();
    c.events = e.at("events").get<std::int64_t>();
    c.knob = e.at("knob").get<std::string>();
    c.value = e.at("value").get<double>();
    log.push_back(c);
  }
  return log;
}

bool liveRateSupported(const Scenario& s) {
  if (s.workload.trace) return false;
  return s.workload.arrival.process == ArrivalSpec::Process::Poisson ||
         s.workload.arrival.process == ArrivalSpec::Process::Gamma;
}

void LiveRun::apply(KnobChange c) {
  c.time = std::max(c.time, sim().now());
  c.events = sim().eventsProcessed();
  if (c.knob == kKnobArrivalRate) {
    if (!rateLive || !rate) throw InputError("live change: this workload has no arrival rate to change");
    rate->setRate(c.time, c.value);
  } else if (c.knob.starts_with(kKnobPolicyPrefix)) {
    applyLiveKnob(sim(), prepared->scenario.policy.id, c.knob.substr(std::string_view(kKnobPolicyPrefix).size()),
                  c.value);
  } else {
    throw InputError("live change: unknown knob '" + c.knob + "'");
  }
  changes.push_back(c);
}

std::unique_ptr<LiveRun> prepareLiveRun(const Scenario& s, const std::string& source) {
  auto live = std::make_unique<LiveRun>();
  live->rateLive = liveRateSupported(s);
  const double base = live->rateLive ? s.workload.arrival.rate : 1.0;
  LiveRateWorkload* wrapper = nullptr;
  live->prepared = prepareRun(
      s, source,
      [&](const WorkloadSpec& w, std::uint64_t seed, int maxContext, const std::string& baseDir,
          std::optional<double> durationS) -> std::unique_ptr<WorkloadSource> {
        // The cut-off moves to the wrapper so it applies on the warped clock.
        auto inner = makeWorkload(w, seed, maxContext, baseDir, std::nullopt);
        auto outer = std::make_unique<LiveRateWorkload>(std::move(inner), base, durationS);
        wrapper = outer.get();
        return outer;
      });
  live->rate = wrapper;
  return live;
}

ReplayResult replayRun(const Scenario& s, const ChangeLog& log, std::int64_t stopAfterEvents) {
  auto live = prepareLiveRun(s, "replay");
  Simulator& sim = live->sim();
  std::size_t next = 0;
  for (;;) {
    while (next < log.size() && sim.eventsProcessed() == log[next].events) live->apply(log[next++]);
    if (stopAfterEvents >= 0 && sim.eventsProcessed() >= stopAfterEvents) break;
    if (!sim.step()) break;
  }
  ReplayResult r;
  r.fingerprint = sim.fingerprint();
  r.events = sim.eventsProcessed();
  r.finished = sim.finishedCount();
  r.now = sim.now();
  return r;
}

}  // namespace sl::ui
