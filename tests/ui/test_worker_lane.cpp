// The app on the decode lane's fast path (issue 27 item 4): the worker's
// observer is lane-safe, so a run watched by the GUI keeps the engine's lazy
// decode lanes (docs/engine.md "Lazy decode lane"). Everything the worker
// hands the GUI must be the same with the lanes on as with them forced off
// (SimController::setDecodeLanes(false) attaches a watcher that is not
// lane-safe): the snapshots at the same simulated times (lane members are
// synced when read), the watched request's timeline between its events, the
// probes, the finished requests and their records, and the fingerprint --
// which is also the headless run's.
#include <QTest>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "run/execute.h"
#include "run/run.h"
#include "scenario/scenario_io.h"
#include "ui/controller/sim_controller.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

Scenario sample(const std::string& name) {
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/" + name + ".json");
  if (s.workload.requests > 600) s.workload.requests = 600;  // short, yet thousands of lane steps
  return s;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

void dumpFields(std::ostringstream& o, const std::vector<PolicyField>& fs) {
  for (const PolicyField& f : fs) o << " {" << f.label << '=' << num(f.value) << f.unit << '|' << f.callout << '}';
}

// Every field of a snapshot, as text (doubles to the bit), so a difference
// shows where it is.
std::string dump(const Snapshot& s) {
  std::ostringstream o;
  o << "now " << s.now << " arrived " << s.arrived << " finished " << s.finished << " inFlight " << s.inFlight
    << " events " << s.events << " decisions " << s.decisions << '\n';
  for (const InstanceSnapshot& in : s.instances) {
    o << "inst " << in.id << " role " << int(in.role) << " gpu " << in.gpuBlocksUsed << '/' << in.gpuBlocksReserved
      << '/' << in.gpuBlocks << " cpu " << in.cpuBlocksUsed << '/' << in.cpuBlocks << " batch " << in.batchSize
      << " busy " << in.busy << " tokens " << in.tokensProduced << " pool '" << in.poolLabel << "'";
    const PrefixCacheSnapshot& c = in.cache;
    o << " cache " << c.on << ' ' << c.gpuFreeBlocks << ' ' << c.gpuBlocks << ' ' << c.cpuBlocks << ' '
      << c.cpuCapacity << ' ' << c.promptTokens << ' ' << c.cachedTokens << ' ' << c.hits << ' ' << c.evictions
      << ' ' << c.offloadHits;
    dumpFields(o, in.policyFields);
    o << '\n';
    for (const QueueSnapshot& q : in.queues) {
      o << "  " << q.name << ':';
      for (const RequestChip& r : q.requests)
        o << " [" << r.id << ' ' << int(r.phase) << ' ' << int(r.state) << " kv " << r.kvTokens << " b "
          << r.inBatch << ' ' << r.synthetic << ' ' << r.rank << ' ' << r.predicted << " g " << r.generated << ']';
      o << '\n';
    }
  }
  for (const TransferSnapshot& t : s.transfers)
    o << "transfer " << t.requestId << ' ' << t.src << "->" << t.dst << ' ' << num(t.progress) << ' ' << t.live
      << '\n';
  o << "series";
  dumpFields(o, s.policySeries);
  o << '\n';
  for (const DecisionSnapshot& d : s.recentDecisions) o << "decision " << d.decision.requestId << ' ' << d.reason << '\n';
  return o.str();
}

std::string dump(const RequestTimeline& t) {
  std::ostringstream o;
  o << t.id << " g " << t.generated << " s " << int(t.state) << " times " << t.firstScheduled << ' ' << t.firstToken
    << ' ' << t.reasoningEnd << ' ' << t.firstVisible << ' ' << t.lastToken << " cached " << t.cachedTokens
    << " fin " << t.finished << " dropped " << t.droppedEvents << '\n';
  for (const TimelineEvent& e : t.events)
    o << "  " << e.time << ' ' << requestEventName(e.kind) << ' ' << e.instance << ' ' << e.generated << ' '
      << int(e.state) << '\n';
  if (t.record) {
    const RequestRecord& r = *t.record;
    o << "  record " << r.id << ' ' << r.arrival << ' ' << r.first_token << ' ' << r.reasoning_end << ' '
      << r.first_visible << ' ' << r.last_token << ' ' << num(r.qoe) << ' ' << r.reasoning << ' '
      << num(r.ttft().value_or(-1)) << ' ' << num(r.tpot().value_or(-1)) << ' ' << num(r.e2e().value_or(-1))
      << '\n';
  }
  return o.str();
}

std::string dump(const std::vector<FinishedPoint>& v) {
  std::ostringstream o;
  for (const FinishedPoint& p : v)
    o << num(p.finishS) << ' ' << num(p.reasoning) << ' ' << num(p.ttftS) << ' ' << num(p.tpotS) << ' '
      << num(p.e2eS) << ' ' << num(p.qoe) << '\n';
  return o.str();
}

std::string dump(const std::vector<ProbeSample>& v) {
  std::ostringstream o;
  for (const ProbeSample& s : v) {
    o << s.time << ' ' << s.arrivals << ' ' << s.completions << ' ' << s.tokens << ' ' << s.inFlight << ' '
      << num(s.ttftP50) << ' ' << num(s.ttftP99) << ' ' << num(s.tpotP50) << ' ' << num(s.tpotP99) << ' '
      << num(s.sloAttainment) << ' ' << num(s.qoeViolationRate);
    for (const ProbeInstance& p : s.instances)
      o << " |" << p.gpuBlocks << ' ' << p.cpuBlocks << ' ' << p.queued << ' ' << p.running << ' ' << p.batch << ' '
        << p.role << ' ' << p.cachedGpuBlocks;
    o << '\n';
  }
  return o.str();
}

// What one controller handed out over the run.
struct Watched {
  std::vector<std::string> snapshots;  // at each checkpoint
  std::vector<std::string> watched;    // the watched request's timeline at each checkpoint after the first
  std::string probes, finished, records;
  std::uint64_t fingerprint = 0;
  std::int64_t laneSteps = 0, laneStepsAtFirst = 0;
  std::int64_t finishedCount = 0;
  std::int64_t watchedId = -1;
  bool ok = false;
};

// The request running at the first checkpoint with the most tokens still to
// produce (the lanes-on run picks it; both runs watch the same one), so its
// timeline moves between its events over the next checkpoints.
std::int64_t longRunningRequest(const Snapshot& s, const TimelineStore& store) {
  std::int64_t best = -1, most = 0;
  for (const InstanceSnapshot& in : s.instances)
    for (const QueueSnapshot& q : in.queues)  // ("running", or PASCAL's "reasoning" and "answering")
      if (q.name != "waiting")
        for (const RequestChip& r : q.requests)
          if (auto t = store.request(r.id); t && r.inBatch && r.generated > 1) {
            const std::int64_t left = std::int64_t{t->reasoning} + t->answer - r.generated;
            if (left > most) most = left, best = r.id;
          }
  return best;
}

Watched watch(const Scenario& s, bool lanes, const std::vector<double>& checkpoints, std::int64_t watchId) {
  Watched w;
  SimController c;
  c.setDecodeLanes(lanes);
  if (!c.load(s)) return w;
  c.setMode(RunMode::Express);
  std::string probes, finished;
  for (std::size_t k = 0; k < checkpoints.size(); ++k) {
    c.runTo(checkpoints[k]);
    if (!c.waitIdle(120000)) return w;
    const auto f = c.latest();
    w.snapshots.push_back(dump(f->snapshot));
    if (k == 0) {
      w.laneStepsAtFirst = f->laneSteps;
      w.watchedId = watchId >= 0 ? watchId : longRunningRequest(f->snapshot, c.timelines());
      // From here on the worker refreshes its timeline at every publish.
      c.timelines().setWatched(w.watchedId);
    } else if (auto t = c.timelines().request(w.watchedId)) {
      w.watched.push_back(dump(*t));
    } else {
      w.watched.push_back("gone");
    }
    probes += dump(c.takeProbes());
    finished += dump(c.takeFinished());
  }
  c.runTo(1e9);  // to the end
  if (!c.waitIdle(300000)) return w;
  const auto f = c.latest();
  if (!f->done) return w;
  probes += dump(c.takeProbes());
  finished += dump(c.takeFinished());
  w.probes = probes;
  w.finished = finished;
  w.fingerprint = f->fingerprint;
  w.laneSteps = f->laneSteps;
  w.finishedCount = f->snapshot.finished;
  // Every finished request's timeline and record (600 fit the store's 2000).
  std::ostringstream rec;
  for (std::int64_t id = 0; id < s.workload.requests; ++id)
    if (auto t = c.timelines().request(id)) rec << dump(*t);
  w.records = rec.str();
  w.ok = true;
  return w;
}

}  // namespace

