#include "cost/operator_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cost/calibration.h"
#include "util/csv.h"
#include "util/error.h"
#include "util/strings.h"

namespace sl {

const char* operatorGroupName(OperatorGroup g) {
  switch (g) {
    case OperatorGroup::Linear: return "linear";
    case OperatorGroup::PrefillAttn: return "prefill_attn";
    case OperatorGroup::DecodeAttn: return "decode_attn";
    case OperatorGroup::LayerMisc: return "layer_misc";
  }
  return "?";
}

double OperatorRow::linearParamsPerLayer() const {
  const double h = hidden, qd = static_cast<double>(q_heads) * head_dim, kvd = static_cast<double>(kv_heads) * head_dim;
  return h * (qd + 2.0 * kvd) + qd * h + 3.0 * h * intermediate;
}

// -------------------------------------------------------------------- CSV

namespace {

enum Col { kSource, kModel, kGroup, kTp, kTokens, kSeqs, kContext, kHidden, kQHeads, kKvHeads,
           kHeadDim, kInter, kDtype, kSeconds, kCols };
constexpr std::array<const char*, kCols> kColNames = {
    "source", "model",    "group",    "tp",           "tokens",      "seqs",    "context",
    "hidden", "q_heads",  "kv_heads", "head_dim",     "intermediate", "dtype_bytes", "seconds"};

std::string header() {
  std::string s;
  for (const char* name : kColNames) {
    if (!s.empty()) s += ',';
    s += name;
  }
  return s;
}

}  // namespace

std::vector<OperatorRow> parseOperatorCsv(std::istream& raw, const std::string& name) {
  // '#' lines are comments (source and licence notes): blank them so the
  // reader skips them and line numbers stay those of the file.
  std::stringstream in;
  for (std::string l; std::getline(raw, l);) {
    const std::string_view t = trimView(l);
    in << (!t.empty() && t.front() == '#' ? std::string() : l) << '\n';
  }
  CsvReader reader(in, name);
  std::vector<std::string> f;
  if (!reader.next(f)) throw InputError(name + ": empty file: expected a header row naming " + header());
  std::array<int, kCols> col{};
  col.fill(-1);
  for (std::size_t i = 0; i < f.size(); ++i) {
    const std::string key(trimView(f[i]));
    for (std::size_t c = 0; c < kCols; ++c)
      if (key == kColNames[c]) {
        if (col[c] >= 0) throw InputError(reader.where() + ": column '" + key + "' appears twice");
        col[c] = static_cast<int>(i);
      }
  }
  for (std::size_t c = 0; c < kCols; ++c)
    if (col[c] < 0)
      throw InputError(reader.where() + ": header lacks column '" + kColNames[c] + "' (needed: " + header() + ")");
  const std::size_t width = f.size();

  std::vector<OperatorRow> rows;
  while (reader.next(f)) {
    const std::string where = reader.where();
    if (f.size() != width)
      throw InputError(where + ": expected " + std::to_string(width) + " fields like the header, got " +
                       std::to_string(f.size()));
    auto text = [&](Col c) { return std::string(trimView(f[static_cast<std::size_t>(col[c])])); };
    auto number = [&](Col c, double minimum, bool whole) {
      const std::string t = text(c);
      const auto d = parseDouble(t);
      if (!d || !std::isfinite(*d)) throw InputError(where + ": " + kColNames[c] + ": not a number: '" + t + "'");
      if (whole && (*d != std::floor(*d) || *d > 1e9))
        throw InputError(where + ": " + kColNames[c] + ": must be a whole number (got " + t + ")");
      if (*d < minimum)
        throw InputError(where + ": " + kColNames[c] + ": must be >= " + formatFixed(minimum, 0) + " (got " + t + ")");
      return *d;
    };
    OperatorRow r;
    r.source = text(kSource);
    r.model = text(kModel);
    const std::string g = text(kGroup);
    if (g == "linear") r.group = OperatorGroup::Linear;
    else if (g == "prefill_attn") r.group = OperatorGroup::PrefillAttn;
    else if (g == "decode_attn") r.group = OperatorGroup::DecodeAttn;
    else if (g == "layer_misc") r.group = OperatorGroup::LayerMisc;
    else
      throw InputError(where + ": group: unknown operator group '" + g +
                       "' (known: linear, prefill_attn, decode_attn, layer_misc)");
    r.tp = static_cast<int>(number(kTp, 1, true));
    r.tokens = number(kTokens, 0, false);
    r.seqs = static_cast<int>(number(kSeqs, 0, true));
    r.context = number(kContext, 0, false);
    r.hidden = static_cast<int>(number(kHidden, 1, true));
    r.q_heads = static_cast<int>(number(kQHeads, 1, true));
    r.kv_heads = static_cast<int>(number(kKvHeads, 1, true));
    r.head_dim = static_cast<int>(number(kHeadDim, 1, true));
    r.intermediate = static_cast<int>(number(kInter, 1, true));
    r.dtype_bytes = static_cast<int>(number(kDtype, 1, true));
    r.seconds = number(kSeconds, 0, false);
    r.line = reader.line();
    if (!(r.seconds > 0)) throw InputError(where + ": seconds: must be > 0");
    if (r.group != OperatorGroup::LayerMisc && !(r.tokens > 0))
      throw InputError(where + ": tokens: must be > 0 for group " + g);
    if ((r.group == OperatorGroup::PrefillAttn || r.group == OperatorGroup::DecodeAttn) && r.seqs < 1)
      throw InputError(where + ": seqs: must be >= 1 for group " + g);
    if (r.group == OperatorGroup::DecodeAttn && !(r.context > 0))
      throw InputError(where + ": context: must be > 0 for group decode_attn (the sum of the context lengths)");
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw InputError(name + ": no operator rows after the header");
  return rows;
}

std::vector<OperatorRow> readOperatorCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open operator profile");
  return parseOperatorCsv(in, path);
}

// ------------------------------------------------------------- prediction

OperatorWork operatorWork(const GpuSpec& gpu, const OperatorRow& r) {
  OperatorWork w;
  const double tp = r.tp, F = gpu.flopsPerSec(), BW = gpu.hbmBytesPerSec();
  switch (r.group) {
    case OperatorGroup::Linear: {
      const double P = r.linearParamsPerLayer();
      w.xc = 2.0 * P * r.tokens / (tp * F);
      w.xw = P * r.dtype_bytes / (tp * BW);
      break;
    }
    case OperatorGroup::PrefillAttn: {
      // Equal chunks: Σ n_j(c_j + n_j/2) = N(C + N/2)/k (Measurement::shape).
      const double units = r.tokens * (r.context + r.tokens / 2.0) / r.seqs;
      w.xa = 4.0 * r.q_heads * r.head_dim * units / (tp * F);
      break;
    }
    case OperatorGroup::DecodeAttn:
      w.xkv = 2.0 * r.kv_heads * r.head_dim * r.dtype_bytes * r.context / (tp * BW);
      break;
    case OperatorGroup::LayerMisc: break;
  }
  return w;
}

double predictOperator(const GpuSpec& gpu, const CostCoefficients& c, const OperatorRow& r) {
  const OperatorWork w = operatorWork(gpu, r);
  switch (r.group) {
    case OperatorGroup::Linear: return std::max(w.xc / c.eta_c, w.xw / c.eta_w);
    case OperatorGroup::PrefillAttn: return w.xa / c.eta_a;
    case OperatorGroup::DecodeAttn: return w.xkv / c.eta_kv;
    case OperatorGroup::LayerMisc: return c.t_layer_us * 1e-6;
  }
  return 0.0;
}

// ----------------------------------------------------------------- errors

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

OperatorGroupError summarise(std::string name, const std::vector<double>& signedPct) {
  OperatorGroupError e;
  e.name = std::move(name);
  e.rows = static_cast<std::int64_t>(signedPct.size());
  std::vector<double> absPct;
  double sum = 0;
  for (double s : signedPct) {
    absPct.push_back(std::abs(s));
    sum += std::abs(s);
  }
  e.medianAbsPct = median(absPct);
  e.meanAbsPct = signedPct.empty() ? 0.0 : sum / static_cast<double>(signedPct.size());
  e.medianSignedPct = median(signedPct);
  return e;
}

constexpr std::array<OperatorGroup, 4> kGroups = {OperatorGroup::Linear, OperatorGroup::PrefillAttn,
                                                  OperatorGroup::DecodeAttn, OperatorGroup::LayerMisc};

}  // namespace

