#include "scenario/scenario_io.h"

#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "util/error.h"

namespace sl {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

Scenario parse(const std::string& text) { return parseScenario(json::parse(text), "s.json"); }

// The InputError message produced by parsing `text` ("" if it parses).
std::string errorOf(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// ---- defaults -----------------------------------------------------------------

TEST(ScenarioParse, EmptyObjectGivesAllDefaults) {
  const Scenario s = parse("{}");
  const Scenario d;
  EXPECT_EQ(s.schema_version, 1);
  EXPECT_EQ(s.cluster.instances, 4);
  EXPECT_EQ(s.cluster.gpu, "h100-sxm-80g");
  EXPECT_EQ(s.cluster.tp, 1);
  EXPECT_DOUBLE_EQ(s.cluster.gpu_memory_utilization, 0.9);
  EXPECT_DOUBLE_EQ(s.cluster.kv_capacity_fraction, 1.0);
  EXPECT_EQ(s.cluster.block_size, 16);
  EXPECT_DOUBLE_EQ(s.cluster.watermark, 0.01);
  EXPECT_DOUBLE_EQ(s.cluster.swap_gib, 64);
  EXPECT_EQ(s.cluster.preemption, "swap");
  EXPECT_TRUE(s.cluster.chunked_prefill);
  EXPECT_EQ(s.cluster.max_num_seqs, 256);
  EXPECT_EQ(s.cluster.max_num_batched_tokens, 8192);
  EXPECT_EQ(s.cluster.fabric.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(s.cluster.fabric.nic_gbps, 100);
  EXPECT_FALSE(s.cluster.profile.has_value());
  EXPECT_TRUE(s.cluster.cost.is_object() && s.cluster.cost.empty());
  EXPECT_EQ(s.model, "llama-3.1-8b");
  EXPECT_FALSE(s.workload.preset.has_value());
  EXPECT_EQ(s.workload.arrival.process, ArrivalSpec::Process::Poisson);
  EXPECT_DOUBLE_EQ(s.workload.arrival.rate, 5.0);
  EXPECT_EQ(s.workload.input_tokens.kind, LengthDist::Kind::Lognormal);
  EXPECT_EQ(s.workload.input_tokens.median, 512.0);
  EXPECT_EQ(s.workload.input_tokens.p90, 2048.0);
  EXPECT_EQ(s.workload.reasoning_tokens.kind, LengthDist::Kind::Constant);
  EXPECT_EQ(s.workload.reasoning_tokens.value, 0.0);
  EXPECT_EQ(s.workload.answer_tokens.kind, LengthDist::Kind::Lognormal);
  EXPECT_EQ(s.workload.answer_tokens.median, 256.0);
  EXPECT_EQ(s.workload.answer_tokens.p90, 1024.0);
  EXPECT_FALSE(s.workload.trace.has_value());
  EXPECT_EQ(s.workload.requests, 2000);
  EXPECT_EQ(s.policy.id, "fcfs");
  EXPECT_EQ(s.policy.router, "least-loaded");
  EXPECT_TRUE(s.policy.knobs.is_object() && s.policy.knobs.empty());
  EXPECT_FALSE(s.slo.ttft_s.has_value());
  EXPECT_FALSE(s.slo.tpot_s.has_value());
  EXPECT_DOUBLE_EQ(s.slo.ttfat_s, 0.25);
  EXPECT_DOUBLE_EQ(s.slo.qoe_tpot_s, 0.1);
  EXPECT_DOUBLE_EQ(s.slo.qoe_threshold, 0.95);
  EXPECT_EQ(s.run.seed, 1u);
  EXPECT_FALSE(s.run.duration_s.has_value());
  EXPECT_DOUBLE_EQ(s.run.probe_interval_s, 1.0);
  EXPECT_EQ(dumpScenario(s), dumpScenario(d));
}

// CascadeInfer's setting (issue 25): vLLM's default batch cap of 1 024, the
// long-context workload preset and the kernel heterogeneity rule all load.
TEST(ScenarioParse, CascadeInferLongContextSetting) {
  const Scenario s = parse(R"({"cluster": {"max_num_seqs": 1024, "cost": {"hetero": "kernel"}},
                              "model": "llama-3.2-3b", "workload": {"preset": "sharegpt-long"}})");
  EXPECT_EQ(s.cluster.max_num_seqs, 1024);
  EXPECT_EQ(s.workload.preset.value_or(""), "sharegpt-long");
}

TEST(ScenarioParse, ReadsTheSpecExample) {
  const Scenario s = parse(R"({
    "schema_version": 1,
    "cluster":  {"instances": 8, "gpu": "h100-96g", "tp": 2,
                 "gpu_memory_utilization": 0.85, "kv_capacity_fraction": 0.5,
                 "block_size": 32, "watermark": 0.02, "swap_gib": 0,
                 "preemption": "recompute", "chunked_prefill": false,
                 "max_num_seqs": 128, "max_num_batched_tokens": 4096,
                 "fabric": {"gpus_per_node": 4, "nic_gbps": 400},
                 "profile": "prof.json"},
    "model":    "r1-distill-qwen-32b",
    "workload": {"preset": "pascal-chat",
                 "arrival": {"process": "gamma", "rate": 2.5, "cv": 3},
                 "input_tokens": {"dist": "uniform", "min": 10, "max": 20},
                 "reasoning_tokens": {"dist": "lognormal", "mu": 6, "sigma": 1, "max": 32000},
                 "answer_tokens": {"dist": "empirical", "path": "lens.csv", "column": "out"},
                 "requests": 500},
    "policy":   {"id": "pascal", "router": "round-robin", "knobs": {"quantum": 250}},
    "slo":      {"ttft_s": 2, "tpot_s": 0.05},
    "run":      {"seed": 42, "duration_s": 3600, "probe_interval_s": 0.5}
  })");
  EXPECT_EQ(s.cluster.instances, 8);
  EXPECT_EQ(s.cluster.tp, 2);
  EXPECT_EQ(s.cluster.preemption, "recompute");
  EXPECT_FALSE(s.cluster.chunked_prefill);
  EXPECT_EQ(s.cluster.fabric.gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(s.cluster.fabric.link_latency_us, 5);  // default kept
  EXPECT_EQ(s.cluster.live_migration.max_concurrent, 3);  // defaults kept
  EXPECT_EQ(s.cluster.live_migration.max_rounds, 8);
  EXPECT_EQ(s.cluster.profile, "prof.json");
  EXPECT_EQ(s.workload.arrival.process, ArrivalSpec::Process::Gamma);
  EXPECT_DOUBLE_EQ(s.workload.arrival.cv, 3);
  EXPECT_EQ(s.workload.input_tokens.kind, LengthDist::Kind::Uniform);
  EXPECT_EQ(s.workload.input_tokens.max, 20);
  EXPECT_FALSE(s.workload.input_tokens.clipMax.has_value());
  EXPECT_EQ(s.workload.reasoning_tokens.mu, 6.0);
  EXPECT_EQ(s.workload.reasoning_tokens.clipMax, 32000.0);
  EXPECT_EQ(s.workload.answer_tokens.column, "out");
  EXPECT_EQ(s.policy.knobs.at("quantum"), 250);
  EXPECT_EQ(s.slo.ttft_s, 2.0);
  EXPECT_EQ(s.run.seed, 42u);
  EXPECT_EQ(s.run.duration_s, 3600.0);
}

// ---- errors name their path ---------------------------------------------------

struct ErrorCase {
  const char* json;
  const char* expected;  // substring of the message
};
// Test names list the case number only (CTest shows this text otherwise).
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << "case expecting '" << c.expected << "'"; }

class ScenarioErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ScenarioErrors, MessageNamesThePlace) {
  const std::string msg = errorOf(GetParam().json);
  ASSERT_FALSE(msg.empty()) << "accepted: " << GetParam().json;
  EXPECT_EQ(msg.rfind("s.json: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos)
      << "message: " << msg << "\nexpected to contain: " << GetParam().expected;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ScenarioErrors,
    ::testing::Values(
        ErrorCase{R"({"workload": {"arrival": {"rate": -3}}})",
                  "s.json: workload.arrival.rate: must be > 0 (got -3)"},
        ErrorCase{R"({"workload": {"arrival": {"rate": 0}}})", "workload.arrival.rate: must be > 0"},
        ErrorCase{R"({"workload": {"arival": {}}})",
                  "s.json: unknown field 'workload.arival' (did you mean 'workload.arrival'?)"},
        ErrorCase{R"({"workload": {"rate": 3}})",
                  "unknown field 'workload.rate' (did you mean 'workload.arrival.rate'?)"},
        ErrorCase{R"({"instances": 3})", "unknown field 'instances' (did you mean 'cluster.instances'?)"},
        ErrorCase{R"({"zzzzzz": 3})", "unknown field 'zzzzzz'"},
        ErrorCase{R"({"workload": {"arrival": {"rate": "fast"}}})",
                  "s.json: workload.arrival.rate: expected a number, got string"},
        ErrorCase{R"({"cluster": {"instances": "4"}})",
                  "cluster.instances: expected an integer, got string"},
        ErrorCase{R"({"cluster": {"instances": 2.5}})", "cluster.instances: expected an integer, got 2.5"},
        ErrorCase{R"({"cluster": {"chunked_prefill": 1}})",
                  "cluster.chunked_prefill: expected true or false, got number"},
        ErrorCase{R"({"cluster": []})", "cluster: expected an object, got array"},
        ErrorCase{R"({"model": 7})", "model: expected a string, got number"},
        ErrorCase{R"({"model": ""})", "model: must not be empty"},
        ErrorCase{R"({"cluster": {"instances": 0}})", "cluster.instances: must be between 1 and 4096 (got 0)"},
        ErrorCase{R"({"cluster": {"instances": 4097}})", "cluster.instances: must be between 1 and 4096"},
        ErrorCase{R"({"cluster": {"tp": 0}})", "cluster.tp: must be >= 1 (got 0)"},
        ErrorCase{R"({"cluster": {"gpu_memory_utilization": 0}})",
                  "cluster.gpu_memory_utilization: must be in (0, 1] (got 0)"},
        ErrorCase{R"({"cluster": {"gpu_memory_utilization": 1.5}})",
                  "cluster.gpu_memory_utilization: must be in (0, 1] (got 1.5)"},
        ErrorCase{R"({"cluster": {"kv_capacity_fraction": 1.01}})", "cluster.kv_capacity_fraction: must be in (0, 1]"},
        ErrorCase{R"({"cluster": {"block_size": 24}})",
                  "cluster.block_size: must be a power of two from 1 to 256 (got 24)"},
        ErrorCase{R"({"cluster": {"block_size": 512}})", "cluster.block_size: must be a power of two"},
        ErrorCase{R"({"cluster": {"watermark": 1}})", "cluster.watermark: must be in [0, 1) (got 1)"},
        ErrorCase{R"({"cluster": {"swap_gib": -1}})", "cluster.swap_gib: must be >= 0 (got -1)"},
        ErrorCase{R"({"cluster": {"preemption": "swpa"}})",
                  "cluster.preemption: must be one of 'swap', 'recompute' (got 'swpa'; did you mean 'swap'?)"},
        ErrorCase{R"({"cluster": {"max_num_seqs": 0}})", "cluster.max_num_seqs: must be >= 1 (got 0)"},
        ErrorCase{R"({"cluster": {"max_num_batched_tokens": -5}})", "cluster.max_num_batched_tokens: must be >= 1"},
        ErrorCase{R"({"cluster": {"fabric": {"nic_gbs": 1}}})",
                  "unknown field 'cluster.fabric.nic_gbs' (did you mean 'cluster.fabric.nic_gbps'?)"},
        ErrorCase{R"({"cluster": {"live_migration": {"max_concurrent": 0}}})",
                  "cluster.live_migration.max_concurrent: must be >= 1 (got 0)"},
        ErrorCase{R"({"cluster": {"live_migration": {"max_round": 2}}})",
                  "unknown field 'cluster.live_migration.max_round' (did you mean 'cluster.live_migration.max_rounds'?)"},
        ErrorCase{R"({"cluster": {"profile": 3}})", "cluster.profile: expected a string or null, got number"},
        ErrorCase{R"({"cluster": {"cost": 3}})", "cluster.cost: expected an object, got number"},
        ErrorCase{R"({"workload": {"requests": 0}})", "workload.requests: must be >= 1 (got 0)"},
        ErrorCase{R"({"run": {"probe_interval_s": 0}})", "run.probe_interval_s: must be > 0 (got 0)"},
        ErrorCase{R"({"run": {"seed": -1}})", "run.seed: must be >= 0 (got -1)"},
        ErrorCase{R"({"run": {"seed": 1.5}})", "run.seed: expected an integer, got 1.5"},
        ErrorCase{R"({"run": {"duration_s": -1}})", "run.duration_s: must be > 0 (got -1)"},
        ErrorCase{R"({"run": {"measure": {"window_s": 0}}})", "run.measure.window_s: must be > 0 (got 0)"},
        ErrorCase{R"({"run": {"measure": {"warmup_s": -5, "window_s": 60}}})",
                  "run.measure.warmup_s: must be >= 0 (got -5)"},
        ErrorCase{R"({"run": {"measure": {"warmup_s": 5}}})", "run.measure: missing required field 'window_s'"},
        ErrorCase{R"({"run": {"measure": 3}})", "run.measure: expected an object or null, got number"},
        ErrorCase{R"({"run": {"measure": {"window": 3}}})", "unknown field 'run.measure.window'"},
        ErrorCase{R"({"run": {"duration_s": 100, "measure": {"window_s": 60}}})",
                  "run.measure: set either run.measure or run.duration_s, not both"},
        ErrorCase{R"({"run": {"rolling_window_s": "x"}})", "run.rolling_window_s: expected a number, got string"},
        ErrorCase{R"({"schema_version": 2})", "schema_version: unsupported schema version 2"},
        ErrorCase{R"({"schema_version": 2, "new_section": {}})", "unsupported schema version 2"},
        ErrorCase{R"({"schema_version": "1"})", "schema_version: expected an integer, got string"},
        ErrorCase{R"({"slo": {"ttft_s": 0}})", "slo.ttft_s: must be > 0 (got 0)"},
        ErrorCase{R"({"slo": {"tpot_s": "1"}})", "slo.tpot_s: expected a number or null, got string"},
        ErrorCase{R"({"slo": {"qoe_threshold": 1.5}})", "slo.qoe_threshold: must be in (0, 1] (got 1.5)"},
        ErrorCase{R"({"slo": {"ttfat": 1}})", "unknown field 'slo.ttfat' (did you mean 'slo.ttfat_s'?)"},
        ErrorCase{R"({"policy": {"id": ""}})", "policy.id: must not be empty"},
        ErrorCase{R"({"policy": {"id": 3}})", "policy.id: expected a string, got number"},
        ErrorCase{R"({"policy": {"knobs": [1]}})", "policy.knobs: expected an object, got array"},
        ErrorCase{R"({"policy": {"knob": {}}})", "unknown field 'policy.knob' (did you mean 'policy.knobs'?)"},
        // arrival processes
        ErrorCase{R"({"workload": {"arrival": {"process": "poison"}}})",
                  "workload.arrival.process: must be one of 'poisson', 'gamma', 'schedule', 'closed' (got 'poison'; "
                  "did you mean 'poisson'?)"},
        ErrorCase{R"({"workload": {"arrival": {"cv": 2}}})",
                  "workload.arrival.cv: not used by process 'poisson'"},
        ErrorCase{R"({"workload": {"arrival": {"process": "gamma", "cv": 0}}})",
                  "workload.arrival.cv: must be > 0 (got 0)"},
        ErrorCase{R"({"workload": {"arrival": {"process": "schedule"}}})",
                  "workload.arrival: process 'schedule' needs a 'schedule' list"},
        ErrorCase{R"({"workload": {"arrival": {"process": "schedule", "schedule": []}}})",
                  "workload.arrival.schedule: must have at least one segment"},
        ErrorCase{R"({"workload": {"arrival": {"process": "schedule", "schedule": [{"duration_s": 0, "rate": 1}]}}})",
                  "workload.arrival.schedule[0].duration_s: must be > 0 (got 0)"},
        ErrorCase{R"({"workload": {"arrival": {"process": "schedule", "schedule": [{"duration_s": 5, "rate": 1}, {"duration_s": 5}]}}})",
                  "workload.arrival.schedule[1]: missing required field 'rate'"},
        ErrorCase{R"({"workload": {"arrival": {"process": "schedule", "schedule": [{"duration_s": 5, "rate": 0}]}}})",
                  "workload.arrival.schedule: at least one segment needs a rate > 0"},
        ErrorCase{R"({"workload": {"arrival": {"process": "schedule", "schedule": [{"duraton_s": 5, "rate": 1}]}}})",
                  "unknown field 'workload.arrival.schedule[0].duraton_s' (did you mean "
                  "'workload.arrival.schedule[0].duration_s'?)"},
        // length distributions
        ErrorCase{R"({"workload": {"input_tokens": {"median": 5}}})",
                  "workload.input_tokens: missing required field 'dist'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "normal"}}})",
                  "workload.input_tokens.dist: must be one of 'constant', 'uniform', 'lognormal', 'empirical', 'mixture', 'exponential'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "constant"}}})",
                  "workload.input_tokens: dist 'constant' needs field 'value'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "constant", "value": 5, "median": 3}}})",
                  "workload.input_tokens.median: not used by dist 'constant'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "constant", "vaule": 5}}})",
                  "unknown field 'workload.input_tokens.vaule' (did you mean 'workload.input_tokens.value'?)"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "constant", "value": 5, "weight": 1}}})",
                  "unknown field 'workload.input_tokens.weight'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "uniform", "min": 10, "max": 5}}})",
                  "workload.input_tokens.max: must be >= min (got 5 < 10)"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "lognormal", "median": 100}}})",
                  "workload.input_tokens: dist 'lognormal' needs field 'p90'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "lognormal", "median": 100, "p90": 50}}})",
                  "workload.input_tokens.p90: must be > median (got 50 <= 100)"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "lognormal", "median": 100, "sigma": 1}}})",
                  "workload.input_tokens: dist 'lognormal' needs either 'median' and 'p90' or 'mu' and 'sigma'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "lognormal"}}})",
                  "needs either 'median' and 'p90' or 'mu' and 'sigma'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "lognormal", "mu": 5, "sigma": 0}}})",
                  "workload.input_tokens.sigma: must be > 0 (got 0)"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "constant", "value": 5, "min": 10, "max": 2}}})",
                  "workload.input_tokens.max: must be >= min (got 2 < 10)"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "empirical"}}})",
                  "workload.input_tokens: dist 'empirical' needs field 'path'"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "mixture", "parts": []}}})",
                  "workload.input_tokens.parts: must have at least one part"},
        ErrorCase{R"({"workload": {"input_tokens": {"dist": "mixture", "parts": {}}}})",
                  "workload.input_tokens.parts: expected an array, got object"},
        ErrorCase{R"({"workload": {"answer_tokens": {"dist": "mixture", "parts": [
                      {"weight": 1, "dist": "constant", "value": 3},
                      {"weight": 1, "dist": "lognormal", "medain": 5, "p90": 9}]}}})",
                  "unknown field 'workload.answer_tokens.parts[1].medain' (did you mean "
                  "'workload.answer_tokens.parts[1].median'?)"},
        ErrorCase{R"({"workload": {"answer_tokens": {"dist": "mixture", "parts": [
                      {"weight": 0, "dist": "constant", "value": 3}]}}})",
                  "workload.answer_tokens.parts[0].weight: must be > 0 (got 0)"},
        ErrorCase{R"({"workload": {"answer_tokens": {"dist": "mixture", "parts": [
                      {"dist": "constant", "value": 3}]}}})",
                  "workload.answer_tokens.parts[0]: missing required field 'weight'"},
        // trace
        ErrorCase{R"({"workload": {"trace": {}}})", "workload.trace: missing required field 'path'"},
        ErrorCase{R"({"workload": {"trace": {"path": "t.csv", "format": "azur"}}})",
                  "workload.trace.format: must be one of 'auto', 'azure', 'burstgpt', 'mooncake', 'servelab' "
                  "(got 'azur'; did you mean 'azure'?)"},
        ErrorCase{R"({"workload": {"trace": {"path": "t.csv", "time_scale": 0}}})",
                  "workload.trace.time_scale: must be > 0 (got 0)"},
        ErrorCase{R"({"workload": {"trace": {"path": "t.csv", "max_requests": 0}}})",
                  "workload.trace.max_requests: must be >= 1 (got 0)"},
        ErrorCase{R"({"workload": {"trace": {"path": "t.csv", "window": {"start_s": 10, "end_s": 5}}}})",
                  "workload.trace.window.end_s: must be > start_s (got 5 <= 10)"},
        ErrorCase{R"({"workload": {"trace": {"path": "t.csv", "window": {"start": 1}}}})",
                  "unknown field 'workload.trace.window.start' (did you mean 'workload.trace.window.start_s'?)"},
        ErrorCase{R"({"workload": {"trace": {"path": "t.csv", "lenient": "yes"}}})",
                  "workload.trace.lenient: expected true or false, got string"},
        ErrorCase{R"([1, 2])", "expected a JSON object at the top level, got array"}));

