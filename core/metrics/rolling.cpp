#include "metrics/rolling.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace sl {

namespace {
// The p-percentile of sorted x (h = (n−1)p, interpolate x[lo], x[lo+1], as
// percentileSorted() and as the former nth_element form: the same order
// statistics, so the same bits).
double percentileOf(const std::vector<double>& x, double p) {
  const std::size_t n = x.size();
  const double h = static_cast<double>(n - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const double xlo = x[lo];
  if (lo + 1 >= n) return xlo;
  const double xhi = x[lo + 1];
  return xlo + (h - static_cast<double>(lo)) * (xhi - xlo);
}

// sorted := (sorted ∪ add) − del as multisets (del ⊆ sorted ∪ add). Equal
// doubles are interchangeable, and the values are finite and never -0 (TTFT
// and TPOT are differences of non-negative times), so which copy of a value
// goes does not matter. `add` and `del` are sorted here and emptied.
void applyChanges(std::vector<double>& sorted, std::vector<double>& add, std::vector<double>& del,
                  std::vector<double>& scratch) {
  if (add.empty() && del.empty()) return;
  std::sort(add.begin(), add.end());
  std::sort(del.begin(), del.end());
  scratch.clear();
  scratch.reserve(sorted.size() + add.size());
  std::merge(sorted.begin(), sorted.end(), add.begin(), add.end(), std::back_inserter(scratch));
  sorted.clear();
  std::set_difference(scratch.begin(), scratch.end(), del.begin(), del.end(), std::back_inserter(sorted));
  add.clear();
  del.clear();
}
}  // namespace

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
  ok_ += sloOk ? 1 : 0;
  viol_ += qoeViolated ? 1 : 0;
  if (tracking_) {
    addTtft_.push_back(ttft);
    addTpot_.push_back(tpot);
    // More changes pending than the window holds: a rebuild is cheaper.
    if (addTtft_.size() + delTtft_.size() > 2 * count_ + 1024) dropSorted();
  }
}

void RollingWindow::evict(SimTime now) {
  const SimTime cutoff = now - window_;
  while (count_ > 0 && at(0).time <= cutoff) {
    const Entry& e = at(0);
    ok_ -= e.sloOk ? 1 : 0;
    viol_ -= e.qoeViolated ? 1 : 0;
    if (tracking_) {
      delTtft_.push_back(e.ttft);
      delTpot_.push_back(e.tpot);
    }
    head_ = (head_ + 1) % buf_.size();
    --count_;
  }
}

void RollingWindow::dropSorted() {
  tracking_ = false;
  for (auto* v : {&ttftSorted_, &tpotSorted_, &addTtft_, &addTpot_, &delTtft_, &delTpot_}) v->clear();
}

void RollingWindow::updateSorted() {
  if (!tracking_) {
    ttftSorted_.resize(count_);
    tpotSorted_.resize(count_);
    for (std::size_t i = 0; i < count_; ++i) {
      ttftSorted_[i] = at(i).ttft;
      tpotSorted_[i] = at(i).tpot;
    }
    std::sort(ttftSorted_.begin(), ttftSorted_.end());
    std::sort(tpotSorted_.begin(), tpotSorted_.end());
    tracking_ = true;
    return;
  }
  applyChanges(ttftSorted_, addTtft_, delTtft_, scratch_);
  applyChanges(tpotSorted_, addTpot_, delTpot_, scratch_);
}

RollingSample RollingWindow::sample(SimTime now) {
  evict(now);
  updateSorted();
  RollingSample s;
  s.n = static_cast<std::int64_t>(count_);
  if (count_ == 0) return s;
  s.ttft_p50 = percentileOf(ttftSorted_, 0.50);
  s.ttft_p99 = percentileOf(ttftSorted_, 0.99);
  s.tpot_p50 = percentileOf(tpotSorted_, 0.50);
  s.tpot_p99 = percentileOf(tpotSorted_, 0.99);
  s.slo_attainment = static_cast<double>(ok_) / static_cast<double>(count_);
  s.qoe_violation_rate = static_cast<double>(viol_) / static_cast<double>(count_);
  return s;
}

}  // namespace sl