std::vector<OperatorGroupError> operatorErrors(const std::vector<OperatorRow>& rows,
                                               const std::vector<double>& predicted,
                                               const std::vector<char>& computeBranch) {
  std::vector<OperatorGroupError> out;
  for (OperatorGroup g : kGroups) {
    std::vector<double> all, weight, compute;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].group != g) continue;
      const double s = (predicted[i] - rows[i].seconds) / rows[i].seconds * 100.0;
      all.push_back(s);
      if (g == OperatorGroup::Linear) (computeBranch[i] ? compute : weight).push_back(s);
    }
    if (all.empty()) continue;
    out.push_back(summarise(operatorGroupName(g), all));
    if (g == OperatorGroup::Linear) {
      if (!weight.empty()) out.push_back(summarise("linear/weight", weight));
      if (!compute.empty()) out.push_back(summarise("linear/compute", compute));
    }
  }
  return out;
}

std::vector<OperatorGroupError> compareOperators(const GpuSpec& gpu, const CostCoefficients& c,
                                                 const std::vector<OperatorRow>& rows) {
  std::vector<double> pred;
  std::vector<char> comp;
  for (const OperatorRow& r : rows) {
    pred.push_back(predictOperator(gpu, c, r));
    const OperatorWork w = operatorWork(gpu, r);
    comp.push_back(r.group == OperatorGroup::Linear && w.xc / c.eta_c > w.xw / c.eta_w ? 1 : 0);
  }
  return operatorErrors(rows, pred, comp);
}

