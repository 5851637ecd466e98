#include "util/csv.h"

#include "util/error.h"

namespace sl {

std::string csvQuote(const std::string& c) {
  if (c.find_first_of(",\"\n") == std::string::npos) return c;
  std::string out = "\"";
  for (char ch : c) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

namespace {

// Does `line` end inside an open quoted field? A quote opens a field only
// at its start (after blanks); a stray quote inside an unquoted field is data.
bool endsInsideQuotes(std::string_view line) {
  bool inside = false, fieldStart = true;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (inside) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') ++i;
        else inside = false;
      }
    } else if (c == ',') {
      fieldStart = true;
    } else if (c == '"' && fieldStart) {
      inside = true;
      fieldStart = false;
    } else if (c != ' ' && c != '\t') {
      fieldStart = false;
    }
  }
  return inside;
}

}  // namespace

std::string_view trimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool splitCsvLine(std::string_view line, std::vector<std::string>& fields, std::string* error) {
  fields.clear();
  std::string cur;
  std::size_t i = 0;
  const std::size_t n = line.size();
  for (;;) {
    cur.clear();
    // Skip leading blanks before a possible opening quote.
    std::size_t j = i;
    while (j < n && (line[j] == ' ' || line[j] == '\t')) ++j;
    if (j < n && line[j] == '"') {
      i = j + 1;
      bool closed = false;
      while (i < n) {
        if (line[i] == '"') {
          if (i + 1 < n && line[i + 1] == '"') {
            cur.push_back('"');
            i += 2;
          } else {
            ++i;
            closed = true;
            break;
          }
        } else {
          cur.push_back(line[i++]);
        }
      }
      if (!closed) {
        if (error) *error = "unterminated quoted field";
        return false;
      }
      while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < n && line[i] != ',') {
        if (error) *error = "unexpected character after a closing quote";
        return false;
      }
      fields.push_back(cur);
    } else {
      const std::size_t start = i;
      while (i < n && line[i] != ',') ++i;
      fields.emplace_back(line.substr(start, i - start));
    }
    if (i >= n) break;
    ++i;  // the comma
    if (i == n) {  // trailing comma: one more empty field
      fields.emplace_back();
      break;
    }
  }
  return true;
}

CsvReader::CsvReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

std::string CsvReader::where() const { return name_ + ":" + std::to_string(recordLine_); }

bool CsvReader::next(std::vector<std::string>& fields) {
  std::string line;
  for (;;) {
    if (!std::getline(in_, line)) return false;
    ++lineNo_;
    if (lineNo_ == 1 && line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    recordLine_ = lineNo_;
    if (trimView(line).empty()) continue;
    buf_ = line;
    // A quoted field may contain line breaks: keep reading until balanced.
    while (endsInsideQuotes(buf_)) {
      if (!std::getline(in_, line)) break;  // reported as unterminated below
      ++lineNo_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      buf_.push_back('\n');
      buf_ += line;
    }
    std::string err;
    if (!splitCsvLine(buf_, fields, &err)) throw InputError(where() + ": " + err);
    return true;
  }
}

}  // namespace sl
