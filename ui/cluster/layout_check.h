#pragma once
// Layout checks of the cluster view against a text that names what to
// watch (a guided-tour step): shared by tests/ui/test_tour_layout.cpp
// (offscreen) and the app's hidden --check-tours flag, which walks every
// tour in the real window under a window manager (tests/ui/xvfb_tours.sh).
// Each check reads what the view painted last; none knows a policy or a
// tour.
#include <QString>
#include <QStringList>

#include <vector>

#include "engine/snapshot.h"

namespace sl::ui {

class ClusterView;

namespace layoutcheck {

/// Labels of `fields` that `text` uses as words ("KV queue", "interval");
/// labels of one letter ("r", "a") are too short to tell from prose.
QStringList namedFields(const QString& text, const std::vector<PolicyField>& fields);
/// Whether `text` asks to watch (or click) request chips or queues.
bool namesChipsOrQueues(const QString& text);
/// Card `i` as last painted, for a step whose text is `watch`: its badge
/// whole, the flags and fields the step names drawn whole with their value,
/// no painted value elided.
QStringList cardProblems(const ClusterView& view, const InstanceSnapshot& in, int i, const QString& watch);
/// Transfer arrows over a card's text or bars, from the pixels: the view is
/// rendered without and with its arrows; a pixel an arrow changes that was
/// text, a bar or a badge (not the card's white, not a chip, not the ends'
/// dot and ring) is a problem. Leaves the view painted with its arrows.
QStringList arrowProblems(ClusterView& view);
/// Everything above for the view's frame `s` and text `watch` (`where`
/// prefixes each problem): compact cards (no chips, no queues), cards'
/// problems, arrows.
QStringList viewProblems(ClusterView& view, const Snapshot& s, const QString& watch, const QString& where);

}  // namespace layoutcheck
}  // namespace sl::ui
