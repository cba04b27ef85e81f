//===- testing/testkit/random.h - Seeded randomness for partition tests -*- C++ -*-===//
//
// The randomness every randomized partition test shares: a source of small
// numbers that is either a seeded PRNG (property tests, check-plugin) or a
// fuzzer's bytes (tests/fuzz), so that one graph builder and one set of
// random selectors serve both. splitmix64 because it is portable, unlike
// std:: distributions, so a printed seed replays on every platform.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace subgraph::testkit {

/// splitmix64's finalizer: a well-mixed 64-bit function of `x`.
inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A percentage that depends only on (seed, what, a, b), so that a random
/// selector answers the same question the same way every time it is asked.
inline size_t roll(uint64_t seed, uint64_t what, uint64_t a, uint64_t b) {
  return static_cast<size_t>(mix(seed ^ mix(what ^ mix(a ^ mix(b)))) % 100);
}

/// "prefix<i>". (Not `"prefix" + std::to_string(i)`: GCC 12 warns about
/// that spelling with a false -Wrestrict in optimized builds, bug 105329.)
inline std::string numbered(const char* prefix, size_t i) {
  std::string name(prefix);
  name += std::to_string(i);
  return name;
}

/// A stream of small random numbers. Virtual so a fuzzer can spend one of
/// its bytes per choice instead of eight.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  /// A full 64-bit word.
  virtual uint64_t next() = 0;
  /// A number in [0, n); 0 when n is 0.
  virtual size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
  /// True with probability p percent.
  bool percent(size_t p) { return below(100) < p; }
};

/// The seeded PRNG: the same seed gives the same stream everywhere.
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t next() override { return state_ = mix(state_); }

 private:
  uint64_t state_;
};

}  // namespace subgraph::testkit
