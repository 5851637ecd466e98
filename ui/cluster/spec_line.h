#pragma once
// Speculative decoding on an instance card (issue 48 item 4): one line with
// the draft length of the instance's current (or last) step and, over the
// last few simulated seconds, the tokens each sequence-step emitted and the
// share of draft tokens the target accepted:
//   "spec k=3 · 2.4 tok/step · 61 % accepted"
// (shorter forms on narrow cards; "spec off (k=0)" after the live control
// turned it off). The snapshot has only totals so far
// (InstanceSnapshot::spec: drafted, accepted, sequence-steps), so the recent
// rates are differences between frames, kept here per instance: a
// SpecMeter the cluster view feeds with every frame it shows.
//   tokens per step = (Δsteps + Δaccepted) / Δsteps
//   acceptance      = Δaccepted / Δdrafted
// over the frames of the last kWindowS simulated seconds (from the run's
// start until that much has passed). An instance that ran no speculative
// step in the window says "idle".
//
// Full and dense cards draw the line under the policy's fields; compact
// cards draw the short form ("k=3 · 2.4 tok/step") on their last line when
// the policy publishes no fields there; tiles draw nothing. Every form's
// tooltip (and a compact card's or tile's) has the full figures.
#include <QString>
#include <QStringList>

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/snapshot.h"

namespace sl::ui::specline {

/// Simulated seconds the recent rates are taken over.
inline constexpr double kWindowS = 2.0;

/// What a card shows of an instance's speculation.
struct SpecRates {
  bool on = false;         // the run speculates (snapshot spec.k >= 0)
  int k = -1;              // the step's draft length (0: off by the live control or dynamic k)
  bool recent = false;     // speculative steps in the window (else: idle)
  double tokPerStep = 0;   // (Δsteps + Δaccepted) / Δsteps
  double acceptance = 0;   // Δaccepted / Δdrafted (0..1)
  double windowS = 0;      // the simulated seconds the rates cover
  std::int64_t steps = 0;  // Δsteps
};

/// The rates between two totals of one instance (`before` earlier);
/// `windowS` is the simulated time between them.
SpecRates ratesBetween(const SpeculativeSnapshot& before, const SpeculativeSnapshot& now, double windowS);

/// The line, longest form first: "spec k=3 · 2.4 tok/step · 61 % accepted",
/// "spec k=3 · 2.4 tok/step · 61 %", "k=3 · 2.4 tok/step · 61 %",
/// "k=3 · 2.4/step"; "spec off (k=0)", "k=0 (off)"; "spec k=3 · idle",
/// "k=3 · idle". Empty when the run does not speculate.
QStringList forms(const SpecRates& r);
/// The line's tooltip: what each figure is and over which window.
QString tooltip(const SpecRates& r);

/// Per-instance totals of the last kWindowS of simulated time, fed one frame
/// at a time.
class SpecMeter {
 public:
  /// Add a frame's totals (a new generation starts over; a frame at the
  /// same simulated time as the last replaces it).
  void record(int generation, const Snapshot& s);
  /// Instance `i`'s rates now (on = false when it has none).
  SpecRates rates(int i) const;
  /// Whether the last frame's run speculates.
  bool on() const { return on_; }

 private:
  struct Sample {
    SimTime t = 0;
    SpeculativeSnapshot spec;
  };
  int generation_ = -1;
  bool on_ = false;
  std::vector<std::deque<Sample>> samples_;  // per instance, oldest first
};

}  // namespace sl::ui::specline
