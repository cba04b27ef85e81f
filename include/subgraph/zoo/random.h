//===- subgraph/zoo/random.h - Portable seeded random numbers ---*- C++ -*-===//
//
// The zoo's weights must be identical for a given seed on every platform and
// standard library, so that a model generated on one machine can be compared
// against one generated on another. std:: distributions do not promise that
// (libstdc++ and libc++ turn the same engine output into different numbers),
// and transcendental functions (log, cos in Box-Muller) may differ in the
// last bit between libms. So: SplitMix64 for bits, and transforms built from
// +, -, *, / and sqrt only, which IEEE 754 defines exactly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>

namespace subgraph::zoo {

/// SplitMix64 (Steele, Lea and Flood): a tiny, fast generator with good
/// statistical quality whose output is fully defined by its 64-bit state.
class SplitMix64 {
 public:
  /// A generator whose sequence is determined by `seed`.
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  /// The next 64 random bits.
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), with 53 random bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  /// Approximately standard normal: the Irwin-Hall sum of 12 uniforms minus
  /// 6 (mean 0, variance 1, support [-6, 6]), which needs no log or cos.
  double normal() {
    double sum = 0;
    for (int i = 0; i < 12; ++i) sum += uniform01();
    return sum - 6.0;
  }
  /// Uniform integer in [0, bound); `bound` must be positive. The modulo
  /// bias is below 2^-40 for the bounds the zoo uses.
  uint64_t below(uint64_t bound) { return next() % bound; }

 private:
  uint64_t state_;
};

/// 64-bit FNV-1a of `text`: a portable string hash (std::hash is not).
inline uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// The generator for one named tensor of a model built with `seed`. Each
/// tensor has its own stream, so a tensor's values depend only on the seed
/// and its name, not on how many tensors were generated before it.
inline SplitMix64 streamFor(uint64_t seed, std::string_view tensorName) {
  SplitMix64 mix(seed ^ fnv1a64(tensorName));
  return SplitMix64(mix.next());
}

}  // namespace subgraph::zoo
