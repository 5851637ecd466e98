#include "workload/length_dist.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "util/csv.h"
#include "util/error.h"
#include "workload/parse_util.h"

namespace sl {

using detail::fmt;

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& msg) {
  throw InputError(what + ": " + msg);
}

bool finite(double v) { return std::isfinite(v); }

bool endsWith(const std::string& s, const char* suf) {
  const std::string t(suf);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

}  // namespace

LognormalParams lognormalParams(const LengthDist& d, const std::string& what) {
  LognormalParams p;
  if (d.median || d.p90) {
    if (!d.median || !d.p90) fail(what, "lognormal needs both \"median\" and \"p90\" (or \"mu\" and \"sigma\")");
    if (d.mu || d.sigma) fail(what, "lognormal takes either median/p90 or mu/sigma, not both");
    const double m = *d.median, q = *d.p90;
    if (!finite(m) || m <= 0) fail(what, "lognormal median must be > 0 (got " + fmt(m) + ")");
    if (!finite(q) || q < m)
      fail(what, "lognormal p90 must be >= median (got p90 " + fmt(q) + " < median " + fmt(m) + ")");
    p.mu = std::log(m);
    p.sigma = std::log(q / m) / kZ90;
  } else if (d.mu || d.sigma) {
    if (!d.mu || !d.sigma) fail(what, "lognormal needs both \"mu\" and \"sigma\"");
    if (!finite(*d.mu)) fail(what, "lognormal mu must be finite");
    if (!finite(*d.sigma) || *d.sigma < 0) fail(what, "lognormal sigma must be >= 0 (got " + fmt(*d.sigma) + ")");
    p.mu = *d.mu;
    p.sigma = *d.sigma;
  } else {
    fail(what, "lognormal needs \"median\" and \"p90\" (or \"mu\" and \"sigma\")");
  }
  return p;
}

namespace {

std::vector<double> readEmpiricalValues(std::istream& in, const std::string& path, const std::string& column) {
  if (column.empty()) throw InputError(path + ": empirical distribution needs a \"column\"");
  bool jsonl = endsWith(path, ".jsonl") || endsWith(path, ".ndjson") || endsWith(path, ".json");
  if (!jsonl && !endsWith(path, ".csv")) {  // sniff the first non-blank character
    char c = 0;
    while (in.get(c) && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) {}
    jsonl = in && c == '{';
    in.clear();
    in.seekg(0);
  }
  std::vector<double> values;
  auto check = [&](double v, std::int64_t line) {
    if (!finite(v) || v < 0)
      throw InputError(path + ":" + std::to_string(line) + ": " + column + " must be a finite number >= 0 (got " +
                       fmt(v) + ")");
    values.push_back(v);
  };
  if (jsonl) {
    std::string line;
    std::int64_t no = 0;
    while (std::getline(in, line)) {
      ++no;
      if (trimView(line).empty()) continue;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        throw InputError(path + ":" + std::to_string(no) + ": not a JSON object");
      }
      if (!j.is_object()) throw InputError(path + ":" + std::to_string(no) + ": not a JSON object");
      auto it = j.find(column);
      if (it == j.end()) throw InputError(path + ":" + std::to_string(no) + ": missing field \"" + column + "\"");
      if (!it->is_number())
        throw InputError(path + ":" + std::to_string(no) + ": field \"" + column + "\" is not a number (got " +
                         it->dump() + ")");
      check(it->get<double>(), no);
    }
  } else {
    CsvReader csv(in, path);
    std::vector<std::string> f;
    if (!csv.next(f)) throw InputError(path + ": empty file (expected a header line)");
    std::size_t col = f.size();
    for (std::size_t i = 0; i < f.size(); ++i)
      if (std::string(trimView(f[i])) == column) col = i;
    if (col == f.size()) {
      std::string cols;
      for (const auto& h : f) cols += (cols.empty() ? "" : ", ") + std::string(trimView(h));
      throw InputError(csv.where() + ": no column \"" + column + "\" (columns: " + cols + ")");
    }
    while (csv.next(f)) {
      if (col >= f.size()) throw InputError(csv.where() + ": missing column \"" + column + "\"");
      double v = 0;
      if (!detail::parseDouble(f[col], v))
        throw InputError(csv.where() + ": " + column + " is not a number (got \"" + f[col] + "\")");
      check(v, csv.line());
    }
  }
  if (values.empty()) throw InputError(path + ": empirical distribution has no values in \"" + column + "\"");
  return values;
}

}  // namespace

