#include "experiments/moe/moe_experiments.h"

#include <algorithm>

#include "scenario/scenario_io.h"

namespace sl::exp {

Scenario moeScenario(const std::string& model, const std::string& gpu, int gpus, int ep, bool attentionDp,
                     const nlohmann::json& routing, int redundant, int concurrency, int input, int output,
                     std::int64_t requests) {
  nlohmann::json cluster = {{"instances", 1},
                            {"gpu", gpu},
                            {"tp", gpus},
                            {"ep", ep},
                            {"attention_dp", attentionDp},
                            {"max_num_seqs", std::max(256, concurrency)},
                            {"max_num_batched_tokens", 16384},
                            {"fabric", {{"gpus_per_node", 8}, {"nic_gbps", 3200}}}};
  if (!routing.is_null()) cluster["moe_routing"] = routing;
  if (redundant > 0) {
    cluster["ep_redundant"] = redundant;
    cluster["ep_placement"] = "eplb";
  }
  const nlohmann::json workload = {{"arrival", {{"process", "closed"}, {"concurrency", concurrency}}},
                                   {"input_tokens", {{"dist", "constant"}, {"value", input}}},
                                   {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
                                   {"answer_tokens", {{"dist", "constant"}, {"value", output}}},
                                   {"requests", requests}};
  const nlohmann::json j = {{"schema_version", 1},
                            {"cluster", cluster},
                            {"model", model},
                            {"workload", workload},
                            {"policy", {{"id", "fcfs"}, {"router", "round-robin"}}},
                            {"run", {{"seed", 1}}}};
  return parseScenario(j, "moe (" + model + ")");
}

namespace {

struct Layout {
  std::string name;
  int ep;
  bool dp;
};

ExperimentResult parallelism(const ExperimentOptions& o) {
  const std::vector<Layout> layouts = {
      {"TP8", 1, false}, {"EP8 (attention TP8)", 8, false}, {"EP8 + DP attention", 8, true}};
  const std::vector<int> conc = o.quick ? std::vector<int>{1, 64} : std::vector<int>{1, 8, 32, 64, 128, 256, 512};
  ExperimentResult out;
  out.table.columns = {"layout",      "concurrency", "output_tok_s",      "output_tok_s_per_gpu",
                       "tpot_p50_ms", "ttft_p50_s",  "kv_capacity_tokens"};
  std::string csv = "layout,concurrency,output_tok_s,tpot_p50_ms,ttft_p50_s\n";
  for (const Layout& l : layouts)
    for (int c : conc) {
      const std::int64_t n = std::max<std::int64_t>(c * (o.quick ? 2 : 4), 16);
      Scenario s = moeScenario("qwen3-235b-a22b", "h200-sxm-141g", 8, l.ep, l.dp, nullptr, 0, c, 1000, 1000, n);
      if (o.seed) s.run.seed = *o.seed;
      const std::string label = l.name + " @ " + std::to_string(c) + " clients";
      if (o.onRun) o.onRun(label);
      const RunOutcome r = runInMemory(s, label);
      const auto cost = makeCostModel(s);
      const std::int64_t kv = cost->kvCapacityBlocks(s.cluster.gpu_memory_utilization, s.cluster.kv_capacity_fraction,
                                                     s.cluster.block_size) *
                              s.cluster.block_size;
      const double tput = outputTokensPerS(r);
      out.table.addRow({l.name, std::to_string(c), num(tput, 0), num(tput / 8, 0), num(r.summary.tpot_s.p50 * 1e3, 2),
                        num(r.summary.ttft_s.p50, 3), std::to_string(kv)});
      csv += l.name + "," + std::to_string(c) + "," + num(tput, 1) + "," + num(r.summary.tpot_s.p50 * 1e3, 3) + "," +
             num(r.summary.ttft_s.p50, 4) + "\n";
    }
  out.charts.push_back({"moe_parallelism.csv",
                        csv,
                        {{"_throughput",
                          "concurrency",
                          {"output_tok_s"},
                          {"layout"},
                          {},
                          "Qwen3-235B-A22B on 8 x H200: output throughput vs concurrency",
                          "output tokens/s"},
                         {"_tpot",
                          "concurrency",
                          {"tpot_p50_ms"},
                          {"layout"},
                          {},
                          "Qwen3-235B-A22B on 8 x H200: median TPOT vs concurrency",
                          "TPOT p50 (ms)"}}});
  out.notes.push_back(
      "Closed loop, no think time, 1000-token prompts and 1000-token answers, bf16, one instance of "
      "8 GPUs. EP8: 16 experts a GPU; DP attention: each GPU runs its own sequences' attention with "
      "the whole attention weights (less KV room) and the experts are reached by all-to-all "
      "(DeepEP fit) instead of all-reduces.");
  return out;
}

ExperimentResult imbalance(const ExperimentOptions& o) {
  struct Case {
    std::string routing;
    nlohmann::json spec;
    int redundant;
  };
  const nlohmann::json zipf06 = {{"kind", "zipf"}, {"skew", 0.6}};
  const nlohmann::json zipf10 = {{"kind", "zipf"}, {"skew", 1.0}};
  const std::vector<Case> cases = {{"balanced", nullptr, 0},
                                   {"zipf 0.6", zipf06, 0},
                                   {"zipf 0.6 + EPLB 32", zipf06, 32},
                                   {"zipf 1.0", zipf10, 0},
                                   {"zipf 1.0 + EPLB 32", zipf10, 32}};
  struct Load {
    std::string name;
    int input, output;
  };
  // Decode-heavy (every expert touched, steps read bound) and prefill-heavy
  // (16K-token chunks, compute bound: the straggler rank's pairs set the time).
  const std::vector<Load> loads = {{"decode-heavy 1000/1000", 1000, 1000}, {"prefill-heavy 4000/16", 4000, 16}};
  const int conc = 256;
  const std::int64_t n = o.quick ? 256 : 1024;
  ExperimentResult out;
  out.table.columns = {"workload",    "routing",     "ep_redundant", "busiest_rank_over_mean", "output_tok_s",
                       "input_tok_s", "tpot_p50_ms", "ttft_p50_s",   "tput_vs_balanced_pct"};
  std::string csv = "workload,routing,output_tok_s,input_tok_s,tpot_p50_ms,ttft_p50_s\n";
  for (const Load& load : loads) {
    double base = 0;
    for (const Case& c : cases) {
      Scenario s = moeScenario("qwen3-235b-a22b", "h200-sxm-141g", 8, 8, true, c.spec, c.redundant, conc, load.input,
                               load.output, n);
      if (o.seed) s.run.seed = *o.seed;
      const std::string label = load.name + ", " + c.routing;
      if (o.onRun) o.onRun(label);
      const RunOutcome r = runInMemory(s, label);
      const auto cost = makeCostModel(s);
      const double tput = outputTokensPerS(r);
      const double inTput = tput * load.input / load.output;
      if (base == 0) base = tput;
      const double step = load.output > 100 ? conc : 16384;  // tokens in a typical step
      out.table.addRow({load.name, c.routing, std::to_string(c.redundant), num(cost->placement().imbalance(step), 3),
                        num(tput, 0), num(inTput, 0), num(r.summary.tpot_s.p50 * 1e3, 2), num(r.summary.ttft_s.p50, 3),
                        num((tput / base - 1) * 100, 1)});
      csv += load.name + "," + c.routing + "," + num(tput, 1) + "," + num(inTput, 1) + "," +
             num(r.summary.tpot_s.p50 * 1e3, 3) + "," + num(r.summary.ttft_s.p50, 4) + "\n";
    }
  }
  out.charts.push_back({"moe_imbalance.csv",
                        csv,
                        {{"",
                          "routing",
                          {"output_tok_s"},
                          {},
                          {{"workload", "decode-heavy 1000/1000"}},
                          "Expert imbalance, decode-heavy: output throughput",
                          "output tokens/s",
                          true},
                         {"_prefill",
                          "routing",
                          {"input_tok_s"},
                          {},
                          {{"workload", "prefill-heavy 4000/16"}},
                          "Expert imbalance, prefill-heavy: input throughput",
                          "input tokens/s",
                          true}}});
  out.notes.push_back(
      "Qwen3-235B-A22B, 8 x H200, EP8 + DP attention, 256 closed-loop clients. "
      "busiest_rank_over_mean: the straggler rank's expected token-expert pairs (mean + sqrt(2 ln 8) "
      "sd) over the mean rank's, for a step of 256 tokens (decode-heavy) or 16384 (prefill-heavy). "
      "EPLB 32: 32 redundant replicas of the hottest experts, greedily packed (20 slots a GPU).");
  return out;
}

}  // namespace

void addMoeExperiments(std::vector<Experiment>& out) {
  out.push_back({"moe-parallelism", "MoE",
                 "Qwen3-235B-A22B on 8 x H200: TP8 vs EP8 vs EP8 + DP attention, throughput and TPOT vs concurrency",
                 "One instance of 8 x h200-sxm-141g serving Qwen3-235B-A22B (bf16) as TP8 (every expert split 8 ways), "
                 "EP8 with tensor-parallel attention, and EP8 with data-parallel attention (all-to-all); closed-loop "
                 "clients 1-512 with 1000-token prompts and answers. --quick: 1 and 64 clients.",
                 parallelism});
  out.push_back({"moe-imbalance", "MoE",
                 "The cost of expert imbalance: balanced vs Zipf routing, with and without EPLB's redundant experts",
                 "Qwen3-235B-A22B on 8 x h200-sxm-141g, EP8 + DP attention, 256 closed-loop clients: balanced "
                 "routing, Zipf 0.6 and 1.0 over the experts (hot experts scattered over the ids), each with and "
                 "without 32 redundant experts placed by EPLB. --quick: 256 requests instead of 1024.",
                 imbalance});
}

}  // namespace sl::exp
