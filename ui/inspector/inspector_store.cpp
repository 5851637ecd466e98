#include "ui/inspector/inspector_store.h"

#include <algorithm>

#include "engine/policy_api.h"
#include "engine/request.h"

namespace sl::ui {

std::vector<int> RequestTimeline::instances() const {
  std::vector<int> out;
  for (const TimelineEvent& e : events) {
    if (e.instance < 0) continue;
    if (e.kind != RequestEvent::Arrived && e.kind != RequestEvent::MigrationEnd) continue;
    if (out.empty() || out.back() != e.instance) out.push_back(e.instance);
  }
  return out;
}

namespace {

void copyTimes(RequestTimeline& t, const Request& r) {
  t.generated = r.generated;
  t.state = static_cast<std::uint8_t>(r.state);
  t.rank = r.rank;
  t.predicted = r.predicted;
  t.firstScheduled = r.firstScheduled;
  t.firstToken = r.gFirst;
  t.reasoningEnd = r.gReasoningEnd;
  t.firstVisible = r.gFirstVisible;
  t.lastToken = r.gLast;
}

}  // namespace

void TimelineStore::clear() {
  std::lock_guard<std::mutex> lock(m_);
  live_.clear();
  done_.clear();
  doneOrder_.clear();
  inst_.clear();
  stride_.clear();
  seen_.clear();
  watched_ = -1;
}

InstanceHistory& TimelineStore::hist(int id) {
  const auto n = static_cast<std::size_t>(std::max(0, id)) + 1;
  if (inst_.size() < n) {
    const std::size_t old = inst_.size();
    inst_.resize(n);
    stride_.resize(n, 1);
    seen_.resize(n, 0);
    for (std::size_t i = old; i < n; ++i) inst_[i].id = static_cast<int>(i);
  }
  return inst_[static_cast<std::size_t>(std::max(0, id))];
}

void TimelineStore::onEvent(RequestEvent e, const Request& r, int instance, SimTime t, std::int32_t cachedTokens) {
  std::lock_guard<std::mutex> lock(m_);
  auto it = live_.find(r.id);
  if (it == live_.end()) {
    RequestTimeline fresh;
    fresh.id = r.id;
    fresh.arrival = r.arrival;
    fresh.input = r.input;
    fresh.reasoning = r.reasoning;
    fresh.answer = r.answer;
    fresh.events.reserve(4);  // arrived, first scheduled, (reasoning end,) finished: one allocation
    it = live_.emplace(r.id, std::move(fresh)).first;
  }
  RequestTimeline& tl = it->second;
  copyTimes(tl, r);
  if (cachedTokens >= 0) tl.cachedTokens = cachedTokens;
  const bool terminal = e == RequestEvent::Finished || e == RequestEvent::Aborted;
  // The terminal event is always kept, so a truncated timeline still ends.
  if (tl.events.size() < kMaxEvents || terminal)
    tl.events.push_back({t, e, instance, r.generated, static_cast<std::uint8_t>(r.state)});
  else
    ++tl.droppedEvents;

  if (instance >= 0) {
    InstanceHistory& h = hist(instance);
    switch (e) {
      case RequestEvent::Arrived: ++h.arrivals; break;
      case RequestEvent::Preempted: ++h.preemptions; break;
      case RequestEvent::MigrationStart: ++h.migrationsOut; break;
      case RequestEvent::MigrationEnd: ++h.migrationsIn; break;
      case RequestEvent::Finished: ++h.served; break;
      default: break;
    }
  }

  if (terminal) {
    tl.finished = true;
    const std::int64_t id = tl.id;
    // The node moves (no copy of the timeline); an id already there (never,
    // ids are unique) is replaced, as before.
    auto ins = done_.insert(live_.extract(it));
    if (!ins.inserted) ins.position->second = std::move(ins.node.mapped());
    doneOrder_.push_back(id);
    while (doneOrder_.size() > keepFinished_) {
      done_.erase(doneOrder_.front());
      doneOrder_.pop_front();
    }
  }
}

void TimelineStore::onFinished(const RequestRecord& rec) {
  std::lock_guard<std::mutex> lock(m_);
  auto it = done_.find(rec.id);
  if (it == done_.end()) return;  // already dropped (keepFinished_ == 0)
  it->second.record = rec;
  it->second.firstToken = rec.first_token;
  it->second.reasoningEnd = rec.reasoning_end;
  it->second.firstVisible = rec.first_visible;
  it->second.lastToken = rec.last_token;
}

void TimelineStore::onDecisions(std::span<const Decision> decisions, const DecisionCodeNames* names) {
  if (decisions.empty()) return;
  std::lock_guard<std::mutex> lock(m_);
  for (const Decision& d : decisions) {
    RequestTimeline* t = nullptr;
    if (auto it = live_.find(d.requestId); it != live_.end()) t = &it->second;
    else if (auto jt = done_.find(d.requestId); jt != done_.end()) t = &jt->second;
    if (!t || t->decisions.size() >= kMaxEvents) continue;
    t->decisions.push_back({d.time, d.from, d.instance, d.boundary,
                            DecisionLog::reason(d, names)});
  }
}

void TimelineStore::onProbe(const ProbeSample& s) {
  std::lock_guard<std::mutex> lock(m_);
  for (std::size_t i = 0; i < s.instances.size(); ++i) {
    const ProbeInstance& p = s.instances[i];
    InstanceHistory& h = hist(static_cast<int>(i));
    if (!h.samples.empty() && h.samples.back().role != p.role) ++h.roleChanges;
    const std::int64_t n = seen_[i]++;
    if (n % stride_[i] != 0) {
      // Thinned out, but a role flip must stay visible in the last sample.
      if (!h.samples.empty()) h.samples.back().role = p.role;
      continue;
    }
    InstanceSample x;
    x.timeS = nsToSeconds(s.time);
    x.kvUsed = p.gpuCapacity > 0 ? static_cast<double>(p.gpuBlocks) / static_cast<double>(p.gpuCapacity) : 0;
    x.cpuUsed = static_cast<double>(p.cpuBlocks);
    x.queued = p.queued;
    x.running = p.running;
    x.batch = p.batch;
    x.role = p.role;
    h.samples.push_back(x);
    if (h.samples.size() >= kMaxSamples) {
      // Keep every other sample and halve the rate of new ones from now on.
      std::size_t w = 0;
      for (std::size_t r = 0; r < h.samples.size(); r += 2) h.samples[w++] = h.samples[r];
      h.samples.resize(w);
      stride_[i] *= 2;
      seen_[i] = 1;  // the last kept sample starts the new stride
    }
  }
}

void TimelineStore::refresh(const Request& r) {
  std::lock_guard<std::mutex> lock(m_);
  auto it = live_.find(r.id);
  if (it != live_.end()) copyTimes(it->second, r);
}

void TimelineStore::setWatched(std::int64_t id) {
  std::lock_guard<std::mutex> lock(m_);
  watched_ = id;
}

std::int64_t TimelineStore::watched() const {
  std::lock_guard<std::mutex> lock(m_);
  return watched_;
}

std::optional<RequestTimeline> TimelineStore::request(std::int64_t id) const {
  std::lock_guard<std::mutex> lock(m_);
  if (auto it = live_.find(id); it != live_.end()) return it->second;
  if (auto it = done_.find(id); it != done_.end()) return it->second;
  return std::nullopt;
}

std::optional<InstanceHistory> TimelineStore::instance(int id) const {
  std::lock_guard<std::mutex> lock(m_);
  if (id < 0 || static_cast<std::size_t>(id) >= inst_.size()) return std::nullopt;
  return inst_[static_cast<std::size_t>(id)];
}

std::size_t TimelineStore::inFlightCount() const {
  std::lock_guard<std::mutex> lock(m_);
  return live_.size();
}

std::size_t TimelineStore::finishedCount() const {
  std::lock_guard<std::mutex> lock(m_);
  return done_.size();
}

std::size_t TimelineStore::approxBytes() const {
  std::lock_guard<std::mutex> lock(m_);
  constexpr std::size_t kNode = 4 * sizeof(void*);  // map node overhead
  std::size_t b = 0;
  auto add = [&](const Timelines& m) {
    for (const auto& [id, t] : m)
    {
      b += kNode + sizeof(id) + sizeof(t) + t.events.capacity() * sizeof(TimelineEvent);
      for (const TimelineDecision& d : t.decisions) b += sizeof(d) + d.reason.capacity();
    }
  };
  add(live_);
  add(done_);
  b += (live_.bucket_count() + done_.bucket_count()) * sizeof(void*);
  b += doneOrder_.size() * sizeof(std::int64_t);
  for (const InstanceHistory& h : inst_) b += sizeof(h) + h.samples.capacity() * sizeof(InstanceSample);
  return b;
}

const char* spanName(SpanKind k) {
  switch (k) {
    case SpanKind::Queued: return "queued";
    case SpanKind::Prefill: return "prefill";
    case SpanKind::Reasoning: return "reasoning";
    case SpanKind::Transition: return "</think> → first answer token";
    case SpanKind::Answering: return "answering";
    case SpanKind::Preempted: return "preempted";
    case SpanKind::Migrating: return "migrating";
  }
  return "?";
}

std::vector<TimelineSpan> timelineSpans(const RequestTimeline& t, SimTime now) {
  std::vector<TimelineSpan> out;
  SimTime end = now;
  for (const TimelineEvent& e : t.events)
    if (e.kind == RequestEvent::Finished || e.kind == RequestEvent::Aborted) end = e.time;
  if (t.finished && t.lastToken >= 0) end = std::max(end, t.lastToken);
  auto span = [&](SimTime a, SimTime b, SpanKind k) {
    if (a < 0) return;
    b = b < 0 ? end : std::min(b, end);
    if (b > a) out.push_back({a, b, k});
  };
  span(t.arrival, t.firstScheduled, SpanKind::Queued);
  span(t.firstScheduled, t.firstToken, SpanKind::Prefill);
  if (t.reasoning > 0) {
    span(t.firstToken, t.reasoningEnd, SpanKind::Reasoning);
    span(t.reasoningEnd, t.firstVisible, SpanKind::Transition);
  }
  span(t.firstVisible, t.finished ? end : -1, SpanKind::Answering);
  // Overlays: [Preempted, Resumed) and [MigrationStart, MigrationEnd).
  SimTime pre = -1, mig = -1;
  for (const TimelineEvent& e : t.events) {
    switch (e.kind) {
      case RequestEvent::Preempted:
        if (pre < 0) pre = e.time;
        break;
      case RequestEvent::Resumed:
        if (pre >= 0) span(pre, e.time, SpanKind::Preempted);
        pre = -1;
        break;
      case RequestEvent::MigrationStart:
        if (mig < 0) mig = e.time;
        break;
      case RequestEvent::MigrationEnd:
        if (mig >= 0) span(mig, e.time, SpanKind::Migrating);
        mig = -1;
        break;
      default: break;
    }
  }
  if (pre >= 0) span(pre, -1, SpanKind::Preempted);
  if (mig >= 0) span(mig, -1, SpanKind::Migrating);
  return out;
}

}  // namespace sl::ui
