// Regenerates the sample measurements file:
//   gen_sample_measurements <repo>/samples/calibration/h100-sxm-80g_llama-3.1-8b.csv
// (test_calibration checks the committed file equals what this writes).
#include <cstdio>
#include <exception>

#include "sample_measurements.h"
#include "util/atomic_file.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.csv\n", argv[0]);
    return 2;
  }
  try {
    sl::writeFileAtomic(argv[1], sl::testing::sampleMeasurementsCsv());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gen_sample_measurements: %s\n", e.what());
    return 1;
  }
  return 0;
}
