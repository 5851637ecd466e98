// Run ▸ Plan deployment…, headless (QT_QPA_PLATFORM=offscreen): a small plan
// (two GPU types, TP 1 and 2, at most 4 GPUs) through the window, checked
// against the same search run straight through core/plan: one chart point
// per simulated candidate at (cost, attainment), the Pareto front as
// paretoFront gives it, the answer naming the winner, a double-click on a
// point opening that candidate's scenario, a click selecting its row, the
// CSV exports byte for byte, and bad input disabling Run with the field's
// message.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <optional>
#include <sstream>

#include "cost/presets.h"
#include "cost/pricing.h"
#include "plan/plan.h"
#include "scenario/scenario_io.h"
#include "ui/plan/plan_chart.h"
#include "ui/plan/plan_window.h"
#include "ui_test_util.h"

using namespace sl;
using namespace sl::ui;

namespace {

const char* kGpuA = "h100-sxm-80g";
const char* kGpuB = "l40s-48g";

Scenario smallScenario() {
  Scenario s = loadScenarioFile(SERVELAB_SOURCE_DIR "/samples/default.json");
  s.workload.requests = 300;
  s.slo.ttft_s = 0.5;
  s.slo.tpot_s = 0.05;
  return s;
}

// The options the test sets in the form, built here independently.
plan::PlanOptions smallOptions() {
  plan::PlanOptions o;
  o.rate = 6;
  o.sloTtftS = 0.5;
  o.sloTpotS = 0.05;
  o.target = 0.9;
  for (const std::string& id : PresetRegistry::builtin().gpus())
    if (id == kGpuA || id == kGpuB) o.gpus.push_back(id);
  o.maxGpus = 4;
  o.tps = {1, 2};
  o.homogeneous = true;
  o.mixed = true;
  o.disaggregated = false;
  return o;
}

void fillForm(PlanWindow& w) {
  w.rateBox()->setValue(6);
  w.targetBox()->setValue(90);
  for (int i = 0; i < w.gpuList()->count(); ++i) {
    const QString id = w.gpuList()->item(i)->data(Qt::UserRole).toString();
    w.gpuList()->item(i)->setCheckState(id == kGpuA || id == kGpuB ? Qt::Checked : Qt::Unchecked);
  }
  w.maxGpusBox()->setValue(4);
  w.tpEdit()->setText("1,2");
  w.homogeneousBox()->setChecked(true);
  w.mixedBox()->setChecked(true);
  w.disaggregatedBox()->setChecked(false);
}

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The points of the chart's series `name` as drawn (nullopt: no such series).
std::optional<std::vector<QPointF>> drawn(const PlanChart& c, const QString& name) {
  for (const auto& [n, pts] : c.drawnSeries())
    if (n == name) return pts;
  return std::nullopt;
}

}  // namespace

class TestPlanWindow : public QObject {
  Q_OBJECT
 private slots:
  void formIsPrefilledFromTheScenario() {
    const Scenario s = smallScenario();
    PlanWindow w(s);
    QCOMPARE(w.rateBox()->value(), s.workload.arrival.rate);
    QCOMPARE(w.sloTtftBox()->value(), 500.0);
    QCOMPARE(w.sloTpotBox()->value(), 50.0);
    // Every GPU with a list price, none without.
    QVERIFY(w.gpuList()->count() >= 2);
    for (int i = 0; i < w.gpuList()->count(); ++i)
      QVERIFY(gpuPrice(w.gpuList()->item(i)->data(Qt::UserRole).toString().toStdString()) != nullptr);
    QVERIFY(w.runButton()->isEnabled());
    QVERIFY(w.formMessage()->text().isEmpty());
  }

