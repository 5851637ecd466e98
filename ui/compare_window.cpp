#include "compare_window.h"
#include "speed_scale.h"

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

#include "chart_panel.h"
#include "cluster_view.h"
#include "policy/registry.h"
#include "sim_controller.h"
#include "theme.h"

namespace sl::ui {

namespace {


// Policy colours: distinct from the table's green (better) and red (worse).
QColor policyColor(int i) {
  static const QColor c[] = {{0x2F, 0x6F, 0xB5}, {0xE8, 0x8A, 0x1A}, {0x8B, 0x5C, 0xD6}, {0x14, 0x9E, 0xB0}};
  return c[i % 4];
}
const QColor kBetter{0x1E, 0x8E, 0x4E};
const QColor kWorse{0xC6, 0x3A, 0x2E};

enum Roles { ValueRole = Qt::UserRole, DeltaRole, VerdictRole, IsRefRole };

constexpr int kFixedCols = 3;  // policy, simulated time, finished

QIcon swatch(const QColor& c) {
  QPixmap pm(12, 12);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(Qt::NoPen);
  p.setBrush(c);
  p.drawRoundedRect(QRectF(0.5, 0.5, 11, 11), 3, 3);
  return QIcon(pm);
}

// Metric cells: the value on the left, the delta against the reference on
// the right (stacked under the value when a narrow column has no room for
// both), green when better, red when worse.
class DeltaDelegate : public QStyledItemDelegate {
public:
  using QStyledItemDelegate::QStyledItemDelegate;
  CompareCellLayout layout(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QWidget* w = opt.widget;
    QStyle* st = w ? w->style() : QApplication::style();
    // Text area: the cell less the style's text margins, after the
    // decoration (the policy's colour swatch), if any.
    const int m = st->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, w) + 1;
    QRect r = option.rect.adjusted(m + 4, 0, -m - 6, 0);
    if (opt.features & QStyleOptionViewItem::HasDecoration) r.setLeft(r.left() + opt.decorationSize.width() + 2 * m);
    CompareCellLayout l;
    l.cell = option.rect;
    const QFontMetrics fm(opt.font);
    const int vw = fm.horizontalAdvance(opt.text);
    if (index.data(IsRefRole).toBool()) {
      l.value = QRect(r.left(), r.top(), vw, r.height());
      return l;
    }
    QFont bold = opt.font;
    bold.setBold(true);
    const QFontMetrics bfm(bold);
    const int dw = bfm.horizontalAdvance(formatDelta(index.data(DeltaRole).toDouble()));
    const int gap = fm.horizontalAdvance(QStringLiteral("  "));
    l.stacked = vw + gap + dw > r.width();
    if (!l.stacked) {
      l.value = QRect(r.left(), r.top(), vw, r.height());
      l.delta = QRect(r.right() + 1 - dw, r.top(), dw, r.height());
    } else {
      const int mid = r.center().y();
      l.value = QRect(r.left(), mid - fm.height(), vw, fm.height());
      l.delta = QRect(r.right() + 1 - dw, mid + 1, dw, bfm.height());
    }
    return l;
  }
  void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QWidget* w = opt.widget;
    QStyle* st = w ? w->style() : QApplication::style();
    const CompareCellLayout l = layout(option, index);
    const QString value = opt.text;
    opt.text.clear();
    st->drawControl(QStyle::CE_ItemViewItem, &opt, p, w);
    p->save();
    p->setPen(opt.palette.color(QPalette::Text));
    p->drawText(l.value, Qt::AlignVCenter | Qt::AlignLeft, value);
    if (!index.data(IsRefRole).toBool()) {
      const double d = index.data(DeltaRole).toDouble();
      const auto v = static_cast<Verdict>(index.data(VerdictRole).toInt());
      QFont f = opt.font;
      f.setBold(v == Verdict::Better || v == Verdict::Worse);
      p->setFont(f);
      p->setPen(v == Verdict::Better ? kBetter : v == Verdict::Worse ? kWorse : theme::kMuted);
      p->drawText(l.delta, Qt::AlignVCenter | Qt::AlignRight, formatDelta(d));
    }
    p->restore();
  }
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QSize s = QStyledItemDelegate::sizeHint(option, index);
    s.setWidth(s.width() + QFontMetrics(option.font).horizontalAdvance("  +100.0%") + 16);
    return s;
  }
};

}  // namespace

// ------------------------------------------------------------------ dialog

