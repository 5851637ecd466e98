#pragma once
// Mooncake trace, JSON lines: {"timestamp": ms, "input_length": n,
// "output_length": n, "hash_ids": [ids of 512-token prompt blocks]} (other
// fields ignored; hash_ids optional). timestamp is milliseconds, parsed
// exactly; the timeline starts at the first row. input = input_length,
// reasoning = 0, answer = output_length (0 raised to 1 and counted).
// hash_ids: RequestSpec::prefix_blocks = the list's length and
// RequestSpec::prefix_hash = hashMooncakeIds(list); the whole list of the
// request last returned by next() is lastHashIds(). Its token identity for
// the prefix cache (RequestSpec::segments): block k of 512 tokens is the
// segment (hash_ids[k], 0, 512), the last one clipped at the prompt's end.
#include <cstdint>
#include <istream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "workload/trace_formats.h"

namespace sl {

/// 64-bit hash of a block-id list (order-sensitive; 0 for an empty list).
std::uint64_t hashMooncakeIds(std::span<const std::int64_t> ids);

class MooncakeTraceReader final : public TraceReader {
public:
  MooncakeTraceReader(const std::string& path, const TraceOptions& opts = {});
  MooncakeTraceReader(std::unique_ptr<std::istream> in, const std::string& name, const TraceOptions& opts = {});

  /// hash_ids of the request last returned by next().
  const std::vector<std::int64_t>& lastHashIds() const { return lastIds_; }

protected:
  bool readRow(Row& row) override;
  void onEmit(const Row& row, RequestSpec& out) override;

private:
  std::unique_ptr<std::istream> in_;
  std::string line_;
  std::int64_t lineNo_ = 0;
  std::vector<std::int64_t> ids_, lastIds_;
};

}  // namespace sl
