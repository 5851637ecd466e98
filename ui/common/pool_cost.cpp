#include "ui/common/pool_cost.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>

#include "cost/presets.h"
#include "run/execute.h"
#include "scenario/spec.h"

namespace sl::ui {

namespace {

QString tr(const char* s) {
  return QCoreApplication::translate("PoolCost", s);
}

QString roleWord(const QString& role) {
  if (role == "prefill") return tr("prefill pool");
  if (role == "decode") return tr("decode pool");
  if (role.startsWith("stage-")) return tr("stage %1 pool").arg(role.mid(6));  // a CascadeInfer stage
  return tr("colocated pool");
}

}  // namespace

QString usdText(std::optional<double> usd) {
  if (!usd) return QStringLiteral("—");
  if (*usd >= 1000) return "$" + QLocale(QLocale::English).toString(*usd, 'f', 0);
  return "$" + QString::number(*usd, 'f', 2);
}

QStringList PoolGroup::headerForms() const {
  const QString price = usdPerHour() ? usdText(usdPerHour()) + tr("/h") : tr("no price");
  const QString shape = QString("%1 × TP%2").arg(count).arg(tp);
  const QString tight = QString("%1×TP%2").arg(count).arg(tp);
  QString shortName = gpuName;  // "H100 SXM5 80GB"
  if (shortName.startsWith("NVIDIA ") || shortName.startsWith("AMD ")) shortName = shortName.section(' ', 1);
  const QString family = shortName.section(' ', 0, 0);  // "H100"
  const QString sep = QStringLiteral(" · ");
  return {roleWord(role) + sep + gpuName + sep + shape + sep + price,
          roleWord(role) + sep + shortName + sep + shape + sep + price,
          role + sep + shortName + sep + shape + sep + price,
          role + sep + family + sep + shape + sep + price,
          role + sep + family + sep + tight + sep + price,
          family + sep + tight + sep + price,
          family + sep + price,
          family};
}

QString PoolGroup::toolTip() const {
  // (the instance numbers are the cards' "GPU n" titles)
  QString t =
      count > 1
          ? tr("%1: %2 instances (cards GPU %3–%4), each %5 × %6 (TP%5)")
                .arg(roleWord(role))
                .arg(count)
                .arg(first)
                .arg(first + count - 1)
                .arg(tp)
                .arg(gpuName)
          : tr("%1: 1 instance (card GPU %2), %3 × %4 (TP%3)").arg(roleWord(role)).arg(first).arg(tp).arg(gpuName);
  if (usdPerGpuHour)
    t += tr("\n%1 per GPU-hour × %2 GPUs = %3 per hour (%4)")
             .arg(usdText(usdPerGpuHour))
             .arg(count * tp)
             .arg(usdText(usdPerHour()))
             .arg(priceSource == "scenario" ? tr("the scenario's price_usd_per_gpu_hour") : priceSource);
  else
    t += tr("\nNo price known for %1 (resources/pricing/gpu-prices.json): set price_usd_per_gpu_hour in the "
            "scenario")
             .arg(gpuId);
  return t;
}

std::vector<PoolGroup> poolGroups(const Scenario& s) {
  const ClusterSpec& c = s.cluster;
  std::vector<PoolSpec> pools = c.pools;
  if (pools.empty()) {
    PoolSpec p;
    p.gpu = c.gpu;
    p.instances = c.instances;
    p.tp = c.tp;
    pools.push_back(p);
  }
  // Prices as summary.json states them (the scenario's, else the list price).
  const nlohmann::ordered_json cost = costJson(s, 0, 0);
  std::vector<PoolGroup> out;
  int first = 0;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const PoolSpec& p = pools[i];
    PoolGroup g;
    g.first = first;
    g.count = p.instances;
    g.tp = p.tp;
    g.gpuId = QString::fromStdString(p.gpu);
    const PresetRegistry& reg = PresetRegistry::builtin();
    g.gpuName = reg.hasGpu(p.gpu) ? QString::fromStdString(reg.gpu(p.gpu).name) : g.gpuId;
    g.role = QString::fromStdString(p.role);
    if (cost.contains("pools") && i < cost["pools"].size()) {
      const auto& e = cost["pools"][i];
      if (e["usd_per_gpu_hour"].is_number()) g.usdPerGpuHour = e["usd_per_gpu_hour"].get<double>();
      if (e["price_source"].is_string()) g.priceSource = QString::fromStdString(e["price_source"].get<std::string>());
    }
    first += p.instances;
    out.push_back(g);
  }
  return out;
}

void CostReadout::setScenario(const Scenario& s) {
  pools_ = poolGroups(s);
  costs_.clear();
  for (const PoolGroup& g : pools_)
    costs_.push_back({g.gpuId.toStdString(), g.count * g.tp, g.usdPerGpuHour, gpuBoardPowerW(g.gpuId.toStdString())});
  metrics_ = costMetrics(costs_, 0, 0);
  samples_.clear();
  tps_.reset();
  inTps_.reset();
}

void CostReadout::restart(int generation) {
  generation_ = generation;
  samples_.clear();
  met_.clear();
  tps_.reset();
  inTps_.reset();
}

