#include "ui/cluster/layout_check.h"

#include <QImage>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

#include "ui/cluster/cluster_view.h"
#include "ui/cluster/policy_view.h"
#include "ui/common/theme.h"

namespace sl::ui::layoutcheck {

namespace {
QRegularExpression wordRe(const QString& w) {
  return QRegularExpression("(^|[^\\w])" + QRegularExpression::escape(w) + "($|[^\\w])",
                            QRegularExpression::CaseInsensitiveOption);
}
}  // namespace

QStringList namedFields(const QString& text, const std::vector<PolicyField>& fields) {
  QStringList out;
  for (const PolicyField& f : fields) {
    const QString label = QString::fromStdString(f.label);
    if (label.size() < 2) continue;
    if (wordRe(label).match(text).hasMatch()) out << label;
  }
  return out;
}

bool namesChipsOrQueues(const QString& text) {
  static const QRegularExpression re("\\b(chips?|queues?|diamonds?|outlines?)\\b",
                                     QRegularExpression::CaseInsensitiveOption);
  return re.match(text).hasMatch();
}

QStringList cardProblems(const ClusterView& view, const InstanceSnapshot& in, int i, const QString& watch) {
  QStringList out;
  const QStringList painted = view.policyTexts(i);
  const QString all = painted.join(" | ");
  for (const QString& t : painted)
    if (t.contains(QChar(0x2026)) || t.contains("...")) out << QString("GPU %1: '%2' elided").arg(i).arg(t);
  const QString badge = policyview::badgeText(in);
  if (!badge.isEmpty() && !painted.contains(badge))
    out << QString("GPU %1: badge '%2' not drawn whole (drawn: %3)").arg(i).arg(badge, all);
  for (const PolicyField& f : in.policyFields)  // a flag the step names: its text ("on pace", "not on pace")
    if (policyview::isFlag(f) && namedFields(watch, {f}).size() == 1 && !painted.contains(policyview::flagText(f)))
      out << QString("GPU %1: flag '%2' named by the step is not drawn (drawn: %3)").arg(i).arg(policyview::flagText(f), all);
  for (const QString& label : namedFields(watch, in.policyFields)) {
    if (std::any_of(in.policyFields.begin(), in.policyFields.end(),
                    [&](const PolicyField& f) { return policyview::isFlag(f) && f.label == label.toStdString(); }))
      continue;
    const QRegularExpression shown("(^|[^\\w])" + QRegularExpression::escape(label) + " ?[-0-9–]");
    if (!shown.match(all).hasMatch())
      out << QString("GPU %1: field '%2' named by the step is not drawn with its value (drawn: %3)").arg(i).arg(label, all);
  }
  return out;
}

QStringList arrowProblems(ClusterView& view) {
  view.setTransfersHidden(true);
  const QImage without = view.grab().toImage().convertToFormat(QImage::Format_RGB32);
  view.setTransfersHidden(false);
  const QImage with = view.grab().toImage().convertToFormat(QImage::Format_RGB32);
  QStringList out;
  if (view.arrowEnds().empty() || with.size() != without.size()) return out;
  const double dpr = with.devicePixelRatio();
  const QRgb card = theme::kCard.rgb();
  auto nearEnd = [&](QPoint pt) {
    for (const QPointF& e : view.arrowEnds())
      if (std::hypot(e.x() - pt.x(), e.y() - pt.y()) <= 9) return true;
    return false;
  };
  for (int i = 0;; ++i) {
    const QRect r = view.cardRect(i);
    if (r.isNull()) break;
    // Inside the card's border (and a callout's or a selection's outline).
    const QRect in = r.adjusted(6, 6, -6, -6);
    int covered = 0;
    QPoint first;
    for (int y = in.top(); y <= in.bottom(); ++y)
      for (int x = in.left(); x <= in.right(); ++x) {
        const QPoint pt(x, y);
        const int px = static_cast<int>(x * dpr), py = static_cast<int>(y * dpr);
        if (px >= with.width() || py >= with.height()) continue;
        const QRgb a = without.pixel(px, py), b = with.pixel(px, py);
        if (a == b || (a & 0xFFFFFF) == (card & 0xFFFFFF)) continue;  // untouched, or the card's white
        if (nearEnd(pt)) continue;
        if (std::any_of(view.chipAreas().begin(), view.chipAreas().end(),
                        [&](const QRect& c) { return c.adjusted(-2, -2, 2, 2).contains(pt); }))
          continue;  // an arrow may cross chips (it ends on them)
        if (covered++ == 0) first = pt;
      }
    if (covered > 3)
      out << QString("an arrow covers %1 px of GPU %2's text or bars (first at %3, %4)")
                 .arg(covered).arg(i).arg(first.x()).arg(first.y());
  }
  return out;
}

QStringList viewProblems(ClusterView& view, const Snapshot& s, const QString& watch, const QString& where) {
  QStringList out;
  const QStringList arrows = arrowProblems(view);  // paints the view (with its arrows) last
  if (view.compact())
    out << where + QString(": cards are compact: no chips, no queues (%1×%2 px view, %3×%4 px cards)%5")
                       .arg(view.width()).arg(view.height()).arg(view.cardRect(0).width()).arg(view.cardRect(0).height())
                       .arg(namesChipsOrQueues(watch) ? QString(", and the step names chips or queues") : QString());
  for (int i = 0; i < static_cast<int>(s.instances.size()); ++i)
    for (const QString& p : cardProblems(view, s.instances[static_cast<std::size_t>(i)], i, watch)) out << where + ": " + p;
  for (const QString& p : arrows) out << where + ": " + p;
  return out;
}

}  // namespace sl::ui::layoutcheck
