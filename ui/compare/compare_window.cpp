#include "ui/compare/compare_window.h"
#include "ui/compare/compare_run.h"
#include "ui/common/speed_scale.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QDir>
#include <QFileInfo>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QSaveFile>
#include <QSlider>
#include <QStatusBar>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "ui/charts/chart_panel.h"
#include "ui/cluster/cluster_view.h"
#include "policy/registry.h"
#include "ui/controller/sim_controller.h"
#include "ui/common/theme.h"

namespace sl::ui {

namespace {

// Policy colours: distinct from the table's green (better) and red (worse).
QColor policyColor(int i) {
  static const QColor c[] = {{0x2F, 0x6F, 0xB5}, {0xE8, 0x8A, 0x1A}, {0x8B, 0x5C, 0xD6}, {0x14, 0x9E, 0xB0}};
  return c[i % 4];
}

}  // namespace

// ------------------------------------------------------------------ window

CompareWindow::CompareWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowFlag(Qt::Window);
  setObjectName("ServeLabCompareWindow");
  setWindowTitle(tr("ServeLab — Compare"));
  buildUi();
  pullTimer_ = new QTimer(this);
  pullTimer_->setSingleShot(true);
  connect(pullTimer_, &QTimer::timeout, this, [this] { pull(false); });
  driveTimer_ = new QTimer(this);
  driveTimer_->setInterval(16);
  connect(driveTimer_, &QTimer::timeout, this, &CompareWindow::drive);
  sincePull_.start();
  sinceRefresh_.start();
  anchorWall_.start();
  roundWall_.start();
  resize(1280, 800);
  updateActions();
}

CompareWindow::~CompareWindow() {
  // Stop the workers first (each finishes its slice, <= ~8 ms), then the views.
  driveTimer_->stop();
  pullTimer_->stop();
  clearRuns();
}

