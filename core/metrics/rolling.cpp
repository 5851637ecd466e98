#include "metrics/rolling.h"

#include <algorithm>
#include <cassert>
#include <cmath>

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

// The first position in [p, e) whose value does not go before `v`: for
// kUpper the first value greater than v (upper_bound), else the first not
// less (lower_bound). The changes of a sample are spread over the window, so
// the next one is usually a few steps ahead of the last: the search gallops
// from `p` (1, 2, 4, ... ahead) and then halves the last gap without
// branches (a conditional move per step). std::lower_bound's data-dependent
// branch mispredicted at about every other step (applyChanges was 7.5 % of
// W3's `run --out`, 5.9 % after).
template <bool kUpper>
const double* searchAhead(const double* p, const double* e, double v) {
  const auto before = [v](double x) { return kUpper ? !(v < x) : x < v; };
  const auto n = static_cast<std::size_t>(e - p);
  std::size_t lo = 0, hi = 1;  // answer in [p + lo, p + min(hi, n)]
  while (hi <= n && before(p[hi - 1])) {
    lo = hi;
    hi *= 2;
  }
  const double* base = p + lo;
  std::size_t len = std::min(hi, n) - lo;
  while (len > 1) {
    const std::size_t half = len / 2;
    base = before(base[half]) ? base + half : base;
    len -= half;
  }
  return base + (len == 1 && before(*base) ? 1 : 0);
}

// sorted := (sorted ∪ add) − del as multisets (del ⊆ sorted ∪ add). Equal
// doubles are interchangeable, and the values are finite and never -0 (TTFT
// and TPOT are differences of non-negative times), so which copy of a value
// goes does not matter. `add` and `del` are sorted here and emptied.
// The k changes are few next to the window's n values (a probe a second
// sees ~1/30 of a 30 s window change): each is placed by binary search and
// the runs of `sorted` between them are block copies, O(n + k log n) with a
// memcpy for the O(n) part (issue 27: an element-wise merge and set
// difference were 6 % of W3's `run --out`).
void applyChanges(std::vector<double>& sorted, std::vector<double>& add, std::vector<double>& del,
                  std::vector<double>& scratch) {
  if (add.empty() && del.empty()) return;
  std::sort(add.begin(), add.end());
  std::sort(del.begin(), del.end());
  scratch.resize(sorted.size() + add.size());
  const double* s = sorted.data();
  const double* const se = s + sorted.size();
  double* o = scratch.data();
  const auto copyUpTo = [&](const double* to) {
    o = std::copy(s, to, o);
    s = to;
  };
  std::size_t ia = 0, id = 0;
  while (ia < add.size() || id < del.size()) {
    if (id < del.size() && ia < add.size() && del[id] == add[ia]) {
      ++ia;  // added and taken out again: cancel
      ++id;
    } else if (id < del.size() && (ia == add.size() || del[id] < add[ia])) {
      // Not (any longer) among the adds: one copy is in `sorted`.
      copyUpTo(searchAhead<false>(s, se, del[id]));
      assert(s != se && *s == del[id]);
      ++s;
      ++id;
    } else {
      copyUpTo(searchAhead<true>(s, se, add[ia]));
      *o++ = add[ia++];
    }
  }
  copyUpTo(se);
  scratch.resize(static_cast<std::size_t>(o - scratch.data()));
  sorted.swap(scratch);
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