void CostReadout::recordMet(int generation, double finishS) {
  if (generation != generation_) restart(generation);
  met_.push_back(finishS);
}

std::optional<double> CostReadout::goodputPerUsd() const {
  if (samples_.empty() || !metrics_.usdPerHour || *metrics_.usdPerHour <= 0) return std::nullopt;
  const double now = samples_.back().clockS;
  const double t0 = samples_.size() >= 2 ? samples_.front().clockS : 0.0;  // the throughput's window
  if (now <= t0) return std::nullopt;
  const auto n = std::count_if(met_.begin(), met_.end(), [&](double t) { return t > t0 && t <= now; });
  return static_cast<double>(n) / (now - t0) * 3600.0 / *metrics_.usdPerHour;
}

void CostReadout::record(int generation, double clockS, std::int64_t tokens, std::int64_t inputTokens) {
  if (generation != generation_ || (!samples_.empty() && clockS < samples_.back().clockS)) restart(generation);
  if (samples_.empty() || clockS > samples_.back().clockS) samples_.push_back({clockS, tokens, inputTokens});
  // Keep one sample at or before the window's start.
  while (samples_.size() > 2 && samples_[1].clockS <= clockS - kWindowS) samples_.pop_front();
  while (!met_.empty() && met_.front() <= samples_.front().clockS && samples_.size() >= 2) met_.pop_front();
  if (samples_.size() < 2) {  // one frame so far (a run to t): the average since t = 0
    if (clockS > 0) {
      tps_ = static_cast<double>(tokens) / clockS;
      inTps_ = static_cast<double>(inputTokens) / clockS;
    }
    return;
  }
  const Sample& s0 = samples_.front();
  const double span = clockS - s0.clockS;
  if (span > 0) {
    tps_ = static_cast<double>(tokens - s0.tokens) / span;
    inTps_ = static_cast<double>(inputTokens - s0.input) / span;
  }
}

std::optional<double> CostReadout::usdPerMillionTokens() const {
  if (!tps_ || !metrics_.usdPerHour) return std::nullopt;
  return costMetrics(costs_, *tps_, 0).usdPerMillionTokens;
}

std::optional<double> CostReadout::usdPerMillionInputTokens() const {
  if (!inTps_ || !metrics_.usdPerHour) return std::nullopt;
  return costMetrics(costs_, 0, 0, *inTps_).usdPerMillionInputTokens;
}

std::optional<double> CostReadout::tokensPerJoule() const {
  if (!tps_) return std::nullopt;
  return costMetrics(costs_, *tps_, 0).tokensPerJoule;
}

QStringList CostReadout::forms() const {
  QString tps = QStringLiteral("—");
  if (tps_) tps = *tps_ >= 1000 ? QString("%1 k").arg(*tps_ / 1000.0, 0, 'f', 1) : QString::number(*tps_, 'f', 0);
  const QString hour = usdText(usdPerHour()) + tr("/h");
  const QString mtok = usdText(usdPerMillionTokens()) + tr("/M tok");
  const QString sep = QStringLiteral(" · ");
  return {tps + tr(" tok/s") + sep + hour + sep + mtok, hour + sep + mtok, hour};
}

QString CostReadout::toolTip() const {
  QString t = tr("Output tokens per simulated second over the last %1 s, and what the cluster costs:").arg(kWindowS);
  for (const PoolGroup& g : pools_) {
    t += "\n  " + QString("%1 × %2").arg(g.count * g.tp).arg(g.gpuName) + "  ";
    t += g.usdPerGpuHour ? tr("%1/GPU-h (%2)")
                               .arg(usdText(g.usdPerGpuHour))
                               .arg(g.priceSource == "scenario" ? tr("scenario") : g.priceSource)
                         : tr("no known price");
  }
  if (usdPerHour()) {
    t += tr("\n= %1 per hour; $ per million output tokens = $/hour ÷ (tokens/s × 3600) × 10⁶, at the throughput "
            "above.")
             .arg(usdText(usdPerHour()));
    if (const auto in = usdPerMillionInputTokens())
      t += tr("\nInput: %1 prompt tok/s prefilled, %2 per million input tokens (the whole bill over them, as the "
              "output figure puts it over the output tokens).")
               .arg(*inTps_, 0, 'f', 0)
               .arg(usdText(in));
  } else {
    QStringList missing;
    for (const std::string& m : metrics_.missingPrice) missing << QString::fromStdString(m);
    missing.removeDuplicates();
    t += tr("\n— : no price known for %1; set cluster.price_usd_per_gpu_hour (or the pool's) in the scenario.")
             .arg(missing.join(", "));
  }
  if (const auto gpd = goodputPerUsd())
    t += tr("\n%1 requests meeting the SLO per dollar (finished within the SLO over the same window × 3600 ÷ $/hour).")
             .arg(*gpd, 0, 'f', 1);
  if (const auto tpj = tokensPerJoule())
    t += tr("\n%1 output tokens per joule at the GPUs' board power (a lower bound: idle GPUs draw less).")
             .arg(*tpj, 0, 'f', 2);
  t +=
      tr("\nPrices: on-demand list prices in resources/pricing/gpu-prices.json, each dated and cited "
         "(docs/metrics.md \"Cost\").");
  return t;
}

}  // namespace sl::ui
