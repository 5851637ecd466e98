#include "cost/suggest.h"

#include <algorithm>
#include <cctype>

namespace sl::costdetail {

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const auto ca = std::tolower(static_cast<unsigned char>(a[i - 1]));
      const auto cb = std::tolower(static_cast<unsigned char>(b[j - 1]));
      const std::size_t sub = prev[j - 1] + (ca == cb ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closestMatch(std::string_view query, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t bestDist = static_cast<std::size_t>(-1);
  for (const auto& c : candidates) {
    const std::size_t d = editDistance(query, c);
    const std::size_t longer = std::max(query.size(), c.size());
    const std::size_t limit = std::max<std::size_t>(2, (longer * 6) / 10);
    if (d <= limit && d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

std::string joinList(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += items[i];
  }
  return out;
}

std::string unknownKeyMessage(const std::string& place, std::string_view what, std::string_view key,
                              const std::vector<std::string>& known) {
  std::string msg = place + ": unknown " + std::string(what);
  const std::string hint = closestMatch(key, known);
  if (!hint.empty()) msg += ": did you mean '" + hint + "'?";
  msg += " known: " + joinList(known);
  return msg;
}

}  // namespace sl::costdetail
