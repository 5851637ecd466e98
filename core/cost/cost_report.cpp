#include "cost/cost_report.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "cost/speculative.h"
#include "util/error.h"

namespace sl {

namespace {

constexpr std::int64_t kMaxArg = 1'000'000'000;

bool parsePositive(std::string_view s, std::int64_t& out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && out > 0 && out <= kMaxArg;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

struct Kv {
  bool ok = false;
  std::int64_t blocks = 0;
  std::string error;
};

Kv kvCapacity(const CostModel& m, const CostReportOptions& o) {
  Kv kv;
  try {
    kv.blocks = m.kvCapacityBlocks(o.gpu_memory_utilization, o.kv_capacity_fraction, o.block_size);
    kv.ok = true;
  } catch (const InputError& e) {
    kv.error = e.what();
  }
  return kv;
}

std::string describeBatch(const BatchShape& b) {
  std::string s;
  if (b.prefill_seqs > 0)
    s += "prefill " + std::to_string(b.prefill_seqs) + " seq, " + fmt("%.0f", b.prefill_tokens) +
         " tokens";
  if (b.decode_seqs > 0) {
    if (!s.empty()) s += "; ";
    s += "decode " + std::to_string(b.decode_seqs) + " seq, mean context " +
         fmt("%.0f", b.decode_ctx_sum / b.decode_seqs);
  }
  return s.empty() ? "empty" : s;
}

std::string mib(double bytes) {
  return bytes >= 1048576 ? fmt("%.1f MiB", bytes / 1048576) : fmt("%.0f KiB", bytes / 1024);
}

// "64 all-reduces of 64.0 MiB, 0.33 ms each: NCCL (measured, resources/collectives/...)"
std::string describeComm(const CostModel& m, const BatchShape& b) {
  const double bytes = m.allreduceBytes(batchTokens(b));
  const std::string impl = m.allreduceImpl(bytes);
  std::string how;
  if (impl == "ring")
    how = "analytic ring at half the link rate + alpha_hop per hop (20-cost-model.md)";
  else if (impl == "nccl")
    how = "NCCL, fitted to measured H100 DGX all-reduces (resources/collectives/nccl-allreduce-h100-dgx.json)";
  else
    how = "vLLM custom all-reduce, " + impl +
          ", fitted to measured H100 kernels (resources/collectives/vllm-custom-allreduce-h100.json)";
  return std::to_string(m.allreducesPerIteration()) + " all-reduces of " + mib(bytes) + ", " +
         fmt("%.1f us", m.allreduceSeconds(bytes) * 1e6) + " each: " + how + "; model '" +
         allReduceModeName(m.allReduceMode()) + "' (docs/cost-model.md)";
}

// "kernel: 4096 CTAs (8 a sequence) over 264 slots (132 SMs x 2), 15.52 waves, CV 5.66"
std::string describeHetero(const CostModel& m, const BatchShape& b) {
  const double cv = decodeContextCv(b);
  if (m.coefficients().hetero == HeteroMode::Cv)
    return "cv: min(h_max " + fmt("%g", m.coefficients().h_max) + ", 1 + kappa " +
           fmt("%g", m.coefficients().kappa) + " x CV " + fmt("%.3f", cv) + ")";
  const double ctas = static_cast<double>(b.decode_seqs) * m.attentionCtasPerSeq();
  return "kernel: " + fmt("%.0f", ctas) + " CTAs (" + std::to_string(m.attentionCtasPerSeq()) +
         " a sequence) over " + fmt("%.0f", m.attentionSlots()) + " slots (" + std::to_string(m.gpu().sm_count) +
         " SMs x " + fmt("%g", m.coefficients().attn_ctas_per_sm) + "), " +
         fmt("%.2f", std::max(1.0, ctas / m.attentionSlots())) + " waves, CV " + fmt("%.3f", cv) +
         "; docs/cost-model.md \"Heterogeneity\"";
}

nlohmann::json heteroJson(const CostModel& m, const BatchShape& b, double h) {
  const double ctas = static_cast<double>(b.decode_seqs) * m.attentionCtasPerSeq();
  nlohmann::json j = {{"rule", heteroModeName(m.coefficients().hetero)}, {"h", h}, {"cv", decodeContextCv(b)}};
  if (m.coefficients().hetero == HeteroMode::Kernel) {
    j["ctas"] = ctas;
    j["ctas_per_seq"] = m.attentionCtasPerSeq();
    j["slots"] = m.attentionSlots();
    j["waves"] = std::max(1.0, ctas / m.attentionSlots());
  } else {
    j["kappa"] = m.coefficients().kappa;
    j["h_max"] = m.coefficients().h_max;
  }
  return j;
}

}  // namespace

BatchShape parsePrefillArg(std::string_view arg) {
  const std::string bad = "--prefill: expected TOKENS[xBATCH], e.g. 2048 or 512x8 (got '" +
                          std::string(arg) + "')";
  std::int64_t tokens = 0, batch = 1;
  const auto x = arg.find_first_of("xX");
  if (x == std::string_view::npos) {
    if (!parsePositive(arg, tokens)) throw InputError(bad);
  } else if (!parsePositive(arg.substr(0, x), tokens) || !parsePositive(arg.substr(x + 1), batch)) {
    throw InputError(bad);
  }
  BatchShape b;
  const double n = static_cast<double>(tokens), k = static_cast<double>(batch);
  b.prefill_seqs = static_cast<int>(batch);
  b.prefill_tokens = k * n;
  b.prefill_attn = k * n * (n / 2);  // no cached context: c_j = 0
  return b;
}

BatchShape parseDecodeGroup(std::string_view arg) {
  const std::string bad = "--decode: expected SEQS@CONTEXT[,SEQS@CONTEXT...], e.g. 32@1024 (got '" +
                          std::string(arg) + "')";
  const auto at = arg.find('@');
  std::int64_t seqs = 0, ctx = 0;
  if (at == std::string_view::npos || !parsePositive(arg.substr(0, at), seqs) ||
      !parsePositive(arg.substr(at + 1), ctx))
    throw InputError(bad);
  BatchShape b;
  const double c = static_cast<double>(ctx);
  b.decode_seqs = static_cast<int>(seqs);
  b.decode_ctx_sum = static_cast<double>(seqs) * c;
  b.decode_ctx_sumsq = static_cast<double>(seqs) * c * c;
  return b;
}

// Comma-separated groups: one batch of every group's sequences.
BatchShape parseDecodeArg(std::string_view arg) {
  BatchShape b;
  std::size_t from = 0;
  while (true) {
    const auto comma = arg.find(',', from);
    b += parseDecodeGroup(arg.substr(from, comma == std::string_view::npos ? comma : comma - from));
    if (comma == std::string_view::npos) return b;
    from = comma + 1;
  }
}

BatchShape parseCostBatch(std::optional<std::string_view> prefill,
                          std::optional<std::string_view> decode) {
  if (!prefill && !decode) return parseDecodeArg("1@1024");
  BatchShape b;
  if (prefill) b += parsePrefillArg(*prefill);
  if (decode) b += parseDecodeArg(*decode);
  return b;
}

namespace {
// "ep 8 ranks x 1 GPU, attention DP; zipf 1.2 routing, eplb placement with 32
// replicas; busiest rank 1.31x the mean for this batch; 43.2 GB weights per GPU".
std::string describeMoe(const CostModel& m, double N) {
  const MoeDeployment& d = m.moe();
  std::string s = "ep " + std::to_string(d.ep) + (d.ep == 1 ? " rank" : " ranks") + " x " +
                  std::to_string(m.tp() / d.ep) + " GPU" + (m.tp() / d.ep == 1 ? "" : "s") +
                  " (experts TP inside a rank), attention " + (d.attentionDp ? "data parallel" : "tensor parallel") +
                  "; " + routingKindName(d.routing.kind);
  if (d.routing.kind == RoutingKind::Zipf) s += " " + fmt("%g", d.routing.skew);
  if (d.routing.kind == RoutingKind::File) s += " " + d.routing.path;
  s += " routing, " + std::string(placementName(d.placement)) + " placement";
  if (d.redundant) s += " with " + std::to_string(d.redundant) + " redundant experts";
  if (d.ep > 1) s += "; busiest rank " + fmt("%.2f", m.placement().imbalance(N)) + "x the mean for this batch";
  s += "; " + fmt("%.1f", m.weightBytesPerGpu() / 1e9) + " GB of weights per GPU";
  return s;
}
}  // namespace

namespace {
// The speculative part of `cost --spec`: draft, verify step, tokens per step
// and the time per token against the plain decode step.
std::string describeSpeculation(const CostModel& m, const BatchShape& batch, const CostReportOptions& o) {
  const SpeculativeCost& sc = *o.speculative;
  const int k = sc.spec().k;
  const double tokens = expectedTokensPerStep(o.acceptance, k);
  const double draft = sc.draftSeconds(batch.decode_seqs, batch.decode_ctx_sum);
  const double plain = m.iterationSeconds(batch);
  const double verify = m.iterationSeconds(sc.verifyShape(batch));
  std::string a;
  for (std::size_t i = 0; i < o.acceptance.size(); ++i) {
    if (i) a += '/';
    a += fmt("%.2f", o.acceptance[i]);
  }
  std::string out = "Speculative decoding: " + std::string(specMethodName(sc.spec().method)) + ", k " +
                    std::to_string(k) + ", acceptance " + a + " per position -> " + fmt("%.2f", tokens) +
                    " tokens a step per sequence\n";
  out += "  draft               " + fmt("%8.3f ms", draft * 1e3) + "\n";
  out += "  verify step         " + fmt("%8.3f ms", verify * 1e3) + " (" +
         fmt("%.0f", static_cast<double>(k) * batch.decode_seqs) + " draft tokens verified)\n";
  out += "  per output token    " + fmt("%8.3f ms", (draft + verify) / tokens * 1e3) + " against " +
         fmt("%.3f ms", plain * 1e3) + " without: " + fmt("%.2f", plain * tokens / (draft + verify)) + "x\n";
  return out;
}
}  // namespace

std::string formatCostReport(const CostModel& m, const BatchShape& batch,
                             const CostReportOptions& o) {
  const CostBreakdown r = m.breakdown(batch);
  const auto ms = [](double s) { return fmt("%10.3f ms", s * 1e3); };
  const auto pct = [&](double s) {
    return r.total_s > 0 ? fmt("  (%5.1f %%)", 100.0 * s / r.total_s) : std::string();
  };
  std::string out;
  out += "Model:   " + m.model().name + " (" + m.model().id + ")\n";
  out += "GPU:     " + std::to_string(m.tp()) + " \u00d7 " + m.gpu().id + " (" + m.gpu().name +
         "), tp " + std::to_string(m.tp()) + "\n";
  out += "Dtypes:  weights " + std::string(dtypeName(m.precision().weights)) +
         (m.precision().experts ? std::string(", experts ") + dtypeName(*m.precision().experts) : std::string()) +
         ", KV cache " + dtypeName(m.precision().kv) + " (" + fmt("%.1f", static_cast<double>(m.weightBytes()) / 1e9) +
         " GB of weights)\n";
  std::string profile = o.profile;
  if (profile.empty()) {
    profile = m.gpu().coefficients.empty() ? "default coefficients" : "default coefficients with " + m.gpu().id + "'s own fit (";
    for (std::size_t i = 0; i < m.gpu().coefficients.size(); ++i)
      profile += (i ? ", " : "") + m.gpu().coefficients[i].first + " " + fmt("%g", m.gpu().coefficients[i].second);
    if (!m.gpu().coefficients.empty()) profile += ")";
  }
  out += "Profile: " + profile + "\n";
  out += "Batch:   " + describeBatch(batch) + "\n\n";
  out += "Predicted iteration time: " + fmt("%.3f ms", r.total_s * 1e3) + "\n";
  if (m.model().isMoe()) {
    out += "  linear, not experts " + ms(r.linear_s) + pct(r.linear_s) + "\n";
    out += "  routed experts      " + ms(r.expert_s) + pct(r.expert_s) + "\n";
    if (m.moe().attentionDp) out += "  all-to-all (EP)     " + ms(r.a2a_s) + pct(r.a2a_s) + "\n";
  } else {
    out += "  linear layers       " + ms(r.linear_s) + pct(r.linear_s) + "\n";
  }
  out += "  attention prefill   " + ms(r.prefill_attn_s) + pct(r.prefill_attn_s) + "\n";
  out += "  attention decode    " + ms(r.decode_attn_s) + pct(r.decode_attn_s) + "\n";
  out += "  overheads           " + ms(r.overhead_s) + pct(r.overhead_s) + "\n";
  out += "  communication (TP)  " + ms(r.comm_s) + pct(r.comm_s) + "\n";
  if (m.tp() > 1 && !m.moe().attentionDp) out += "    " + describeComm(m, batch) + "\n";
  if (m.asyncScheduling())
    out += "  hidden by async scheduling: " + fmt("%.3f ms", r.overlap_s * 1e3) +
           " (CPU part t_step + t_seq x seqs overlaps the GPU part)\n";
  out += "Heterogeneity factor h: " + fmt("%.3f", r.heterogeneity_h) + " (" + describeHetero(m, batch) + ")\n";
  if (m.model().isMoe()) {
    const ModelSpec& md = m.model();
    out += "Experts: " + std::to_string(md.experts) + " routed (" + std::to_string(md.experts_per_token) +
           " a token) + " + std::to_string(md.shared_experts) + " shared, in " + std::to_string(md.moeLayers()) +
           " of " + std::to_string(md.layers) + " layers; this batch touches " +
           fmt("%.1f", m.expertsTouched(batchTokens(batch))) + " of " + std::to_string(md.experts) +
           " per layer (balanced routing), and reads their weights; " + fmt("%.2f", md.activeParamCount() / 1e9) +
           " B of " + fmt("%.2f", md.paramCount() / 1e9) + " B parameters active per token\n";
    out += "Deployment: " + describeMoe(m, batchTokens(batch)) + "\n";
  }
  if (o.speculative) out += describeSpeculation(m, batch, o);
  const Kv kv = kvCapacity(m, o);
  if (kv.ok) {
    out += "KV capacity: " + std::to_string(kv.blocks * o.block_size) + " tokens = " + std::to_string(kv.blocks) +
           " blocks of " + std::to_string(o.block_size) + " tokens (" + std::to_string(m.kvBytesPerToken()) +
           " B per token" +
           (m.kvBytesPerTokenWindowed() > 0
                ? "; " + std::to_string(m.kvBytesPerTokenWindowed()) + " of them on " +
                      std::to_string(m.model().sliding_layers) + " sliding-window layers that keep " +
                      std::to_string(m.windowTokensHeld(std::int64_t{1} << 40, o.block_size)) + "-" +
                      std::to_string(m.windowTokensHeld((std::int64_t{1} << 40) + 1, o.block_size)) +
                      " tokens, windows counted for " + std::to_string(m.maxSeqs()) + " sequences"
                : std::string()) +
           ")\n";
  } else {
    out += "KV capacity: none: " + kv.error + "\n";
  }
  return out;
}

nlohmann::json costReportJson(const CostModel& m, const BatchShape& batch,
                              const CostReportOptions& o) {
  const CostBreakdown r = m.breakdown(batch);
  nlohmann::json j;
  j["gpu"] = m.gpu().id;
  j["model"] = m.model().id;
  j["tp"] = m.tp();
  j["model_dtype"] = dtypeName(m.precision().weights);
  j["kv_dtype"] = dtypeName(m.precision().kv);
  j["weight_bytes"] = m.weightBytes();
  j["profile"] = o.profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.profile);
  j["batch"] = {{"decode_seqs", batch.decode_seqs},
                {"decode_ctx_sum", batch.decode_ctx_sum},
                {"decode_ctx_sumsq", batch.decode_ctx_sumsq},
                {"prefill_seqs", batch.prefill_seqs},
                {"prefill_tokens", batch.prefill_tokens},
                {"prefill_attn", batch.prefill_attn}};
  j["iteration_ms"] = r.total_s * 1e3;
  j["breakdown_ms"] = {{"linear", r.linear_s * 1e3},
                       {"experts", r.expert_s * 1e3},
                       {"all_to_all", r.a2a_s * 1e3},
                       {"prefill_attention", r.prefill_attn_s * 1e3},
                       {"decode_attention", r.decode_attn_s * 1e3},
                       {"overhead", r.overhead_s * 1e3},
                       {"communication", r.comm_s * 1e3}};
  if (m.asyncScheduling()) j["breakdown_ms"]["hidden_by_async_scheduling"] = -r.overlap_s * 1e3;
  if (m.tp() > 1) {
    const double bytes = m.allreduceBytes(batchTokens(batch));
    j["allreduce"] = {{"model", allReduceModeName(m.allReduceMode())},
                      {"implementation", m.allreduceImpl(bytes)},
                      {"count", m.allreducesPerIteration()},
                      {"bytes", bytes},
                      {"each_us", m.allreduceSeconds(bytes) * 1e6}};
  }
  j["heterogeneity_h"] = r.heterogeneity_h;
  j["heterogeneity"] = heteroJson(m, batch, r.heterogeneity_h);
  if (m.model().isMoe())
    j["moe"] = {{"experts", m.model().experts},
                {"experts_per_token", m.model().experts_per_token},
                {"shared_experts", m.model().shared_experts},
                {"moe_layers", m.model().moeLayers()},
                {"experts_touched_per_layer", m.expertsTouched(batchTokens(batch))},
                {"active_params", m.model().activeParamCount()},
                {"params", m.model().paramCount()},
                {"ep", m.moe().ep},
                {"attention_dp", m.moe().attentionDp},
                {"ep_redundant", m.moe().redundant},
                {"ep_placement", placementName(m.moe().placement)},
                {"routing", routingKindName(m.moe().routing.kind)},
                {"rank_loads", m.rankLoads(batchTokens(batch))},
                {"imbalance", m.placement().imbalance(batchTokens(batch))},
                {"weight_bytes_per_gpu", m.weightBytesPerGpu()}};
  const Kv kv = kvCapacity(m, o);
  if (kv.ok) {
    j["kv_capacity"] = {{"tokens", kv.blocks * o.block_size},
                        {"blocks", kv.blocks},
                        {"block_size", o.block_size},
                        {"bytes_per_token", m.kvBytesPerToken()},
                        {"windowed_bytes_per_token", m.kvBytesPerTokenWindowed()}};
  } else {
    j["kv_capacity"] = nullptr;
    j["kv_error"] = kv.error;
  }
  j["coefficients"] = m.coefficients().toJson();
  return j;
}

std::string formatAllReduceFit() {
  const CollectiveModel& cm = CollectiveModel::builtin();
  std::string out = "All-reduce fits: t = alpha + f * bytes / busbw, busbw = eta * link "
                    "(measured link " + fmt("%.0f", cm.referenceLinkBytesPerSec() / 1e9) + " GB/s per direction)\n";
  out += "impl      tp  bytes from   to           alpha_us  busbw_GB/s   eta    points  median|err|  max|err|\n";
  for (const AllReduceFit& f : cm.fits()) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-8s  %2d  %-11s  %-11s  %8.1f  %10.0f  %6.3f  %6d  %10.1f%%  %7.1f%%\n",
                  f.impl.c_str(), f.tp, mib(f.lo_bytes).c_str(),
                  std::isinf(f.hi_bytes) ? "inf" : mib(f.hi_bytes).c_str(), f.alpha_s * 1e6, f.busbw_gbps, f.eta,
                  f.points, 100 * f.median_abs_err, 100 * f.max_abs_err);
    out += buf;
  }
  out += "NCCL: " + cm.ncclSource() + "\n";
  out += "custom: " + cm.customSource() + "\n";
  const AllToAllModel& a2a = AllToAllModel::builtin();
  out += "\nExpert-parallel all-to-all fits (dispatch / combine): t = bytes over the domain / (eta * link) + latency\n";
  out += "domain   link_GB/s   eta     latency_us  points  median|err|  max|err|\n";
  for (const AllToAllFit* f : {&a2a.nvlink(), &a2a.rdma()}) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%-7s  %9.0f  %6.3f  %10.1f  %6d  %10.1f%%  %7.1f%%\n", f->domain.c_str(),
                  f->link_gbps, f->eta, f->latency_us, f->points, 100 * f->median_abs_err, 100 * f->max_abs_err);
    out += buf;
  }
  out += "all-to-all: " + a2a.source() + "\n";
  return out;
}

