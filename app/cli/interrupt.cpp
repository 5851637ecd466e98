#include "cli/interrupt.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace sl::cli {

namespace {
std::atomic<bool> gInterrupted{false};
volatile std::sig_atomic_t gSignal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void onInterrupt(int sig) {
  gSignal = sig;
  gInterrupted.store(true, std::memory_order_relaxed);
}
}  // namespace

InterruptScope::InterruptScope() {
  struct sigaction sa {};
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, nullptr, &oldInt_);
  sigaction(SIGTERM, nullptr, &oldTerm_);
  if (oldInt_.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, nullptr);
  if (oldTerm_.sa_handler != SIG_IGN) sigaction(SIGTERM, &sa, nullptr);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &oldInt_, nullptr);
  sigaction(SIGTERM, &oldTerm_, nullptr);
}

const std::atomic<bool>& interruptFlag() { return gInterrupted; }

int interruptSignal() { return gSignal; }

void endByInterrupt(const char* what) {
  const int sig = gSignal != 0 ? static_cast<int>(gSignal) : SIGINT;
  std::fprintf(stderr, "servelab-cli: interrupted by %s: %s\n", sig == SIGTERM ? "SIGTERM" : "SIGINT", what);
  std::fflush(stderr);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  std::_Exit(128 + sig);
}

}  // namespace sl::cli
