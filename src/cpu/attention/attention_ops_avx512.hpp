// The attention kernels' additions to the AVX-512 vocabulary (kernels layer, internal): the
// register-tile sizes and f32/bf16/f16 rows widened into / rounded out of f32 scratch, on top of
// Avx512Ops (src/cpu/simd/simd_avx512.hpp: arithmetic, exp, fixed-order lane sums). The `Ops`
// argument of attention_tiles.hpp, attention_forward_impl.hpp and attention_backward_impl.hpp.
// Include only from attention_*_avx512.cpp; everything has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

struct AttentionAvx512Ops : Avx512Ops {
  // Score tile: 4 query rows x 4 vectors of keys (16 accumulators, 4 loads + 4 broadcasts per
  // step of the head_dim reduction). Weighted-sum tile: 8 output rows x 2 vectors of columns.
  static constexpr int kScoreRows = 4, kScoreVecs = 4;
  static constexpr int kSumRows = 8, kSumVecs = 2;

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
