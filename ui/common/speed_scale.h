#pragma once
// The speed slider's log scale, shared by the main window, compare mode and
// lecture mode: positions 0..kSpeedMax-1 map to 0.1× .. ~10^4× (15 steps a
// decade); kSpeedMax means "as fast as possible" (speed 0).
#include <QObject>
#include <QString>

#include <algorithm>
#include <cmath>

namespace sl::ui {

inline constexpr int kSpeedMax = 60;

inline double sliderToSpeed(int v) { return v >= kSpeedMax ? 0.0 : 0.1 * std::pow(10.0, v / 15.0); }

inline int speedToSlider(double s) {
  if (s <= 0) return kSpeedMax;
  return std::clamp(static_cast<int>(std::lround(15.0 * std::log10(s / 0.1))), 0, kSpeedMax - 1);
}

inline QString speedText(double s) {
  if (s <= 0) return QObject::tr("max");
  return QString::number(s, 'g', s < 1 ? 1 : 3) + QString::fromUtf8("×");
}

}  // namespace sl::ui
