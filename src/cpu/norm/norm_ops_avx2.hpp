// AVX2 (+FMA, F16C) vector operations for the norm kernels (kernels layer, internal): 8 fp32
// lanes, f32/bf16/f16 loads and stores, tails through a small buffer (core/simd_avx2.hpp). The
// `Ops` argument of the templates in norm_rows.hpp, norm_forward_impl.hpp, norm_backward_impl.hpp.
// Include only from *_avx2.cpp files; everything has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {
namespace {

struct Avx2Ops {
  using V = __m256;
  static constexpr std::int64_t kLanes = 8;

  [[gnu::always_inline]] static V zero() { return _mm256_setzero_ps(); }
  [[gnu::always_inline]] static V set1(float a) { return _mm256_set1_ps(a); }
  [[gnu::always_inline]] static V add(V a, V b) { return _mm256_add_ps(a, b); }
  [[gnu::always_inline]] static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  [[gnu::always_inline]] static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  [[gnu::always_inline]] static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }    // a*b + c, one rounding
  [[gnu::always_inline]] static V fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }    // a*b - c
  [[gnu::always_inline]] static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a*b, one rounding
  /// v with the lanes from `count` on set to 0.
  [[gnu::always_inline]] static V head(V v, std::int64_t count) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane);
    return _mm256_and_ps(v, _mm256_castsi256_ps(keep));
  }
  /// Sum of the 8 lanes, always in the same order.
  [[gnu::always_inline]] static float sum(V v) { return simd256::reduce_add(v); }
  /// Lane q of the result = sum(v[q]), bit for bit (the same pairings as sum: lane i + i+4,
  /// then i + i+2, i + i+1), for 8 vectors at once: rows across lanes.
  [[gnu::always_inline]] static V sums(const V (&v)[8]) {
    V x[4], y[2];
    for (int j = 0; j < 4; ++j)  // x[j]: rows 2j, 2j+1 in 128-bit halves, 4 partials each
      x[j] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * j], v[2 * j + 1], 0x20),
                           _mm256_permute2f128_ps(v[2 * j], v[2 * j + 1], 0x31));
    for (int i = 0; i < 2; ++i)  // y[i], half k: rows 4i+k, 4i+2+k, 2 partials each
      y[i] = _mm256_add_ps(_mm256_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm256_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    // z, lane 4k+j: row k+2j; then back to lane q = row q.
    const V z = _mm256_add_ps(_mm256_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm256_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  }
  /// All lanes = lane q of v.
  [[gnu::always_inline]] static V lane(V v, int q) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(q)); }
  /// Lane-wise a / b and sqrt(a), correctly rounded (the values of the scalar operations).
  [[gnu::always_inline]] static V div(V a, V b) { return _mm256_div_ps(a, b); }
  [[gnu::always_inline]] static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  /// Lane-wise `a < 0 ? 0 : a` (NaN stays NaN, -0 stays -0).
  [[gnu::always_inline]] static V floor0(V a) { return _mm256_max_ps(_mm256_setzero_ps(), a); }
  /// Correctly rounded square root (sqrtss), the same value as std::sqrt.
  [[gnu::always_inline]] static float sqrt(float a) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(a))); }

  /// Hints the cache line holding byte `offset` of `base` into L1 (never faults).
  [[gnu::always_inline]] static void prefetch(const void* base, std::int64_t offset) {
    _mm_prefetch(static_cast<const char*>(base) + offset, _MM_HINT_T0);
  }
  /// `count` (1..8) elements of dtype T at element i, widened; lanes past count read as 0.
  template <DType T>
  [[gnu::always_inline]] static V load(const void* base, std::int64_t i, std::int64_t count) {
    if (count == kLanes) return simd256::load<T>(base, i);
    return simd256::load_partial<T>(base, i, count);
  }
  /// Rounds to T and stores the first `count` (1..8) lanes at element i.
  template <DType T>
  [[gnu::always_inline]] static void store(void* base, std::int64_t i, V v, std::int64_t count) {
    if (count == kLanes) {
      simd256::store<T>(base, i, v);
    } else {
      simd256::store_partial<T>(base, i, v, count);
    }
  }

  // ---- Non-temporal stores (norm forward output, issue 10) ----
  /// Rounds v to T and stores all 8 lanes at element i, bypassing the caches (no read for
  /// ownership). The address must be aligned to the stored bytes: 32 for f32, 16 for bf16/f16.
  template <DType T>
  [[gnu::always_inline]] static void stream(void* base, std::int64_t i, V v) {
    if constexpr (T == DType::f32) {
      _mm256_stream_ps(static_cast<float*>(base) + i, v);
    } else {
      const __m128i h = T == DType::bf16 ? simd256::f32_to_bf16x8(v) : simd256::f32_to_f16x8(v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(base) + i), h);
    }
  }
  /// Orders earlier non-temporal stores before later stores (sfence).
  [[gnu::always_inline]] static void stream_fence() { _mm_sfence(); }
};

}  // namespace
}  // namespace ampkit::cpu
