#include "run/live_run.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "policy/registry.h"
#include "util/error.h"
#include "util/json_check.h"
#include "util/strings.h"

namespace sl {

namespace {
// Seconds of a ns time, correctly rounded (30000000000 -> 30, not 30.000000000000004).
double seconds(SimTime t) { return static_cast<double>(t) / 1e9; }
// A number for messages: integral values in full ("1000000", not "1e+06").
std::string num(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<long long>(v));
  return formatDouble(v);
}
}  // namespace

nlohmann::ordered_json changeLogToJson(const ChangeLog& log) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const KnobChange& c : log)
    a.push_back({{"events", c.events}, {"time_ns", c.time}, {"time_s", seconds(c.time)}, {"knob", c.knob},
                 {"value", c.value}});
  return a;
}


ChangeLog changeLogFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) throw InputError(where + ": expected an array of changes, got " + jsonTypeName(j));
  static const std::vector<std::string> kKeys = {"events", "time_ns", "time_s", "knob", "value"};
  ChangeLog log;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const nlohmann::json& e = j[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!e.is_object()) throw InputError(at + ": expected an object {events, time_ns, knob, value}, got " + jsonTypeName(e));
    for (auto it = e.begin(); it != e.end(); ++it) {
      if (std::find(kKeys.begin(), kKeys.end(), it.key()) != kKeys.end()) continue;
      const auto hint = didYouMean(it.key(), kKeys);
      throw InputError(at + ": unknown field '" + it.key() + "'" +
                       (hint ? " (did you mean '" + *hint + "'?)" : std::string(" (fields: events, time_ns, time_s, knob, value)")));
    }
    for (const char* k : {"events", "time_ns", "knob", "value"})
      if (!e.contains(k)) throw InputError(at + ": missing required field '" + k + "'");
    KnobChange c;
    c.events = jsonNonNegativeInt(e.at("events"), at + ".events");
    c.time = jsonNonNegativeInt(e.at("time_ns"), at + ".time_ns");
    const nlohmann::json& knob = e.at("knob");
    if (!knob.is_string()) throw InputError(at + ".knob: expected a string, got " + jsonTypeName(knob));
    c.knob = knob.get<std::string>();
    if (c.knob.empty()) throw InputError(at + ".knob: must not be empty");
    const nlohmann::json& value = e.at("value");
    if (!value.is_number()) throw InputError(at + ".value: expected a number, got " + jsonTypeName(value));
    c.value = value.get<double>();
    if (!std::isfinite(c.value)) throw InputError(at + ".value: must be finite");
    if (e.contains("time_s")) {
      // Written for readers; time_ns and events decide when a change applies.
      const nlohmann::json& ts = e.at("time_s");
      if (!ts.is_number()) throw InputError(at + ".time_s: expected a number, got " + jsonTypeName(ts));
      const double s = ts.get<double>();
      if (!(std::abs(s - seconds(c.time)) <= 1e-6))
        throw InputError(at + ".time_s: " + num(s) + " disagrees with time_ns " + std::to_string(c.time) +
                         " (" + num(seconds(c.time)) +
                         " s); events and time_ns decide when a change applies, time_s is only for reading");
    }
    if (!log.empty()) {
      if (c.events < log.back().events)
        throw InputError(at + ".events: " + std::to_string(c.events) + " is before the previous change's " +
                         std::to_string(log.back().events) + " (changes are listed in the order they were made)");
      if (c.time < log.back().time)
        throw InputError(at + ".time_ns: " + std::to_string(c.time) + " is before the previous change's " +
                         std::to_string(log.back().time) + " (changes are listed in the order they were made)");
    }
    log.push_back(std::move(c));
  }
  return log;
}

bool liveRateSupported(const Scenario& s) {
  if (s.workload.trace) return false;
  return s.workload.arrival.process == ArrivalSpec::Process::Poisson ||
         s.workload.arrival.process == ArrivalSpec::Process::Gamma;
}

bool liveClientsSupported(const Scenario& s) { return s.workload.arrival.process == ArrivalSpec::Process::Closed; }

