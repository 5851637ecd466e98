#include "metrics/record_store.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

namespace sl {

namespace {

// Presence mask: a set bit means the field differs from its default and is
// in the payload. The fields most records have sit in the low bits so the
// mask's varint stays at 2 bytes.
enum : std::uint32_t {
  kFinished = 1u << 0,  // the flag itself, no payload
  kArrival = 1u << 1,
  kInput = 1u << 2,
  kAnswer = 1u << 3,
  kInstance = 1u << 4,
  kFirstToken = 1u << 5,
  kFirstVisible = 1u << 6,
  kLastToken = 1u << 7,
  kQueueing = 1u << 8,
  kReasoning = 1u << 9,
  kReasoningEnd = 1u << 10,
  kDomain = 1u << 11,
  kQoe = 1u << 12,
  kQoeOne = 1u << 13,  // the QoE is exactly 1.0 (a stream that kept pace): no payload
  kGenerated = 1u << 14,
  kPredicted = 1u << 15,
  kPreemptions = 1u << 16,
  kMigrations = 1u << 17,
  kBlocking = 1u << 18,
  kPreempted = 1u << 19,
  kSwapped = 1u << 20,
  kMigrating = 1u << 21,
  kHandoffWait = 1u << 22,
  kBlkTransfer = 1u << 23,
  kBlkDestWait = 1u << 24,
  kBlkDisplaced = 1u << 25,
  kBlkPreempted = 1u << 26,
  kBlkDestQueue = 1u << 27,
};

constexpr double kNoQoe = -1.0;  // RequestRecord's default
constexpr std::size_t kMaxIdEncoded = 10;  // the id's varint, ahead of the record

struct Writer {
  std::uint8_t* p;
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<std::uint8_t>(v);
  }
  // v - base, zigzagged; wrap-around arithmetic keeps every int64 exact.
  void delta(std::int64_t v, std::int64_t base) {
    const std::uint64_t d = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(base);
    varint((d << 1) ^ (0 - (d >> 63)));
  }
};

struct Reader {
  const std::uint8_t* p;
  std::uint64_t varint() {
    if (*p < 0x80) return *p++;  // most fields: one byte
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const std::uint8_t b = *p++;
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) return v;
    }
  }
  std::int64_t delta(std::int64_t base) {
    const std::uint64_t z = varint();
    const std::uint64_t d = (z >> 1) ^ (0 - (z & 1));
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(base) + d);
  }
};

constexpr std::int64_t sumTokens(std::int32_t a, std::int32_t b) { return static_cast<std::int64_t>(a) + b; }
// A queueing time other than 0 is stored as its difference from
// first_token - arrival (most of it), wrapping rather than overflowing.
std::int64_t queueingBase(const RequestRecord& r) {
  if (r.first_token == kNoTime) return 0;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(r.first_token) - static_cast<std::uint64_t>(r.arrival));
}

}  // namespace