TEST(ScenarioParse, HostileNestingIsRejectedNotCrashed) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string msg = errorOf(R"({"policy": {"knobs": {"a": )" + deep + "}}}");
  EXPECT_NE(msg.find("policy.knobs: nested more than"), std::string::npos) << msg.substr(0, 200);
  std::string nested = R"({"dist": "constant", "value": 1, "weight": 1})";
  for (int i = 0; i < 20; ++i) nested = R"({"dist": "mixture", "weight": 1, "parts": [)" + nested + "]}";
  const std::string msg2 =
      errorOf(R"({"workload": {"input_tokens": {"dist": "mixture", "parts": [)" + nested + "]}}}");
  EXPECT_NE(msg2.find("mixtures nested too deeply"), std::string::npos) << msg2;
}

// ---- canonical form and round trip ----------------------------------------------

// run.measure is written only when set: a scenario without it keeps the
// canonical bytes (and fingerprints) it had before the field existed.
TEST(ScenarioIo, MeasureWindowWrittenOnlyWhenSet) {
  const std::string plain = dumpScenario(parse("{}"));
  EXPECT_EQ(plain.find("measure"), std::string::npos);
  const Scenario m = parse(R"({"run": {"measure": {"warmup_s": 120, "window_s": 600}}})");
  ASSERT_TRUE(m.run.measure.has_value());
  EXPECT_DOUBLE_EQ(m.run.measure->warmup_s, 120);
  EXPECT_DOUBLE_EQ(m.run.measure->window_s, 600);
  EXPECT_EQ(m.run.stopTimeS(), 720.0);
  const Scenario w = parse(R"({"run": {"measure": {"window_s": 60}}})");
  EXPECT_DOUBLE_EQ(w.run.measure->warmup_s, 0);
  const std::string text = dumpScenario(m);
  EXPECT_EQ(json::parse(text)["run"]["measure"], json::parse(R"({"warmup_s": 120.0, "window_s": 600.0})")) << text;
  EXPECT_EQ(dumpScenario(parseScenario(json::parse(text), "dump")), text);
  EXPECT_FALSE(parse(R"({"run": {"measure": null}})").run.measure.has_value());
}

