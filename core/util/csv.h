#pragma once
// A small streaming CSV reader (RFC 4180 flavour): comma-separated fields,
// optional double quotes around a field ("" inside quotes is one quote, and a
// quoted field may span lines), CRLF or LF line ends, a UTF-8 BOM on the first
// line is dropped. Reads one record at a time, so multi-GB traces never sit in
// memory. Used by the trace readers and the empirical length distribution.
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace sl {

/// Split one complete CSV record (no line end) into `fields`. Returns false
/// and sets `error` when a quote is unterminated or followed by junk.
/// One CSV cell: quoted (RFC 4180, `"` doubled) when it holds `,`, `"` or a newline.
std::string csvQuote(const std::string& cell);

bool splitCsvLine(std::string_view line, std::vector<std::string>& fields, std::string* error = nullptr);

/// Streaming reader over an istream. Errors (malformed quoting) throw
/// sl::InputError "NAME:LINE: ..." where NAME is the name given here.
class CsvReader {
public:
  CsvReader(std::istream& in, std::string name);

  /// Next record into `fields`; false at end of input. Blank lines are skipped.
  bool next(std::vector<std::string>& fields);

  /// 1-based line number where the record last returned by next() started.
  std::int64_t line() const { return recordLine_; }
  const std::string& name() const { return name_; }
  /// "NAME:LINE" of the last record, for error messages.
  std::string where() const;

private:
  std::istream& in_;
  std::string name_;
  std::int64_t lineNo_ = 0;
  std::int64_t recordLine_ = 0;
  std::string buf_;
};

/// Trim ASCII spaces and tabs at both ends.
std::string_view trimView(std::string_view s);

}  // namespace sl
