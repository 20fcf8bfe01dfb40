// The tanh GELU and its derivative on 16 fp32 lanes with AVX-512 (kernels layer, internal):
// gelu_math.hpp's formulas, written with vector instructions so that the exponential needs no
// clamp-and-rebuild of 2^n (vrndscaleps + vscalefps), about 20 instead of 30 instructions a
// vector. Included only by files compiled with AVX-512 flags (the AMX GEMM engine's epilogue);
// static inline, so every such file keeps its own copy. Accuracy: docs/NUMERICS.md, "GELU",
// enforced by tests/cpu/gemm/gemm_amx_test.cpp through the GEMM epilogue.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/math/gelu_math.hpp"

namespace ampkit::cpu::gemm_math {

/// min(max(x, lo), hi) that keeps NaN (the second operand of vminps/vmaxps is returned when
/// either is NaN).
static inline __m512 clamp_keep_nan_avx512(__m512 x, float lo, float hi) {
  return _mm512_max_ps(_mm512_set1_ps(lo), _mm512_min_ps(_mm512_set1_ps(hi), x));
}

/// e^x: x clamped to [-104, 89] (NaN kept), n = nearest integer to x log2(e), r = x - n ln2
/// (Cody-Waite, the same split of ln2 as exp_f32), e^r by the same degree-7 Taylor polynomial,
/// then p 2^n by vscalefps: one rounding, also where the result is subnormal. <= 2 ulp.
static inline __m512 exp_avx512(__m512 x) {
  x = clamp_keep_nan_avx512(x, -104.0f, 89.0f);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);  // ln2 high part: n * hi exact
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);      // ln2 low part
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.0f / 5040.0f), r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

/// The argument of e^(-2u) clamped to [-87, 87] (NaN kept), so that e and 1 / (1 + e) stay
/// normal: a subnormal result costs a microcode assist of ~100 cycles per instruction on Intel
/// cores (GEMM outputs beyond |x| ~ 10 made the epilogue 5x slower). Exact where it matters:
/// below e^-87 ~ 1.6e-38, 1 + e == 1; above e^87 the results are below 2^-100 in magnitude and
/// change by less than that (docs/NUMERICS.md).
static inline __m512 gelu_exp_argument_avx512(__m512 minus_u2) {
  return clamp_keep_nan_avx512(minus_u2, -87.0f, 87.0f);
}

/// gelu_tanh(x) = x / (1 + e^(-2u)), 2u = 2 sqrt(2/pi) x (1 + 0.044715 x^2).
static inline __m512 gelu_tanh_avx512(__m512 x) {
  const __m512 inner = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(kGeluCubic), x), x, _mm512_set1_ps(1.0f));
  const __m512 minus_u2 = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(-2.0f * kSqrt2OverPi), x), inner);
  const __m512 e = exp_avx512(gelu_exp_argument_avx512(minus_u2));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

/// gelu_tanh_derivative(x) = s + 2 x s (1 - s) u', s = 1 / (1 + e), e = e^(-2u), 1 - s = e s
/// (1 where e = Inf), u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2); x clamped to [-20, 20] (NaN kept).
static inline __m512 gelu_tanh_derivative_avx512(__m512 x) {
  x = clamp_keep_nan_avx512(x, -20.0f, 20.0f);
  const __m512 x2 = _mm512_mul_ps(x, x);
  const __m512 inner = _mm512_fmadd_ps(_mm512_set1_ps(kGeluCubic), x2, _mm512_set1_ps(1.0f));
  const __m512 e = exp_avx512(
      gelu_exp_argument_avx512(_mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(-2.0f * kSqrt2OverPi), x), inner)));
  const __m512 s = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  const __mmask16 finite_e = _mm512_cmp_ps_mask(e, _mm512_set1_ps(1e30f), _CMP_LT_OQ);
  const __m512 one_minus_s = _mm512_mask_mul_ps(_mm512_set1_ps(1.0f), finite_e, e, s);
  const __m512 du = _mm512_mul_ps(_mm512_set1_ps(kSqrt2OverPi),
                                  _mm512_fmadd_ps(_mm512_set1_ps(3.0f * kGeluCubic), x2, _mm512_set1_ps(1.0f)));
  const __m512 two_x_s = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(2.0f), x), s);
  return _mm512_fmadd_ps(_mm512_mul_ps(two_x_s, one_minus_s), du, s);
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
