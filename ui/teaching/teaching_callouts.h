#pragma once
// Lecture-mode callouts (50-gui.md "Teaching mode"): short captions such as
// "preempted: KV swapped to CPU" or "migrated at </think>" shown next to the
// instance card where the event happened, fading out after a few seconds of
// *animation* time (they freeze while the run is paused, so a lecturer can
// talk over them). Bursts are merged: one callout per instance and kind,
// with a count, and at most kMaxPerInstance per card.
#include <QColor>
#include <QString>

#include <cstdint>
#include <vector>

#include "ui/controller/sim_controller.h"

namespace sl::ui {

struct Callout {
  enum class Kind : std::uint8_t { Swap, Recompute, MigrateThink, MigrateOut, MigrateIn, Aborted, RoleFlip, PolicyEvent, CacheHit };
  Kind kind = Kind::Swap;
  int instance = -1;
  std::int64_t requestId = -1;  // the latest request it speaks of
  int count = 1;
  double born = 0;  // animation time (s)
  SimTime simTime = 0;  // simulated time of the latest event merged into it
  std::int64_t tokens = 0;  // CacheHit: prompt tokens the merged hits skipped
  QString text;
  QColor color;
  /// What the card shows: one subject, then what happened to it —
  /// "request #39: preempted: KV swapped to CPU", "5 requests: migrated at
  /// </think>", "instance flipped D→P (2 times)".
  QString caption() const;
};

class CalloutBoard {
public:
  static constexpr int kMaxPerInstance = 2;
  static constexpr double kLifetimeS = 4.0;  // fully visible, then...
  static constexpr double kFadeS = 1.0;      // ...fading out over this long

  /// Add the callout an engine event deserves: at the source card when a
  /// copy starts, at the destination card when it lands.
  void add(const AnimationNote& n, double animNow);
  /// Role change seen between two snapshots ("instance flipped D→P").
  void addRoleFlip(int instance, int fromRole, int toRole, double animNow, SimTime simNow);
  /// A policy counter grew by `count` between two snapshots (PolicyField::callout):
  /// "3 requests: promoted: waited too long". Merged per card and text.
  void addPolicyEvent(int instance, const QString& text, int count, double animNow, SimTime simNow);
  /// An instance's prefix cache served `hits` more admissions, skipping
  /// `tokens` prompt tokens, between two snapshots: "cache hit: 3.1k prompt
  /// tokens skipped" (merged per card, the counts and tokens summed).
  void addCacheHit(int instance, int hits, std::int64_t tokens, double animNow, SimTime simNow);
  /// Drop callouts whose time is up.
  void advance(double animNow);
  /// Drop callouts about events simulated before `t` (after an unanimated
  /// jump of the simulated clock they would speak of the past).
  void expireBefore(SimTime t);
  void clear() { items_.clear(); }

  const std::vector<Callout>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  /// 1 while fresh, falling to 0 over the last kFadeS seconds.
  static double opacity(const Callout& c, double animNow);

private:
  void push(Callout c);
  std::vector<Callout> items_;
};

}  // namespace sl::ui
