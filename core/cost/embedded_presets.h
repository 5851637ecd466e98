#pragma once
// The preset JSON files of resources/{hardware,models,fabric}/, embedded into
// core_cost at build time (see CMakeLists.txt). Internal to core/cost.
#include <span>

namespace sl::costdetail {

struct EmbeddedFile {
  const char* path;  ///< relative to resources/, e.g. "hardware/h100-sxm-80g.json"
  const char* text;  ///< the file's JSON text
};

/// All embedded preset files, sorted by path.
std::span<const EmbeddedFile> embeddedPresetFiles();

}  // namespace sl::costdetail
