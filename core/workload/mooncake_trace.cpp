#include "workload/mooncake_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "util/csv.h"
#include "util/error.h"
#include "util/rng.h"
#include "workload/parse_util.h"

namespace sl {

std::uint64_t hashMooncakeIds(std::span<const std::int64_t> ids) {
  if (ids.empty()) return 0;
  std::uint64_t h = fnv1a64("mooncake-hash-ids");
  for (std::int64_t id : ids) h = hashCombine(h, static_cast<std::uint64_t>(id));
  return h == 0 ? 1 : h;  // 0 means "none"
}

MooncakeTraceReader::MooncakeTraceReader(const std::string& path, const TraceOptions& opts)
    : MooncakeTraceReader(std::make_unique<std::ifstream>(path, std::ios::binary), path, opts) {}

MooncakeTraceReader::MooncakeTraceReader(std::unique_ptr<std::istream> in, const std::string& name,
                                         const TraceOptions& opts)
    : TraceReader(name, "mooncake", opts), in_(std::move(in)) {
  if (!*in_) throw InputError(name + ": cannot open trace file");
}

namespace {

using json = nlohmann::json;

std::int64_t tokenField(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) throw InputError(where + ": missing field \"" + key + "\"");
  if (it->is_number_unsigned() || it->is_number_integer()) {
    if (it->is_number_unsigned() ? it->get<std::uint64_t>() > static_cast<std::uint64_t>(
                                                                  std::numeric_limits<std::int32_t>::max())
                                 : (it->get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()))
      throw InputError(where + ": \"" + key + "\" is too large (got " + it->dump() + ")");
    const std::int64_t v = it->is_number_unsigned() ? static_cast<std::int64_t>(it->get<std::uint64_t>())
                                                    : it->get<std::int64_t>();
    if (v < 0) throw InputError(where + ": \"" + key + "\" must be >= 0 (got " + it->dump() + ")");
    return v;
  }
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= 0 && d <= std::numeric_limits<std::int32_t>::max())
      return static_cast<std::int64_t>(d);
  }
  throw InputError(where + ": \"" + key + "\" must be an integer >= 0 (got " + it->dump() + ")");
}

}  // namespace

bool MooncakeTraceReader::readRow(Row& row) {
  for (;;) {
    if (!std::getline(*in_, line_)) return false;
    ++lineNo_;
    if (lineNo_ == 1 && line_.rfind("\xEF\xBB\xBF", 0) == 0) line_.erase(0, 3);
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (!trimView(line_).empty()) break;
  }
  row.where = name() + ":" + std::to_string(lineNo_);
  json j;
  try {
    j = json::parse(line_);
  } catch (const json::exception&) {
    throw InputError(row.where + ": not a JSON object (malformed JSON)");
  }
  if (!j.is_object()) throw InputError(row.where + ": not a JSON object");
  auto ts = j.find("timestamp");
  if (ts == j.end()) throw InputError(row.where + ": missing field \"timestamp\"");
  if (ts->is_number_unsigned() || (ts->is_number_integer() && ts->get<std::int64_t>() >= 0)) {
    const auto ms = ts->is_number_unsigned() ? ts->get<std::uint64_t>() : static_cast<std::uint64_t>(ts->get<std::int64_t>());
    if (ms > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / 1'000'000))
      throw InputError(row.where + ": \"timestamp\" is too large (got " + ts->dump() + ")");
    row.time_ns = static_cast<std::int64_t>(ms) * 1'000'000;
  } else if (ts->is_number_float() && std::isfinite(ts->get<double>()) && ts->get<double>() >= 0 &&
             ts->get<double>() < 9e12) {
    // A fractional ms value: exact through its shortest decimal text.
    if (!detail::parseDecimalNs(ts->dump(), 1'000'000, row.time_ns))
      throw InputError(row.where + ": \"timestamp\" is not a number of milliseconds >= 0 (got " + ts->dump() + ")");
  } else {
    throw InputError(row.where + ": \"timestamp\" must be a number of milliseconds >= 0 (got " + ts->dump() + ")");
  }
  row.input = tokenField(j, "input_length", row.where);
  row.answer = tokenField(j, "output_length", row.where);
  ids_.clear();
  if (auto h = j.find("hash_ids"); h != j.end() && !h->is_null()) {
    if (!h->is_array()) throw InputError(row.where + ": \"hash_ids\" must be a list of integers");
    ids_.reserve(h->size());
    for (const auto& e : *h) {
      if (e.is_number_unsigned() && e.get<std::uint64_t>() <= static_cast<std::uint64_t>(
                                                              std::numeric_limits<std::int64_t>::max()))
        ids_.push_back(static_cast<std::int64_t>(e.get<std::uint64_t>()));
      else if (e.is_number_integer() && !e.is_number_unsigned())
        ids_.push_back(e.get<std::int64_t>());
      else
        throw InputError(row.where + ": \"hash_ids\" must be a list of integers (got " + e.dump() + ")");
    }
    if (ids_.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw InputError(row.where + ": \"hash_ids\" is too long");
  }
  row.prefix_blocks = static_cast<std::int32_t>(ids_.size());
  row.prefix_hash = hashMooncakeIds(ids_);
  return true;
}

void MooncakeTraceReader::onEmit(const Row&, RequestSpec& out) {
  lastIds_.swap(ids_);
  // Token identity for the prefix cache: the ids as given, one per 512
  // tokens, clipped at the (possibly context-clipped) prompt's end.
  constexpr std::int32_t kMooncakeBlock = 512;
  out.segments.reserve(lastIds_.size());
  for (std::size_t k = 0; k < lastIds_.size(); ++k) {
    const std::int64_t start = static_cast<std::int64_t>(k) * kMooncakeBlock;
    if (start >= out.input) break;
    const auto len = static_cast<std::int32_t>(std::min<std::int64_t>(kMooncakeBlock, out.input - start));
    out.segments.push_back(TokenSegment{static_cast<std::uint64_t>(lastIds_[k]), 0, len});
  }
}

}  // namespace sl
