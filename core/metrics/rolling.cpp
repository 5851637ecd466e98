#include "metrics/rolling.h"

#include <algorithm>
#include <cmath>

namespace sl {

void RollingWindow::add(SimTime time, double ttft, double tpot, bool sloOk, bool qoeViolated) {
  evict(time);
  if (count_ == buf_.size()) {  // grow: unroll the ring into a larger buffer
    std::vector<Entry> bigger;
    bigger.reserve(std::max<std::size_t>(16, buf_.size() * 2));
    for (std::size_t i = 0; i < count_; ++i) bigger.push_back(at(i));
    bigger.resize(bigger.capacity());
    buf_.swap(bigger);
    head_ = 0;
  }
  buf_[(head_ + count_) % buf_.size()] = Entry{time, ttft, tpot, sloOk, qoeViolated};
  ++count_;
}

void RollingWindow::evict(SimTime now) {
  const SimTime cutoff = now - window_;
  while (count_ > 0 && at(0).time <= cutoff) {
    head_ = (head_ + 1) % buf_.size();
    --count_;
  }
}

namespace {
// The p-percentile of x[0, n) (h = (n−1)p, interpolate x[lo], x[lo+1], as
// percentileSorted()), partitioning only x[from, n): the order statistics
// below `from` are already in place (a lower percentile's nth_element left
// every element after its position >= it), so the k-th smallest of the whole
// for k >= from is the (k − from)-th of that part. p99 after p50 thus
// partitions half the window (issue 27), with the same values bit for bit.
double percentileFrom(std::vector<double>& x, std::size_t n, std::size_t from, double p) {
  const double h = static_cast<double>(n - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  auto first = x.begin();
  auto last = first + static_cast<std::ptrdiff_t>(n);
  if (lo >= from) std::nth_element(first + static_cast<std::ptrdiff_t>(from), first + static_cast<std::ptrdiff_t>(lo), last);
  const double xlo = x[lo];
  if (lo + 1 >= n) return xlo;
  const double xhi = *std::min_element(first + static_cast<std::ptrdiff_t>(lo) + 1, last);
  return xlo + (h - static_cast<double>(lo)) * (xhi - xlo);
}
}  // namespace

double RollingWindow::percentile(double p) { return percentileFrom(scratch_, count_, 0, p); }

RollingSample RollingWindow::sample(SimTime now) {
  evict(now);
  RollingSample s;
  s.n = static_cast<std::int64_t>(count_);
  if (count_ == 0) return s;
  if (scratch_.size() < buf_.size()) scratch_.resize(buf_.size());
  std::int64_t ok = 0, viol = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    const Entry& e = at(i);
    scratch_[i] = e.ttft;
    ok += e.sloOk ? 1 : 0;
    viol += e.qoeViolated ? 1 : 0;
  }
  // p99 partitions only what lies above p50's position.
  const std::size_t above50 = static_cast<std::size_t>(std::floor(static_cast<double>(count_ - 1) * 0.50)) + 1;
  s.ttft_p50 = percentile(0.50);
  s.ttft_p99 = percentileFrom(scratch_, count_, above50, 0.99);
  for (std::size_t i = 0; i < count_; ++i) scratch_[i] = at(i).tpot;
  s.tpot_p50 = percentile(0.50);
  s.tpot_p99 = percentileFrom(scratch_, count_, above50, 0.99);
  s.slo_attainment = static_cast<double>(ok) / static_cast<double>(count_);
  s.qoe_violation_rate = static_cast<double>(viol) / static_cast<double>(count_);
  return s;
}

}  // namespace sl
