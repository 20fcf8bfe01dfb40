// GELU and its derivative in double for the references (kernels layer): the epilogue of
// gemm_reference (what AMPKIT_ISA=ref runs) and gelu_reference, the last entry of gelu_kernels().
// One definition so the two references cannot drift apart; the fast fp32 forms are in
// gelu_math.hpp and gelu_exp2_form.hpp.
//   tanh form: u = sqrt(2/pi) (x + 0.044715 x^3), s = (1 + tanh u)/2 = 1 / (1 + e^(-2u)),
//              gelu = x s, gelu' = s + 2 x s (1 - s) u', u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
//              s and 1 - s come from e = e^(-2|u|) <= 1 (s = 1/(1 + e) or e/(1 + e)): no
//              cancellation on either tail (1 + tanh u cancels for u < 0: -0 from x ~ -7.2 on).
//   erf form:  gelu = x Phi(x), gelu' = Phi(x) + x phi(x), Phi from erfc (small on its side).
#pragma once

#include <cmath>

#include "ampkit/ops/gemm.hpp"

namespace ampkit::cpu::gelu_reference_math {

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubic = 0.044715;
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

/// s = 1 / (1 + e^(-2u)) and 1 - s, each without cancellation.
struct Sigmoid2u {
  double s, one_minus_s;
};
inline Sigmoid2u sigmoid_2u(double u) {
  const double e = std::exp(-2.0 * std::fabs(u));  // in [0, 1]
  const double r = 1.0 / (1.0 + e);
  if (u >= 0.0) return {r, e * r};
  return {e * r, r};
}

inline double tanh_argument(double x) { return kSqrt2OverPi * (x + kCubic * x * x * x); }

inline double gelu(GeluVariant variant, double x) {
  if (variant == GeluVariant::tanh) return x * sigmoid_2u(tanh_argument(x)).s;
  return 0.5 * x * std::erfc(-x * kInvSqrt2);
}

inline double gelu_derivative(GeluVariant variant, double x) {
  if (variant == GeluVariant::tanh) {
    if (std::fabs(x) > 30.0) return x > 0.0 ? 1.0 : 0.0;  // x^3 stays finite; exact to double there
    const Sigmoid2u sg = sigmoid_2u(tanh_argument(x));
    return sg.s + 2.0 * x * sg.s * sg.one_minus_s * kSqrt2OverPi * (1.0 + 3.0 * kCubic * x * x);
  }
  return 0.5 * std::erfc(-x * kInvSqrt2) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
}

}  // namespace ampkit::cpu::gelu_reference_math
