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

// Issue 47 anchor (a): DeepSeek-V3 with P/D disaggregation and wide EP
// against SGLang's 96 x H100 figures and DeepSeek's own H800 figures
// (docs/analysis/moe_pd_sources.md quotes both).
struct PdAnchor {
  std::string source, side, setting;
  PdWideEp d;
  bool prefill;      // the figure is the prefill pool's input tok/s, else the decode pool's output tok/s
  double published;  // per 8-GPU node
  std::string publishedNote;
};

double perNode(const RunOutcome& r, const PdWideEp& d, bool prefill) {
  const int gpus = prefill ? d.prefillGpus * d.prefillInstances : d.decodeGpus * d.decodeInstances;
  const double rate = prefill ? r.summary.input_tokens_per_s : r.summary.tokens_per_s;
  return rate / (gpus / 8.0);
}

ExperimentResult pdWideEp(const ExperimentOptions& o) {
  std::vector<PdAnchor> anchors;
  {  // SGLang, prefill: 4 nodes EP32, 16384 tokens a GPU, 2000-token prompts; decode side idle (1-token answers).
    PdWideEp d;
    d.concurrency = 1024;
    d.output = 1;
    anchors.push_back({"SGLang (H100)", "prefill", "EP32 on 4 nodes, 16384 tok/GPU, 2000-token prompts", d, true, 54543,
                       "54,543 (52.3K headline)"});
  }
  {  // SGLang, decode: 9 nodes EP72, 256 sequences a GPU at ~2000 tokens of KV; prefill side ample (16 instances).
    PdWideEp d;
    d.prefillInstances = 16;
    d.concurrency = 256 * 72;
    d.output = 200;
    d.warmupS = 20;
    d.windowS = 20;
    anchors.push_back({"SGLang (H100)", "decode", "EP72 on 9 nodes, 256 seq/GPU, 2000-token prompts", d, false, 22282,
                       "22,282 (22.3K headline)"});
  }
  {  // DeepSeek's profile setting: EP32 prefill, 16384 tokens a GPU, 4096-token prompts.
    PdWideEp d;
    d.gpu = "h800-80g";
    d.input = 4096;
    d.concurrency = 512;
    anchors.push_back({"DeepSeek (H800)", "prefill", "EP32 on 4 nodes, 16384 tok/GPU, 4096-token prompts", d, true,
                       62713, "62,713 profile; production 73.7K incl. cache hits = 32.2K computed"});
  }
  {  // DeepSeek's production decode: EP144 on 18 nodes, 128 sequences a GPU, 4989 tokens of KV, MTP.
    PdWideEp d;
    d.gpu = "h800-80g";
    d.decodeGpus = 144;
    d.maxSeqs = 128 * 144;
    d.prefillInstances = 16;
    d.concurrency = 128 * 144;
    d.input = 4600;
    d.output = 800;
    d.warmupS = 40;
    d.windowS = 20;
    d.mtpAcceptance = 0.85;
    anchors.push_back({"DeepSeek (H800)", "decode", "EP144 on 18 nodes, 128 seq/GPU, ~4989 KV, MTP (0.85)", d, false,
                       14800, "14,800 production; profile 18,598 (KV 4096)"});
    // The production figure is a day's average: 14.8K tok/s a node at 20-22
    // tok/s a user is ~88 sequences a GPU (derived), not 128.
    d.maxSeqs = 88 * 144;
    d.concurrency = 88 * 144;
    anchors.push_back({"DeepSeek (H800)", "decode", "as above at 88 seq/GPU (14.8K / 21 tok/s a user / 8 GPUs)", d,
                       false, 14800, "14,800 production; 20-22 tok/s a user"});
  }
  ExperimentResult out;
  out.table.columns = {"source",
                       "side",
                       "setting",
                       "published_tok_s_per_node",
                       "sim_tok_s_per_node",
                       "sim_vs_published_pct",
                       "sim_no_tbo_tok_s_per_node",
                       "sim_nic_x2_tok_s_per_node",
                       "sim_tok_s_per_user",
                       "published_note"};
  std::string csv = "anchor,published,simulated,simulated_no_tbo,simulated_nic_x2\n";
  for (std::size_t i = 0; i < anchors.size(); ++i) {
    const PdAnchor& a = anchors[i];
    // Variants: as published (TBO), without TBO, and with twice the NIC
    // bandwidth (what binds: a NIC-bound step speeds up by up to 2x).
    double tput[3] = {0, 0, 0};
    double perUser = 0;
    for (int v = 0; v < 3; ++v) {
      PdWideEp d = a.d;
      d.tbo = v != 1;
      if (v == 2) d.nicGbps *= 2;
      if (o.quick) d.windowS = std::min(d.windowS, 20.0);
      Scenario s = pdWideEpScenario(d);
      if (o.seed) s.run.seed = *o.seed;
      const std::string label = a.source + " " + a.side + " #" + std::to_string(i + 1) +
                                (v == 1   ? " (no TBO)"
                                 : v == 2 ? " (NIC x2)"
                                          : "");
      if (o.onRun) o.onRun(label);
      const RunOutcome r = runInMemory(s, label);
      tput[v] = perNode(r, d, a.prefill);
      if (v == 0 && !a.prefill && r.summary.tpot_s.p50 > 0) perUser = 1.0 / r.summary.tpot_s.p50;
    }
    out.table.addRow({a.source, a.side, a.setting, num(a.published, 0), num(tput[0], 0),
                      num((tput[0] / a.published - 1) * 100, 1), num(tput[1], 0), num(tput[2], 0),
                      a.prefill ? "-" : num(perUser, 1), a.publishedNote});
    csv += a.source + " " + a.side + " #" + std::to_string(i + 1) + "," + num(a.published, 0) + "," + num(tput[0], 1) +
           "," + num(tput[1], 1) + "," + num(tput[2], 1) + "\n";
  }
  out.charts.push_back({"deepseek_pd_wide_ep.csv",
                        csv,
                        {{"",
                          "anchor",
                          {"published", "simulated", "simulated_no_tbo", "simulated_nic_x2"},
                          {},
                          {},
                          "DeepSeek-V3, P/D + wide EP: tokens/s per 8-GPU node (prefill: input, decode: output)",
                          "tokens/s per node",
                          true}}});
  out.notes.push_back(
      "DeepSeek-V3, fp8 weights, bf16 KV, balanced routing, 32 EPLB replicas, data-parallel attention, "
      "two-batch overlap (sim_no_tbo: off), static-pd, closed-loop clients, measured in a window after warm-up. "
      "Prefill rows: input tok/s of the prefill pool (1-token answers); decode rows: output tok/s of the decode "
      "pool with an ample prefill pool (16 instances). Sources: docs/analysis/moe_pd_sources.md.");
  return out;
}

}  // namespace