void CompareWindow::buildUi() {
  QStyle* st = style();
  play_ = new QAction(st->standardIcon(QStyle::SP_MediaPlay), tr("Play"), this);
  play_->setShortcut(QKeySequence(Qt::Key_Space));
  play_->setToolTip(tr("Play / pause every run (Space)"));
  connect(play_, &QAction::triggered, this, &CompareWindow::togglePlay);
  step_ = new QAction(st->standardIcon(QStyle::SP_MediaSkipForward), tr("Step"), this);
  step_->setShortcuts({QKeySequence(Qt::Key_Right), QKeySequence(Qt::Key_F4)});
  step_->setToolTip(tr("Advance every run one simulated second (→)"));
  connect(step_, &QAction::triggered, this, &CompareWindow::step);
  reset_ = new QAction(st->standardIcon(QStyle::SP_BrowserReload), tr("Reset"), this);
  reset_->setShortcut(QKeySequence(Qt::Key_R));
  reset_->setToolTip(tr("Every run back to t = 0 with the same scenario and seed (R)"));
  connect(reset_, &QAction::triggered, this, &CompareWindow::reset);
  export_ = new QAction(st->standardIcon(QStyle::SP_DialogSaveButton), tr("Export table…"), this);
  export_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  export_->setToolTip(tr("Save the summary table with deltas as CSV (Ctrl+E)"));
  connect(export_, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export summary table"), "compare.csv",
                                                      tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    QString err;
    if (!exportTable(path, &err)) QMessageBox::warning(this, tr("Export summary table"), err);
  });
  // Close: on the toolbar, Escape, Ctrl+W (and the platform's Close key).
  auto* close = new QAction(st->standardIcon(QStyle::SP_DialogCloseButton), tr("Close"), this);
  QList<QKeySequence> closeKeys = {QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_W)};
  for (const QKeySequence& k : QKeySequence::keyBindings(QKeySequence::Close))
    if (!closeKeys.contains(k)) closeKeys << k;
  close->setShortcuts(closeKeys);
  close->setToolTip(tr("Close the comparison and stop its runs (Esc, Ctrl+W)"));
  connect(close, &QAction::triggered, this, &QWidget::close);
  addAction(close);
  for (QAction* a : {play_, step_, reset_, export_, close}) a->setShortcutContext(Qt::WindowShortcut);

  QToolBar* tb = addToolBar(tr("Compare"));
  tb->setObjectName("CompareToolBar");
  tb->setMovable(false);
  tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  tb->setIconSize(QSize(18, 18));
  tb->addAction(play_);
  tb->addAction(step_);
  tb->addAction(reset_);
  tb->addSeparator();
  tb->addWidget(new QLabel(tr(" Speed ")));
  speedSlider_ = new QSlider(Qt::Horizontal);
  speedSlider_->setRange(0, kSpeedMax);
  speedSlider_->setFixedWidth(130);
  speedSlider_->setToolTip(tr("Simulated seconds per wall second for all runs (log scale, 0.1× to max)"));
  tb->addWidget(speedSlider_);
  speedLabel_ = new QLabel;
  speedLabel_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance("1000× "));
  tb->addWidget(speedLabel_);
  connect(speedSlider_, &QSlider::valueChanged, this, [this](int v) { setSpeed(sliderToSpeed(v)); });
  speedSlider_->setValue(speedToSlider(10.0));
  setSpeed(10.0);
  tb->addSeparator();
  timeLabel_ = new QLabel;
  QFont bold = timeLabel_->font();
  bold.setBold(true);
  timeLabel_->setFont(bold);
  timeLabel_->setMinimumWidth(QFontMetrics(bold).horizontalAdvance("t = 00000.0 s "));
  timeLabel_->setToolTip(tr("Simulated time: all runs advance in lockstep"));
  tb->addWidget(timeLabel_);
  auto* spacer = new QWidget;
  spacer->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  tb->addWidget(spacer);
  tb->addAction(export_);
  tb->addAction(close);

  auto* central = new QWidget;
  auto* v = new QVBoxLayout(central);
  v->setContentsMargins(6, 6, 6, 6);
  v->setSpacing(6);
  tilesHost_ = new QWidget;
  auto* tiles = new QHBoxLayout(tilesHost_);
  tiles->setContentsMargins(0, 0, 0, 0);
  tiles->setSpacing(6);
  v->addWidget(tilesHost_, 5);

  auto* chartsRow = new QWidget;
  auto* ch = new QHBoxLayout(chartsRow);
  ch->setContentsMargins(0, 0, 0, 0);
  ch->setSpacing(6);
  auto* ttft = new LiveChart("compare_ttft_p99", tr("TTFT p99, rolling"), tr("time (s)"), tr("seconds"));
  auto* viol = new LiveChart("compare_qoe_violation", tr("QoE violation rate, rolling"), tr("time (s)"),
                             tr("fraction"));
  auto* thru = new LiveChart("compare_throughput", tr("Throughput"), tr("time (s)"), tr("k tok/s"));
  charts_ = {ttft, viol, thru};
  for (LiveChart* c : charts_) ch->addWidget(c);
  v->addWidget(chartsRow, 4);

  table_ = new QTableWidget;
  installTableDelegate();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->setFocusPolicy(Qt::NoFocus);
  table_->verticalHeader()->hide();
  table_->setShowGrid(false);
  table_->setAlternatingRowColors(true);
  table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  QStringList headers{tr("Policy"), tr("Sim time"), tr("Finished")};
  for (const CompareMetricInfo& m : compareMetrics()) headers << tr(m.header);
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setHighlightSections(false);
  // Narrower columns may need a value and its delta stacked (and back).
  connect(table_->horizontalHeader(), &QHeaderView::sectionResized, this, [this] { fitTableRows(); });
  table_->horizontalHeaderItem(0)->setToolTip(tr("The first policy is the reference of the deltas"));
  for (std::size_t i = 0; i < compareMetrics().size(); ++i) {
    const CompareMetricInfo& m = compareMetrics()[i];
    QString tip;
    switch (m.metric) {
      case CompareMetric::TtftP50:
      case CompareMetric::TtftP99:
        tip = tr("Time to the first answer token over all finished requests; lower is better");
        break;
      case CompareMetric::TailTtft:
        tip = tr("The PASCAL paper's tail TTFT: finished requests binned by reasoning length (256 tokens), "
                 "each bin's p99 (p95, p90 or max in bins of under 100, 20, 10 requests; under 5 dropped), "
                 "averaged over the bins. Long reasoners no longer dominate it as they do the overall p99; "
                 "lower is better");
        break;
      case CompareMetric::QoeViolation:
        tip = tr("Share of scored requests whose answer-stream QoE is below the SLO threshold; lower is better");
        break;
      case CompareMetric::Throughput: tip = tr("Output tokens per simulated second; higher is better"); break;
      case CompareMetric::Migrations: tip = tr("Completed KV migrations (neither good nor bad by itself)"); break;
      case CompareMetric::Preemptions: tip = tr("Requests preempted (swapped or recomputed); lower is better"); break;
    }
    table_->horizontalHeaderItem(kFixedCols + static_cast<int>(i))->setToolTip(tip);
  }
  v->addWidget(table_, 0);
  hint_ = new QLabel;
  hint_->setObjectName("CompareHint");
  hint_->setWordWrap(true);
  hint_->setStyleSheet("color: #8A5A00; background: #FFF6E0; border-radius: 4px; padding: 4px 8px;");
  hint_->hide();
  v->addWidget(hint_, 0);
  setCentralWidget(central);

  status_ = new QLabel;
  statusBar()->addPermanentWidget(status_, 1);
  notice_ = new QLabel;
  notice_->setObjectName("CompareNotice");
  notice_->setStyleSheet("color: #1F7A4D; font-weight: bold;");
  statusBar()->addPermanentWidget(notice_);
  noticeTimer_ = new QTimer(this);
  noticeTimer_->setSingleShot(true);
  connect(noticeTimer_, &QTimer::timeout, notice_, &QLabel::clear);
}

