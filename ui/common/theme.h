#pragma once
// One palette for the whole app, so chips, legends and charts agree.
#include <QColor>

namespace sl::ui::theme {

inline const QColor kPrefill{0x3B, 0x82, 0xD6};    // blue
inline const QColor kReasoning{0x8B, 0x5C, 0xD6};  // violet
inline const QColor kAnswering{0x1F, 0xA8, 0x72};  // green
inline const QColor kSwapped{0xE8, 0x8A, 0x1A};    // orange outline: preempted, KV on CPU
inline const QColor kMigrating{0xD6, 0x33, 0x84};  // magenta outline: KV in flight
inline const QColor kAlert{0xD9, 0x48, 0x3B};
inline const QColor kSeriesA{0x2F, 0x6F, 0xB5};
inline const QColor kSeriesB{0xD9, 0x48, 0x3B};
inline const QColor kMarker{0x6B, 0x72, 0x80};
inline const QColor kCard{0xFF, 0xFF, 0xFF};
inline const QColor kCardBorder{0xD5, 0xDA, 0xE1};
inline const QColor kBackground{0xF3, 0xF5, 0xF8};
inline const QColor kText{0x1F, 0x29, 0x37};
inline const QColor kMuted{0x6B, 0x72, 0x80};
inline const QColor kGpuBar{0x2F, 0x6F, 0xB5};
inline const QColor kReservedBar{0x9D, 0xBF, 0xE6};
inline const QColor kCpuBar{0xE8, 0x8A, 0x1A};
inline const QColor kTrack{0xE8, 0xEC, 0xF1};
inline const QColor kPoolBlock{0xE4, 0xE8, 0xEE};  // behind a pool's group of cards (mixed pools)
inline const QColor kCachedBar{0x14, 0xB8, 0xA6};  // teal band: blocks held only as prefix cache
inline const QColor kSynthetic{0x37, 0x41, 0x51};  // slate diamond: work a policy injected (a rank prompt)

inline QColor phaseColor(int phase) {
  switch (phase) {
    case 0: return kPrefill;
    case 1: return kReasoning;
    default: return kAnswering;
  }
}

/// Distinct colours for per-instance series (cycled).
inline QColor instanceColor(int i) {
  static const QColor c[] = {{0x2F, 0x6F, 0xB5}, {0xD9, 0x48, 0x3B}, {0x1F, 0xA8, 0x72}, {0x8B, 0x5C, 0xD6},
                             {0xE8, 0x8A, 0x1A}, {0x14, 0x9E, 0xB0}, {0xC2, 0x41, 0x8E}, {0x6B, 0x8E, 0x23}};
  return c[i % 8].darker(100 + 25 * ((i / 8) % 3));
}

}  // namespace sl::ui::theme
