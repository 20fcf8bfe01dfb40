// GELU reference (kernels layer): plain loops, double math (cpu/math/gelu_reference_math.hpp, the
// functions gemm_reference's epilogue uses too: the tanh form without cancellation on either
// tail), one rounding per output. The last entry of gelu_kernels(); the tests compare gelu_cpu
// with it.
#include <cmath>

#include "cpu/activation/activation_kernels.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/math/gelu_reference_math.hpp"

namespace ampkit::cpu {
void gelu_reference(const ops::GeluProblem& p) {
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const void* x = row_address(p.x, p.x_dtype, p.x_row_stride, r);
    void* out = row_address(p.out, p.out_dtype, p.out_row_stride, r);
    const void* dy = p.backward ? row_address(p.dy, p.dy_dtype, p.dy_row_stride, r) : nullptr;
    for (std::int64_t j = 0; j < p.n; ++j) {
      const double xv = load_element(x, p.x_dtype, j);
      const double v =
          p.backward ? double{load_element(dy, p.dy_dtype, j)} * gelu_reference_math::gelu_derivative(p.variant, xv)
                     : gelu_reference_math::gelu(p.variant, xv);
      store_double(out, p.out_dtype, j, v);
    }
  }
}

}  // namespace ampkit::cpu
