#include "cost/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "cost/calibration.h"
#include "cost/embedded_presets.h"
#include "util/error.h"

namespace sl {

AllReduceMode parseAllReduceMode(std::string_view s, std::string_view where) {
  if (s == "vllm") return AllReduceMode::Vllm;
  if (s == "nccl") return AllReduceMode::Nccl;
  if (s == "ring") return AllReduceMode::Ring;
  throw InputError(std::string(where) + ": unknown all-reduce model '" + std::string(s) +
                   "' (known: vllm, nccl, ring)");
}

const char* allReduceModeName(AllReduceMode m) {
  switch (m) {
    case AllReduceMode::Vllm: return "vllm";
    case AllReduceMode::Nccl: return "nccl";
    case AllReduceMode::Ring: return "ring";
  }
  return "?";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// vLLM's kernel choice (csrc/custom_all_reduce.cuh): one-shot for two GPUs,
// for ≤ 4 GPUs below 512 KiB and for ≤ 8 GPUs below 256 KiB; two-shot above.
double oneShotLimit(int tp) {
  if (tp == 2) return kInf;
  if (tp <= 4) return 512.0 * 1024;
  return 256.0 * 1024;
}

double factorOf(const std::string& impl, int tp) {
  return impl == "one-shot" ? tp - 1.0 : 2.0 * (tp - 1.0) / tp;
}

struct Point {
  double bytes, seconds;
};

// t = α + f·bytes·u (u = 1/busbw) by NNLS on relative error (rows / t).
AllReduceFit fitLine(const std::string& impl, int tp, double lo, double hi, const std::vector<Point>& pts,
                     double refLink) {
  AllReduceFit f;
  f.impl = impl;
  f.tp = tp;
  f.lo_bytes = lo;
  f.hi_bytes = hi;
  f.factor = factorOf(impl, tp);
  f.points = static_cast<int>(pts.size());
  if (pts.empty()) return f;
  Eigen::MatrixXd A(static_cast<Eigen::Index>(pts.size()), 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    A(r, 0) = 1.0 / pts[i].seconds;
    A(r, 1) = f.factor * pts[i].bytes / pts[i].seconds;
  }
  const Eigen::VectorXd x = nnls(A, b);
  f.alpha_s = x(0);
  const double u = x(1);
  f.busbw_gbps = u > 0 ? 1.0 / u / 1e9 : 0.0;
  f.eta = u > 0 ? 1.0 / u / refLink : 0.0;
  std::vector<double> errs;
  for (const Point& p : pts) errs.push_back(std::abs((f.alpha_s + f.factor * p.bytes * u) / p.seconds - 1.0));
  std::sort(errs.begin(), errs.end());
  const std::size_t n = errs.size();
  f.median_abs_err = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
  f.max_abs_err = errs.back();
  return f;
}

const nlohmann::json& need(const nlohmann::json& j, const char* key, const std::string& file) {
  auto it = j.find(key);
  if (it == j.end()) throw InputError("resources/" + file + ": " + key + ": missing");
  return *it;
}

std::map<int, std::vector<Point>> readPoints(const nlohmann::json& j, const std::string& file) {
  std::map<int, std::vector<Point>> out;
  for (auto it = need(j, "points", file).begin(); it != need(j, "points", file).end(); ++it) {
    const int tp = std::stoi(it.key());
    for (const auto& row : *it) out[tp].push_back({row.at(0).get<double>(), row.at(1).get<double>() * 1e-6});
  }
  return out;
}

int nearestTp(const std::vector<int>& measured, int tp) {
  int best = measured.front();
  for (int m : measured)
    if (std::abs(m - tp) < std::abs(best - tp) || (std::abs(m - tp) == std::abs(best - tp) && m > best)) best = m;
  return best;
}

}  // namespace

CollectiveModel::CollectiveModel() {
  for (const auto& file : costdetail::embeddedCollectiveFiles()) {
    const std::string path = file.path;
    const nlohmann::json j = nlohmann::json::parse(file.text);
    const std::string kind = need(j, "kind", path).get<std::string>();
    refLink_ = need(j, "reference_link_gbps", path).get<double>() * 1e9;
    const auto points = readPoints(j, path);
    if (kind == "nccl") {
      ncclSource_ = need(j, "source", path).get<std::string>();
      std::vector<double> edges{0.0};
      for (const auto& e : need(j, "regime_edges_bytes", path)) edges.push_back(e.get<double>());
      edges.push_back(kInf);
      for (const auto& [tp, pts] : points)
        for (std::size_t r = 0; r + 1 < edges.size(); ++r) {
          std::vector<Point> in;
          for (const Point& p : pts)
            if (p.bytes >= edges[r] && p.bytes < edges[r + 1]) in.push_back(p);
          fits_.push_back(fitLine("nccl", tp, edges[r], edges[r + 1], in, refLink_));
        }
    } else if (kind == "vllm-custom") {
      customSource_ = need(j, "source", path).get<std::string>();
      customMax_ = need(j, "max_bytes", path).get<double>();
      for (const auto& [tp, pts] : points) {
        const double lim = std::min(oneShotLimit(tp), customMax_);
        std::vector<Point> one, two;
        for (const Point& p : pts) (p.bytes < lim ? one : two).push_back(p);
        fits_.push_back(fitLine("one-shot", tp, 0.0, lim, one, refLink_));
        if (lim < customMax_) fits_.push_back(fitLine("two-shot", tp, lim, customMax_, two, refLink_));
      }
    } else {
      throw InputError("resources/" + path + ": kind: must be \"nccl\" or \"vllm-custom\"");
    }
  }
}

const CollectiveModel& CollectiveModel::builtin() {
  static const CollectiveModel m;
  return m;
}

std::vector<AllReduceSegment> CollectiveModel::segments(AllReduceMode mode, int tp, double link,
                                                        bool nvlink) const {
  std::vector<AllReduceSegment> out;
  if (tp <= 1 || mode == AllReduceMode::Ring) return out;
  auto measuredTps = [&](const char* impl) {
    std::vector<int> v;
    for (const auto& f : fits_)
      if (f.impl == impl && (v.empty() || v.back() != f.tp)) v.push_back(f.tp);
    return v;
  };
  auto add = [&](const AllReduceFit& f, double lo, double hi, const char* impl) {
    if (hi <= lo) return;
    AllReduceSegment s;
    s.hi_bytes = hi;
    s.fixed_s = f.alpha_s;
    s.per_byte_s = f.eta > 0 ? f.factor / (f.eta * link) : 0.0;
    s.impl = impl;
    out.push_back(s);
  };
  double from = 0;
  const bool customKernel = tp == 2 || tp == 4 || tp == 6 || tp == 8;
  if (mode == AllReduceMode::Vllm && customKernel && (nvlink || tp == 2) && customMax_ > 0) {
    const int mtp = nearestTp(measuredTps("one-shot"), tp);
    // The kernel choice follows the instance's tp; the fitted line the measured tp.
    const double lim = std::min(oneShotLimit(tp), customMax_);
    for (const auto& f : fits_)
      if (f.tp == mtp && f.impl == std::string("one-shot")) add(f, 0.0, lim, "one-shot");
    const int mtp2 = nearestTp(measuredTps("two-shot"), tp);
    if (lim < customMax_)
      for (const auto& f : fits_)
        if (f.tp == mtp2 && f.impl == std::string("two-shot")) add(f, lim, customMax_, "two-shot");
    from = customMax_;
  }
  const int ntp = nearestTp(measuredTps("nccl"), tp);
  for (const auto& f : fits_)
    if (f.tp == ntp && f.impl == std::string("nccl") && f.hi_bytes > from)
      add(f, std::max(from, f.lo_bytes), f.hi_bytes, "nccl");
  return out;
}

double allReduceSeconds(const std::vector<AllReduceSegment>& segs, double bytes) {
  if (segs.empty() || bytes <= 0) return 0.0;
  for (const auto& s : segs)
    if (bytes < s.hi_bytes) return s.fixed_s + s.per_byte_s * bytes;
  const auto& s = segs.back();
  return s.fixed_s + s.per_byte_s * bytes;
}

const char* allReduceImpl(const std::vector<AllReduceSegment>& segs, double bytes) {
  if (segs.empty()) return "";
  for (const auto& s : segs)
    if (bytes < s.hi_bytes) return s.impl;
  return segs.back().impl;
}

}  // namespace sl
