// GUI tests, run headless (QT_QPA_PLATFORM=offscreen): the worker-thread
// controller (play/pause/step, live rate changes, replay determinism,
// shutdown mid-run), the main window driven like a user, chart exports, and
// a screenshot of the main window.
#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QTextBrowser>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QAbstractButton>
#include <QSpinBox>
#include <QApplication>
#include <QStatusBar>
#include <QTimer>
#include <QMessageBox>

#include <memory>

#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/shell/main_window.h"
#include "run/execute.h"
#include "scenario/scenario_io.h"
#include "ui/scenario/scenario_panel.h"
#include "ui/controller/sim_controller.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSample = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/pascal-baseline-rr.json");

Scenario sample(std::int64_t requests = -1) {
  Scenario s = loadScenarioFile(kSample.toStdString());
  if (requests >= 0) s.workload.requests = requests;
  return s;
}

using test::waitFrame;

// Answer the next modal message box with `button` and return its text.
std::shared_ptr<QString> answerNextBox(QMessageBox::StandardButton button) {
  auto text = std::make_shared<QString>();
  QTimer::singleShot(50, [text, button] {
    auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
    if (!box) return;
    *text = box->text() + "\n" + box->informativeText();
    if (QAbstractButton* b = box->button(button)) b->click();
    else box->reject();
  });
  return text;
}

}  // namespace

