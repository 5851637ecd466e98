#pragma once
// Helpers shared by the QtTest GUI tests.
#include <QElapsedTimer>
#include <QTest>

#include "sim_controller.h"

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

}  // namespace sl::ui::test
