// The inspector's data and clicks: the timeline store against the engine's
// own event stream and RequestRecords, its memory bounds, the timeline
// spans, and a click on a chip / a card opening the inspector.
#include <QDockWidget>
#include <QTest>

#include <algorithm>
#include <map>

#include "ui/cluster/cluster_view.h"
#include "engine/request.h"
#include "ui/inspector/inspector_panel.h"
#include "ui/inspector/inspector_store.h"
#include "run/live_run.h"
#include "ui/shell/main_window.h"
#include "metrics/request_record.h"
#include "scenario/scenario_io.h"
#include "ui/controller/sim_controller.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSamples = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/");

Scenario sample(const QString& name, std::int64_t requests) {
  Scenario s = loadScenarioFile((kSamples + name).toStdString());
  s.workload.requests = requests;
  return s;
}

// Every request event and every finished record, as the engine reports them.
struct RawLog final : SimObserver {
  struct Ev {
    RequestEvent kind;
    int instance;
    SimTime time;
  };
  std::map<std::int64_t, std::vector<Ev>> events;
  std::map<std::int64_t, RequestRecord> records;
  void onRequestEvent(RequestEvent e, const Request& r, int inst, SimTime t) override {
    events[r.id].push_back({e, inst, t});
  }
  void onFinished(const RequestRecord& r) override { records[r.id] = r; }
};

int countKind(const RequestTimeline& t, RequestEvent k) {
  return static_cast<int>(std::count_if(t.events.begin(), t.events.end(), [&](const TimelineEvent& e) { return e.kind == k; }));
}

SimTime spanTotal(const std::vector<TimelineSpan>& spans, SpanKind k) {
  SimTime sum = 0;
  for (const TimelineSpan& s : spans)
    if (s.kind == k) sum += s.end - s.start;
  return sum;
}

}  // namespace

