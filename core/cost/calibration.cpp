#include "cost/calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "util/csv.h"
#include "util/error.h"
#include "util/rng.h"
#include "util/strings.h"

namespace sl {

// ------------------------------------------------------------- measurements

BatchShape Measurement::shape() const {
  BatchShape b;
  b.decode_seqs = decode_seqs;
  b.decode_ctx_sum = decode_context_sum;
  if (decode_seqs > 0) {
    const double n = decode_seqs;
    const double mean = decode_context_sum / n;
    b.decode_ctx_sumsq = n * mean * mean * (1.0 + decode_context_cv * decode_context_cv);
  }
  b.prefill_seqs = prefill_seqs;
  b.prefill_tokens = prefill_tokens;
  if (prefill_seqs > 0) b.prefill_attn = prefill_tokens * (cached_tokens + prefill_tokens / 2) / prefill_seqs;
  return b;
}

namespace {

constexpr std::array<const char*, 8> kColumns = {
    "tp",          "prefill_tokens",     "prefill_seqs",      "cached_tokens",
    "decode_seqs", "decode_context_sum", "decode_context_cv", "seconds"};

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string measurementsCsvHeader() {
  std::string s;
  for (std::size_t i = 0; i < kColumns.size(); ++i) {
    if (i) s += ',';
    s += kColumns[i];
  }
  return s;
}

std::string measurementCsvRow(const Measurement& m) {
  return std::to_string(m.tp) + ',' + num(m.prefill_tokens) + ',' + std::to_string(m.prefill_seqs) + ',' +
         num(m.cached_tokens) + ',' + std::to_string(m.decode_seqs) + ',' + num(m.decode_context_sum) + ',' +
         num(m.decode_context_cv) + ',' + num(m.seconds);
}

std::vector<Measurement> parseMeasurementsCsv(std::istream& in, const std::string& name) {
  CsvReader reader(in, name);
  std::vector<std::string> fields;
  if (!reader.next(fields))
    throw InputError(name + ": empty file: expected a header row naming " + measurementsCsvHeader());
  std::array<int, kColumns.size()> col{};
  col.fill(-1);
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const std::string key(trimView(fields[f]));
    for (std::size_t c = 0; c < kColumns.size(); ++c)
      if (key == kColumns[c]) {
        if (col[c] >= 0) throw InputError(reader.where() + ": column '" + key + "' appears twice");
        col[c] = static_cast<int>(f);
      }
  }
  for (std::size_t c = 0; c < kColumns.size(); ++c)
    if (col[c] < 0)
      throw InputError(reader.where() + ": header lacks column '" + kColumns[c] +
                       "' (needed: " + measurementsCsvHeader() + ")");
  const std::size_t width = fields.size();

  std::vector<Measurement> rows;
  while (reader.next(fields)) {
    const std::string where = reader.where();
    if (fields.size() != width)
      throw InputError(where + ": expected " + std::to_string(width) + " fields like the header, got " +
                       std::to_string(fields.size()));
    std::array<double, kColumns.size()> v{};
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      const std::string& text = fields[static_cast<std::size_t>(col[c])];
      const auto d = parseDouble(text);
      if (!d) throw InputError(where + ": " + kColumns[c] + ": not a number: '" + text + "'");
      v[c] = *d;
      const bool integer = c == 0 || c == 2 || c == 4;
      if (integer && (*d != std::floor(*d) || *d > 1e9))
        throw InputError(where + ": " + kColumns[c] + ": must be a whole number (got " + text + ")");
      if (*d < 0) throw InputError(where + ": " + kColumns[c] + ": must be >= 0 (got " + text + ")");
    }
    Measurement m;
    m.tp = static_cast<int>(v[0]);
    m.prefill_tokens = v[1];
    m.prefill_seqs = static_cast<int>(v[2]);
    m.cached_tokens = v[3];
    m.decode_seqs = static_cast<int>(v[4]);
    m.decode_context_sum = v[5];
    m.decode_context_cv = v[6];
    m.seconds = v[7];
    m.line = reader.line();
    if (m.tp < 1) throw InputError(where + ": tp: must be >= 1 (got " + fields[static_cast<std::size_t>(col[0])] + ")");
    if (!(m.seconds > 0)) throw InputError(where + ": seconds: must be > 0");
    if ((m.prefill_seqs > 0) != (m.prefill_tokens > 0))
      throw InputError(where + ": prefill_tokens and prefill_seqs must both be 0 or both be > 0");
    if (m.prefill_seqs == 0 && m.cached_tokens > 0)
      throw InputError(where + ": cached_tokens > 0 without a prefill chunk");
    if (m.decode_seqs == 0 && (m.decode_context_sum > 0 || m.decode_context_cv > 0))
      throw InputError(where + ": decode_context_sum/cv > 0 with decode_seqs 0");
    if (m.prefill_seqs == 0 && m.decode_seqs == 0)
      throw InputError(where + ": empty batch (no prefill and no decode sequences)");
    rows.push_back(m);
  }
  if (rows.empty()) throw InputError(name + ": no measurement rows after the header");
  return rows;
}

