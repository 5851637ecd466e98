// Teaching mode: lecture fonts and speed, callouts born from real engine
// preemptions that fade out in animation time, role-flip callouts, smooth
// transfer interpolation in animation time, and the guided tours.
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSlider>
#include <QTest>
#include <QToolBar>

#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "ui/inspector/inspector_panel.h"
#include "ui/shell/main_window.h"
#include "scenario/scenario_io.h"
#include "ui/controller/sim_controller.h"
#include "ui/teaching/teaching_callouts.h"
#include "ui/teaching/tour_guide.h"

using namespace sl;
using namespace sl::ui;

namespace {

const QString kSamples = QStringLiteral(SERVELAB_SOURCE_DIR "/samples");

std::shared_ptr<LiveFrame> frameWith(int instances, std::vector<TransferSnapshot> transfers, SimTime now,
                                     int generation = 1) {
  auto f = std::make_shared<LiveFrame>();
  f->generation = generation;
  f->running = true;
  f->mode = RunMode::Run;
  f->snapshot.now = now;
  for (int i = 0; i < instances; ++i) {
    InstanceSnapshot in;
    in.id = i;
    in.gpuBlocks = 100;
    in.cpuBlocks = 100;
    in.queues.push_back({"waiting", {}});
    f->snapshot.instances.push_back(in);
  }
  f->snapshot.transfers = std::move(transfers);
  return f;
}

}  // namespace

