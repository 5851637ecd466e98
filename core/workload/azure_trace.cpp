#include "workload/azure_trace.h"

#include <fstream>

#include "util/error.h"
#include "workload/trace_util.h"

namespace sl {

AzureTraceReader::AzureTraceReader(const std::string& path, const TraceOptions& opts)
    : AzureTraceReader(std::make_unique<std::ifstream>(path, std::ios::binary), path, opts) {}

AzureTraceReader::AzureTraceReader(std::unique_ptr<std::istream> in, const std::string& name,
                                   const TraceOptions& opts)
    : TraceReader(name, "azure", opts), in_(std::move(in)), csv_(*in_, name) {
  if (!*in_) throw InputError(name + ": cannot open trace file");
  if (!csv_.next(fields_)) throw InputError(name + ": empty trace file (expected a header line)");
  const std::string where = csv_.where();
  colTime_ = detail::findColumn(fields_, "TIMESTAMP", where);
  colInput_ = detail::findColumn(fields_, "ContextTokens", where);
  colOutput_ = detail::findColumn(fields_, "GeneratedTokens", where);
  for (auto [col, n] : {std::pair{colTime_, "TIMESTAMP"}, std::pair{colInput_, "ContextTokens"},
                        std::pair{colOutput_, "GeneratedTokens"}})
    if (col < 0)
      throw InputError(where + ": missing column '" + n + "' (Azure header: TIMESTAMP,ContextTokens,GeneratedTokens)");
}

bool AzureTraceReader::readRow(Row& row) {
  if (!csv_.next(fields_)) return false;
  row.where = csv_.where();
  const std::string& ts = detail::traceField(fields_, colTime_, "TIMESTAMP", row.where);
  std::string why;
  if (!detail::parseDateTimeNs(ts, row.time_ns, why))
    throw InputError(row.where + ": TIMESTAMP \"" + ts + "\" is not a date-time (" + why + ")");
  row.input = detail::tokenCount(detail::traceField(fields_, colInput_, "ContextTokens", row.where), "ContextTokens",
                                 row.where);
  row.answer = detail::tokenCount(detail::traceField(fields_, colOutput_, "GeneratedTokens", row.where),
                                  "GeneratedTokens", row.where);
  return true;
}

}  // namespace sl
