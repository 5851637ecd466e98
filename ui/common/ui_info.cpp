#include "ui/common/ui_info.h"

#include <QtGlobal>

#include "run/execute.h"

namespace sl::ui {

QString versionString() {
  return QStringLiteral("ServeLab %1 (Qt %2)").arg(QString::fromLatin1(kServeLabVersion), QString::fromLatin1(qVersion()));
}

}  // namespace sl::ui