void CompareWindow::setLecture(bool on) {
  if (on == lecture_) return;
  lecture_ = on;
  if (basePointSize_ <= 0) basePointSize_ = font().pointSizeF();
  QFont f = font();
  f.setPointSizeF(basePointSize_ * (on ? 1.3 : 1.0));
  setFont(f);
  // Labels sized from the font when they were built.
  QFont bold = f;
  bold.setBold(true);
  timeLabel_->setFont(bold);
  timeLabel_->setMinimumWidth(QFontMetrics(bold).horizontalAdvance("t = 00000.0 s "));
  speedLabel_->setMinimumWidth(QFontMetrics(f).horizontalAdvance("1000× "));
  // Tiles 5 : charts 4 outside lecture mode; the charts the larger share in
  // it, so that their ticks and legends read from the back of a room.
  if (auto* v = qobject_cast<QVBoxLayout*>(centralWidget()->layout())) {
    v->setStretch(0, on ? 4 : 5);
    v->setStretch(1, on ? 6 : 4);
  }
  for (auto& r : runs_) r->view->setLecture(on);
  // The table keeps its size: nine columns of numbers with their deltas do
  // not fit a 1024-px window in larger text (headers and values were cut).
  QFont tf = f;
  tf.setPointSizeF(basePointSize_);
  table_->setFont(on ? tf : QFont());
  table_->horizontalHeader()->setFont(on ? tf : QFont());
  fitTableRows();
  for (LiveChart* c : charts_) c->refresh();
}

QString CompareWindow::notice() const { return notice_->text(); }
QString CompareWindow::clockText() const { return timeLabel_->text(); }
QString CompareWindow::hint() const { return hint_->isVisible() ? hint_->text() : QString(); }

void CompareWindow::clearRuns() {
  for (auto& r : runs_) delete r->ctl;  // joins the worker thread
  runs_.clear();
  if (tilesHost_) {
    QLayout* lay = tilesHost_->layout();
    while (QLayoutItem* it = lay->takeAt(0)) {
      delete it->widget();
      delete it;
    }
  }
}

