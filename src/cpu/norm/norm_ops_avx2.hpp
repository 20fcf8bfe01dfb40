// AVX2 (+FMA, F16C) vector operations for the norm kernels (kernels layer, internal): 8 fp32
// lanes, f32/bf16/f16 loads and stores, tails through a small buffer (core/simd_avx2.hpp). The
// `Ops` argument of the templates in norm_rows.hpp, norm_forward_impl.hpp, norm_backward_impl.hpp.
// Include only from *_avx2.cpp files; everything has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "core/simd_avx2.hpp"

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
  [[gnu::always_inline]] static V fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }  // a*b - c
  [[gnu::always_inline]] static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a*b, one rounding
  /// v with the lanes from `count` on set to 0.
  [[gnu::always_inline]] static V head(V v, std::int64_t count) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane);
    return _mm256_and_ps(v, _mm256_castsi256_ps(keep));
  }
  /// Sum of the 8 lanes, always in the same order.
  [[gnu::always_inline]] static float sum(V v) { return simd256::reduce_add(v); }
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
};

}  // namespace
}  // namespace ampkit::cpu
