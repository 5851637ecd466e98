#pragma once
// Internal to core/experiments/pascal/: the PASCAL evaluation setting shared
// by its experiments (base scenarios, datasets, rates, common columns) and
// the experiment functions the registration (register.cpp) lists. The
// experiments are split by concept: characterization.cpp (Figs. 4, 5),
// rate_sweeps.cpp (Figs. 11, 12, 15), tail_ttft.cpp (Figs. 9, 10, 13, 16),
// kv_transfer.cpp (Sec. V-B).
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/grid.h"
#include "experiments/pascal/pascal_experiments.h"
#include "metrics/request_record.h"

namespace sl::exp::pascal_impl {

// samples/pascal-baseline-fcfs.json (PASCAL §V-A): 8 x H100 96 GB, one GPU per
// node on a 100 Gbps fabric, DeepSeek-R1-Distill-Qwen-32B, KV capped at 50 %,
// no chunked prefill (vLLM 0.6.1), AlpacaEval-like reasoning chat.
inline constexpr const char* kPascalBase = R"({
  "schema_version": 1,
  "cluster": {
    "instances": 8, "gpu": "h100-96g", "kv_capacity_fraction": 0.5,
    "preemption": "swap", "chunked_prefill": false,
    "fabric": {"gpus_per_node": 1, "nic_gbps": 100}
  },
  "model": "r1-distill-qwen-32b",
  "workload": {"preset": "alpaca-reasoning", "arrival": {"process": "poisson", "rate": 8.0}, "requests": 1000},
  "policy": {"id": "fcfs", "router": "least-kv"},
  "slo": {"ttfat_s": 0.25, "qoe_tpot_s": 0.1, "qoe_threshold": 0.95},
  "run": {"seed": 1}
})";

// samples/pascal-char-reasoning-fcfs.json (PASCAL §III, Fig. 4): one instance,
// prompt 128, reasoning uniform 128-2048, 300 requests. Fig. 5 swaps in the
// pascal-char-answering preset (prompt 128, no reasoning, answer 128-2048).
inline constexpr const char* kCharReasoningBase = R"({
  "schema_version": 1,
  "cluster": {"instances": 1, "gpu": "h100-96g", "kv_capacity_fraction": 0.5, "chunked_prefill": false},
  "model": "r1-distill-qwen-32b",
  "workload": {"preset": "pascal-char-reasoning", "arrival": {"process": "poisson", "rate": 2.0}, "requests": 300},
  "policy": {"id": "fcfs", "router": "least-kv"},
  "run": {"seed": 1}
})";

inline constexpr std::int64_t kFullRequests = 1000;
inline constexpr std::int64_t kQuickRequests = 200;
inline constexpr double kCharRate = 2.0;  // the characterization samples' rate (Figs. 4, 5)

/// A workload of the PASCAL evaluation: preset, how descriptions name it and
/// the suffix of the experiment ids that use it.
/// Its low/medium/high rates come from the same sweep rule (docs/fidelity.md);
/// its rate sweeps (Figs. 11, 12, 15) step by `sweepStep` up to 8 steps.
struct Dataset {
  const char* preset;
  const char* name;
  const char* idSuffix;
  double low, medium, high;
  double sweepStep;
};
inline constexpr Dataset kAlpaca{"alpaca-reasoning", "AlpacaEval-like", "", kPascalLowRate, kPascalMediumRate,
                          kPascalHighRate, 1.0};
inline constexpr Dataset kArena{"arena-hard-reasoning", "Arena-Hard-like", "-arena", kArenaLowRate, kArenaMediumRate,
                         kArenaHighRate, 0.5};
inline constexpr Dataset kMix{"reasoning-mix", "50 % Arena-Hard-like + 50 % reasoning-heavy", "-mixed", kPascalLowRate,
                       kPascalMediumRate, kPascalHighRate, 1.0};

inline const std::vector<std::string> kBaselinesAndPascal = {"fcfs", "rr", "pascal"};

std::int64_t pascalRequests(const ExperimentOptions& o);
std::vector<double> loadRates(const Dataset& d = kAlpaca);
std::vector<double> sweepRates(const ExperimentOptions& o, const Dataset& d = kAlpaca);
std::string loadName(double rate, const Dataset& d = kAlpaca);
/// The §V grid: `policies` at `rates` on `dataset`.
Grid pascalGrid(const Dataset& dataset, const std::vector<double>& rates, const std::vector<std::string>& policies,
                const ExperimentOptions& o, const ObserverFn& observer = {});
/// 100 * (base - x) / base.
double reductionPct(double base, double x);
double pct(double part, double whole);
std::vector<double> ttfts(const std::vector<RequestRecord>& recs);
Column finishedColumn();
Column preemptionsColumn();
Column migrationsColumn();
Column sloViolationColumn(int decimals = 2);

// The experiments (one function per figure).
ExperimentResult fig4(const ExperimentOptions& o);
ExperimentResult fig5(const ExperimentOptions& o);
ExperimentResult fig9(const ExperimentOptions& o);
ExperimentResult fig10(const ExperimentOptions& o, const Dataset& d);
ExperimentResult fig11(const ExperimentOptions& o, const Dataset& d);
ExperimentResult fig12(const ExperimentOptions& o, const Dataset& d);
ExperimentResult fig13(const ExperimentOptions& o);
ExperimentResult fig15(const ExperimentOptions& o);
ExperimentResult fig16(const ExperimentOptions& o);
ExperimentResult kvTransfer(const ExperimentOptions& o);

}  // namespace sl::exp::pascal_impl