std::vector<Measurement> readMeasurementsCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open measurements file");
  return parseMeasurementsCsv(in, path);
}

// --------------------------------------------------------------------- NNLS

Eigen::VectorXd nnls(const Eigen::MatrixXd& Ain, const Eigen::VectorXd& b, int* iterations) {
  const Eigen::Index n = Ain.cols();
  Eigen::VectorXd scale = Eigen::VectorXd::Ones(n);
  Eigen::MatrixXd A = Ain;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double norm = A.col(j).norm();
    if (norm > 0) {
      scale(j) = 1.0 / norm;
      A.col(j) *= scale(j);
    }
  }
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double tol = 1e-12 * std::max(1.0, b.norm());
  int iter = 0;
  const int maxIter = static_cast<int>(30 * n + 30);

  auto solvePassive = [&](Eigen::VectorXd& s) {
    std::vector<Eigen::Index> idx;
    for (Eigen::Index j = 0; j < n; ++j)
      if (passive[static_cast<std::size_t>(j)]) idx.push_back(j);
    s = Eigen::VectorXd::Zero(n);
    if (idx.empty()) return;
    Eigen::MatrixXd Ap(A.rows(), static_cast<Eigen::Index>(idx.size()));
    for (std::size_t k = 0; k < idx.size(); ++k) Ap.col(static_cast<Eigen::Index>(k)) = A.col(idx[k]);
    const Eigen::VectorXd z = Ap.colPivHouseholderQr().solve(b);
    for (std::size_t k = 0; k < idx.size(); ++k) s(idx[k]) = z(static_cast<Eigen::Index>(k));
  };

  Eigen::VectorXd w = A.transpose() * (b - A * x);
  while (iter < maxIter) {
    // Most promising active (zero) variable.
    Eigen::Index best = -1;
    double bestW = tol;
    for (Eigen::Index j = 0; j < n; ++j)
      if (!passive[static_cast<std::size_t>(j)] && w(j) > bestW && A.col(j).squaredNorm() > 0) {
        bestW = w(j);
        best = j;
      }
    if (best < 0) break;
    ++iter;
    passive[static_cast<std::size_t>(best)] = true;
    Eigen::VectorXd s;
    for (int inner = 0; inner <= n; ++inner) {
      solvePassive(s);
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<std::size_t>(j)] && s(j) <= 0) feasible = false;
      if (feasible) break;
      // Step from x towards s as far as feasibility allows.
      double alpha = 1.0;
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<std::size_t>(j)] && s(j) <= 0) {
          const double den = x(j) - s(j);
          if (den > 0) alpha = std::min(alpha, x(j) / den);
        }
      x += alpha * (s - x);
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<std::size_t>(j)] && x(j) <= 1e-15 * std::max(1.0, x.cwiseAbs().maxCoeff())) {
          passive[static_cast<std::size_t>(j)] = false;
          x(j) = 0;
        }
    }
    for (Eigen::Index j = 0; j < n; ++j) x(j) = passive[static_cast<std::size_t>(j)] ? std::max(0.0, s(j)) : 0.0;
    w = A.transpose() * (b - A * x);
  }
  if (iterations) *iterations = iter;
  return x.cwiseProduct(scale);
}

// -------------------------------------------------------------- calibration

