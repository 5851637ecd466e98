// The workload section of a scenario file: arrivals, traces and length
// distributions (scenario_parser.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scenario/limits.h"
#include "scenario/scenario_parser.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl::scenario_detail {

void Parser::workload(const json& v, const std::string& p, WorkloadSpec& w) const {
  object(v, p);
  checkKeys(v, p, kWorkloadKeys);
  if (auto* x = find(v, "preset")) w.preset = optNonEmptyString(*x, child(p, "preset"));
  if (auto* x = find(v, "arrival")) arrival(*x, child(p, "arrival"), w.arrival);
  if (auto* x = find(v, "input_tokens")) w.input_tokens = dist(*x, child(p, "input_tokens"), false, 0);
  if (auto* x = find(v, "reasoning_tokens")) {
    w.reasoning_tokens = dist(*x, child(p, "reasoning_tokens"), false, 0);
  }
  if (auto* x = find(v, "answer_tokens")) {
    w.answer_tokens = dist(*x, child(p, "answer_tokens"), false, 0);
  }
  if (auto* x = find(v, "trace")) {
    if (x->is_null()) {
      w.trace.reset();
    } else {
      w.trace = trace(*x, child(p, "trace"));
    }
  }
  if (auto* x = find(v, "requests")) {
    w.requests = integer(*x, child(p, "requests"), 1, std::numeric_limits<std::int64_t>::max());
  }
  // A closed loop ignores a trace's timestamps (its lengths are taken in
  // trace order), so the fields that act on timestamps would do nothing.
  if (w.arrival.process == ArrivalSpec::Process::Closed && w.trace) {
    const std::string q = child(p, "trace");
    const std::string why = "acts on the trace's timestamps, which a closed loop (workload.arrival.process "
                            "'closed') ignores; remove it or use an open-loop arrival process";
    if (w.trace->time_scale != 1.0) fail(child(q, "time_scale"), why);
    if (w.trace->window_start_s || w.trace->window_end_s) fail(child(q, "window"), why);
  }
  if (auto* x = find(v, "prefix")) {
    const std::string q = child(p, "prefix");
    if (x->is_null()) {
      w.prefix.reset();
    } else {
      object(*x, q);
      checkKeys(*x, q, kPrefixKeys);
      PrefixSpec ps;
      if (auto* y = find(*x, "system_prompt_tokens"))
        ps.system_prompt_tokens = intField(*y, child(q, "system_prompt_tokens"), 0);
      if (auto* y = find(*x, "system_prompts")) ps.system_prompts = intField(*y, child(q, "system_prompts"), 1);
      if (auto* y = find(*x, "turns")) ps.turns = intField(*y, child(q, "turns"), 1);
      if (ps.system_prompt_tokens > 0 && w.trace)
        fail(child(q, "system_prompt_tokens"), "applies to synthetic prompts only (a trace brings its own; "
                                               "Mooncake's hash_ids name its prefixes)");
      if (ps.turns > 1 && w.arrival.process != ArrivalSpec::Process::Closed)
        fail(child(q, "turns"), "multi-turn sessions need closed-loop clients (workload.arrival.process "
                                "\"closed\"): a turn follows its previous turn's answer");
      w.prefix = ps;
    }
  }
}

