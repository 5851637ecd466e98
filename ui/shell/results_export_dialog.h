#pragma once
// File ▸ Export ▸ Run results…: which files to write and where, as
// `servelab-cli run --out FOLDER --outputs LIST` chooses them (issue 27):
// summary (summary.json, tail_ttft.csv, decisions.csv), requests
// (requests.csv), time series (timeseries.csv, policy_series.csv) and trace
// (trace.json). The folder defaults to a sibling of the last export's, named
// after the scenario; the groups to the last ones chosen (first time: all
// but the trace, which has File ▸ Export ▸ Trace… of its own).
#include <QDialog>
#include <QString>

#include "run/execute.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace sl::ui {

class ResultsExportDialog : public QDialog {
  Q_OBJECT
public:
  /// `name`: the scenario's base name, for the default folder's last part.
  explicit ResultsExportDialog(const QString& name, QWidget* parent = nullptr);

  QString folder() const;
  OutputSet outputs() const;
  /// Remember the groups for the next export (QSettings "exportOutputs").
  static void rememberOutputs(const OutputSet& o);
  /// The groups last chosen (all but the trace the first time).
  static OutputSet lastOutputs();

  // The form, for tests.
  QLineEdit* folderEdit() const { return folder_; }
  QCheckBox* groupBox(int i) const { return groups_[i]; }  // summary, requests, timeseries, trace
  QPushButton* exportButton() const { return export_; }
  /// "servelab-cli run SCENARIO --out FOLDER --outputs LIST", as the form stands.
  QString commandLine() const;

private:
  void refresh();
  QLineEdit* folder_;
  QCheckBox* groups_[4];
  QLabel* cli_;
  QPushButton* export_;
  QString name_;
};

}  // namespace sl::ui
