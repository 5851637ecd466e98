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
#include <QSlider>
#include <QLabel>
#include <QLineEdit>

#include "ui/shell/main_window.h"
#include "scenario/scenario_io.h"
#include "ui/scenario/scenario_panel.h"
#include "ui/controller/sim_controller.h"
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

  // Issue 29: clicking the rate slider's handle without moving it logged a
  // change (to the slider's rounding of the rate); a drag logs one.
  void clickOnTheRateHandleIsNoChange() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.loadScenario(pascalSample(), "pascal", &err), qPrintable(err));
    QSlider* rate = nullptr;
    for (QSlider* sl : w.scenarioPanel()->findChildren<QSlider*>())
      if (sl->toolTip().startsWith("Arrival rate of the running")) rate = sl;
    QVERIFY(rate && rate->isEnabled());
    w.controller()->runTo(5);
    QVERIFY(w.controller()->waitIdle(30000));
    rate->setSliderDown(true);  // press on the handle …
    rate->setSliderDown(false);  // … and release where it was
    QTest::qWait(100);
    w.controller()->refreshWatched();
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) { return f.clockS >= 5.0; }));
    QCOMPARE(w.controller()->latest()->changes.size(), std::size_t{0});
    rate->setSliderDown(true);  // a drag: one change, at release
    rate->setValue(rate->value() + 40);
    rate->setSliderDown(false);
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) { return f.changes.size() == 1; }));
    QTest::qWait(100);
    QCOMPARE(w.controller()->latest()->changes.size(), std::size_t{1});
    // The same value again (e.g. from another control): not logged either.
    w.controller()->setArrivalRate(w.controller()->latest()->arrivalRate);
    QTest::qWait(100);
    w.controller()->refreshWatched();
    QTest::qWait(50);
    QCOMPARE(w.controller()->latest()->changes.size(), std::size_t{1});
  }

  // Closed loop (issue 23): the Clients slider shows only for a closed-loop
  // scenario; moving it goes to the run at once as knob "concurrency",
  // logged, and the log replays the run.
  void clientsSliderDrivesAClosedLoop() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto clientsSlider = [&]() -> QSlider* {
      for (QSlider* sl : w.scenarioPanel()->findChildren<QSlider*>())
        if (sl->toolTip().startsWith("Closed-loop clients")) return sl;
      return nullptr;
    };
    QString err;
    QVERIFY2(w.loadScenario(pascalSample(), "pascal", &err), qPrintable(err));
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) { return !f.clientsLive; }));
    QVERIFY(clientsSlider());
    QTRY_VERIFY(!clientsSlider()->isVisible());
    // The "Initial rate" row (its label and its spin box).
    auto initialRateShown = [&] {
      bool label = false, box = false;
      for (QLabel* l : w.scenarioPanel()->findChildren<QLabel*>())
        if (l->text() == "Initial rate") label = l->isVisible();
      for (QDoubleSpinBox* d : w.scenarioPanel()->findChildren<QDoubleSpinBox*>())
        if (d->suffix() == " req/s" && d->toolTip().startsWith("Initial arrival rate")) box = d->isVisible();
      return label && box;
    };
    QVERIFY(initialRateShown());
    Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/closed-loop-chat-think.json");
    s.workload.requests = 600;
    QVERIFY2(w.loadScenario(s, "closed", &err), qPrintable(err));
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) { return f.clientsLive && f.clients == 160; }));
    QTRY_VERIFY(clientsSlider() && clientsSlider()->isVisible());
    // Issue 50: a closed loop has no "Initial rate"; an open one has.
    QVERIFY(!initialRateShown());
    QSlider* slider = clientsSlider();
    QCOMPARE(slider->value(), 160);
    w.controller()->runTo(5);
    QVERIFY(w.controller()->waitIdle(30000));
    slider->setValue(40);
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) {
      return f.changes.size() == 1 && f.changes[0].knob == "concurrency" && f.changes[0].value == 40 && f.clients == 40;
    }));
    w.controller()->runTo(60);
    QVERIFY(w.controller()->waitIdle(60000));
    const auto f = w.controller()->latest();
    const ReplayResult r = replayRun(s, f->changes, f->snapshot.events);
    QCOMPARE(r.fingerprint, f->fingerprint);
    QVERIFY(replayRun(s, {}, f->snapshot.events).fingerprint != r.fingerprint);
  }

  // Issue 15: typing "-5" dropped the minus and applied 5 live; 99999999999
  // became the maximum. Out-of-range input is refused inline, never applied.
  void outOfRangeKnobIsRefusedInline() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.loadScenario(pascalSample(), "pascal", &err), qPrintable(err));
    ScenarioPanel* panel = w.scenarioPanel();
    QDoubleSpinBox* sb = panel->knobEditors().at("demote_tokens");
    const double before = sb->value();
    w.controller()->runTo(5);
    QVERIFY(w.controller()->waitIdle(30000));
    auto* edit = sb->findChild<QLineEdit*>();
    QVERIFY(edit);
    for (const QString& typed : {QString("-5"), QString("99999999999")}) {
      sb->setFocus();
      edit->selectAll();
      QTest::keyClick(edit, Qt::Key_Backspace);
      QTest::keyClicks(edit, typed);
      QVERIFY2(edit->text().startsWith(typed), qPrintable(edit->text()));  // nothing dropped
      QVERIFY2(panel->knobError("demote_tokens").contains("must be in"), qPrintable(panel->knobError("demote_tokens")));
      QTest::keyClick(edit, Qt::Key_Return);
      QVERIFY2(sb->value() == before, qPrintable(QString("%1 -> %2 (%3)").arg(before).arg(sb->value()).arg(edit->text())));  // not clamped, not changed
      QVERIFY2(panel->knobError("demote_tokens").contains("kept"), qPrintable(panel->knobError("demote_tokens")));
      QTest::qWait(50);
      const auto& ch = w.controller()->latest()->changes;
      QVERIFY2(ch.empty(), qPrintable(ch.empty() ? QString() : QString("%1 = %2 after '%3'")
                                                                     .arg(QString::fromStdString(ch[0].knob))
                                                                     .arg(ch[0].value)
                                                                     .arg(typed)));  // nothing applied live
    }
  }

  // A huge arrival rate fits its label (it used to run into the slider).
  void hugeRateLabelFits() {
    MainWindow w;
    w.resize(1024, 768);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    ScenarioPanel* panel = w.scenarioPanel();
    for (double r : {0.1, 8.0, 199.0, 5000.0, 99999999.0}) {
      panel->setLiveRate(r, true);
      QTest::qWait(10);
      QLabel* l = panel->rateLabel();
      QVERIFY2(l->width() >= l->fontMetrics().horizontalAdvance(l->text()),
               qPrintable(QString("'%1' needs %2 px, has %3").arg(l->text()).arg(l->fontMetrics().horizontalAdvance(l->text())).arg(l->width())));
      QVERIFY(!l->geometry().intersects(panel->rateSlider()->geometry()));
    }
  }
};

QTEST_MAIN(TestLiveKnobs)
#include "test_live_knobs.moc"