class TestWorkerLane : public QObject {
  Q_OBJECT
private slots:
  void lanesOnEqualLanesOff_data() {
    QTest::addColumn<QString>("name");
    // FCFS under the plain router (the lanes run): chat, reasoning, prefix
    // caching, a closed loop; PASCAL (its own lane, its policy fields read
    // through PascalLocal::synced).
    for (const char* n : {"default", "pascal-char-reasoning-fcfs", "prefix-system-prompt", "closed-loop-chat-think",
                          "pascal-phase-aware"})
      QTest::newRow(n) << QString(n);
  }

  void lanesOnEqualLanesOff() {
    QFETCH(QString, name);
    const Scenario s = sample(name.toStdString());
    const RunResult headless = executeRun(*prepareRun(s), RunOptions{});
    // Checkpoints while the cluster is busy (lanes populated): a few within
    // seconds of the first (the watched request still decoding), then two
    // further on.
    const double span = headless.summary.sim_s > 0 ? headless.summary.sim_s : 60;
    const double t0 = 0.15 * span;
    const std::vector<double> at = {t0, t0 + 0.37, t0 + 1.1, t0 + 2.9, 0.3 * span, 0.45 * span};

    const Watched lazy = watch(s, true, at, -1);
    QVERIFY2(lazy.ok, "lanes-on run did not finish");
    const Watched eager = watch(s, false, at, lazy.watchedId);
    QVERIFY2(eager.ok, "lanes-off run did not finish");

    QCOMPARE(eager.laneSteps, std::int64_t{0});
    QVERIFY2(lazy.laneStepsAtFirst > 0, "the lanes never ran while the GUI's observer watched");
    QVERIFY(lazy.watchedId >= 0);
    QCOMPARE(lazy.fingerprint, eager.fingerprint);
    QCOMPARE(lazy.fingerprint, headless.fingerprint);
    QCOMPARE(lazy.finishedCount, eager.finishedCount);
    QCOMPARE(lazy.snapshots.size(), eager.snapshots.size());
    for (std::size_t k = 0; k < lazy.snapshots.size(); ++k)
      QVERIFY2(lazy.snapshots[k] == eager.snapshots[k],
               qPrintable(QString("snapshot %1 differs; lanes on:\n%2\nlanes off:\n%3")
                              .arg(k)
                              .arg(QString::fromStdString(lazy.snapshots[k]).left(3000))
                              .arg(QString::fromStdString(eager.snapshots[k]).left(3000))));
    QCOMPARE(lazy.watched.size(), eager.watched.size());
    // The watched request was still decoding at the second checkpoint, and
    // its token count moved from there to the third (refreshed between its
    // events, not only at them).
    QVERIFY(lazy.watched.size() >= 2);
    QVERIFY2(lazy.watched[0].find(" fin 0 ") != std::string::npos, lazy.watched[0].c_str());
    QVERIFY2(lazy.watched[0].substr(0, lazy.watched[0].find(" s ")) != lazy.watched[1].substr(0, lazy.watched[1].find(" s ")),
             "the watched request's progress did not move between checkpoints");
    for (std::size_t k = 0; k < lazy.watched.size(); ++k)
      QCOMPARE(QString::fromStdString(lazy.watched[k]), QString::fromStdString(eager.watched[k]));
    QVERIFY(!lazy.finished.empty());
    QVERIFY2(lazy.finished == eager.finished, "finished requests differ");
    QVERIFY2(lazy.probes == eager.probes, "probe samples differ");
    QVERIFY(!lazy.records.empty());
    QVERIFY2(lazy.records == eager.records, "request timelines or records differ");
  }
};

QTEST_MAIN(TestWorkerLane)
#include "test_worker_lane.moc"
