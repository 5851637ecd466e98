// Identities of the tokens a workload does not name (request_spec.h).
#include "workload/request_spec.h"

#include "util/rng.h"

namespace sl {

std::uint64_t promptTailSegmentId(std::int64_t requestId) {
  return hashCombine(fnv1a64("servelab-prompt-tail"), static_cast<std::uint64_t>(requestId));
}

std::uint64_t outputSegmentId(std::int64_t requestId) {
  return hashCombine(fnv1a64("servelab-output"), static_cast<std::uint64_t>(requestId));
}

}  // namespace sl