std::size_t encodeRecord(const RequestRecord& r, std::uint8_t* out) {
  std::uint32_t m = 0;
  if (r.finished) m |= kFinished;
  if (r.arrival != 0) m |= kArrival;
  if (r.input != 0) m |= kInput;
  if (r.answer != 0) m |= kAnswer;
  if (r.instance != -1) m |= kInstance;
  if (r.first_token != kNoTime) m |= kFirstToken;
  if (r.first_visible != kNoTime) m |= kFirstVisible;
  if (r.last_token != kNoTime) m |= kLastToken;
  const std::int64_t queueBase = queueingBase(r);
  if (r.queueing != 0) m |= kQueueing;
  if (r.reasoning != 0) m |= kReasoning;
  if (r.reasoning_end != kNoTime) m |= kReasoningEnd;
  if (r.domain != -1) m |= kDomain;
  const auto qoeBits = std::bit_cast<std::uint64_t>(r.qoe);
  if (qoeBits == std::bit_cast<std::uint64_t>(1.0)) m |= kQoeOne;
  else if (qoeBits != std::bit_cast<std::uint64_t>(kNoQoe)) m |= kQoe;
  if (r.generated != sumTokens(r.reasoning, r.answer)) m |= kGenerated;
  if (r.predicted != -1) m |= kPredicted;
  if (r.preemptions != 0) m |= kPreemptions;
  if (r.migrations != 0) m |= kMigrations;
  if (r.blocking != kNoTime) m |= kBlocking;
  if (r.preempted != 0) m |= kPreempted;
  if (r.swapped != 0) m |= kSwapped;
  if (r.migrating != 0) m |= kMigrating;
  if (r.handoff_wait != 0) m |= kHandoffWait;
  if (r.blk_transfer != 0) m |= kBlkTransfer;
  if (r.blk_dest_wait != 0) m |= kBlkDestWait;
  if (r.blk_displaced != 0) m |= kBlkDisplaced;
  if (r.blk_preempted != 0) m |= kBlkPreempted;
  if (r.blk_dest_queue != 0) m |= kBlkDestQueue;

  Writer w{out};
  w.varint(m);
  if (m & kArrival) w.delta(r.arrival, 0);
  if (m & kInput) w.delta(r.input, 0);
  if (m & kReasoning) w.delta(r.reasoning, 0);
  if (m & kAnswer) w.delta(r.answer, 0);
  if (m & kGenerated) w.delta(r.generated, sumTokens(r.reasoning, r.answer));
  if (m & kPredicted) w.delta(r.predicted, 0);
  if (m & kDomain) w.delta(r.domain, 0);
  if (m & kInstance) w.delta(r.instance, 0);
  if (m & kPreemptions) w.delta(r.preemptions, 0);
  if (m & kMigrations) w.delta(r.migrations, 0);
  // The token times: each defined one as its difference from the previous
  // defined one (arrival first), i.e. as the latencies.
  std::int64_t prev = r.arrival;
  if (m & kFirstToken) {
    w.delta(r.first_token, prev);
    prev = r.first_token;
  }
  if (m & kReasoningEnd) {
    w.delta(r.reasoning_end, prev);
    prev = r.reasoning_end;
  }
  if (m & kFirstVisible) {
    w.delta(r.first_visible, prev);
    prev = r.first_visible;
  }
  if (m & kLastToken) w.delta(r.last_token, prev);
  if (m & kQueueing) w.delta(r.queueing, queueBase);
  if (m & kBlocking) w.delta(r.blocking, 0);
  if (m & kPreempted) w.delta(r.preempted, 0);
  if (m & kSwapped) w.delta(r.swapped, 0);
  if (m & kMigrating) w.delta(r.migrating, 0);
  if (m & kHandoffWait) w.delta(r.handoff_wait, 0);
  if (m & kBlkTransfer) w.delta(r.blk_transfer, 0);
  if (m & kBlkDestWait) w.delta(r.blk_dest_wait, 0);
  if (m & kBlkDisplaced) w.delta(r.blk_displaced, 0);
  if (m & kBlkPreempted) w.delta(r.blk_preempted, 0);
  if (m & kBlkDestQueue) w.delta(r.blk_dest_queue, 0);
  if (m & kQoe) {
    std::memcpy(w.p, &r.qoe, sizeof r.qoe);
    w.p += sizeof r.qoe;
  }
  return static_cast<std::size_t>(w.p - out);
}

RequestRecord decodeRecord(const std::uint8_t* in, std::int64_t id) {
  Reader rd{in};
  const auto m = static_cast<std::uint32_t>(rd.varint());
  RequestRecord r;
  r.id = id;
  r.finished = (m & kFinished) != 0;
  const auto i32 = [&](std::uint32_t bit, std::int32_t dflt) {
    return (m & bit) ? static_cast<std::int32_t>(rd.delta(0)) : dflt;
  };
  r.arrival = (m & kArrival) ? rd.delta(0) : 0;
  r.input = i32(kInput, 0);
  r.reasoning = i32(kReasoning, 0);
  r.answer = i32(kAnswer, 0);
  const std::int64_t tokens = sumTokens(r.reasoning, r.answer);
  r.generated = static_cast<std::int32_t>((m & kGenerated) ? rd.delta(tokens) : tokens);
  r.predicted = i32(kPredicted, -1);
  r.domain = i32(kDomain, -1);
  r.instance = i32(kInstance, -1);
  r.preemptions = i32(kPreemptions, 0);
  r.migrations = i32(kMigrations, 0);
  std::int64_t prev = r.arrival;
  if (m & kFirstToken) prev = r.first_token = rd.delta(prev);
  if (m & kReasoningEnd) prev = r.reasoning_end = rd.delta(prev);
  if (m & kFirstVisible) prev = r.first_visible = rd.delta(prev);
  if (m & kLastToken) r.last_token = rd.delta(prev);
  const std::int64_t queueBase = queueingBase(r);
  if (m & kQueueing) r.queueing = rd.delta(queueBase);
  if (m & kBlocking) r.blocking = rd.delta(0);
  if (m & kPreempted) r.preempted = rd.delta(0);
  if (m & kSwapped) r.swapped = rd.delta(0);
  if (m & kMigrating) r.migrating = rd.delta(0);
  if (m & kHandoffWait) r.handoff_wait = rd.delta(0);
  if (m & kBlkTransfer) r.blk_transfer = rd.delta(0);
  if (m & kBlkDestWait) r.blk_dest_wait = rd.delta(0);
  if (m & kBlkDisplaced) r.blk_displaced = rd.delta(0);
  if (m & kBlkPreempted) r.blk_preempted = rd.delta(0);
  if (m & kBlkDestQueue) r.blk_dest_queue = rd.delta(0);
  if (m & kQoe) std::memcpy(&r.qoe, rd.p, sizeof r.qoe);
  if (m & kQoeOne) r.qoe = 1.0;
  return r;
}

