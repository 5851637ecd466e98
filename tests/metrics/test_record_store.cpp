// RecordStore (metrics/record_store.h): the compact encoding gives every
// field back exactly, the store keeps appending order until sortById(),
// and summarize() over the store equals summarize() over the vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "metrics/record_store.h"
#include "metrics/summary.h"

namespace sl {
namespace {

void expectSame(const RequestRecord& a, const RequestRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.arrival, b.arrival);
  EXPECT_EQ(a.input, b.input);
  EXPECT_EQ(a.reasoning, b.reasoning);
  EXPECT_EQ(a.answer, b.answer);
  EXPECT_EQ(a.predicted, b.predicted);
  EXPECT_EQ(a.generated, b.generated);
  EXPECT_EQ(a.domain, b.domain);
  EXPECT_EQ(a.instance, b.instance);
  EXPECT_EQ(a.preemptions, b.preemptions);
  EXPECT_EQ(a.migrations, b.migrations);
  EXPECT_EQ(a.finished, b.finished);
  EXPECT_EQ(a.first_token, b.first_token);
  EXPECT_EQ(a.reasoning_end, b.reasoning_end);
  EXPECT_EQ(a.first_visible, b.first_visible);
  EXPECT_EQ(a.last_token, b.last_token);
  EXPECT_EQ(a.queueing, b.queueing);
  EXPECT_EQ(a.blocking, b.blocking);
  EXPECT_EQ(a.preempted, b.preempted);
  EXPECT_EQ(a.swapped, b.swapped);
  EXPECT_EQ(a.migrating, b.migrating);
  EXPECT_EQ(a.handoff_wait, b.handoff_wait);
  EXPECT_EQ(a.blk_transfer, b.blk_transfer);
  EXPECT_EQ(a.blk_dest_wait, b.blk_dest_wait);
  EXPECT_EQ(a.blk_displaced, b.blk_displaced);
  EXPECT_EQ(a.blk_preempted, b.blk_preempted);
  EXPECT_EQ(a.blk_dest_queue, b.blk_dest_queue);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.qoe), std::bit_cast<std::uint64_t>(b.qoe));
}

