#pragma once
// Helpers shared by the QtTest GUI tests.
#include <QApplication>
#include <QElapsedTimer>
#include <QTest>

#include "ui/charts/live_chart.h"

#include "ui/controller/sim_controller.h"

namespace sl::ui::test {

/// Wait (running the event loop) until the latest frame satisfies `pred`.
/// Pulls like the GUI does (takeFrame), so the worker keeps publishing.
template <class P> bool waitFrame(SimController& c, P pred, int timeoutMs = 20000) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < timeoutMs) {
    if (pred(*c.takeFrame())) return true;
    QTest::qWait(5);
  }
  return pred(*c.latest());
}

/// Wait until `root` has settled after a resize, font or layout change: no
/// layout request posted and no chart waiting for its resize relayout, twice
/// in a row (a relayout may post new layout requests). Replaces fixed sleeps,
/// which fail under load.
inline bool waitSettled(QWidget& root, int timeoutMs = 10000) {
  QElapsedTimer t;
  t.start();
  int quiet = 0;
  while (t.elapsed() < timeoutMs) {
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    QCoreApplication::processEvents();
    bool pending = false;
    if (const auto* self = qobject_cast<const LiveChart*>(&root)) pending = self->relayoutPending();
    for (const LiveChart* c : root.findChildren<LiveChart*>()) pending = pending || c->relayoutPending();
    quiet = pending ? 0 : quiet + 1;
    if (quiet >= 2) return true;
    QTest::qWait(pending ? 10 : 1);
  }
  return false;
}

}  // namespace sl::ui::test
