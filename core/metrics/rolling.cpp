#include "metrics/rolling.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>

namespace sl {

// ---------------------------------------------------------------- OrderIndex

int OrderIndex::bucketOf(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  if ((bits >> 63) != 0) return 0;  // negative: below every positive value
  // A non-negative double's bits order as its value: bits >> 45 is the
  // biased exponent and the mantissa's top 7 bits, 128 buckets an octave.
  constexpr std::int64_t kLowest = std::int64_t{1023 - 20} << 7;  // 2^-20
  const std::int64_t b = static_cast<std::int64_t>(bits >> 45) - kLowest;
  return static_cast<int>(std::clamp<std::int64_t>(b, 0, kBuckets - 1));
}

void OrderIndex::reset(std::size_t slots) {
  count_.assign(kBuckets, 0);
  blockCount_.assign(kBuckets / kBlock, 0);
  head_.assign(kBuckets, -1);
  tail_.assign(kBuckets, -1);
  next_.assign(slots, -1);
}

void OrderIndex::push(std::int32_t slot, double v) {
  const int b = bucketOf(v);
  ++count_[static_cast<std::size_t>(b)];
  ++blockCount_[static_cast<std::size_t>(b / kBlock)];
  next_[static_cast<std::size_t>(slot)] = -1;
  std::int32_t& tail = tail_[static_cast<std::size_t>(b)];
  if (tail >= 0) next_[static_cast<std::size_t>(tail)] = slot;
  else head_[static_cast<std::size_t>(b)] = slot;
  tail = slot;
}

void OrderIndex::popOldest(double v) {
  const auto b = static_cast<std::size_t>(bucketOf(v));
  assert(count_[b] > 0 && head_[b] >= 0);
  --count_[b];
  --blockCount_[b / kBlock];
  std::int32_t& head = head_[b];
  head = next_[static_cast<std::size_t>(head)];
  if (head < 0) tail_[b] = -1;
}

template <class ValueOf>
void OrderIndex::at(std::size_t k, ValueOf&& value, double& kth, double& next, std::vector<double>& scratch) const {
  // The bucket holding the k-th: whole blocks, then buckets.
  std::size_t below = 0, blk = 0;
  while (below + blockCount_[blk] <= k) below += blockCount_[blk++];
  std::size_t b = blk * kBlock;
  while (below + count_[b] <= k) below += count_[b++];
  scratch.clear();
  for (std::int32_t s = head_[b]; s >= 0; s = next_[static_cast<std::size_t>(s)]) scratch.push_back(value(s));
  const std::size_t r = k - below;
  const auto kIt = scratch.begin() + static_cast<std::ptrdiff_t>(r);
  std::nth_element(scratch.begin(), kIt, scratch.end());
  kth = *kIt;
  if (r + 1 < scratch.size()) {
    next = *std::min_element(kIt + 1, scratch.end());
    return;
  }
  // The smallest value of the next bucket that has any.
  std::size_t c = b + 1;
  while (c < kBuckets && count_[c] == 0) {
    if (c % kBlock == 0 && blockCount_[c / kBlock] == 0) c += kBlock;
    else ++c;
  }
  if (c >= kBuckets) return;  // k was the largest
  std::int32_t s = head_[c];
  next = value(s);
  for (s = next_[static_cast<std::size_t>(s)]; s >= 0; s = next_[static_cast<std::size_t>(s)])
    next = std::min(next, value(s));
}

// ---------------------------------------------------------------- RollingWindow

void RollingWindow::add(SimTime time, double ttft, double tpot, bool sloOk, bool qoeViolated) {
  evict(time);
  bool grew = false;
  if (count_ == buf_.size()) {  // grow: unroll the ring into a larger buffer
    std::vector<Entry> bigger;
    bigger.reserve(std::max<std::size_t>(16, buf_.size() * 2));
    for (std::size_t i = 0; i < count_; ++i) bigger.push_back(at(i));
    bigger.resize(bigger.capacity());
    buf_.swap(bigger);
    head_ = 0;
    grew = true;
  }
  const std::size_t slot = (head_ + count_) % buf_.size();
  buf_[slot] = Entry{time, ttft, tpot, sloOk, qoeViolated};
  ++count_;
  ok_ += sloOk ? 1 : 0;
  viol_ += qoeViolated ? 1 : 0;
  if (!tracking_) return;
  if (grew) {  // the slots moved
    rebuildIndex();
    return;
  }
  ttftIndex_.push(static_cast<std::int32_t>(slot), ttft);
  tpotIndex_.push(static_cast<std::int32_t>(slot), tpot);
}

void RollingWindow::evict(SimTime now) {
  const SimTime cutoff = now - window_;
  while (count_ > 0 && at(0).time <= cutoff) {
    const Entry& e = at(0);
    ok_ -= e.sloOk ? 1 : 0;
    viol_ -= e.qoeViolated ? 1 : 0;
    if (tracking_) {
      ttftIndex_.popOldest(e.ttft);
      tpotIndex_.popOldest(e.tpot);
    }
    head_ = (head_ + 1) % buf_.size();
    --count_;
  }
}

void RollingWindow::rebuildIndex() {
  ttftIndex_.reset(buf_.size());
  tpotIndex_.reset(buf_.size());
  for (std::size_t i = 0; i < count_; ++i) {
    const auto slot = static_cast<std::int32_t>((head_ + i) % buf_.size());
    ttftIndex_.push(slot, at(i).ttft);
    tpotIndex_.push(slot, at(i).tpot);
  }
  tracking_ = true;
}

// The p-percentile as percentileSorted() takes it (h = (n−1)p, interpolate
// x[lo], x[lo+1]): the same order statistics, so the same bits.
double RollingWindow::percentile(const OrderIndex& index, double Entry::*field, double p) {
  const std::size_t n = count_;
  const double h = static_cast<double>(n - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  double xlo = 0, xhi = 0;
  index.at(lo, [&](std::int32_t s) { return buf_[static_cast<std::size_t>(s)].*field; }, xlo, xhi, scratch_);
  if (lo + 1 >= n) return xlo;
  return xlo + (h - static_cast<double>(lo)) * (xhi - xlo);
}

RollingSample RollingWindow::sample(SimTime now) {
  evict(now);
  if (!tracking_) rebuildIndex();
  RollingSample s;
  s.n = static_cast<std::int64_t>(count_);
  if (count_ == 0) return s;
  s.ttft_p50 = percentile(ttftIndex_, &Entry::ttft, 0.50);
  s.ttft_p99 = percentile(ttftIndex_, &Entry::ttft, 0.99);
  s.tpot_p50 = percentile(tpotIndex_, &Entry::tpot, 0.50);
  s.tpot_p99 = percentile(tpotIndex_, &Entry::tpot, 0.99);
  s.slo_attainment = static_cast<double>(ok_) / static_cast<double>(count_);
  s.qoe_violation_rate = static_cast<double>(viol_) / static_cast<double>(count_);
  return s;
}

}  // namespace sl
