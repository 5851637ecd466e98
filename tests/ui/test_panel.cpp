// The scenario panel's cluster fabric, arrival process and trace-file rows
// (50-gui.md "Scenario panel"): what the panel shows for a scenario, what it
// builds back, the detected trace format, and inline refusals.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "scenario/scenario_io.h"
#include "ui/scenario/scenario_panel.h"
#include "workload/presets.h"

using namespace sl;
using namespace sl::ui;

namespace {

QString label(const ScenarioPanel& p, const QString& startsWith) {
  for (QLabel* l : p.findChildren<QLabel*>())
    if (l->text().startsWith(startsWith)) return l->text();
  return {};
}

QComboBox* arrivals(const ScenarioPanel& p) {
  for (QComboBox* c : p.findChildren<QComboBox*>())
    if (c->findData(QString("gamma")) >= 0) return c;
  return nullptr;
}

}  // namespace

class TestPanel : public QObject {
  Q_OBJECT
private slots:
 // Choosing a workload preset shows its lengths at once.
 void workloadPresetShowsItsLengths() {
   const Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/default.json");
   ScenarioPanel p;
   p.setScenario(s);
   QComboBox* workload = nullptr;
   for (QComboBox* c : p.findChildren<QComboBox*>())
     if (c->count() > 1 && c->itemData(0).toString().isEmpty() && c->itemText(0).contains("own lengths")) workload = c;
   QVERIFY(workload);
   // The input editor: the first length-kind combo.
   QComboBox* inputKind = nullptr;
   for (QComboBox* c : p.findChildren<QComboBox*>())
     if (c->findData(QString("lognormal")) >= 0 && c->findData(QString("constant")) >= 0) {
       inputKind = c;
       break;
     }
   QVERIFY(inputKind);
   const auto presets = workloadPresets();
   bool checked = false;
   for (const auto& [id, desc] : presets) {
     WorkloadSpec w = s.workload;
     applyWorkloadPreset(id, w);
     QString kind = "file";
     if (w.input_tokens.kind == LengthDist::Kind::Constant)
       kind = "constant";
     else if (w.input_tokens.kind == LengthDist::Kind::Uniform)
       kind = "uniform";
     else if (w.input_tokens.kind == LengthDist::Kind::Lognormal)
       kind = "lognormal";
     if (kind == inputKind->currentData().toString()) continue;  // would not show a change
     workload->setCurrentIndex(workload->findData(QString::fromStdString(id)));
     QCOMPARE(inputKind->currentData().toString(), kind);
     checked = true;
     break;
   }
   QVERIFY2(checked, "no preset with another input-length kind than the sample's");
 }

  // A trace scenario: the trace row shows its file and detected format; the
  // scenario built back keeps the trace and the fabric.
  void traceScenarioRoundTrip() {
    const Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/trace-replay-reasoning.json");
    ScenarioPanel p;
    p.setScenario(s);
    QCOMPARE(label(p, "format:"), QString("format: servelab (detected)"));
    QComboBox* a = arrivals(p);
    QVERIFY(a);
    QCOMPARE(a->currentData().toString(), QString("trace"));
    Scenario out;
    QString err;
    QVERIFY2(p.buildScenario(out, &err), qPrintable(err));
    QVERIFY(out.workload.trace.has_value());
    QCOMPARE(QString::fromStdString(out.workload.trace->path), QString("traces/reasoning-200.csv"));
    QCOMPARE(out.cluster.fabric.nic_gbps, 100.0);
    QCOMPARE(out.cluster.fabric.gpus_per_node, 1);
    // The panel writes every knob's value (here the defaults); nothing else moved.
    QCOMPARE(out.policy.knobs.value("quantum", 0), 500);
    out.policy.knobs = s.policy.knobs;
    QCOMPARE(dumpScenario(out), dumpScenario(s));
  }

