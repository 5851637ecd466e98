// PASCAL's characterization (Sec. III): phase-latency breakdowns of the
// reasoning (Fig. 4) and answering (Fig. 5) phases on one instance.
#include "experiments/pascal/common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/request.h"
#include "experiments/grid.h"
#include "metrics/binned_tail.h"
#include "scenario/scenario_io.h"

namespace sl::exp::pascal_impl {

// ---- Figs. 4 and 5: phase-latency breakdown (Sec. III) ----------------------

/// A phase's latency split into executed / blocked / preempted, summed over
/// requests; SLO counts for the answering phase.
struct Breakdown {
  double executed = 0, blocked = 0, preempted = 0;
  std::int64_t n = 0;
  std::int64_t sloMet = 0;  // requests meeting the answering SLO (Fig. 5)
  double total() const { return executed + blocked + preempted; }
  double mean() const { return n ? total() / static_cast<double>(n) : std::nan(""); }
};

/// What one characterization measures: the phase latency of a record and
/// the token count its bins are keyed by.
struct PhaseSpec {
  std::optional<double> (*latency)(const RequestRecord&);
  std::int64_t (*tokens)(const RequestRecord&);
  bool (*sloMet)(const RequestRecord&, const SloSpec&);  // null: no SLO columns
};

/// Phase latency split into blocked (arrival -> first scheduled), preempted
/// (time preempted, capped at what is left of the phase latency: the record
/// keeps one total) and executed (the rest).
void addBreakdown(const RequestRecord& rec, const PhaseSpec& spec, const SloSpec& slo, Breakdown& b) {
  const auto lat = spec.latency(rec);
  if (!lat) return;
  const double blocked = std::min(*lat, nsToSeconds(rec.queueing));
  const double preempted = std::min(*lat - blocked, nsToSeconds(rec.preempted));
  b.blocked += blocked;
  b.preempted += preempted;
  b.executed += *lat - blocked - preempted;
  ++b.n;
  if (spec.sloMet && spec.sloMet(rec, slo)) ++b.sloMet;
}

struct Characterization {
  Grid grid;
  SloSpec slo;
  std::map<std::string, Breakdown> all;
  std::map<std::string, std::map<std::int64_t, Breakdown>> perBin;  // bin index -> breakdown
};

Characterization characterize(const char* preset, std::int64_t requests, const std::vector<std::string>& policies,
                              const PhaseSpec& spec, const ExperimentOptions& o) {
  Scenario base = parseScenario(nlohmann::json::parse(kCharReasoningBase), "pascal-char");
  base.workload.preset = preset;
  base.workload.requests = requests;
  Characterization ch;
  ch.slo = base.slo;
  ch.grid = runGrid(
      [&](double rate, const std::string& p) {
        Scenario s = base;
        s.workload.arrival.rate = rate;
        s.policy.id = p;
        return s;
      },
      {kCharRate}, policies, o);
  for (const GridCell& c : ch.grid.cells) {
    for (const RequestRecord& rec : c.run.records) {
      if (!rec.finished) continue;
      addBreakdown(rec, spec, ch.slo, ch.all[c.policy]);
      addBreakdown(rec, spec, ch.slo, ch.perBin[c.policy][spec.tokens(rec) / kTailBinWidth]);
    }
  }
  return ch;
}

/// Per-bin chart: policy,bin_lo,bin_hi,n,executed_s,blocked_s,preempted_s,
/// total_s,normalized_to_oracle[,slo_attainment_pct] (means over requests).
std::string breakdownCsv(const Characterization& ch, bool withSlo) {
  std::string csv = "policy,bin_lo,bin_hi,n,executed_s,blocked_s,preempted_s,total_s,normalized_to_oracle";
  csv += withSlo ? ",slo_attainment_pct\n" : "\n";
  static const std::map<std::int64_t, Breakdown> kNone;
  const auto oit = ch.perBin.find("oracle");
  const auto& ob = oit != ch.perBin.end() ? oit->second : kNone;
  for (const std::string& p : ch.grid.policies) {
    const auto pit = ch.perBin.find(p);
    if (pit == ch.perBin.end()) continue;
    for (const auto& [bin, b] : pit->second) {
      const double n = static_cast<double>(b.n);
      const auto it = ob.find(bin);
      const double oracleBin = it != ob.end() ? it->second.mean() : std::nan("");
      csv += p + "," + std::to_string(bin * kTailBinWidth) + "," + std::to_string((bin + 1) * kTailBinWidth) + "," +
             std::to_string(b.n) + "," + num(b.executed / n, 6) + "," + num(b.blocked / n, 6) + "," +
             num(b.preempted / n, 6) + "," + num(b.total() / n, 6) + "," + num(b.total() / n / oracleBin, 4);
      if (withSlo) csv += "," + num(pct(static_cast<double>(b.sloMet), n), 2);
      csv += "\n";
    }
  }
  return csv;
}

/// policy, requests, <phase>_mean_s, vs_oracle, executed/blocked/preempted %.
std::vector<std::string> breakdownRow(const Characterization& ch, const std::string& p) {
  const Breakdown& b = ch.all.at(p);
  const double oracleMean = ch.all.count("oracle") ? ch.all.at("oracle").mean() : std::nan("");
  return {p,
          std::to_string(b.n),
          num(b.mean()),
          num(oracleMean > 0 ? b.mean() / oracleMean : std::nan(""), 2),
          num(pct(b.executed, b.total()), 1),
          num(pct(b.blocked, b.total()), 1),
          num(pct(b.preempted, b.total()), 1)};
}

const std::vector<std::string> kCharPolicies = {"oracle", "fcfs", "rr"};

ExperimentResult fig4(const ExperimentOptions& o) {
  const PhaseSpec spec{[](const RequestRecord& r) { return r.reasoningLatency(); },
                       [](const RequestRecord& r) -> std::int64_t { return r.reasoning; }, nullptr};
  const Characterization ch = characterize("pascal-char-reasoning", o.quick ? 100 : 300, kCharPolicies, spec, o);
  ExperimentResult r;
  r.table.columns = {"policy",      "requests",      "reasoning_mean_s", "vs_oracle", "executed_pct",
                     "blocked_pct", "preempted_pct", "preemptions",      "ttft_p99_s"};
  for (const std::string& p : kCharPolicies) {
    const Summary& m = ch.grid.summary(kCharRate, p);
    std::vector<std::string> row = breakdownRow(ch, p);
    row.push_back(std::to_string(m.preemptions));
    row.push_back(num(m.ttft_s.p99));
    r.table.addRow(std::move(row));
  }
  r.charts.push_back({"reasoning_breakdown_by_bin.csv", breakdownCsv(ch, false)});
  r.notes.push_back(
      "blocked = arrival -> first scheduled; preempted = time preempted (capped at the reasoning "
      "latency left); executed = the rest. Means over requests, seconds.");
  return r;
}

/// Fig. 5's answering SLO: the first answer token within TTFAT* of the
/// request's arrival (the paper's requests arrive with reasoning done, so
/// arrival is the phase boundary) and QoE >= threshold. ServeLab scores QoE
/// of a request without reasoning from its first token, so the TTFAT* part
/// is checked here from the record.
bool answeringSloMet(const RequestRecord& r, const SloSpec& slo) {
  const auto t = r.ttft();
  return t && *t <= slo.ttfat_s && r.hasQoe() && r.qoe >= slo.qoe_threshold;
}

ExperimentResult fig5(const ExperimentOptions& o) {
  const PhaseSpec spec{[](const RequestRecord& r) { return r.e2e(); }, [](const RequestRecord& r) -> std::int64_t { return r.answer; },
                       answeringSloMet};
  const Characterization ch = characterize("pascal-char-answering", o.quick ? 100 : 300, kCharPolicies, spec, o);
  ExperimentResult r;
  r.table.columns = {"policy",      "requests",          "answering_mean_s", "vs_oracle",         "executed_pct",
                     "blocked_pct", "preempted_pct",     "preemptions",      "first_token_p99_s", "ttfat_met_pct",
                     "qoe_met_pct", "slo_attainment_pct"};
  for (const std::string& p : kCharPolicies) {
    const GridCell& c = ch.grid.at(kCharRate, p);
    std::int64_t n = 0, ttfatMet = 0, qoeMet = 0;
    for (const RequestRecord& rec : c.run.records) {
      if (!rec.finished) continue;
      ++n;
      if (const auto t = rec.ttft(); t && *t <= ch.slo.ttfat_s) ++ttfatMet;
      if (rec.hasQoe() && rec.qoe >= ch.slo.qoe_threshold) ++qoeMet;
    }
    const double dn = static_cast<double>(n);
    std::vector<std::string> row = breakdownRow(ch, p);
    row.push_back(std::to_string(c.run.summary.preemptions));
    row.push_back(num(c.run.summary.ttft_s.p99));
    row.push_back(num(pct(static_cast<double>(ttfatMet), dn), 1));
    row.push_back(num(pct(static_cast<double>(qoeMet), dn), 1));
    row.push_back(num(pct(static_cast<double>(ch.all.at(p).sloMet), dn), 1));
    r.table.addRow(std::move(row));
  }
  r.charts.push_back({"answering_breakdown_by_bin.csv", breakdownCsv(ch, true)});
  r.notes.push_back(
      "Answering latency = arrival -> last token (no reasoning: the requests start in the answering phase). "
      "blocked = arrival -> first scheduled; preempted = time preempted; executed = the rest. Means, seconds.");
  r.notes.push_back(
      "slo_attainment = first token within TTFAT* (0.25 s) of arrival AND QoE >= 0.95 (TPOT* 0.1 s); "
      "ttfat_met / qoe_met: each part alone.");
  return r;
}

}  // namespace sl::exp::pascal_impl