Scenario everyOptionalSet() {
  return parse(R"({
    "cluster": {"instances": 16, "tp": 4, "profile": "profiles/h100.json",
                "cost": {"attention_scale": 1.25, "overhead_ms": 3},
                "fabric": {"gpus_per_node": 8, "nic_gbps": 400, "link_latency_us": 2.5}},
    "model": "llama-2-70b",
    "workload": {
      "preset": "arena-hard",
      "arrival": {"process": "schedule",
                  "schedule": [{"duration_s": 60, "rate": 2}, {"duration_s": 30.5, "rate": 0},
                               {"duration_s": 120, "rate": 7.25}]},
      "input_tokens": {"dist": "mixture", "max": 8192, "parts": [
          {"weight": 0.7, "dist": "lognormal", "median": 300, "p90": 900},
          {"weight": 0.3, "dist": "mixture", "parts": [
              {"weight": 1, "dist": "uniform", "min": 1, "max": 10},
              {"weight": 2, "dist": "empirical", "path": "lens.jsonl", "column": "n", "min": 1}]}]},
      "reasoning_tokens": {"dist": "lognormal", "mu": 6.5, "sigma": 0.8, "min": 0, "max": 16000},
      "answer_tokens": {"dist": "constant", "value": 128},
      "trace": {"path": "traces/azure_code.csv", "format": "azure", "time_scale": 0.5,
                "max_requests": 1000, "window": {"start_s": 0.1, "end_s": 3600}},
      "requests": 12345},
    "policy": {"id": "pascal", "router": "round-robin",
               "knobs": {"quantum": 250, "nested": {"b": [1, 2.5, "x"], "a": null}}},
    "slo": {"ttft_s": 1.5, "tpot_s": 0.05, "ttfat_s": 0.3, "qoe_tpot_s": 0.2, "qoe_threshold": 0.9},
    "run": {"seed": 18446744073709551615, "duration_s": 0.1, "probe_interval_s": 0.3,
            "rolling_window_s": 10, "trace_request_limit": 0}
  })");
}

