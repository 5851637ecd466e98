// Request handles (engine/request.h RequestHandle): slot + generation, so a
// policy that holds a request across time (a delayed message, a timer, a
// queued decision) finds out when it has finished and its pool slot has been
// reused, instead of silently acting on another request.
#include <gtest/gtest.h>

#include <map>

#include "engine_test_util.h"

namespace sl::enginetest {
namespace {

TEST(Handles, ResolveWhileLiveAndGoStaleAfterFinishEvenWhenTheSlotIsReused) {
  const CostModel& cost = llama8b();
  // Sequential short requests on one instance: each finishes before the
  // second next one arrives, so pool slots are reused.
  std::vector<RequestSpec> reqs;
  for (int i = 0; i < 12; ++i) reqs.push_back(spec(i, i * 200 * kMs, 16, 0, 2));
  Harness h(cost, smallConfig(cost, 1, 64), reqs);
  std::map<std::int64_t, RequestHandle> handles;
  std::int64_t staleSeen = 0, reusedSlots = 0;
  h.global->onRoute = [&](const Request& r) {
    Simulator& s = *h.global->sim();
    const RequestHandle mine = s.handleOf(r);
    EXPECT_EQ(s.resolve(mine), &r);
    for (const auto& [id, old] : handles) {
      const Request* q = s.resolve(old);
      // A handle either still names its own request or is detected stale.
      if (q) EXPECT_EQ(q->id, id);
      else ++staleSeen;
      if (old.slot == mine.slot) {
        ++reusedSlots;
        EXPECT_NE(old.generation, mine.generation);
        EXPECT_EQ(q, nullptr) << "handle of request " << id << " resolves to request " << r.id;
      }
    }
    handles[r.id] = mine;
    return 0;
  };
  h.run();
  EXPECT_GT(reusedSlots, 0) << "the test never reused a slot";
  EXPECT_GT(staleSeen, 0);
  for (const auto& [id, hd] : handles) EXPECT_EQ(h.sim->resolve(hd), nullptr) << id;
  EXPECT_EQ(h.sim->resolve(RequestHandle{}), nullptr);
  EXPECT_EQ(h.sim->resolve(RequestHandle{1 << 30, 1}), nullptr);
  EXPECT_THROW(h.sim->request(handles.begin()->second), std::logic_error);
}

// A delayed message that captured a handle finds the request gone.
TEST(Handles, DelayedMessageSeesTheRequestFinished) {
  const CostModel& cost = llama8b();
  // Request 2 keeps the run going until the messages of 0 and 1 have come
  // (a run ends when its last request finishes: its own late message is dropped).
  Harness h(cost, smallConfig(cost, 1, 64),
            {spec(0, 0, 16, 0, 2), spec(1, 400 * kMs, 16, 0, 2), spec(2, 1000 * kMs, 16, 0, 2)});
  int live = 0, stale = 0;
  h.global->onRoute = [&](const Request& r) {
    Simulator& s = *h.global->sim();
    const RequestHandle hd = s.handleOf(r);
    s.sendMessage(1 * kMs, [&s, hd, &live] { live += s.resolve(hd) != nullptr; });
    s.sendMessage(300 * kMs, [&s, hd, &stale] { stale += s.resolve(hd) == nullptr; });
    return 0;
  };
  h.run();
  EXPECT_EQ(live, 3);
  EXPECT_EQ(stale, 2);
}

}  // namespace
}  // namespace sl::enginetest