void Parser::arrival(const json& v, const std::string& p, ArrivalSpec& a) const {
  object(v, p);
  checkKeys(v, p, kArrivalKeys);
  std::string process = "poisson";
  if (auto* x = find(v, "process")) process = oneOf(*x, child(p, "process"), kProcessNames);
  const Keys allowed = process == "poisson"  ? Keys{"process", "rate"}
                       : process == "gamma"  ? Keys{"process", "rate", "cv"}
                       : process == "closed" ? Keys{"process", "concurrency", "think_s"}
                                             : Keys{"process", "schedule"};
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!contains(allowed, it.key())) {
      fail(child(p, it.key()), "not used by process '" + process + "' (its fields: " +
                                   quotedList(allowed) + ")");
    }
  }
  a.process = process == "poisson"  ? ArrivalSpec::Process::Poisson
              : process == "gamma"  ? ArrivalSpec::Process::Gamma
              : process == "closed" ? ArrivalSpec::Process::Closed
                                    : ArrivalSpec::Process::Schedule;
  if (a.process == ArrivalSpec::Process::Closed) {
    const json* n = find(v, "concurrency");
    if (!n) fail(p, "process 'closed' needs 'concurrency' (the number of clients, an integer >= 1)");
    a.concurrency = static_cast<int>(integer(*n, child(p, "concurrency"), 1, kMaxConcurrency));
    a.think_s.reset();
    if (auto* x = find(v, "think_s"); x && !x->is_null()) a.think_s = dist(*x, child(p, "think_s"), false, 0);
  }
  if (auto* x = find(v, "rate")) a.rate = positive(*x, child(p, "rate"));
  if (auto* x = find(v, "cv")) a.cv = positive(*x, child(p, "cv"));
  if (a.process == ArrivalSpec::Process::Schedule) {
    const std::string q = child(p, "schedule");
    const json* x = find(v, "schedule");
    if (!x) fail(p, "process 'schedule' needs a 'schedule' list of {\"duration_s\", \"rate\"}");
    if (!x->is_array()) typeError(*x, q, "an array");
    if (x->empty()) fail(q, "must have at least one segment");
    a.schedule.clear();
    bool any_positive = false;
    for (std::size_t i = 0; i < x->size(); ++i) {
      const json& seg = (*x)[i];
      const std::string sp = indexed(q, i);
      object(seg, sp);
      checkKeys(seg, sp, kSegmentKeys);
      const json* d = find(seg, "duration_s");
      const json* r = find(seg, "rate");
      if (!d) fail(sp, "missing required field 'duration_s'");
      if (!r) fail(sp, "missing required field 'rate'");
      RateSegment s;
      s.duration_s = positive(*d, child(sp, "duration_s"));
      s.rate = nonNegative(*r, child(sp, "rate"));
      any_positive = any_positive || s.rate > 0;
      a.schedule.push_back(s);
    }
    if (!any_positive) fail(q, "at least one segment needs a rate > 0");
  } else {
    a.schedule.clear();
  }
}

TraceSpec Parser::trace(const json& v, const std::string& p) const {
  object(v, p);
  checkKeys(v, p, kTraceKeys);
  TraceSpec t;
  const json* path = find(v, "path");
  if (!path) fail(p, "missing required field 'path'");
  t.path = nonEmptyString(*path, child(p, "path"));
  if (auto* x = find(v, "format")) t.format = oneOf(*x, child(p, "format"), kTraceFormats);
  if (auto* x = find(v, "time_scale")) t.time_scale = positive(*x, child(p, "time_scale"));
  if (auto* x = find(v, "max_requests"); x && !x->is_null()) {
    t.max_requests = integer(*x, child(p, "max_requests"), 1,
                             std::numeric_limits<std::int64_t>::max());
  }
  if (auto* x = find(v, "window"); x && !x->is_null()) {
    const std::string q = child(p, "window");
    if (!x->is_object()) typeError(*x, q, "an object or null");
    checkKeys(*x, q, kWindowKeys);
    if (auto* y = find(*x, "start_s"); y && !y->is_null()) {
      const std::string r = child(q, "start_s");
      if (!y->is_number()) typeError(*y, r, "a number or null");
      t.window_start_s = nonNegative(*y, r);
    }
    if (auto* y = find(*x, "end_s"); y && !y->is_null()) {
      const std::string r = child(q, "end_s");
      if (!y->is_number()) typeError(*y, r, "a number or null");
      t.window_end_s = positive(*y, r);
    }
    if (t.window_start_s && t.window_end_s && !(*t.window_end_s > *t.window_start_s)) {
      fail(child(q, "end_s"), "must be > start_s (got " + numText(*t.window_end_s) +
                                  " <= " + numText(*t.window_start_s) + ")");
    }
  }
  if (auto* x = find(v, "lenient")) t.lenient = boolean(*x, child(p, "lenient"));
  return t;
}

