#pragma once
// ServeLab CSV trace: header `arrival_s,input_tokens,output_tokens
// [,reasoning_tokens][,domain]` (columns found by name, any order, other
// columns ignored). output_tokens = reasoning + answer, so answer = output -
// reasoning must be >= 1. Rows must be sorted by arrival_s. An empty domain
// field means none (-1).
#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "util/csv.h"
#include "workload/trace_formats.h"
#include "workload/workload_source.h"

namespace sl {

/// Streaming reader: one line per next(); never loads the file.
/// Malformed rows -> InputError "FILE:LINE: <what is wrong>", or, with
/// TraceOptions::lenient, skipped and counted (malformed()).
class ServeLabTraceReader final : public WorkloadSource {
public:
  /// Opens `path` (already resolved) and reads the header.
  ServeLabTraceReader(const std::string& path, const TraceOptions& opts = {});
  /// Reads from `in` (kept alive by the reader); `name` is used in errors.
  ServeLabTraceReader(std::unique_ptr<std::istream> in, const std::string& name, const TraceOptions& opts = {});

  bool next(RequestSpec& out) override;

  /// Rows read from the file so far that were outside the window (skipped).
  std::int64_t skipped() const { return skipped_; }
  /// With `lenient`: malformed rows skipped so far, and the first one's message.
  std::int64_t malformed() const { return stats_->malformed; }
  const std::string& firstMalformed() const { return stats_->first_malformed; }
  /// Row counts as the other readers report them (format "servelab").
  std::shared_ptr<const TraceStats> statsHandle() const { return stats_; }

private:
  void readHeader();

  std::unique_ptr<std::istream> in_;
  CsvReader csv_;
  TraceOptions opts_;
  int colArrival_ = -1, colInput_ = -1, colOutput_ = -1, colReasoning_ = -1, colDomain_ = -1;
  std::vector<std::string> fields_;
  double prevArrival_ = 0;
  bool havePrev_ = false;
  bool done_ = false;
  std::int64_t emitted_ = 0;
  std::int64_t skipped_ = 0;
  std::shared_ptr<TraceStats> stats_ = std::make_shared<TraceStats>();
  struct Row {
    double arrival = 0;
    std::int64_t input = 0, output = 0, reasoning = 0;
    std::int32_t domain = -1;
  } row_;
};

/// Write every request of `src` as a ServeLab CSV (all five columns; empty
/// domain when -1; arrival_s with exact nanoseconds, so reading the file
/// back gives identical RequestSpecs).
void writeServeLabCsv(WorkloadSource& src, std::ostream& out);

/// One request as a CSV row (no line end), as writeServeLabCsv writes it.
std::string serveLabCsvRow(const RequestSpec& r);
/// Exact decimal seconds of a ns time: "12.5", "0.000000001", "3.0".
std::string formatSecondsExact(SimTime ns);

}  // namespace sl
