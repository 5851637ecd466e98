// File ▸ Save run as… (issue 15, "Reproducibility from the GUI"): a GUI run
// with live changes (rate slider, a live policy knob), saved through the
// window's code path, replayed by `servelab-cli run SAVED.json` gives the
// GUI run's fingerprint and the very files the GUI's own export writes; a
// saved run without changes is the plain scenario's run; a run saved
// mid-way is checked at the event count it was saved at; saved changes are
// not asked about again before they are discarded; a saved run opens as its
// scenario and a malformed one is refused naming the place.
#include <QAbstractButton>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "main_window.h"
#include "run/execute.h"
#include "run/saved_run.h"
#include "scenario/scenario_io.h"
#include "sim_controller.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// PASCAL (live knobs: the quanta) on Poisson arrivals (live rate), 400 requests.
QString sampleFile(const QTemporaryDir& tmp, std::int64_t requests = 400) {
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/pascal-phase-aware.json");
  s.workload.requests = requests;
  const QString path = tmp.filePath("scenario.json");
  std::ofstream(path.toStdString(), std::ios::binary) << dumpScenario(s);
  return path;
}

struct Cli {
  int code = -1;
  QString out, err;
};
Cli runCli(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(SERVELAB_CLI), args);
  Cli r;
  if (!p.waitForFinished(240000)) return r;
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

bool runTo(SimController& c, double t) {
  c.runTo(t);
  if (!c.waitIdle(120000)) return false;
  return test::waitFrame(c, [t](const LiveFrame& f) { return !f.running && (f.clockS >= t || f.done); }, 60000);
}

// Every file of `a` is in `b` with the same bytes; returns what differs.
QString compareDirs(const QString& a, const QString& b) {
  const QStringList files = QDir(a).entryList(QDir::Files, QDir::Name);
  if (files.isEmpty()) return "no files in " + a;
  for (const QString& f : files) {
    if (!QFile::exists(b + "/" + f)) return f + " missing in " + b;
    if (slurp(a + "/" + f) != slurp(b + "/" + f)) return f + " differs";
  }
  return {};
}

// Answers the discard question (if it comes) with Cancel (or `answer`);
// `asked` says whether it came.
void answerDiscardBox(bool* asked, QMessageBox::StandardButton answer = QMessageBox::Cancel) {
  QTimer::singleShot(50, [asked, answer] {
    for (QWidget* w : QApplication::topLevelWidgets())
      if (auto* box = qobject_cast<QMessageBox*>(w); box && box->objectName() == "DiscardBox" && box->isVisible()) {
        *asked = true;
        box->button(answer)->click();
        return;
      }
    answerDiscardBox(asked, answer);
  });
}

}  // namespace

