// The 1x1 convolution as a GEMM (kernels layer): a 1x1 filter with stride 1, no padding and one
// group reads every input pixel once, so the convolution is exactly a matrix product on the
// tensors as they lie in memory — no im2col, nothing packed here: the blocked GEMM engines
// (AVX2, AVX-512, AVX512_BF16, AMX; src/cpu/gemm) pack their panels themselves, run the fp16
// mode (flush / alt) and count the f16 subnormals as for any GEMM, deterministically.
//   NHWC: y [NPQ, K] = x [NHW, C] w^T; dx [NHW, C] = dy [NPQ, K] w; dw [K, C] = dy^T x.
//   NCHW, one image: y [K, PQ] = w [K, C] x [C, HW]; dx = w^T dy; dw = dy x^T (several images
//         would be one product each: w's subnormals counted per image, dw rounded per image, so
//         they stay on the direct kernel).
// In the GEMM's column-major terms a row-major [rows, cols] matrix is cols x rows with ld cols.
#include <cstdint>

#include "ampkit/ops/gemm.hpp"
#include "cpu/conv2d/conv2d_kernels.hpp"

namespace ampkit::cpu {
namespace {

// D (m x n, col-major, ld m) = op(A) op(B) (+ D when accumulate), A and B of the activation dtype.
void product(const ops::Conv2dProblem& p, Op op_a, const void* a, std::int64_t lda, Op op_b, const void* b,
             std::int64_t ldb, std::int64_t m, std::int64_t n, std::int64_t k, void* d, DType d_dtype, bool accumulate,
             const void* bias, ops::Conv2dCounters& counters) {
  GemmArgs g;
  g.op_a = op_a, g.op_b = op_b;
  g.m = m, g.n = n, g.k = k;
  g.a = a, g.a_dtype = p.dtype, g.lda = lda;
  g.b = b, g.b_dtype = p.dtype, g.ldb = ldb;
  g.d = d, g.d_dtype = d_dtype, g.ldd = m;
  if (accumulate) {
    g.beta = 1.0f;
    g.c = d, g.c_dtype = d_dtype, g.ldc = m;
  }
  if (bias != nullptr) {
    g.epilogue.kind = Epilogue::BIAS;
    g.epilogue.bias = bias;
    g.epilogue.bias_dtype = p.bias_dtype;
  }
  g.fp16_mode = p.fp16_mode;
  GemmReport report;
  gemm(g, &report);
  counters.fp16_subnormal_inputs += report.fp16_subnormal_inputs;
  counters.fp16_subnormal_outputs += report.fp16_subnormal_outputs;
}

}  // namespace

void conv2d_1x1_gemm(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  const std::int64_t c = p.c, k = p.k, hw = p.h * p.w, nhw = p.n * hw;
  const DType t = p.dtype;
  const bool nhwc = p.layout == ConvLayout::nhwc;
  if (p.pass == ops::Conv2dPass::forward) {
    if (nhwc) {
      product(p, Op::T, p.wt, c, Op::N, p.x, c, k, nhw, c, p.y, t, false, p.bias, counters);
    } else {
      // One image (declines() sees to it): y^T (PQ x K col-major) = x^T w^T.
      product(p, Op::N, p.x, hw, Op::N, p.wt, c, hw, k, c, p.y, t, false, nullptr, counters);
    }
    return;
  }
  if (p.pass == ops::Conv2dPass::backward_data) {
    if (nhwc) {
      product(p, Op::N, p.wt, c, Op::N, p.dy, k, c, nhw, k, p.dx, t, false, nullptr, counters);
    } else {
      // One image: dx^T (HW x C) = dy^T w.
      product(p, Op::N, p.dy, hw, Op::T, p.wt, c, hw, c, k, p.dx, t, false, nullptr, counters);
    }
    return;
  }
  if (p.dw != nullptr && nhwc)  // dw (C x K col-major = row-major [K, C]) = x^T dy over the NHW pixels
    product(p, Op::N, p.x, c, Op::T, p.dy, k, c, k, nhw, p.dw, p.dw_dtype, p.accumulate, nullptr, counters);
  else if (p.dw != nullptr)  // one image (declines() sees to it): dw = x_0 [C, HW] dy_0^T
    product(p, Op::T, p.x, hw, Op::N, p.dy, hw, c, k, hw, p.dw, p.dw_dtype, p.accumulate, nullptr, counters);
  if (p.dbias != nullptr) conv2d_bias_gradient(p);
}

// Takes 1x1 filters with stride 1, no padding, one group, NHWC (any batch) or NCHW with one image
// and no forward bias (NCHW's bias runs along the GEMM's columns); the rest stays on the direct
// kernel.
const char* conv2d_1x1_gemm_declines(const ops::Conv2dProblem& p) {
  if (p.r != 1 || p.s != 1) return "only 1x1 filters";
  if (p.stride_h != 1 || p.stride_w != 1 || p.pad_h != 0 || p.pad_w != 0) return "only stride 1 without padding";
  if (p.groups != 1) return "only one group";
  if (p.layout == ConvLayout::nchw && p.n > 1) return "NCHW over several images (one product per image)";
  if (p.layout == ConvLayout::nchw && p.pass == ops::Conv2dPass::forward && p.bias != nullptr)
    return "NCHW with a bias (the GEMM's bias runs along the other dimension)";
  return nullptr;
}

}  // namespace ampkit::cpu
