#include "experiments/table.h"

#include <algorithm>
#include <cmath>

#include "util/csv.h"
#include "util/strings.h"

namespace sl::exp {

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

std::string Table::csv() const {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out += ',';
      out += csvQuote(cells[i]);
    }
    out += '\n';
  };
  line(columns);
  for (const auto& r : rows) line(r);
  return out;
}

std::string Table::text() const {
  std::vector<std::size_t> w(columns.size(), 0);
  for (std::size_t i = 0; i < columns.size(); ++i) w[i] = columns[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) l += "  ";
      const std::size_t width = i < w.size() ? w[i] : cells[i].size();
      // first column left-aligned (labels), the rest right-aligned (numbers)
      if (i == 0)
        l += cells[i] + std::string(width - cells[i].size(), ' ');
      else
        l += std::string(width - cells[i].size(), ' ') + cells[i];
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + '\n';
  };
  line(columns);
  for (const auto& r : rows) line(r);
  return out;
}

std::string num(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  return formatFixed(v, decimals);
}

}  // namespace sl::exp
