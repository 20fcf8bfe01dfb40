// The GEMM reference (kernels layer): plain loops, double accumulation of the products of the
// operands as the fp16 mode sees them (bias-gradient sums: the operands as given), the epilogue
// in double, one rounding to each output.
// Last entry of the kernel list (gemm_kernels()), and the yardstick of every GEMM test.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ampkit/core/float16.hpp"
#include "core/element.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_output.hpp"
#include "cpu/math/fp16_mode_math.hpp"
#include "cpu/math/gelu_math.hpp"
#include "cpu/math/gelu_reference_math.hpp"

namespace ampkit::cpu {
namespace {

// An operand element as the mode sees it: f16 subnormals counted; flushed (flush) or every f16
// value rounded to bf16 (alt).
double operand(const ops::GemmProblem& p, const void* base, DType t, std::int64_t i, ops::GemmCounters& counters) {
  float v = static_cast<float>(load_element(base, t, i));
  if (t != DType::f16) return v;
  const bool sub = gemm_math::is_f16_subnormal_input(v);
  if (sub) ++counters.fp16_subnormal_inputs;
  return gemm_math::fp16_mode_value(v, sub, p.flush, p.alt);
}

}  // namespace

// opA: [m, k] (row i contiguous over k), opB: [n, k] (column j contiguous over k), in double.
void gemm_reference(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  const GemmArgs& a = p.args;
  const GemmEpilogue& e = a.epilogue;
  const std::int64_t m = a.m, n = a.n, k = a.k;
  std::vector<double> op_a(static_cast<std::size_t>(m * k)), op_b(static_cast<std::size_t>(n * k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t kk = 0; kk < k; ++kk)
      op_a[i * k + kk] = operand(p, a.a, a.a_dtype, a.op_a == Op::N ? i + kk * a.lda : kk + i * a.lda, counters);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t kk = 0; kk < k; ++kk)
      op_b[j * k + kk] = operand(p, a.b, a.b_dtype, a.op_b == Op::N ? kk + j * a.ldb : j + kk * a.ldb, counters);

  std::vector<double> bias_sums(static_cast<std::size_t>(p.bias_grad == ops::GemmBiasGrad::cols_of_b ? n : m), 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      double acc = 0.0;
      for (std::int64_t kk = 0; kk < k; ++kk) acc += op_a[i * k + kk] * op_b[j * k + kk];
      double x = static_cast<double>(a.alpha) * acc;
      if (p.use_c) x += static_cast<double>(a.beta) * load_element(a.c, a.c_dtype, i + j * a.ldc);
      if (p.has_bias) x += load_element(e.bias, e.bias_dtype, i);
      if (p.aux_out) gemm_store_rounded(e.aux, i + j * e.aux_ld, e.aux_dtype, x, p.flush, counters);
      switch (p.activation) {
        case ops::GemmActivation::none: break;
        case ops::GemmActivation::relu: x = x < 0.0 ? 0.0 : x; break;
        case ops::GemmActivation::gelu: x = gelu_reference_math::gelu(e.gelu, x); break;
        case ops::GemmActivation::drelu: x = load_element(e.aux, e.aux_dtype, i + j * e.aux_ld) > 0.0 ? x : 0.0; break;
        case ops::GemmActivation::dgelu:
          x *= gelu_reference_math::gelu_derivative(e.gelu, load_element(e.aux, e.aux_dtype, i + j * e.aux_ld));
          break;
      }
      if (p.bias_grad == ops::GemmBiasGrad::rows_of_d) bias_sums[i] += x;
      gemm_store_rounded(a.d, i + j * a.ldd, a.d_dtype, x, p.flush, counters);
    }
  }
  // BGRADA / BGRADB sum the operands as given, not as the fp16 mode sees them.
  if (p.bias_grad == ops::GemmBiasGrad::rows_of_a) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t kk = 0; kk < k; ++kk)
        bias_sums[i] += load_element(a.a, a.a_dtype, a.op_a == Op::N ? i + kk * a.lda : kk + i * a.lda);
  } else if (p.bias_grad == ops::GemmBiasGrad::cols_of_b) {
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t kk = 0; kk < k; ++kk)
        bias_sums[j] += load_element(a.b, a.b_dtype, a.op_b == Op::N ? kk + j * a.ldb : j + kk * a.ldb);
  }
  if (p.bias_grad != ops::GemmBiasGrad::none)
    gemm_write_bias_grad(p, bias_sums.data(), static_cast<std::int64_t>(bias_sums.size()));
}

}  // namespace ampkit::cpu
