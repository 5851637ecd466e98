#include "engine/decision_log.h"

#include "engine/policy_api.h"

#include <cstdio>

namespace sl {

const char* decisionSelectionName(DecisionSelection s) {
  switch (s) {
    case DecisionSelection::SloFiltered:
      return "SLO-filtered";
    case DecisionSelection::FallbackAll:
      return "fallback all";
    case DecisionSelection::FallbackRA:
      return "fallback r+a";
  }
  return "?";
}

const char* decisionActionName(DecisionAction a) {
  switch (a) {
    case DecisionAction::Placed:
      return "placed";
    case DecisionAction::Migrate:
      return "migrate";
    case DecisionAction::StayedAdaptive:
      return "stayed: adaptive";
    case DecisionAction::StayedSame:
      return "stayed: same instance";
    case DecisionAction::StayedNoMigration:
      return "stayed: no migration";
    case DecisionAction::StayedRefused:
      return "stayed: migrate refused";
  }
  return "?";
}

std::string DecisionLog::reason(const Decision& d) {
  std::string s = decisionSelectionName(d.selection);
  if (d.boundary) {
    s += "; ";
    s += decisionActionName(d.action);
  }
  return s;
}

std::string DecisionLog::reason(const Decision& d, const DecisionCodeNames& names) {
  const auto name = [](const std::vector<std::string>& table, std::uint8_t code) {
    return code < table.size() ? table[code] : "code " + std::to_string(code);
  };
  std::string s = name(names.selections, static_cast<std::uint8_t>(d.selection));
  if (d.boundary) s += "; " + name(names.actions, static_cast<std::uint8_t>(d.action));
  return s;
}

const DecisionCodeNames& DecisionLog::pascalNames() {
  static const DecisionCodeNames names = [] {
    DecisionCodeNames n;
    for (auto s : {DecisionSelection::SloFiltered, DecisionSelection::FallbackAll, DecisionSelection::FallbackRA})
      n.selections.emplace_back(decisionSelectionName(s));
    for (auto a : {DecisionAction::Placed, DecisionAction::Migrate, DecisionAction::StayedAdaptive,
                   DecisionAction::StayedSame, DecisionAction::StayedNoMigration, DecisionAction::StayedRefused})
      n.actions.emplace_back(decisionActionName(a));
    return n;
  }();
  return names;
}

std::string DecisionLog::csv() const {
  std::string out = "time_s,request_id,kind,from,chosen,instance,candidates,selection,action\n";
  out.reserve(out.size() + entries_.size() * 64);
  char buf[96];
  for (const Decision& d : entries_) {
    std::snprintf(buf, sizeof buf, "%lld.%09lld,%lld,%s,%d,%d,%d,", static_cast<long long>(d.time / kNsPerSecond),
                  static_cast<long long>(d.time % kNsPerSecond), static_cast<long long>(d.requestId),
                  d.boundary ? "boundary" : "placement", d.from, d.chosen, d.instance);
    out += buf;
    bool first = true;
    for (std::int32_t c : candidatesOf(d)) {
      if (!first) out += ' ';
      out += std::to_string(c);
      first = false;
    }
    out += ',';
    out += decisionSelectionName(d.selection);
    out += ',';
    out += decisionActionName(d.action);
    out += '\n';
  }
  return out;
}

}  // namespace sl