namespace {

// Unknowns, in solve order.
enum Unknown { kFixed, kSeq, kC, kA, kW, kKv, kQ, kAlpha, kUnknowns };

struct RowFeatures {
  double fixed = 1, seq = 0;  // per second of t0 / t_seq
  double xc = 0, xw = 0;      // linear compute / weight read at η = 1
  double xa = 0;              // prefill attention at η_a = 1
  double xkv = 0;             // decode KV read at η_kv = 1 (h = 1)
  double cv = 0;              // for h (0 with < 2 decode seqs)
  double hk = 1;              // the kernel rule's h (hetero = kernel): no fitted coefficient
  double alpha = 0;           // all-reduce hops (per second of α_hop)
  double offset = 0;          // bandwidth part of the all-reduces (no coefficient)
};

RowFeatures featuresOf(const GpuSpec& gpu, const ModelSpec& model, const Measurement& m, AllReduceMode allreduce,
                       const CostCoefficients& base) {
  RowFeatures f;
  const BatchShape b = m.shape();
  const double tpd = m.tp;
  const double F = gpu.flopsPerSec();
  const double BW = gpu.hbmBytesPerSec();
  const double N = batchTokens(b);
  f.seq = b.decode_seqs + b.prefill_seqs;
  f.xc = 2.0 * static_cast<double>(model.linearParams()) * N / (tpd * F);
  f.xw = static_cast<double>(model.weightBytes()) / (tpd * BW);
  f.xa = 4.0 * model.layers * model.q_heads * model.head_dim * b.prefill_attn / (tpd * F);
  f.xkv = static_cast<double>(model.kvBytesPerToken()) * b.decode_ctx_sum / (tpd * BW);
  f.cv = decodeContextCv(b);  // on the reconstructed Σ L²
  // The kernel rule depends on the batch, the model, tp and the GPU's slots
  // only (attn_ctas_per_sm from the base, not fitted): a known factor.
  f.hk = CostModel(gpu, model, m.tp, base, allreduce).kernelHeterogeneity(b);
  if (m.tp > 1 && allreduce != AllReduceMode::Ring) {
    // Measured collectives: no coefficient, the time is known.
    f.offset = CostModel(gpu, model, m.tp, CostCoefficients{}, allreduce).breakdown(b).comm_s;
  } else if (m.tp > 1) {
    const double link = gpu.intraNodeLinkBytesPerSec();
    const double perLayerAr = 2.0 * model.layers;
    f.alpha = perLayerAr * 2.0 * (tpd - 1);
    f.offset = perLayerAr * 2.0 * (tpd - 1) / tpd * model.hidden * model.dtype_bytes / (link * 0.5) * N;
  }
  return f;
}

// Current values of the unknowns as coefficients-in-use (1/η etc.).
struct Params {
  double u_c, u_a, u_w, u_kv, kappa, h_max;
};

const char* kKeys[] = {"t_step_us", "t_layer_us", "t_seq_us", "eta_c",       "eta_a",
                       "eta_w",     "eta_kv",     "kappa",    "alpha_hop_us"};

}  // namespace

double predictMeasurement(const GpuSpec& gpu, const ModelSpec& model, const CostCoefficients& c, const Measurement& m,
                          AllReduceMode allreduce) {
  return CostModel(gpu, model, m.tp, c, allreduce).iterationSeconds(m.shape());
}

double costModelMape(const GpuSpec& gpu, const ModelSpec& model, const CostCoefficients& c,
                     const std::vector<Measurement>& rows, AllReduceMode allreduce) {
  if (rows.empty()) return 0.0;
  double sum = 0;
  for (const Measurement& m : rows)
    sum += std::abs(predictMeasurement(gpu, model, c, m, allreduce) - m.seconds) / m.seconds;
  return sum / static_cast<double>(rows.size());
}