nlohmann::json allReduceFitJson() {
  const CollectiveModel& cm = CollectiveModel::builtin();
  nlohmann::json j;
  j["reference_link_gbps"] = cm.referenceLinkBytesPerSec() / 1e9;
  j["custom_max_bytes"] = cm.customMaxBytes();
  auto& fits = j["fits"] = nlohmann::json::array();
  for (const AllReduceFit& f : cm.fits())
    fits.push_back({{"impl", f.impl},
                    {"tp", f.tp},
                    {"lo_bytes", f.lo_bytes},
                    {"hi_bytes", std::isinf(f.hi_bytes) ? nlohmann::json(nullptr) : nlohmann::json(f.hi_bytes)},
                    {"alpha_us", f.alpha_s * 1e6},
                    {"busbw_gbps", f.busbw_gbps},
                    {"eta", f.eta},
                    {"points", f.points},
                    {"median_abs_err", f.median_abs_err},
                    {"max_abs_err", f.max_abs_err}});
  j["sources"] = {{"nccl", cm.ncclSource()}, {"custom", cm.customSource()}};
  const AllToAllModel& a2a = AllToAllModel::builtin();
  auto& at = j["all_to_all"] = nlohmann::json::array();
  for (const AllToAllFit* f : {&a2a.nvlink(), &a2a.rdma()})
    at.push_back({{"domain", f->domain},
                  {"link_gbps", f->link_gbps},
                  {"eta", f->eta},
                  {"latency_us", f->latency_us},
                  {"points", f->points},
                  {"median_abs_err", f->median_abs_err},
                  {"max_abs_err", f->max_abs_err}});
  return j;
}

}  // namespace sl
