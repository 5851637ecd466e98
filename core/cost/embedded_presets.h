#pragma once
// The JSON files of resources/{hardware,models,fabric,collectives,engines}/, embedded into
// core_cost at build time (see CMakeLists.txt). Internal to core/cost.
#include <span>

namespace sl::costdetail {

struct EmbeddedFile {
  const char* path;  ///< relative to resources/, e.g. "hardware/h100-sxm-80g.json"
  const char* text;  ///< the file's JSON text
};

/// All embedded preset files (hardware/, models/, fabric/), sorted by path.
std::span<const EmbeddedFile> embeddedPresetFiles();
/// The measured collectives of resources/collectives/ (collectives.h), sorted by path.
std::span<const EmbeddedFile> embeddedCollectiveFiles();
/// resources/alltoall/*.json (DeepEP's dispatch / combine measurements).
std::span<const EmbeddedFile> embeddedAllToAllFiles();
/// resources/speculative/*.json (acceptance presets, cost/speculative.h).
std::span<const EmbeddedFile> embeddedSpeculativeFiles();
/// resources/pricing/*.json (GPU prices and board power, cost/pricing.h).
std::span<const EmbeddedFile> embeddedPricingFiles();
/// The engine-generation presets of resources/engines/ (engine_presets.h), sorted by path.
std::span<const EmbeddedFile> embeddedEngineFiles();

}  // namespace sl::costdetail
