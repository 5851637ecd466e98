#include "cli/progress.h"

#include <cstdio>
#include <unistd.h>

namespace sl::cli {

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled && isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressBar::~ProgressBar() { done(); }

void ProgressBar::update(double fraction, double simSeconds) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 || std::chrono::duration<double>(now - last_).count() < 0.1) return;
  last_ = now;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  const double eta = fraction > 0.001 ? elapsed * (1 - fraction) / fraction : -1;
  if (eta >= 0)
    std::fprintf(stderr, "\r[%s] %3.0f%%  sim %.1f s  ETA %.1f s   ", bar.c_str(), fraction * 100, simSeconds, eta);
  else
    std::fprintf(stderr, "\r[%s] %3.0f%%  sim %.1f s   ", bar.c_str(), fraction * 100, simSeconds);
  drawn_ = true;
}

void ProgressBar::done() {
  if (drawn_) std::fprintf(stderr, "\r%*s\r", 70, "");
  drawn_ = false;
}

}  // namespace sl::cli