ComparePolicyDialog::ComparePolicyDialog(const QStringList& initial, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Compare policies"));
  auto* lay = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("Every policy runs on the current scenario with the same seed, so all see the "
                              "same arrivals. Deltas in the summary table are against the reference."));
  intro->setWordWrap(true);
  lay->addWidget(intro);
  auto* grid = new QGridLayout;
  grid->setColumnStretch(2, 1);
  grid->setVerticalSpacing(8);
  grid->setHorizontalSpacing(10);
  const char* labels[] = {QT_TR_NOOP("Reference"), QT_TR_NOOP("Policy 2"), QT_TR_NOOP("Policy 3"),
                          QT_TR_NOOP("Policy 4")};
  for (int i = 0; i < kCompareMaxPolicies; ++i) {
    auto* combo = new QComboBox;
    if (i >= kCompareMinPolicies) combo->addItem(tr("(none)"), QString());
    for (const PolicyInfo& p : policyCatalog()) {
      combo->addItem(QString::fromStdString(p.id), QString::fromStdString(p.id));
      combo->setItemData(combo->count() - 1, QString::fromStdString(p.description), Qt::ToolTipRole);
    }
    const int at = i < initial.size() ? combo->findData(initial[i]) : 0;
    combo->setCurrentIndex(std::max(0, at));
    auto* desc = new QLabel;
    desc->setStyleSheet("color: #6B7280;");
    desc->setWordWrap(true);
    desc->setMinimumWidth(300);
    grid->addWidget(new QLabel(tr(labels[i])), i, 0);
    grid->addWidget(combo, i, 1);
    grid->addWidget(desc, i, 2);
    combos_.push_back(combo);
    descriptions_.push_back(desc);
    connect(combo, &QComboBox::currentIndexChanged, this, [this] { validate(); });
  }
  lay->addLayout(grid);
  error_ = new QLabel;
  error_->setStyleSheet("color: #C63A2E;");
  lay->addWidget(error_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  ok_ = buttons->button(QDialogButtonBox::Ok);
  ok_->setText(tr("Compare"));
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  lay->addWidget(buttons);
  validate();
}

QStringList ComparePolicyDialog::policies() const {
  QStringList out;
  for (QComboBox* c : combos_) {
    const QString id = c->currentData().toString();
    if (!id.isEmpty()) out << id;
  }
  return out;
}

void ComparePolicyDialog::validate() {
  for (std::size_t i = 0; i < combos_.size(); ++i) {
    const QString id = combos_[i]->currentData().toString();
    descriptions_[i]->setText(id.isEmpty() ? QString()
                                           : QString::fromStdString(policyInfo(id.toStdString()).description));
  }
  const QString err = checkComparePolicies(policies());
  error_->setText(err);
  ok_->setEnabled(err.isEmpty());
}

bool ComparePolicyDialog::pick(QWidget* parent, const QStringList& initial, QStringList& out) {
  ComparePolicyDialog d(initial, parent);
  if (d.exec() != QDialog::Accepted) return false;
  out = d.policies();
  return true;
}

// ------------------------------------------------------------------ window

struct CompareWindow::Run {
  QString policy;
  QColor color;
  SimController* ctl = nullptr;
  ClusterView* view = nullptr;
  QLabel* info = nullptr;
  CompareRunStats stats;
  int generation = 0;
  std::shared_ptr<const LiveFrame> frame;
  std::vector<QPointF> ttft99, violation, throughput;
};

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
  table_->setItemDelegate(new DeltaDelegate(table_));
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
        tip = tr("Time to first visible token over finished requests; lower is better");
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

bool CompareWindow::exportTable(const QString& path, QString* error) {
  if (!exportCsv(path, error)) return false;
  // Said where it stays visible (the run status keeps its own label).
  notice_->setText(tr("Table written to %1 (%2 policies)").arg(QDir::toNativeSeparators(path)).arg(runs_.size()));
  notice_->setToolTip(QFileInfo(path).absoluteFilePath());
  noticeTimer_->start(10000);
  return true;
}

