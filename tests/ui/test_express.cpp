// Express mode's display (issue 50, "Express frozen tiles"): with 512
// instances drawn as tiles and tens of thousands of requests in flight, the
// cluster view used to keep the t = 0 frame until the run paused (Express
// skipped every cluster frame). It now gets the newest frame about twice a
// second, and the tiles move while the run goes on.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include "ui/cluster/cluster_view.h"
#include "ui/controller/sim_controller.h"
#include "ui/shell/main_window.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

// Pixels (every other row and column) that differ between two images.
int changedPixels(const QImage& a, const QImage& b) {
  if (a.size() != b.size()) return a.width() * a.height();
  int n = 0;
  for (int y = 0; y < a.height(); y += 2)
    for (int x = 0; x < a.width(); x += 2) n += a.pixel(x, y) != b.pixel(x, y);
  return n;
}

}  // namespace

class TestExpress : public QObject {
  Q_OBJECT
private slots:
  void expressTilesFollowTheRun() {
    MainWindow w;
    w.resize(1280, 800);
    w.fitDocksToSize();
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // docs/screenshots/tiles-512.json with more requests, so that the run
    // outlasts the check (200 000 take ~3 s of wall time in Express).
    QFile in(QStringLiteral(SERVELAB_SOURCE_DIR "/docs/screenshots/tiles-512.json"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    QByteArray doc = in.readAll();
    QVERIFY(doc.contains("\"requests\": 200000"));
    doc.replace("\"requests\": 200000", "\"requests\": 2000000");
    QTemporaryDir dir;
    const QString path = dir.filePath("tiles-512-long.json");
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(doc) == doc.size());
    out.close();
    QString err;
    QVERIFY2(w.openScenario(path, &err), qPrintable(err));
    QVERIFY(test::waitSettled(w));
    ClusterView* cv = w.clusterView();
    QVERIFY2(cv->tiles(), "512 instances are not drawn as tiles");
    const QImage atStart = cv->grab().toImage();
    w.controller()->setMode(RunMode::Express);
    w.controller()->play();
    // Wait (wall time) until the run is well under way: requests in flight.
    QVERIFY(QTest::qWaitFor([&] { return w.controller()->latest()->snapshot.inFlight > 2000; }, 60000));
    QTest::qWait(1200);  // more than two of Express's cluster frames
    QVERIFY2(w.controller()->isRunning(), "the run ended before the check (it should take a while in Express)");
    const QImage first = cv->grab().toImage();
    const int fromStart = changedPixels(atStart, first);
    QVERIFY2(fromStart > 500, qPrintable(QString("tiles still as at t = 0 (%1 pixels changed) with %2 in flight")
                                             .arg(fromStart)
                                             .arg(w.controller()->latest()->snapshot.inFlight)));
    QTest::qWait(1500);
    QVERIFY2(w.controller()->isRunning(), "the run ended before the check");
    const QImage later = cv->grab().toImage();
    const int moved = changedPixels(first, later);
    QVERIFY2(moved > 50, qPrintable(QString("tiles frozen while running (%1 pixels changed in 1.5 s)").arg(moved)));
    w.controller()->pause();
  }
};

QTEST_MAIN(TestExpress)
#include "test_express.moc"
