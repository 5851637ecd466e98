// Speculative decoding in the app (issue 48 item 4): the instance card's
// "spec k=3 · 2.4 tok/step · 61 % accepted" line from the snapshots' totals
// (ui/cluster/spec_line.h), the scenario panel's live Speculation control
// (enabled only with cluster.speculative, sending "speculative_k" through
// SimController → LiveRun::apply, logged and replayable), and the
// Speculation chart tab's TPOT-vs-load dots in two series, on and off.
#include <QCheckBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <numeric>

#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/cluster/spec_line.h"
#include "ui/controller/sim_controller.h"
#include "ui/scenario/scenario_panel.h"
#include "ui/shell/main_window.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

const char* kSample = SERVELAB_SOURCE_DIR "/samples/speculative-crossover.json";

Scenario sample(std::int64_t requests) {
  Scenario s = loadScenarioFile(kSample);
  s.workload.requests = requests;
  return s;
}

// A frame of `n` instances at simulated second `t`, each with these
// speculation totals (k, drafted, accepted, steps).
std::shared_ptr<LiveFrame> frameAt(double t, int n, SpeculativeSnapshot spec, int generation = 1) {
  auto f = std::make_shared<LiveFrame>();
  f->generation = generation;
  f->clockS = t;
  f->snapshot.now = secondsToNs(t);
  f->snapshot.instances.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    InstanceSnapshot& in = f->snapshot.instances[static_cast<std::size_t>(i)];
    in.id = i;
    in.gpuBlocks = 1000;
    in.gpuBlocksUsed = 300;
    in.cpuBlocks = 100;
    in.batchSize = 12;
    in.busy = true;
    in.queues = {{"running", {}}, {"waiting", {}}};
    in.spec = spec;
  }
  return f;
}

ProbeSample probeAt(double t, int k, double tpotS, std::int64_t arrivals) {
  ProbeSample p;
  p.time = secondsToNs(t);
  p.intervalS = 1;
  p.arrivals = arrivals;
  p.tpotP50 = tpotS;
  p.instances.resize(1);
  p.instances[0].specK = k;
  p.instances[0].draftedTokens = k >= 0 ? 0 : -1;
  p.instances[0].acceptedTokens = k >= 0 ? 0 : -1;
  return p;
}

}  // namespace

