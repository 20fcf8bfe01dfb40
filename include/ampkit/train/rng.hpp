// The random number generator of `ampkit train` (train layer): SplitMix64, whose whole
// state is one 64-bit word (saved in checkpoints as the data-order state), with integer and
// real draws defined here bit for bit — the same sequence on every platform and standard
// library (std::uniform_int_distribution's output is implementation-defined, so it is not used).
#pragma once

#include <cstdint>

namespace ampkit::train {

__extension__ typedef unsigned __int128 Uint128;  // __extension__: not ISO C++, GCC and Clang have it

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed = 0) : state_(seed) {}

  /// The next 64 random bits (Steele, Lea and Flood's SplitMix64 finalizer).
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, n) without bias (Lemire's multiply-shift with rejection); n >= 1.
  std::uint64_t below(std::uint64_t n) {
    Uint128 m = static_cast<Uint128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
      while (low < threshold) {
        m = static_cast<Uint128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Uniform in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// The whole state: SplitMix64(state()) continues this sequence exactly.
  std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_;
};

}  // namespace ampkit::train