class TestTeaching : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_teaching");
  }

  void lectureModeEnlargesFontsAndSlowsDown() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    auto* bar = w.findChild<QToolBar*>("RunToolBar");
    QVERIFY(bar);
    auto* speed = w.findChild<QSlider*>("SpeedSlider");  // on the clock toolbar
    QVERIFY(speed);
    speed->setValue(45);  // 100×
    const double before = w.clusterView()->font().pointSizeF();
    QVERIFY(!w.lecture());
    w.setLecture(true);
    QVERIFY(w.lecture());
    QVERIFY(w.clusterView()->lecture());
    QVERIFY(w.clusterView()->font().pointSizeF() >= before * 1.25);
    QVERIFY(w.inspector()->font().pointSizeF() >= before * 1.25);
    QCOMPARE(speed->value(), 10);  // the slider's 0.5× (0.1 · 10^(v/15))
    w.setLecture(false);
    QCOMPARE(w.clusterView()->font().pointSizeF(), before);
    QCOMPARE(speed->value(), 45);  // the speed before lecture mode comes back
  }

  // A real run with swap preemption: the controller's notes carry each
  // preemption; in lecture mode they become callouts on the card where it
  // happened, which fade and disappear after their time (animation time).
  void calloutsOnPreemptionFadeOut() {
    SimController c;
    QString err;
    Scenario s = loadScenarioFile((kSamples + "/pascal-baseline-rr.json").toStdString());
    QVERIFY2(c.load(s, &err), qPrintable(err));
    c.runTo(90);
    QVERIFY(c.waitIdle(60000));
    std::shared_ptr<const LiveFrame> f = c.takeFrame();
    QCOMPARE(f->clockS, 90.0);
    const std::vector<AnimationNote> notes = c.takeNotes();
    // The latest swap preemption, checked against the request's timeline.
    const AnimationNote* last = nullptr;
    for (const AnimationNote& n : notes)
      if (n.kind == AnimationNote::Kind::PreemptedSwap) last = &n;
    QVERIFY2(last, "no swap preemption in 90 s of the RR sample");
    const auto t = c.timelines().request(last->requestId);
    QVERIFY(t.has_value());
    bool found = false;
    for (const TimelineEvent& e : t->events)
      found = found || (e.kind == RequestEvent::Preempted && e.time == last->time && e.instance == last->instance);
    QVERIFY(found);
    QVERIFY(last->time > f->snapshot.now - 5 * kNsPerSecond);  // recent enough to be shown

    ClusterView view;
    view.resize(900, 500);
    view.setFrame(f);
    view.addNotes(notes);
    QVERIFY(view.callouts().empty());  // not in lecture mode
    view.setLecture(true);
    view.addNotes(notes);
    const Callout* swap = nullptr;
    for (const Callout& co : view.callouts().items())
      if (co.kind == Callout::Kind::Swap && co.instance == last->instance) swap = &co;
    QVERIFY(swap);
    QCOMPARE(swap->text, QString("preempted: KV swapped to CPU"));
    QCOMPARE(swap->requestId, last->requestId);
    for (const Callout& co : view.callouts().items()) QVERIFY(co.count >= 1);
    QVERIFY(!view.grab().isNull());
    // Issue 15: callouts covered the queues a tour step asks to watch. They
    // now sit in a lane of their own, at 1024×768 and 1280×720 too.
    for (const QSize size : {QSize(900, 500), QSize(1000, 420), QSize(1260, 380)}) {
      view.resize(size);
      QVERIFY(!view.grab().isNull());
      QVERIFY(!view.calloutRects().empty());
      QVERIFY(!view.queueRects().empty());
      for (const QRect& co : view.calloutRects())
        for (const QRect& q : view.queueRects())
          QVERIFY2(!co.intersects(q), qPrintable(QString("callout at %1,%2 %3x%4 covers a queue at %5x%6")
                                                     .arg(co.x()).arg(co.y()).arg(co.width()).arg(co.height())
                                                     .arg(size.width()).arg(size.height())));
    }
    view.resize(900, 500);

    // Fully visible for kLifetimeS, fading for kFadeS, then gone.
    const double t0 = view.animationTime();
    view.advanceAnimation(CalloutBoard::kLifetimeS - 0.1);
    QVERIFY(!view.callouts().empty());
    QCOMPARE(CalloutBoard::opacity(view.callouts().items().front(), view.animationTime()), 1.0);
    view.advanceAnimation(0.1 + CalloutBoard::kFadeS / 2);
    QVERIFY(!view.callouts().empty());
    const double mid = CalloutBoard::opacity(view.callouts().items().front(), view.animationTime());
    QVERIFY(mid > 0.3 && mid < 0.7);
    view.advanceAnimation(CalloutBoard::kFadeS / 2 + 0.01);
    QVERIFY(view.callouts().empty());
    QVERIFY(view.animationTime() > t0 + CalloutBoard::kLifetimeS + CalloutBoard::kFadeS);
  }

  // vLLM-disaggregated hands every request from its prefill instance to its
  // decode instance and never migrates: every KV copy is noted a hand-off.
  void handoffCopiesAreNotedAsHandoffs() {
    SimController c;
    QString err;
    Scenario s = loadScenarioFile((kSamples + "/arrow-vllm-disaggregated-tp4.json").toStdString());
    QVERIFY2(c.load(s, &err), qPrintable(err));
    c.runTo(20);
    QVERIFY(c.waitIdle(60000));
    int starts = 0, ends = 0;
    for (const AnimationNote& n : c.takeNotes()) {
      if (n.kind == AnimationNote::Kind::MigrationStart) {
        ++starts;
        QVERIFY(n.handoff);
        QCOMPARE(n.instance, 0);
      }
      if (n.kind == AnimationNote::Kind::MigrationEnd) {
        ++ends;
        QVERIFY(n.handoff);
        QCOMPARE(n.instance, 1);
        QCOMPARE(n.other, 0);
      }
    }
    QVERIFY(starts > 10);
    QVERIFY(ends > 10);
  }

  // A disaggregated hand-off's KV copy is not called a migration.
  void handoffCalloutsSayHandOff() {
    CalloutBoard b;
    AnimationNote n;
    n.kind = AnimationNote::Kind::MigrationStart;
    n.instance = 1;
    n.requestId = 7;
    n.handoff = true;
    b.add(n, 0.0);
    n.kind = AnimationNote::Kind::MigrationEnd;
    n.instance = 5;
    n.other = 1;
    b.add(n, 0.0);
    QCOMPARE(b.items().size(), std::size_t{2});
    QCOMPARE(b.items()[0].text, QString("prefilled: KV handed off to decode"));
    QCOMPARE(b.items()[1].text, QString("hand-off from GPU 1"));
    n.other = 3;
    n.requestId = 8;
    b.add(n, 0.0);
    QCOMPARE(b.items()[1].text, QString("hand-offs arrived"));
    n.handoff = false;  // a migration arriving on the same card
    b.add(n, 0.0);
    QCOMPARE(b.items()[1].text, QString("KV arrived by migration"));
  }

  void calloutsMergeAndStayFew() {
    CalloutBoard b;
    AnimationNote n;
    n.kind = AnimationNote::Kind::PreemptedSwap;
    n.instance = 2;
    for (int i = 0; i < 10; ++i) {
      n.requestId = i;
      b.add(n, 0.0);
    }
    QCOMPARE(b.items().size(), std::size_t{1});
    QCOMPARE(b.items()[0].count, 10);
    // One subject per caption: a count of requests, or the request's id.
    QVERIFY2(b.items()[0].caption().startsWith("10 requests: "), qPrintable(b.items()[0].caption()));
    QVERIFY(!b.items()[0].caption().contains("#"));
    n.kind = AnimationNote::Kind::MigrationStart;
    n.afterThink = true;
    b.add(n, 0.1);
    QCOMPARE(b.items().back().text, QString("migrated at </think>"));
    n.kind = AnimationNote::Kind::PreemptedRecompute;
    b.add(n, 0.2);
    int onCard = 0;
    for (const Callout& c : b.items()) onCard += c.instance == 2;
    QCOMPARE(onCard, CalloutBoard::kMaxPerInstance);
    QCOMPARE(b.items().back().text, QString("preempted: KV dropped, will recompute"));
  }

  // A role change between two snapshots is called out on that card.
  void roleFlipBecomesACallout() {
    ClusterView view;
    view.resize(800, 400);
    view.setLecture(true);
    auto f1 = frameWith(4, {}, kNsPerSecond);
    f1->snapshot.instances[1].role = 2;  // decode
    view.setFrame(f1);
    QVERIFY(view.callouts().empty());
    auto f2 = frameWith(4, {}, 2 * kNsPerSecond);
    f2->snapshot.instances[1].role = 1;  // prefill
    view.setFrame(f2);
    QCOMPARE(view.callouts().items().size(), std::size_t{1});
    QCOMPARE(view.callouts().items()[0].instance, 1);
    QCOMPARE(view.callouts().items()[0].text, QString::fromUtf8("instance flipped D→P"));
  }

  // A policy's per-instance counter with a callout text (self-scheduling's
  // "promoted") becomes a callout when it grows, with the growth as its
  // count; a counter without a callout text, or one that stays, does not.
  void policyCounterGrowthBecomesACallout() {
    ClusterView view;
    view.resize(800, 400);
    view.setLecture(true);
    auto withFields = [](SimTime t, double promoted, double plain) {
      auto f = frameWith(2, {}, t);
      f->snapshot.instances[1].policyFields.push_back({"promoted", promoted, "requests", "tip", "promoted: waited too long"});
      f->snapshot.instances[1].policyFields.push_back({"load", plain, "tokens", "tip"});
      return f;
    };
    view.setFrame(withFields(kNsPerSecond, 4, 10));
    QVERIFY(view.callouts().empty());  // the first frame is the baseline
    view.setFrame(withFields(2 * kNsPerSecond, 4, 50));
    QVERIFY(view.callouts().empty());  // "load" grew, but it has no callout text
    view.setFrame(withFields(3 * kNsPerSecond, 7, 50));
    QCOMPARE(view.callouts().items().size(), std::size_t{1});
    const Callout& c = view.callouts().items()[0];
    QCOMPARE(c.instance, 1);
    QCOMPARE(c.count, 3);
    QCOMPARE(c.caption(), QString("promoted: waited too long (3 times)"));
    view.setFrame(withFields(4 * kNsPerSecond, 8, 50));  // merged into the live one
    QCOMPARE(view.callouts().items().size(), std::size_t{1});
    QCOMPARE(view.callouts().items()[0].count, 4);
    ClusterView quiet;  // not in lecture mode: no callouts
    quiet.resize(800, 400);
    quiet.setFrame(withFields(kNsPerSecond, 4, 10));
    quiet.setFrame(withFields(2 * kNsPerSecond, 9, 10));
    QVERIFY(quiet.callouts().empty());
  }

  // A rank prompt's chip says what it is and opens no timeline; a ranked
  // request's chip gives its rank and predicted length.
  void chipTooltipsShowRankPromptsAndRanks() {
    RequestChip prompt;
    prompt.id = -3;
    prompt.synthetic = true;
    prompt.inBatch = true;
    const QString p = ClusterView::chipToolTip(prompt);
    QVERIFY2(p.startsWith("rank prompt #3"), qPrintable(p));
    QVERIFY(!p.contains("click"));
    RequestChip ranked;
    ranked.id = 42;
    ranked.rank = 2;
    ranked.predicted = 517;
    const QString r = ClusterView::chipToolTip(ranked);
    QVERIFY2(r.startsWith("request #42"), qPrintable(r));
    QVERIFY(r.contains("rank in its batch: 2"));
    QVERIFY(r.contains("predicted output: 517 tokens"));
    QVERIFY(r.contains("click for its timeline"));
    RequestChip plain;
    plain.id = 7;
    const QString q = ClusterView::chipToolTip(plain);
    QVERIFY(!q.contains("rank") && !q.contains("predicted"));
  }

  // Transfers move between snapshots in animation time, never backwards,
  // and run to the end when the copy completes.
  void transferInterpolatesInAnimationTime() {
    ClusterView view;
    view.resize(800, 400);
    view.setFrame(frameWith(4, {{42, 0, 3, 0.2, false}}, kNsPerSecond));
    QCOMPARE(view.shownTransferProgress(42), 0.2);
    view.advanceAnimation(0.1);
    QCOMPARE(view.shownTransferProgress(42), 0.2);  // no rate known yet
    view.setFrame(frameWith(4, {{42, 0, 3, 0.4, false}}, kNsPerSecond + 1000));
    // Rate: 0.2 progress in 0.1 s of animation time; extrapolated smoothly.
    double prev = view.shownTransferProgress(42);
    for (int i = 0; i < 10; ++i) {
      view.advanceAnimation(0.016);
      const double p = view.shownTransferProgress(42);
      QVERIFY(p >= prev);
      QVERIFY(p <= 0.4 + 2.0 * 0.016 * (i + 1) + 1e-9);
      prev = p;
    }
    QVERIFY(prev > 0.45);
    QVERIFY(!view.grab().isNull());
    // Completed (gone from the snapshot): it runs to 1 and is removed.
    view.setFrame(frameWith(4, {}, kNsPerSecond + 2000));
    QVERIFY(view.shownTransferProgress(42) >= prev);
    view.advanceAnimation(0.3);
    QVERIFY(view.shownTransferProgress(42) > 0.95);
    view.advanceAnimation(0.2);
    QCOMPARE(view.shownTransferProgress(42), -1.0);
    // A new run forgets all animations.
    view.setFrame(frameWith(4, {{7, 1, 2, 0.5, true}}, kNsPerSecond));
    view.setFrame(frameWith(4, {}, 0, 2));
    QCOMPARE(view.shownTransferProgress(7), -1.0);
  }

  void onlyToursWithBuiltPoliciesAreListed() {
    const QString dir = MainWindow::samplesDir();
    QVERIFY(!dir.isEmpty());
    const auto tours = availableTours(dir);
    QVERIFY(!tours.empty());
    QCOMPARE(tours.front().id, QString("pascal"));
    for (const Tour& t : tours) QVERIFY(tourAvailable(t, dir));
    Tour fake = tours.front();
    fake.policies << "no-such-policy";  // not in the policy registry
    QString why;
    QVERIFY(!tourAvailable(fake, dir, &why));
    QVERIFY(why.contains("no-such-policy"));
    Tour missing = tours.front();
    missing.steps[0].scenario = "no-such-sample.json";
    QVERIFY(!tourAvailable(missing, dir, &why));
    QVERIFY(why.contains("no-such-sample.json"));
    QVERIFY(!findTour("no-such-tour").has_value());
  }

  // Each step loads its scenario (the policy the step talks about), sets
  // its speed, and shows its text; Next and Back move between steps.
  // Every tour: each step loads its scenario (PASCAL's, Arrow's …).
  void everyTourLoadsItsSteps() {
    const auto tours = availableTours(MainWindow::samplesDir());
    QStringList ids;
    for (const Tour& t : tours) ids << t.id;
    QCOMPARE(ids, (QStringList{"pascal", "arrow", "selfsched", "cascade", "prefix", "closed-loop", "measure",
                               "speculative"}));
    for (const Tour& t : tours) {
      MainWindow w;
      w.resize(1024, 768);
      QString err;
      QVERIFY2(w.startTour(t.id, 0, false, &err), qPrintable(err));
      TourPanel* tp = w.tourPanel();
      QCOMPARE(tp->stepCount(), static_cast<int>(t.steps.size()));
      for (int i = 0; i < tp->stepCount(); ++i) {
        QVERIFY2(w.showTourStep(i, false, &err), qPrintable(err));
        const TourStep& step = t.steps[static_cast<std::size_t>(i)];
        const Scenario expect = loadTourScenario(step, MainWindow::samplesDir());  // the sample and its --set
        QCOMPARE(w.controller()->scenario().policy.id, expect.policy.id);
        QCOMPARE(w.controller()->scenario().workload.requests, expect.workload.requests);
        QVERIFY(t.policies.contains(QString::fromStdString(expect.policy.id)));
        QVERIFY(tp->watchText().contains("Watch"));
      }
    }
  }

  // Issue 29: the figures in a step's text come from the run it shows
  // (run figures so far, the policy's knobs as loaded), none left unfilled
  // once requests have finished.
  void tourTextsQuoteTheRun() {
    static const QRegularExpression placeholder(R"(\{[a-z0-9_:]+\})");
    for (const Tour& t : availableTours(MainWindow::samplesDir())) {
      MainWindow w;
      w.resize(1280, 800);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QString err;
      QVERIFY2(w.startTour(t.id, 0, false, &err), qPrintable(err));
      TourPanel* tp = w.tourPanel();
      for (int i = 0; i < tp->stepCount(); ++i) {
        QVERIFY2(w.showTourStep(i, false, &err), qPrintable(err));
        const QString where = QString("%1 step %2").arg(t.id).arg(i + 1);
        w.controller()->runTo(30);
        QVERIFY(w.controller()->waitIdle(120000));
        w.pullNow();
        const QString text = tp->watchText();
        QVERIFY2(!placeholder.match(text).hasMatch(), qPrintable(where + ": " + text));
        QVERIFY2(!text.contains("(none yet)"), qPrintable(where + ": " + text));
        // A run figure, as the charts have it.
        const QString watch = t.steps[static_cast<std::size_t>(i)].watch;
        if (watch.contains("{p95_ttft}") || watch.contains("{vs:p95_ttft}")) {
          const double p95 = w.chartPanel()->ttftQuantile(0.95);
          const QString shown = tourSeconds(p95);
          QVERIFY(!shown.isEmpty());
          QVERIFY2(text.contains(QRegularExpression("P95 TTFT (so far:? )?" + QRegularExpression::escape(shown))),
                   qPrintable(where + ": expected " + shown + " in: " + text));
        }
      }
    }
    // A knob as loaded: PASCAL step 4 quotes the sample's demote_tokens.
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.startTour("pascal", 3, false, &err), qPrintable(err));
    w.controller()->runTo(1);
    QVERIFY(w.controller()->waitIdle(60000));
    w.pullNow();
    const int demote = w.controller()->scenario().policy.knobs.value("demote_tokens", -1);
    QVERIFY(demote > 0);
    QVERIFY2(w.tourPanel()->watchText().contains(QString("exceeds %1 tokens").arg(demote)),
             qPrintable(w.tourPanel()->watchText()));
  }

  void tourStepsLoadTheirScenarios() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QString err;
    QVERIFY2(w.startTour("pascal", 0, false, &err), qPrintable(err));
    QVERIFY(w.tourDock()->isVisible());
    TourPanel* tp = w.tourPanel();
    const Tour& tour = tp->tour();
    QVERIFY(tour.steps.size() >= 4);
    for (int i = 0; i < tp->stepCount(); ++i) {
      QVERIFY2(w.showTourStep(i, false, &err), qPrintable(err));
      const TourStep& step = tour.steps[static_cast<std::size_t>(i)];
      const Scenario expect = loadTourScenario(step, MainWindow::samplesDir());
      QCOMPARE(w.controller()->scenario().policy.id, expect.policy.id);
      QCOMPARE(w.controller()->scenario().workload.requests, expect.workload.requests);
      QCOMPARE(tp->step(), i);
      QCOMPARE(tp->stepTitle(), step.title);
      QVERIFY(tp->watchText().contains("Watch"));
      QVERIFY(w.windowTitle().contains(step.scenario));
    }
    // Buttons: Back from the last step loads the one before.
    auto buttons = tp->findChildren<QPushButton*>();
    QPushButton* back = nullptr;
    for (QPushButton* b : buttons)
      if (b->text().contains("Back")) back = b;
    QVERIFY(back);
    QTest::mouseClick(back, Qt::LeftButton);
    QCOMPARE(tp->step(), tp->stepCount() - 2);
    QVERIFY(w.windowTitle().contains(tour.steps[static_cast<std::size_t>(tp->step())].scenario));
    w.controller()->pause();
    // Out of range and unknown tours are refused with a message.
    QVERIFY(!w.showTourStep(99, false, &err));
    QVERIFY(err.contains("steps 1 to"));
    QVERIFY(!w.startTour("nope", 0, false, &err));
    QVERIFY(err.contains("pascal"));
    w.closeTour();
    QVERIFY(!w.tourDock()->isVisible());
  }
};

QTEST_MAIN(TestTeaching)
#include "test_teaching.moc"