  // A file's values the form cannot show as they are (512 instances, more
  // requests than the box's default range, a rate with more decimals than it
  // shows, a sub-1 Gb/s NIC) come back unchanged from an untouched form;
  // a value the user edits is read from the box.
  void valuesTheFormRoundsOrClampsComeBackUnchanged() {
    Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/default.json");
    s.cluster.instances = 512;
    s.workload.requests = 20'000'000;
    s.workload.arrival.rate = 31.5713;
    s.cluster.fabric.nic_gbps = 0.5;
    s.cluster.fabric.gpus_per_node = 32;
    s.cluster.kv_capacity_fraction = 0.333;
    ScenarioPanel p;
    p.setScenario(s);
    QSpinBox* instances = nullptr;
    for (QSpinBox* b : p.findChildren<QSpinBox*>())
      if (b->value() == 512) instances = b;
    QVERIFY2(instances, "no box shows the 512 instances");
    Scenario out;
    QString err;
    QVERIFY2(p.buildScenario(out, &err), qPrintable(err));
    QCOMPARE(out.cluster.instances, 512);
    QCOMPARE(out.workload.requests, std::int64_t{20'000'000});
    QCOMPARE(out.workload.arrival.rate, 31.5713);
    QCOMPARE(out.cluster.fabric.nic_gbps, 0.5);
    QCOMPARE(out.cluster.fabric.gpus_per_node, 32);
    QCOMPARE(out.cluster.kv_capacity_fraction, 0.333);
    QCOMPARE(dumpScenario(out), dumpScenario(s));
    instances->setValue(1000);  // up to the file format's limit
    QVERIFY2(p.buildScenario(out, &err), qPrintable(err));
    QCOMPARE(out.cluster.instances, 1000);
    QCOMPARE(out.workload.arrival.rate, 31.5713);
  }

  // Issue 15: length distributions and a trace's time scale and window are
  // editable in the panel (they were only kept from the file).
  void lengthsAndTraceOptions() {
    Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/default.json");
    s.workload.preset.reset();
    ScenarioPanel p;
    p.setScenario(s);
    QVERIFY(p.lengthKind(0)->isEnabled());
    p.lengthKind(1)->setCurrentIndex(p.lengthKind(1)->findData(QString("uniform")));
    p.lengthA(1)->setValue(100);
    p.lengthB(1)->setValue(900);
    p.lengthKind(2)->setCurrentIndex(p.lengthKind(2)->findData(QString("lognormal")));
    p.lengthA(2)->setValue(300);
    p.lengthB(2)->setValue(1200);
    Scenario out;
    QString err;
    QVERIFY2(p.buildScenario(out, &err), qPrintable(err));
    QVERIFY(out.workload.reasoning_tokens.kind == LengthDist::Kind::Uniform);
    QCOMPARE(out.workload.reasoning_tokens.min, 100.0);
    QCOMPARE(out.workload.reasoning_tokens.max, 900.0);
    QVERIFY(out.workload.answer_tokens.kind == LengthDist::Kind::Lognormal);
    QCOMPARE(out.workload.answer_tokens.median.value_or(0), 300.0);
    QCOMPARE(out.workload.answer_tokens.p90.value_or(0), 1200.0);
    QVERIFY(p.dirty());
    // A bad lognormal is refused with the place.
    p.lengthB(2)->setValue(200);
    QVERIFY(!p.buildScenario(out, &err));
    QVERIFY2(err.contains("workload.answer_tokens"), qPrintable(err));
    // A preset shows its lengths, read-only.
    QComboBox* workload = nullptr;
    for (QComboBox* c : p.findChildren<QComboBox*>())
      if (c->findData(QString("alpaca-reasoning")) >= 0) workload = c;
    QVERIFY(workload);
    workload->setCurrentIndex(workload->findData(QString("alpaca-reasoning")));
    QVERIFY(!p.lengthKind(1)->isEnabled());
    QVERIFY(!p.lengthA(1)->isEnabled());

    // A trace: time scale and window go into workload.trace.
    const Scenario t = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/trace-replay-reasoning.json");
    ScenarioPanel q;
    q.setScenario(t);
    QVERIFY(q.traceTimeScale()->isEnabled());
    q.traceTimeScale()->setValue(0.5);
    q.traceWindowStart()->setValue(10);
    q.traceWindowEnd()->setValue(60);
    QVERIFY2(q.buildScenario(out, &err), qPrintable(err));
    QCOMPARE(out.workload.trace->time_scale, 0.5);
    QCOMPARE(out.workload.trace->window_start_s.value_or(-1), 10.0);
    QCOMPARE(out.workload.trace->window_end_s.value_or(-1), 60.0);
    q.traceWindowEnd()->setValue(5);
    QVERIFY(!q.buildScenario(out, &err));
    QVERIFY2(err.contains("window"), qPrintable(err));
  }

