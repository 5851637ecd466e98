#include "scenario/scenario_io.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "scenario/limits.h"
#include "util/error.h"
#include "util/strings.h"

#include "scenario/scenario_parser.h"

namespace sl {

namespace scenario_detail {

void Parser::cluster(const json& v, const std::string& p, ClusterSpec& c) const {
  object(v, p);
  checkKeys(v, p, kClusterKeys);
  if (auto* x = find(v, "instances")) c.instances = intField(*x, child(p, "instances"), 1, kMaxInstances);
  if (auto* x = find(v, "gpu")) c.gpu = nonEmptyString(*x, child(p, "gpu"));
  if (auto* x = find(v, "tp")) c.tp = intField(*x, child(p, "tp"), 1);
  if (auto* x = find(v, "model_dtype")) c.model_dtype = oneOf(*x, child(p, "model_dtype"), kDTypes);
  if (auto* x = find(v, "kv_dtype")) c.kv_dtype = oneOf(*x, child(p, "kv_dtype"), kDTypes);
  if (auto* x = find(v, "expert_dtype")) c.expert_dtype = oneOf(*x, child(p, "expert_dtype"), kExpertDTypes);
  if (auto* x = find(v, "gpu_memory_utilization")) {
    const std::string q = child(p, "gpu_memory_utilization");
    c.gpu_memory_utilization = number(*x, q);
    if (!(c.gpu_memory_utilization > 0 && c.gpu_memory_utilization <= 1)) {
      fail(q, "must be in (0, 1] (got " + numText(c.gpu_memory_utilization) + ")");
    }
  }
  if (auto* x = find(v, "kv_capacity_fraction")) {
    const std::string q = child(p, "kv_capacity_fraction");
    c.kv_capacity_fraction = number(*x, q);
    if (!(c.kv_capacity_fraction > 0 && c.kv_capacity_fraction <= 1)) {
      fail(q, "must be in (0, 1] (got " + numText(c.kv_capacity_fraction) + ")");
    }
  }
  if (auto* x = find(v, "block_size")) {
    const std::string q = child(p, "block_size");
    const int b = intField(*x, q, std::numeric_limits<int>::min());
    if (b < 1 || b > 256 || (b & (b - 1)) != 0) {
      fail(q, "must be a power of two from 1 to 256 (got " + std::to_string(b) + ")");
    }
    c.block_size = b;
  }
  if (auto* x = find(v, "watermark")) {
    const std::string q = child(p, "watermark");
    c.watermark = number(*x, q);
    if (!(c.watermark >= 0 && c.watermark < 1)) {
      fail(q, "must be in [0, 1) (got " + numText(c.watermark) + ")");
    }
  }
  if (auto* x = find(v, "swap_gib")) c.swap_gib = nonNegative(*x, child(p, "swap_gib"));
  if (auto* x = find(v, "preemption")) {
    c.preemption = oneOf(*x, child(p, "preemption"), kPreemptionModes);
  }
  if (auto* x = find(v, "allreduce")) c.allreduce = oneOf(*x, child(p, "allreduce"), kAllReduceModes);
  if (auto* x = find(v, "chunked_prefill")) {
    c.chunked_prefill = boolean(*x, child(p, "chunked_prefill"));
  }
  if (auto* x = find(v, "max_num_seqs")) c.max_num_seqs = intField(*x, child(p, "max_num_seqs"), 1);
  if (auto* x = find(v, "max_num_batched_tokens")) {
    c.max_num_batched_tokens = intField(*x, child(p, "max_num_batched_tokens"), 1);
  }
  if (auto* x = find(v, "fabric")) {
    const std::string q = child(p, "fabric");
    object(*x, q);
    checkKeys(*x, q, kFabricKeys);
    if (auto* y = find(*x, "gpus_per_node")) {
      c.fabric.gpus_per_node = intField(*y, child(q, "gpus_per_node"), 1);
    }
    if (auto* y = find(*x, "nic_gbps")) c.fabric.nic_gbps = positive(*y, child(q, "nic_gbps"));
    if (auto* y = find(*x, "link_latency_us")) {
      c.fabric.link_latency_us = nonNegative(*y, child(q, "link_latency_us"));
    }
  }
  if (auto* x = find(v, "live_migration")) {
    const std::string q = child(p, "live_migration");
    object(*x, q);
    checkKeys(*x, q, kLiveMigrationKeys);
    if (auto* y = find(*x, "max_concurrent")) {
      c.live_migration.max_concurrent = intField(*y, child(q, "max_concurrent"), 1);
    }
    if (auto* y = find(*x, "max_rounds")) c.live_migration.max_rounds = intField(*y, child(q, "max_rounds"), 1);
  }
  if (auto* x = find(v, "profile")) c.profile = optNonEmptyString(*x, child(p, "profile"));
  if (auto* x = find(v, "engine")) c.engine = optNonEmptyString(*x, child(p, "engine"));
  if (auto* x = find(v, "frontend")) c.frontend = freeObject(*x, child(p, "frontend"));
  if (auto* x = find(v, "prefix_caching")) c.prefix_caching = boolean(*x, child(p, "prefix_caching"));
  if (auto* x = find(v, "prefix_cache_cpu_gb")) {
    c.prefix_cache_cpu_gb = nonNegative(*x, child(p, "prefix_cache_cpu_gb"));
    if (c.prefix_cache_cpu_gb > 0 && !c.prefix_caching)
      fail(child(p, "prefix_cache_cpu_gb"), "needs cluster.prefix_caching: true (it is the prefix cache's CPU tier)");
  }
  if (auto* x = find(v, "cost")) c.cost = freeObject(*x, child(p, "cost"));
  if (auto* x = find(v, "ep")) c.ep = intField(*x, child(p, "ep"), 1);
  if (auto* x = find(v, "attention_dp")) c.attention_dp = boolean(*x, child(p, "attention_dp"));
  if (auto* x = find(v, "ep_redundant")) c.ep_redundant = intField(*x, child(p, "ep_redundant"), 0);
  if (auto* x = find(v, "ep_placement")) c.ep_placement = oneOf(*x, child(p, "ep_placement"), kEpPlacements);
  if (auto* x = find(v, "two_batch_overlap")) c.two_batch_overlap = boolean(*x, child(p, "two_batch_overlap"));
  if (auto* x = find(v, "tbo_min_tokens")) c.tbo_min_tokens = intField(*x, child(p, "tbo_min_tokens"), 2);
  if (auto* x = find(v, "dp_scheduler")) c.dp_scheduler = oneOf(*x, child(p, "dp_scheduler"), kDpSchedulers);
  if (auto* x = find(v, "moe_routing")) {
    const std::string q = child(p, "moe_routing");
    object(*x, q);
    checkKeys(*x, q, kMoeRoutingKeys);
    MoeRoutingSpec& r = c.moe_routing;
    if (auto* y = find(*x, "kind")) r.kind = oneOf(*y, child(q, "kind"), kRoutingKinds);
    if (auto* y = find(*x, "skew")) r.skew = positive(*y, child(q, "skew"));
    if (auto* y = find(*x, "path")) r.path = nonEmptyString(*y, child(q, "path"));
    if (r.kind == "file" && r.path.empty())
      fail(child(q, "path"), "needed with kind \"file\" (a per-expert histogram)");
    if (r.kind != "file" && !r.path.empty()) fail(child(q, "path"), "only with kind \"file\"");
    if (r.kind != "zipf" && find(*x, "skew")) fail(child(q, "skew"), "only with kind \"zipf\"");
  }
  if (auto* x = find(v, "speculative"); x && !x->is_null()) speculative(*x, child(p, "speculative"), c.speculative);
  if (auto* x = find(v, "price_usd_per_gpu_hour"); x && !x->is_null())
    c.price_usd_per_gpu_hour = nonNegative(*x, child(p, "price_usd_per_gpu_hour"));
  if (auto* x = find(v, "pools"); x && !x->is_null()) {
    const std::string q = child(p, "pools");
    if (!x->is_array() || x->empty()) typeError(*x, q, "a non-empty list of pools");
    if (x->size() > 64) fail(q, "at most 64 pools (got " + std::to_string(x->size()) + ")");
    for (const char* k : {"instances", "gpu", "tp", "ep", "attention_dp"})
      if (find(v, k))
        fail(child(p, k), "set per pool when cluster.pools is given (cluster.pools[i]." + std::string(k) + ")");
    long long total = 0;
    for (std::size_t i = 0; i < x->size(); ++i) {
      const json& e = (*x)[i];
      const std::string qi = q + "[" + std::to_string(i) + "]";
      object(e, qi);
      checkKeys(e, qi, kPoolKeys);
      PoolSpec pool;
      const json* g = find(e, "gpu");
      if (!g) fail(qi, "missing required field 'gpu' (a GPU preset id; servelab-cli presets gpus)");
      pool.gpu = nonEmptyString(*g, child(qi, "gpu"));
      if (auto* y = find(e, "instances")) pool.instances = intField(*y, child(qi, "instances"), 1, kMaxInstances);
      if (auto* y = find(e, "tp")) pool.tp = intField(*y, child(qi, "tp"), 1);
      if (auto* y = find(e, "ep")) pool.ep = intField(*y, child(qi, "ep"), 1);
      if (auto* y = find(e, "attention_dp")) pool.attention_dp = boolean(*y, child(qi, "attention_dp"));
      if (auto* y = find(e, "price_usd_per_gpu_hour"))
        pool.price_usd_per_gpu_hour = nonNegative(*y, child(qi, "price_usd_per_gpu_hour"));
      if (auto* y = find(e, "role")) {
        // "stage-k" (k = 1, 2, ...: a CascadeInfer stage, 1 the shortest
        // lengths; run/run.cpp checks the stages against the policy).
        const std::string rq = child(qi, "role");
        const std::string r = string(*y, rq);
        if (r.rfind("stage-", 0) == 0) {
          const std::string k = r.substr(6);
          const bool digits = !k.empty() && k.size() <= 2 && k.front() != '0' &&
                              std::all_of(k.begin(), k.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
          if (!digits || std::stoi(k) > 64)
            fail(rq, "a CascadeInfer stage role is \"stage-k\" with k from 1 to 64 (got '" + r + "')");
          pool.role = r;
        } else if (contains(kPoolRoles, r)) {
          pool.role = r;
        } else {
          std::string msg = "must be one of " + quotedList(kPoolRoles) + " or 'stage-k' (got '" + r + "'";
          if (auto near = didYouMean(r, kPoolRoles)) msg += "; did you mean '" + *near + "'?";
          fail(rq, msg + ")");
        }
      }
      total += pool.instances;
      c.pools.push_back(pool);
    }
    if (total > kMaxInstances)
      fail(q, "the pools hold " + std::to_string(total) + " instances; at most " + std::to_string(kMaxInstances));
    c.instances = static_cast<int>(total);
    c.gpu = c.pools.front().gpu;
    c.tp = c.pools.front().tp;
    c.ep = c.pools.front().ep;
    c.attention_dp = c.pools.front().attention_dp;
  }
}

void Parser::speculative(const json& v, const std::string& p, SpeculativeScenario& sp) const {
  object(v, p);
  checkKeys(v, p, kSpeculativeKeys);
  sp.on = true;
  if (auto* x = find(v, "method")) sp.method = oneOf(*x, child(p, "method"), kSpecMethods);
  if (auto* x = find(v, "k")) sp.k = intField(*x, child(p, "k"), 1, 16);
  if (auto* x = find(v, "draft_model")) sp.draft_model = nonEmptyString(*x, child(p, "draft_model"));
  if (sp.method == "draft" && sp.draft_model.empty())
    fail(child(p, "draft_model"), "needed with method \"draft\" (a model preset id; servelab-cli presets)");
  if (sp.method != "draft" && !sp.draft_model.empty()) fail(child(p, "draft_model"), "only with method \"draft\"");
  if (auto* x = find(v, "ngram_us_per_seq")) {
    sp.ngram_us_per_seq = nonNegative(*x, child(p, "ngram_us_per_seq"));
    if (sp.method != "ngram") fail(child(p, "ngram_us_per_seq"), "only with method \"ngram\"");
  }
  if (auto* x = find(v, "acceptance")) {
    const std::string q = child(p, "acceptance");
    if (x->is_string()) {
      sp.acceptance_preset = nonEmptyString(*x, q);
    } else {
      if (!x->is_object()) typeError(*x, q, "a preset id or an object {\"alpha\": [...]} / {\"length\": tau}");
      checkKeys(*x, q, kAcceptanceKeys);
      const json* a = find(*x, "alpha");
      const json* l = find(*x, "length");
      if ((a != nullptr) == (l != nullptr))
        fail(q, "give exactly one of 'alpha' (per position) or 'length' (mean tokens per step)");
      if (a) {
        const std::string qa = child(q, "alpha");
        if (!a->is_array() || a->empty()) typeError(*a, qa, "a non-empty list of probabilities");
        if (a->size() > 16) fail(qa, "at most 16 positions (got " + std::to_string(a->size()) + ")");
        for (std::size_t i = 0; i < a->size(); ++i) {
          const std::string qi = qa + "[" + std::to_string(i) + "]";
          const double d = number((*a)[i], qi);
          if (!(d >= 0 && d <= 1)) fail(qi, "must be in [0, 1] (got " + numText(d) + ")");
          sp.alpha.push_back(d);
        }
      } else {
        const std::string ql = child(q, "length");
        sp.acceptance_length = number(*l, ql);
        if (!(sp.acceptance_length >= 1 && sp.acceptance_length <= sp.k + 1))
          fail(ql, "must be in [1, k + 1] = [1, " + std::to_string(sp.k + 1) + "] (got " +
                       numText(sp.acceptance_length) + ")");
      }
    }
  }
  if (auto* x = find(v, "request_sigma")) sp.request_sigma = nonNegative(*x, child(p, "request_sigma"));
  if (auto* x = find(v, "dynamic_k"); x && !x->is_null()) {
    const std::string q = child(p, "dynamic_k");
    object(*x, q);
    checkKeys(*x, q, kDynamicKKeys);
    const json* f = find(*x, "full_until");
    const json* o = find(*x, "off_from");
    if (!o) fail(q, "missing required field 'off_from' (speculation off from this many sequences)");
    sp.off_from = intField(*o, child(q, "off_from"), 1);
    sp.full_until = f ? intField(*f, child(q, "full_until"), 0) : sp.off_from - 1;
    if (sp.full_until >= sp.off_from)
      fail(child(q, "full_until"),
           "must be below off_from (" + std::to_string(sp.off_from) + "; got " + std::to_string(sp.full_until) + ")");
  }
}

void Parser::policy(const json& v, const std::string& p, PolicySpec& pol) const {
  object(v, p);
  checkKeys(v, p, kPolicyKeys);
  if (auto* x = find(v, "id")) pol.id = nonEmptyString(*x, child(p, "id"));
  if (auto* x = find(v, "router")) pol.router = nonEmptyString(*x, child(p, "router"));
  if (auto* x = find(v, "prefix_weight")) pol.prefix_weight = nonNegative(*x, child(p, "prefix_weight"));
  if (auto* x = find(v, "knobs")) pol.knobs = freeObject(*x, child(p, "knobs"));
}

void Parser::slo(const json& v, const std::string& p, SloSpec& s) const {
  object(v, p);
  checkKeys(v, p, kSloKeys);
  if (auto* x = find(v, "ttft_s")) s.ttft_s = optPositive(*x, child(p, "ttft_s"));
  if (auto* x = find(v, "tpot_s")) s.tpot_s = optPositive(*x, child(p, "tpot_s"));
  if (auto* x = find(v, "ttfat_s")) s.ttfat_s = positive(*x, child(p, "ttfat_s"));
  if (auto* x = find(v, "qoe_tpot_s")) s.qoe_tpot_s = positive(*x, child(p, "qoe_tpot_s"));
  if (auto* x = find(v, "qoe_threshold")) {
    const std::string q = child(p, "qoe_threshold");
    s.qoe_threshold = number(*x, q);
    if (!(s.qoe_threshold > 0 && s.qoe_threshold <= 1)) {
      fail(q, "must be in (0, 1] (got " + numText(s.qoe_threshold) + ")");
    }
  }
}

void Parser::run(const json& v, const std::string& p, RunSpec& r) const {
  object(v, p);
  checkKeys(v, p, kRunKeys);
  if (auto* x = find(v, "seed")) {
    const std::string q = child(p, "seed");
    if (x->is_number_unsigned()) {
      r.seed = x->get<std::uint64_t>();
    } else {
      // Negative, fractional or non-numbers fail here with a clear message.
      r.seed = static_cast<std::uint64_t>(
          integer(*x, q, 0, std::numeric_limits<std::int64_t>::max()));
    }
  }
  if (auto* x = find(v, "duration_s")) r.duration_s = optPositive(*x, child(p, "duration_s"));
  if (auto* x = find(v, "measure"); x && !x->is_null()) {
    const std::string q = child(p, "measure");
    if (!x->is_object()) typeError(*x, q, "an object or null");
    checkKeys(*x, q, kMeasureKeys);
    MeasureSpec m;
    if (auto* y = find(*x, "warmup_s")) m.warmup_s = nonNegative(*y, child(q, "warmup_s"));
    const json* w = find(*x, "window_s");
    if (!w) fail(q, "missing required field 'window_s'");
    m.window_s = positive(*w, child(q, "window_s"));
    if (r.duration_s) {
      fail(q, "set either run.measure or run.duration_s, not both (the run stops at the window's end)");
    }
    r.measure = m;
  }
  if (auto* x = find(v, "probe_interval_s")) {
    r.probe_interval_s = positive(*x, child(p, "probe_interval_s"));
  }
  if (auto* x = find(v, "rolling_window_s")) {
    r.rolling_window_s = positive(*x, child(p, "rolling_window_s"));
  }
  if (auto* x = find(v, "trace_request_limit")) {
    r.trace_request_limit = integer(*x, child(p, "trace_request_limit"), 0,
                                    std::numeric_limits<std::int64_t>::max());
  }
}

}  // namespace scenario_detail

using nlohmann::json;
using scenario_detail::Parser;

namespace {

std::string readWholeFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path + ": cannot read scenario file: is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(path + ": cannot open scenario file" +
                     (std::filesystem::exists(path, ec) ? std::string(" (permission denied?)")
                                                        : std::string(": no such file")));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read scenario file");
  return ss.str();
}

// nlohmann's parse_error carries the byte count read so far (1-based position
// of the last character read); turn it into line:column for the message.
std::pair<std::size_t, std::size_t> lineColumn(const std::string& text, std::size_t byte) {
  const std::size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

std::string parseReason(const std::string& what) {
  // "[json.exception.parse_error.101] parse error at line 3, column 14: syntax error ..."
  std::string r = what;
  if (auto pos = r.find("] "); pos != std::string::npos) r = r.substr(pos + 2);
  if (auto pos = r.find("column "); pos != std::string::npos) {
    if (auto colon = r.find(": ", pos); colon != std::string::npos) r = r.substr(colon + 2);
  } else if (r.rfind("parse error: ", 0) == 0) {
    r = r.substr(13);
  }
  return r;
}

}  // namespace

Scenario parseScenario(const nlohmann::json& j, const std::string& source_name) {
  return Parser(source_name).scenario(j);
}

nlohmann::json loadJsonFile(const std::string& path) {
  const std::string text = readWholeFile(path);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, col] = lineColumn(text, e.byte);
    throw InputError(path + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": JSON syntax error: " + parseReason(e.what()));
  }
}

std::string scenarioBaseDir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Scenario loadScenarioFile(const std::string& path) {
  Scenario s = parseScenario(loadJsonFile(path), path);
  s.base_dir = scenarioBaseDir(path);
  return s;
}


void validateScenario(const Scenario& s, const std::string& source_name) {
  json j;
  try {
    j = json(scenarioToJson(s));
  } catch (const json::exception& e) {
    throw InputError(source_name + ": " + e.what());
  }
  (void)parseScenario(j, source_name);
}


}  // namespace sl
