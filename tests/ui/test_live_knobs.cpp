// Live policy knobs (50-gui.md "Live sliders"): a live-safe knob moved while
// the run is going is applied at an event boundary on the worker, logged as
// "policy.<knob>" in the change log, changes what the run does from then on,
// and scenario + seed + change log replays the run exactly. The scenario
// panel sends live-safe knobs of the running policy at once and keeps the
// others for "Apply".
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QPushButton>
#include <QTest>

#include "main_window.h"
#include "scenario/scenario_io.h"
#include "scenario_panel.h"
#include "sim_controller.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

Scenario pascalSample() {
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/pascal-phase-aware.json");
  s.workload.requests = 400;
  return s;
}

template <class P> bool waitFrame(SimController& c, P pred, int timeoutMs = 30000) {
  return test::waitFrame(c, pred, timeoutMs);
}

}  // namespace

class TestLiveKnobs : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_live_knobs");
  }

  // answering_quantum 500 -> 20 at t = 30 s: logged, effective, replayable.
  void controllerAppliesLogsAndReplays() {
    const Scenario s = pascalSample();
    SimController c;
    QVERIFY(c.load(s));
    c.runTo(30);
    QVERIFY(c.waitIdle(30000));
    c.setPolicyKnob("answering_quantum", 20);
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 1; }));
    c.setPolicyKnob("priority_by_quanta", 0);  // not live-safe: dropped, not logged
    c.setPolicyKnob("answering_quantum", 0);   // out of range: dropped
    c.runTo(90);
    QVERIFY(c.waitIdle(60000));
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running && f.clockS >= 90.0; }));
    const auto f = c.latest();
    QCOMPARE(f->changes.size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(f->changes[0].knob), QString("policy.answering_quantum"));
    QCOMPARE(f->changes[0].value, 20.0);
    QCOMPARE(f->changes[0].time, 30 * kNsPerSecond);

    // Replaying with the log gives the same run; without it, another one.
    const ReplayResult r = replayRun(s, f->changes, f->snapshot.events);
    QCOMPARE(r.fingerprint, f->fingerprint);
    QCOMPARE(r.finished, f->snapshot.finished);
    const ReplayResult plain = replayRun(s, {}, f->snapshot.events);
    QVERIFY(plain.fingerprint != r.fingerprint);
  }

  // The panel: a live-safe knob of the running policy goes to the run at
  // once (Apply stays disabled); a knob that is not live-safe waits for Apply.
  void panelSendsLiveKnobsAtOnce() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.loadScenario(pascalSample(), "pascal", &err), qPrintable(err));
    ScenarioPanel* panel = w.scenarioPanel();
    QPushButton* apply = nullptr;
    for (QPushButton* b : panel->findChildren<QPushButton*>())
      if (b->text().startsWith("Apply")) apply = b;
    QVERIFY(apply);
    const auto& knobs = panel->knobEditors();
    QVERIFY(knobs.count("demote_tokens") == 1 && knobs.count("priority_by_quanta") == 1);
    w.controller()->runTo(10);
    QVERIFY(w.controller()->waitIdle(30000));
    knobs.at("demote_tokens")->setValue(3000);
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) {
      return f.changes.size() == 1 && f.changes[0].knob == "policy.demote_tokens" && f.changes[0].value == 3000;
    }));
    QVERIFY(!apply->isEnabled());
    knobs.at("priority_by_quanta")->setValue(0);
    QTest::qWait(50);
    QCOMPARE(w.controller()->latest()->changes.size(), std::size_t{1});
    QVERIFY(apply->isEnabled());
  }
};

QTEST_MAIN(TestLiveKnobs)
#include "test_live_knobs.moc"
