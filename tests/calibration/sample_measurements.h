#pragma once
// The sample measurements shipped in samples/calibration/: synthetic rows
// from the default coefficients with ±1 % noise (sl::synthesizeMeasurements),
// so users can try `servelab-cli calibrate` and tests can check the file
// has not drifted from its generator (gen_sample_measurements).
#include <string>

#include "cost/calibration.h"
#include "cost/presets.h"

namespace sl::testing {

inline constexpr const char* kSampleMeasurementsFile = "samples/calibration/h100-sxm-80g_llama-3.1-8b.csv";
inline constexpr const char* kSampleGpu = "h100-sxm-80g";
inline constexpr const char* kSampleModel = "llama-3.1-8b";

inline std::string sampleMeasurementsCsv() {
  const PresetRegistry& reg = PresetRegistry::builtin();
  const auto rows = synthesizeMeasurements(reg.gpu(kSampleGpu), reg.model(kSampleModel), CostCoefficients{},
                                           /*count=*/150, /*seed=*/20240601, /*noise=*/0.01, {1, 2, 4});
  std::string s = measurementsCsvHeader() + "\n";
  for (const Measurement& m : rows) s += measurementCsvRow(m) + "\n";
  return s;
}

}  // namespace sl::testing
