#include "workload/burstgpt_trace.h"

#include <fstream>

#include "util/error.h"
#include "workload/trace_util.h"

namespace sl {

BurstGptTraceReader::BurstGptTraceReader(const std::string& path, const TraceOptions& opts)
    : BurstGptTraceReader(std::make_unique<std::ifstream>(path, std::ios::binary), path, opts) {}

BurstGptTraceReader::BurstGptTraceReader(std::unique_ptr<std::istream> in, const std::string& name,
                                         const TraceOptions& opts)
    : TraceReader(name, "burstgpt", opts), in_(std::move(in)), csv_(*in_, name) {
  if (!*in_) throw InputError(name + ": cannot open trace file");
  if (!csv_.next(fields_)) throw InputError(name + ": empty trace file (expected a header line)");
  const std::string where = csv_.where();
  colTime_ = detail::findColumn(fields_, "Timestamp", where);
  colInput_ = detail::findColumn(fields_, "Request tokens", where);
  colOutput_ = detail::findColumn(fields_, "Response tokens", where);
  for (auto [col, n] : {std::pair{colTime_, "Timestamp"}, std::pair{colInput_, "Request tokens"},
                        std::pair{colOutput_, "Response tokens"}})
    if (col < 0)
      throw InputError(where + ": missing column '" + n +
                       "' (BurstGPT header: Timestamp,[Session ID,Elapsed time,]Model,Request tokens,Response "
                       "tokens,Total tokens,Log Type)");
  v3_ = detail::findColumn(fields_, "Session ID", where) >= 0 || detail::findColumn(fields_, "Elapsed time", where) >= 0;
}

bool BurstGptTraceReader::readRow(Row& row) {
  if (!csv_.next(fields_)) return false;
  row.where = csv_.where();
  const std::string& ts = detail::traceField(fields_, colTime_, "Timestamp", row.where);
  if (!detail::parseDecimalNs(ts, kNsPerSecond, row.time_ns))
    throw InputError(row.where + ": Timestamp is not a number of seconds >= 0 (got \"" + ts + "\")");
  row.input = detail::tokenCount(detail::traceField(fields_, colInput_, "Request tokens", row.where),
                                 "Request tokens", row.where);
  row.answer = detail::tokenCount(detail::traceField(fields_, colOutput_, "Response tokens", row.where),
                                  "Response tokens", row.where);
  row.failed = row.answer == 0;
  return true;
}

}  // namespace sl