void expectRoundTrip(const Scenario& s) {
  const std::string once = dumpScenario(s);
  const std::string twice = dumpScenario(parseScenario(json::parse(once), "dump"));
  EXPECT_EQ(once, twice);
}

TEST(ScenarioCanonical, DefaultDumpHasSpecKeyOrderAndNulls) {
  const std::string text = dumpScenario(parse("{}"));
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto j = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema_version", "cluster", "model", "workload",
                                            "policy", "slo", "run"}));
  std::vector<std::string> cluster_keys;
  for (auto it = j["cluster"].begin(); it != j["cluster"].end(); ++it) cluster_keys.push_back(it.key());
  EXPECT_EQ(cluster_keys.front(), "instances");
  EXPECT_EQ(cluster_keys[12], "fabric");
  EXPECT_TRUE(j["cluster"]["profile"].is_null());
  EXPECT_TRUE(j["workload"]["preset"].is_null());
  EXPECT_TRUE(j["workload"]["trace"].is_null());
  EXPECT_TRUE(j["slo"]["ttft_s"].is_null());
  EXPECT_TRUE(j["run"]["duration_s"].is_null());
  EXPECT_EQ(j["workload"]["arrival"].dump(), R"({"process":"poisson","rate":5.0})");
  EXPECT_EQ(j["workload"]["input_tokens"].dump(), R"({"dist":"lognormal","median":512.0,"p90":2048.0})");
  EXPECT_EQ(j["workload"]["reasoning_tokens"].dump(), R"({"dist":"constant","value":0.0})");
  // Two-space indentation.
  EXPECT_EQ(text.rfind("{\n  \"schema_version\": 1,\n  \"cluster\": {\n    \"instances\": 4,", 0), 0u)
      << text;
  expectRoundTrip(parse("{}"));
  expectRoundTrip(Scenario{});
}

