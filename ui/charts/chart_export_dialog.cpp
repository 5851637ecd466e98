#include "ui/charts/chart_export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>

namespace sl::ui {

namespace {
const char* kExportDirKey = "exportDir";
}

QString ChartExportDialog::defaultParentFolder() {
  const QString last = QSettings().value(kExportDirKey).toString();
  if (!last.isEmpty() && QFileInfo(last).isDir()) return last;
  for (auto where : {QStandardPaths::PicturesLocation, QStandardPaths::DocumentsLocation}) {
    const QString d = QStandardPaths::writableLocation(where);
    if (!d.isEmpty() && QFileInfo(d).isDir()) return d;
  }
  return QDir::homePath();
}

void ChartExportDialog::rememberFolder(const QString& dir) {
  // The parent: the next export proposes a sibling folder named after its scenario.
  QSettings().setValue(kExportDirKey, QFileInfo(QDir::cleanPath(dir)).absolutePath());
}

QWidget* ChartExportDialog::folderField(QLineEdit* edit, const QString& title) {
  auto* browse = new QPushButton(tr("Browse…"));
  auto* box = new QWidget;
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(edit, 1);
  row->addWidget(browse);
  box->setFocusProxy(edit);
  connect(browse, &QPushButton::clicked, edit, [edit, title] {
    const QString d = QFileDialog::getExistingDirectory(edit->window(), title, edit->text());
    if (!d.isEmpty()) edit->setText(d);
  });
  return box;
}

ChartExportDialog::ChartExportDialog(const QString& name, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Export charts"));
  setObjectName("ChartExportDialog");
  preset_ = new QComboBox;
  for (const ChartExportPreset& p : chartExportPresets()) preset_->addItem(p.label, p.id);
  preset_->addItem(tr("Custom size"), QString("custom"));
  width_ = new QSpinBox;
  height_ = new QSpinBox;
  for (QSpinBox* b : {width_, height_}) {
    b->setRange(320, 8000);
    b->setSuffix(tr(" px"));
  }
  scale_ = new QDoubleSpinBox;
  scale_->setRange(0.5, 4);
  scale_->setSingleStep(0.5);
  scale_->setDecimals(1);
  scale_->setSuffix(tr("×"));
  scale_->setToolTip(tr("PNG pixels per layout pixel (SVGs are vector)"));
  text_ = new QDoubleSpinBox;
  text_->setRange(0, 10);
  text_->setDecimals(2);
  text_->setSingleStep(0.25);
  text_->setSuffix(tr(" % of the height"));
  text_->setSpecialValueText(tr("as on screen"));
  text_->setToolTip(tr("Tick labels and legend: font height as a percentage of the chart's height "
                       "(3.33 % = 1/30, readable from the back of a room on a slide); 0: as on screen"));
  markers_ = new QCheckBox(tr("Live changes as labelled dashed lines"));
  markers_->setChecked(true);
  folder_ = new QLineEdit(QDir(defaultParentFolder()).filePath((name.isEmpty() ? QString("servelab") : name) + "-charts"));
  auto* sizeRow = new QHBoxLayout;
  sizeRow->addWidget(width_);
  sizeRow->addWidget(new QLabel(QStringLiteral("×")));
  sizeRow->addWidget(height_);
  sizeRow->addWidget(new QLabel(tr("at")));
  sizeRow->addWidget(scale_);
  sizeRow->addStretch();
  QWidget* folderBox = folderField(folder_, tr("Export charts to folder"));
  auto* form = new QFormLayout(this);
  form->addRow(tr("&Preset"), preset_);
  form->addRow(tr("Size"), sizeRow);
  form->addRow(tr("&Text"), text_);
  form->addRow(tr("Markers"), markers_);
  form->addRow(tr("&Folder"), folderBox);
  if (auto* l = qobject_cast<QLabel*>(form->labelForField(folderBox))) l->setBuddy(folder_);  // Alt+F: the path
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(preset_, &QComboBox::currentIndexChanged, this, [this](int i) { showPreset(i); });
  auto toCustom = [this] {
    if (!filling_) preset_->setCurrentIndex(customIndex());
  };
  connect(width_, &QSpinBox::valueChanged, this, toCustom);
  connect(height_, &QSpinBox::valueChanged, this, toCustom);
  connect(scale_, &QDoubleSpinBox::valueChanged, this, toCustom);
  connect(text_, &QDoubleSpinBox::valueChanged, this, toCustom);
  showPreset(0);
}

int ChartExportDialog::customIndex() const { return preset_->count() - 1; }

void ChartExportDialog::showPreset(int index) {
  if (index < 0 || index >= static_cast<int>(chartExportPresets().size())) return;  // custom: keep the fields
  const ChartExportOptions& o = chartExportPresets()[static_cast<std::size_t>(index)].options;
  filling_ = true;
  width_->setValue(o.size.width());
  height_->setValue(o.size.height());
  scale_->setValue(o.scale);
  text_->setValue(o.textFraction * 100.0);
  filling_ = false;
}

ChartExportOptions ChartExportDialog::options() const {
  const int i = preset_->currentIndex();
  ChartExportOptions o;
  if (i >= 0 && i < static_cast<int>(chartExportPresets().size())) o = chartExportPresets()[static_cast<std::size_t>(i)].options;
  else {
    o.size = QSize(width_->value(), height_->value());
    o.scale = scale_->value();
    o.textFraction = text_->value() / 100.0;
  }
  o.markers = markers_->isChecked();
  return o;
}

QString ChartExportDialog::folder() const { return folder_->text().trimmed(); }

}  // namespace sl::ui