void RecordStore::push_back(const RequestRecord& r) {
  if (kPageSize - used_ < kMaxIdEncoded + kMaxEncoded) {
    pages_.push_back(std::make_unique_for_overwrite<std::uint8_t[]>(kPageSize));
    used_ = 0;
  }
  const std::size_t page = pages_.size() - 1;
  Writer w{pages_.back().get() + used_};
  w.delta(r.id, 0);
  const std::size_t n = static_cast<std::size_t>(w.p - (pages_.back().get() + used_)) + encodeRecord(r, w.p);
  index_.push_back((static_cast<std::uint64_t>(page) << kPageBits) | used_);
  used_ += n;
}

const std::uint8_t* RecordStore::bytes(Entry e) const {
  return pages_[static_cast<std::size_t>(e >> kPageBits)].get() + (e & (kPageSize - 1));
}

std::int64_t RecordStore::idOf(Entry e) const { return Reader{bytes(e)}.delta(0); }

RequestRecord RecordStore::decode(Entry e) const {
  Reader rd{bytes(e)};
  const std::int64_t id = rd.delta(0);
  return decodeRecord(rd.p, id);
}

void RecordStore::clear() {
  std::deque<Entry>().swap(index_);
  pages_.clear();
  used_ = kPageSize;
}

void RecordStore::sortById() {
  std::vector<std::pair<std::int64_t, Entry>> keyed;  // (id, entry): sorting never decodes
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  bool inOrder = true;
  for (const Entry e : index_) {
    const std::int64_t id = idOf(e);
    inOrder = inOrder && id >= last;
    last = id;
    lo = std::min(lo, id);
    hi = std::max(hi, id);
  }
  if (inOrder) return;
  // Dense ids (every id in [lo, hi] once, as a run's request ids are when
  // all finished): each entry goes straight to position id - lo (issue 27:
  // O(n), 8 bytes a record for the while, no comparisons). A repeated id
  // falls back to the sort.
  const std::size_t n = index_.size();
  if (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) == n - 1) {
    constexpr Entry kEmpty = ~Entry{0};  // never a page position
    std::vector<Entry> placed(n, kEmpty);
    bool dense = true;
    for (const Entry e : index_) {
      Entry& slot = placed[static_cast<std::size_t>(static_cast<std::uint64_t>(idOf(e)) - static_cast<std::uint64_t>(lo))];
      if (slot != kEmpty) {
        dense = false;
        break;
      }
      slot = e;
    }
    if (dense) {
      std::copy(placed.begin(), placed.end(), index_.begin());
      return;
    }
  }
  keyed.reserve(index_.size());
  for (const Entry e : index_) keyed.emplace_back(idOf(e), e);
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto it = index_.begin();
  for (const auto& k : keyed) *it++ = k.second;
}

std::vector<RequestRecord> RecordStore::toVector() const {
  std::vector<RequestRecord> out;
  out.reserve(size());
  for (const Entry& e : index_) out.push_back(decode(e));
  return out;
}

std::size_t RecordStore::memoryBytes() const { return pages_.size() * kPageSize + index_.size() * sizeof(Entry); }

}  // namespace sl
