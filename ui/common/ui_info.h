#pragma once
// Version string of the GUI (about box, logs).
#include <QString>

namespace sl::ui {

/// "ServeLab <version> (Qt <runtime version>)", for the about box and logs.
QString versionString();

}  // namespace sl::ui
