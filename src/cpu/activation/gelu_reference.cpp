// GELU reference (kernels layer): plain loops, double math (std::tanh, std::erf, std::exp), one
// rounding per output. The last entry of gelu_kernels(); the tests compare gelu_cpu with it.
//   tanh form: gelu = x/2 (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3)
//              gelu' = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
//   erf form:  gelu = x Phi(x), gelu' = Phi(x) + x phi(x)
#include <cmath>

#include "cpu/elementwise/element_io.hpp"
#include "ops/activation/activation_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubic = 0.044715;
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

double gelu(GeluVariant variant, double x) {
  if (variant == GeluVariant::tanh) return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  return 0.5 * x * std::erfc(-x * kInvSqrt2);
}

double gelu_derivative(GeluVariant variant, double x) {
  if (variant == GeluVariant::tanh) {
    if (std::fabs(x) > 30.0) return x > 0.0 ? 1.0 : 0.0;  // x^3 stays finite; tanh is saturated
    const double t = std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * kCubic * x * x);
  }
  return 0.5 * std::erfc(-x * kInvSqrt2) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
}

}  // namespace

void gelu_reference(const ops::GeluProblem& p) {
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const void* x = row_address(p.x, p.x_dtype, p.x_row_stride, r);
    void* out = row_address(p.out, p.out_dtype, p.out_row_stride, r);
    const void* dy = p.backward ? row_address(p.dy, p.dy_dtype, p.dy_row_stride, r) : nullptr;
    for (std::int64_t j = 0; j < p.n; ++j) {
      const double xv = load_element(x, p.x_dtype, j);
      const double v =
          p.backward ? double{load_element(dy, p.dy_dtype, j)} * gelu_derivative(p.variant, xv) : gelu(p.variant, xv);
      store_double(out, p.out_dtype, j, v);
    }
  }
}

}  // namespace ampkit::cpu
