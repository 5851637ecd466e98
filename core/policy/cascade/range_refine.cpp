// CascadeInfer's adaptive range refinement (paper §4.3): every refine
// interval each boundary moves toward the split of the pooled (local +
// divided successor) lengths that minimises Q^B(left) + Q^B(right),
// smoothed by an EMA, frozen on sparse sets, clamped to a minimum stage
// width. The set division (§4.2 footnote) is here too. The rest of the
// policy is in cascade_global.cpp (stages, planning, rebalancing) and
// bid_ask.cpp (the bid-ask market).
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/simulator.h"
#include "policy/cascade/cascade_global.h"
#include "util/radix_sort.h"

namespace sl {

namespace {
// A (prompt, current length) pair of token counts as one key that orders
// as the pair sort does (by length, then prompt); equal keys are equal pairs.
std::uint64_t lengthKey(std::uint64_t prompt, std::uint64_t length) { return length << 32 | prompt; }

// Set division of keyed pairs: every m-th of the sorted keys from the
// m/2-th, as (prompt, length); m <= 1 keeps the set as it is.
std::vector<std::pair<double, double>> divideKeys(std::vector<std::uint64_t>& keys, int m) {
  const auto pair = [](std::uint64_t k) {
    return std::pair<double, double>{static_cast<double>(k & 0xffffffffu), static_cast<double>(k >> 32)};
  };
  std::vector<std::pair<double, double>> out;
  if (m <= 1) {
    out.reserve(keys.size());
    for (const std::uint64_t k : keys) out.push_back(pair(k));
    return out;
  }
  // The radix sort from 256 keys: it runs ~1 % more instructions than
  // std::sort on a stage's few hundred keys (its eight 256-entry counts) but
  // has no data-dependent branches, and by wall it is the faster (scenario
  // C: cascade 0.37 s against 0.40 s with std::sort, three runs each).
  if (keys.size() >= 256) {
    std::vector<std::uint64_t> tmp;
    radixSortKeys(keys.size(), [&](std::size_t i) { return keys[i]; }, keys, tmp);
  } else {
    std::sort(keys.begin(), keys.end());
  }
  out.reserve(keys.size() / static_cast<std::size_t>(m) + 1);
  for (std::size_t k = static_cast<std::size_t>(m / 2); k < keys.size(); k += static_cast<std::size_t>(m))
    out.push_back(pair(keys[k]));
  return out;
}
}  // namespace

std::vector<std::pair<double, double>> CascadeGlobal::divide(std::vector<std::pair<double, double>> set, int m) {
  if (m <= 1) return set;
  // Sorted by (current length, prompt). Both are token counts (whole, in
  // [0, 2^31)), so one 64-bit key orders them exactly as the pair does, and
  // equal keys are equal pairs: the sequence is the pair sort's.
  // Other values (none from refineNow) take the pair sort.
  const auto whole = [](double v) { return !std::signbit(v) && v < 2147483648.0 && v == static_cast<double>(static_cast<std::uint32_t>(v)); };
  std::vector<std::uint64_t> keys(set.size());
  for (std::size_t k = 0; k < set.size(); ++k) {
    if (!whole(set[k].first) || !whole(set[k].second)) {
      std::sort(set.begin(), set.end(), [](const auto& a, const auto& b) { return a.second != b.second ? a.second < b.second : a.first < b.first; });
      std::vector<std::pair<double, double>> out;
      for (std::size_t j = static_cast<std::size_t>(m / 2); j < set.size(); j += static_cast<std::size_t>(m)) out.push_back(set[j]);
      return out;
    }
    keys[k] = lengthKey(static_cast<std::uint64_t>(set[k].first), static_cast<std::uint64_t>(set[k].second));
  }
  return divideKeys(keys, m);
}

std::int32_t CascadeGlobal::refineTarget(const QoeModel& q, RefineMode mode, std::vector<std::pair<double, double>> pooled,
                                         int minRequests) {
  const std::size_t n = pooled.size();
  if (n < static_cast<std::size_t>(std::max(2, minRequests))) return -1;
  // (current length, prompt) is a total order on the values: any sort gives
  // the same sequence, so input that is sorted already (refineNow merges two
  // sorted sets) is left as it is.
  const auto byLength = [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  };
  if (!std::is_sorted(pooled.begin(), pooled.end(), byLength)) std::sort(pooled.begin(), pooled.end(), byLength);
  std::vector<QoeFeatures> prefix(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    prefix[i + 1] = prefix[i];
    prefix[i + 1].add(pooled[i].first, pooled[i].second);
  }
  const QoeFeatures& all = prefix[n];
  std::size_t best = 1;
  if (mode == RefineMode::Quantity) {
    best = n / 2;
  } else if (mode == RefineMode::Memory) {
    best = 1;
    while (best < n - 1 && prefix[best].sumL < all.sumL / 2) ++best;
  } else {
    double bestCost = std::numeric_limits<double>::infinity();
    for (std::size_t i = 1; i < n; ++i) {
      const QoeFeatures right{all.n - prefix[i].n, all.sumI - prefix[i].sumI, all.sumI2 - prefix[i].sumI2, all.sumL - prefix[i].sumL};
      const double c = q.batch(prefix[i]) + q.batch(right);
      if (c < bestCost) {
        bestCost = c;
        best = i;
      }
    }
  }
  best = std::clamp<std::size_t>(best, 1, n - 1);
  return static_cast<std::int32_t>(std::lround(pooled[best].second));
}

void CascadeGlobal::refineNow() {
  const int S = stages();
  if (S < 2) return;
  // Each placed request's (prompt, current length), keyed as divide does.
  std::vector<std::vector<std::uint64_t>> lens(static_cast<std::size_t>(S));
  // Lengths only: lane members are read unsynced (their tokens counted from
  // the lane's steps), so the refinement does not replay their pacers.
  sim_->forEachActiveUnsynced([&](const Request& r) {
    if (r.synthetic || r.instance < 0) return;
    const auto prompt = static_cast<std::uint64_t>(r.input);
    lens[static_cast<std::size_t>(stageOf(r.instance))].push_back(
        lengthKey(prompt, prompt + static_cast<std::uint64_t>(sim_->generatedNow(r))));
  });
  bool moved = false;
  // Each stage's divided (sorted) set serves as "local" for its own boundary
  // and as "successors" for the one before: computed once.
  std::vector<std::vector<std::pair<double, double>>> divided(static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s)
    divided[static_cast<std::size_t>(s)] = divideKeys(lens[static_cast<std::size_t>(s)], static_cast<int>(members(s).size()));
  std::vector<std::pair<double, double>> pooled;
  for (int s = 0; s + 1 < S; ++s) {
    const auto& local = divided[static_cast<std::size_t>(s)];
    const auto& succ = divided[static_cast<std::size_t>(s) + 1];
    pooled.resize(local.size() + succ.size());
    std::merge(local.begin(), local.end(), succ.begin(), succ.end(), pooled.begin(),
               [](const auto& a, const auto& b) { return a.second != b.second ? a.second < b.second : a.first < b.first; });
    const std::int32_t target = refineTarget(qoe_, cfg_.refine, pooled, cfg_.refineMinRequests);
    if (target < 0) {
      ++frozen_;
      continue;
    }
    double b = cfg_.emaAlpha * target + (1 - cfg_.emaAlpha) * bounds_[static_cast<std::size_t>(s)];
    // Neither stage s nor s+1 may shrink below the narrowest length range
    // the planner works with (half its first bucket, the profiled minimum):
    // clamping to lower(s)+1 once left a stage one token wide ([975, 976)),
    // whose instances only relayed (issue 25). No room: the boundary stays.
    const double minWidth = minStageWidth();
    const double lo = lower(s) + minWidth;
    const double hi = s + 2 < S ? upper(s + 1) - minWidth : std::numeric_limits<double>::infinity();
    if (hi < lo) {
      ++frozen_;
      continue;
    }
    b = std::clamp(b, lo, hi);
    ++refinements_;
    const std::int32_t before = upper(s);
    setBound(s, b);  // (rounds b as upper() reads it)
    if (upper(s) != before) moved = true;
  }
  if (!moved) return;
  for (int s = 0; s < S; ++s) {
    boundaryLog_.push_back({sim_->now(), s, upper(s)});
    const std::string label = stageLabel(s);
    for (int m : members(s)) sim_->setPoolLabel(m, label);
  }
  // armWatch for every placed request, each stage's threshold computed once.
  // watchLength syncs a lane member only when its threshold changes.
  std::vector<std::int32_t> threshold(static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s) threshold[static_cast<std::size_t>(s)] = watchThreshold(s);
  const Simulator::WatchBatch batch(*sim_);
  sim_->forEachActiveUnsynced([&](const Request& r) {
    if (!r.synthetic && r.instance >= 0)
      sim_->watchLength(const_cast<Request&>(r), threshold[static_cast<std::size_t>(stageOf(r.instance))]);
  });
}

}  // namespace sl
