#pragma once
// SIGINT (Ctrl-C) and SIGTERM while the CLI runs something it can stop
// cleanly: a run of `run` / `compare` (RunOptions::cancel: the run stops
// and removes what it had begun to write) or a sweep (SweepRunOptions::
// cancel: no new point starts; those under way finish and are kept).
#include <atomic>
#include <csignal>

namespace sl::cli {

/// While it lives, the first SIGINT or SIGTERM sets interruptFlag() and
/// resets the handler (a second one kills at once). A signal the caller
/// ignores (a background job of a script ignores SIGINT) stays ignored.
class InterruptScope {
public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

private:
  struct sigaction oldInt_ {}, oldTerm_ {};
};

/// Set by the handler; what the cancel options point at.
const std::atomic<bool>& interruptFlag();

/// The signal that interrupted (SIGINT or SIGTERM; 0: none).
int interruptSignal();

/// Say `what` on stderr ("servelab-cli: interrupted by SIGINT: <what>"),
/// then end as the signal would have ended the process (a shell sees 128 +
/// its number). Does not return.
[[noreturn]] void endByInterrupt(const char* what);

}  // namespace sl::cli
