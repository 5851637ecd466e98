#pragma once
// Placeholder of the Qt GUI library: the widgets, cluster view, charts and
// the worker-thread controller arrive with the desktop-app issue.
#include <QString>

namespace sl::ui {

/// "ServeLab <version> (Qt <runtime version>)", for the about box and logs.
QString versionString();

}  // namespace sl::ui
