// Every guided-tour step at 1024×768 with the tour panel open (issue 29,
// item 1), headless (QT_QPA_PLATFORM=offscreen): what the step's text asks
// students to watch must be drawn whole. For every card: the badge (pool
// label, stage range, role) not elided; every published field whose name the
// step's text uses ("demand", "asked", "bids", "won", "inq", "KV queue",
// "interval", …) drawn whole with its value; no value line elided; cards not
// compact (the texts talk about chips and queues); no transfer arrow ending on
// a card's header, bars or fields line. The tour panel keeps its width from
// step to step and its labels and buttons are not cut.
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScreen>
#include <QSlider>
#include <QToolButton>
#include <QRegularExpression>
#include <QTest>

#include <algorithm>

#include "cluster_view.h"
#include "main_window.h"
#include "policy_view.h"
#include "sim_controller.h"
#include "speed_scale.h"
#include "tour_guide.h"

using namespace sl;
using namespace sl::ui;

namespace {

// Field names of `fields` that the step's text uses as words.
QStringList namedFields(const QString& watch, const std::vector<PolicyField>& fields) {
  QStringList out;
  for (const PolicyField& f : fields) {
    const QString label = QString::fromStdString(f.label);
    if (label.size() < 2) continue;  // "r", "a": too short to tell from prose
    const QRegularExpression word("(^|[^\\w])" + QRegularExpression::escape(label) + "($|[^\\w])",
                                  QRegularExpression::CaseInsensitiveOption);
    if (word.match(watch).hasMatch()) out << label;
  }
  return out;
}

// What card `i` must show whole, and what it cut.
QStringList cardProblems(ClusterView* cv, const InstanceSnapshot& in, int i, const QString& watch) {
  QStringList out;
  const QStringList painted = cv->policyTexts(i);
  const QString all = painted.join(" | ");
  for (const QString& t : painted)
    if (t.contains(QChar(0x2026)) || t.contains("...")) out << QString("GPU %1: '%2' elided").arg(i).arg(t);
  const QString badge = policyview::badgeText(in);
  if (!badge.isEmpty() && !painted.contains(badge))
    out << QString("GPU %1: badge '%2' not drawn whole (drawn: %3)").arg(i).arg(badge, all);
  for (const PolicyField& f : in.policyFields)  // a flag named by the step: its text ("on pace", "not on pace")
    if (policyview::isFlag(f) && namedFields(watch, {f}).size() == 1 && !painted.contains(policyview::flagText(f)))
      out << QString("GPU %1: flag '%2' named by the step is not drawn (drawn: %3)").arg(i).arg(policyview::flagText(f), all);
  for (const QString& label : namedFields(watch, in.policyFields)) {
    if (std::any_of(in.policyFields.begin(), in.policyFields.end(),
                    [&](const PolicyField& f) { return policyview::isFlag(f) && f.label == label.toStdString(); }))
      continue;
    const QRegularExpression shown("(^|[^\\w])" + QRegularExpression::escape(label) + " ?[-0-9–]");
    if (!shown.match(all).hasMatch())
      out << QString("GPU %1: field '%2' named by the step is not drawn with its value (drawn: %3)")
                 .arg(i).arg(label, all);
  }
  return out;
}

}  // namespace

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
    for (const Tour& t : availableTours(MainWindow::samplesDir())) {
      QTest::newRow(qPrintable(t.id)) << t.id << false;
      QTest::newRow(qPrintable(t.id + " lecture")) << t.id << true;
    }
  }

  void everyStepShowsWhatItNames() {
    QFETCH(QString, tour);
    QFETCH(bool, lecture);
    MainWindow w;
    w.resize(1024, 768);
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
      QTest::qWait(120);
      w.pullNow();
      ClusterView* cv = w.clusterView();
      cv->repaint();
      const QString watch = tp->watchText();
      const auto& inst = w.controller()->latest()->snapshot.instances;
      QVERIFY(!inst.empty());
      if (cv->compact()) problems << where + ": cards are compact (" + QString::number(cv->width()) + " px view)";
      for (int i = 0; i < static_cast<int>(inst.size()); ++i)
        for (const QString& p : cardProblems(cv, inst[static_cast<std::size_t>(i)], i, watch)) problems << where + ": " + p;
      for (const QPointF& e : cv->arrowEnds())
        for (int i = 0; i < static_cast<int>(inst.size()); ++i)
          if (cv->infoRect(i).contains(e.toPoint()))
            problems << where + QString(": an arrow ends on GPU %1's header/bars/fields at (%2, %3)")
                                    .arg(i).arg(e.x()).arg(e.y());
      // The panel: same width every step, nothing cut, Close reachable.
      const int dw = w.tourDock()->width();
      if (dockWidth < 0) dockWidth = dw;
      if (std::abs(dw - dockWidth) > 2)
        problems << where + QString(": tour panel %1 px wide, %2 px at step 1").arg(dw).arg(dockWidth);
      for (QLabel* l : tp->findChildren<QLabel*>())
        if (!l->wordWrap() && l->isVisible() && l->fontMetrics().horizontalAdvance(l->text()) > l->contentsRect().width() + 1)
          problems << where + ": tour label '" + l->text() + "' cut";
      for (QPushButton* b : tp->findChildren<QPushButton*>()) {
        const QRect inPanel(b->mapTo(tp, QPoint(0, 0)), b->size());
        if (!tp->rect().contains(inPanel) || b->width() < b->sizeHint().width())
          problems << where + ": button '" + b->text() + "' clipped";
      }
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
