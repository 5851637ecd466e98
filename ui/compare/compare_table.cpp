// CompareWindow: the summary table (value and delta against the reference per
// cell, stacked when the column is narrow; better green, worse red) and its
// exports (CSV, PNG).
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

const QColor kBetter{0x1E, 0x8E, 0x4E};

const QColor kWorse{0xC6, 0x3A, 0x2E};

enum Roles { ValueRole = Qt::UserRole, DeltaRole, VerdictRole, IsRefRole };

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

void CompareWindow::installTableDelegate() { table_->setItemDelegate(new DeltaDelegate(table_)); }

bool CompareWindow::exportTable(const QString& path, QString* error) {
  if (!exportCsv(path, error)) return false;
  // Said where it stays visible (the run status keeps its own label).
  notice_->setText(tr("Table written to %1 (%2 policies)").arg(QDir::toNativeSeparators(path)).arg(runs_.size()));
  notice_->setToolTip(QFileInfo(path).absoluteFilePath());
  noticeTimer_->start(10000);
  return true;
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
      stacked = !table_->isColumnHidden(c) && table_->item(r, c) && cellLayout(r, c).stacked;
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

}  // namespace sl::ui
