#include "ui/teaching/teaching_callouts.h"

#include <QObject>

#include <algorithm>

#include "ui/common/cache_view.h"
#include "ui/common/theme.h"

namespace sl::ui {

namespace {
QString roleLetter(int role) {
  switch (role) {
    case 1: return QStringLiteral("P");
    case 2: return QStringLiteral("D");
    default: return QStringLiteral("P+D");
  }
}
}  // namespace

QString Callout::caption() const {
  if (kind == Kind::CacheHit) return cacheview::hitCallout(count, tokens);
  if (kind == Kind::RoleFlip || kind == Kind::PolicyEvent)
    return count > 1 ? QObject::tr("%1 (%2 times)").arg(text).arg(count) : text;
  if (count > 1) return QObject::tr("%1 requests: %2").arg(count).arg(text);
  if (requestId >= 0) return QObject::tr("request #%1: %2").arg(requestId).arg(text);
  return text;
}

void CalloutBoard::add(const AnimationNote& n, double animNow) {
  Callout c;
  c.instance = n.instance;
  c.requestId = n.requestId;
  c.born = animNow;
  c.simTime = n.time;
  switch (n.kind) {
    case AnimationNote::Kind::PreemptedSwap:
      c.kind = Callout::Kind::Swap;
      c.text = QObject::tr("preempted: KV swapped to CPU");
      c.color = theme::kSwapped;
      break;
    case AnimationNote::Kind::PreemptedRecompute:
      c.kind = Callout::Kind::Recompute;
      c.text = QObject::tr("preempted: KV dropped, will recompute");
      c.color = theme::kSwapped;
      break;
    case AnimationNote::Kind::MigrationStart:
      c.kind = n.afterThink ? Callout::Kind::MigrateThink : Callout::Kind::MigrateOut;
      c.text = n.handoff      ? QObject::tr("prefilled: KV handed off to decode")
               : n.afterThink ? QObject::tr("migrated at </think>")
                              : QObject::tr("migrating out");
      c.color = theme::kMigrating;
      break;
    case AnimationNote::Kind::MigrationEnd:
      c.kind = Callout::Kind::MigrateIn;
      c.text = n.handoff ? (n.other >= 0 ? QObject::tr("hand-off from GPU %1").arg(n.other)
                                         : QObject::tr("hand-off arrived"))
                         : n.other >= 0 ? QObject::tr("KV arrived from GPU %1").arg(n.other)
                                        : QObject::tr("KV arrived");
      c.color = theme::kMigrating;
      break;
    case AnimationNote::Kind::Aborted:
      c.kind = Callout::Kind::Aborted;
      c.text = QObject::tr("aborted: can never fit in memory");
      c.color = theme::kAlert;
      break;
  }
  push(std::move(c));
}

void CalloutBoard::addRoleFlip(int instance, int fromRole, int toRole, double animNow, SimTime simNow) {
  Callout c;
  c.kind = Callout::Kind::RoleFlip;
  c.instance = instance;
  c.born = animNow;
  c.simTime = simNow;
  c.text = QObject::tr("instance flipped %1→%2").arg(roleLetter(fromRole), roleLetter(toRole));
  c.color = theme::kSeriesA;
  push(std::move(c));
}

namespace {
// A callout that counts events seen between two snapshots (policy
// counters, cache hits): merged by adding the counts.
Callout counted(Callout::Kind kind, int instance, int count, double animNow, SimTime simNow, QString text, QColor color) {
  Callout c;
  c.kind = kind;
  c.instance = instance;
  c.born = animNow;
  c.simTime = simNow;
  c.count = std::max(1, count);
  c.text = std::move(text);
  c.color = color;
  return c;
}
}  // namespace

void CalloutBoard::addPolicyEvent(int instance, const QString& text, int count, double animNow, SimTime simNow) {
  push(counted(Callout::Kind::PolicyEvent, instance, count, animNow, simNow, text, theme::kSynthetic));
}

void CalloutBoard::addCacheHit(int instance, int hits, std::int64_t tokens, double animNow, SimTime simNow) {
  Callout c = counted(Callout::Kind::CacheHit, instance, hits, animNow, simNow, QObject::tr("cache hit"), theme::kCachedBar);
  c.tokens = tokens;
  push(std::move(c));
}

void CalloutBoard::push(Callout c) {
  // Merge into a live callout of the same kind on the same card (policy
  // events: of the same text too).
  for (Callout& o : items_)
    if (o.instance == c.instance && o.kind == c.kind && (o.kind != Callout::Kind::PolicyEvent || o.text == c.text)) {
      o.count += c.kind == Callout::Kind::PolicyEvent || c.kind == Callout::Kind::CacheHit ? c.count : 1;
      o.tokens += c.tokens;
      o.requestId = c.requestId;
      o.simTime = c.simTime;
      if (o.text != c.text && o.kind == Callout::Kind::MigrateIn)
        o.text = o.text.startsWith(QStringLiteral("hand-off")) && c.text.startsWith(QStringLiteral("hand-off"))
                     ? QObject::tr("hand-offs arrived")
                     : QObject::tr("KV arrived by migration");
      if (o.text != c.text && o.kind == Callout::Kind::RoleFlip) o.text = QObject::tr("instance flipped roles");
      return;
    }
  // Full card: the oldest callout there makes room.
  int onCard = 0;
  for (const Callout& o : items_) onCard += o.instance == c.instance;
  if (onCard >= kMaxPerInstance) {
    auto oldest = std::find_if(items_.begin(), items_.end(), [&](const Callout& o) { return o.instance == c.instance; });
    items_.erase(oldest);
  }
  items_.push_back(std::move(c));
}

void CalloutBoard::advance(double animNow) {
  std::erase_if(items_, [&](const Callout& c) { return animNow - c.born >= kLifetimeS + kFadeS; });
}

void CalloutBoard::expireBefore(SimTime t) {
  std::erase_if(items_, [&](const Callout& c) { return c.simTime < t; });
}

double CalloutBoard::opacity(const Callout& c, double animNow) {
  const double age = animNow - c.born;
  if (age <= kLifetimeS) return 1.0;
  return std::clamp(1.0 - (age - kLifetimeS) / kFadeS, 0.0, 1.0);
}

}  // namespace sl::ui
