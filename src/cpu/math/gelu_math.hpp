// Scalar fp32 math of the GEMM epilogue: exp, GELU and their derivatives (kernels layer,
// internal; the fp16 modes' scalar math is cpu/math/fp16_mode_math.hpp).
// Branch-free and static inline so that each ISA translation unit's `#pragma omp simd` loops
// vectorize them with that ISA's instructions (and keep their own copy: no shared weak symbol).
// Used by gemm_driver.hpp (every engine); the reference uses double-precision std:: math instead.
// Accuracy (measured by gemm_math_test.cpp, documented in docs/NUMERICS.md): exp_f32 <= 2 ulp;
// gelu within 8 * 2^-24 * |x|, gelu' within 8 * 2^-24 (measured maxima 3.5 and 4.3).
#pragma once

#include <bit>
#include <cstdint>

#include "ops/activation/gelu_scalar.hpp"

namespace ampkit::cpu::gemm_math {

// ---- exp, GELU and their derivatives in fp32 ----

/// e^x: x = n ln2 + r (|r| <= ln2/2, Cody-Waite split of ln2), e^r by its degree-7 Taylor
/// polynomial (truncation < 2^-27 relative), 2^n applied in two exact power-of-two steps so
/// results in the subnormal range round once. Overflows to +Inf, underflows to 0, NaN -> NaN.
static inline float exp_f32(float x) {
  x = x < -104.0f ? -104.0f : x;  // comparisons keep NaN
  x = x > 89.0f ? 89.0f : x;
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = x * 1.44269504088896341f + kShifter;
  const float n = t - kShifter;
  const std::int32_t ni =
      static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(t) - std::bit_cast<std::uint32_t>(kShifter));
  float r = x - n * 0.693359375f;  // ln2 high part (9 bits: n * hi is exact)
  r = r - n * -2.12194440e-4f;     // ln2 low part
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t n1 = ni >> 1, n2 = ni - n1;  // each in [-75, 65]
  const float s1 = std::bit_cast<float>(static_cast<std::uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<std::uint32_t>(n2 + 127) << 23);
  return p * s1 * s2;
}

// The constants and the shared parts of the formula: ops/activation/gelu_scalar.hpp (CUDA too).
using ops::gelu_scalar::kGeluCubic;
using ops::gelu_scalar::kInvSqrt2;
using ops::gelu_scalar::kInvSqrt2Pi;
using ops::gelu_scalar::kSqrt2OverPi;

/// sigmoid(2u) = 0.5 (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3), computed as
/// 1 / (1 + e^(-2u)): no cancellation, exact limits 0 and 1.
static inline float gelu_tanh_gate(float x) {
  const float u2 = ops::gelu_scalar::tanh_arg2(x);
  return 1.0f / (1.0f + exp_f32(-u2));
}

/// erfc(z) for z >= 0 (Numerical Recipes' erfcc Chebyshev fit, relative error < 1.2e-7
/// before fp32 rounding): t = 1/(1 + z/2), erfc = t exp(-z^2 + P(t)).
static inline float erfc_nonnegative(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  return t * exp_f32(-z * z + p);
}

/// Phi(x) = 0.5 (1 + erf(x / sqrt 2)), the normal CDF, from erfc on the side where it is small.
static inline float gelu_erf_gate(float x) {
  const float z = (x < 0.0f ? -x : x) * kInvSqrt2;
  const float half_erfc = 0.5f * erfc_nonnegative(z);
  return x < 0.0f ? half_erfc : 1.0f - half_erfc;
}

/// gelu(x), tanh form: x * sigmoid(2u).
static inline float gelu_tanh(float x) { return x * gelu_tanh_gate(x); }
/// gelu(x), erf form: x * Phi(x).
static inline float gelu_erf(float x) { return x * gelu_erf_gate(x); }

/// d/dx gelu_tanh = s + 2 x s (1 - s) u'(x), s = sigmoid(2u), u' = sqrt(2/pi)(1 + 3 * 0.044715 x^2),
/// with 1 - s = e s (e = e^(-2u)): gelu_scalar::tanh_derivative (shared with CUDA) with exp_f32.
static inline float gelu_tanh_derivative(float x) {
  return ops::gelu_scalar::tanh_derivative(x, [](float v) { return exp_f32(v); });
}

/// d/dx gelu_erf = Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi).
static inline float gelu_erf_derivative(float x) { return gelu_erf_gate(x) + x * kInvSqrt2Pi * exp_f32(-0.5f * x * x); }

/// relu(x) = max(x, 0); NaN propagates.
static inline float relu(float x) { return x < 0.0f ? 0.0f : x; }
/// relu'(aux) applied to x: x where aux > 0, else 0.
static inline float relu_gate(float x, float aux) { return aux > 0.0f ? x : 0.0f; }

}  // namespace ampkit::cpu::gemm_math
