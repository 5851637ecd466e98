#pragma once
// Running a sweep (docs/sweeps.md): every point of a shard on a thread pool,
// one atomically written record per finished point (so an interrupted sweep
// resumes without redoing them, and a half-written record never exists), then
// results.csv / results.json in point order — byte-identical whatever the
// thread count or the sharding. `mergeSweep` combines shard folders.
//
// Output folder:
//   sweep.json              normalized spec (hash, axes, points, metrics)
//   points/NNNNNN.json      one record per finished point
//   shard-K-of-N.json       written when shard K/N has finished every point
//   results.csv, results.json   unsharded runs (N = 1) and `merge`
//   runs/NNNNNN/            each point's run outputs (--keep-runs)
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/execute.h"
#include "sweep/sweep_spec.h"

namespace sl::sweep {

struct Shard {
  int index = 0;  // K, 0-based
  int count = 1;  // N
};
/// Parses "K/N" (0 <= K < N); InputError naming `option` otherwise.
Shard parseShard(const std::string& text, const std::string& option = "--shard");
/// Points of shard K/N: every index i with i % N == K.
std::vector<std::size_t> shardPoints(std::size_t total, const Shard& shard);

struct SweepRunOptions {
  std::string outDir;
  int jobs = 0;          // worker threads; <= 0: all cores
  Shard shard;
  bool keepRuns = false;  // write each point's run outputs under runs/NNNNNN/
  OutputSet outputs;      // which run outputs --keep-runs writes (--outputs; default: all)
  bool resume = false;    // reuse valid point records already in outDir
  /// Called after each finished point with (points done, points in this
  /// shard); done counts reused points. Called from worker threads, one at a time.
  std::function<void(std::size_t, std::size_t)> progress;
  const std::atomic<bool>* cancel = nullptr;  // stop starting points when true
};

struct SweepRunReport {
  std::size_t points = 0;   // in this shard
  std::size_t reused = 0;   // valid records found (--resume)
  std::size_t ran = 0;
  bool cancelled = false;
  bool wroteResults = false;  // results.csv/json written (unsharded, complete)
};

/// One finished point: axis values, metric values, run fingerprint.
struct PointResult {
  std::size_t index = 0;
  std::vector<nlohmann::ordered_json> values;
  std::vector<nlohmann::ordered_json> metrics;  // in spec.metrics order
  std::string fingerprint;
};

/// Runs one point in memory (and writes its run outputs to `keepDir` unless empty).
PointResult runPoint(const SweepSpec& spec, std::size_t index, const std::string& keepDir = "",
                     const OutputSet& outputs = {});

/// Runs the shard of `spec` given in `opt`. Throws InputError when outDir
/// already holds a different sweep.
SweepRunReport runSweep(const SweepSpec& spec, const SweepRunOptions& opt);

/// results.csv: header "point,<axes...>,<metrics...>,fingerprint", one row per point.
std::string resultsCsv(const nlohmann::ordered_json& normalizedSpec, const std::vector<PointResult>& points);
/// results.json: {"sweep": hash, "axes", "metrics", "points": [...]}.
std::string resultsJson(const nlohmann::ordered_json& normalizedSpec, const std::vector<PointResult>& points);

struct MergeReport {
  std::size_t points = 0;
  int shards = 0;
};
/// Checks that `dirs` hold the shards 0..N-1 of one sweep (same spec hash),
/// each exactly once, with every point present exactly once, then writes
/// outDir/results.csv, results.json and sweep.json. InputError (naming the
/// folder and the shard or point) otherwise, before anything is written.
MergeReport mergeSweep(const std::vector<std::string>& dirs, const std::string& outDir);

}  // namespace sl::sweep