  void badInputDisablesRunWithTheMessage() {
    PlanWindow w(smallScenario());
    fillForm(w);
    QVERIFY(w.runButton()->isEnabled());
    w.tpEdit()->setText("1,3");
    QVERIFY(!w.runButton()->isEnabled());
    QCOMPARE(w.formMessage()->text(), QString("TP set: 3 is not a power of two in 1 .. 64"));
    QString err;
    QVERIFY(!w.start(&err));
    QCOMPARE(err, w.formMessage()->text());
    QVERIFY(!w.running());
    w.tpEdit()->setText("1,two");
    QVERIFY(!w.runButton()->isEnabled());
    QVERIFY(w.formMessage()->text().startsWith("TP set: 'two'"));
    w.tpEdit()->setText("1,2");
    QVERIFY(w.runButton()->isEnabled());
    w.rateBox()->setValue(0);
    QVERIFY(!w.runButton()->isEnabled());
    QVERIFY2(w.formMessage()->text().startsWith("Rate: must be > 0 req/s"), qPrintable(w.formMessage()->text()));
    w.rateBox()->setValue(6);
    w.targetBox()->setValue(0);
    QVERIFY(w.formMessage()->text().startsWith("Target: must be in (0, 1]"));
    w.targetBox()->setValue(90);
    for (QCheckBox* c : {w.homogeneousBox(), w.mixedBox(), w.disaggregatedBox()}) c->setChecked(false);
    QVERIFY(!w.runButton()->isEnabled());
    QVERIFY(w.formMessage()->text().startsWith("Kinds: give at least one"));
    w.homogeneousBox()->setChecked(true);
    for (int i = 0; i < w.gpuList()->count(); ++i) w.gpuList()->item(i)->setCheckState(Qt::Unchecked);
    QVERIFY(!w.runButton()->isEnabled());
    QCOMPARE(w.formMessage()->text(), QString("GPU types: check at least one"));
    fillForm(w);
    QVERIFY(w.runButton()->isEnabled());
    QVERIFY(w.formMessage()->text().isEmpty());
  }

  void closedLoopCannotBePlanned() {
    Scenario s = smallScenario();
    s.workload.arrival.process = ArrivalSpec::Process::Closed;
    PlanWindow w(s);
    QVERIFY(!w.runButton()->isEnabled());
    QVERIFY2(w.formMessage()->text().contains("workload.arrival.process"), qPrintable(w.formMessage()->text()));
  }