TEST(ScenarioCanonical, TraceLenientIsDumpedOnlyWhenSet) {
  Scenario s = parse(R"({"workload": {"trace": {"path": "t.csv"}}})");
  EXPECT_FALSE(s.workload.trace->lenient);
  EXPECT_FALSE(json::parse(dumpScenario(s))["workload"]["trace"].contains("lenient"));
  s = parse(R"({"workload": {"trace": {"path": "t.csv", "lenient": true}}})");
  EXPECT_TRUE(s.workload.trace->lenient);
  const auto j = nlohmann::ordered_json::parse(dumpScenario(s));
  EXPECT_EQ(j["workload"]["trace"]["lenient"], true);
  EXPECT_EQ(std::prev(j["workload"]["trace"].end()).key(), "lenient");  // last key
  expectRoundTrip(s);
  json doc = json::parse(dumpScenario(Scenario{}));
  applySetOverride(doc, "workload.trace.path=a.csv");
  applySetOverride(doc, "workload.trace.lenient=true");
  EXPECT_TRUE(parseScenario(doc, "set").workload.trace->lenient);
}

TEST(ScenarioCanonical, EngineIsDumpedOnlyWhenSet) {
  Scenario s = parse("{}");
  EXPECT_FALSE(s.cluster.engine.has_value());
  EXPECT_FALSE(json::parse(dumpScenario(s))["cluster"].contains("engine"));
  s = parse(R"({"cluster": {"engine": "vllm-v0.5"}})");
  EXPECT_EQ(s.cluster.engine, "vllm-v0.5");
  EXPECT_EQ(json::parse(dumpScenario(s))["cluster"]["engine"], "vllm-v0.5");
  expectRoundTrip(s);
  EXPECT_THROW(parse(R"({"cluster": {"engine": 5}})"), InputError);
  EXPECT_THROW(parse(R"({"cluster": {"engine": ""}})"), InputError);
}

