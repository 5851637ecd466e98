// The speculative-decoding line of an instance card (spec_line.h): recent
// rates from the snapshots' totals, and their wording.
#include "ui/cluster/spec_line.h"

#include <QObject>

#include <algorithm>

namespace sl::ui::specline {

SpecRates ratesBetween(const SpeculativeSnapshot& before, const SpeculativeSnapshot& now, double windowS) {
  SpecRates r;
  r.on = now.on();
  r.k = now.k;
  r.windowS = windowS;
  if (!r.on) return r;
  const std::int64_t steps = now.steps - before.steps;
  const std::int64_t drafted = now.drafted - before.drafted;
  const std::int64_t accepted = now.accepted - before.accepted;
  r.steps = std::max<std::int64_t>(0, steps);
  r.recent = steps > 0;
  if (steps > 0) r.tokPerStep = static_cast<double>(steps + accepted) / static_cast<double>(steps);
  if (drafted > 0) r.acceptance = std::clamp(static_cast<double>(accepted) / static_cast<double>(drafted), 0.0, 1.0);
  return r;
}

QStringList forms(const SpecRates& r) {
  if (!r.on) return {};
  if (r.k == 0) return {QObject::tr("spec off (k=0)"), QObject::tr("k=0 (off)")};
  const QString k = QStringLiteral("k=%1").arg(r.k);
  if (!r.recent) return {QObject::tr("spec %1 · idle").arg(k), QObject::tr("%1 · idle").arg(k)};
  const QString tps = QString::number(r.tokPerStep, 'f', 1);
  const QString acc = QString::number(r.acceptance * 100.0, 'f', 0);
  return {QObject::tr("spec %1 · %2 tok/step · %3 % accepted").arg(k, tps, acc),
          QObject::tr("spec %1 · %2 tok/step · %3 %").arg(k, tps, acc),
          QObject::tr("%1 · %2 tok/step · %3 %").arg(k, tps, acc), QObject::tr("%1 · %2/step").arg(k, tps)};
}

QString tooltip(const SpecRates& r) {
  if (!r.on) return {};
  QString head = r.k == 0 ? QObject::tr("Speculative decoding: off for now (k = 0: every decode step emits one token)")
                          : QObject::tr(
                                "Speculative decoding: each decode sequence drafts k = %1 tokens per step; the "
                                "target model verifies them in one pass of %2 tokens per sequence")
                                .arg(r.k)
                                .arg(r.k + 1);
  const QString window = r.windowS > 0 ? QObject::tr("the last %1 s of simulated time").arg(r.windowS, 0, 'g', 2)
                                       : QObject::tr("the run so far");
  if (!r.recent) return head + "\n" + QObject::tr("No speculative step over %1 (idle)").arg(window);
  return head + "\n" +
         QObject::tr(
             "Over %1: %2 sequence-steps, %3 tokens per step (1 + the drafts accepted), %4 % of the "
             "draft tokens accepted")
             .arg(window)
             .arg(r.steps)
             .arg(r.tokPerStep, 0, 'f', 2)
             .arg(r.acceptance * 100.0, 0, 'f', 1);
}

void SpecMeter::record(int generation, const Snapshot& s) {
  if (generation != generation_) {
    generation_ = generation;
    samples_.clear();
  }
  on_ = !s.instances.empty() && s.instances.front().spec.on();
  if (!on_) {
    samples_.clear();
    return;
  }
  if (samples_.size() != s.instances.size()) samples_.assign(s.instances.size(), {});
  const SimTime window = secondsToNs(kWindowS);
  for (std::size_t i = 0; i < s.instances.size(); ++i) {
    std::deque<Sample>& q = samples_[i];
    const SpeculativeSnapshot& now = s.instances[i].spec;
    // Totals only grow within a run; a drop is another run: start over.
    if (!q.empty() && (now.steps < q.back().spec.steps || s.now < q.back().t)) q.clear();
    if (q.empty()) q.push_back({0, SpeculativeSnapshot{now.k, 0, 0, 0}});  // the run's start
    if (q.back().t == s.now && q.size() > 1)
      q.back() = {s.now, now};
    else
      q.push_back({s.now, now});
    // The oldest sample kept is the last one at or before now − window.
    while (q.size() > 2 && q[1].t <= s.now - window) q.pop_front();
  }
}

SpecRates SpecMeter::rates(int i) const {
  if (i < 0 || static_cast<std::size_t>(i) >= samples_.size() || samples_[static_cast<std::size_t>(i)].empty())
    return {};
  const std::deque<Sample>& q = samples_[static_cast<std::size_t>(i)];
  return ratesBetween(q.front().spec, q.back().spec, nsToSeconds(q.back().t - q.front().t));
}

}  // namespace sl::ui::specline
