#pragma once
// Deterministic random streams. One generator per stream (arrivals, lengths,
// noise, tie-breaks), derived from the scenario seed and a stream name, so
// changing how many numbers one stream draws never shifts another.
// Samplers are implemented here, not with std::*_distribution, whose output
// differs between standard libraries (10-engine.md).
#include <cstdint>
#include <string_view>

namespace sl {

/// xoshiro256** seeded through SplitMix64. Identical output on every platform.
class Rng {
public:
  explicit Rng(std::uint64_t seed = 1);
  /// A stream independent of others: seed mixed with a hash of `stream`.
  static Rng forStream(std::uint64_t seed, std::string_view stream);

  std::uint64_t next();               ///< raw 64 bits
  double uniform01();                 ///< [0, 1), 53-bit resolution
  double uniform(double a, double b); ///< [a, b)
  std::uint64_t below(std::uint64_t n);  ///< uniform integer in [0, n), unbiased; n > 0
  double exponential(double rate);    ///< mean 1/rate
  double normal();                    ///< standard normal
  double normal(double mean, double sd);
  double lognormal(double mu, double sigma);
  double gamma(double shape, double scale);  ///< mean shape*scale

private:
  std::uint64_t s_[4];
  bool hasSpare_ = false;
  double spare_ = 0.0;
};

/// Stable 64-bit FNV-1a hash (used for stream names and fingerprints).
std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 14695981039346656037ull);
namespace detail {
inline std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace detail

/// Inline (issue 16): the engine folds every event into its fingerprint.
inline std::uint64_t hashCombine(std::uint64_t h, std::uint64_t v) {
  // Mix v through the SplitMix64 finalizer, then fold it into h
  // (boost-style), then finalize again so nearby inputs scatter.
  std::uint64_t x = v;
  const std::uint64_t mv = detail::splitmix64(x);
  std::uint64_t y = h ^ (mv + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
  return detail::splitmix64(y);
}

}  // namespace sl
