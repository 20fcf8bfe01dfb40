// The tanh GELU and GELU' of the GEMM epilogue over a contiguous run of fp32 values (kernels
// layer, internal), picked by the flags of the translation unit that includes it: every GEMM
// engine file (gemm_driver.hpp) is compiled with AVX2 or AVX-512 flags, and both give the same
// bits (the exp2 form, gelu_exp2_form.hpp). The erf form stays on gelu_math.hpp's scalar math.
#pragma once

#include <cstdint>

#if defined(__AVX512F__)
#include "cpu/math/gelu_math_avx512.hpp"
#elif defined(__AVX2__) && defined(__FMA__)
#include "cpu/math/gelu_math_avx2.hpp"
#else
#include "cpu/math/gelu_math.hpp"
#endif

namespace ampkit::cpu::gemm_math {

/// x[i] = gelu_tanh(x[i]) for i < n.
static inline void gelu_tanh_rows(float* x, std::int64_t n) {
#if defined(__AVX512F__)
  gelu_tanh_rows_avx512(x, n);
#elif defined(__AVX2__) && defined(__FMA__)
  gelu_tanh_rows_avx2(x, n);
#else
  for (std::int64_t i = 0; i < n; ++i) x[i] = gelu_tanh(x[i]);                // not the exp2 form's bits
#endif
}

/// x[i] *= gelu_tanh'(aux[i]) for i < n.
static inline void dgelu_tanh_rows(float* x, const float* aux, std::int64_t n) {
#if defined(__AVX512F__)
  dgelu_tanh_rows_avx512(x, aux, n);
#elif defined(__AVX2__) && defined(__FMA__)
  dgelu_tanh_rows_avx2(x, aux, n);
#else
  for (std::int64_t i = 0; i < n; ++i) x[i] *= gelu_tanh_derivative(aux[i]);  // not the exp2 form's bits
#endif
}

// One vector of the loops above, for the GEMM epilogue's single pass over a tile column (the
// same operations, so the same bits): gelu_tanh(x) and x * gelu_tanh'(aux).
#if defined(__AVX512F__)
static inline __m512 gelu_tanh_vec(__m512 x) { return gelu_tanh_avx512(x); }
static inline __m512 dgelu_tanh_vec(__m512 x, __m512 aux) {
  return _mm512_mul_ps(x, gelu_tanh_derivative_avx512(aux));
}
#elif defined(__AVX2__) && defined(__FMA__)
static inline __m256 gelu_tanh_vec(__m256 x) { return gelu_tanh_avx2(x); }
static inline __m256 dgelu_tanh_vec(__m256 x, __m256 aux) { return _mm256_mul_ps(x, gelu_tanh_derivative_avx2(aux)); }
#endif

}  // namespace ampkit::cpu::gemm_math