namespace {
std::atomic<std::int64_t> parses{0};
}  // namespace

std::int64_t detail::empiricalParses() { return parses.load(); }

// A run reads a trace column more than once (a policy's planner samples the
// same lengths as the workload; a reproduce experiment or sweep runs many
// points on one trace): the values of the last few files parsed are kept
// with the file's bytes, and reused only for the same absolute path, column
// and bytes (an edited file is parsed again). Failed reads are not kept
// (each reports its error); files over 16 MiB are not kept (length_dist.h).
std::vector<double> loadEmpiricalValues(const std::string& path, const std::string& column) {
  struct Entry {
    std::string path, column, bytes;
    std::vector<double> values;
  };
  static std::mutex mu;
  static std::deque<Entry> cache;  // newest first
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path + ": cannot open file");
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(path, ec).string();
  const std::uintmax_t size = ec ? 0 : std::filesystem::file_size(path, ec);
  if (ec || size > detail::kEmpiricalKeptMaxBytes) {  // streamed, not kept
    ++parses;
    return readEmpiricalValues(file, path, column);
  }
  std::string bytes(static_cast<std::size_t>(size), '\0');
  file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(file.gcount()));
  {
    const std::lock_guard<std::mutex> lock(mu);
    for (const Entry& e : cache)
      if (e.path == abs && e.column == column && e.bytes == bytes) return e.values;
  }
  std::istringstream in(bytes, std::ios::binary);
  ++parses;
  std::vector<double> values = readEmpiricalValues(in, path, column);
  {
    const std::lock_guard<std::mutex> lock(mu);
    cache.push_front(Entry{abs, column, std::move(bytes), values});
    if (cache.size() > detail::kEmpiricalKept) cache.pop_back();
  }
  return values;
}

// ---------------------------------------------------------------------------
// Built-in quantile tables.

double QuantileCurve::at(double u) const {
  if (!(u > 0)) return values.front();
  if (u >= 1) return values.back();
  const auto it = std::upper_bound(levels.begin(), levels.end(), u);
  const std::size_t hi = static_cast<std::size_t>(it - levels.begin());  // levels[hi-1] <= u < levels[hi]
  const std::size_t lo = hi - 1;
  const double t = (u - levels[lo]) / (levels[hi] - levels[lo]);
  return values[lo] + t * (values[hi] - values[lo]);
}

namespace {

QuantileCurve parseCurve(const nlohmann::json& doc, const std::vector<double>& levels, const char* key,
                         const std::string& where) {
  const std::string w = where + ": " + key;
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_object()) throw InputError(w + ": missing");
  const auto& q = it->at("quantiles");
  const auto& tb = it->at("tail_bounds");
  if (!q.is_array() || q.size() != levels.size())
    throw InputError(w + ": needs one quantile per level (" + std::to_string(levels.size()) + ")");
  QuantileCurve c;
  c.mean = it->value("mean", 0.0);
  c.levels.push_back(0.0);
  c.values.push_back(tb.at("min").get<double>());
  for (std::size_t i = 0; i < q.size(); ++i) {
    c.levels.push_back(levels[i]);
    c.values.push_back(q[i].get<double>());
  }
  c.levels.push_back(1.0);
  c.values.push_back(tb.at("max").get<double>());
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    if (!finite(c.values[i]) || c.values[i] < 0) throw InputError(w + ": values must be finite and >= 0");
    if (i > 0 && c.values[i] < c.values[i - 1])
      throw InputError(w + ": values must be non-decreasing (tail_bounds included)");
  }
  return c;
}

WorkloadQuantiles parseTable(const std::string& id, const char* text) {
  const std::string where = "resources/workloads/" + id + ".json";
  try {
    const nlohmann::json doc = nlohmann::json::parse(text);
    std::vector<double> levels = doc.at("quantile_levels").get<std::vector<double>>();
    if (levels.empty()) throw InputError(where + ": quantile_levels is empty");
    for (std::size_t i = 0; i < levels.size(); ++i)
      if (!(levels[i] > 0 && levels[i] < 1) || (i > 0 && !(levels[i] > levels[i - 1])))
        throw InputError(where + ": quantile_levels must be strictly increasing in (0, 1)");
    WorkloadQuantiles t;
    t.id = id;
    t.input = parseCurve(doc, levels, "input_tokens", where);
    t.output = parseCurve(doc, levels, "output_tokens", where);
    t.reasoningFraction = parseCurve(doc, levels, "reason_ratio", where);
    if (t.reasoningFraction.values.back() > 1) throw InputError(where + ": reason_ratio must be <= 1");
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": " + e.what());
  }
}

}  // namespace

