// The CLI's `--set KEY.PATH=VALUE` overrides on a scenario document
// (scenario_io.h: applySetOverride).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario_io.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {

using nlohmann::json;
using nlohmann::ordered_json;

void applySetOverride(nlohmann::json& doc, const std::string& assignment) {
  const std::string opt = "--set '" + assignment + "'";
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) {
    throw InputError(opt + ": expected KEY.PATH=VALUE (e.g. workload.arrival.rate=12)");
  }
  const std::string key(trim(std::string_view(assignment).substr(0, eq)));
  const std::string value = assignment.substr(eq + 1);
  if (key.empty()) throw InputError(opt + ": empty key before '=' (expected KEY.PATH=VALUE)");

  std::vector<std::string> segs;
  for (std::string_view part : split(key, '.')) {
    if (part.empty()) throw InputError(opt + ": empty segment in key '" + key + "'");
    segs.emplace_back(part);
  }
  if (segs.size() == 2 && segs[0] == "workload" && segs[1] == "rate") {
    segs = {"workload", "arrival", "rate"};  // documented shorthand (60-cli-formats.md)
  }

  json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) parsed = value;  // not JSON: a plain string

  if (doc.is_null()) doc = json::object();
  json* node = &doc;
  std::string walked;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const std::string& seg = segs[i];
    const bool last = i + 1 == segs.size();
    if (node->is_null()) *node = json::object();
    json* next = nullptr;
    if (node->is_object()) {
      next = &(*node)[seg];
    } else if (node->is_array()) {
      const auto idx = parseInt64(seg);
      if (!idx || *idx < 0 || static_cast<std::size_t>(*idx) >= node->size()) {
        throw InputError(opt + ": '" + (walked.empty() ? std::string("(document)") : walked) +
                         "' is an array of " + std::to_string(node->size()) +
                         " elements; '" + seg + "' is not a valid index");
      }
      next = &(*node)[static_cast<std::size_t>(*idx)];
    } else {
      throw InputError(opt + ": '" + (walked.empty() ? std::string("(document)") : walked) +
                       "' is a " + node->type_name() + ", not an object");
    }
    walked = walked.empty() ? seg : walked + "." + seg;
    if (last) {
      *next = std::move(parsed);
      return;
    }
    node = next;
  }
}

}  // namespace sl