TEST(ScenarioCanonical, EveryOptionalSetRoundTrips) {
  const Scenario s = everyOptionalSet();
  EXPECT_EQ(s.workload.arrival.schedule.size(), 3u);
  EXPECT_EQ(s.workload.input_tokens.parts.size(), 2u);
  EXPECT_EQ(s.workload.input_tokens.parts[1].parts[1].clipMin, 1.0);
  EXPECT_EQ(s.workload.trace->window_end_s, 3600.0);
  EXPECT_EQ(s.run.seed, 18446744073709551615ull);
  expectRoundTrip(s);
  const std::string text = dumpScenario(s);
  const auto j = json::parse(text);
  EXPECT_EQ(j["run"]["seed"].get<std::uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(j["workload"]["trace"]["window"]["start_s"], 0.1);
  EXPECT_EQ(j["policy"]["knobs"]["nested"]["b"][1], 2.5);
  // The parsed dump equals the original in every respect the dump shows.
  const Scenario back = parseScenario(j, "x");
  EXPECT_EQ(back.workload.input_tokens.weights, s.workload.input_tokens.weights);
  EXPECT_EQ(back.cluster.cost, s.cluster.cost);
}

TEST(ScenarioCanonical, AwkwardNumbersRoundTrip) {
  Scenario s;
  s.workload.arrival.rate = 0.1 + 0.2;
  s.cluster.watermark = 1e-300;
  s.run.probe_interval_s = 1.0 / 3;
  s.cluster.swap_gib = 1e300;
  s.workload.arrival.process = ArrivalSpec::Process::Gamma;
  s.workload.arrival.cv = 2.0 / 3;
  expectRoundTrip(s);
  const Scenario back = parseScenario(json::parse(dumpScenario(s)), "x");
  EXPECT_EQ(back.workload.arrival.rate, 0.1 + 0.2);
  EXPECT_EQ(back.run.probe_interval_s, 1.0 / 3);
}

TEST(ScenarioCanonical, ValidateScenario) {
  Scenario s;
  EXPECT_NO_THROW(validateScenario(s));
  s.cluster.block_size = 24;
  try {
    validateScenario(s, "gui");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "gui: cluster.block_size: must be a power of two from 1 to 256 (got 24)");
  }
}