  void smallPlanThroughTheWindow() {
    const Scenario s = smallScenario();
    const plan::PlanOptions o = smallOptions();
    const plan::PlanResult want = plan::runPlan(s, o);
    QVERIFY2(want.simulated >= 4, "the small plan simulates a few candidates");
    QVERIFY(want.winner.has_value());

    PlanWindow w(s);
    w.resize(1100, 760);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    fillForm(w);
    QString err;
    QVERIFY2(w.start(&err), qPrintable(err));
    QVERIFY(w.running());
    QVERIFY(!w.runButton()->isEnabled());
    QVERIFY(w.waitDone(120000));
    QVERIFY(w.result() != nullptr);
    QVERIFY(w.runButton()->isEnabled());
    const plan::PlanResult& got = *w.result();
    QCOMPARE(got.candidates.size(), want.candidates.size());

    // One chart point per simulated candidate, at (cost, attainment %).
    std::vector<std::size_t> simulated;
    for (std::size_t i = 0; i < want.candidates.size(); ++i)
      if (want.outcomes[i].status == plan::Status::Simulated) simulated.push_back(i);
    QCOMPARE(w.chartPoints().size(), simulated.size());
    const auto all = drawn(*w.chart(), "simulated");
    QVERIFY(all.has_value());
    QCOMPARE(all->size(), simulated.size());
    for (std::size_t k = 0; k < simulated.size(); ++k) {
      const std::size_t i = simulated[k];
      const QPointF p(want.candidates[i].usdPerHour, 100 * want.outcomes[i].attainment);
      QCOMPARE(w.chartPoints()[k].candidate, i);
      QCOMPARE(w.chartPoints()[k].value, p);
      QCOMPARE((*all)[k], p);
    }

    // The front: paretoFront over the simulated candidates, drawn as a step.
    const std::vector<std::size_t> front = plan::paretoFront(want.candidates, want.outcomes, simulated);
    QVERIFY(!front.empty());
    QCOMPARE(w.frontCandidates(), front);
    const auto line = drawn(*w.chart(), "Pareto front");
    QVERIFY(line.has_value());
    QCOMPARE(line->size(), 2 * front.size() - 1);
    for (std::size_t k = 0; k < front.size(); ++k) {
      const QPointF p(want.candidates[front[k]].usdPerHour, 100 * want.outcomes[front[k]].attainment);
      QCOMPARE((*line)[2 * k], p);
      if (k > 0) QCOMPARE((*line)[2 * k - 1], QPointF(p.x(), (*line)[2 * k - 2].y()));  // across, then up
    }
    const auto target = drawn(*w.chart(), "target 90 %");
    QVERIFY(target.has_value() && target->size() == 2);
    for (const QPointF& p : *target) QCOMPARE(p.y(), 90.0);

    // The winner: marked and labelled, named in the answer, selected in the table.
    const std::size_t win = *want.winner;
    const QString dep = QString::fromStdString(want.candidates[win].deployment());
    const auto winner = drawn(*w.chart(), "winner");
    QVERIFY(winner.has_value());
    QCOMPARE(winner->size(), std::size_t{1});
    QCOMPARE((*winner)[0], QPointF(want.candidates[win].usdPerHour, 100 * want.outcomes[win].attainment));
    QVERIFY(w.chart()->data().winnerLabel.startsWith(dep + ", $"));
    QVERIFY(!w.chart()->winnerLabelRect().isEmpty());
    QVERIFY2(w.answerLabel()->text().startsWith("Cheapest meeting 90 %: " + dep + ", $"),
             qPrintable(w.answerLabel()->text()));
    QVERIFY(w.answerLabel()->text().contains(QString::number(want.candidates[win].usdPerHour, 'f', 2) + "/h"));
    QCOMPARE(w.table()->rowCount(), static_cast<int>(want.candidates.size()));
    QCOMPARE(w.rowOf(win), w.table()->currentRow());
    QCOMPARE(w.table()->item(w.rowOf(win), 1)->text(), dep);
    QCOMPARE(w.table()->item(w.rowOf(win), 4)->text(), QString("winner"));

    // The table shows the simulated ones; "All candidates" adds the pruned
    // and unfit ones with their status and reason.
    for (std::size_t i = 0; i < want.candidates.size(); ++i)
      QCOMPARE(w.rowOf(i) >= 0, want.outcomes[i].status == plan::Status::Simulated);
    QVERIFY(want.pruned > 0);
    w.filterBox()->setCurrentIndex(1);
    for (std::size_t i = 0; i < want.candidates.size(); ++i) {
      const int row = w.rowOf(i);
      QVERIFY(row >= 0);
      if (want.outcomes[i].status == plan::Status::Simulated) continue;
      QCOMPARE(w.table()->item(row, 4)->text(), QString(plan::statusName(want.outcomes[i].status)));
      QCOMPARE(w.table()->item(row, 11)->text(), QString::fromStdString(want.outcomes[i].reason));
      QVERIFY(!w.table()->item(row, 11)->text().isEmpty());
    }
    w.filterBox()->setCurrentIndex(0);

    // Double-click a point: that candidate's scenario, as core builds it.
    QVERIFY(test::waitSettled(w));
    std::size_t pick = simulated.size();
    for (std::size_t k = 0; k < simulated.size(); ++k) {
      const std::size_t i = simulated[k];
      if (i != win && w.candidateAt(w.chart()->viewPosOf(w.chartPoints()[k].value)) == i) {
        pick = k;
        break;
      }
    }
    QVERIFY2(pick < simulated.size(), "some non-winning point is pickable on its own");
    const std::size_t i = simulated[pick];
    const QPoint pos = w.chart()->viewPosOf(w.chartPoints()[pick].value);
    // (Scenario is no Qt meta type: a lambda records what openPoint sends.)
    std::vector<std::pair<Scenario, QString>> opened;
    connect(&w, &PlanWindow::openPoint, this,
            [&opened](const Scenario& sc, const QString& name) { opened.emplace_back(sc, name); });
    QTest::mouseClick(w.chart()->viewport(), Qt::LeftButton, {}, pos);
    QCOMPARE(opened.size(), std::size_t{0});
    QCOMPARE(w.table()->currentRow(), w.rowOf(i));  // a click finds it in the table
    QTest::mouseDClick(w.chart()->viewport(), Qt::LeftButton, {}, pos);
    QCOMPARE(opened.size(), std::size_t{1});
    const Scenario& sent = opened.at(0).first;
    const Scenario expect = plan::candidateScenario(want.base, want.candidates[i]);
    QVERIFY(!expect.cluster.pools.empty());
    QVERIFY(sent.cluster.pools == expect.cluster.pools);
    QCOMPARE(sent.workload.arrival.rate, 6.0);
    QCOMPARE(opened.at(0).second, "plan: " + QString::fromStdString(want.candidates[i].deployment()));
    // Away from every point: nothing opens.
    QTest::mouseDClick(w.chart()->viewport(), Qt::LeftButton, {}, QPoint(2, 2));
    QCOMPARE(opened.size(), std::size_t{1});

    // A table row opens the same way.
    w.table()->cellDoubleClicked(w.rowOf(win), 1);
    QCOMPARE(opened.size(), std::size_t{2});
    QVERIFY(opened.at(1).first.cluster.pools == plan::candidateScenario(want.base, want.candidates[win]).cluster.pools);

    // Exports: the CSVs byte for byte, the chart as a PNG.
    QTemporaryDir dir;
    QVERIFY(w.exportCandidatesCsv(dir.filePath("candidates.csv")));
    QVERIFY(w.exportParetoCsv(dir.filePath("pareto.csv")));
    QCOMPARE(slurp(dir.filePath("candidates.csv")), plan::candidatesCsv(want));
    QCOMPARE(slurp(dir.filePath("pareto.csv")), plan::paretoCsv(want));
    QVERIFY(w.exportChart(dir.filePath("pareto.png")));
    QVERIFY(QImage(dir.filePath("pareto.png")).width() > 100);
  }