Scenario pdWideEpScenario(const PdWideEp& d) {
  nlohmann::json pools = nlohmann::json::array();
  pools.push_back({{"gpu", d.gpu},
                   {"instances", d.prefillInstances},
                   {"tp", d.prefillGpus},
                   {"ep", d.prefillGpus},
                   {"attention_dp", true},
                   {"role", "prefill"}});
  pools.push_back({{"gpu", d.gpu},
                   {"instances", d.decodeInstances},
                   {"tp", d.decodeGpus},
                   {"ep", d.decodeGpus},
                   {"attention_dp", true},
                   {"role", "decode"}});
  nlohmann::json cluster = {{"model_dtype", "fp8"},
                            {"ep_redundant", d.redundant},
                            {"two_batch_overlap", d.tbo},
                            {"dp_scheduler", "per-rank"},
                            {"max_num_seqs", d.maxSeqs},
                            {"max_num_batched_tokens", d.maxBatchedTokens},
                            {"fabric", {{"gpus_per_node", 8}, {"nic_gbps", d.nicGbps}}},
                            {"pools", pools}};
  if (d.mtpAcceptance > 0)
    cluster["speculative"] = {{"method", "mtp"}, {"k", 1}, {"acceptance", {{"alpha", {d.mtpAcceptance}}}}};
  nlohmann::json answer = {{"dist", "constant"}, {"value", d.output}};
  if (d.output > 1) answer = {{"dist", "uniform"}, {"min", d.output / 2}, {"max", d.output * 3 / 2}};
  const nlohmann::json workload = {{"arrival", {{"process", "closed"}, {"concurrency", d.concurrency}}},
                                   {"input_tokens", {{"dist", "constant"}, {"value", d.input}}},
                                   {"reasoning_tokens", {{"dist", "constant"}, {"value", 0}}},
                                   {"answer_tokens", answer},
                                   {"requests", 100000000}};
  const nlohmann::json j = {{"schema_version", 1},
                            {"cluster", cluster},
                            {"model", "deepseek-v3"},
                            {"workload", workload},
                            {"policy", {{"id", "static-pd"}}},
                            {"run", {{"seed", 1}, {"measure", {{"warmup_s", d.warmupS}, {"window_s", d.windowS}}}}}};
  return parseScenario(j, "deepseek-pd-wide-ep");
}

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
  out.push_back({"deepseek-pd-wide-ep", "MoE",
                 "DeepSeek-V3 with P/D disaggregation and wide EP against SGLang's H100 and DeepSeek's H800 figures",
                 "DeepSeek-V3 (fp8) served P/D-disaggregated with wide expert parallelism, data-parallel attention, "
                 "32 EPLB replicas and two-batch overlap: SGLang's 96 x H100 setting (prefill EP32 on 4 nodes at 16384 "
                 "tokens a GPU, decode EP72 on 9 nodes at 256 sequences a GPU, 2000-token prompts) and DeepSeek's H800 "
                 "settings (prefill EP32 at 4096-token prompts; decode EP144 on 18 nodes at 128 sequences a GPU with "
                 "MTP). Per-node prefill input and decode output tokens/s, simulated with and without two-batch "
                 "overlap, against the published figures. --quick: 20 s windows.",
                 pdWideEp});
}

}  // namespace sl::exp