CostProfile calibrateCostModel(const GpuSpec& gpu, const ModelSpec& model, const std::vector<Measurement>& rows,
                               const CalibrationOptions& opt, CalibrationReport* report) {
  if (rows.empty()) throw InputError("calibration: no measurements");
  const CostCoefficients& base = opt.base;
  const std::size_t nRows = rows.size();
  std::vector<RowFeatures> feats;
  feats.reserve(nRows);
  for (const Measurement& m : rows) {
    if (!(m.seconds > 0)) throw InputError("calibration: line " + std::to_string(m.line) + ": seconds must be > 0");
    if (m.tp < 1) throw InputError("calibration: line " + std::to_string(m.line) + ": tp must be >= 1");
    if (m.prefill_seqs <= 0 && m.decode_seqs <= 0)
      throw InputError("calibration: line " + std::to_string(m.line) + ": empty batch");
    feats.push_back(featuresOf(gpu, model, m, opt.allreduce, base));
  }

  const bool kernel = base.hetero == HeteroMode::Kernel;
  Params p{1.0 / base.eta_c, 1.0 / base.eta_a, 1.0 / base.eta_w, 1.0 / base.eta_kv, base.kappa, base.h_max};
  std::vector<char> compute(nRows), capped(nRows);
  auto assign = [&](const Params& q) {
    bool changed = false;
    for (std::size_t i = 0; i < nRows; ++i) {
      const RowFeatures& f = feats[i];
      const char c = q.u_c * f.xc > q.u_w * f.xw ? 1 : 0;
      const char h = !kernel && 1.0 + q.kappa * f.cv >= q.h_max && f.cv > 0 ? 1 : 0;
      changed = changed || c != compute[i] || h != capped[i];
      compute[i] = c;
      capped[i] = h;
    }
    return changed;
  };
  assign(p);

  Eigen::VectorXd x = Eigen::VectorXd::Zero(kUnknowns);
  std::array<bool, kUnknowns> excited{};
  int rounds = 0;
  bool converged = false;
  for (rounds = 1; rounds <= std::max(1, opt.maxIterations); ++rounds) {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(nRows), kUnknowns);
    Eigen::VectorXd y(static_cast<Eigen::Index>(nRows));
    for (std::size_t i = 0; i < nRows; ++i) {
      const RowFeatures& f = feats[i];
      const auto r = static_cast<Eigen::Index>(i);
      const double wgt = 1.0 / rows[i].seconds;  // relative error: multiplicative noise, MAPE
      A(r, kFixed) = f.fixed;
      A(r, kSeq) = f.seq;
      A(r, kC) = compute[i] ? f.xc : 0.0;
      A(r, kW) = compute[i] ? 0.0 : f.xw;
      A(r, kA) = f.xa;
      if (kernel) {
        A(r, kKv) = f.hk * f.xkv;
        A(r, kQ) = 0.0;
      } else {
        A(r, kKv) = capped[i] ? p.h_max * f.xkv : f.xkv;
        A(r, kQ) = capped[i] ? 0.0 : f.cv * f.xkv;
      }
      A(r, kAlpha) = f.alpha;
      A.row(r) *= wgt;
      y(r) = (rows[i].seconds - f.offset) * wgt;
    }
    for (int j = 0; j < kUnknowns; ++j) excited[static_cast<std::size_t>(j)] = A.col(j).squaredNorm() > 0;
    x = nnls(A, y);
    Params next = p;
    if (x(kC) > 0) next.u_c = x(kC);
    if (x(kW) > 0) next.u_w = x(kW);
    if (x(kA) > 0) next.u_a = x(kA);
    if (x(kKv) > 0) {
      next.u_kv = x(kKv);
      if (excited[kQ]) next.kappa = x(kQ) / x(kKv);
    }
    p = next;
    if (!assign(p)) {
      converged = true;
      break;
    }
  }
  rounds = std::min(rounds, std::max(1, opt.maxIterations));

  // ---- coefficients
  CostProfile prof;
  prof.gpu = gpu.id;
  prof.model = model.id;
  CostCoefficients c = base;
  std::vector<std::string> notes;
  const double t0 = x(kFixed);
  const double baseT0 = base.t_step_us + base.t_layer_us * model.layers;
  const double stepShare = baseT0 > 0 ? base.t_step_us / baseT0 : 1.0;
  c.t_step_us = t0 * 1e6 * stepShare;
  c.t_layer_us = model.layers > 0 ? t0 * 1e6 * (1.0 - stepShare) / model.layers : 0.0;
  c.t_seq_us = x(kSeq) * 1e6;
  auto eta = [&](Unknown u, double& field, const char* key) {
    if (!excited[u]) {
      notes.push_back(std::string(key) + ": no row exercises this term; kept " + num(field));
    } else if (x(u) <= 0) {
      notes.push_back(std::string(key) + ": fitted to 0 (the term is negligible in the data); kept " + num(field));
    } else {
      field = 1.0 / x(u);
    }
  };
  eta(kC, c.eta_c, "eta_c");
  eta(kA, c.eta_a, "eta_a");
  eta(kW, c.eta_w, "eta_w");
  eta(kKv, c.eta_kv, "eta_kv");
  if (kernel)
    notes.push_back("kappa: not fitted: hetero = kernel (decode attention = kernel h x the KV read, no fitted "
                    "slope; run with hetero = cv to fit kappa); kept " + num(c.kappa));
  else if (!excited[kQ] || x(kKv) <= 0)
    notes.push_back("kappa: no uncapped heterogeneous decode batch (or eta_kv not fitted); kept " + num(c.kappa));
  else
    c.kappa = x(kQ) / x(kKv);
  if (excited[kAlpha])
    c.alpha_hop_us = x(kAlpha) * 1e6;
  else if (opt.allreduce != AllReduceMode::Ring)
    notes.push_back(std::string("alpha_hop_us: not fitted: all-reduce time from measured collectives (") +
                    allReduceModeName(opt.allreduce) + "), kept " + num(c.alpha_hop_us));
  else
    notes.push_back("alpha_hop_us: no row with tp > 1; kept " + num(c.alpha_hop_us));
  if (!excited[kSeq]) notes.push_back("t_seq_us: no sequences in the data");
  notes.push_back("t_step_us and t_layer_us: one model fixes layers, so only t_step + t_layer*layers = " +
                  num(t0 * 1e6) + " us is identified; it is split in the base ratio");
  if (!converged) notes.push_back("branch assignment did not settle in " + std::to_string(rounds) + " rounds");
  prof.coefficients = c;

  if (report) {
    CalibrationReport& r = *report;
    r = CalibrationReport{};
    r.rows = static_cast<std::int64_t>(nRows);
    r.iterations = rounds;
    r.converged = converged;
    r.fixedOverheadUs = t0 * 1e6;
    for (std::size_t i = 0; i < nRows; ++i) {
      r.computeBoundRows += compute[i];
      r.cappedRows += capped[i];
    }
    // Mean share of each term in the measured time, from the fitted model.
    std::array<double, 9> share{};
    for (std::size_t i = 0; i < nRows; ++i) {
      const RowFeatures& f = feats[i];
      const double y = rows[i].seconds;
      const double h = kernel ? f.hk : std::min(c.h_max, 1.0 + c.kappa * f.cv);
      const double lin = std::max(f.xc / c.eta_c, f.xw / c.eta_w);
      const bool comp = f.xc / c.eta_c > f.xw / c.eta_w;
      share[0] += c.t_step_us * 1e-6 / y;
      share[1] += c.t_layer_us * 1e-6 * model.layers / y;
      share[2] += c.t_seq_us * 1e-6 * f.seq / y;
      share[3] += comp ? lin / y : 0.0;
      share[4] += f.xa / c.eta_a / y;
      share[5] += comp ? 0.0 : lin / y;
      share[6] += f.xkv / c.eta_kv / y;
      share[7] += (h - 1.0) * f.xkv / c.eta_kv / y;
      share[8] += c.alpha_hop_us * 1e-6 * f.alpha / y;
    }
    const double raws[9] = {t0 * stepShare, t0 * (1 - stepShare) / std::max(1, model.layers),
                            x(kSeq),        x(kC),
                            x(kA),          x(kW),
                            x(kKv),         x(kKv) > 0 ? x(kQ) : 0.0,
                            x(kAlpha)};
    const char* unknowns[9] = {"t_step (s)", "t_layer (s)", "t_seq (s)",    "1/eta_c",      "1/eta_a",
                               "1/eta_w",    "1/eta_kv",    "kappa/eta_kv", "alpha_hop (s)"};
    const double values[9] = {c.t_step_us, c.t_layer_us, c.t_seq_us, c.eta_c,       c.eta_a,
                              c.eta_w,     c.eta_kv,     c.kappa,    c.alpha_hop_us};
    const bool ident[9] = {true,
                           true,
                           excited[kSeq],
                           excited[kC] && x(kC) > 0,
                           excited[kA] && x(kA) > 0,
                           excited[kW] && x(kW) > 0,
                           excited[kKv] && x(kKv) > 0,
                           !kernel && excited[kQ] && x(kKv) > 0,
                           excited[kAlpha]};
    for (int k = 0; k < 9; ++k) {
      FittedTerm t;
      t.key = kKeys[k];
      t.unknown = unknowns[k];
      t.value = values[k];
      t.rawValue = raws[k];
      t.identified = ident[k];
      t.meanShare = share[static_cast<std::size_t>(k)] / static_cast<double>(nRows);
      r.terms.push_back(t);
    }
    double sum = 0, worst = 0;
    for (const Measurement& m : rows) {
      const double ape = std::abs(predictMeasurement(gpu, model, c, m, opt.allreduce) - m.seconds) / m.seconds;
      sum += ape;
      worst = std::max(worst, ape);
    }
    r.mape = sum / static_cast<double>(nRows);
    r.maxApe = worst;
    r.notes = notes;
  }
  return prof;
}

