#include "ui/shell/results_export_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include "ui/charts/chart_export_dialog.h"
#include "util/error.h"

namespace sl::ui {

namespace {
const char* kOutputsKey = "exportOutputs";
}

OutputSet ResultsExportDialog::lastOutputs() {
  const QString saved = QSettings().value(kOutputsKey).toString();
  if (!saved.isEmpty()) {
    try {
      return parseOutputSet(saved.toStdString());
    } catch (const InputError&) {  // (a settings file edited by hand: the default)
    }
  }
  OutputSet o;
  o.trace = false;
  return o;
}

void ResultsExportDialog::rememberOutputs(const OutputSet& o) {
  if (o.any()) QSettings().setValue(kOutputsKey, QString::fromStdString(outputSetString(o)));
}

ResultsExportDialog::ResultsExportDialog(const QString& name, QWidget* parent) : QDialog(parent), name_(name) {
  setWindowTitle(tr("Export run results"));
  setObjectName("ResultsExportDialog");
  folder_ = new QLineEdit(QDir(ChartExportDialog::defaultParentFolder())
                              .filePath((name.isEmpty() ? QString("servelab") : name) + "-results"));
  QWidget* folderBox = ChartExportDialog::folderField(folder_, tr("Export run results to folder"));

  const OutputSet last = lastOutputs();
  const struct {
    QString label, tip;
    bool on;
  } groups[4] = {
      {tr("&Summary: summary.json, and tail_ttft.csv, decisions.csv where the run has them"),
       tr("The run's metrics (TTFT, TPOT, QoE, SLO attainment, throughput), its seed and fingerprint"), last.summary},
      {tr("&Requests: requests.csv, one row per request"),
       tr("Every request arrived so far: its lengths, times and metrics (in-flight rows for the unfinished)"),
       last.requests},
      {tr("T&ime series: timeseries.csv, and policy_series.csv where the policy publishes"),
       tr("Per-instance queues, batch sizes and memory at every probe"), last.timeseries},
      {tr("T&race: trace.json (Chrome / Perfetto)"),
       tr("Every iteration and request as trace events; open it in Perfetto or chrome://tracing"), last.trace},
  };
  auto* files = new QVBoxLayout;
  for (int i = 0; i < 4; ++i) {
    groups_[i] = new QCheckBox(groups[i].label);
    groups_[i]->setToolTip(groups[i].tip);
    groups_[i]->setChecked(groups[i].on);
    files->addWidget(groups_[i]);
    connect(groups_[i], &QCheckBox::toggled, this, [this] { refresh(); });
  }
  cli_ = new QLabel;
  cli_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cli_->setWordWrap(true);
  cli_->setObjectName("cliEquivalent");
  cli_->setToolTip(tr("The same files for a finished run; for a run with live changes, run the file "
                      "File ▸ Save run as… writes; mid-run, the files hold the run up to the moment shown"));

  auto* form = new QFormLayout(this);
  form->addRow(tr("&Folder"), folderBox);
  if (auto* l = qobject_cast<QLabel*>(form->labelForField(folderBox))) l->setBuddy(folder_);
  form->addRow(tr("Files"), files);
  form->addRow(tr("Same as"), cli_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  export_ = buttons->button(QDialogButtonBox::Ok);
  export_->setText(tr("Export"));
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(folder_, &QLineEdit::textChanged, this, [this] { refresh(); });
  refresh();
}

QString ResultsExportDialog::folder() const { return folder_->text().trimmed(); }

OutputSet ResultsExportDialog::outputs() const {
  OutputSet o;
  o.summary = groups_[0]->isChecked();
  o.requests = groups_[1]->isChecked();
  o.timeseries = groups_[2]->isChecked();
  o.trace = groups_[3]->isChecked();
  return o;
}

QString ResultsExportDialog::commandLine() const {
  const OutputSet o = outputs();
  QString cmd = QString("servelab-cli run %1 --out %2")
                    .arg(name_.isEmpty() ? QString("SCENARIO") : name_ + ".json",
                         folder().isEmpty() ? QString("FOLDER") : folder());
  if (!(o == OutputSet{})) cmd += " --outputs " + QString::fromStdString(outputSetString(o));
  return cmd;
}

void ResultsExportDialog::refresh() {
  const bool ok = outputs().any() && !folder().isEmpty();
  export_->setEnabled(ok);
  cli_->setText(outputs().any() ? commandLine() : tr("(choose at least one group of files)"));
}

}  // namespace sl::ui