const WorkloadQuantiles& builtinWorkloadQuantiles(const std::string& id) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<WorkloadQuantiles>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(id);
  if (it != cache.end()) return *it->second;
  const char* text = workloaddetail::embeddedWorkloadTable(id);
  if (!text) throw InputError("no built-in quantile table '" + id + "' (resources/workloads/)");
  auto t = std::make_unique<WorkloadQuantiles>(parseTable(id, text));
  return *cache.emplace(id, std::move(t)).first->second;
}

OutputSplit splitOutput(const WorkloadQuantiles& t, Rng& rng) {
  const double u1 = rng.uniform01();
  const double u2 = rng.uniform01();
  const std::int64_t out = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(t.output.at(u1))));
  const double frac = std::clamp(t.reasoningFraction.at(u2), 0.0, 1.0);
  OutputSplit s;
  s.reasoning = static_cast<std::int64_t>(std::llround(frac * static_cast<double>(out)));
  s.answer = out - s.reasoning;
  if (s.answer < 1) {
    s.answer = 1;
    s.reasoning = out - 1;
  }
  return s;
}

// ---------------------------------------------------------------------------

struct LengthSampler::Node {
  LengthDist::Kind kind = LengthDist::Kind::Constant;
  double a = 0, b = 0;               // constant: a; uniform: [a, b]; lognormal: mu, sigma; exponential: mean
  double ua = 0, ub = 0;             // uniform: the range as given (continuous draws)
  std::vector<double> values;        // empirical
  const WorkloadQuantiles* table = nullptr;  // empirical "builtin:<id>"
  enum class Col { Input, Output, Reasoning, Answer } col = Col::Input;
  std::vector<Node> parts;           // mixture
  std::vector<double> cumulative;    // mixture: cumulative normalised weights
  std::optional<double> clipMin, clipMax;

  Node() = default;
  Node(const LengthDist& d, const std::string& base_dir, const std::string& what) {
    kind = d.kind;
    clipMin = d.clipMin;
    clipMax = d.clipMax;
    if (clipMin && (!finite(*clipMin) || *clipMin < 0)) fail(what, "min must be >= 0 (got " + fmt(*clipMin) + ")");
    if (clipMax && (!finite(*clipMax) || *clipMax < 0)) fail(what, "max must be >= 0 (got " + fmt(*clipMax) + ")");
    if (clipMin && clipMax && *clipMin > *clipMax)
      fail(what, "min (" + fmt(*clipMin) + ") is greater than max (" + fmt(*clipMax) + ")");
    switch (kind) {
      case LengthDist::Kind::Constant:
        if (!finite(d.value) || d.value < 0) fail(what, "constant value must be >= 0 (got " + fmt(d.value) + ")");
        a = d.value;
        break;
      case LengthDist::Kind::Uniform:
        if (!finite(d.min) || !finite(d.max) || d.min < 0)
          fail(what, "uniform min must be >= 0 (got " + fmt(d.min) + ")");
        if (d.max < d.min) fail(what, "uniform max (" + fmt(d.max) + ") is less than min (" + fmt(d.min) + ")");
        a = std::round(d.min);
        b = std::round(d.max);
        ua = d.min;
        ub = d.max;
        break;
      case LengthDist::Kind::Exponential:
        if (!finite(d.mean) || d.mean <= 0) fail(what, "exponential mean must be > 0 (got " + fmt(d.mean) + ")");
        a = d.mean;
        break;
      case LengthDist::Kind::Lognormal: {
        const auto p = lognormalParams(d, what);
        a = p.mu;
        b = p.sigma;
        break;
      }
      case LengthDist::Kind::Empirical:
        if (d.path.empty()) fail(what, "empirical distribution needs a \"path\"");
        if (d.path.rfind(kBuiltinTablePrefix, 0) == 0) {
          try {
            table = &builtinWorkloadQuantiles(d.path.substr(std::string(kBuiltinTablePrefix).size()));
          } catch (const InputError& e) {
            fail(what, e.what());
          }
          if (d.column == "input_tokens") col = Col::Input;
          else if (d.column == "output_tokens") col = Col::Output;
          else if (d.column == "reasoning_tokens") col = Col::Reasoning;
          else if (d.column == "answer_tokens") col = Col::Answer;
          else
            fail(what, "built-in table column must be input_tokens, output_tokens, reasoning_tokens or "
                       "answer_tokens (got \"" + d.column + "\")");
          break;
        }
        values = loadEmpiricalValues(detail::resolvePath(d.path, base_dir), d.column);
        break;
      case LengthDist::Kind::Mixture: {
        if (d.parts.empty()) fail(what, "mixture needs at least one part");
        if (d.weights.size() != d.parts.size())
          fail(what, "mixture has " + std::to_string(d.parts.size()) + " parts but " +
                         std::to_string(d.weights.size()) + " weights");
        double total = 0;
        for (std::size_t i = 0; i < d.weights.size(); ++i) {
          const double w = d.weights[i];
          if (!finite(w) || w < 0)
            fail(what + ".parts[" + std::to_string(i) + "]", "weight must be >= 0 (got " + fmt(w) + ")");
          total += w;
        }
        if (!(total > 0)) fail(what, "mixture weights sum to 0");
        double acc = 0;
        for (std::size_t i = 0; i < d.parts.size(); ++i) {
          parts.emplace_back(d.parts[i], base_dir, what + ".parts[" + std::to_string(i) + "]");
          acc += d.weights[i];
          cumulative.push_back(acc / total);
        }
        cumulative.back() = 1.0;
        break;
      }
    }
  }

