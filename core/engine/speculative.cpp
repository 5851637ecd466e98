// Simulator: speculative decoding's engine side (cluster.speculative;
// docs/engine.md "Speculative decoding"). The step's cost (draft + verify)
// is taken in startIteration; here each decode sequence's accepted drafts
// are drawn and its tokens emitted.
#include "engine/simulator.h"

#include <algorithm>
#include <cmath>

namespace sl {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double unit(std::uint64_t x) {
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

}  // namespace

int Simulator::acceptedDrafts(const Request& r, int k) const {
  const SpeculativeConfig& sc = cfg_.speculative;
  const std::vector<double>& alpha = sc.alpha[static_cast<std::size_t>(std::clamp(r.domain + 1, 0, 3))];
  // A draw per (request, output position): what a text makes predictable is
  // the text's, not the scheduler's, so a request accepts the same tokens
  // under every policy and batch (docs/engine.md).
  const std::uint64_t base = mix(cfg_.seed * 0x2545F4914F6CDD1Dull ^ mix(static_cast<std::uint64_t>(r.id)));
  double shift = 0;
  if (sc.requestSigma > 0) {  // the request's own predictability: logit(α) + σ z
    const double u1 = std::max(unit(mix(base ^ 0xA5A5A5A5ull)), 0x1.0p-53), u2 = unit(mix(base ^ 0x5A5A5A5Aull));
    shift = sc.requestSigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  int a = 0;
  for (; a < k; ++a) {
    double p = alpha[std::min<std::size_t>(static_cast<std::size_t>(a), alpha.size() - 1)];
    if (shift != 0 && p > 0 && p < 1) p = 1.0 / (1.0 + std::exp(-(std::log(p / (1 - p)) + shift)));
    const std::uint64_t pos = static_cast<std::uint64_t>(r.generated) + static_cast<std::uint64_t>(a);
    if (!(unit(mix(base + pos * 0x9E3779B97F4A7C15ull)) < p)) break;
  }
  return a;
}

void Simulator::speculativeDecode(Instance& in, Request& r, int k, std::vector<Request*>& boundary) {
  const int accepted = acceptedDrafts(r, k);
  const int n = std::min(1 + accepted, r.outputLen() - r.generated);
  r.kvTokens += n;  // the rejected drafts' slots hold no KV: the next step's drafts reuse them
  r.specDrafted += k;
  r.specAccepted += n - 1;
  in.specDrafted_ += k;
  in.specAccepted_ += n - 1;
  ++in.specSteps_;
  for (int j = 0; j < n; ++j) emitToken(in, r, boundary);
}

bool Simulator::setSpeculativeK(int k) {
  SpeculativeConfig& sc = cfg_.speculative;
  if (!sc.on() || k < 0 || k > kMaxSpeculativeK) return false;
  sc.k = k;
  return true;
}

std::vector<Simulator::SpecCounts> Simulator::speculativeTokensById() const {
  std::vector<SpecCounts> out = specDone_;
  forEachActive([&](const Request& r) {
    if (!r.synthetic && r.arrival <= now_ && r.instance >= 0) out.push_back({r.id, r.specDrafted, r.specAccepted});
  });
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sl
