#pragma once
// BurstGPT trace CSV. v1: `Timestamp,Model,Request tokens,Response tokens,
// Total tokens,Log Type`; v3 inserts `Session ID,Elapsed time` after
// Timestamp. Columns are found by NAME (case-insensitive; others ignored),
// so both layouts read the same way. Timestamp is seconds (decimal, parsed
// exactly); the timeline starts at the first row. input = Request tokens,
// reasoning = 0, answer = Response tokens. A row with 0 response tokens is a
// failed request: skipped and counted (TraceStats::failed). 0 request tokens
// with a response is raised to 1 (TraceStats::raised_to_one).
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "util/csv.h"
#include "workload/trace_formats.h"

namespace sl {

class BurstGptTraceReader final : public TraceReader {
public:
  BurstGptTraceReader(const std::string& path, const TraceOptions& opts = {});
  BurstGptTraceReader(std::unique_ptr<std::istream> in, const std::string& name, const TraceOptions& opts = {});

  /// True when the header has the v3 columns (Session ID / Elapsed time).
  bool v3() const { return v3_; }

protected:
  bool readRow(Row& row) override;

private:
  std::unique_ptr<std::istream> in_;
  CsvReader csv_;
  int colTime_ = -1, colInput_ = -1, colOutput_ = -1;
  bool v3_ = false;
  std::vector<std::string> fields_;
};

}  // namespace sl
