// EventQueue ordering and the max-min fair Network of KV-transfer flows.
#include <gtest/gtest.h>

#include <vector>

#include "engine/event_queue.h"
#include "engine/network.h"

namespace sl {
namespace {

TEST(EventQueue, OrdersByTimeThenInsertion) {
  EventQueue q;
  q.push(50, EventKind::Probe, 1);
  q.push(10, EventKind::Arrival, 2);
  q.push(50, EventKind::Arrival, 3);
  q.push(10, EventKind::IterationEnd, 4);
  q.push(0, EventKind::Message, 5);
  q.push(50, EventKind::MonitorTick, 6);
  q.push(10, EventKind::InstanceWake, 7);
  ASSERT_EQ(q.size(), 7u);
  EXPECT_EQ(q.top().a, 5);
  std::vector<std::int64_t> order;
  std::vector<SimTime> times;
  while (!q.empty()) {
    const Event e = q.pop();
    order.push_back(e.a);
    times.push_back(e.time);
  }
  EXPECT_EQ(order, (std::vector<std::int64_t>{5, 2, 4, 7, 1, 3, 6}));
  EXPECT_EQ(times, (std::vector<SimTime>{0, 10, 10, 10, 50, 50, 50}));
}

TEST(EventQueue, ManyTiesKeepInsertionOrderAcrossInterleavedPops) {
  EventQueue q;
  for (int i = 0; i < 100; ++i) q.push(7, EventKind::Message, i);
  std::vector<std::int64_t> got;
  for (int i = 0; i < 50; ++i) got.push_back(q.pop().a);
  // Later insertions at the same time go after the earlier ones.
  for (int i = 100; i < 150; ++i) q.push(7, EventKind::Message, i);
  q.push(6, EventKind::Message, -1);
  EXPECT_EQ(q.pop().a, -1);
  while (!q.empty()) got.push_back(q.pop().a);
  ASSERT_EQ(got.size(), 150u);
  for (int i = 0; i < 150; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i);
}

constexpr double kGB = 1e9;

TEST(Network, SingleFlowFinishesAtBytesOverBandwidth) {
  Network n;
  const int a = n.addResource(kGB), b = n.addResource(2 * kGB);
  const auto f = n.start(1000, 0.5e9, a, b, 42);
  EXPECT_EQ(n.flows().size(), 1u);
  EXPECT_DOUBLE_EQ(n.flows()[0].rate, kGB);  // the bottleneck resource
  EXPECT_EQ(n.nextFinish(), 1000 + 500'000'000);
  EXPECT_NEAR(n.progress(f, 1000 + 250'000'000), 0.5, 1e-12);
  std::vector<std::int64_t> tags;
  n.collectFinished(1000 + 499'999'999, tags);
  EXPECT_TRUE(tags.empty());
  n.collectFinished(1000 + 500'000'000, tags);
  EXPECT_EQ(tags, std::vector<std::int64_t>{42});
  EXPECT_TRUE(n.flows().empty());
  EXPECT_EQ(n.nextFinish(), kTimeNever);
}

TEST(Network, TwoFlowsOnOneResourceShareItEqually) {
  Network n;
  const int a = n.addResource(kGB), b = n.addResource(kGB), c = n.addResource(kGB);
  n.start(0, 1e9, a, b, 1);
  n.start(0, 1e9, a, c, 2);  // shares egress `a`
  ASSERT_EQ(n.flows().size(), 2u);
  EXPECT_DOUBLE_EQ(n.flows()[0].rate, 0.5e9);
  EXPECT_DOUBLE_EQ(n.flows()[1].rate, 0.5e9);
  EXPECT_EQ(n.flows()[0].finishAt, 2'000'000'000);
  EXPECT_EQ(n.flows()[1].finishAt, 2'000'000'000);
  std::vector<std::int64_t> tags;
  n.collectFinished(2'000'000'000, tags);
  EXPECT_EQ(tags, (std::vector<std::int64_t>{1, 2}));
}

TEST(Network, MaxMinFairnessAcrossResourcePairs) {
  // f1: A->B, f2: A->C where C is slow (2 GB/s): f2 is capped at 2 and f1
  // takes the rest of A (8), not A/2.
  Network n;
  const int A = n.addResource(10 * kGB), B = n.addResource(10 * kGB), C = n.addResource(2 * kGB);
  n.start(0, 8e9, A, B, 1);
  n.start(0, 4e9, A, C, 2);
  ASSERT_EQ(n.flows().size(), 2u);
  EXPECT_DOUBLE_EQ(n.flows()[0].rate, 8 * kGB);
  EXPECT_DOUBLE_EQ(n.flows()[1].rate, 2 * kGB);
  EXPECT_EQ(n.flows()[0].finishAt, 1'000'000'000);
  EXPECT_EQ(n.flows()[1].finishAt, 2'000'000'000);
  // Third flow on an unrelated pair gets its full bandwidth.
  const int D = n.addResource(3 * kGB), E = n.addResource(3 * kGB);
  n.start(0, 3e9, D, E, 3);
  EXPECT_DOUBLE_EQ(n.flows()[2].rate, 3 * kGB);
  EXPECT_DOUBLE_EQ(n.flows()[0].rate, 8 * kGB);
  // When f1 ends, f2 stays capped by C (2 GB/s) although A is free.
  std::vector<std::int64_t> tags;
  n.collectFinished(1'000'000'000, tags);
  EXPECT_EQ(tags, (std::vector<std::int64_t>{1, 3}));
  ASSERT_EQ(n.flows().size(), 1u);
  EXPECT_DOUBLE_EQ(n.flows()[0].rate, 2 * kGB);
  EXPECT_EQ(n.nextFinish(), 2'000'000'000);
}

TEST(Network, FlowAddedMidwayRetimesTheOthers) {
  Network n;
  const int a = n.addResource(kGB), b = n.addResource(kGB);
  n.start(0, 1e9, a, b, 1);
  EXPECT_EQ(n.nextFinish(), 1'000'000'000);
  const auto v0 = n.version();
  // At 0.5 s flow 1 has 0.5 GB left; from now on it moves at 0.5 GB/s.
  n.start(500'000'000, 1e9, a, b, 2);
  EXPECT_GT(n.version(), v0);
  EXPECT_EQ(n.flows()[0].finishAt, 1'500'000'000);
  EXPECT_EQ(n.flows()[1].finishAt, 2'500'000'000);
  std::vector<std::int64_t> tags;
  n.collectFinished(1'500'000'000, tags);
  EXPECT_EQ(tags, std::vector<std::int64_t>{1});
  // Flow 2 moved 0.5 GB at half rate; the remaining 0.5 GB go at full rate.
  EXPECT_EQ(n.nextFinish(), 2'000'000'000);
  tags.clear();
  n.collectFinished(2'000'000'000, tags);
  EXPECT_EQ(tags, std::vector<std::int64_t>{2});
}

TEST(Network, CancelRetimesTheOthers) {
  Network n;
  const int a = n.addResource(kGB), b = n.addResource(kGB);
  const auto f1 = n.start(0, 1e9, a, b, 1);
  n.start(0, 1e9, a, b, 2);
  EXPECT_EQ(n.nextFinish(), 2'000'000'000);
  EXPECT_NEAR(n.progress(f1, 1'000'000'000), 0.5, 1e-12);
  n.cancel(1'000'000'000, f1);
  ASSERT_EQ(n.flows().size(), 1u);
  EXPECT_EQ(n.progress(f1, 1'000'000'000), -1.0);
  // 0.5 GB left at full rate.
  EXPECT_EQ(n.nextFinish(), 1'500'000'000);
}

TEST(Network, ZeroByteFlowFinishesImmediately) {
  Network n;
  const int a = n.addResource(kGB), b = n.addResource(kGB);
  n.start(77, 0, a, b, 9);
  EXPECT_EQ(n.nextFinish(), 77);
  std::vector<std::int64_t> tags;
  n.collectFinished(77, tags);
  EXPECT_EQ(tags, std::vector<std::int64_t>{9});
}

}  // namespace
}  // namespace sl