bool CompareWindow::load(const Scenario& base, const QStringList& policies, const QString& name, QString* error) {
  const QString bad = checkComparePolicies(policies);
  if (!bad.isEmpty()) {
    if (error) *error = bad;
    return false;
  }
  playing_ = false;
  closing_ = false;
  driveTimer_->stop();
  clearRuns();
  base_ = base;
  name_ = name;
  target_ = 0;
  chunk_ = 0.5;
  auto* tiles = static_cast<QHBoxLayout*>(tilesHost_->layout());
  for (int i = 0; i < policies.size(); ++i) {
    const QString id = policies[i].trimmed();
    auto run = std::make_unique<Run>();
    run->policy = id;
    run->color = policyColor(i);
    run->stats = CompareRunStats(id, base.slo.qoe_threshold);
    run->ctl = new SimController(this);
    QString err;
    if (!run->ctl->load(scenarioForPolicy(base, id.toStdString()), &err)) {
      delete run->ctl;
      clearRuns();
      if (error) *error = tr("policy %1: %2").arg(id, err);
      return false;
    }
    connect(run->ctl, &SimController::frameReady, this, &CompareWindow::schedulePull);
    connect(run->ctl, &SimController::paused, this, [this] {
      if (playing_) {
        if (!anyBusy()) drive();  // next round at once, not at the next timer tick
      } else if (!anyBusy()) {
        pull(true);
        updateActions();
      }
    });

    auto* tile = new QFrame;
    tile->setObjectName("CompareTile");
    tile->setStyleSheet(QString("#CompareTile { background: white; border: 1px solid #D5DAE1; "
                                "border-top: 3px solid %1; border-radius: 4px; }")
                            .arg(run->color.name()));
    auto* tv = new QVBoxLayout(tile);
    tv->setContentsMargins(8, 5, 8, 4);
    tv->setSpacing(2);
    auto* head = new QHBoxLayout;
    auto* title = new QLabel(QString("<b style='color:%1'>%2</b>%3")
                                 .arg(run->color.darker(115).name(), id.toHtmlEscaped(),
                                      i == 0 ? tr(" <span style='color:#6B7280'>· reference</span>") : QString()));
    title->setToolTip(QString::fromStdString(policyInfo(id.toStdString()).description));
    head->addWidget(title);
    head->addStretch(1);
    run->info = new QLabel;
    run->info->setStyleSheet("color: #6B7280;");
    head->addWidget(run->info);
    tv->addLayout(head);
    run->view = new ClusterView;
    run->view->setMinimumSize(160, 120);
    run->view->setLecture(lecture_);
    run->view->setPools(poolGroups(base));  // mixed pools: grouped cards (one pool: the plain grid)
    tv->addWidget(run->view, 1);
    tiles->addWidget(tile, 1);

    for (LiveChart* c : charts_) {
      if (i == 0) c->removeAllSeries();
      c->addSeries(id, run->color);
    }
    runs_.push_back(std::move(run));
  }
  for (LiveChart* c : charts_) c->refresh();
  table_->setRowCount(static_cast<int>(runs_.size()));
  for (std::size_t m = 0; m < compareMetrics().size(); ++m)
    table_->setColumnHidden(kFixedCols + static_cast<int>(m),
                            !compareMetricShown(compareMetrics()[m].metric, policies));
  fitTableRows();
  setWindowTitle(tr("ServeLab — Compare %1 — %2").arg(policies.join(QString::fromUtf8(" · ")), name));
  tableDirty_ = chartsDirty_ = true;
  refreshTable();
  updateActions();
  return true;
}

QStringList CompareWindow::policies() const {
  QStringList out;
  for (const auto& r : runs_) out << r->policy;
  return out;
}
SimController* CompareWindow::controller(int i) const { return runs_.at(static_cast<std::size_t>(i))->ctl; }
ClusterView* CompareWindow::clusterView(int i) const { return runs_.at(static_cast<std::size_t>(i))->view; }
LiveChart* CompareWindow::chart(const QString& id) const {
  for (LiveChart* c : charts_)
    if (c->id() == id) return c;
  return nullptr;
}

bool CompareWindow::anyBusy() const {
  return std::any_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->ctl->isRunning(); });
}
bool CompareWindow::allDone() const {
  return !runs_.empty() &&
         std::all_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->ctl->latest()->done; });
}
double CompareWindow::commonClock() const { return target_; }

