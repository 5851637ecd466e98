#include "workload/shared_prefix.h"

#include <algorithm>

#include "util/rng.h"
#include "workload/workload_source.h"

namespace sl {

std::uint64_t systemPromptSegmentId(int k) {
  return hashCombine(fnv1a64("servelab-system-prompt"), static_cast<std::uint64_t>(k));
}

void applySystemPrompt(const PrefixSpec& p, std::int64_t index, int maxContext, RequestSpec& out) {
  if (p.system_prompt_tokens <= 0) return;
  const std::int64_t in = static_cast<std::int64_t>(out.input) + p.system_prompt_tokens;
  clipRequestLengths(in, out.reasoning, out.answer, maxContext, out);
  const auto k = static_cast<int>(index % std::max(1, p.system_prompts));
  out.segments.assign(1, TokenSegment{systemPromptSegmentId(k), 0, std::min(p.system_prompt_tokens, out.input)});
}

void SessionBook::issue(std::int64_t prev, RequestSpec& out) {
  Session s;
  auto it = prev >= 0 ? live_.find(prev) : live_.end();
  bool follows = false;
  if (it != live_.end()) {
    const Session& p = it->second;
    const std::int64_t input = p.tokens + out.input;
    if (p.turn < spec_.turns && input + out.output() <= maxContext_) {
      s.history = p.history;
      s.tokens = p.tokens;
      s.turn = p.turn + 1;
      s.index = p.index;
      out.input = static_cast<std::int32_t>(input);
      out.segments = p.history;
      follows = true;
    }
    live_.erase(it);
  }
  if (!follows) {
    s.index = sessions_++;
    out.segments.clear();
    applySystemPrompt(spec_, s.index, maxContext_, out);
    s.history = out.segments;
    s.tokens = 0;
  }
  out.session = s.index;
  // The request's own new prompt tokens and its output join the history.
  std::int64_t covered = 0;
  for (const TokenSegment& g : out.segments) covered += g.length;
  if (covered < out.input)
    s.history.push_back(TokenSegment{promptTailSegmentId(out.id), 0, static_cast<std::int32_t>(out.input - covered)});
  s.history.push_back(TokenSegment{outputSegmentId(out.id), 0, static_cast<std::int32_t>(out.output())});
  s.tokens = static_cast<std::int64_t>(out.input) + out.output();
  live_[out.id] = std::move(s);
}

}  // namespace sl