// A record as the engine makes them: finished, token times after arrival.
RequestRecord typical(std::mt19937_64& rng, std::int64_t id) {
  std::uniform_int_distribution<std::int64_t> ms(0, 600'000);
  RequestRecord r;
  r.id = id;
  r.arrival = id * 208'333 + ms(rng);
  r.input = static_cast<std::int32_t>(1 + rng() % 4000);
  r.reasoning = static_cast<std::int32_t>(rng() % 3 == 0 ? rng() % 2000 : 0);
  r.answer = static_cast<std::int32_t>(1 + rng() % 1000);
  r.generated = r.reasoning + r.answer;
  r.domain = static_cast<std::int32_t>(rng() % 8);
  r.instance = static_cast<std::int32_t>(rng() % 512);
  r.finished = true;
  r.first_token = r.arrival + ms(rng) * 1'000'000 + 123;
  if (r.reasoning > 0) r.reasoning_end = r.first_token + ms(rng) * 1000;
  r.first_visible = (r.reasoning > 0 ? r.reasoning_end : r.first_token) + (r.reasoning > 0 ? 20'000'000 : 0);
  r.last_token = r.first_visible + ms(rng) * 10'000;
  r.queueing = r.first_token - r.arrival - static_cast<SimTime>(rng() % 50'000'000);
  if (rng() % 4 == 0) r.qoe = static_cast<double>(rng() % 1000) / 999.0;
  return r;
}

// Any values at all, extremes included.
RequestRecord arbitrary(std::mt19937_64& rng) {
  const std::int64_t i64[] = {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                              -1, 0, 1, -2, 1'000'000'000'000};
  const std::int32_t i32[] = {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(),
                              -1, 0, 1, 7};
  const double dbl[] = {-1.0, 0.0, -0.0, 1.0, 0.5, std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity(), -1.0000000000000002, 1e-300};
  const auto t = [&] { return rng() % 2 ? i64[rng() % std::size(i64)] : static_cast<std::int64_t>(rng()); };
  const auto n = [&] { return rng() % 2 ? i32[rng() % std::size(i32)] : static_cast<std::int32_t>(rng()); };
  RequestRecord r;
  r.id = t();
  r.arrival = t();
  r.input = n();
  r.reasoning = n();
  r.answer = n();
  r.predicted = n();
  r.generated = n();
  r.domain = n();
  r.instance = n();
  r.preemptions = n();
  r.migrations = n();
  r.finished = rng() % 2;
  r.first_token = t();
  r.reasoning_end = t();
  r.first_visible = t();
  r.last_token = t();
  r.queueing = t();
  r.blocking = t();
  r.preempted = t();
  r.swapped = t();
  r.migrating = t();
  r.handoff_wait = t();
  r.blk_transfer = t();
  r.blk_dest_wait = t();
  r.blk_displaced = t();
  r.blk_preempted = t();
  r.blk_dest_queue = t();
  r.qoe = rng() % 2 ? dbl[rng() % std::size(dbl)] : std::bit_cast<double>(rng());
  return r;
}

TEST(RecordStore, EncodingRoundTripsEveryValue) {
  std::mt19937_64 rng(16);
  std::uint8_t buf[RecordStore::kMaxEncoded];
  const RequestRecord defaults;
  ASSERT_LE(encodeRecord(defaults, buf), 2u);
  expectSame(decodeRecord(buf, defaults.id), defaults);
  for (int i = 0; i < 20'000; ++i) {
    const RequestRecord r = i % 2 ? arbitrary(rng) : typical(rng, i);
    const std::size_t n = encodeRecord(r, buf);
    ASSERT_LE(n, RecordStore::kMaxEncoded);
    expectSame(decodeRecord(buf, r.id), r);
    if (::testing::Test::HasFailure()) FAIL() << "record " << i;
  }
}

TEST(RecordStore, TypicalRecordsAreCompact) {
  std::mt19937_64 rng(7);
  std::uint8_t buf[RecordStore::kMaxEncoded];
  std::size_t total = 0;
  constexpr int kN = 10'000;
  for (int i = 0; i < kN; ++i) total += encodeRecord(typical(rng, i), buf);
  EXPECT_LT(total / kN, 40u);  // vs sizeof(RequestRecord) = 144
}

TEST(RecordStore, KeepsOrderAcrossPagesAndSortsById) {
  std::mt19937_64 rng(3);
  std::vector<RequestRecord> v;
  constexpr int kN = 60'000;  // several 1 MiB pages with arbitrary records
  for (int i = 0; i < kN; ++i) {
    RequestRecord r = i % 3 ? typical(rng, i) : arbitrary(rng);
    r.id = static_cast<std::int64_t>((static_cast<std::uint64_t>(i) * 7919u) % kN);  // unique, shuffled
    v.push_back(r);
  }
  RecordStore s;
  EXPECT_TRUE(s.empty());
  for (const RequestRecord& r : v) s.push_back(r);
  ASSERT_EQ(s.size(), v.size());
  EXPECT_GT(s.memoryBytes(), std::size_t{1} << 21);
  for (std::size_t i = 0; i < v.size(); ++i) {
    expectSame(s[i], v[i]);
    ASSERT_EQ(s.idAt(i), v[i].id);
    if (::testing::Test::HasFailure()) FAIL() << "position " << i;
  }
  expectSame(s.front(), v.front());
  expectSame(s.back(), v.back());
  EXPECT_EQ(s.end() - s.begin(), kN);

  s.sortById();
  std::sort(v.begin(), v.end(), [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  const std::vector<RequestRecord> out = s;  // the implicit conversion readers use
  ASSERT_EQ(out.size(), v.size());
  std::size_t i = 0;
  for (const RequestRecord& r : s) {  // iteration decodes each in turn
    expectSame(r, v[i]);
    expectSame(out[i], v[i]);
    if (::testing::Test::HasFailure()) FAIL() << "sorted position " << i;
    ++i;
  }
  EXPECT_EQ(i, v.size());

  s.clear();
  EXPECT_TRUE(s.empty());
  s.push_back(v[5]);
  expectSame(s[0], v[5]);
}

TEST(RecordStore, SummaryMatchesTheVectorBitForBit) {
  std::mt19937_64 rng(11);
  std::vector<RequestRecord> done, open;
  for (int i = 0; i < 5000; ++i) {
    RequestRecord r = typical(rng, i);
    if (i % 97 == 0) {  // still in flight at the end
      r.finished = false;
      r.last_token = kNoTime;
      r.generated = r.answer / 2;
      open.push_back(r);
    } else {
      if (i % 13 == 0) r.blocking = 1'000'000 * (i % 7);
      done.push_back(r);
    }
  }
  RecordStore s;
  for (const RequestRecord& r : done) s.push_back(r);
  std::vector<RequestRecord> all = done;
  all.insert(all.end(), open.begin(), open.end());
  SloSpec slo;
  slo.ttft_s = 200.0;
  slo.tpot_s = 0.5;
  const SimTime end = secondsToNs(2000);
  const Summary a = summarize(all, 5100, end, slo);
  const Summary b = summarize(s, open, 5100, end, slo);
  EXPECT_EQ(summaryToJson(a).dump(), summaryToJson(b).dump());
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.ttft_s.mean), std::bit_cast<std::uint64_t>(b.ttft_s.mean));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.qoe_mean), std::bit_cast<std::uint64_t>(b.qoe_mean));
  EXPECT_EQ(a.finished, static_cast<std::int64_t>(done.size()));
  EXPECT_GT(a.blocking_s.n, 0);
}


// sortById's paths: dense ids (placed by id), sparse ids and a repeated id
// (both sorted): each gives the records ascending by id, none lost.
TEST(RecordStore, SortByIdDenseSparseAndRepeated) {
  std::mt19937_64 rng(5);
  const auto run = [&](const std::vector<std::int64_t>& ids) {
    RecordStore s;
    std::vector<RequestRecord> v;
    for (const std::int64_t id : ids) {
      v.push_back(typical(rng, id));
      s.push_back(v.back());
    }
    s.sortById();
    std::stable_sort(v.begin(), v.end(), [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
    ASSERT_EQ(s.size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      ASSERT_EQ(s.idAt(i), v[i].id) << "position " << i;
      if (i == 0 || v[i].id != v[i - 1].id) expectSame(s[i], v[i]);
    }
  };
  run({5, 3, 4, 7, 6});                   // dense from 3
  run({-2, 1, -1, 0});                    // dense, negative ids
  run({10, 2, 40, 7, 8});                 // sparse
  run({2, 0, 2, 1});                      // range 0..2 holds 4: sparse path
  run({3, 1, 1, 4});                      // 4 records over 1..4, one repeated: dense check fails, sorts
  run({1, 2, 3});                         // already in order
}

}  // namespace
}  // namespace sl