class TestSpeculativeView : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_speculative_view");
  }

  // The figures and their wording.
  void ratesAndForms() {
    const specline::SpecRates r = specline::ratesBetween({3, 300, 150, 100}, {3, 600, 333, 200}, 2.0);
    QVERIFY(r.on && r.recent);
    QCOMPARE(r.k, 3);
    QCOMPARE(r.steps, std::int64_t{100});
    QVERIFY(std::abs(r.tokPerStep - 2.83) < 1e-12);  // (100 + 183) / 100
    QVERIFY(std::abs(r.acceptance - 0.61) < 1e-12);  // 183 / 300
    const QStringList forms = specline::forms(r);
    QCOMPARE(forms.front(), QString("spec k=3 · 2.8 tok/step · 61 % accepted"));
    QCOMPARE(forms.back(), QString("k=3 · 2.8/step"));
    QVERIFY(specline::tooltip(r).contains("61.0 % of the draft tokens accepted"));
    // Off by the live control; idle; no speculation at all.
    QCOMPARE(specline::forms(specline::ratesBetween({3, 600, 333, 200}, {0, 600, 333, 200}, 2)).front(),
             QString("spec off (k=0)"));
    QCOMPARE(specline::forms(specline::ratesBetween({3, 600, 333, 200}, {3, 600, 333, 200}, 2)).front(),
             QString("spec k=3 · idle"));
    QVERIFY(specline::forms(specline::ratesBetween({}, {}, 2)).isEmpty());
  }

  // The card line follows the snapshots: rates over the last
  // specline::kWindowS simulated seconds (since the start before that),
  // drawn whole on a full card at a 1024×768 window's cluster area; compact
  // cards show the short form, tiles nothing (their tooltip has it all).
  void cardLineFromSnapshots() {
    ClusterView view;
    view.resize(1000, 560);
    view.setFrame(frameAt(1, 1, {3, 300, 150, 100}));
    view.grab();
    // Since the start: 150 of 300 accepted, (100 + 150) / 100 tokens per step.
    QCOMPARE(view.specLineText(0), QString("spec k=3 · 2.5 tok/step · 50 % accepted"));
    view.setFrame(frameAt(2, 1, {3, 600, 366, 200}));
    view.grab();
    QCOMPARE(view.specLineText(0), QString("spec k=3 · 2.8 tok/step · 61 % accepted"));  // 366/600, 566/200
    // Two seconds on: only the window's differences count (300 drafted, 216 accepted, 100 steps).
    view.setFrame(frameAt(4, 1, {3, 900, 582, 300}));
    const QImage img = view.grab().toImage();
    QCOMPARE(view.specLineText(0), QString("spec k=3 · 3.2 tok/step · 72 % accepted"));
    const specline::SpecRates r = view.specRates(0);
    QVERIFY(std::abs(r.tokPerStep - 3.16) < 1e-12 && std::abs(r.acceptance - 0.72) < 1e-12);
    QCOMPARE(r.windowS, 2.0);
    QVERIFY(view.cardRect(0).contains(view.specLineRect(0)));
    QVERIFY(view.toolTipAt(view.specLineRect(0).center()).startsWith("Speculative decoding: each decode sequence"));
    // Drawn: text pixels in the line's rect, above the queues.
    bool ink = false;
    for (int x = view.specLineRect(0).left(); x <= view.specLineRect(0).right() && !ink; ++x)
      ink = img.pixelColor(x, view.specLineRect(0).center().y()).lightness() < 200;
    QVERIFY(ink);
    for (const QRect& q : view.queueRects()) QVERIFY(q.top() > view.specLineRect(0).bottom());
    // The live control turned it off: said so.
    view.setFrame(frameAt(5, 1, {0, 900, 582, 300}));
    view.grab();
    QCOMPARE(view.specLineText(0), QString("spec off (k=0)"));
    // A new run (generation) starts over.
    view.setFrame(frameAt(1, 1, {3, 100, 25, 50}, 2));
    view.grab();
    QCOMPARE(view.specLineText(0), QString("spec k=3 · 1.5 tok/step · 25 % accepted"));

    // A 1024×768 window's cluster area (about 680×300): four full (or
    // dense) cards, each with the whole line.
    view.resize(680, 300);
    view.setFrame(frameAt(2, 4, {3, 600, 366, 200}, 3));
    view.grab().save(SERVELAB_TEST_OUT "/spec-cards-680x300.png");
    QVERIFY(!view.compact() && !view.tiles());
    for (int i = 0; i < 4; ++i) {
      QVERIFY2(specline::forms(view.specRates(i)).contains(view.specLineText(i)), qPrintable(view.specLineText(i)));
      QVERIFY(!view.specLineText(i).endsWith(QChar(0x2026)));
      QVERIFY(view.cardRect(i).contains(view.specLineRect(i)));
    }
    QCOMPARE(view.specLineText(0), QString("spec k=3 · 2.8 tok/step · 61 % accepted"));
    // Eight cards there: full or dense, a shorter form, whole.
    view.setFrame(frameAt(2, 8, {3, 600, 366, 200}, 4));
    view.grab();
    QVERIFY(!view.compact());
    QCOMPARE(view.specLineText(0), QString("k=3 · 2.8 tok/step · 61 %"));
    // Compact cards (24 instances there, 104 px wide): the short form; at
    // 32 (76 px) nothing, the card's tooltip has the line.
    view.setFrame(frameAt(2, 24, {3, 600, 366, 200}, 5));
    view.grab().save(SERVELAB_TEST_OUT "/spec-compact-680x300.png");
    QVERIFY(view.compact());
    QCOMPARE(view.specLineText(0), QString("k=3 · 2.8/step"));
    QVERIFY(view.cardRect(0).contains(view.specLineRect(0)));
    view.setFrame(frameAt(2, 32, {3, 600, 366, 200}, 6));
    view.grab();
    QVERIFY(view.compact());
    QVERIFY(view.specLineText(0).isEmpty());
    QVERIFY(view.toolTipAt(view.cardRect(0).center()).contains("spec k=3 · 2.8 tok/step · 61 % accepted"));
    // Tiles (hundreds): nothing drawn; the tooltip has the line.
    view.setFrame(frameAt(2, 600, {3, 600, 366, 200}, 7));
    view.grab();
    QVERIFY(view.tiles());
    QVERIFY(view.specLineText(0).isEmpty());
    QVERIFY(view.toolTipAt(view.cardRect(0).center()).contains("spec k=3 · 2.8 tok/step · 61 % accepted"));
    // No speculation: no line.
    view.resize(1000, 560);
    view.setFrame(frameAt(2, 1, {}, 8));
    view.grab();
    QVERIFY(view.specLineText(0).isEmpty());
    QVERIFY(view.specLineRect(0).isNull());
  }

  // The control alone: disabled (with the tooltip naming what to add)
  // without cluster.speculative; enabled with it, and what it emits.
  void controlEnabledStateAndEmits() {
    ScenarioPanel panel;
    QCheckBox* on = panel.speculationToggle();
    QSpinBox* k = panel.speculationK();
    QVERIFY(on && k);
    QVERIFY(!on->isEnabled() && !k->isEnabled());
    QVERIFY(on->toolTip().contains("add cluster.speculative to the scenario"));
    QVERIFY(k->toolTip().contains("add cluster.speculative to the scenario"));
    QSignalSpy spy(&panel, &ScenarioPanel::liveSpeculativeKChanged);
    panel.setLiveSpeculation(3, true);
    QVERIFY(on->isEnabled() && k->isEnabled());
    QVERIFY(on->isChecked());
    QCOMPARE(k->value(), 3);
    QCOMPARE(k->maximum(), 16);
    QCOMPARE(spy.count(), 0);  // showing the run's k sends nothing
    on->setChecked(false);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), 0);
    panel.setLiveSpeculation(0, true);
    k->setValue(5);  // while off: nothing sent
    QCOMPARE(spy.count(), 0);
    on->setChecked(true);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), 5);
    // A frame from before the change does not flip the box back.
    panel.setLiveSpeculation(0, true);
    QVERIFY(on->isChecked());
    panel.setLiveSpeculation(5, true);
    k->setValue(8);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), 8);
    // Another scenario without speculation: off and disabled again.
    panel.setLiveSpeculation(-1, false);
    QVERIFY(!on->isEnabled() && !on->isChecked());
    QCOMPARE(spy.count(), 0);
  }

  // In the app: the control follows the loaded scenario; turning it off and
  // changing k go to the run as "speculative_k" changes, logged, marked on
  // the charts, and the log replays the run.
  void controlDrivesTheRun() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCheckBox* on = w.scenarioPanel()->speculationToggle();
    QSpinBox* k = w.scenarioPanel()->speculationK();
    Scenario plain = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/closed-loop-chat-think.json");
    plain.workload.requests = 200;
    QString err;
    QVERIFY2(w.loadScenario(plain, "plain", &err), qPrintable(err));
    QVERIFY(test::waitFrame(*w.controller(), [](const LiveFrame& f) { return f.clientsLive && !f.specLive; }));
    w.pullNow();
    QVERIFY(!on->isEnabled() && !k->isEnabled());
    QVERIFY(on->toolTip().contains("add cluster.speculative to the scenario"));

    const Scenario s = sample(1500);
    QVERIFY2(w.loadScenario(s, "spec", &err), qPrintable(err));
    QVERIFY(test::waitFrame(*w.controller(), [](const LiveFrame& f) { return f.specLive && f.specK == 3; }));
    w.pullNow();
    QVERIFY(on->isEnabled() && on->isChecked());
    QCOMPARE(k->value(), 3);
    w.controller()->runTo(20);
    QVERIFY(w.controller()->waitIdle(60000));
    w.pullNow();
    QCOMPARE(w.controller()->latest()->snapshot.instances[0].spec.k, 3);
    on->setChecked(false);
    QVERIFY(test::waitFrame(*w.controller(), [](const LiveFrame& f) {
      return f.changes.size() == 1 && f.changes[0].knob == kKnobSpeculativeK && f.changes[0].value == 0 && f.specK == 0;
    }));
    w.controller()->runTo(40);
    QVERIFY(w.controller()->waitIdle(60000));
    w.pullNow();
    const SpeculativeSnapshot offAt40 = w.controller()->latest()->snapshot.instances[0].spec;
    QCOMPARE(offAt40.k, 0);
    QVERIFY(!on->isChecked());
    k->setValue(5);  // while off: no change
    on->setChecked(true);
    QVERIFY(test::waitFrame(*w.controller(), [](const LiveFrame& f) {
      return f.changes.size() == 2 && f.changes[1].value == 5 && f.specK == 5;
    }));
    w.controller()->runTo(60);
    QVERIFY(w.controller()->waitIdle(60000));
    w.pullNow();
    const auto f = w.controller()->latest();
    QCOMPARE(f->snapshot.instances[0].spec.k, 5);
    QVERIFY(f->snapshot.instances[0].spec.drafted > offAt40.drafted);  // drafting again
    QCOMPARE(changeMarkerLabel(f->changes[0]), QString("spec off"));
    QCOMPARE(changeMarkerLabel(f->changes[1]), QString("spec k=5"));
    // The log replays the run exactly, and a saved run (File ▸ Save run
    // as…) keeps it.
    validateChangeLog(s, f->changes, "live_changes.changes");
    const ReplayResult r = replayRun(s, f->changes, f->snapshot.events);
    QCOMPARE(r.fingerprint, f->fingerprint);
    QVERIFY(replayRun(s, {}, f->snapshot.events).fingerprint != r.fingerprint);
    QTemporaryDir dir;
    const QString path = dir.filePath("saved.json");
    QString saveErr;
    QVERIFY2(w.saveRun(path, &saveErr), qPrintable(saveErr));
    const ScenarioFile saved = loadScenarioOrSavedRun(path.toStdString());
    QVERIFY(saved.live.has_value());
    QCOMPARE(saved.live->changes.size(), std::size_t{2});
    QCOMPARE(saved.live->changes[0], f->changes[0]);
    QCOMPARE(saved.live->changes[1], f->changes[1]);
    QCOMPARE(replayRun(saved.scenario, saved.live->changes, f->snapshot.events).fingerprint, f->fingerprint);
  }

  // The chart from probes: dots (rate over the window, TPOT p50 in ms) in
  // the "on" series while every probe of the window speculated, in "off"
  // while none did, none while the window mixes both.
  void chartSeriesFromProbes() {
    ChartPanel charts;
    charts.clear(1);
    charts.setRollingWindow(10);
    LiveChart* c = charts.speculationChart();
    QVERIFY(c);
    QCOMPARE(c->seriesCount(), 2);
    QCOMPARE(c->seriesName(0), QString("speculation on (k > 0)"));
    QCOMPARE(c->seriesName(1), QString("off (k = 0)"));
    QTabWidget* tabs = charts.tabs();
    auto tabShown = [&] {
      for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == "Speculation") return tabs->isTabVisible(i);
      return false;
    };
    // A run without speculation: no tab, no dots.
    std::vector<ProbeSample> none;
    for (int t = 1; t <= 20; ++t) none.push_back(probeAt(t, -1, 0.007, 8));
    charts.addProbes(none);
    charts.refresh();
    QVERIFY(!tabShown());
    QVERIFY(c->seriesData(0).empty() && c->seriesData(1).empty());
    // A text naming the chart does not point at a hidden tab (lecture mode).
    QVERIFY(charts.chartNamedIn("the Speculation chart tab").isEmpty());
    charts.setFocusChart("tpot_vs_load");
    QVERIFY(charts.focusChart().isEmpty());
    // On for 40 s at 8 req/s, then off (k = 0) at 12 req/s for 40 s.
    charts.clear(1);
    std::vector<ProbeSample> probes;
    for (int t = 1; t <= 40; ++t) probes.push_back(probeAt(t, 3, 0.005, 8));
    for (int t = 41; t <= 80; ++t) probes.push_back(probeAt(t, 0, 0.008, 12));
    charts.addProbes(probes);
    charts.refresh();
    QVERIFY(tabShown());
    QCOMPARE(c->seriesData(0).size(), std::size_t{40});
    QCOMPARE(c->seriesData(0).back(), QPointF(8, 5));
    // Off: from t = 50 on (the window (40, 50] holds off probes only).
    QCOMPARE(c->seriesData(1).size(), std::size_t{31});
    QCOMPARE(c->seriesData(1).front(), QPointF(12, 8));
    QVERIFY(c->subtitle().contains("last 10 s"));
    // Back on: no dot until the window is all on again; the subtitle says why.
    charts.addProbes({probeAt(81, 3, 0.006, 10)});
    charts.refresh();
    QCOMPARE(c->seriesData(0).size(), std::size_t{40});
    QVERIFY(c->subtitle().startsWith("k changed"));
    QCOMPARE(charts.chartNamedIn("the Speculation tab's chart"), QString("tpot_vs_load"));
    // The loaded scenario sets the tab (shown from the start with
    // cluster.speculative, across a reset's clear()).
    charts.setSpeculationShown(false);
    QVERIFY(!tabShown());
    charts.setSpeculationShown(true);
    charts.clear(1);
    QVERIFY(tabShown() && c->seriesData(0).empty());
  }

  // The real run: speculation on at 8 req/s, then off, gives dots in both
  // series, and at this load the "on" TPOT is the smaller.
  void chartFromTheSample() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    const Scenario s = sample(3000);
    QVERIFY2(w.loadScenario(s, "spec", &err), qPrintable(err));
    w.controller()->runTo(60);
    QVERIFY(w.controller()->waitIdle(60000));
    w.controller()->setSpeculativeK(0);
    QVERIFY(test::waitFrame(*w.controller(), [](const LiveFrame& f) { return f.specK == 0; }));
    w.controller()->runTo(120);
    QVERIFY(w.controller()->waitIdle(60000));
    w.pullNow();
    w.chartPanel()->refresh();
    LiveChart* c = w.chartPanel()->speculationChart();
    const auto& onPts = c->seriesData(0);
    const auto& offPts = c->seriesData(1);
    QVERIFY2(onPts.size() >= 50, qPrintable(QString::number(onPts.size())));
    QVERIFY2(offPts.size() >= 20, qPrintable(QString::number(offPts.size())));
    auto meanY = [](const std::vector<QPointF>& v, std::size_t from) {
      double sum = 0;
      for (std::size_t i = from; i < v.size(); ++i) sum += v[i].y();
      return sum / static_cast<double>(v.size() - from);
    };
    const double onMs = meanY(onPts, onPts.size() / 2), offMs = meanY(offPts, 0);
    QVERIFY2(onMs * 1.3 < offMs, qPrintable(QString("on %1 ms, off %2 ms").arg(onMs).arg(offMs)));
    for (const QPointF& p : onPts) QVERIFY(p.x() > 4 && p.x() < 12);  // ~8 req/s over 30 s
  }
};

QTEST_MAIN(TestSpeculativeView)
#include "test_speculative_view.moc"