nlohmann::json CalibrationReport::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  j["rows"] = rows;
  j["mape"] = mape;
  j["max_ape"] = maxApe;
  j["iterations"] = iterations;
  j["converged"] = converged;
  j["compute_bound_rows"] = computeBoundRows;
  j["capped_rows"] = cappedRows;
  j["fixed_overhead_us"] = fixedOverheadUs;
  nlohmann::json t = nlohmann::json::array();
  for (const FittedTerm& f : terms)
    t.push_back({{"key", f.key},
                 {"unknown", f.unknown},
                 {"value", f.value},
                 {"raw", f.rawValue},
                 {"identified", f.identified},
                 {"mean_share", f.meanShare}});
  j["terms"] = t;
  j["notes"] = notes;
  return j;
}

// ---------------------------------------------------------------- synthetic

std::vector<Measurement> synthesizeMeasurements(const GpuSpec& gpu, const ModelSpec& model,
                                                const CostCoefficients& truth, int count, std::uint64_t seed,
                                                double noise, const std::vector<int>& tps,
                                                AllReduceMode allreduce) {
  Rng rng(seed);
  std::vector<Measurement> out;
  out.reserve(static_cast<std::size_t>(std::max(0, count)));
  const std::vector<int> tpList = tps.empty() ? std::vector<int>{1} : tps;
  auto logUniform = [&](double lo, double hi) { return std::exp(rng.uniform(std::log(lo), std::log(hi))); };
  for (int i = 0; i < count; ++i) {
    Measurement m;
    m.tp = tpList[static_cast<std::size_t>(i) % tpList.size()];
    const int kind = static_cast<int>(rng.below(3));  // 0 decode, 1 prefill, 2 mixed
    if (kind != 1) {
      m.decode_seqs = static_cast<int>(std::lround(logUniform(1, 256)));
      const double mean = std::round(logUniform(64, 8192));
      m.decode_context_sum = mean * m.decode_seqs;
      // A quarter of the batches are very uneven (CV up to 2.5: h hits h_max).
      m.decode_context_cv = m.decode_seqs < 2        ? 0.0
                            : rng.uniform01() < 0.25 ? rng.uniform(1.0, 2.5)
                                                     : rng.uniform(0.0, 1.0);
      m.decode_context_cv = std::round(m.decode_context_cv * 1e4) / 1e4;
    }
    if (kind != 0) {
      m.prefill_seqs = 1 + static_cast<int>(rng.below(8));
      const double chunk = std::round(logUniform(32, kind == 2 ? 2048 : 8192));
      m.prefill_tokens = chunk * m.prefill_seqs;
      m.cached_tokens = rng.uniform01() < 0.5 ? 0.0 : std::round(logUniform(256, 16384)) * m.prefill_seqs;
    }
    const double t = predictMeasurement(gpu, model, truth, m, allreduce);
    m.seconds = t * (1.0 + rng.uniform(-noise, noise));
    out.push_back(m);
  }
  return out;
}

}  // namespace sl