// Random edits of a full scenario: each result is either rejected with an
// InputError or accepted and then round-trips exactly.
TEST(ScenarioCanonical, RandomEditsRejectOrRoundTrip) {
  const json base = json::parse(dumpScenario(everyOptionalSet()));
  std::vector<json::json_pointer> leaves;
  const json flat = base.flatten();
  for (auto it = flat.begin(); it != flat.end(); ++it) leaves.emplace_back(it.key());
  const std::vector<json> values = {-1,  0,    0.5,   1,     3,    1e300, 256, 4096,  2.5,
                                    "x", "",   nullptr, true, json::array(), json::object(),
                                    "gamma", "mixture", "azure", "recompute", 17, 1e-9};
  std::uint64_t state = 12345;
  auto next = [&state](std::uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    json doc = base;
    const int edits = 1 + static_cast<int>(next(3));
    for (int e = 0; e < edits; ++e) {
      const auto& ptr = leaves[next(leaves.size())];
      doc[ptr] = values[next(values.size())];
    }
    try {
      const Scenario s = parseScenario(doc, "fuzz");
      ++accepted;
      expectRoundTrip(s);
    } catch (const InputError&) {
    }
  }
  EXPECT_GT(accepted, 100);
}

// ---- files ------------------------------------------------------------------

