#pragma once
// Help ▸ User guide, Glossary, Keyboard shortcuts (issue 50): each a
// non-modal window with a read-only text browser, usable offline. The user
// guide is docs/user-guide.md from the source tree or an installed share/
// folder (pictures included), else the copy built into the app (text only).
#include <QList>
#include <QString>

class QAction;
class QWidget;

namespace sl::ui {

/// Where the user guide is read from: a file path, or ":/servelab/docs/…"
/// (the built-in copy) when no docs folder is found.
QString userGuidePath();
/// The glossary's text (HTML): TTFT, TTFAT, TPOT, p50/p99, the binned tail
/// TTFT, reasoning / answering, KV cache, preemption, migration, QoE, ...
QString glossaryHtml();
/// A table (HTML) of the actions' texts and shortcuts, in the given order;
/// actions without a shortcut are left out.
QString shortcutsHtml(const QList<QAction*>& actions);

/// Opens (or raises) the help window named `objectName` under `parent`.
void showUserGuide(QWidget* parent);
void showGlossary(QWidget* parent);
void showShortcuts(QWidget* parent, const QList<QAction*>& actions);

}  // namespace sl::ui