  void noFeasibleDeploymentNamesTheClosest() {
    const Scenario s = smallScenario();
    PlanWindow w(s);
    fillForm(w);
    w.maxGpusBox()->setValue(1);  // one GPU cannot carry 40 req/s
    w.rateBox()->setValue(40);
    QVERIFY(w.start());
    QVERIFY(w.waitDone(120000));
    QVERIFY(w.result());
    QVERIFY(!w.result()->winner);
    QVERIFY2(w.answerLabel()->text().startsWith("No feasible deployment"), qPrintable(w.answerLabel()->text()));
    if (!w.result()->closestMisses.empty())
      QVERIFY(w.answerLabel()->text().contains(
          "closest: " +
          QString::fromStdString(w.result()->candidates[w.result()->closestMisses.front()].deployment())));
    QVERIFY(drawn(*w.chart(), "winner")->empty());
    QVERIFY(w.chart()->winnerLabelRect().isEmpty());
  }

  void cancelStopsAndNeverHangs() {
    PlanWindow w(smallScenario());
    w.maxGpusBox()->setValue(16);  // every priced GPU, up to 16: thousands of candidates
    QVERIFY(w.start());
    w.cancel();
    QVERIFY(w.waitDone(120000));
    QVERIFY(!w.running());
    QVERIFY(w.result() == nullptr);
    QVERIFY2(w.statusLabel()->text().startsWith("Cancelled"), qPrintable(w.statusLabel()->text()));
    QVERIFY(w.runButton()->isEnabled());
  }
};

QTEST_MAIN(TestPlanWindow)
#include "test_plan_window.moc"
