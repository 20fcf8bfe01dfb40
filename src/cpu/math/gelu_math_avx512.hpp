// The tanh GELU and its derivative of the GEMM epilogue on 16 fp32 lanes with AVX-512 (kernels
// layer, internal): the exp2 form of gelu_exp2_form.hpp, operation for operation as the AVX2
// version (gelu_math_avx2.hpp), so both give the same bits. Included through gelu_rows.hpp by
// files compiled with AVX-512 flags; static inline, so every such file keeps its own copy.
// Accuracy: docs/NUMERICS.md, "GELU", enforced by tests/cpu/gemm/gemm_gelu_epilogue_test.cpp.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/math/gelu_exp2_form.hpp"

namespace ampkit::cpu::gemm_math {

/// min(max(x, lo), hi) that keeps NaN (the second operand of vminps/vmaxps is returned when
/// either is NaN).
static inline __m512 clamp_keep_nan_avx512(__m512 x, float lo, float hi) {
  return _mm512_max_ps(_mm512_set1_ps(lo), _mm512_min_ps(_mm512_set1_ps(hi), x));
}

/// e = 2^y with y = -2u log2(e) (gelu_exp2_form.hpp): y clamped, n = nearest integer (vrndscaleps),
/// f = y - n (exact), 2^f by the degree-6 polynomial, p 2^n by vscalefps (exact: e is normal).
static inline __m512 gelu_exp2_avx512(__m512 x, __m512 x2) {
  const __m512 slope = _mm512_fmadd_ps(_mm512_set1_ps(kGeluY3), x2, _mm512_set1_ps(kGeluY1));
  const __m512 y = clamp_keep_nan_avx512(_mm512_mul_ps(x, slope), -kGeluYClamp, kGeluYClamp);
  const __m512 n = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(y, n);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kExp2P[6]), f, _mm512_set1_ps(kExp2P[5]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2P[4]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2P[3]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2P[2]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2P[1]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2P[0]));
  return _mm512_scalef_ps(p, n);
}

/// gelu_tanh(x) = x / (1 + e).
static inline __m512 gelu_tanh_avx512(__m512 x) {
  const __m512 e = gelu_exp2_avx512(x, _mm512_mul_ps(x, x));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

/// gelu_tanh'(x) = s + (x k s)(e s), s = 1 / (1 + e), k = 2u' = K1 + K3 x^2; x clamped to
/// [-20, 20] (NaN kept) so that x k stays finite.
static inline __m512 gelu_tanh_derivative_avx512(__m512 x) {
  x = clamp_keep_nan_avx512(x, -kGeluDerivativeXClamp, kGeluDerivativeXClamp);
  const __m512 x2 = _mm512_mul_ps(x, x);
  const __m512 e = gelu_exp2_avx512(x, x2);
  const __m512 s = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  const __m512 k = _mm512_fmadd_ps(_mm512_set1_ps(kGeluK3), x2, _mm512_set1_ps(kGeluK1));
  const __m512 xks = _mm512_mul_ps(_mm512_mul_ps(x, k), s);
  return _mm512_fmadd_ps(xks, _mm512_mul_ps(e, s), s);
}

/// x[i] = gelu_tanh(x[i]) for i < n (16 lanes at a time, a masked tail).
static inline void gelu_tanh_rows_avx512(float* x, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, gelu_tanh_avx512(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(x + i, m, gelu_tanh_avx512(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

/// x[i] *= gelu_tanh_derivative(aux[i]) for i < n.
static inline void dgelu_tanh_rows_avx512(float* x, const float* aux, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(x + i,
                     _mm512_mul_ps(_mm512_loadu_ps(x + i), gelu_tanh_derivative_avx512(_mm512_loadu_ps(aux + i))));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512 d = gelu_tanh_derivative_avx512(_mm512_maskz_loadu_ps(m, aux + i));
    _mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), d));
  }
}

}  // namespace ampkit::cpu::gemm_math
