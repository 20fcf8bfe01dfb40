// Input data of the `ampkit bench` subcommands (tools layer, bench/). See fill.hpp.
#include "tools/ampkit/bench/fill.hpp"

#include <algorithm>
#include <random>

#include "ampkit/core/float16.hpp"
#include "ampkit/ops/convert.hpp"

namespace ampkit::tools::bench {

void fill_uniform(void* data, DType t, std::int64_t n, std::uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    if (t == DType::f32)
      static_cast<float*>(data)[i] = v;
    else if (t == DType::bf16)
      static_cast<std::uint16_t*>(data)[i] = float_to_bf16_bits(v);
    else
      static_cast<std::uint16_t*>(data)[i] = float_to_half_bits(v);
  }
}

void fill_hashed(void* data, DType t, std::int64_t n, std::uint64_t seed, float offset, float scale, int threads) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    float values[kChunk];
    const std::int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
    for (std::int64_t i = 0; i < count; ++i) {
      std::uint64_t z = seed + static_cast<std::uint64_t>(begin + i) * 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      const float u = static_cast<float>(z >> 40) * 0x1p-23f - 1.0f;
      values[i] = offset + scale * u;
    }
    convert(values, DType::f32, static_cast<unsigned char*>(data) + begin * static_cast<std::int64_t>(dtype_size(t)), t,
            count);
  }
}

}  // namespace ampkit::tools::bench
