// AVX-512 vector operations of the attention kernels (kernels layer, internal): 16 fp32 lanes,
// the register-tile sizes, exp_f32 lane by lane, fixed-order lane sums and f32/bf16/f16 rows
// widened into / rounded out of f32 scratch. The `Ops` argument of attention_tiles.hpp,
// attention_forward_impl.hpp and attention_backward_impl.hpp. Include only from
// attention_*_avx512.cpp; everything has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

struct AttentionAvx512Ops {
  using V = __m512;
  static constexpr std::int64_t kLanes = 16;
  // Score tile: 4 query rows x 4 vectors of keys (16 accumulators, 4 loads + 4 broadcasts per
  // step of the head_dim reduction). Weighted-sum tile: 8 output rows x 2 vectors of columns.
  static constexpr int kScoreRows = 4, kScoreVecs = 4;
  static constexpr int kSumRows = 8, kSumVecs = 2;

  [[gnu::always_inline]] static V zero() { return _mm512_setzero_ps(); }
  [[gnu::always_inline]] static V set1(float a) { return _mm512_set1_ps(a); }
  [[gnu::always_inline]] static V load(const float* p) { return _mm512_loadu_ps(p); }
  [[gnu::always_inline]] static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  [[gnu::always_inline]] static V add(V a, V b) { return _mm512_add_ps(a, b); }
  [[gnu::always_inline]] static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  [[gnu::always_inline]] static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  [[gnu::always_inline]] static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }  // a*b + c, one rounding
  [[gnu::always_inline]] static V max(V a, V b) { return _mm512_max_ps(a, b); }
  /// v with the lanes from `count` (0..16) on replaced by `fill`.
  [[gnu::always_inline]] static V head_or(V v, std::int64_t count, float fill) {
    return _mm512_mask_mov_ps(_mm512_set1_ps(fill), simd512::tail_mask(count), v);
  }
  /// Sum of the 16 lanes in a fixed tree: lane i + i+8, then i + i+4, i + i+2, i + i+1.
  [[gnu::always_inline]] static float sum(V v) {
    const __m512 halves = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));
    const __m256 h = _mm512_maskz_extractf32x8_ps(0xff, halves, 0);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  /// The largest lane (max is exact, so the order does not matter).
  [[gnu::always_inline]] static float max_lane(V v) {
    const __m512 halves = _mm512_max_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));
    const __m256 h = _mm512_maskz_extractf32x8_ps(0xff, halves, 0);
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  /// gemm_math::exp_f32 lane by lane, the same operations in the same order (no contraction),
  /// so the same bits: clamp to [-104, 89] (NaN kept), n = round(x log2 e), r = x - n ln 2 in
  /// two parts, a degree-7 polynomial, times 2^(n/2) twice.
  [[gnu::always_inline]] static V exp(V x) {
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);  // max(c, NaN) = NaN
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
    const __m512 shifter = _mm512_set1_ps(12582912.0f);
    const __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), shifter);
    const __m512 n = _mm512_sub_ps(t, shifter);
    const __m512i ni = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(shifter));
    __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(-2.12194440e-4f)));
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    for (float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
      p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c));
    const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
    const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  }

  /// dst[0, n) = elements [offset, offset + n) of base (dtype T) widened; dst[n, round_up(n, 16))
  /// = 0.
  template <DType T>
  static void load_row(const void* base, std::int64_t offset, std::int64_t n, float* __restrict dst) {
    std::int64_t c = 0;
    for (; c + kLanes <= n; c += kLanes) _mm512_storeu_ps(dst + c, simd512::load<T>(base, offset + c));
    if (c < n) _mm512_storeu_ps(dst + c, simd512::load_masked<T>(base, offset + c, simd512::tail_mask(n - c)));
  }
  /// Elements [offset, offset + n) of base (dtype T) = scale * src (accumulating: old + scale *
  /// src), fp32 math, rounded once.
  template <DType T>
  static void store_row(void* base, std::int64_t offset, std::int64_t n, const float* __restrict src, float scale,
                        bool accumulate) {
    const __m512 s = _mm512_set1_ps(scale);
    for (std::int64_t c = 0; c < n; c += kLanes) {
      const __mmask16 m = simd512::tail_mask(n - c);
      __m512 v = _mm512_mul_ps(s, _mm512_loadu_ps(src + c));
      if (accumulate) v = _mm512_add_ps(simd512::load_masked<T>(base, offset + c, m), v);
      simd512::store_masked<T>(base, offset + c, v, m);
    }
  }
};

}  // namespace
}  // namespace ampkit::cpu