QString CompareWindow::notice() const { return notice_->text(); }
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
    r->info->setText(f->done ? tr("done at %1 s · %2 finished").arg(nsToSeconds(s.now), 0, 'f', 1).arg(s.finished)
                             : tr("%1 in flight · %2 finished").arg(s.inFlight).arg(s.finished));
  }
  if (force || sinceRefresh_.elapsed() >= 200) {
    refreshCharts();
    refreshTable();
    sinceRefresh_.restart();
  }
  int done = 0;
  double endS = 0;  // when every run has ended: the last one's end time
  for (const auto& r : runs_) {
    if (!r->frame || !r->frame->done) continue;
    ++done;
    endS = std::max(endS, nsToSeconds(r->frame->snapshot.now));
  }
  const bool allEnded = done == static_cast<int>(runs_.size()) && done > 0;
  timeLabel_->setText(tr("t = %1 s").arg(allEnded ? std::min(endS, commonClock()) : commonClock(), 0, 'f', 1));
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

std::vector<CompareRow> CompareWindow::rows() const {
  std::vector<CompareRow> out;
  for (const auto& r : runs_) out.push_back(r->stats.row());
  return out;
}

void CompareWindow::refreshTable() {
  if (!tableDirty_) return;
  tableDirty_ = false;
  const std::vector<CompareRow> rows = this->rows();
  const QString hint = compareHint(rows);
  hint_->setText(hint);
  hint_->setVisible(!hint.isEmpty());
  auto cell = [this](int row, int col) {
    QTableWidgetItem* it = table_->item(row, col);
    if (!it) {
      it = new QTableWidgetItem;
      table_->setItem(row, col, it);
    }
    return it;
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int row = static_cast<int>(i);
    const CompareRow& r = rows[i];
    QTableWidgetItem* p = cell(row, 0);
    p->setText(i == 0 ? tr("%1 (reference)").arg(r.policy) : r.policy);
    p->setData(ValueRole, r.policy);
    p->setData(IsRefRole, true);  // no delta drawn
    p->setIcon(swatch(runs_[i]->color));
    p->setToolTip(QString::fromStdString(policyInfo(r.policy.toStdString()).description));
    QTableWidgetItem* t = cell(row, 1);
    t->setText(tr("%1 s").arg(r.simS, 0, 'f', 1));
    t->setData(ValueRole, r.simS);
    t->setData(IsRefRole, true);
    QTableWidgetItem* f = cell(row, 2);
    f->setText(tr("%1 / %2").arg(r.finished).arg(r.arrived));
    f->setData(ValueRole, static_cast<qlonglong>(r.finished));
    f->setData(IsRefRole, true);
    f->setToolTip(tr("finished / arrived"));
    for (std::size_t m = 0; m < compareMetrics().size(); ++m) {
      const CompareMetricInfo& info = compareMetrics()[m];
      const double v = metricValue(r, info.metric);
      const double d = deltaPct(v, metricValue(rows.front(), info.metric));
      QTableWidgetItem* it = cell(row, kFixedCols + static_cast<int>(m));
      it->setText(formatMetric(info.metric, v));
      it->setData(ValueRole, v);
      it->setData(DeltaRole, d);
      it->setData(VerdictRole, static_cast<int>(verdict(d, info.better)));
      it->setData(IsRefRole, i == 0);
    }
  }
  fitTableRows();
}

CompareCellLayout CompareWindow::cellLayout(int row, int col) const {
  const QModelIndex index = table_->model()->index(row, col);
  QStyleOptionViewItem opt;
  opt.initFrom(table_->viewport());
  opt.font = table_->font();
  opt.rect = table_->visualRect(index);
  opt.widget = table_;
  opt.features |= QStyleOptionViewItem::HasDisplay;
  return static_cast<const DeltaDelegate*>(table_->itemDelegate())->layout(opt, index);
}

void CompareWindow::fitTableRows() {
  bool stacked = false;
  for (int r = 0; r < table_->rowCount() && !stacked; ++r)
    for (int c = kFixedCols; c < table_->columnCount() && !stacked; ++c)
      stacked = table_->item(r, c) && cellLayout(r, c).stacked;
  const QFontMetrics fm(table_->font());
  const int rowH = stacked ? 2 * fm.height() + 8 : fm.height() + 12;
  for (int r = 0; r < table_->rowCount(); ++r) table_->setRowHeight(r, rowH);
  table_->setFixedHeight(table_->horizontalHeader()->sizeHint().height() + rowH * table_->rowCount() + 4 +
                         2 * table_->frameWidth());
}

bool CompareWindow::exportCsv(const QString& path, QString* error) {
  pull(true);
  const std::string text = compareCsv(rows());
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) < 0 || !f.commit()) {
    if (error) *error = tr("cannot write %1").arg(path);
    return false;
  }
  return true;
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