// -------------------------------------------------------------------- fit

namespace {

// Unknowns: 1/η_c, 1/η_w, 1/η_a, 1/η_kv, then one intercept (s) per group.
enum Unknown { kUc, kUw, kUa, kUkv, kKLin, kKPre, kKDec, kKMisc, kUnknowns };

Unknown interceptOf(OperatorGroup g) {
  switch (g) {
    case OperatorGroup::Linear: return kKLin;
    case OperatorGroup::PrefillAttn: return kKPre;
    case OperatorGroup::DecodeAttn: return kKDec;
    case OperatorGroup::LayerMisc: return kKMisc;
  }
  return kKMisc;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::vector<OperatorGroup> parseOperatorGroups(const std::string& list, const std::string& where) {
  std::vector<OperatorGroup> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    const std::string name(trimView(item));
    bool found = false;
    for (OperatorGroup g : kGroups)
      if (name == operatorGroupName(g)) {
        found = true;
        if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
      }
    if (!found)
      throw InputError(where + ": unknown operator group '" + name +
                       "' (known: linear, prefill_attn, decode_attn, layer_misc)");
  }
  if (out.empty()) throw InputError(where + ": names no operator group");
  return out;
}

OperatorFitReport fitOperators(const GpuSpec& gpu, const std::vector<OperatorRow>& allRows,
                               const CostCoefficients& base, const std::vector<OperatorGroup>& groups) {
  std::vector<OperatorRow> rows;
  for (const OperatorRow& r : allRows)
    if (groups.empty() || std::find(groups.begin(), groups.end(), r.group) != groups.end()) rows.push_back(r);
  if (rows.empty()) throw InputError("operator fit: no rows (of the groups to fit)");
  const std::size_t n = rows.size();
  std::vector<OperatorWork> work;
  work.reserve(n);
  for (const OperatorRow& r : rows) work.push_back(operatorWork(gpu, r));

  double uc = 1.0 / base.eta_c, uw = 1.0 / base.eta_w;
  std::vector<char> compute(n, 0);
  auto assign = [&] {
    bool changed = false;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = rows[i].group == OperatorGroup::Linear && uc * work[i].xc > uw * work[i].xw ? 1 : 0;
      changed = changed || c != compute[i];
      compute[i] = c;
    }
    return changed;
  };
  assign();

