// The machine's arithmetic ceilings (tools layer, bench/; compiled with AVX-512 + AVX512_BF16
// flags by its name): two register-only loops, one of vfmadd231ps zmm and one of vdpbf16ps zmm, each on
// kPeakChains independent accumulators so that the pipes, not the latency, are the limit. Timed by
// peak.cpp (the caller runs them on 1..N threads); called only when the CPU has the ISA.
#include <immintrin.h>

#include <cstdint>

#include "tools/ampkit/bench/peak.hpp"

namespace ampkit::tools::bench {

// Per iteration: kPeakChains x vfmadd231ps zmm = kPeakChains x 16 lanes x 2 flops.
float peak_loop_fma_f32_avx512(std::int64_t iterations) {
  __m512 acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c) * 1e-3f);
  const __m512 scale = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-3f);
  for (std::int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, add);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kPeakChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float v : lanes) total += v;
  return total;
}

// Per iteration: kPeakChains x vdpbf16ps zmm = kPeakChains x 16 lanes x 2 pairs x 2 flops.
float peak_loop_dpbf16_avx512bf16(std::int64_t iterations) {
  __m512 acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c) * 1e-3f);
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
  for (std::int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kPeakChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float v : lanes) total += v;
  return total;
}

}  // namespace ampkit::tools::bench