LengthDist Parser::dist(const json& v, const std::string& p, bool in_mixture, int depth) const {
  object(v, p);
  if (depth > kMaxDistDepth) fail(p, "mixtures nested too deeply");
  // Keys that exist in no distribution at all: unknown field with a hint.
  const Keys& all = kDistKeys;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!contains(all, it.key()) || (it.key() == "weight" && !in_mixture)) {
      Keys cands = all;
      if (!in_mixture) cands.pop_back();  // "weight"
      unknownField(p, it.key(), cands);
    }
  }
  const json* dn = find(v, "dist");
  if (!dn) {
    fail(p, "missing required field 'dist' (one of " + quotedList(kDistNames) + ")");
  }
  const std::string name = oneOf(*dn, child(p, "dist"), kDistNames);
  Keys allowed;
  LengthDist d;
  if (name == "constant") {
    d.kind = LengthDist::Kind::Constant;
    allowed = {"dist", "value", "min", "max"};
  } else if (name == "uniform") {
    d.kind = LengthDist::Kind::Uniform;
    allowed = {"dist", "min", "max"};
  } else if (name == "lognormal") {
    d.kind = LengthDist::Kind::Lognormal;
    allowed = {"dist", "median", "p90", "mu", "sigma", "min", "max"};
  } else if (name == "empirical") {
    d.kind = LengthDist::Kind::Empirical;
    allowed = {"dist", "path", "column", "min", "max"};
  } else if (name == "exponential") {
    d.kind = LengthDist::Kind::Exponential;
    allowed = {"dist", "mean", "min", "max"};
  } else {
    d.kind = LengthDist::Kind::Mixture;
    allowed = {"dist", "parts", "min", "max"};
  }
  if (in_mixture) allowed.push_back("weight");
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!contains(allowed, it.key())) {
      fail(child(p, it.key()),
           "not used by dist '" + name + "' (its fields: " + quotedList(allowed) + ")");
    }
  }
  auto required = [&](const char* key) -> const json& {
    const json* x = find(v, key);
    if (!x) fail(p, "dist '" + name + "' needs field '" + key + "'");
    return *x;
  };

  switch (d.kind) {
    case LengthDist::Kind::Constant:
      d.value = nonNegative(required("value"), child(p, "value"));
      break;
    case LengthDist::Kind::Uniform: {
      d.min = nonNegative(required("min"), child(p, "min"));
      d.max = nonNegative(required("max"), child(p, "max"));
      if (d.max < d.min) {
        fail(child(p, "max"), "must be >= min (got " + numText(d.max) + " < " +
                                  numText(d.min) + ")");
      }
      break;
    }
    case LengthDist::Kind::Lognormal: {
      const bool q = find(v, "median") || find(v, "p90");
      const bool m = find(v, "mu") || find(v, "sigma");
      if (q == m) {
        fail(p, "dist 'lognormal' needs either 'median' and 'p90' or 'mu' and 'sigma'");
      }
      if (q) {
        d.median = positive(required("median"), child(p, "median"));
        d.p90 = number(required("p90"), child(p, "p90"));
        if (!(*d.p90 > *d.median)) {
          fail(child(p, "p90"), "must be > median (got " + numText(*d.p90) + " <= " +
                                    numText(*d.median) + ")");
        }
      } else {
        d.mu = number(required("mu"), child(p, "mu"));
        d.sigma = positive(required("sigma"), child(p, "sigma"));
      }
      break;
    }
    case LengthDist::Kind::Exponential:
      d.mean = positive(required("mean"), child(p, "mean"));
      break;
    case LengthDist::Kind::Empirical:
      d.path = nonEmptyString(required("path"), child(p, "path"));
      if (auto* x = find(v, "column")) d.column = string(*x, child(p, "column"));
      break;
    case LengthDist::Kind::Mixture: {
      const std::string q = child(p, "parts");
      const json& parts = required("parts");
      if (!parts.is_array()) typeError(parts, q, "an array");
      if (parts.empty()) fail(q, "must have at least one part");
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string pp = indexed(q, i);
        const json& part = parts[i];
        LengthDist sub = dist(part, pp, true, depth + 1);
        const json* w = find(part, "weight");
        if (!w) fail(pp, "missing required field 'weight'");
        d.weights.push_back(positive(*w, child(pp, "weight")));
        d.parts.push_back(std::move(sub));
      }
      break;
    }
  }
  if (d.kind != LengthDist::Kind::Uniform) {
    if (auto* x = find(v, "min")) d.clipMin = nonNegative(*x, child(p, "min"));
    if (auto* x = find(v, "max")) d.clipMax = positive(*x, child(p, "max"));
    if (d.clipMin && d.clipMax && *d.clipMax < *d.clipMin) {
      fail(child(p, "max"), "must be >= min (got " + numText(*d.clipMax) + " < " +
                                numText(*d.clipMin) + ")");
    }
  }
  return d;
}

}  // namespace sl::scenario_detail