// The time every run has reached, from the same frames as the table's "Sim
// time" column (issue 50: the toolbar showed the round's target, the table
// each engine's last event): the earliest clock of the runs still going, or
// once all have ended, the last one's end.
double CompareWindow::shownClock() const {
  double going = -1, ended = 0;
  for (const auto& r : runs_) {
    if (!r->frame) return 0;
    if (r->frame->done) ended = std::max(ended, r->frame->clockS);
    else going = going < 0 ? r->frame->clockS : std::min(going, r->frame->clockS);
  }
  return going >= 0 ? going : ended;
}

void CompareWindow::issueRound(double target) {
  target_ = target;
  roundWall_.restart();
  for (auto& r : runs_)
    if (!r->ctl->latest()->done) r->ctl->runTo(target);
  updateActions();
}

void CompareWindow::drive() {
  if (!playing_) {
    driveTimer_->stop();
    return;
  }
  if (anyBusy()) return;
  if (allDone()) {
    playing_ = false;
    driveTimer_->stop();
    pull(true);
    updateActions();
    return;
  }
  double next = 0;
  if (speed_ > 0) {
    next = anchorSim_ + speed_ * static_cast<double>(anchorWall_.elapsed()) / 1000.0;
    // The slowest run cannot keep up: drop the debt so the display stays live.
    const double slack = std::max(speed_ * 0.25, 1e-3);
    if (next - target_ > slack) {
      anchorSim_ = target_;
      anchorWall_.restart();
      next = target_ + slack;
    }
    if (next <= target_) return;  // caught up: the timer comes back
  } else {
    // As fast as possible: size rounds to ~50–200 ms of wall time.
    const qint64 ms = roundWall_.elapsed();
    if (ms < 50) chunk_ = std::min(chunk_ * 2, 600.0);
    else if (ms > 200) chunk_ = std::max(chunk_ / 2, 0.01);
    next = target_ + chunk_;
  }
  issueRound(next);
}

void CompareWindow::play() {
  if (runs_.empty() || allDone()) return;
  playing_ = true;
  anchorSim_ = target_;
  anchorWall_.restart();
  roundWall_.restart();
  driveTimer_->start();
  drive();
  updateActions();
}

void CompareWindow::pause() {
  // The round in flight completes, so every run stops at the same time.
  playing_ = false;
  driveTimer_->stop();
  updateActions();
}

void CompareWindow::togglePlay() { playing_ ? pause() : play(); }

void CompareWindow::step() {
  if (runs_.empty() || anyBusy()) return;
  pause();
  issueRound(commonClock() + 1.0);
}

void CompareWindow::runTo(double t) {
  if (runs_.empty()) return;
  pause();
  issueRound(t);
}

void CompareWindow::setSpeed(double speed) {
  speed_ = speed;
  anchorSim_ = target_;
  anchorWall_.restart();
  if (speedLabel_) speedLabel_->setText(speedText(speed));
  if (speedSlider_ && speedSlider_->value() != speedToSlider(speed)) {
    const QSignalBlocker block(speedSlider_);
    speedSlider_->setValue(speedToSlider(speed));
  }
}

