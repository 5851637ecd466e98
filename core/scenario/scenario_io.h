#pragma once
// Scenario JSON <-> Scenario struct (60-cli-formats.md, docs/scenario-format.md).
//
// Loading is strict: every field is optional (spec.h holds the defaults, so
// "{}" is valid), but an unknown key, a wrong type or an out-of-range value is
// an sl::InputError whose message starts with the source name and names the
// JSON path, e.g.
//   "scenario.json: unknown field 'workload.arival' (did you mean 'workload.arrival'?)"
//   "scenario.json: workload.arrival.rate: expected a number, got string"
//   "scenario.json: workload.arrival.rate: must be > 0 (got -3)"
// Preset ids (gpu, model, workload preset, policy id/router/knobs, cost
// overrides) are not checked here: their registries do that later.
//
// Saving is canonical: every field, a fixed key order, optional fields as
// null, so dumpScenario(parseScenario(parse(dumpScenario(s)))) == dumpScenario(s).
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/spec.h"

namespace sl {

/// Build a Scenario from parsed JSON. `source_name` (usually the file name)
/// prefixes every error message. base_dir is left at ".".
Scenario parseScenario(const nlohmann::json& j, const std::string& source_name);

/// Read and parse a scenario file. A missing/unreadable file or a JSON syntax
/// error is an sl::InputError naming the file (and "line:column" for syntax
/// errors). Sets Scenario::base_dir to the file's folder ("." for a bare name).
Scenario loadScenarioFile(const std::string& path);

/// Read a file as JSON only (no scenario validation), with the same error
/// messages as loadScenarioFile. For the CLI: load, apply --set overrides,
/// then parseScenario(doc, path) and set base_dir with scenarioBaseDir(path).
nlohmann::json loadJsonFile(const std::string& path);

/// The folder relative paths in the scenario file at `path` resolve against.
std::string scenarioBaseDir(const std::string& path);

/// Canonical JSON: every field, key order of 60-cli-formats.md (schema_version,
/// cluster, model, workload, policy, slo, run), optional fields as null.
/// base_dir is not saved.
nlohmann::ordered_json scenarioToJson(const Scenario& s);

/// scenarioToJson(s) indented by 2 spaces, with a trailing newline.
std::string dumpScenario(const Scenario& s);

/// Throws sl::InputError (prefixed by `source_name`) if `s` is not a valid
/// scenario, i.e. if parseScenario(scenarioToJson(s)) would fail. For the GUI
/// and for scenarios built in code.
void validateScenario(const Scenario& s, const std::string& source_name = "scenario");

/// Apply one CLI `--set KEY.PATH=VALUE` to a scenario document. VALUE is taken
/// as JSON if it parses as JSON (12, 0.5, true, null, "x", {"a":1}), otherwise
/// as a plain string (fcfs, llama-3.1-8b). Missing (or null) intermediate
/// objects are created; a numeric segment indexes an existing array element.
/// Alias: "workload.rate" means "workload.arrival.rate". The value itself is
/// checked later, by parseScenario. Bad syntax (no '=', empty key or segment,
/// walking through a non-object) is an sl::InputError naming the option, e.g.
/// "--set 'workload.rate': expected KEY.PATH=VALUE (e.g. workload.arrival.rate=12)".
void applySetOverride(nlohmann::json& doc, const std::string& assignment);

}  // namespace sl