class TestInspector : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_inspector");
  }

  // A PASCAL run: each finished request's stored timeline is exactly the
  // engine's event stream for it, and agrees with its RequestRecord (the
  // fields requests.csv is written from).
  void storeMatchesEngineEventsAndRecords() {
    auto live = prepareLiveRun(sample("pascal-phase-aware.json", 400));
    TimelineStore store(100000);
    TimelineRecorder rec(store);
    RawLog raw;
    live->sim().addObserver(&rec);
    live->sim().addObserver(&raw);
    live->sim().run();
    QVERIFY(live->sim().done());
    QCOMPARE(static_cast<std::int64_t>(raw.records.size()), live->sim().finishedCount());
    QCOMPARE(store.inFlightCount(), std::size_t{0});
    QCOMPARE(store.finishedCount(), raw.records.size());

    int migratedAtThink = 0, preemptedThenResumed = 0;
    for (const auto& [id, r] : raw.records) {
      const auto t = store.request(id);
      QVERIFY(t.has_value());
      QVERIFY(t->finished);
      QVERIFY(t->record.has_value());
      QCOMPARE(t->record->last_token, r.last_token);
      // Same events, same order, same times and instances.
      const auto& ev = raw.events.at(id);
      QCOMPARE(t->events.size(), ev.size());
      for (std::size_t i = 0; i < ev.size(); ++i) {
        QCOMPARE(t->events[i].kind, ev[i].kind);
        QCOMPARE(t->events[i].time, ev[i].time);
        QCOMPARE(t->events[i].instance, ev[i].instance);
      }
      // Against the record.
      QCOMPARE(t->events.front().kind, RequestEvent::Arrived);
      QCOMPARE(t->events.front().time, r.arrival);
      QCOMPARE(t->events.back().kind, RequestEvent::Finished);
      QCOMPARE(t->events.back().time, r.last_token);
      QCOMPARE(countKind(*t, RequestEvent::FirstScheduled), 1);
      for (const TimelineEvent& e : t->events)
        if (e.kind == RequestEvent::FirstScheduled) QCOMPARE(e.time, r.arrival + r.queueing);
      QCOMPARE(countKind(*t, RequestEvent::Preempted), r.preemptions);
      QCOMPARE(countKind(*t, RequestEvent::MigrationEnd), r.migrations);
      if (r.reasoning > 0) {
        QCOMPARE(countKind(*t, RequestEvent::ReasoningEnd), 1);
        for (const TimelineEvent& e : t->events)
          if (e.kind == RequestEvent::ReasoningEnd) QCOMPARE(e.time, r.reasoning_end);
      }
      QCOMPARE(t->instances().back(), r.instance);
      for (std::size_t i = 1; i < t->events.size(); ++i) QVERIFY(t->events[i - 1].time <= t->events[i].time);

      // Hand-checked shapes: PASCAL migrates at </think>, from the instance
      // the request was on, and it lands on the next one in its path.
      const std::vector<int> path = t->instances();
      int hop = 0, current = path.front();
      bool thinkSeen = false;
      for (const TimelineEvent& e : t->events) {
        if (e.kind == RequestEvent::ReasoningEnd) thinkSeen = true;
        if (e.kind == RequestEvent::MigrationStart) {
          QCOMPARE(e.instance, current);
          QVERIFY(thinkSeen);
          QVERIFY(e.generated >= t->reasoning);
          ++migratedAtThink;
        }
        if (e.kind == RequestEvent::MigrationEnd) {
          current = path[static_cast<std::size_t>(++hop)];
          QCOMPARE(e.instance, current);
        }
      }
      // Every preemption ends with a resume before the request finishes.
      int open = 0;
      for (const TimelineEvent& e : t->events) {
        if (e.kind == RequestEvent::Preempted) {
          QCOMPARE(open, 0);
          open = 1;
        }
        if (e.kind == RequestEvent::Resumed && open) {
          open = 0;
          ++preemptedThenResumed;
        }
      }
      QCOMPARE(open, 0);

      // Spans: the phases tile [arrival, last token]; the overlays add up
      // to the record's preempted and migrating totals.
      const auto spans = timelineSpans(*t, live->sim().now());
      SimTime at = r.arrival;
      for (const TimelineSpan& s : spans) {
        if (s.kind == SpanKind::Preempted || s.kind == SpanKind::Migrating) continue;
        QCOMPARE(s.start, at);
        at = s.end;
      }
      QCOMPARE(at, r.last_token);
      QCOMPARE(spanTotal(spans, SpanKind::Preempted), r.preempted);
      QCOMPARE(spanTotal(spans, SpanKind::Migrating), r.migrating);
      if (r.reasoning > 0) {
        QCOMPARE(spanTotal(spans, SpanKind::Transition), r.first_visible - r.reasoning_end);
      }
    }
    // The sample exercises both: migrations at </think> and preemptions.
    qInfo("%zu requests checked: %d migrations at </think>, %d preemptions resumed", raw.records.size(),
          migratedAtThink, preemptedThenResumed);
    QVERIFY2(migratedAtThink > 0, "no migration in the sample run");
    QVERIFY2(preemptedThenResumed > 0, "no preemption in the sample run");

    // Instance counters add up to the engine's totals.
    std::int64_t served = 0, pre = 0, in = 0, out = 0;
    for (int i = 0; i < live->sim().numInstances(); ++i) {
      const auto h = store.instance(i);
      QVERIFY(h.has_value());
      served += h->served;
      pre += h->preemptions;
      in += h->migrationsIn;
      out += h->migrationsOut;
      QVERIFY(!h->samples.empty());
    }
    QCOMPARE(served, live->sim().finishedCount());
    QCOMPARE(pre, live->sim().preemptions());
    QCOMPARE(in, live->sim().migrations());
    QCOMPARE(out, in);
  }

  // Through the worker thread: the controller's store fills while it runs
  // and agrees with the in-flight requests the snapshot shows.
  void controllerStoreFollowsTheRun() {
    SimController c;
    QString err;
    QVERIFY2(c.load(sample("pascal-phase-aware.json", 100000), &err), qPrintable(err));
    c.runTo(40);
    QVERIFY(c.waitIdle(60000));
    QTest::qWait(50);
    const auto f = c.latest();
    QCOMPARE(f->clockS, 40.0);
    QCOMPARE(static_cast<std::int64_t>(c.timelines().inFlightCount()), f->snapshot.inFlight);
    int checked = 0;
    for (const InstanceSnapshot& in : f->snapshot.instances)
      for (const QueueSnapshot& q : in.queues)
        for (const RequestChip& ch : q.requests) {
          const auto t = c.timelines().request(ch.id);
          QVERIFY(t.has_value());
          QVERIFY(!t->finished);
          QCOMPARE(t->instances().back(), in.id);
          ++checked;
        }
    QVERIFY(checked > 0);
    // A reset clears it.
    c.reset();
    QCOMPARE(c.timelines().inFlightCount(), std::size_t{0});
  }

  // Bounded memory: finished timelines beyond keepFinished are dropped, and
  // the in-flight ones are exactly the engine's.
  void storeStaysBoundedOnALongRun() {
    auto live = prepareLiveRun(sample("pascal-baseline-rr.json", 3000));
    TimelineStore store(200);
    TimelineRecorder rec(store);
    live->sim().addObserver(&rec);
    std::size_t peak = 0;
    while (!live->sim().done()) {
      live->sim().run(live->sim().now() + 20 * kNsPerSecond);
      QVERIFY(store.finishedCount() <= 200);
      QCOMPARE(static_cast<std::int64_t>(store.inFlightCount()), live->sim().inFlight());
      peak = std::max(peak, store.approxBytes());
    }
    QCOMPARE(store.finishedCount(), std::size_t{200});
    QCOMPARE(live->sim().finishedCount(), std::int64_t{3000});
    qInfo("3000 requests, %zu bytes at the peak", peak);
    // The newest finished ones are kept, the oldest dropped.
    const auto& recs = live->sim().records();
    QVERIFY(store.request(recs.back().id).has_value());
    QVERIFY(!store.request(recs.front().id).has_value());
    // In-flight peak of this run is a few hundred requests: well under 2 MB.
    QVERIFY2(peak < 2'000'000, qPrintable(QString("peak %1 bytes").arg(peak)));
  }

  void eventsAndSamplesAreCapped() {
    TimelineStore store(10);
    Request r;
    r.id = 7;
    r.reasoning = 10;
    r.answer = 5;
    store.onEvent(RequestEvent::Arrived, r, 0, 0);
    for (int i = 0; i < 1000; ++i) {
      r.state = ReqState::Swapped;
      store.onEvent(RequestEvent::Preempted, r, 0, 10 + 2 * i);
      r.state = ReqState::Running;
      store.onEvent(RequestEvent::Resumed, r, 0, 11 + 2 * i);
    }
    store.onEvent(RequestEvent::Finished, r, 0, 5000);
    auto t = store.request(7);
    QVERIFY(t.has_value());
    QCOMPARE(t->events.size(), TimelineStore::kMaxEvents + 1);
    QCOMPARE(t->droppedEvents, 2001 - static_cast<int>(TimelineStore::kMaxEvents));
    QCOMPARE(t->events.back().kind, RequestEvent::Finished);
    QCOMPARE(store.instance(0)->preemptions, 1000);  // counters see every event

    // Probe samples: thinned two to one when full, covering the whole run.
    for (int s = 0; s < 20000; ++s) {
      ProbeSample p;
      p.time = static_cast<SimTime>(s) * kNsPerSecond;
      p.instances.resize(2);
      p.instances[0].gpuCapacity = 100;
      p.instances[0].gpuBlocks = s % 100;
      p.instances[1].role = s < 15000 ? 1 : 2;
      store.onProbe(p);
    }
    const auto h0 = store.instance(0);
    QVERIFY(h0->samples.size() < TimelineStore::kMaxSamples);
    QVERIFY(h0->samples.size() > TimelineStore::kMaxSamples / 4);
    QCOMPARE(h0->samples.front().timeS, 0.0);
    QVERIFY(h0->samples.back().timeS > 19000);
    for (std::size_t i = 1; i < h0->samples.size(); ++i) QVERIFY(h0->samples[i - 1].timeS < h0->samples[i].timeS);
    QCOMPARE(store.instance(1)->roleChanges, 1);
    QCOMPARE(store.instance(1)->samples.back().role, 2);
  }

  // Clicking a chip opens the inspector on that request; clicking a card
  // opens the instance's history.
  void clickingAChipOpensTheInspector() {
    MainWindow w;
    w.resize(1280, 800);
    w.fitDocksToSize();
    w.show();
    QString err;
    QVERIFY2(w.openScenario(kSamples + "pascal-phase-aware.json", &err), qPrintable(err));
    w.controller()->runTo(60);
    QVERIFY(w.controller()->waitIdle(60000));
    QTest::qWait(20);
    w.pullNow();
    ClusterView* cv = w.clusterView();
    cv->grab();  // paint: the hit-test rectangles come from drawing
    const std::vector<std::int64_t> ids = cv->drawnRequests();
    QVERIFY(!ids.empty());
    // A request that is decoding (running, past its prefill) at the pause.
    std::int64_t id = -1;
    int decodingChipKv = -1;
    for (const InstanceSnapshot& in : w.controller()->latest()->snapshot.instances)
      for (const QueueSnapshot& q : in.queues)
        for (const RequestChip& ch : q.requests)
          if (id < 0 && ch.state == static_cast<std::uint8_t>(ReqState::Running) && ch.phase != 0 && !ch.synthetic &&
              std::find(ids.begin(), ids.end(), ch.id) != ids.end()) {
            id = ch.id;
            decodingChipKv = ch.kvTokens;
          }
    QVERIFY(id >= 0);
    const QRect r = cv->chipRect(id);
    QVERIFY(!r.isEmpty());
    QCOMPARE(cv->requestAt(r.center()).value_or(-1), id);
    QVERIFY(!w.inspectorDock()->isVisible());

    QTest::mouseClick(cv, Qt::LeftButton, {}, r.center());
    QVERIFY(w.inspectorDock()->isVisible());
    InspectorPanel* ins = w.inspector();
    QCOMPARE(ins->mode(), InspectorPanel::Mode::Request);
    QCOMPARE(ins->requestId(), id);
    QVERIFY(ins->title().contains(QString("#%1").arg(id)));
    const auto t = w.controller()->timelines().request(id);
    QVERIFY(t.has_value());
    QVERIFY(ins->eventRows() >= static_cast<int>(t->events.size()));
    QVERIFY(ins->eventText(0).startsWith("arrived"));
    // Picked while paused: its progress is the run's, not the one at its
    // last event (the worker refreshes the watched request only while it
    // runs). A running request past its prefill holds the KV of its prompt
    // and of every output token but the last.
    const int generated = decodingChipKv - t->input + 1;
    QVERIFY2(ins->statusText().contains(QString(" %1 of %2 output tokens").arg(generated).arg(t->reasoning + t->answer)),
             qPrintable(ins->statusText() + QString(" / expected %1").arg(generated)));
    // ... and the store's timeline itself (token times for the bar) is
    // brought up to date by the worker on the next frame.
    QTRY_VERIFY_WITH_TIMEOUT((w.pullNow(), w.controller()->timelines().request(id)->generated == generated), 5000);
    QVERIFY(w.controller()->timelines().request(id)->firstToken >= 0);
    QVERIFY(!ins->timelineBar()->spans().empty());
    QCOMPARE(ins->timelineBar()->spans().front().kind, SpanKind::Queued);
    QVERIFY(ins->metricsText().contains("TTFT"));
    // Where it ran is named as the cards are ("GPU 3"), not a bare number.
    QVERIFY2(ins->metricsText().contains("ran on") && ins->metricsText().contains(QString("GPU %1").arg(t->instances().front())),
             qPrintable(ins->metricsText()));
    QCOMPARE(w.controller()->timelines().watched(), id);

    // A card's header (no chip there) opens the instance.
    const int inst = 3;
    const QRect card = cv->cardRect(inst);
    const QPoint head(card.left() + card.width() / 2, card.top() + 8);
    QVERIFY(!cv->requestAt(head).has_value());
    QCOMPARE(cv->instanceAt(head), inst);
    QTest::mouseClick(cv, Qt::LeftButton, {}, head);
    QCOMPARE(ins->mode(), InspectorPanel::Mode::Instance);
    QCOMPARE(ins->instanceId(), inst);
    QCOMPARE(ins->title(), QString("GPU %1").arg(inst));
    const auto h = w.controller()->timelines().instance(inst);
    QVERIFY(h.has_value());
    QVERIFY(ins->countersText().contains(QString("<b>%1</b>").arg(h->served)));
    QVERIFY(!h->samples.empty());
    QCOMPARE(w.controller()->timelines().watched(), std::int64_t{-1});

    // A new run empties the inspector.
    w.controller()->reset();
    QTRY_VERIFY_WITH_TIMEOUT((w.pullNow(), ins->mode() == InspectorPanel::Mode::Empty), 10000);
  }

  // An instance that never used its KV cache (e.g. an oracle run) says
  // "max 0%", not "max 100%" over a flat zero line.
  void flatZeroHistorySaysZero() {
    InstanceHistory h;
    for (int i = 0; i < 10; ++i) {
      InstanceSample x;
      x.timeS = i;
      h.samples.push_back(x);
    }
    HistoryPlot plot;
    plot.setHistory(h);
    QStringList sums = plot.summaries();
    QCOMPARE(sums.size(), 3);
    QVERIFY2(sums[0].contains("max 0%"), qPrintable(sums[0]));
    QVERIFY2(sums[1].contains("max 0"), qPrintable(sums[1]));
    h.samples[4].kvUsed = 0.42;
    h.samples[4].batch = 7;
    plot.setHistory(h);
    sums = plot.summaries();
    QVERIFY2(sums[0].contains("max 42%"), qPrintable(sums[0]));
    QVERIFY2(sums[2].contains("max 7"), qPrintable(sums[2]));
  }
};

QTEST_MAIN(TestInspector)
#include "test_inspector.moc"
