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
  /// exp(x) lane by lane: gemm_math::exp_f32's algorithm with fused multiply-adds (written out,
  /// so no compiler contraction can change them; AttentionAvx2Ops::exp does the same operations):
  /// clamp to [-104, 89] (NaN kept), n = round(x log2 e) by the shifter, r = x - n ln 2 in two
  /// parts, a degree-7 polynomial, times 2^(n/2) twice. Within 2 ulp of exp over [-104, 89].
  [[gnu::always_inline]] static V exp(V x) {
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);  // max(c, NaN) = NaN
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
    const __m512 shifter = _mm512_set1_ps(12582912.0f);
    const __m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), shifter);
    const __m512 n = _mm512_sub_ps(t, shifter);
    const __m512i ni = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(shifter));
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    for (float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
      p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
    const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
    const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  }

  /// dst: [rows, ldd] f32; row r = elements [offset + r stride, + n) of base (dtype T) widened,
  /// lanes n .. round_up(n, 16) zero.
  template <DType T>
  static void load_rows(const void* base, std::int64_t offset, std::int64_t stride, std::int64_t rows, std::int64_t n,
                        float* __restrict dst, std::int64_t ldd) {
    const std::int64_t full = n / kLanes * kLanes;
    const __mmask16 tail = simd512::tail_mask(n - full);
    for (std::int64_t r = 0; r < rows; ++r, offset += stride, dst += ldd) {
      for (std::int64_t c = 0; c < full; c += kLanes) _mm512_storeu_ps(dst + c, simd512::load<T>(base, offset + c));
      if (full < n) _mm512_storeu_ps(dst + full, simd512::load_masked<T>(base, offset + full, tail));
    }
  }
  /// Row r of base (dtype T, elements [offset + r stride, + n)) = scale[r * scale_step] * src row
  /// r (accumulating: old + that), fp32 math, rounded once. src: [rows, lds].
  template <DType T>
  static void store_rows(void* base, std::int64_t offset, std::int64_t stride, std::int64_t rows, std::int64_t n,
                         const float* __restrict src, std::int64_t lds, const float* scale, std::int64_t scale_step,
                         bool accumulate) {
    for (std::int64_t r = 0; r < rows; ++r, offset += stride, src += lds) {
      const __m512 s = _mm512_set1_ps(scale[r * scale_step]);
      for (std::int64_t c = 0; c < n; c += kLanes) {
        const __mmask16 m = simd512::tail_mask(n - c);
        __m512 v = _mm512_mul_ps(s, _mm512_loadu_ps(src + c));
        if (accumulate) v = _mm512_add_ps(simd512::load_masked<T>(base, offset + c, m), v);
        if (m == 0xffff) {
          simd512::store<T>(base, offset + c, v);
        } else {
          simd512::store_masked<T>(base, offset + c, v, m);
        }
      }
    }
  }
  /// dst[c, r] = src[r, c] for a 16 x 16 block (src rows at lds, dst rows at ldd).
  [[gnu::always_inline]] static void transpose_block(const float* __restrict src, std::int64_t lds,
                                                     float* __restrict dst, std::int64_t ldd) {
    __m512 t[16], u[16];
    for (int k = 0; k < 8; ++k) {  // per 128-bit lane: rows 2k, 2k+1 interleaved
      const __m512 a = _mm512_loadu_ps(src + 2 * k * lds), b = _mm512_loadu_ps(src + (2 * k + 1) * lds);
      t[2 * k] = _mm512_unpacklo_ps(a, b);
      t[2 * k + 1] = _mm512_unpackhi_ps(a, b);
    }
    for (int g = 0; g < 4; ++g) {  // u[4g + m], lane k: column 4k + m, rows 4g .. 4g + 3
      const __m512d lo0 = _mm512_castps_pd(t[4 * g]), lo1 = _mm512_castps_pd(t[4 * g + 2]);
      const __m512d hi0 = _mm512_castps_pd(t[4 * g + 1]), hi1 = _mm512_castps_pd(t[4 * g + 3]);
      u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo0, lo1));
      u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo0, lo1));
      u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi0, hi1));
      u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi0, hi1));
    }
    for (int m = 0; m < 4; ++m) {  // gather lane k of the four row groups: column 4k + m
      const __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88),
                   w0 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
      const __m512 v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xdd),
                   w1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xdd);
      _mm512_storeu_ps(dst + m * ldd, _mm512_shuffle_f32x4(v0, w0, 0x88));
      _mm512_storeu_ps(dst + (8 + m) * ldd, _mm512_shuffle_f32x4(v0, w0, 0xdd));
      _mm512_storeu_ps(dst + (4 + m) * ldd, _mm512_shuffle_f32x4(v1, w1, 0x88));
      _mm512_storeu_ps(dst + (12 + m) * ldd, _mm512_shuffle_f32x4(v1, w1, 0xdd));
    }
  }
};

}  // namespace
}  // namespace ampkit::cpu
