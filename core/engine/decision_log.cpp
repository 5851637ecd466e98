#include "engine/decision_log.h"

#include "engine/policy_api.h"
#include "util/csv.h"

#include <cstdio>

namespace sl {

namespace {
std::string codeName(const DecisionCodeNames* names, bool selection, std::uint8_t code) {
  if (names) {
    const std::vector<std::string>& table = selection ? names->selections : names->actions;
    if (code < table.size()) return table[code];
  }
  return "code " + std::to_string(code);
}
}  // namespace

std::string DecisionLog::selectionName(const Decision& d, const DecisionCodeNames* names) {
  return codeName(names, true, d.selection);
}

std::string DecisionLog::actionName(const Decision& d, const DecisionCodeNames* names) {
  return codeName(names, false, d.action);
}

std::string DecisionLog::reason(const Decision& d, const DecisionCodeNames* names) {
  std::string s = selectionName(d, names);
  if (d.boundary) s += "; " + actionName(d, names);
  return s;
}

namespace {
// A decision without a request (request id -1) is about an instance, e.g.
// Arrow's pool flips: kind "instance".
const char* kindName(const Decision& d) {
  if (d.requestId < 0) return "instance";
  return d.boundary ? "boundary" : "placement";
}
}  // namespace

std::string DecisionLog::csv(const DecisionCodeNames* names) const {
  std::string out = "time_s,request_id,kind,from,chosen,instance,candidates,selection,action\n";
  out.reserve(out.size() + entries_.size() * 64);
  char buf[96];
  for (const Decision& d : entries_) {
    std::snprintf(buf, sizeof buf, "%lld.%09lld,%lld,%s,%d,%d,%d,", static_cast<long long>(d.time / kNsPerSecond),
                  static_cast<long long>(d.time % kNsPerSecond), static_cast<long long>(d.requestId),
                  kindName(d), d.from, d.chosen, d.instance);
    out += buf;
    bool first = true;
    for (std::int32_t c : candidatesOf(d)) {
      if (!first) out += ' ';
      out += std::to_string(c);
      first = false;
    }
    out += ',';
    out += csvQuote(selectionName(d, names));
    out += ',';
    out += csvQuote(actionName(d, names));
    out += '\n';
  }
  return out;
}

}  // namespace sl
