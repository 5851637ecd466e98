#pragma once
// A one-line progress bar with ETA on stderr, drawn only when stderr is a
// terminal and the run has lasted more than a second.
#include <chrono>
#include <string>

namespace sl::cli {

class ProgressBar {
public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  void update(double fraction, double simSeconds);
  void done();

private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace sl::cli