class TestUi : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_ui");
  }

  void controllerPlayPauseStep() {
    SimController c;
    QString err;
    QVERIFY2(c.load(sample(100000), &err), qPrintable(err));
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.generation == 1 && f.snapshot.instances.size() == 8; }));
    QCOMPARE(c.latest()->clockS, 0.0);

    c.step();  // one simulated second
    QVERIFY(c.waitIdle(10000));
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running && f.clockS >= 1.0; }));
    QCOMPARE(c.latest()->clockS, 1.0);
    QVERIFY(c.latest()->snapshot.now <= kNsPerSecond);
    QVERIFY(c.latest()->snapshot.arrived > 0);

    c.setSpeed(0);  // as fast as possible
    c.play();
    QVERIFY(c.isRunning());
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.clockS > 5.0; }));
    c.pause();
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running; }));
    const double t = c.latest()->clockS;
    QTest::qWait(100);
    QCOMPARE(c.latest()->clockS, t);  // paused: the clock stands still

    // Paced: at 2x for ~0.3 s wall the clock moves by roughly 0.6 s.
    c.setSpeed(2.0);
    c.play();
    QTest::qWait(300);
    c.pause();
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running; }));
    const double moved = c.latest()->clockS - t;
    QVERIFY2(moved > 0.2 && moved < 3.0, qPrintable(QString::number(moved)));

    c.reset();
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.generation == 2; }));
    QCOMPARE(c.latest()->clockS, 0.0);
  }

  void runToEndMatchesCliFingerprint() {
    // Without live changes the GUI's run is the CLI's run, bit for bit.
    const Scenario s = sample(150);
    auto prepared = prepareRun(s);
    const RunResult cli = executeRun(*prepared, RunOptions{});
    SimController c;
    QVERIFY(c.load(s));
    c.setMode(RunMode::Express);
    c.play();
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.done; }, 60000));
    QCOMPARE(fingerprintHex(c.latest()->fingerprint), fingerprintHex(cli.fingerprint));
    QCOMPARE(c.latest()->snapshot.finished, 150);
  }

  // Issue 29: the end time shown overshot the engine's (567.0 vs sim_s
  // 559.17) and differed between identical runs: the clock stopped at the
  // end of the chunk that found the end. It is now the engine's own.
  void endTimeIsTheEngines() {
    const Scenario s = sample(150);
    auto prepared = prepareRun(s);
    const RunResult cli = executeRun(*prepared, RunOptions{});
    for (RunMode m : {RunMode::Fast, RunMode::Express, RunMode::Run}) {
      SimController c;
      QVERIFY(c.load(s));
      c.setMode(m);
      c.setSpeed(m == RunMode::Run ? 2000.0 : 1.0);
      c.play();
      QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.done; }, 60000));
      QCOMPARE(c.latest()->clockS, cli.summary.sim_s);
      QCOMPARE(c.latest()->clockS, nsToSeconds(c.latest()->snapshot.now));
    }
  }

  // The ETA's remaining simulated time: a run with a backlog ends when its
  // unfinished requests have finished at the pace so far.
  void etaCountsTheBacklog() {
    // All 1000 arrived by t = 164, 290 finished: ~401 s more at that pace.
    QCOMPARE(estimateRemainingSimS(164, 1000, 1000, 290), 710.0 * 164 / 290);
    // Keeping up (finished ≈ arrived): about the remaining arrivals' time.
    QCOMPARE(estimateRemainingSimS(100, 1000, 400, 390), 610.0 * 100 / 390);
    QCOMPARE(estimateRemainingSimS(100, 1000, 1000, 1000), 0.0);
    QCOMPARE(estimateRemainingSimS(30, 1000, 10, 0), 990.0 * 30 / 10);
    QCOMPARE(estimateRemainingSimS(0, 1000, 0, 0), -1.0);
    QCOMPARE(estimateRemainingSimS(40, -1, 10, 5), -1.0);  // unknown size (a trace without a count)
    QCOMPARE(estimateRemainingSimS(40, 1000, 10, 5, 100), 60.0);  // a duration
  }

  // Issue 29: Fast mode stayed on for the next scenario, which then ran to
  // its end at once on Play. A newly opened scenario starts in Run mode.
  void fastModeDoesNotCarryOver() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.openScenario(kSample, &err), qPrintable(err));
    QAction* fast = nullptr;
    QAction* run = nullptr;
    for (QAction* a : w.findChildren<QAction*>()) {
      if (a->text() == "Fast") fast = a;
      if (a->text() == "Run") run = a;
    }
    QVERIFY(fast && run);
    fast->trigger();
    QCOMPARE(w.controller()->mode(), RunMode::Fast);
    w.controller()->pause();
    QVERIFY2(w.openScenario(SERVELAB_SOURCE_DIR "/samples/default.json", &err), qPrintable(err));
    QCOMPARE(w.controller()->mode(), RunMode::Run);
    QVERIFY(run->isChecked() && !fast->isChecked());
    QVERIFY(!w.controller()->isRunning());
  }

  // Issue 50: Run, Fast and Express started the run, so the next Play
  // click paused it. They set the mode only; Play alone starts and pauses,
  // and its text says which it will do.
  void modeButtonsOnlySetTheMode() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.openScenario(kSample, &err), qPrintable(err));
    QAction *play = nullptr, *fast = nullptr, *express = nullptr, *run = nullptr;
    for (QAction* a : w.findChildren<QAction*>()) {
      if (a->text() == "Play") play = a;
      if (!a->actionGroup()) continue;  // (the "Run" toolbar's own action)
      if (a->text() == "Fast") fast = a;
      if (a->text() == "Express") express = a;
      if (a->text() == "Run") run = a;
    }
    QVERIFY(play && fast && express && run);
    for (QAction* mode : {fast, express, run}) {
      mode->trigger();
      QVERIFY(mode->isChecked());
      QVERIFY2(!w.controller()->isRunning(), qPrintable(mode->text() + " started the run"));
      QCOMPARE(play->text(), QString("Play"));
    }
    play->trigger();
    QVERIFY(w.controller()->isRunning());
    QCOMPARE(play->text(), QString("Pause"));
    fast->trigger();  // a playing run goes on in the new mode
    QCOMPARE(w.controller()->mode(), RunMode::Fast);
    QVERIFY(w.controller()->isRunning());
    QCOMPARE(play->text(), QString("Pause"));
    play->trigger();
    QVERIFY(!w.controller()->isRunning());
    QCOMPARE(play->text(), QString("Play"));
  }

  // Issue 50: Help ▸ User guide (F1), Glossary and Keyboard shortcuts open
  // offline with their text.
  void helpMenuHasGuideGlossaryAndShortcuts() {
    MainWindow w;
    w.resize(1024, 768);
    w.show();
    auto open = [&](const char* action, const char* window) -> QString {
      auto* a = w.findChild<QAction*>(action);
      if (!a) return {};
      a->trigger();
      auto* d = w.findChild<QDialog*>(window);
      auto* t = d ? d->findChild<QTextBrowser*>() : nullptr;
      return t ? t->toPlainText() : QString();
    };
    const QString guide = open("UserGuideAction", "UserGuideWindow");
    QVERIFY2(guide.contains("Run controls") && guide.contains("Lecture mode"), qPrintable(guide.left(200)));
    QCOMPARE(w.findChild<QAction*>("UserGuideAction")->shortcut(), QKeySequence(QKeySequence::HelpContents));
    const QString glossary = open("GlossaryAction", "GlossaryWindow");
    for (const char* term : {"TTFT", "first answer token", "TPOT", "p99", "Answering", "Binned tail TTFT"})
      QVERIFY2(glossary.contains(term), term);
    const QString keys = open("ShortcutsAction", "ShortcutsWindow");
    for (const char* k : {"Space", "F5", "F6", "F7", "Ctrl+K", "Play"}) QVERIFY2(keys.contains(k), qPrintable(keys));
    // The built-in copy when no docs folder is found is the same guide.
    QFile builtIn(":/servelab/docs/user-guide.md");
    QVERIFY(builtIn.open(QIODevice::ReadOnly));
    QVERIFY(builtIn.readAll().contains("## Run controls"));
  }

  // Issue 50: a trace that cannot be read names the field that named it.
  void traceErrorNamesItsField() {
    Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/trace-burstgpt-rr.json");
    QVERIFY(s.workload.trace);
    s.workload.trace->path = "traces/no-such-trace.csv";
    SimController c;
    QString err;
    QVERIFY(!c.load(s, &err));
    QVERIFY2(err.contains("workload.trace.path: ") && err.contains("no-such-trace.csv: cannot open trace file"),
             qPrintable(err));
    // Through the app: the same words under the scenario panel and in the status bar.
    QTemporaryDir dir;
    const QString path = dir.filePath("bad-trace.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    s.workload.trace->path = "/no/such/dir/trace.csv";
    f.write(QByteArray::fromStdString(dumpScenario(s)));
    f.close();
    MainWindow w;
    QVERIFY(!w.openScenario(path, &err));
    QVERIFY2(err.contains("workload.trace.path: /no/such/dir/trace.csv: cannot open trace file"), qPrintable(err));
    // Other errors are left as they are.
    QCOMPARE(nameTraceField(s, "cluster.instances: must be > 0"), QString("cluster.instances: must be > 0"));
  }

  // Issue 29: "Apply and reset"'s error appeared below the fold at 1024×768.
  void applyErrorIsScrolledIntoView() {
    MainWindow w;
    w.resize(1024, 768);
    w.fitDocksToSize();
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.openScenario(kSample, &err), qPrintable(err));
    ScenarioPanel* panel = w.scenarioPanel();
    QComboBox* model = nullptr;
    for (QComboBox* c : panel->findChildren<QComboBox*>())
      if (c->findText("llama-3.1-70b") >= 0 || c->findData("llama-3.1-70b") >= 0) model = c;
    QVERIFY(model);
    const int big = model->findText("llama-3.1-70b") >= 0 ? model->findText("llama-3.1-70b") : model->findData("llama-3.1-70b");
    model->setCurrentIndex(big);  // does not fit one GPU of this cluster
    QVERIFY(panel->applyButton()->isEnabled());
    QTest::mouseClick(panel->applyButton(), Qt::LeftButton);
    auto* shown = panel->findChild<QLabel*>("ApplyError");
    QVERIFY(shown);
    QTRY_VERIFY(shown->isVisible() && !shown->text().isEmpty());
    auto* area = qobject_cast<QScrollArea*>(panel->parentWidget()->parentWidget());
    QVERIFY(area);
    auto inView = [&] { return QRect(shown->mapTo(area->viewport(), QPoint(0, 0)), shown->size()); };
    QTRY_VERIFY2(area->viewport()->rect().contains(inView()),
             qPrintable(QString("error at y %1..%2, viewport height %3").arg(inView().top()).arg(inView().bottom())
                            .arg(area->viewport()->height())));
  }

  void liveRateChangeIsAppliedRecordedAndReplayable() {
    const Scenario s = sample(100000);
    SimController c;
    QVERIFY(c.load(s));
    c.runTo(20);
    QVERIFY(c.waitIdle(20000));
    c.setArrivalRate(30.0);
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 1; }));
    c.runTo(60);
    QVERIFY(c.waitIdle(60000));
    QVERIFY(waitFrame(c, [](const LiveFrame& f) { return !f.running && f.clockS >= 60.0; }));
    const auto f = c.latest();
    QCOMPARE(f->changes.size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(f->changes[0].knob), QString(kKnobArrivalRate));
    QCOMPARE(f->changes[0].value, 30.0);
    QCOMPARE(f->changes[0].time, 20 * kNsPerSecond);
    QCOMPARE(f->arrivalRate, 30.0);

    // It took effect: ~8/s for 20 s then ~30/s for 40 s, versus ~8/s throughout.
    auto base = prepareLiveRun(s);
    base->sim().run(60 * kNsPerSecond);
    const double withChange = static_cast<double>(f->snapshot.arrived);
    const double without = static_cast<double>(base->sim().arrived());
    QVERIFY2(withChange > 2.0 * without, qPrintable(QString("%1 vs %2").arg(withChange).arg(without)));
    QVERIFY(withChange > 1000 && withChange < 1700);

    // scenario + seed + change log replays the run exactly.
    const ReplayResult r = replayRun(s, f->changes, f->snapshot.events);
    QCOMPARE(r.events, f->snapshot.events);
    QCOMPARE(fingerprintHex(r.fingerprint), fingerprintHex(f->fingerprint));
    QCOMPARE(r.finished, f->snapshot.finished);
    const ReplayResult plain = replayRun(s, {}, f->snapshot.events);
    QVERIFY(plain.fingerprint != r.fingerprint);
    // The change log survives a JSON round trip.
    QCOMPARE(changeLogFromJson(nlohmann::json::parse(changeLogToJson(f->changes).dump())), f->changes);
  }

  void shutdownMidRun() {
    QElapsedTimer t;
    t.start();
    {
      auto* c = new SimController;
      QVERIFY(c->load(sample(100000)));
      c->setSpeed(0);
      c->play();
      QVERIFY(waitFrame(*c, [](const LiveFrame& f) { return f.running && f.clockS > 1; }));
      delete c;  // must neither crash nor hang
    }
    QVERIFY(t.elapsed() < 10000);
  }

  void mainWindowLikeAUser() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.openScenario(kSample, &err), qPrintable(err));
    SimController* c = w.controller();
    c->setSpeed(0);
    c->play();
    QVERIFY(waitFrame(*c, [](const LiveFrame& f) { return f.clockS > 3; }));

    // Move the live rate slider: the run gets the new rate and logs it.
    ScenarioPanel* panel = w.scenarioPanel();
    QVERIFY(panel->rateSlider()->isEnabled());
    panel->rateSlider()->setValue(panel->rateSlider()->value() + 150);
    const double wanted = panel->liveRate();
    QVERIFY(wanted > 8.0);
    QVERIFY(waitFrame(*c, [&](const LiveFrame& f) { return !f.changes.empty() && std::abs(f.arrivalRate - wanted) < 1e-9; }));
    c->pause();
    QVERIFY(waitFrame(*c, [](const LiveFrame& f) { return !f.running; }));
    w.pullNow();
    LiveChart* ttft = w.chartPanel()->chart("ttft");
    QVERIFY(ttft);
    QVERIFY(ttft->drawnPoints() > 0);

    // An out-of-range knob value is refused inline, with the reason.
    auto knobs = panel->knobEditors();
    QVERIFY(knobs.count("quantum") == 1);
    QDoubleSpinBox* quantum = knobs.at("quantum");
    auto* edit = quantum->findChild<QLineEdit*>();
    QVERIFY(edit);
    edit->selectAll();
    QTest::keyClicks(edit, "0");
    bool refused = false;
    for (QLabel* l : panel->findChildren<QLabel*>())
      if (l->isVisible() && l->text().contains("must be in")) refused = true;
    QVERIFY(refused);

    // Switch policy and apply: the run restarts with it.
    QComboBox* policy = panel->policyCombo();
    const int fcfs = policy->findData("fcfs", Qt::UserRole);
    QVERIFY(fcfs >= 0);
    policy->setCurrentIndex(fcfs);
    QVERIFY(panel->applyButton()->isEnabled());
    // The run restarts: its live rate change is lost, so Apply asks first.
    auto applyAsked = answerNextBox(QMessageBox::Discard);
    QTest::mouseClick(panel->applyButton(), Qt::LeftButton);
    QVERIFY2(applyAsked->contains("live change"), qPrintable(*applyAsked));
    QCOMPARE(QString::fromStdString(c->scenario().policy.id), QString("fcfs"));
    c->step();
    QVERIFY(c->waitIdle(10000));
    QVERIFY(waitFrame(*c, [](const LiveFrame& f) { return !f.running && f.clockS >= 1 && f.changes.empty(); }));

    // Export a chart to PNG, SVG and CSV.
    c->runTo(15);
    QVERIFY(c->waitIdle(20000));
    w.pullNow();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    LiveChart* tp = w.chartPanel()->chart("throughput");
    QVERIFY(tp->exportPng(dir.filePath("t.png")));
    QVERIFY(tp->exportSvg(dir.filePath("t.svg")));
    QVERIFY(tp->exportCsv(dir.filePath("t.csv")));
    QImage png(dir.filePath("t.png"));
    QVERIFY(!png.isNull() && png.width() >= 640);
    QFile svg(dir.filePath("t.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray svgText = svg.readAll();
    QVERIFY(svgText.contains("<svg") && svgText.contains("Throughput"));
    QFile csv(dir.filePath("t.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv.readAll().split('\n');
    QVERIFY(lines.first().startsWith("series,time (s),"));
    QVERIFY(lines.size() > 10);
    QVERIFY(lines[1].startsWith("output tokens,"));
    QCOMPARE(w.exportCharts(dir.filePath("all")), 28);  // 9 charts (6 live, 3 CDFs) × PNG, SVG, CSV + run.json
  }

  // Issue 15: Open / a preset / Quit discarded edits and live changes
  // without asking; Apply silently put the live rate back.
  void confirmsBeforeDiscardingAndApplyKeepsTheLiveRate() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.openScenario(kSample, &err), qPrintable(err));
    const QString other = QStringLiteral(SERVELAB_SOURCE_DIR "/samples/default.json");
    // Nothing to lose: no question.
    QVERIFY(w.confirmDiscard("Opening"));
    // A live rate change: asked, Cancel keeps everything.
    w.controller()->runTo(5);
    QVERIFY(w.controller()->waitIdle(30000));
    w.scenarioPanel()->rateSlider()->setValue(w.scenarioPanel()->rateSlider()->maximum() * 3 / 4);
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) { return f.changes.size() == 1; }));
    auto asked = answerNextBox(QMessageBox::Cancel);
    QVERIFY(!w.openScenarioInteractive(other));
    QVERIFY2(asked->contains("live change"), qPrintable(*asked));
    QVERIFY(w.windowTitle().contains("pascal-baseline-rr"));
    QCOMPARE(w.controller()->latest()->changes.size(), std::size_t{1});
    // Apply (after another edit) keeps the live rate as the initial rate.
    const double live = w.controller()->latest()->arrivalRate;
    auto* requests = w.scenarioPanel()->findChild<QSpinBox*>();
    QVERIFY(requests);
    QVERIFY(live != sample().workload.arrival.rate);
    QTest::mouseClick(w.scenarioPanel()->applyButton(), Qt::LeftButton);  // disabled: nothing edited
    for (QSpinBox* sb : w.scenarioPanel()->findChildren<QSpinBox*>())
      if (sb->maximum() > 100000) { sb->setValue(sb->value() - 1); break; }  // the request count
    QVERIFY(w.scenarioPanel()->applyButton()->isEnabled());
    asked = answerNextBox(QMessageBox::Discard);  // the change log goes, the rate stays
    QTest::mouseClick(w.scenarioPanel()->applyButton(), Qt::LeftButton);
    QVERIFY2(asked->startsWith("Apply") && asked->contains("live change"), qPrintable(*asked));
    QCOMPARE(w.controller()->scenario().workload.arrival.rate, live);
    // Unapplied panel edits: asked too; Discard opens the other file.
    for (QSpinBox* sb : w.scenarioPanel()->findChildren<QSpinBox*>())
      if (sb->maximum() > 100000) { sb->setValue(sb->value() - 1); break; }
    QVERIFY(w.scenarioPanel()->dirty());
    asked = answerNextBox(QMessageBox::Discard);
    QVERIFY(w.openScenarioInteractive(other));
    QVERIFY2(asked->contains("edits"), qPrintable(*asked));
    QVERIFY(w.windowTitle().contains("default"));
  }

  // A malformed file from File ▸ Open: the whole message, in a box.
  void openingABadFileShowsTheWholeMessage() {
    MainWindow w;
    w.show();
    QTemporaryDir tmp;
    const QString bad = tmp.filePath("bad.json");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"workload": {"arrival": {"rate": -3}}})");
    f.close();
    auto shown = answerNextBox(QMessageBox::Ok);
    QVERIFY(!w.openScenarioInteractive(bad));
    QVERIFY2(shown->contains("bad.json") && shown->contains("workload.arrival.rate"), qPrintable(*shown));
  }

  // The status bar's wall time is the time elapsed while playing, not the
  // engine's busy time.
  void statusBarWallIsElapsedTime() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.openScenario(kSample, &err), qPrintable(err));
    w.controller()->setSpeed(1.0);
    w.controller()->play();
    QTest::qWait(1600);
    w.controller()->pause();
    QVERIFY(waitFrame(*w.controller(), [](const LiveFrame& f) { return !f.running; }));
    w.pullNow();
    const auto f = w.controller()->latest();
    QVERIFY2(f->elapsedS >= 1.3 && f->elapsedS < 5, qPrintable(QString::number(f->elapsedS)));
    QVERIFY2(f->wallS < f->elapsedS, qPrintable(QString("busy %1, elapsed %2").arg(f->wallS).arg(f->elapsedS)));
    QLabel* time = nullptr;
    for (QLabel* l : w.statusBar()->findChildren<QLabel*>())
      if (l->text().startsWith("sim ")) time = l;
    QVERIFY(time);
    QVERIFY2(time->text().contains(QString("wall %1").arg(f->elapsedS, 0, 'f', 1)), qPrintable(time->text()));
  }

  void clusterViewScalesTo64() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    Scenario s = sample(2000);
    s.cluster.instances = 64;
    QVERIFY(w.loadScenario(s, "64 instances"));
    w.controller()->runTo(5);
    QVERIFY(w.controller()->waitIdle(20000));
    w.pullNow();
    QCOMPARE(w.controller()->latest()->snapshot.instances.size(), std::size_t{64});
    w.clusterView()->grab();  // paint once
    QVERIFY(w.clusterView()->compact());
  }

  void screenshotOfMainWindow() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openScenario(kSample));
    w.controller()->runTo(30);
    QVERIFY(w.controller()->waitIdle(30000));
    w.pullNow();
    const QImage img = w.grab().toImage();
    QCOMPARE(img.size(), QSize(1280, 800));
    const QString out = QStringLiteral(SERVELAB_TEST_OUT "/main_window.png");
    QVERIFY(img.save(out));
    // Not blank: plenty of distinct colours.
    QSet<QRgb> colours;
    for (int y = 0; y < img.height(); y += 7)
      for (int x = 0; x < img.width(); x += 7) colours.insert(img.pixel(x, y));
    QVERIFY(colours.size() > 20);
    QVERIFY(!w.clusterView()->compact());
  }
};

QTEST_MAIN(TestUi)
#include "test_ui.moc"