  double raw(Rng& rng) const {
    switch (kind) {
      case LengthDist::Kind::Constant: return a;
      case LengthDist::Kind::Uniform:
        return a + static_cast<double>(rng.below(static_cast<std::uint64_t>(b - a) + 1));
      case LengthDist::Kind::Lognormal: return rng.lognormal(a, b);
      case LengthDist::Kind::Exponential: return rng.exponential(1.0 / a);
      case LengthDist::Kind::Empirical:
        if (table) return tableRaw(rng);
        return values[rng.below(values.size())];
      case LengthDist::Kind::Mixture: return parts[pick(rng)].raw(rng);
    }
    return 0;
  }

  // Continuous draw: no rounding, uniform over the real range, the clip
  // bounds as given (think times in seconds).
  double real(Rng& rng) const {
    double v = 0;
    if (kind == LengthDist::Kind::Mixture) v = parts[pick(rng)].real(rng);
    else if (kind == LengthDist::Kind::Uniform) v = ua + (ub - ua) * rng.uniform01();
    else v = raw(rng);
    if (clipMin) v = std::max(v, *clipMin);
    if (clipMax) v = std::min(v, *clipMax);
    return v;
  }

  double tableRaw(Rng& rng) const {
    switch (col) {
      case Col::Input: return table->input.at(rng.uniform01());
      case Col::Output: return table->output.at(rng.uniform01());
      case Col::Reasoning: return static_cast<double>(splitOutput(*table, rng).reasoning);
      case Col::Answer: return static_cast<double>(splitOutput(*table, rng).answer);
    }
    return 0;
  }

  std::size_t pick(Rng& rng) const {
    const double u = rng.uniform01();
    std::size_t i = 0;
    while (i + 1 < cumulative.size() && u >= cumulative[i]) ++i;
    return i;
  }

  std::int64_t draw(Rng& rng) const {
    if (kind == LengthDist::Kind::Mixture) return drawPart(pick(rng), rng);
    return clip(std::round(raw(rng)));
  }

  std::int64_t drawPart(std::size_t i, Rng& rng) const {
    return clip(static_cast<double>(parts[i].draw(rng)));
  }

  std::int64_t clip(double v) const {
    if (clipMin) v = std::max(v, std::round(*clipMin));
    if (clipMax) v = std::min(v, std::round(*clipMax));
    v = std::min(v, 1e15);  // keep a runaway lognormal tail representable
    return static_cast<std::int64_t>(v);
  }

