#pragma once
// Prompts that share prefixes (workload.prefix; docs/workloads.md "Shared
// prefixes"): the shared system prompt and the history of multi-turn
// sessions, as RequestSpec::segments for the engine's prefix cache.
#include <cstdint>
#include <map>
#include <vector>

#include "scenario/spec.h"
#include "workload/request_spec.h"

namespace sl {

std::uint64_t systemPromptSegmentId(int k);

/// Prepend system prompt `index mod system_prompts` to `out` (its input
/// grows by system_prompt_tokens, clipped to the context window like any
/// prompt; its segments become the system prompt's). No-op without one.
void applySystemPrompt(const PrefixSpec& p, std::int64_t index, int maxContext, RequestSpec& out);

/// Multi-turn sessions over closed-loop clients: a follow-up's prompt is
/// its session's history (every earlier prompt and output token, in order)
/// plus its own new input; a session ends after `turns` turns, or earlier
/// when the next prompt + output would not fit the context window (the
/// client then starts a new session).
class SessionBook {
public:
  SessionBook(const PrefixSpec& p, int maxContext) : spec_(p), maxContext_(maxContext) {}
  /// `out` (lengths drawn, id set) opens a new session, or continues the
  /// one of request `prev` (-1: none) -- its prompt then carries the history.
  void issue(std::int64_t prev, RequestSpec& out);
  /// Request `id` left the run: its session is kept until its follow-up is
  /// issued (or dropped when the client retires: forget).
  void forget(std::int64_t id) { live_.erase(id); }
  std::int64_t sessionsStarted() const { return sessions_; }

private:
  struct Session {
    std::vector<TokenSegment> history;  // the request's prompt and output tokens
    std::int64_t tokens = 0;
    int turn = 1;
    std::int64_t index = 0;  // session number (system prompt choice)
  };
  PrefixSpec spec_;
  int maxContext_;
  std::map<std::int64_t, Session> live_;  // by the id of the session's latest request
  std::int64_t sessions_ = 0;
};

}  // namespace sl
