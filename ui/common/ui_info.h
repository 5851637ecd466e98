#pragma once
// Version string of the GUI (about box, logs); where its data folders are.
#include <QString>

namespace sl::ui {

/// "ServeLab <version> (Qt <runtime version>)", for the about box and logs.
QString versionString();

/// The first folder holding `file` (e.g. "user-guide.md", or "*.json"):
/// `compiledIn` (the source tree's), then `../share/servelab/<name>`,
/// `<name>` and `../<name>` next to the executable; "" when none has it.
QString findDataDir(const QString& compiledIn, const QString& name, const QString& file);

}  // namespace sl::ui