void CompareWindow::reset() {
  if (runs_.empty()) return;
  pause();
  waitIdle(10'000);
  std::vector<int> expected;
  for (auto& r : runs_) {
    expected.push_back(r->ctl->latest()->generation + 1);
    r->ctl->reset();
  }
  // Wait for every worker to show its new run, so nothing of the old one is
  // mixed into the new statistics.
  QElapsedTimer t;
  t.start();
  for (std::size_t i = 0; i < runs_.size(); ++i)
    while (runs_[i]->ctl->latest()->generation < expected[i] && t.elapsed() < 5000) QThread::msleep(1);
  for (auto& r : runs_) {
    (void)r->ctl->takeProbes();
    (void)r->ctl->takeFinished();
    (void)r->ctl->takePolicySamples();
    r->stats.clear();
    r->ttft99.clear();
    r->violation.clear();
    r->throughput.clear();
    r->generation = r->ctl->latest()->generation;
  }
  target_ = 0;
  chunk_ = 0.5;
  chartsDirty_ = tableDirty_ = true;
  pull(true);
  updateActions();
}

bool CompareWindow::waitIdle(int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while ((anyBusy() || playing_) && t.elapsed() < timeoutMs) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  return !anyBusy() && !playing_;
}

void CompareWindow::schedulePull() {
  if (closing_ || pullTimer_->isActive()) return;
  // ~60 Hz while animating; fewer redraws when running flat out.
  const int interval = speed_ > 0 ? 16 : 100;
  pullTimer_->start(static_cast<int>(std::max<qint64>(0, interval - sincePull_.elapsed())));
}

void CompareWindow::pullNow() { pull(true); }

void CompareWindow::pull(bool force) {
  if (closing_) return;
  sincePull_.restart();
  for (auto& r : runs_) {
    std::shared_ptr<const LiveFrame> f = r->ctl->takeFrame();
    if (f->generation != r->generation) {
      r->generation = f->generation;
      r->stats.clear();
      r->ttft99.clear();
      r->violation.clear();
      r->throughput.clear();
      chartsDirty_ = true;
    }
    const std::vector<FinishedPoint> fin = r->ctl->takeFinished();
    (void)r->ctl->takePolicySamples();  // the compare charts show no policy series
    r->stats.addFinished(fin);
    for (const ProbeSample& s : r->ctl->takeProbes()) {
      const double t = nsToSeconds(s.time);
      if (s.ttftP99 >= 0) r->ttft99.emplace_back(t, s.ttftP99);
      if (s.qoeViolationRate >= 0) r->violation.emplace_back(t, s.qoeViolationRate);
      r->throughput.emplace_back(t, static_cast<double>(s.tokens) / std::max(1e-9, s.intervalS) / 1000.0);
      chartsDirty_ = true;
    }
    if (f != r->frame) {
      r->frame = f;
      r->stats.setFrame(*f);
      r->view->setFrame(f);
      tableDirty_ = true;
    }
    tableDirty_ = tableDirty_ || !fin.empty();
    const Snapshot& s = f->snapshot;
    r->info->setText(f->done ? tr("done at %1 s · %2 finished").arg(f->clockS, 0, 'f', 1).arg(s.finished)
                             : tr("%1 in flight · %2 finished").arg(s.inFlight).arg(s.finished));
  }
  if (force || sinceRefresh_.elapsed() >= 200) {
    refreshCharts();
    refreshTable();
    sinceRefresh_.restart();
  }
  int done = 0;
  for (const auto& r : runs_)
    if (r->frame && r->frame->done) ++done;
  const bool allEnded = done == static_cast<int>(runs_.size()) && done > 0;
  timeLabel_->setText(tr("t = %1 s").arg(shownClock(), 0, 'f', 1));
  status_->setText(tr("%1 runs in lockstep · seed %2 · %3 · %4")
                       .arg(runs_.size())
                       .arg(base_.run.seed)
                       .arg(allEnded ? tr("all done")
                            : done > 0                                           ? tr("%1 done").arg(done)
                            : playing_                                           ? tr("running")
                                                                                 : tr("paused"))
                       .arg(name_));
}

void CompareWindow::refreshCharts() {
  if (!chartsDirty_) return;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const int s = static_cast<int>(i);
    charts_[0]->setSeriesData(s, runs_[i]->ttft99);
    charts_[1]->setSeriesData(s, runs_[i]->violation);
    charts_[2]->setSeriesData(s, runs_[i]->throughput);
  }
  for (LiveChart* c : charts_) c->refresh();
  chartsDirty_ = false;
}

void CompareWindow::updateActions() {
  const bool any = !runs_.empty();
  play_->setText(playing_ ? tr("Pause") : tr("Play"));
  play_->setIcon(style()->standardIcon(playing_ ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  play_->setEnabled(any && (playing_ || !allDone()));
  step_->setEnabled(any && !playing_ && !allDone());
  reset_->setEnabled(any);
  export_->setEnabled(any);
}

void CompareWindow::closeEvent(QCloseEvent* e) {
  closing_ = true;
  playing_ = false;
  driveTimer_->stop();
  pullTimer_->stop();
  for (auto& r : runs_) r->ctl->pause();
  QMainWindow::closeEvent(e);
}

}  // namespace sl::ui