void validateChangeLog(const Scenario& s, const ChangeLog& log, const std::string& where) {
  for (std::size_t i = 0; i < log.size(); ++i) {
    const KnobChange& c = log[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (c.knob == kKnobConcurrency) {
      if (!liveClientsSupported(s))
        throw InputError(at + ".knob: 'concurrency' changes need a closed loop (workload.arrival.process 'closed')");
      if (!(c.value >= 1 && c.value <= 1000000 && c.value == std::floor(c.value)))
        throw InputError(at + ".value: a client count must be an integer from 1 to 1000000 (got " + num(c.value) + ")");
      continue;
    }
    if (c.knob == kKnobSpeculativeK) {
      if (!s.cluster.speculative.on)
        throw InputError(at + ".knob: 'speculative_k' changes need cluster.speculative in the scenario");
      if (!(c.value >= 0 && c.value <= kMaxSpeculativeK && c.value == std::floor(c.value)))
        throw InputError(at + ".value: a draft length must be an integer from 0 to " +
                         std::to_string(kMaxSpeculativeK) + " (got " + num(c.value) + ")");
      continue;
    }
    if (c.knob == kKnobArrivalRate) {
      if (!liveRateSupported(s))
        throw InputError(at + ".knob: 'arrival_rate' changes need Poisson or Gamma arrivals (this workload has " +
                         (s.workload.trace ? std::string("a trace") : std::string("a rate schedule")) + ")");
      if (!(c.value > 0)) throw InputError(at + ".value: an arrival rate must be > 0 req/s (got " + num(c.value) + ")");
      continue;
    }
    if (!c.knob.starts_with(kKnobPolicyPrefix)) {
      throw InputError(at + ".knob: unknown knob '" + c.knob +
                       "' (expected 'arrival_rate', 'concurrency' or 'policy.<knob>')");
    }
    const std::string name = c.knob.substr(std::string_view(kKnobPolicyPrefix).size());
    const PolicyInfo& info = policyInfo(s.policy.id);
    const KnobSpec* spec = nullptr;
    std::vector<std::string> names;
    for (const KnobSpec& k : info.knobs) {
      if (k.liveSafe) names.push_back(k.name);
      if (k.name == name) spec = &k;
    }
    if (!spec) {
      const auto hint = didYouMean(name, names);
      throw InputError(at + ".knob: policy '" + s.policy.id + "' has no knob '" + name + "'" +
                       (hint ? " (did you mean 'policy." + *hint + "'?)" : std::string()));
    }
    if (!spec->liveSafe)
      throw InputError(at + ".knob: policy knob '" + name + "' cannot change while a run is going");
    if (c.value < spec->min || c.value > spec->max)
      throw InputError(at + ".value: " + name + " must be in [" + num(spec->min) + ", " + num(spec->max) + "] " +
                       spec->unit + " (got " + num(c.value) + ")");
    if (spec->integer && c.value != std::floor(c.value))
      throw InputError(at + ".value: " + name + " must be an integer (got " + num(c.value) + ")");
  }
}

void LiveRun::apply(KnobChange c) {
  c.time = std::max(c.time, sim().now());
  c.events = sim().eventsProcessed();
  if (c.knob == kKnobArrivalRate) {
    if (!rateLive || !rate) throw InputError("live change: this workload has no arrival rate to change");
    rate->setRate(c.time, c.value);
  } else if (c.knob == kKnobConcurrency) {
    if (!clients) throw InputError("live change: this workload has no closed-loop clients to change");
    clients->setConcurrency(c.time, c.value);
    sim().pollWorkload();  // new clients start at once
  } else if (c.knob == kKnobSpeculativeK) {
    if (!(c.value >= 0 && c.value == std::floor(c.value)) || !sim().setSpeculativeK(static_cast<int>(c.value)))
      throw InputError("live change: speculative_k " + num(c.value) +
                       (sim().speculative() ? ": must be an integer from 0 to 16" : ": the run has no speculation"));
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
  if (!live->rateLive) {
    live->prepared = prepareRun(s, source);
    // A closed loop is the simulator's workload itself (no wrapper needed).
    live->clients = dynamic_cast<ClosedLoopWorkload*>(live->sim().workloadSource());
    return live;
  }
  const double base = s.workload.arrival.rate;
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

bool stepWithChanges(LiveRun& live, const ChangeLog& log, std::size_t& next, std::int64_t stopAfterEvents) {
  Simulator& sim = live.sim();
  for (;;) {
    while (next < log.size() && sim.eventsProcessed() == log[next].events) live.apply(log[next++]);
    if (stopAfterEvents >= 0 && sim.eventsProcessed() >= stopAfterEvents) return true;
    if (!sim.step()) return false;
  }
}

ReplayResult replayRun(const Scenario& s, const ChangeLog& log, std::int64_t stopAfterEvents) {
  auto live = prepareLiveRun(s, "replay");
  Simulator& sim = live->sim();
  std::size_t next = 0;
  stepWithChanges(*live, log, next, stopAfterEvents);
  ReplayResult r;
  r.fingerprint = sim.fingerprint();
  r.events = sim.eventsProcessed();
  r.finished = sim.finishedCount();
  r.now = sim.now();
  return r;
}

}  // namespace sl