  Eigen::VectorXd x = Eigen::VectorXd::Zero(kUnknowns);
  std::array<bool, kUnknowns> excited{};
  OperatorFitReport rep;
  int round = 0;
  const int maxRounds = 20;
  for (round = 1; round <= maxRounds; ++round) {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), kUnknowns);
    Eigen::VectorXd y(static_cast<Eigen::Index>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      const OperatorWork& w = work[i];
      A(r, kUc) = compute[i] ? w.xc : 0.0;
      A(r, kUw) = rows[i].group == OperatorGroup::Linear && !compute[i] ? w.xw : 0.0;
      A(r, kUa) = w.xa;
      A(r, kUkv) = w.xkv;
      A(r, interceptOf(rows[i].group)) = 1.0;
      const double wgt = 1.0 / rows[i].seconds;  // relative error
      A.row(r) *= wgt;
      y(r) = 1.0;  // seconds · wgt
    }
    for (int j = 0; j < kUnknowns; ++j) excited[static_cast<std::size_t>(j)] = A.col(j).squaredNorm() > 0;
    x = nnls(A, y);
    if (x(kUc) > 0) uc = x(kUc);
    if (x(kUw) > 0) uw = x(kUw);
    if (!assign()) {
      rep.converged = true;
      break;
    }
  }
  rep.iterations = std::min(round, maxRounds);

  CostCoefficients c = base;
  auto eta = [&](Unknown u, double& field, const char* key) {
    if (!excited[u]) rep.notes.push_back(std::string(key) + ": no row exercises this term; kept " + num(field));
    else if (x(u) <= 0) rep.notes.push_back(std::string(key) + ": fitted to 0; kept " + num(field));
    else field = 1.0 / x(u);
  };
  eta(kUc, c.eta_c, "eta_c");
  eta(kUw, c.eta_w, "eta_w");
  eta(kUa, c.eta_a, "eta_a");
  eta(kUkv, c.eta_kv, "eta_kv");
  rep.linearFixedUs = x(kKLin) * 1e6;
  rep.prefillFixedUs = x(kKPre) * 1e6;
  rep.decodeFixedUs = x(kKDec) * 1e6;
  rep.miscFixedUs = x(kKMisc) * 1e6;
  if (excited[kKLin] && excited[kKMisc] && (excited[kKDec] || excited[kKPre])) {
    const double attn = excited[kKDec] ? rep.decodeFixedUs : rep.prefillFixedUs;
    c.t_layer_us = rep.linearFixedUs + rep.miscFixedUs + attn;
    if (!excited[kKDec]) rep.notes.push_back("t_layer_us: no decode_attn rows; the prefill_attn kernel's fixed time stands for the attention kernel");
  } else {
    rep.notes.push_back("t_layer_us: needs linear, layer_misc and attention rows; kept " + num(c.t_layer_us));
  }
  if (!rep.converged) rep.notes.push_back("branch assignment did not settle in " + std::to_string(maxRounds) + " rounds");
  rep.coefficients = c;
  rep.rows = static_cast<std::int64_t>(n);

  // Errors of the fitted per-layer model: each group's term + its intercept.
  std::vector<double> pred(n);
  std::vector<char> comp(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const OperatorRow& r = rows[i];
    const OperatorWork& w = work[i];
    double t = x(interceptOf(r.group));
    if (r.group == OperatorGroup::Linear) {
      comp[i] = w.xc / c.eta_c > w.xw / c.eta_w ? 1 : 0;
      t += std::max(w.xc / c.eta_c, w.xw / c.eta_w);
    }
    t += w.xa / c.eta_a + w.xkv / c.eta_kv;
    pred[i] = t;
  }
  rep.fitErrors = operatorErrors(rows, pred, comp);
  return rep;
}

namespace {
nlohmann::json errorsJson(const std::vector<OperatorGroupError>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const OperatorGroupError& e : v)
    a.push_back({{"group", e.name},
                 {"rows", e.rows},
                 {"median_abs_pct", e.medianAbsPct},
                 {"mean_abs_pct", e.meanAbsPct},
                 {"median_signed_pct", e.medianSignedPct}});
  return a;
}
}  // namespace

nlohmann::json OperatorFitReport::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  j["rows"] = rows;
  j["iterations"] = iterations;
  j["converged"] = converged;
  j["fixed_us_per_layer"] = {{"linear", linearFixedUs},
                             {"prefill_attn", prefillFixedUs},
                             {"decode_attn", decodeFixedUs},
                             {"layer_misc", miscFixedUs}};
  j["fit_errors"] = errorsJson(fitErrors);
  j["notes"] = notes;
  return j;
}

nlohmann::json operatorErrorsJson(const std::vector<OperatorGroupError>& v) { return errorsJson(v); }

// ------------------------------------------------------- MoE expert GEMM

