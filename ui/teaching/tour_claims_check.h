#pragma once
// A guided-tour step's words against its own numbers (issue 50), read from
// the text as the tour panel shows it (TourPanel::watchText(): plain text,
// the run's figures filled in). Shared by tests/ui/test_tour_claims.cpp
// (offscreen: every step at 30 s and 90 s of wall time) and the app's
// hidden --check-tours flag, which walks every step in the real window
// under a window manager (tests/ui/xvfb_tours.sh).
//
// A comparison is what TourPanel writes for "{vs:NAME}": "540 ms against
// 887 ms under round-robin at the same simulated time, lower". Its word
// must be the one its two quoted numbers give (with a margin for the
// rounding of the quoted figures); an outcome word ("rises", "falls",
// "lower", "wins" …) anywhere else was typed, not taken from the run.
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <vector>

namespace sl::ui::tourcheck {

/// A quoted figure in seconds, fractions or plain units: "540" "ms" → 0.54,
/// "1.6" "s" → 1.6, "59" "%" → 0.59, "3.2" "req/s" → 3.2, "17" "" → 17.
double parseFigure(const QString& number, const QString& unit);
/// "A against B under LABEL at the same simulated time, WORD": captures 1–2
/// A's number and unit, 3–4 B's, 5 the label, 6 the word.
const QRegularExpression& comparisonRe();
/// The words that state an outcome (case-insensitive, whole words).
const QRegularExpression& outcomeWordRe();
/// The sentence of `text` around position `pos`, whitespace simplified
/// (at most ~240 characters, elided around `pos` beyond that).
QString sentenceAt(const QString& text, qsizetype pos);

/// One comparison found in a text.
struct Comparison {
  QString quoted;    // the comparison as shown
  QString sentence;  // the sentence it is in
  double a = 0, b = 0;
  QString word;      // the word shown
  QString expected;  // the word a and b give (compareWord)
  bool ok = false;   // the word shown agrees with a and b
  qsizetype start = 0, end = 0;  // where it is in the text
};
/// Every comparison of `text`, in order.
std::vector<Comparison> comparisons(const QString& text);

/// Direction words against the numbers: each comparison whose word its
/// two numbers contradict, and each outcome word outside a comparison;
/// each problem quotes its sentence.
QStringList directionProblems(const QString& text);
/// Figures not filled in: a placeholder left ("{p95_ttft}"), a figure not
/// given yet ("(none yet)"), a lecture-mode part left in.
QStringList fillProblems(const QString& text);
/// Both: everything wrong with a step's text as shown.
QStringList textProblems(const QString& text);

}  // namespace sl::ui::tourcheck
