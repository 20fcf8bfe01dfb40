// AVX-512 vector operations for the norm kernels (kernels layer, internal): 16 fp32 lanes,
// f32/bf16/f16 loads and stores with masked tails (core/simd_avx512.hpp). The `Ops` argument of
// the templates in norm_rows.hpp, norm_forward_impl.hpp and norm_backward_impl.hpp.
// Include only from *_avx512.cpp / *_avx512bf16.cpp files; everything has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

struct Avx512Ops {
  using V = __m512;
  static constexpr std::int64_t kLanes = 16;

  [[gnu::always_inline]] static V zero() { return _mm512_setzero_ps(); }
  [[gnu::always_inline]] static V set1(float a) { return _mm512_set1_ps(a); }
  [[gnu::always_inline]] static V add(V a, V b) { return _mm512_add_ps(a, b); }
  [[gnu::always_inline]] static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  [[gnu::always_inline]] static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  [[gnu::always_inline]] static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a*b + c, one rounding
  [[gnu::always_inline]] static V fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }    // a*b - c
  [[gnu::always_inline]] static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a*b, one rounding
  /// v with the lanes from `count` on set to 0.
  [[gnu::always_inline]] static V head(V v, std::int64_t count) {
    return _mm512_maskz_mov_ps(simd512::tail_mask(count), v);
  }
  /// Sum of the 16 lanes, always in the same order.
  /// (Not _mm512_reduce_add_ps: GCC 12's version warns about its own undefined vectors.)
  [[gnu::always_inline]] static float sum(V v) {
    const __m512 halves = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));  // lo+hi 256 bits
    const __m256 h = _mm512_maskz_extractf32x8_ps(0xff, halves, 0);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  /// Lane q of the result = sum(v[q]), bit for bit (the same pairings as sum: lane i + i+8,
  /// then i + i+4, i + i+2, i + i+1), for 16 vectors at once: rows across lanes.
  [[gnu::always_inline]] static V sums(const V (&v)[16]) {
    V w[8], x[4], y[2];
    for (int k = 0; k < 8; ++k)  // w[k]: rows 2k, 2k+1 in 256-bit halves, 8 partials each
      w[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44),
                           _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xee));
    for (int j = 0; j < 4; ++j)  // x[j]: rows 4j..4j+3 in 128-bit blocks, 4 partials each
      x[j] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0x88),
                           _mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0xdd));
    for (int i = 0; i < 2; ++i)  // y[i], block k: rows 8i+k, 8i+4+k, 2 partials each
      y[i] = _mm512_add_ps(_mm512_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm512_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    // z, lane 4k+j: row k+4j; then back to lane q = row q.
    const V z = _mm512_add_ps(_mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(idx, z);
  }
  /// All lanes = lane q of v.
  [[gnu::always_inline]] static V lane(V v, int q) { return _mm512_permutexvar_ps(_mm512_set1_epi32(q), v); }
  /// Lane-wise a / b and sqrt(a), correctly rounded (the values of the scalar operations).
  [[gnu::always_inline]] static V div(V a, V b) { return _mm512_div_ps(a, b); }
  [[gnu::always_inline]] static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  /// Lane-wise `a < 0 ? 0 : a` (NaN stays NaN, -0 stays -0).
  [[gnu::always_inline]] static V floor0(V a) { return _mm512_max_ps(_mm512_setzero_ps(), a); }
  /// Correctly rounded square root (vsqrtss), the same value as std::sqrt.
  [[gnu::always_inline]] static float sqrt(float a) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(a))); }

  /// Hints the cache line holding byte `offset` of `base` into L1 (never faults).
  [[gnu::always_inline]] static void prefetch(const void* base, std::int64_t offset) {
    _mm_prefetch(static_cast<const char*>(base) + offset, _MM_HINT_T0);
  }
  /// `count` (1..16) elements of dtype T at element i, widened; lanes past count read as 0.
  template <DType T>
  [[gnu::always_inline]] static V load(const void* base, std::int64_t i, std::int64_t count) {
    if (count == kLanes) return simd512::load<T>(base, i);
    return simd512::load_masked<T>(base, i, simd512::tail_mask(count));
  }
  /// Rounds to T and stores the first `count` (1..16) lanes at element i.
  template <DType T>
  [[gnu::always_inline]] static void store(void* base, std::int64_t i, V v, std::int64_t count) {
    if (count == kLanes) {
      simd512::store<T>(base, i, v);
    } else {
      simd512::store_masked<T>(base, i, v, simd512::tail_mask(count));
    }
  }

  // ---- Non-temporal stores (norm forward output, issue 10) ----
  /// Rounds v to T and stores all 16 lanes at element i, bypassing the caches (no read for
  /// ownership). The address must be aligned to the stored bytes: 64 for f32, 32 for bf16/f16.
  template <DType T>
  [[gnu::always_inline]] static void stream(void* base, std::int64_t i, V v) {
    if constexpr (T == DType::f32) {
      _mm512_stream_ps(static_cast<float*>(base) + i, v);
    } else {
      const __m256i h = T == DType::bf16 ? simd512::f32_to_bf16x16(v) : simd512::f32_to_f16x16(v);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(base) + i), h);
    }
  }
  /// Orders earlier non-temporal stores before later stores (sfence).
  [[gnu::always_inline]] static void stream_fence() { _mm_sfence(); }
};

}  // namespace
}  // namespace ampkit::cpu
