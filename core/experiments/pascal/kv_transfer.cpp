// The KV-cache transfer overhead of PASCAL's migrations (Sec. V-B).
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

// ---- KV-cache transfer overhead of PASCAL's migrations (Sec. V-B) ------------

/// Collects every KV copy (network flow) and every migration's stall
/// (left the source -> arrived on the destination: waiting for room there
/// plus the copy).
class TransferLog : public SimObserver {
 public:
  struct Transfer {
    std::int64_t request;
    int src, dst;
    SimTime start, end;
    double bytes;
  };
  void onTransfer(const Request& r, int src, int dst, SimTime start, SimTime end, double bytes) override {
    transfers.push_back({r.id, src, dst, start, end, bytes});
  }
  void onRequestEvent(RequestEvent e, const Request& r, int, SimTime t) override {
    if (e == RequestEvent::MigrationStart) {
      left_[r.id] = t;
    } else if (e == RequestEvent::MigrationEnd) {
      if (const auto it = left_.find(r.id); it != left_.end()) {
        stalls.push_back(nsToSeconds(t - it->second));
        left_.erase(it);
      }
    }
  }
  std::vector<Transfer> transfers;
  std::vector<double> stalls;  // seconds

 private:
  std::map<std::int64_t, SimTime> left_;
};

ExperimentResult kvTransfer(const ExperimentOptions& o) {
  const std::vector<Dataset> datasets = {kAlpaca, kArena};
  const double linkGbps = pascalScenario(kPascalHighRate, "pascal", 1).cluster.fabric.nic_gbps;
  const double linkBytesPerS = linkGbps * 1e9 / 8.0;
  ExperimentResult r;
  r.table.columns = {"dataset",
                     "load",
                     "rate_rps",
                     "migrations",
                     "transfers",
                     "transfer_p50_s",
                     "transfer_p99_s",
                     "transfer_max_s",
                     "wire_p99_s",
                     "mb_per_transfer_mean",
                     "mb_per_transfer_max",
                     "gbps_mean",
                     "gbps_min",
                     "link_gbps",
                     "stall_p99_s",
                     "ttft_p50_s"};
  std::string csv = "dataset,rate_rps,request_id,src,dst,start_s,latency_s,bytes,gbps,wire_s\n";
  for (const Dataset& d : datasets) {
    std::map<double, TransferLog> logs;
    const Grid g = pascalGrid(d, loadRates(d), {"pascal"}, o,
                              [&logs](double rate, const std::string&) -> SimObserver* { return &logs[rate]; });
    for (double rate : g.rates) {
      const TransferLog& log = logs.at(rate);
      const Summary& m = g.summary(rate, "pascal");
      std::vector<double> lat, wire, mb, gbps;
      for (const TransferLog::Transfer& t : log.transfers) {
        const double s = nsToSeconds(t.end - t.start);
        lat.push_back(s);
        wire.push_back(t.bytes / linkBytesPerS);  // the copy alone on an idle link
        mb.push_back(t.bytes / 1e6);
        // a copy always takes the link start-up (> 0), so s > 0
        const double achieved = s > 0 ? t.bytes * 8 / s / 1e9 : std::nan("");
        if (s > 0) gbps.push_back(achieved);
        csv += std::string(d.preset) + "," + rateLabel(rate) + "," + std::to_string(t.request) + "," +
               std::to_string(t.src) + "," + std::to_string(t.dst) + "," + num(nsToSeconds(t.start), 6) + "," +
               num(s, 6) + "," + num(t.bytes, 0) + "," + num(achieved, 3) + "," + num(wire.back(), 6) + "\n";
      }
      std::vector<double> stalls = log.stalls;
      const LatencyStats ls = computeStats(lat), ws = computeStats(wire), ms = computeStats(mb),
                         gs = computeStats(gbps), ss = computeStats(stalls);
      const bool any = !lat.empty();
      const double gbpsMin = gbps.empty() ? 0.0 : *std::min_element(gbps.begin(), gbps.end());
      auto v = [any](double x, int dec) { return any ? num(x, dec) : std::string("nan"); };
      r.table.addRow({d.preset, loadName(rate, d), rateLabel(rate), std::to_string(m.migrations),
                      std::to_string(log.transfers.size()), v(ls.p50, 4), v(ls.p99, 4), v(ls.max, 4), v(ws.p99, 4),
                      v(ms.mean, 1), v(ms.max, 1), gs.n ? num(gs.mean, 1) : "nan", gs.n ? num(gbpsMin, 1) : "nan",
                      num(linkGbps, 0), ss.n ? num(ss.p99, 4) : "nan", num(m.ttft_s.p50, 2)});
    }
  }
  r.charts.push_back({"kv_transfers.csv", csv});
  r.notes.push_back(
      "transfer = one KV copy over the fabric (link start-up + bytes at the max-min fair share of the NICs); "
      "wire = bytes / 100 Gbps (the same copy alone on the link); gbps = bytes * 8 / transfer.");
  r.notes.push_back(
      "stall = the request left its source -> arrived on the destination (waiting for room there + the copy).");
  return r;
}

}  // namespace sl::exp::pascal_impl
