// The tanh GELU and its derivative of the GEMM epilogue on 8 fp32 lanes with AVX2 + FMA (kernels
// layer, internal): the exp2 form of gelu_exp2_form.hpp, operation for operation as the AVX-512
// version (gelu_math_avx512.hpp; 2^n built from its exponent bits where that one uses vscalefps:
// both exact, e is normal), so both give the same bits. Included through gelu_rows.hpp by files
// compiled with AVX2 flags. Accuracy: docs/NUMERICS.md, "GELU".
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/math/gelu_exp2_form.hpp"

namespace ampkit::cpu::gemm_math {

/// min(max(x, lo), hi) that keeps NaN (as clamp_keep_nan_avx512).
static inline __m256 clamp_keep_nan_avx2(__m256 x, float lo, float hi) {
  return _mm256_max_ps(_mm256_set1_ps(lo), _mm256_min_ps(_mm256_set1_ps(hi), x));
}

/// e = 2^y, as gelu_exp2_avx512. 2^n = bits (n + 127) << 23 (|n| <= 120); a NaN y gives a NaN p,
/// so the garbage exponent of a NaN n does not matter.
static inline __m256 gelu_exp2_avx2(__m256 x, __m256 x2) {
  const __m256 slope = _mm256_fmadd_ps(_mm256_set1_ps(kGeluY3), x2, _mm256_set1_ps(kGeluY1));
  const __m256 y = clamp_keep_nan_avx2(_mm256_mul_ps(x, slope), -kGeluYClamp, kGeluYClamp);
  const __m256 n = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 f = _mm256_sub_ps(y, n);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kExp2P[6]), f, _mm256_set1_ps(kExp2P[5]));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2P[4]));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2P[3]));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2P[2]));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2P[1]));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2P[0]));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

/// gelu_tanh(x) = x / (1 + e).
static inline __m256 gelu_tanh_avx2(__m256 x) {
  const __m256 e = gelu_exp2_avx2(x, _mm256_mul_ps(x, x));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

/// gelu_tanh'(x) = s + (x k s)(e s), as gelu_tanh_derivative_avx512.
static inline __m256 gelu_tanh_derivative_avx2(__m256 x) {
  x = clamp_keep_nan_avx2(x, -kGeluDerivativeXClamp, kGeluDerivativeXClamp);
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 e = gelu_exp2_avx2(x, x2);
  const __m256 s = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  const __m256 k = _mm256_fmadd_ps(_mm256_set1_ps(kGeluK3), x2, _mm256_set1_ps(kGeluK1));
  const __m256 xks = _mm256_mul_ps(_mm256_mul_ps(x, k), s);
  return _mm256_fmadd_ps(xks, _mm256_mul_ps(e, s), s);
}

/// Lanes [0, n) of a tail (n < 8) as a mask for vmaskmovps.
static inline __m256i gelu_tail_mask_avx2(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// x[i] = gelu_tanh(x[i]) for i < n (8 lanes at a time, a masked tail).
static inline void gelu_tanh_rows_avx2(float* x, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, gelu_tanh_avx2(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = gelu_tail_mask_avx2(n - i);
    _mm256_maskstore_ps(x + i, m, gelu_tanh_avx2(_mm256_maskload_ps(x + i, m)));
  }
}

/// x[i] *= gelu_tanh_derivative(aux[i]) for i < n.
static inline void dgelu_tanh_rows_avx2(float* x, const float* aux, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), gelu_tanh_derivative_avx2(_mm256_loadu_ps(aux + i))));
  if (i < n) {
    const __m256i m = gelu_tail_mask_avx2(n - i);
    const __m256 d = gelu_tanh_derivative_avx2(_mm256_maskload_ps(aux + i, m));
    _mm256_maskstore_ps(x + i, m, _mm256_mul_ps(_mm256_maskload_ps(x + i, m), d));
  }
}

}  // namespace ampkit::cpu::gemm_math
