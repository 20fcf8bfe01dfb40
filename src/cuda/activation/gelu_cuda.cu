// GELU forward and backward on CUDA (CUDA layer): y = gelu(x), dx = dy * gelu'(x), both variants,
// fp32 math with the accurate library functions (expf, erfcf: this pass is not the GEMM
// epilogue, so it need not run at memory speed) in the CPU's cancellation-free forms, one
// rounding per output. One thread an
// element over a grid-stride loop. Entry of gelu_cuda_kernel_list.cpp; the CPU reference
// (gelu_reference.cpp) is the yardstick of the tests.
#include <cstdint>

#include "cuda/activation/gelu_cuda.hpp"
#include "cuda/common/element_cuda.cuh"
#include "cuda/common/grid_cuda.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"
#include "ops/activation/gelu_scalar.hpp"

namespace ampkit::cuda {
namespace {

namespace gs = ops::gelu_scalar;  // the formula shared with the CPU backend

// The accurate library functions handed to the shared formula.
struct ExpAccurate {
  __device__ float operator()(float v) const { return expf(v); }
};
struct ErfcAccurate {
  __device__ float operator()(float v) const { return erfcf(v); }
};

// tanh form: x sigmoid(2u) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3) (no
// cancellation; exact limits); erf form: 0.5 x erfc(-x / sqrt(2)).
__device__ float gelu_value(float x, GeluVariant v) {
  if (v == GeluVariant::tanh) {
    const float u2 = gs::tanh_arg2(x);
    return x / (1.0f + expf(-u2));
  }
  return gs::erf_value(x, ErfcAccurate{});
}

// tanh form, without cancellation where sigmoid(2u) is close to 1 (the CPU's derivation,
// src/cpu/math/gelu_math.hpp): s + 2 x s (1 - s) u'(x), s = sigmoid(2u) = 1 / (1 + e),
// e = e^(-2u), 1 - s = e s, u' = sqrt(2/pi) (1 + 3 0.044715 x^2); x clamped to [-20, 20], where
// the result is already exactly 1 or 0, so that x^2 cannot overflow into Inf * 0 (NaN passes).
// erf form: 0.5 erfc(-x / sqrt(2)) + x exp(-x^2 / 2) / sqrt(2 pi).
__device__ float gelu_slope(float x, GeluVariant v) {
  if (v == GeluVariant::tanh) return gs::tanh_derivative(x, ExpAccurate{});
  return gs::erf_derivative(x, ErfcAccurate{}, ExpAccurate{});
}

__global__ void gelu_kernel(ops::GeluProblem p) {
  const std::int64_t total = p.rows * p.n;
  for (std::int64_t e = flat_index(); e < total; e += flat_stride()) {
    const std::int64_t r = e / p.n, c = e - r * p.n;
    const float x = load_as_float(p.x, p.x_dtype, r * p.x_row_stride + c);
    const float y = p.backward ? load_as_float(p.dy, p.dy_dtype, r * p.dy_row_stride + c) * gelu_slope(x, p.variant)
                               : gelu_value(x, p.variant);
    store_from_float(p.out, p.out_dtype, r * p.out_row_stride + c, y);
  }
}

}  // namespace

void gelu_cuda(const ops::GeluProblem& p) {
  const char* fn = p.backward ? "gelu_backward" : "gelu_forward";
  if (p.rows == 0 || p.n == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  gelu_kernel<<<flat_blocks(p.rows * p.n), kFlatThreads, 0, ctx.stream>>>(p);
  check_launch(fn, "the GELU kernel");
}

}  // namespace ampkit::cuda
