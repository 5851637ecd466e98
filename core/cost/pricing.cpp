#include "cost/pricing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cost/embedded_presets.h"

namespace sl {

namespace {

struct PricingData {
  std::vector<GpuPrice> prices;
  std::vector<std::pair<std::string, double>> power;
};

const PricingData& data() {
  static const PricingData d = [] {
    PricingData out;
    for (const auto& file : costdetail::embeddedPricingFiles()) {
      try {
        const nlohmann::json j = nlohmann::json::parse(file.text);
        for (const auto& p : j.at("prices")) {
          GpuPrice g;
          g.gpu = p.at("gpu").get<std::string>();
          g.usdPerGpuHour = p.at("usd_per_gpu_hour").get<double>();
          g.provider = p.value("provider", std::string());
          g.instance = p.value("instance", std::string());
          g.date = p.value("date", std::string());
          g.source = p.value("source", std::string());
          if (!(g.usdPerGpuHour >= 0)) throw std::runtime_error(g.gpu + ": a negative price");
          out.prices.push_back(std::move(g));
        }
        for (const auto& p : j.at("power"))
          out.power.emplace_back(p.at("gpu").get<std::string>(), p.at("tdp_w").get<double>());
      } catch (const std::exception& e) {  // a build-time resource: a broken file is a bug
        throw std::logic_error(std::string("resources/") + file.path + ": " + e.what());
      }
    }
    return out;
  }();
  return d;
}

}  // namespace

const GpuPrice* gpuPrice(std::string_view gpu) {
  for (const GpuPrice& p : data().prices)
    if (p.gpu == gpu) return &p;
  return nullptr;
}

std::optional<double> gpuBoardPowerW(std::string_view gpu) {
  for (const auto& [id, w] : data().power)
    if (id == gpu) return w;
  return std::nullopt;
}

CostMetrics costMetrics(const std::vector<PoolCost>& pools, double outputTokensPerS, double goodputRps,
                        double inputTokensPerS) {
  CostMetrics m;
  double usd = 0, watts = 0;
  bool priced = true, powered = true;
  for (const PoolCost& p : pools) {
    m.gpus += p.gpus;
    if (p.usdPerGpuHour) usd += *p.usdPerGpuHour * p.gpus;
    else {
      priced = false;
      if (std::find(m.missingPrice.begin(), m.missingPrice.end(), p.gpu) == m.missingPrice.end())
        m.missingPrice.push_back(p.gpu);
    }
    if (p.powerW) watts += *p.powerW * p.gpus;
    else powered = false;
  }
  const bool tokens = std::isfinite(outputTokensPerS) && outputTokensPerS > 0;
  if (priced) {
    m.usdPerHour = usd;
    if (tokens) m.usdPerMillionTokens = usd / 3600.0 / outputTokensPerS * 1e6;
    if (std::isfinite(inputTokensPerS) && inputTokensPerS > 0)
      m.usdPerMillionInputTokens = usd / 3600.0 / inputTokensPerS * 1e6;
    if (usd > 0 && std::isfinite(goodputRps)) m.goodputPerUsd = goodputRps * 3600.0 / usd;
  }
  if (powered && watts > 0 && std::isfinite(outputTokensPerS)) m.tokensPerJoule = outputTokensPerS / watts;
  return m;
}

}  // namespace sl
