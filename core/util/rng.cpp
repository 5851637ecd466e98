// Deterministic random numbers: xoshiro256** seeded through SplitMix64, and
// the few samplers ServeLab needs, written out so that every platform draws
// the same sequence (std::*_distribution differs between standard libraries).
// The samplers use only +, -, *, /, sqrt (exact in IEEE 754) and log / exp /
// pow from the C library; the raw generator, uniform01 and below() are
// bit-identical everywhere, the continuous samplers wherever the C library's
// log/exp/pow round the same way (the golden-value tests pin them).
#include "util/rng.h"

#include <cmath>

namespace sl {

namespace {

using detail::splitmix64;

constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& w : s_) w = splitmix64(x);
  // SplitMix64 never yields four zero words from one seed, but be explicit:
  // the all-zero state is the one state xoshiro cannot leave.
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 0x9E3779B97F4A7C15ull;
}

Rng Rng::forStream(std::uint64_t seed, std::string_view stream) {
  return Rng(hashCombine(seed, fnv1a64(stream)));
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Rng::uniform(double a, double b) { return a + (b - a) * uniform01(); }

std::uint64_t Rng::below(std::uint64_t n) {
  if (n <= 1) return 0;
  // Rejection: accept r >= (2^64 mod n), so every residue is equally likely.
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t r = next();
    if (r >= threshold) return r % n;
  }
}

double Rng::exponential(double rate) {
  // Inversion; 1 - U lies in (0, 1], so the log is finite.
  return -std::log1p(-uniform01()) / rate;
}

double Rng::normal() {
  if (hasSpare_) {
    hasSpare_ = false;
    return spare_;
  }
  // Marsaglia polar method: two normals per accepted pair; keep one spare.
  double u, v, s;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double m = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * m;
  hasSpare_ = true;
  return u * m;
}

double Rng::normal(double mean, double sd) { return mean + sd * normal(); }

double Rng::lognormal(double mu, double sigma) { return std::exp(mu + sigma * normal()); }

double Rng::gamma(double shape, double scale) {
  if (shape <= 0.0 || scale <= 0.0) return 0.0;
  if (shape < 1.0) {
    // Boost: X ~ Gamma(shape + 1), U^(1/shape) * X ~ Gamma(shape).
    const double x = gamma(shape + 1.0, 1.0);
    double u = uniform01();
    while (u == 0.0) u = uniform01();
    return x * std::pow(u, 1.0 / shape) * scale;
  }
  // Marsaglia & Tsang (2000).
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform01();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v * scale;
    if (u > 0.0 && std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

std::uint64_t fnv1a64(std::string_view s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace sl
