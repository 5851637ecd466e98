#include "ui/common/ui_info.h"

#include <QCoreApplication>
#include <QDir>
#include <QtGlobal>

#include "run/execute.h"

namespace sl::ui {

QString versionString() {
  return QStringLiteral("ServeLab %1 (Qt %2)").arg(QString::fromLatin1(kServeLabVersion), QString::fromLatin1(qVersion()));
}

QString findDataDir(const QString& compiledIn, const QString& name, const QString& file) {
  QStringList candidates;
  if (!compiledIn.isEmpty()) candidates << compiledIn;
  const QString app = QCoreApplication::applicationDirPath();
  candidates << app + "/../share/servelab/" + name << app + "/" + name << app + "/../" + name;
  for (const QString& c : candidates)
    if (QDir(c).exists() && !QDir(c).entryList({file}, QDir::Files).isEmpty()) return QDir(c).absolutePath();
  return {};
}

}  // namespace sl::ui