class ScenarioFile : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("servelab-scn-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  static std::string errorOfFile(const std::string& path) {
    try {
      (void)loadScenarioFile(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(ScenarioFile, LoadsAndSetsBaseDir) {
  const std::string p = write("sub/a.json", R"({"model": "llama-2-70b"})");
  const Scenario s = loadScenarioFile(p);
  EXPECT_EQ(s.model, "llama-2-70b");
  EXPECT_EQ(fs::path(s.base_dir), dir_ / "sub");
  EXPECT_EQ(scenarioBaseDir("x.json"), ".");
}

TEST_F(ScenarioFile, SyntaxErrorNamesLineAndColumn) {
  const std::string p = write("bad.json", "{\n  \"model\": \"x\",\n  \"run\": {\"seed\": 1,}\n}\n");
  const std::string msg = errorOfFile(p);
  EXPECT_EQ(msg.rfind(p + ":3:", 0), 0u) << msg;
  EXPECT_NE(msg.find("JSON syntax error"), std::string::npos) << msg;
  // Column of the offending '}' (1-based): `  "run": {"seed": 1,}` -> 21.
  EXPECT_EQ(msg.rfind(p + ":3:21: ", 0), 0u) << msg;

  const std::string p2 = write("trunc.json", "{\"cluster\": {");
  EXPECT_EQ(errorOfFile(p2).rfind(p2 + ":1:", 0), 0u) << errorOfFile(p2);
  const std::string p3 = write("empty.json", "");
  EXPECT_EQ(errorOfFile(p3).rfind(p3 + ":1:", 0), 0u) << errorOfFile(p3);
}

TEST_F(ScenarioFile, MissingFileAndSemanticErrorsNameTheFile) {
  const std::string missing = (dir_ / "nope.json").string();
  const std::string msg = errorOfFile(missing);
  EXPECT_EQ(msg.rfind(missing + ": ", 0), 0u) << msg;
  EXPECT_EQ(errorOfFile(dir_.string()).rfind(dir_.string() + ": ", 0), 0u);
  const std::string p = write("neg.json", R"({"workload": {"arrival": {"rate": -3}}})");
  EXPECT_EQ(errorOfFile(p), p + ": workload.arrival.rate: must be > 0 (got -3)");
}

// ---- --set ----------------------------------------------------------------------

TEST(SetOverride, CreatesNestedObjectsAndParsesValues) {
  json doc = json::object();
  applySetOverride(doc, "policy.knobs.quantum=250");
  EXPECT_EQ(doc["policy"]["knobs"]["quantum"], 250);
  EXPECT_TRUE(doc["policy"]["knobs"]["quantum"].is_number_integer());
  applySetOverride(doc, "policy.id=pascal");
  EXPECT_EQ(doc["policy"]["id"], "pascal");
  applySetOverride(doc, "model=llama-3.1-8b");
  EXPECT_EQ(doc["model"], "llama-3.1-8b");
  applySetOverride(doc, "cluster.chunked_prefill=false");
  EXPECT_EQ(doc["cluster"]["chunked_prefill"], false);
  applySetOverride(doc, "cluster.gpu_memory_utilization=0.8");
  EXPECT_EQ(doc["cluster"]["gpu_memory_utilization"], 0.8);
  applySetOverride(doc, "slo.ttft_s=null");
  EXPECT_TRUE(doc["slo"]["ttft_s"].is_null());
  applySetOverride(doc, R"(policy.router="12")");  // quoted: a string, not a number
  EXPECT_EQ(doc["policy"]["router"], "12");
  applySetOverride(doc, R"(cluster.cost={"overhead_ms": 2})");
  EXPECT_EQ(doc["cluster"]["cost"]["overhead_ms"], 2);
  applySetOverride(doc, "workload.preset=");
  EXPECT_EQ(doc["workload"]["preset"], "");
  const Scenario s = parseScenario(
      [&] {
        json d = doc;
        d["workload"].erase("preset");
        return d;
      }(),
      "set");
  EXPECT_EQ(s.policy.knobs["quantum"], 250);
  EXPECT_FALSE(s.cluster.chunked_prefill);
}

TEST(SetOverride, WorkloadRateAlias) {
  json doc = json::parse(R"({"workload": {"arrival": {"process": "gamma", "cv": 2}}})");
  applySetOverride(doc, "workload.rate=12");
  EXPECT_EQ(doc["workload"]["arrival"]["rate"], 12);
  EXPECT_EQ(doc["workload"]["arrival"]["cv"], 2);
  EXPECT_FALSE(doc["workload"].contains("rate"));
  const Scenario s = parseScenario(doc, "set");
  EXPECT_EQ(s.workload.arrival.rate, 12.0);
  json empty = json::object();
  applySetOverride(empty, "workload.arrival.rate=3.5");
  EXPECT_EQ(parseScenario(empty, "set").workload.arrival.rate, 3.5);
}

TEST(SetOverride, OverCanonicalDumpAndIntoNullAndArrays) {
  json doc = json::parse(dumpScenario(Scenario{}));
  applySetOverride(doc, "workload.trace.path=traces/a.csv");  // trace was null
  EXPECT_EQ(doc["workload"]["trace"]["path"], "traces/a.csv");
  applySetOverride(doc, "workload.arrival={\"process\":\"schedule\",\"schedule\":[{\"duration_s\":1,\"rate\":2}]}");
  applySetOverride(doc, "workload.arrival.schedule.0.rate=9");
  EXPECT_EQ(doc["workload"]["arrival"]["schedule"][0]["rate"], 9);
  const Scenario s = parseScenario(doc, "set");
  EXPECT_EQ(s.workload.trace->path, "traces/a.csv");
  EXPECT_EQ(s.workload.arrival.schedule[0].rate, 9.0);
  // A wrong value is caught by the parser, naming the path.
  applySetOverride(doc, "cluster.instances=many");
  EXPECT_THROW(parseScenario(doc, "set"), InputError);
}

TEST(SetOverride, BadSyntaxNamesTheOption) {
  json doc = json::object();
  auto msgOf = [&](const std::string& a) -> std::string {
    try {
      applySetOverride(doc, a);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(msgOf("workload.rate").rfind("--set 'workload.rate': expected KEY.PATH=VALUE", 0), 0u);
  EXPECT_NE(msgOf("=5").find("--set '=5'"), std::string::npos);
  EXPECT_NE(msgOf("a..b=1").find("empty segment"), std::string::npos);
  EXPECT_NE(msgOf(".a=1").find("empty segment"), std::string::npos);
  applySetOverride(doc, "model=x");
  EXPECT_EQ(msgOf("model.name=y"), "--set 'model.name=y': 'model' is a string, not an object");
  applySetOverride(doc, "list=[1,2]");
  EXPECT_NE(msgOf("list.5=1").find("'list' is an array of 2 elements"), std::string::npos);
  EXPECT_NE(msgOf("list.x=1").find("not a valid index"), std::string::npos);
}

// Values with an `=` inside are kept whole after the first `=`.
TEST(SetOverride, ValueMayContainEquals) {
  json doc = json::object();
  applySetOverride(doc, "policy.knobs.expr=a=b");
  EXPECT_EQ(doc["policy"]["knobs"]["expr"], "a=b");
}

}  // namespace
}  // namespace sl