  // Switching to Gamma arrivals with a CV, and editing the fabric.
  void gammaArrivalsAndFabric() {
    const Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/trace-replay-reasoning.json");
    ScenarioPanel p;
    p.setScenario(s);
    QComboBox* a = arrivals(p);
    a->setCurrentIndex(a->findData(QString("gamma")));
    QDoubleSpinBox* cv = nullptr;
    QDoubleSpinBox* nic = nullptr;
    for (QDoubleSpinBox* d : p.findChildren<QDoubleSpinBox*>()) {
      if (d->toolTip().startsWith("Gamma arrivals")) cv = d;
      if (d->suffix() == " Gbps") nic = d;
    }
    QVERIFY(cv && nic);
    QVERIFY(cv->isEnabled());
    cv->setValue(2.5);
    nic->setValue(400);
    QVERIFY(p.applyButton()->isEnabled());
    Scenario out;
    QString err;
    QVERIFY2(p.buildScenario(out, &err), qPrintable(err));
    QVERIFY(!out.workload.trace.has_value());
    QVERIFY(out.workload.arrival.process == ArrivalSpec::Process::Gamma);
    QCOMPARE(out.workload.arrival.cv, 2.5);
    QCOMPARE(out.cluster.fabric.nic_gbps, 400.0);
    // Poisson again: the CV row is disabled and not used.
    a->setCurrentIndex(a->findData(QString("poisson")));
    QVERIFY(!cv->isEnabled());
    QVERIFY(p.buildScenario(out, &err));
    QVERIFY(out.workload.arrival.process == ArrivalSpec::Process::Poisson);
    // A rate schedule needs one in the file.
    a->setCurrentIndex(a->findData(QString("schedule")));
    QVERIFY(!p.buildScenario(out, &err));
    QVERIFY2(err.contains("rate schedule"), qPrintable(err));
  }

  // Picking a trace file detects its format; an unreadable one is refused
  // inline and leaves the previous choice alone.
  void pickingTraceFiles() {
    ScenarioPanel p;
    p.setScenario(Scenario{});
    QVERIFY(p.setTraceFile(SERVELAB_SOURCE_DIR "/samples/traces/chat-500.csv"));
    QCOMPARE(arrivals(p)->currentData().toString(), QString("trace"));
    QCOMPARE(label(p, "format:"), QString("format: servelab (detected)"));
    QTemporaryDir dir;
    const QString bad = dir.filePath("garbage.csv");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("no,header,we,know\n1,2,3,4\n");
    f.close();
    QVERIFY(!p.setTraceFile(bad));
    QVERIFY(!p.setTraceFile(dir.filePath("missing.csv")));
    Scenario out;
    QString err;
    QVERIFY2(p.buildScenario(out, &err), qPrintable(err));
    QVERIFY(out.workload.trace.has_value());
    QVERIFY(QString::fromStdString(out.workload.trace->path).endsWith("chat-500.csv"));
  }
};

QTEST_MAIN(TestPanel)
#include "test_panel.moc"
