#pragma once
// One request as a workload produces it (10-engine.md "Requests").
#include <cstdint>
#include <vector>

#include "util/time.h"

namespace sl {

/// A run of tokens with a shared identity, for the prefix cache
/// (docs/engine.md "Prefix caching"): tokens `offset .. offset+length-1` of
/// the content `id`. Two requests whose prompts list the same pieces at the
/// same positions share those tokens' KV.
struct TokenSegment {
  std::uint64_t id = 0;
  std::int32_t offset = 0;
  std::int32_t length = 0;
  friend bool operator==(const TokenSegment&, const TokenSegment&) = default;
};

/// The identity of a request's tokens the workload does not name: the rest
/// of its prompt (after its segments) and its generated tokens. A follow-up
/// turn names its history with these (workload/session.h).
std::uint64_t promptTailSegmentId(std::int64_t requestId);
std::uint64_t outputSegmentId(std::int64_t requestId);

struct RequestSpec {
  std::int64_t id = 0;          ///< 0, 1, 2, ... in arrival order
  SimTime arrival = 0;          ///< ns since simulation start
  std::int32_t input = 1;       ///< prompt tokens, >= 1
  std::int32_t reasoning = 0;   ///< reasoning tokens R, >= 0 (0: non-reasoning)
  std::int32_t answer = 1;      ///< answer tokens A, >= 1; output = R + A
  std::int32_t domain = -1;     ///< optional domain tag (presets.h kDomain*), -1: none
  /// Prefix identity from a trace that has one (Mooncake `hash_ids`, one id
  /// per 512-token prompt block), kept for prefix-cache work: a 64-bit hash
  /// of the whole id list and the list's length. 0 / 0: none.
  std::int32_t prefix_blocks = 0;
  std::uint64_t prefix_hash = 0;
  /// The prompt's token identity from its first token (empty: the whole
  /// prompt is the request's own). Read only when prefix caching is on.
  std::vector<TokenSegment> segments;
  /// Multi-turn session (workload.prefix.turns), -1: none.
  std::int64_t session = -1;

  std::int64_t output() const { return static_cast<std::int64_t>(reasoning) + answer; }
  friend bool operator==(const RequestSpec&, const RequestSpec&) = default;
};

}  // namespace sl
