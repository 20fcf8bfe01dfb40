// The fp32 GELU scalar formula shared by the CPU and CUDA backends (ops layer, internal): the
// constants, the tanh form's argument 2u and slope u', the cancellation-free tanh derivative
// s + 2 x s (1 - s) u', and the erf form's value and derivative. Each backend hands in its own
// elementary functions (CPU: gemm_math::exp_f32; CUDA: expf, erfcf), so one expression gives
// each backend the bits it always gave. AMPKIT_HOST_DEVICE (core/host_device.hpp) is
// `__host__ __device__` under nvcc and empty for the host compiler; static inline, so each ISA
// file keeps its own copy.
// Used by src/cpu/math/gelu_math.hpp and src/cuda/{activation,gemm}. The double reference of
// the tests is src/cpu/math/gelu_reference_math.hpp.
#pragma once

#include "core/host_device.hpp"

namespace ampkit::ops::gelu_scalar {

constexpr float kSqrt2OverPi = 0.797884560802865f;  // sqrt(2/pi)
constexpr float kGeluCubic = 0.044715f;
constexpr float kInvSqrt2 = 0.707106781186547f;
constexpr float kInvSqrt2Pi = 0.398942280401433f;  // 1/sqrt(2 pi)

/// 2u, u = sqrt(2/pi) (x + 0.044715 x^3): the tanh form's gate is sigmoid(2u) = 1 / (1 + e^(-2u)).
AMPKIT_HOST_DEVICE static inline float tanh_arg2(float x) {
  return 2.0f * kSqrt2OverPi * x * (1.0f + kGeluCubic * x * x);
}

/// u'(x) = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
AMPKIT_HOST_DEVICE static inline float tanh_arg_slope(float x) {
  return kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
}

/// d/dx gelu_tanh = s + 2 x s (1 - s) u'(x), s = sigmoid(2u) = 1 / (1 + e), e = exp(-2u), with
/// 1 - s = e s so that no cancellation happens where s is close to 1. Beyond |x| = 20 the result
/// is exactly 1 (x > 0) or 0 in fp32; x is clamped there so that x^2 cannot overflow into
/// Inf * 0 (NaN still propagates through the comparisons). e = Inf: s = 0, 1 - s = 1.
template <class Exp>
AMPKIT_HOST_DEVICE static inline float tanh_derivative(float x, Exp exp) {
  x = x > 20.0f ? 20.0f : x;
  x = x < -20.0f ? -20.0f : x;
  const float u2 = tanh_arg2(x);
  const float e = exp(-u2);
  const float s = 1.0f / (1.0f + e);
  const float one_minus_s = e < 1e30f ? e * s : 1.0f;
  const float du = tanh_arg_slope(x);
  return s + 2.0f * x * s * one_minus_s * du;
}

/// gelu(x), erf form, from erfc: 0.5 x erfc(-x / sqrt 2).
template <class Erfc>
AMPKIT_HOST_DEVICE static inline float erf_value(float x, Erfc erfc) {
  return 0.5f * x * erfc(-x * kInvSqrt2);
}

/// d/dx gelu_erf, from erfc and exp: 0.5 erfc(-x / sqrt 2) + x e^(-x^2/2) / sqrt(2 pi).
template <class Erfc, class Exp>
AMPKIT_HOST_DEVICE static inline float erf_derivative(float x, Erfc erfc, Exp exp) {
  return 0.5f * erfc(-x * kInvSqrt2) + x * exp(-0.5f * x * x) * kInvSqrt2Pi;
}

}  // namespace ampkit::ops::gelu_scalar
