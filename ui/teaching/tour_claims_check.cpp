#include "ui/teaching/tour_claims_check.h"

#include <algorithm>
#include <cmath>

#include "ui/teaching/tour_guide.h"

namespace sl::ui::tourcheck {

double parseFigure(const QString& number, const QString& unit) {
  const double x = number.toDouble();
  if (unit == "ms") return x / 1000;
  if (unit == "%") return x / 100;
  return x;
}

const QRegularExpression& comparisonRe() {
  static const QString figure = R"(([0-9]+(?:\.[0-9]+)?)(?: ?(ms|s|%|req/s|tok/s))?)";
  static const QRegularExpression re(figure + " against " + figure +
                                     R"( under (.+?) at the same simulated time, (lower|higher|about the same))");
  return re;
}

const QRegularExpression& outcomeWordRe() {
  static const QRegularExpression re(
      R"(\b(lower|higher|rises?|rising|falls?|falling|wins?|beats?|better|worse|faster|slower)\b)",
      QRegularExpression::CaseInsensitiveOption);
  return re;
}

namespace {

bool lineBreak(QChar c) { return c == '\n' || c == QChar::ParagraphSeparator || c == QChar::LineSeparator; }

// A sentence ends at a line break, or at '.', '!' or '?' before white space
// (not the point of "1.6 s").
bool endsSentence(const QString& t, qsizetype i) {
  if (lineBreak(t[i])) return true;
  if (t[i] != '.' && t[i] != '!' && t[i] != '?') return false;
  return i + 1 >= t.size() || t[i + 1].isSpace();
}

}  // namespace

QString sentenceAt(const QString& text, qsizetype pos) {
  if (text.isEmpty()) return {};
  pos = std::clamp<qsizetype>(pos, 0, text.size() - 1);
  qsizetype begin = pos;
  while (begin > 0 && !endsSentence(text, begin - 1)) --begin;
  qsizetype end = pos;
  while (end < text.size() && !endsSentence(text, end)) ++end;
  if (end < text.size() && !lineBreak(text[end])) ++end;  // its full stop
  constexpr qsizetype kMax = 240;
  QString head, tail;
  if (end - begin > kMax) {
    const qsizetype from = std::max(begin, pos - kMax / 2), to = std::min(end, from + kMax);
    if (from > begin) head = QString(QChar(0x2026));
    if (to < end) tail = QString(QChar(0x2026));
    begin = from;
    end = to;
  }
  return head + text.mid(begin, end - begin).simplified() + tail;
}

std::vector<Comparison> comparisons(const QString& text) {
  std::vector<Comparison> out;
  for (auto it = comparisonRe().globalMatch(text); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    Comparison c;
    c.quoted = m.captured(0).simplified();
    c.sentence = sentenceAt(text, m.capturedStart());
    c.a = parseFigure(m.captured(1), m.captured(2));
    c.b = parseFigure(m.captured(3), m.captured(4));
    c.word = m.captured(6);
    c.expected = compareWord(c.a, c.b);
    c.start = m.capturedStart();
    c.end = m.capturedEnd();
    // The quoted figures are rounded ("1.6 s", "59 %"): a word is wrong
    // only when the numbers are clearly on the other side of the 5 % that
    // separates "about the same" from "lower" and "higher".
    const double big = std::max(std::abs(c.a), std::abs(c.b));
    const bool same = std::abs(c.a - c.b) <= 0.06 * big;
    const bool apart = !(std::abs(c.a - c.b) < 0.04 * big);
    c.ok = c.word == "lower" ? c.a < c.b && apart : c.word == "higher" ? c.a > c.b && apart : same;
    out.push_back(c);
  }
  return out;
}

QStringList directionProblems(const QString& text) {
  QStringList out;
  const std::vector<Comparison> cs = comparisons(text);
  for (const Comparison& c : cs)
    if (!c.ok)
      out << QString("the comparison says \"%1\" but its numbers give \"%2\" (%3): \"%4\"")
                 .arg(c.word, c.expected, c.quoted, c.sentence);
  for (auto it = outcomeWordRe().globalMatch(text); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    const bool inComparison = std::any_of(cs.begin(), cs.end(), [&](const Comparison& c) {
      return m.capturedStart() >= c.start && m.capturedEnd() <= c.end;
    });
    if (!inComparison)
      out << QString("the outcome word \"%1\" is typed, not a comparison of the run's numbers: \"%2\"")
                 .arg(m.captured(1), sentenceAt(text, m.capturedStart()));
  }
  return out;
}

QStringList fillProblems(const QString& text) {
  QStringList out;
  static const QRegularExpression placeholder(R"(\{[a-z0-9_:]+\})");
  if (const QRegularExpressionMatch m = placeholder.match(text); m.hasMatch())
    out << QString("an unfilled placeholder %1: \"%2\"").arg(m.captured(0), sentenceAt(text, m.capturedStart()));
  if (const qsizetype i = text.indexOf("(none yet)"); i >= 0)
    out << QString("a figure not given yet, (none yet): \"%1\"").arg(sentenceAt(text, i));
  if (text.contains("<lecture-")) out << "a lecture-mode part left in";
  return out;
}

QStringList textProblems(const QString& text) { return fillProblems(text) + directionProblems(text); }

}  // namespace sl::ui::tourcheck
