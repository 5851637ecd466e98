// ComparePolicyDialog: the policies to compare (2-4, the first is the
// reference), validated against the registry; opened by View > Compare.
#include "ui/compare/compare_window.h"
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

}  // namespace sl::ui
