#include "ui/shell/help_window.h"
#include "ui/common/ui_info.h"

#include <QAction>
#include <QCoreApplication>
#include <QDialog>
#include <QKeySequence>
#include <QRegularExpression>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

namespace sl::ui {

namespace {

QString tr(const char* s) { return QCoreApplication::translate("HelpWindow", s); }

// One window per kind: opened again, it is raised, not duplicated.
QTextBrowser* helpWindow(QWidget* parent, const QString& name, const QString& title, QSize size) {
  if (auto* open = parent->findChild<QDialog*>(name)) {
    open->show();
    open->raise();
    open->activateWindow();
    return open->findChild<QTextBrowser*>();
  }
  auto* d = new QDialog(parent);
  d->setObjectName(name);
  d->setWindowTitle(title);
  d->setAttribute(Qt::WA_DeleteOnClose);
  auto* text = new QTextBrowser(d);
  text->setOpenLinks(true);
  text->setOpenExternalLinks(false);  // links to other docs open here, offline
  auto* v = new QVBoxLayout(d);
  v->setContentsMargins(0, 0, 0, 0);
  v->addWidget(text);
  // Within the parent's screen (a 1024×768 projector included).
  const QSize room = parent->window()->size();
  d->resize(std::min(size.width(), std::max(480, room.width() - 40)), std::min(size.height(), std::max(360, room.height() - 40)));
  d->show();
  return text;
}

}  // namespace

QString userGuidePath() {
#ifdef SERVELAB_DOCS_DIR
  const QString dir = findDataDir(QStringLiteral(SERVELAB_DOCS_DIR), "docs", "user-guide.md");
#else
  const QString dir = findDataDir({}, "docs", "user-guide.md");
#endif
  return dir.isEmpty() ? QStringLiteral(":/servelab/docs/user-guide.md") : dir + "/user-guide.md";
}

QString glossaryHtml() {
  struct Term {
    const char* term;
    const char* meaning;
  };
  static const Term terms[] = {
      {"TTFT", "Time to first token: from a request's arrival to its <b>first answer token</b>, the first token the "
               "user sees. A reasoning model's hidden reasoning tokens come before it, so TTFT includes the whole "
               "reasoning phase."},
      {"TTFAT", "Time to the first answer token after reasoning ends (from <tt>&lt;/think&gt;</tt> to the first "
                "answer token): the wait at the switch from reasoning to answering."},
      {"TPOT", "Time per output token: the average gap between answer tokens after the first one (how fast the "
               "answer streams)."},
      {"E2E", "End-to-end latency: from arrival to the last token."},
      {"p50, p90, p99", "Percentiles: p50 is the median (half the requests do better), p99 the value 99 % of "
                        "requests stay under (the slowest 1 % do worse). Tables use all finished requests; the "
                        "rolling charts the last 30 simulated seconds."},
      {"Binned tail TTFT", "The PASCAL paper's tail: requests grouped by reasoning length (bins of 256 tokens), "
                           "each bin's p99 TTFT (p95, p90 or the max in small bins), averaged over the bins. Long "
                           "reasoners, slow under any policy, dominate the overall p99 but not this."},
      {"Reasoning", "The first phase of a reasoning request: tokens the model thinks with, not shown to the user."},
      {"Answering", "The second phase: the visible answer tokens, streamed to the user; its pace decides the QoE."},
      {"Prefill", "Processing the prompt (input tokens) before the first output token."},
      {"Decode", "Producing output tokens, one per request per iteration."},
      {"KV cache", "GPU memory holding each running request's attention keys and values; it grows with every "
                   "token. When it is full, requests wait or are preempted."},
      {"Preemption", "Taking a running request off the GPU to free KV memory: its cache is swapped to CPU memory "
                     "or dropped and recomputed later."},
      {"Migration", "Moving a request and its KV cache to another instance (PASCAL, Llumnix)."},
      {"QoE", "Quality of experience of the answer stream: the share of answer tokens delivered at least as fast as "
              "a reader needs them (TTFAT and TPOT targets). Below the SLO threshold (0.95) the request is a QoE "
              "violation."},
      {"SLO", "Service-level objective: the latency targets a request should meet (TTFT, TPOT, QoE threshold)."},
      {"Instance", "One copy of the model on one GPU or a group of GPUs (tensor parallel, TP)."},
      {"Throughput", "Output tokens produced per simulated second, all instances together."},
      {"Rate", "Requests arriving per simulated second (open loop). A closed loop has a number of clients instead, "
               "each sending its next request when the last one is answered."},
      {"Simulated time", "The clock of the simulated cluster (t on the toolbar); the speed slider sets how many "
                         "simulated seconds pass per wall second."},
  };
  QString html = "<h2>" + tr("Glossary") + "</h2><table cellpadding=4 cellspacing=0>";
  for (const Term& t : terms)
    html += QString("<tr><td valign=top><b>%1</b></td><td>%2</td></tr>").arg(tr(t.term), tr(t.meaning));
  return html + "</table>";
}

QString shortcutsHtml(const QList<QAction*>& actions) {
  QString html = "<h2>" + tr("Keyboard shortcuts") + "</h2><table cellpadding=4 cellspacing=0>";
  for (const QAction* a : actions) {
    if (!a || a->shortcuts().isEmpty()) continue;
    QStringList keys;
    for (const QKeySequence& k : a->shortcuts()) keys << k.toString(QKeySequence::NativeText).toHtmlEscaped();
    QString text = a->text();
    text.remove(QRegularExpression("&(?!&)"));
    text.remove(QString::fromUtf8("…"));
    html += QString("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(keys.join(tr(" or ")), text.toHtmlEscaped());
  }
  html += "</table><h3>" + tr("Charts") + "</h3><table cellpadding=4 cellspacing=0>" +
          "<tr><td><b>" + tr("Mouse wheel") + "</b></td><td>" + tr("zoom the time axis around the cursor") +
          "</td></tr><tr><td><b>" + tr("Drag") + "</b></td><td>" + tr("pan") + "</td></tr><tr><td><b>" +
          tr("Double-click") + "</b></td><td>" + tr("reset the zoom") + "</td></tr></table>";
  return html;
}

void showUserGuide(QWidget* parent) {
  QTextBrowser* text = helpWindow(parent, "UserGuideWindow", tr("ServeLab user guide"), QSize(900, 900));
  if (!text->source().isEmpty()) return;
  const QString path = userGuidePath();
  text->setSource(path.startsWith(":") ? QUrl("qrc" + path) : QUrl::fromLocalFile(path), QTextDocument::MarkdownResource);
}

void showGlossary(QWidget* parent) {
  helpWindow(parent, "GlossaryWindow", tr("ServeLab glossary"), QSize(720, 640))->setHtml(glossaryHtml());
}

void showShortcuts(QWidget* parent, const QList<QAction*>& actions) {
  helpWindow(parent, "ShortcutsWindow", tr("ServeLab keyboard shortcuts"), QSize(520, 640))->setHtml(shortcutsHtml(actions));
}

}  // namespace sl::ui