std::vector<ExpertGemmPoint> parseExpertGemmCsv(std::istream& raw, const std::string& name) {
  std::stringstream in;
  for (std::string l; std::getline(raw, l);) {
    const std::string_view t = trimView(l);
    in << (!t.empty() && t.front() == '#' ? std::string() : l) << '\n';
  }
  static const std::array<const char*, 6> names = {"gemm", "tokens", "tp", "hidden", "intermediate", "latency_ns"};
  const std::string needed = "gemm,tokens,tp,hidden,intermediate,latency_ns";
  CsvReader reader(in, name);
  std::vector<std::string> f;
  if (!reader.next(f)) throw InputError(name + ": empty file: expected a header row naming " + needed);
  std::array<int, 6> col{};
  col.fill(-1);
  for (std::size_t i = 0; i < f.size(); ++i)
    for (std::size_t c = 0; c < names.size(); ++c)
      if (trimView(f[i]) == names[c]) {
        if (col[c] >= 0) throw InputError(reader.where() + ": column '" + names[c] + "' appears twice");
        col[c] = static_cast<int>(i);
      }
  for (std::size_t c = 0; c < names.size(); ++c)
    if (col[c] < 0)
      throw InputError(reader.where() + ": header lacks column '" + names[c] + "' (needed: " + needed + ")");
  const std::size_t width = f.size();

  struct Acc {
    ExpertGemmPoint p;
    std::array<bool, 3> seen{};
    std::string where;
  };
  std::vector<Acc> acc;  // in first-seen order
  while (reader.next(f)) {
    const std::string where = reader.where();
    if (f.size() != width)
      throw InputError(where + ": expected " + std::to_string(width) + " fields like the header, got " +
                       std::to_string(f.size()));
    auto text = [&](std::size_t c) { return std::string(trimView(f[static_cast<std::size_t>(col[c])])); };
    auto number = [&](std::size_t c, double minimum) {
      const std::string t = text(c);
      const auto d = parseDouble(t);
      if (!d || !std::isfinite(*d)) throw InputError(where + ": " + names[c] + ": not a number: '" + t + "'");
      if (*d != std::floor(*d) || *d > 1e12)
        throw InputError(where + ": " + names[c] + ": must be a whole number (got " + t + ")");
      if (*d < minimum)
        throw InputError(where + ": " + names[c] + ": must be >= " + formatFixed(minimum, 0) + " (got " + t + ")");
      return *d;
    };
    const std::string g = text(0);
    int gi = -1;
    if (g == "expert.w1")
      gi = 0;
    else if (g == "expert.w2")
      gi = 1;
    else if (g == "expert.w3")
      gi = 2;
    else
      throw InputError(where + ": gemm: unknown expert GEMM '" + g + "' (known: expert.w1, expert.w2, expert.w3)");
    ExpertGemmPoint p;
    p.tokens = number(1, 1);
    p.tp = static_cast<int>(number(2, 1));
    p.hidden = static_cast<int>(number(3, 1));
    p.intermediate = static_cast<int>(number(4, 1));
    const double ns = number(5, 1);
    auto it =
        std::find_if(acc.begin(), acc.end(), [&](const Acc& a) { return a.p.tp == p.tp && a.p.tokens == p.tokens; });
    if (it == acc.end()) {
      acc.push_back({p, {}, where});
      it = acc.end() - 1;
    } else if (it->p.hidden != p.hidden || it->p.intermediate != p.intermediate) {
      throw InputError(where + ": hidden/intermediate differ from " + it->where + " (same tp and tokens)");
    }
    if (it->seen[static_cast<std::size_t>(gi)])
      throw InputError(where + ": gemm: " + g + " appears twice for tp " + std::to_string(p.tp) + ", tokens " +
                       formatFixed(p.tokens, 0));
    it->seen[static_cast<std::size_t>(gi)] = true;
    it->p.seconds += ns * 1e-9;
  }
  std::vector<ExpertGemmPoint> out;
  for (const Acc& a : acc) {
    for (std::size_t i = 0; i < 3; ++i)
      if (!a.seen[i])
        throw InputError(a.where + ": tp " + std::to_string(a.p.tp) + ", tokens " + formatFixed(a.p.tokens, 0) +
                         ": lacks expert.w" + std::to_string(i + 1) + " (each point needs w1, w2 and w3)");
    out.push_back(a.p);
  }
  if (out.empty()) throw InputError(name + ": no expert GEMM rows after the header");
  return out;
}