class TestSaveRun : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("ServeLabTests");
    QCoreApplication::setApplicationName("test_save_run");
  }

  void savedRunWithChangesReplaysInTheCli() {
    QTemporaryDir tmp;
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp), &err), qPrintable(err));
    SimController& c = *w.controller();
    QVERIFY(runTo(c, 30));
    c.setPolicyKnob("answering_quantum", 20);
    c.setArrivalRate(14.0);
    QVERIFY(test::waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 2; }));
    QVERIFY(runTo(c, 60));
    c.setArrivalRate(4.0);
    QVERIFY(test::waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 3; }));
    QVERIFY(runTo(c, 75));

    // Saved mid-way: the CLI runs on to the end and checks the saved moment.
    const auto mid = c.latest();
    QVERIFY(!mid->done);
    QVERIFY2(w.saveRun(tmp.filePath("mid-run.json"), &err), qPrintable(err));
    QVERIFY(w.statusBar()->currentMessage().contains(QString::fromStdString(fingerprintHex(mid->fingerprint))));
    {
      // Issue 29: at 1024×768 the message was cut at its end ("…fingerprin").
      // It now has the room of all but the clock, and a long one is shortened
      // in the middle with the whole text on hover.
      w.resize(1024, 768);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      const QString deep = tmp.filePath(QString("a-rather-long-folder-name-for-a-lecture/").repeated(3));
      QVERIFY(QDir().mkpath(deep));
      QVERIFY2(w.saveRun(deep + "mid-run.json", &err), qPrintable(err));
      QTest::qWait(50);
      const QString shown = w.statusText();
      QVERIFY2(shown.endsWith("servelab-cli run reproduces it"), qPrintable(shown));
      QVERIFY(w.statusBar()->fontMetrics().horizontalAdvance(shown) <= w.statusBar()->width());
      if (shown.contains(QChar(0x2026))) QVERIFY(w.statusBar()->toolTip().contains(deep));
      w.hide();
    }

    QVERIFY(runTo(c, 1e9));
    const auto f = c.latest();
    QVERIFY(f->done);
    QCOMPARE(f->changes.size(), std::size_t{3});
    QVERIFY2(w.saveRun(tmp.filePath("run.json"), &err), qPrintable(err));
    QVERIFY2(w.exportRunResults(tmp.filePath("gui"), &err), qPrintable(err));

    // The file: the scenario (seed included) plus the change log.
    const auto doc = nlohmann::json::parse(slurp(tmp.filePath("run.json")));
    QCOMPARE(doc["run"]["seed"].get<std::uint64_t>(), c.scenario().run.seed);
    QCOMPARE(doc["live_changes"]["changes"].size(), std::size_t{3});
    QCOMPARE(doc["live_changes"]["changes"][0]["knob"].get<std::string>(), std::string("policy.answering_quantum"));
    QCOMPARE(doc["live_changes"]["saved_at"]["events"].get<std::int64_t>(), f->snapshot.events);

    const Cli r = runCli({"run", tmp.filePath("run.json"), "--out", tmp.filePath("cli")});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    const QString fp = QString::fromStdString(fingerprintHex(f->fingerprint));
    QVERIFY2(r.out.contains("live changes: 3 of 3 applied"), qPrintable(r.out));
    QVERIFY2(r.out.contains("reproduces the saved run: fingerprint " + fp), qPrintable(r.out));
    QVERIFY2(!r.err.contains("warning"), qPrintable(r.err));
    // The GUI's own export (its headless replay) and the CLI wrote the same files.
    const QString diff = compareDirs(tmp.filePath("gui"), tmp.filePath("cli"));
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    const auto summary = nlohmann::json::parse(slurp(tmp.filePath("cli/summary.json")));
    QCOMPARE(QString::fromStdString(summary["fingerprint"].get<std::string>()), fp);
    QCOMPARE(summary["live_changes"].size(), std::size_t{3});
    QVERIFY(QFile::exists(tmp.filePath("gui/tail_ttft.csv")) && QFile::exists(tmp.filePath("gui/decisions.csv")));

    // The changes matter: the scenario alone is another run.
    const Cli plain = runCli({"run", tmp.filePath("scenario.json"), "--json", "--quiet"});
    QCOMPARE(plain.code, 0);
    QVERIFY(!plain.out.contains(fp));

    // The run saved mid-way: the same run up to its moment, checked there.
    const Cli m = runCli({"run", tmp.filePath("mid-run.json"), "--out", tmp.filePath("mid")});
    QVERIFY2(m.code == 0, qPrintable(m.out + m.err));
    QVERIFY2(m.out.contains("reproduces the saved run: fingerprint " + QString::fromStdString(fingerprintHex(mid->fingerprint)) +
                            " at event " + QString::number(mid->snapshot.events)),
             qPrintable(m.out));
    // It had all three changes already, so it ends as the full run did.
    QCOMPARE(QString::fromStdString(
                 nlohmann::json::parse(slurp(tmp.filePath("mid/summary.json")))["fingerprint"].get<std::string>()),
             fp);

    // --seed makes it another run on purpose: not checked, said so.
    const Cli seeded = runCli({"run", tmp.filePath("run.json"), "--seed", "9"});
    QCOMPARE(seeded.code, 0);
    QVERIFY2(seeded.out.contains("not checked against the saved run"), qPrintable(seeded.out));
  }

  void savedRunWithoutChangesIsThePlainRun() {
    QTemporaryDir tmp;
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp, 200), &err), qPrintable(err));
    QVERIFY(runTo(*w.controller(), 20));
    QVERIFY2(w.saveRun(tmp.filePath("run.json"), &err), qPrintable(err));
    const Cli a = runCli({"run", tmp.filePath("run.json"), "--out", tmp.filePath("a")});
    QVERIFY2(a.code == 0, qPrintable(a.out + a.err));
    QVERIFY2(a.out.contains("reproduces the saved run"), qPrintable(a.out));
    const Cli b = runCli({"run", tmp.filePath("scenario.json"), "--out", tmp.filePath("b"), "--quiet"});
    QCOMPARE(b.code, 0);
    QCOMPARE(QDir(tmp.filePath("a")).entryList(QDir::Files, QDir::Name),
             QDir(tmp.filePath("b")).entryList(QDir::Files, QDir::Name));
    const QString diff = compareDirs(tmp.filePath("a"), tmp.filePath("b"));
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
  }

  void savedChangesAreNotAskedAboutAgain() {
    QTemporaryDir tmp;
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp), &err), qPrintable(err));
    SimController& c = *w.controller();
    QVERIFY(runTo(c, 10));
    bool asked = false;
    QVERIFY(w.confirmDiscard("Quit"));  // nothing to lose yet: no question
    c.setArrivalRate(9.0);
    QVERIFY(test::waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 1; }));
    answerDiscardBox(&asked);
    QVERIFY(!w.confirmDiscard("Quit"));  // the change would be lost: asked, cancelled
    QVERIFY(asked);
    QVERIFY2(w.saveRun(tmp.filePath("run.json"), &err), qPrintable(err));
    QVERIFY(w.confirmDiscard("Quit"));   // kept in the saved run: no question
    c.setArrivalRate(3.0);
    QVERIFY(test::waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 2; }));
    asked = false;
    answerDiscardBox(&asked);
    QVERIFY(!w.confirmDiscard("Quit"));  // a change after the save: asked again
    QVERIFY(asked);
  }

  void openingASavedRun() {
    QTemporaryDir tmp;
    Scenario s = loadScenarioFile(sampleFile(tmp).toStdString());
    s.run.seed = 42;
    LiveChanges lc;
    lc.changes = {{5'000'000'000, 100, "arrival_rate", 6}};
    std::ofstream(tmp.filePath("run.json").toStdString(), std::ios::binary) << dumpSavedRun(s, lc);
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(tmp.filePath("run.json"), &err), qPrintable(err));
    QCOMPARE(w.controller()->scenario().run.seed, std::uint64_t{42});
    QVERIFY(w.statusBar()->currentMessage().contains("saved run"));
    // The app replays the changes at their event boundaries: the same run as
    // servelab-cli's replay, event for event.
    SimController& c = *w.controller();
    QVERIFY(runTo(c, 30));
    const auto f = c.latest();
    QCOMPARE(f->changes.size(), std::size_t{1});
    QCOMPARE(f->changes[0].events, std::int64_t{100});
    QCOMPARE(f->arrivalRate, 6.0);
    const ReplayResult cli = replayRun(s, lc.changes, f->snapshot.events);
    QCOMPARE(fingerprintHex(f->fingerprint), fingerprintHex(cli.fingerprint));
    // The replayed change is the file's: nothing to ask before discarding it.
    QVERIFY(w.confirmDiscard("Quit"));
    // Reset replays it again.
    w.controller()->reset();
    QVERIFY(runTo(c, 10));
    QCOMPARE(c.latest()->changes.size(), std::size_t{1});
    // A scenario without the change replayed is another run.
    QVERIFY(fingerprintHex(replayRun(s, {}, f->snapshot.events).fingerprint) != fingerprintHex(f->fingerprint));
    // A malformed change log: refused, naming the file and the place.
    lc.changes[0].knob = "policy.answering_quantun";
    std::ofstream(tmp.filePath("bad.json").toStdString(), std::ios::binary) << dumpSavedRun(s, lc);
    QVERIFY(!w.openScenario(tmp.filePath("bad.json"), &err));
    QVERIFY2(err.contains("bad.json: live_changes.changes[0].knob") && err.contains("answering_quantum"), qPrintable(err));
  }

  // "The fingerprint and seed appear in exports": the cluster view PNG carries
  // them in its text chunks like the chart PNGs (gui_cli.export_charts).
  void clusterPngCarriesSeedAndFingerprint() {
    QTemporaryDir tmp;
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp), &err), qPrintable(err));
    QVERIFY(runTo(*w.controller(), 12));
    QVERIFY2(w.exportClusterPng(tmp.filePath("cluster.png"), &err), qPrintable(err));
    const auto f = w.controller()->latest();
    const QImage img(tmp.filePath("cluster.png"));
    QVERIFY(!img.isNull());
    QCOMPARE(img.text("ServeLab fingerprint"), QString::fromStdString(fingerprintHex(f->fingerprint)));
    QCOMPARE(img.text("ServeLab seed"), QString::number(w.controller()->scenario().run.seed));
    QCOMPARE(img.text("ServeLab events"), QString::number(f->snapshot.events));
    QCOMPARE(img.text("ServeLab scenario"), QString("scenario.json"));
  }

  // Reset, a new seed and Apply restart the run: each asks before the live
  // changes go, and Cancel leaves the run (and the seed box) as they were.
  void restartsAskBeforeDiscardingLiveChanges() {
    QTemporaryDir tmp;
    MainWindow w;
    QString err;
    QVERIFY2(w.openScenario(sampleFile(tmp), &err), qPrintable(err));
    SimController& c = *w.controller();
    QVERIFY(runTo(c, 10));
    QAction* reset = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == "Reset") reset = a;
    QVERIFY(reset);
    auto* seed = w.findChild<QSpinBox*>("SeedBox");
    QVERIFY(seed);
    const int seedBefore = seed->value();
    c.setArrivalRate(9.0);
    QVERIFY(test::waitFrame(c, [](const LiveFrame& f) { return f.changes.size() == 1; }));
    const double tBefore = c.latest()->clockS;
    bool asked = false;
    answerDiscardBox(&asked);
    reset->trigger();
    QVERIFY(asked);
    asked = false;
    answerDiscardBox(&asked);
    seed->setValue(seedBefore + 1);
    QVERIFY(asked);
    QCOMPARE(seed->value(), seedBefore);  // back to the run's seed
    asked = false;
    answerDiscardBox(&asked);
    QVERIFY(!w.confirmDiscard("Apply", false));
    QVERIFY(asked);
    QTest::qWait(100);
    // Nothing restarted: the change is still there and the clock did not go back.
    QCOMPARE(c.latest()->changes.size(), std::size_t{1});
    QVERIFY(c.latest()->clockS >= tBefore);
    QCOMPARE(c.scenario().run.seed, static_cast<std::uint64_t>(seedBefore));
    // Discard goes on with the reset; then, without live changes, a restart
    // asks nothing.
    asked = false;
    answerDiscardBox(&asked, QMessageBox::Discard);
    reset->trigger();
    QVERIFY(asked);
    QVERIFY(test::waitFrame(c, [](const LiveFrame& f) { return f.changes.empty() && f.clockS < 1; }));
    QVERIFY(w.confirmDiscard("Reset", false));
  }

  void fileMenuHasSaveRun() {
    MainWindow w;
    QStringList items;
    for (QAction* a : w.menuBar()->actions())
      if (a->text().remove('&') == "File")
        for (QAction* b : a->menu()->actions()) items << b->text().remove('&');
    QVERIFY2(items.contains("Save run as…"), qPrintable(items.join(", ")));
    QVERIFY(items.indexOf("Save run as…") == items.indexOf("Save As…") + 1);
  }
};

QTEST_MAIN(TestSaveRun)
#include "test_save_run.moc"
