#include "policy_view.h"

#include <QObject>

#include <cmath>

namespace sl::ui::policyview {

namespace {
QString number(double v) {
  if (std::isnan(v)) return QStringLiteral("–");
  if (std::abs(v - std::round(v)) < 1e-9 && std::abs(v) < 1e15) return QString::number(static_cast<qint64>(std::llround(v)));
  return QString::number(v, 'g', 3);
}
// On a card: counts of 10 000 and more in three digits ("103k", "1.53M");
// the tooltip and the inspector keep the exact value.
QString cardNumber(double v) {
  const double a = std::abs(v);
  if (std::isnan(v) || a < 10000 || std::abs(v - std::round(v)) >= 1e-9) return number(v);
  if (a < 1e6) return QString::number(v / 1e3, 'g', 3) + "k";
  if (a < 1e9) return QString::number(v / 1e6, 'g', 3) + "M";
  return QString::number(v / 1e9, 'g', 3) + "G";
}
bool isSeconds(const PolicyField& f) { return f.unit == "s"; }
bool isFraction(const PolicyField& f) { return f.unit == "%" || f.unit == "fraction"; }
}  // namespace

bool isFlag(const PolicyField& f) { return f.unit == "bool"; }

QString valueText(const PolicyField& f) {
  if (isFlag(f)) return f.value != 0 ? QObject::tr("yes") : QObject::tr("no");
  if (isSeconds(f)) return number(f.value) + " s";
  if (f.unit == "fraction") return number(f.value * 100.0) + "%";
  if (f.unit == "%") return number(f.value) + "%";
  return number(f.value);
}

QString valueWithUnit(const PolicyField& f) {
  if (isFlag(f) || isSeconds(f) || isFraction(f) || f.unit.empty()) return valueText(f);
  return valueText(f) + " " + QString::fromStdString(f.unit);
}

QString flagText(const PolicyField& f) {
  const QString label = QString::fromStdString(f.label);
  return f.value != 0 ? label : QObject::tr("not %1").arg(label);
}

QString tooltipLine(const PolicyField& f) {
  QString s = QString::fromStdString(f.label) + " = " + valueWithUnit(f);
  if (!f.tooltip.empty()) s += ": " + QString::fromStdString(f.tooltip);
  return s;
}

QStringList valueForms(const std::vector<PolicyField>& fields) {
  QStringList wide, tight;
  for (const PolicyField& f : fields) {
    if (isFlag(f)) continue;
    const QString label = QString::fromStdString(f.label);
    const bool plain = !isSeconds(f) && !isFraction(f);
    const QString value = plain ? cardNumber(f.value) : valueText(f);
    wide << label + " " + value;
    // Short labels run into their value ("r3"); longer ones keep a space.
    tight << (label.size() <= 2 ? label + value : label + " " + value);
  }
  if (wide.isEmpty()) return {};
  return {wide.join(QStringLiteral(" · ")), tight.join(' ')};
}

bool anyFlag(const std::vector<PolicyField>& fields) {
  for (const PolicyField& f : fields)
    if (isFlag(f)) return true;
  return false;
}

QString fieldsTooltip(const std::vector<PolicyField>& fields) {
  if (fields.empty()) return {};
  QStringList lines{QObject::tr("Published by the running policy:")};
  for (const PolicyField& f : fields) lines << tooltipLine(f);
  return lines.join('\n');
}

QString roleName(int role) {
  switch (role) {
    case 1: return QObject::tr("prefill");
    case 2: return QObject::tr("decode");
    default: return {};
  }
}

QString badgeText(const InstanceSnapshot& in) {
  if (!in.poolLabel.empty()) return QString::fromStdString(in.poolLabel);
  return roleName(in.role);
}

QString compactBadgeText(const QString& badge) {
  if (badge.size() <= 3) return badge;
  const int dash = badge.indexOf(QChar(0x2013));  // "lo–hi", a length range
  if (dash > 0 && badge.at(0).isDigit()) {
    const QString hi = badge.mid(dash + 1), lo = badge.left(dash);
    return hi == QString(QChar(0x221E)) ? QString::fromUtf8(">") + lo : QString::fromUtf8("≤") + hi;
  }
  return badge.left(1).toUpper();
}

QString poolAndRoleText(const InstanceSnapshot& in) {
  QStringList parts;
  if (!in.poolLabel.empty()) parts << QObject::tr("pool: %1").arg(QString::fromStdString(in.poolLabel));
  switch (in.role) {
    case 1: parts << QObject::tr("role: prefill (hands each request off after its prefill)"); break;
    case 2: parts << QObject::tr("role: decode (a hand-off target)"); break;
    default: break;
  }
  return parts.join(QStringLiteral(" · "));
}

QString decisionText(const DecisionSnapshot& ds) {
  const Decision& d = ds.decision;
  QString what;
  if (d.requestId < 0) what = QObject::tr("GPU %1").arg(d.instance);  // about the instance (e.g. a pool flip)
  else if (!d.boundary || d.from < 0) what = QObject::tr("#%1 placed on GPU %2").arg(d.requestId).arg(d.instance);
  else if (d.from == d.instance) what = QObject::tr("#%1 stays on GPU %2").arg(d.requestId).arg(d.instance);
  else what = QObject::tr("#%1 GPU %2 → GPU %3").arg(d.requestId).arg(d.from).arg(d.instance);
  if (ds.reason.empty()) return what;
  return what + QStringLiteral(" · ") + QString::fromStdString(ds.reason);
}

bool decisionInvolves(const DecisionSnapshot& ds, int i) {
  const Decision& d = ds.decision;
  return d.from == i || d.chosen == i || d.instance == i;
}

}  // namespace sl::ui::policyview
