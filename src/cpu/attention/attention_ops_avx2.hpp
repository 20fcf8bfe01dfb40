// The attention kernels' additions to the AVX2 vocabulary (kernels layer, internal): the
// register-tile sizes for 16 ymm registers and f32/bf16/f16 rows widened into / rounded out of
// f32 scratch (tails through a small buffer), on top of Avx2Ops (src/cpu/simd/simd_avx2.hpp). The
// `Ops` argument of attention_tiles.hpp, attention_forward_impl.hpp and
// attention_backward_impl.hpp. Include only from attention_*_avx2.cpp; internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {
namespace {

struct AttentionAvx2Ops : Avx2Ops {
  // Score tile: 4 query rows x 2 vectors of keys; weighted-sum tile: 4 output rows x 2 vectors
  // of columns (8 accumulators each, within the 16 registers).
  static constexpr int kScoreRows = 4, kScoreVecs = 2;
  static constexpr int kSumRows = 4, kSumVecs = 2;

  /// dst: [rows, ldd] f32; row r = elements [offset + r stride, + n) of base (dtype T) widened,
  /// lanes n .. round_up(n, 16) zero (the scratch rows are padded to 16 floats).
  template <DType T>
  static void load_rows(const void* base, std::int64_t offset, std::int64_t stride, std::int64_t rows, std::int64_t n,
                        float* __restrict dst, std::int64_t ldd) {
    const std::int64_t full = n / kLanes * kLanes, end = (n + 15) / 16 * 16;
    for (std::int64_t r = 0; r < rows; ++r, offset += stride, dst += ldd) {
      for (std::int64_t c = 0; c < full; c += kLanes) _mm256_storeu_ps(dst + c, simd256::load<T>(base, offset + c));
      std::int64_t c = full;
      if (c < n) {
        _mm256_storeu_ps(dst + c, simd256::load_partial<T>(base, offset + c, n - c));
        c += kLanes;
      }
      for (; c < end; c += kLanes) _mm256_storeu_ps(dst + c, _mm256_setzero_ps());
    }
  }
  /// Row r of base (dtype T, elements [offset + r stride, + n)) = scale[r * scale_step] * src row
  /// r (accumulating: old + that), fp32 math, rounded once. src: [rows, lds].
  template <DType T>
  static void store_rows(void* base, std::int64_t offset, std::int64_t stride, std::int64_t rows, std::int64_t n,
                         const float* __restrict src, std::int64_t lds, const float* scale, std::int64_t scale_step,
                         bool accumulate) {
    for (std::int64_t r = 0; r < rows; ++r, offset += stride, src += lds) {
      const __m256 s = _mm256_set1_ps(scale[r * scale_step]);
      for (std::int64_t c = 0; c < n; c += kLanes) {
        const std::int64_t count = n - c < kLanes ? n - c : kLanes;
        __m256 v = _mm256_mul_ps(s, _mm256_loadu_ps(src + c));
        if (count == kLanes) {
          if (accumulate) v = _mm256_add_ps(simd256::load<T>(base, offset + c), v);
          simd256::store<T>(base, offset + c, v);
        } else {
          if (accumulate) v = _mm256_add_ps(simd256::load_partial<T>(base, offset + c, count), v);
          simd256::store_partial<T>(base, offset + c, v, count);
        }
      }
    }
  }
  /// dst[c, r] = src[r, c] for an 8 x 8 block (src rows at lds, dst rows at ldd).
  [[gnu::always_inline]] static void transpose_block(const float* __restrict src, std::int64_t lds,
                                                     float* __restrict dst, std::int64_t ldd) {
    __m256 t[8], u[8];
    for (int k = 0; k < 4; ++k) {  // per 128-bit lane: rows 2k, 2k+1 interleaved
      const __m256 a = _mm256_loadu_ps(src + 2 * k * lds), b = _mm256_loadu_ps(src + (2 * k + 1) * lds);
      t[2 * k] = _mm256_unpacklo_ps(a, b);
      t[2 * k + 1] = _mm256_unpackhi_ps(a, b);
    }
    for (int g = 0; g < 2; ++g) {  // u[4g + m], lane k: column 4k + m, rows 4g .. 4g + 3
      const __m256d lo0 = _mm256_castps_pd(t[4 * g]), lo1 = _mm256_castps_pd(t[4 * g + 2]);
      const __m256d hi0 = _mm256_castps_pd(t[4 * g + 1]), hi1 = _mm256_castps_pd(t[4 * g + 3]);
      u[4 * g] = _mm256_castpd_ps(_mm256_unpacklo_pd(lo0, lo1));
      u[4 * g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(lo0, lo1));
      u[4 * g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(hi0, hi1));
      u[4 * g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(hi0, hi1));
    }
    for (int m = 0; m < 4; ++m) {  // column m: lane 0 of both row groups; column 4 + m: lane 1
      _mm256_storeu_ps(dst + m * ldd, _mm256_permute2f128_ps(u[m], u[4 + m], 0x20));
      _mm256_storeu_ps(dst + (4 + m) * ldd, _mm256_permute2f128_ps(u[m], u[4 + m], 0x31));
    }
  }
};

}  // namespace
}  // namespace ampkit::cpu
