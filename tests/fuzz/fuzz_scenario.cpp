// libFuzzer target: JSON text -> nlohmann::json -> sl::parseScenario. A JSON
// syntax error (nlohmann::json::parse_error) and sl::InputError are the
// expected outcomes for bad input; a crash, another exception or a sanitizer
// report is a finding. A scenario that loads must also survive the canonical
// round trip dump -> parse -> dump unchanged (scenario_io.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/scenario_io.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  sl::Scenario s;
  try {
    s = sl::parseScenario(doc, "fuzz.json");
  } catch (const sl::InputError&) {
    return 0;  // expected for bad input
  }
  // Loaded: the canonical form must load again (an InputError here escapes
  // and is a finding) and dump to the same text.
  const std::string once = sl::dumpScenario(s);
  const std::string twice = sl::dumpScenario(sl::parseScenario(nlohmann::json::parse(once), "fuzz-roundtrip.json"));
  if (once != twice) __builtin_trap();
  sl::validateScenario(s, "fuzz.json");
  return 0;
}
