#include "cost/frontend.h"

#include <cmath>

#include "cost/suggest.h"
#include "util/error.h"

namespace sl {

namespace {
struct TimeField {
  const char* key;
  double FrontEndSpec::*ptr;
};
constexpr TimeField kTimes[] = {
    {"http_us", &FrontEndSpec::http_us},
    {"tokenize_us", &FrontEndSpec::tokenize_us},
    {"tokenize_us_per_ktok", &FrontEndSpec::tokenize_us_per_ktok},
    {"handoff_us", &FrontEndSpec::handoff_us},
    {"stream_us", &FrontEndSpec::stream_us},
    {"detokenize_us_per_seq", &FrontEndSpec::detokenize_us_per_seq},
};
constexpr const char* kServers = "api_servers";
constexpr const char* kAsync = "async_scheduling";
}  // namespace

const std::vector<std::string>& FrontEndSpec::keys() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v;
    for (const auto& f : kTimes) v.emplace_back(f.key);
    v.emplace_back(kServers);
    v.emplace_back(kAsync);
    return v;
  }();
  return k;
}

FrontEndSpec FrontEndSpec::fromJson(const nlohmann::json& j, std::string_view where, const FrontEndSpec& base) {
  FrontEndSpec f = base;
  const std::string w(where);
  if (j.is_null()) return f;
  if (!j.is_object()) throw InputError(w + ": must be an object of front-end fields");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string place = w + "." + it.key();
    const std::string got = " (got " + it->dump() + ")";
    if (it.key() == kAsync) {
      if (!it->is_boolean()) throw InputError(place + ": must be true or false" + got);
      f.async_scheduling = it->get<bool>();
      continue;
    }
    if (it.key() == kServers) {
      if (!it->is_number()) throw InputError(place + ": must be an integer in [1, 4096]" + got);
      const double v = it->get<double>();
      if (!(v >= 1 && v <= 4096 && std::floor(v) == v))
        throw InputError(place + ": must be an integer in [1, 4096]" + got);
      f.api_servers = static_cast<int>(v);
      continue;
    }
    const TimeField* field = nullptr;
    for (const auto& t : kTimes)
      if (it.key() == t.key) field = &t;
    if (!field) throw InputError(costdetail::unknownKeyMessage(place, "front-end field", it.key(), keys()));
    if (!it->is_number()) throw InputError(place + ": must be a number (got " + it->dump() + ")");
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < 0) throw InputError(place + ": must be a finite number >= 0" + got);
    if (v > 1e7) throw InputError(place + ": must be at most 1e7 us (10 s)" + got);
    f.*(field->ptr) = v;
  }
  return f;
}

nlohmann::json FrontEndSpec::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& t : kTimes) j[t.key] = this->*(t.ptr);
  j[kServers] = api_servers;
  j[kAsync] = async_scheduling;
  return j;
}

}  // namespace sl
