// Every guided-tour step with the tour panel open (issue 29 item 1, issue
// 50 item 1), headless (QT_QPA_PLATFORM=offscreen), at the window sizes a
// window manager gives: a 1024×768 screen gives 1016×728 under openbox,
// 1280×720 gives 1272×680, and so on (tests/ui/xvfb_tours.sh checks the
// real ones under Xvfb + openbox). What the step's text asks students to
// watch must be drawn whole (ui/cluster/layout_check.h): full cards with
// chips and queues, not compact ones; every badge, flag and published field
// the text names drawn whole with its value; no transfer arrow over a
// card's text or bars. The tour panel keeps its width from step to step,
// its text fits without scrolling, and its labels and buttons are not cut.
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScreen>
#include <QSlider>
#include <QToolButton>
#include <QTest>

#include <algorithm>

#include "ui/cluster/cluster_view.h"
#include "ui/cluster/layout_check.h"
#include "ui_test_util.h"
#include "ui/shell/main_window.h"
#include "ui/controller/sim_controller.h"
#include "ui/common/speed_scale.h"
#include "ui/teaching/tour_guide.h"

using namespace sl;
using namespace sl::ui;

class TestTourLayout : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_tour_layout");
  }

  void everyStepShowsWhatItNames_data() {
    QTest::addColumn<QString>("tour");
    QTest::addColumn<bool>("lecture");
    QTest::addColumn<QSize>("size");
    // The main window's size on a 1024×768 projector (openbox: 1016×728; a
    // bare 1024×768 too), a 1280×720 and a 1280×800 laptop, a full-HD screen.
    for (const QSize size : {QSize(1016, 728), QSize(1024, 768), QSize(1272, 680), QSize(1272, 760), QSize(1912, 1040)})
      for (const Tour& t : availableTours(MainWindow::samplesDir())) {
        const QString at = QString("%1 %2x%3").arg(t.id).arg(size.width()).arg(size.height());
        QTest::newRow(qPrintable(at)) << t.id << false << size;
        QTest::newRow(qPrintable(at + " lecture")) << t.id << true << size;
      }
  }

  void everyStepShowsWhatItNames() {
    QFETCH(QString, tour);
    QFETCH(bool, lecture);
    QFETCH(QSize, size);
    MainWindow w;
    w.resize(size);
    w.fitDocksToSize();
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    if (lecture) w.setLecture(true);
    QString err;
    QVERIFY2(w.startTour(tour, 0, false, &err), qPrintable(err));
    TourPanel* tp = w.tourPanel();
    int dockWidth = -1;
    QStringList problems;
    for (int s = 0; s < tp->stepCount(); ++s) {
      QVERIFY2(w.showTourStep(s, false, &err), qPrintable(err));
      const TourStep& step = tp->tour().steps[static_cast<std::size_t>(s)];
      const QString where = QString("%1 step %2 (%3)").arg(tour).arg(s + 1).arg(step.scenario);
      // What 20 wall seconds of the step show, at its own speed.
      w.controller()->runTo(std::min(60.0, 20 * step.speed));
      QVERIFY(w.controller()->waitIdle(120000));
      w.pullNow();
      QVERIFY(test::waitSettled(w));
      w.pullNow();
      ClusterView* cv = w.clusterView();
      const auto& inst = w.controller()->latest()->snapshot.instances;
      QVERIFY(!inst.empty());
      problems << layoutcheck::viewProblems(*cv, w.controller()->latest()->snapshot, tp->watchText(), where);
      // The panel: same width every step, text without a scroll bar,
      // nothing cut, Close reachable.
      const int dw = w.tourDock()->width();
      if (dockWidth < 0) dockWidth = dw;
      if (std::abs(dw - dockWidth) > 2)
        problems << where + QString(": tour panel %1 px wide, %2 px at step 1").arg(dw).arg(dockWidth);
      for (const QString& p : tp->layoutProblems()) problems << where + ": tour panel: " + p;
      QCOMPARE(tp->findChildren<QPushButton*>().size(), 3);
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
    // On the last step "Next" is disabled (it did nothing), "Back" enabled.
    for (QPushButton* b : tp->findChildren<QPushButton*>()) {
      if (b->text().contains("Next")) QVERIFY(!b->isEnabled());
      if (b->text().contains("Back")) QVERIFY(b->isEnabled());
    }
  }

  // Each step at its own speed: still running after 20 s of wall time (a
  // step that ends sooner shows little), and the self-scheduling steps that
  // talk about reordering and promotions show a waiting queue and
  // promotions within 30 s.
  void stepsShowTheirMechanismInHalfAMinute() {
    for (const Tour& t : availableTours(MainWindow::samplesDir())) {
      MainWindow w;
      w.resize(1280, 800);
      QString err;
      QVERIFY2(w.startTour(t.id, 0, false, &err), qPrintable(err));
      for (int s = 0; s < static_cast<int>(t.steps.size()); ++s) {
        QVERIFY2(w.showTourStep(s, false, &err), qPrintable(err));
        const TourStep& step = t.steps[static_cast<std::size_t>(s)];
        const QString where = QString("%1 step %2").arg(t.id).arg(s + 1);
        w.controller()->runTo(20 * step.speed);
        QVERIFY(w.controller()->waitIdle(120000));
        QVERIFY2(!w.controller()->latest()->done, qPrintable(where + ": over within 20 s of wall time"));
        if (t.id != "selfsched" || s < 2) continue;
        w.controller()->runTo(30 * step.speed);
        QVERIFY(w.controller()->waitIdle(120000));
        const InstanceSnapshot& in = w.controller()->latest()->snapshot.instances.at(0);
        std::size_t waiting = 0;
        for (const QueueSnapshot& q : in.queues)
          if (q.name == "waiting") waiting = q.requests.size();
        QVERIFY2(waiting >= 5, qPrintable(where + QString(": %1 waiting at 30 s wall").arg(waiting)));
        double promoted = -1;
        for (const PolicyField& f : in.policyFields)
          if (f.label == "promoted") promoted = f.value;
        QVERIFY2(promoted > 0, qPrintable(where + QString(": promoted %1 at 30 s wall").arg(promoted)));
      }
    }
  }

  // A fresh start (issue 29 item 7): a sample with contention within 30 s
  // of wall time at its speed, a visible "Tours" button, a window no larger
  // than the screen.
  void firstScreenTeaches() {
    MainWindow w;
    w.resize(1280, 800);
    QString err;
    QVERIFY2(w.openFirstScreen(&err), qPrintable(err));
    const double speed = sliderToSpeed(w.findChild<QSlider*>("SpeedSlider") ? w.findChild<QSlider*>("SpeedSlider")->value() : 0);
    QVERIFY2(speed >= 3.5, qPrintable(QString("speed %1").arg(speed)));
    w.controller()->runTo(30 * speed);
    QVERIFY(w.controller()->waitIdle(120000));
    double kvMax = 0;
    std::size_t waiting = 0;
    for (const InstanceSnapshot& in : w.controller()->latest()->snapshot.instances) {
      if (in.gpuBlocks > 0) kvMax = std::max(kvMax, double(in.gpuBlocksUsed) / double(in.gpuBlocks));
      for (const QueueSnapshot& q : in.queues)
        if (q.name == "waiting") waiting += q.requests.size();
    }
    QVERIFY2(kvMax >= 0.95 && waiting >= 10, qPrintable(QString("KV %1, %2 waiting").arg(kvMax).arg(waiting)));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* tours = w.findChild<QToolButton*>("ToursButton");
    QVERIFY(tours && tours->isVisible() && tours->menu());
    QCOMPARE(tours->menu()->actions().size(), static_cast<qsizetype>(availableTours(MainWindow::samplesDir()).size()));
    w.fitToScreen();
    const QRect avail = w.screen()->availableGeometry();
    QVERIFY2(w.width() <= avail.width() && w.height() <= avail.height(),
             qPrintable(QString("%1x%2 on %3x%4").arg(w.width()).arg(w.height()).arg(avail.width()).arg(avail.height())));
  }
};

QTEST_MAIN(TestTourLayout)
#include "test_tour_layout.moc"
