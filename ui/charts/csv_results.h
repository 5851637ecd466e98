#pragma once
// Saved run results (a `servelab-cli run --out DIR` folder) read back for the
// charts: timeseries.csv becomes the probe samples the live charts are fed
// with, requests.csv the finished-request points, summary.json the instance
// count and the scenario (for the KV capacity). Qt-free. Every problem is an
// InputError naming the file (and the line for CSV rows).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/observer.h"

namespace sl::ui {


/// One row of requests.csv that the charts use.
struct SavedRequest {
  double reasoning = 0;
  double ttftS = -1;  // -1: no first visible token
  double tpotS = -1;
  double finishS = -1;
  double qoe = -1;
  bool finished = false;
};

struct SavedResults {
  std::string dir;
  int instances = 0;
  std::vector<ProbeSample> probes;     // from timeseries.csv (empty if not loaded)
  std::vector<SavedRequest> requests;  // from requests.csv (empty if not loaded)
  /// GPU KV capacity (blocks) per instance, from summary.json's scenario; -1 unknown.
  std::int64_t gpuCapacityBlocks = -1;
  std::string capacityError;  // why it is unknown
};

enum SavedParts : unsigned {
  kSavedTimeseries = 1u << 0,
  kSavedRequests = 1u << 1,
};

/// Read the parts asked for (summary.json is always read). InputError when the
/// folder or a needed file is missing or malformed ("DIR/file.csv:LINE: ...").
SavedResults loadSavedResults(const std::string& dir, unsigned parts);

/// Parse timeseries.csv text (`name` for messages); `instances` from its header.
std::vector<ProbeSample> parseTimeseriesCsv(const std::string& text, const std::string& name, int* instances);
std::vector<SavedRequest> parseRequestsCsv(const std::string& text, const std::string& name);

/// A generic chart CSV (header row, then rows): columns and cells as text.
struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};
CsvTable parseCsvTable(const std::string& text, const std::string& name);

}  // namespace sl::ui
