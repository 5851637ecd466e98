#pragma once
// Azure LLM inference trace (2023): CSV `TIMESTAMP,ContextTokens,
// GeneratedTokens` (columns found by name, case-insensitive; others
// ignored). TIMESTAMP is `YYYY-MM-DD HH:MM:SS.fffffff` without a timezone;
// it is parsed exactly to integer ns and the timeline starts at the first
// row. input = ContextTokens, reasoning = 0, answer = GeneratedTokens
// (0 is raised to 1 and counted in TraceStats::raised_to_one).
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "util/csv.h"
#include "workload/trace_formats.h"

namespace sl {

/// Streaming reader: one line per row; never loads the file.
class AzureTraceReader final : public TraceReader {
public:
  /// Opens `path` (already resolved) and reads the header.
  AzureTraceReader(const std::string& path, const TraceOptions& opts = {});
  /// Reads from `in` (kept alive by the reader); `name` is used in errors.
  AzureTraceReader(std::unique_ptr<std::istream> in, const std::string& name, const TraceOptions& opts = {});

protected:
  bool readRow(Row& row) override;

private:
  std::unique_ptr<std::istream> in_;
  CsvReader csv_;
  int colTime_ = -1, colInput_ = -1, colOutput_ = -1;
  std::vector<std::string> fields_;
};

}  // namespace sl