  double mean() const {
    switch (kind) {
      case LengthDist::Kind::Constant: return a;
      case LengthDist::Kind::Uniform: return 0.5 * (a + b);
      case LengthDist::Kind::Lognormal: return std::exp(a + 0.5 * b * b);
      case LengthDist::Kind::Exponential: return a;
      case LengthDist::Kind::Empirical: {
        if (table) {
          // Stated means; the split assumes fraction and output independent.
          const double reasoning = table->reasoningFraction.mean * table->output.mean;
          switch (col) {
            case Col::Input: return table->input.mean;
            case Col::Output: return table->output.mean;
            case Col::Reasoning: return reasoning;
            case Col::Answer: return table->output.mean - reasoning;
          }
        }
        double s = 0;
        for (double v : values) s += v;
        return s / static_cast<double>(values.size());
      }
      case LengthDist::Kind::Mixture: {
        double s = 0, prev = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) {
          s += (cumulative[i] - prev) * parts[i].mean();
          prev = cumulative[i];
        }
        return s;
      }
    }
    return 0;
  }
};

LengthSampler::LengthSampler(const LengthDist& dist, const std::string& base_dir, const std::string& what)
    : root_(std::make_unique<Node>(dist, base_dir, what)) {}
LengthSampler::LengthSampler(LengthSampler&&) noexcept = default;
LengthSampler& LengthSampler::operator=(LengthSampler&&) noexcept = default;
LengthSampler::~LengthSampler() = default;

std::int64_t LengthSampler::sample(Rng& rng) const { return root_->draw(rng); }
double LengthSampler::sampleRaw(Rng& rng) const { return root_->raw(rng); }
double LengthSampler::sampleReal(Rng& rng) const { return root_->real(rng); }
double LengthSampler::mean() const { return root_->mean(); }
std::size_t LengthSampler::mixtureParts() const {
  return root_->kind == LengthDist::Kind::Mixture ? root_->parts.size() : 0;
}
const std::vector<double>& LengthSampler::mixtureCumulative() const { return root_->cumulative; }
std::size_t LengthSampler::pickComponent(Rng& rng) const { return root_->pick(rng); }
std::int64_t LengthSampler::sampleComponent(std::size_t i, Rng& rng) const { return root_->drawPart(i, rng); }
bool LengthSampler::jointSplitWith(const LengthSampler& answer) const {
  const Node& r = *root_;
  const Node& a = *answer.root_;
  return r.table && r.table == a.table && r.col == Node::Col::Reasoning && a.col == Node::Col::Answer &&
         !r.clipMin && !r.clipMax && !a.clipMin && !a.clipMax;
}
OutputSplit LengthSampler::sampleSplit(Rng& rng) const {
  if (!root_->table) throw std::logic_error("LengthSampler::sampleSplit: not a built-in table");
  return splitOutput(*root_->table, rng);
}

// ---------------------------------------------------------------------------

LengthDist constantDist(double value) {
  LengthDist d;
  d.kind = LengthDist::Kind::Constant;
  d.value = value;
  return d;
}
LengthDist uniformDist(double min, double max) {
  LengthDist d;
  d.kind = LengthDist::Kind::Uniform;
  d.min = min;
  d.max = max;
  return d;
}
LengthDist lognormalDist(double median, double p90) {
  LengthDist d;
  d.kind = LengthDist::Kind::Lognormal;
  d.median = median;
  d.p90 = p90;
  return d;
}
LengthDist lognormalMuSigma(double mu, double sigma) {
  LengthDist d;
  d.kind = LengthDist::Kind::Lognormal;
  d.mu = mu;
  d.sigma = sigma;
  return d;
}
LengthDist empiricalDist(const std::string& path, const std::string& column) {
  LengthDist d;
  d.kind = LengthDist::Kind::Empirical;
  d.path = path;
  d.column = column;
  return d;
}
LengthDist exponentialDist(double mean) {
  LengthDist d;
  d.kind = LengthDist::Kind::Exponential;
  d.mean = mean;
  return d;
}

LengthDist mixtureDist(std::vector<LengthDist> parts, std::vector<double> weights) {
  LengthDist d;
  d.kind = LengthDist::Kind::Mixture;
  d.parts = std::move(parts);
  d.weights = std::move(weights);
  return d;
}
LengthDist clipped(LengthDist d, std::optional<double> min, std::optional<double> max) {
  d.clipMin = min;
  d.clipMax = max;
  return d;
}

}  // namespace sl
