#pragma once
// File ▸ Export ▸ Charts…: a size preset (screen, slides, paper) or a custom
// size, the text size (a fraction of the canvas height, or as on screen),
// whether live-change markers are drawn, and the folder (last used, else the
// user's Pictures or Documents folder; never the samples).
#include <QDialog>
#include <QString>

#include "ui/charts/chart_panel.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace sl::ui {

class ChartExportDialog : public QDialog {
  Q_OBJECT
public:
  /// `name`: the scenario's base name, for the default folder's last part.
  explicit ChartExportDialog(const QString& name, QWidget* parent = nullptr);

  /// What the form says (a preset fills the custom fields; editing them
  /// switches to "Custom size").
  ChartExportOptions options() const;
  QString folder() const;

  /// Where exports go by default: the folder last exported to (its parent,
  /// QSettings "exportDir"), else Pictures, else Documents, else home.
  static QString defaultParentFolder();
  /// Remember `dir` for the next export.
  static void rememberFolder(const QString& dir);
  /// `edit` with a Browse… button after it (a folder picker titled `title`),
  /// as one form field focusing `edit`: the export dialogs' folder row.
  static QWidget* folderField(QLineEdit* edit, const QString& title);

  // The form, for tests.
  QComboBox* presetBox() const { return preset_; }
  QSpinBox* widthBox() const { return width_; }
  QSpinBox* heightBox() const { return height_; }
  QDoubleSpinBox* scaleBox() const { return scale_; }
  QDoubleSpinBox* textBox() const { return text_; }
  QCheckBox* markersBox() const { return markers_; }
  QLineEdit* folderEdit() const { return folder_; }
  /// The index of "Custom size" in presetBox().
  int customIndex() const;

private:
  void showPreset(int index);
  QComboBox* preset_;
  QSpinBox *width_, *height_;
  QDoubleSpinBox *scale_, *text_;
  QCheckBox* markers_;
  QLineEdit* folder_;
  bool filling_ = false;
};

}  // namespace sl::ui
