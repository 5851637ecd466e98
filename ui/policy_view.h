#pragma once
// How the GUI shows what the running policy publishes (docs/policy-api.md
// "What the GUI shows of a policy"). Nothing here knows any policy: the
// cluster view's cards, the inspector and the "policy" chart all format
// PolicyField values, pool labels and decision names through these helpers.
//
// Conventions, from the field's unit:
//   "bool"         a flag: a green (1) or red (0) dot with its label
//                  ("on pace" / "not on pace");
//   "s"            seconds, shown with their unit ("0.25 s");
//   "%", "fraction" shown as a percentage;
//   anything else  a count or amount: the number on the card, the unit in
//                  the tooltip ("r 3" on the card, "r = 3 requests" on hover).
#include <QString>
#include <QStringList>

#include <vector>

#include "engine/snapshot.h"

namespace sl::ui::policyview {

/// A 0/1 field drawn as a coloured dot.
bool isFlag(const PolicyField& f);
/// The value as text, without the unit for counts ("3", "0.25 s", "40%", "yes").
QString valueText(const PolicyField& f);
/// The value with its unit ("3 requests", "0.25 s", "yes").
QString valueWithUnit(const PolicyField& f);
/// A flag's text on the card: its label when set, "not <label>" when not.
QString flagText(const PolicyField& f);
/// One line per field for a tooltip: "r = 3 requests: <the field's tooltip>".
QString tooltipLine(const PolicyField& f);
/// Texts for the non-flag fields on one card line, longest first
/// ("r 3 · a 1 · m 420", "r3 a1 m420"); empty when there are none.
QStringList valueForms(const std::vector<PolicyField>& fields);
/// Whether any field is a flag / a value.
bool anyFlag(const std::vector<PolicyField>& fields);
/// The card's tooltip for the published fields ("" when there are none).
QString fieldsTooltip(const std::vector<PolicyField>& fields);

/// The badge on an instance card: the policy's pool label when it publishes
/// one (a length range, e.g. "0–2k tokens", is part of that label), else the
/// engine role's name ("prefill", "decode"), else "".
QString badgeText(const InstanceSnapshot& in);
/// The badge on a compact card: short labels whole ("P", "P→D", "P+D"), a
/// length range by its upper end ("0–4.1k" → "≤4.1k", "4.8k–∞" → ">4.8k"),
/// anything else by its first letter ("prefill" → "P").
QString compactBadgeText(const QString& badge);
/// The engine role's name ("", "prefill", "decode").
QString roleName(int role);
/// "pool decode · role decode (hand-off target)" for tooltips ("" when neither).
QString poolAndRoleText(const InstanceSnapshot& in);

/// One decision in words: "#39 placed on GPU 2 · SLO-filtered" or
/// "#39 GPU 1 → GPU 5 · SLO-filtered; migrate" (the reason is the policy's
/// own name table, already in the snapshot).
QString decisionText(const DecisionSnapshot& d);
/// Whether decision `d` involves instance `i` (source, choice or result).
bool decisionInvolves(const DecisionSnapshot& d, int i);

}  // namespace sl::ui::policyview
