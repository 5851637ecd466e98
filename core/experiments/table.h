#pragma once
// A small result table for experiments: string cells, rendered as CSV or as
// aligned plain text.
#include <string>
#include <vector>

namespace sl::exp {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  void addRow(std::vector<std::string> row) { rows.push_back(std::move(row)); }
  /// Index of a column; -1 when absent.
  int column(const std::string& name) const;
  /// RFC-4180-ish CSV (cells with ',' or '"' are quoted), header first.
  std::string csv() const;
  /// Columns padded to their widest cell, two spaces apart.
  std::string text() const;
};

/// Fixed-point number, "nan" for NaN.
std::string num(double v, int decimals = 3);

}  // namespace sl::exp