std::vector<ExpertGemmPoint> readExpertGemmCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open expert GEMM profile");
  return parseExpertGemmCsv(in, path);
}

OperatorWork expertGemmWork(const GpuSpec& gpu, const ExpertGemmPoint& p, double dtypeBytes) {
  const double P = 3.0 * static_cast<double>(p.hidden) * p.intermediate;
  OperatorWork w;
  w.xc = 2.0 * P * p.tokens / gpu.flopsPerSec();
  w.xw = P * dtypeBytes / gpu.hbmBytesPerSec();
  return w;
}

double predictExpertGemm(const GpuSpec& gpu, double eta_c, double eta_w, const ExpertGemmPoint& p) {
  const OperatorWork w = expertGemmWork(gpu, p);
  return std::max(w.xc / eta_c, w.xw / eta_w);
}

ExpertGemmFit fitExpertGemm(const GpuSpec& gpu, const std::vector<ExpertGemmPoint>& points) {
  if (points.empty()) throw InputError("expert GEMM fit: no points");
  ExpertGemmFit fit;
  fit.points = static_cast<std::int64_t>(points.size());
  double a = 1.0 / CostCoefficients{}.eta_c, b = 1.0 / CostCoefficients{}.eta_w;  // 1/η start: the dense defaults
  std::vector<char> branch(points.size(), 2);
  for (int it = 1; it <= 100; ++it) {
    fit.iterations = it;
    std::vector<char> next(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      const OperatorWork w = expertGemmWork(gpu, points[i]);
      next[i] = a * w.xc > b * w.xw ? 1 : 0;
    }
    if (next == branch) {
      fit.converged = true;
      break;
    }
    branch = next;
    // Relative residuals (x/t)·(1/η) − 1: the two branches' unknowns are
    // separate, so each is a one-variable least squares: 1/η = Σ(x/t) / Σ(x/t)².
    double sc = 0, scc = 0, sw = 0, sww = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const OperatorWork w = expertGemmWork(gpu, points[i]);
      const double t = points[i].seconds;
      if (branch[i]) {
        sc += w.xc / t;
        scc += (w.xc / t) * (w.xc / t);
      } else {
        sw += w.xw / t;
        sww += (w.xw / t) * (w.xw / t);
      }
    }
    if (scc <= 0 || sww <= 0)
      throw InputError(std::string("expert GEMM fit: no point on the ") + (scc <= 0 ? "compute" : "weight-read") +
                       " branch, so its efficiency is not determined by the data");
    a = sc / scc;
    b = sw / sww;
  }
  fit.eta_c = 1.0 / a;
  fit.eta_w = 1.0 / b;
  fit.computePoints = std::count(branch.begin(), branch.end(), char{1});
  return fit;
}

ExpertGemmError expertGemmError(const GpuSpec& gpu, double eta_c, double eta_w,
                                const std::vector<ExpertGemmPoint>& points) {
  ExpertGemmError e;
  e.points = static_cast<std::int64_t>(points.size());
  if (points.empty()) return e;
  std::vector<double> abs;
  for (const ExpertGemmPoint& p : points)
    abs.push_back(std::fabs(predictExpertGemm(gpu, eta_c, eta_w, p) - p.seconds) / p.seconds * 100.0);
  double sum = 0;
  for (double v : abs) sum += v;
  e.meanAbsPct = sum / static_cast<double>(abs.size());
  e.maxAbsPct = *std::max_element(abs.begin(), abs.end());
  std::sort(abs.begin(), abs.end());
  const std::size_t n = abs.size();
  e.medianAbsPct = n % 2 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2.0;
  return e;
}

bool isHopperPreset(const GpuSpec& gpu) {
  static const std::array<const char*, 7> ids = {"h100-sxm-80g", "h100-96g", "h100-nvl-94g", "h100-pcie-80g",
                                                 "h800-80g",     "h20-141g", "h200-sxm-141g"};
  return std::find(ids.begin(), ids.end(), gpu.id) != ids.end();
}

double expertWeightReadEta(const GpuSpec& gpu, const CostCoefficients& c) {
  return isHopperPreset(gpu) && c.eta_w == CostCoefficients{}.eta_w ? kH100ExpertGemmEtaW : c.eta_w;
}

}  // namespace sl
