#pragma once
// Private to src/workload: counter-based random draws. A draw is a pure function of (seed, what
// it is for, and up to three indices: a rank, a layer, a micro-batch, a task), so a simulation
// gets the same numbers whatever order its actors ask for them in, in either fidelity and across
// worker processes. SplitMix64's finaliser mixes the key; Box-Muller turns two uniforms into a
// standard normal.
#include <cmath>
#include <cstdint>

namespace moesim::workload::draws {

enum class Stream : std::uint64_t { gpu_speed = 1, kernel_jitter = 2, load_step = 3, load_microbatch = 4 };

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t hash(std::uint64_t seed, Stream s, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0,
                          std::uint64_t d = 0) {
  std::uint64_t h = mix(seed ^ (static_cast<std::uint64_t>(s) << 56));
  for (std::uint64_t v : {a, b, c, d}) h = mix(h ^ v);
  return h;
}

// Uniform in (0, 1): the top 53 bits, shifted off zero.
inline double uniform(std::uint64_t h) { return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53; }

inline double standard_normal(std::uint64_t seed, Stream s, std::uint64_t a, std::uint64_t b = 0,
                              std::uint64_t c = 0, std::uint64_t d = 0) {
  const std::uint64_t h = hash(seed, s, a, b, c, d);
  const double u1 = uniform(h), u2 = uniform(mix(h ^ 0x5851f42d4c957f2dULL));
  return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace moesim::workload::draws
