// Output rounding, bias-gradient writing, operand sums (BGRADA/BGRADB) and the workspace of the
// GEMM engines (kernels layer). Plain C++ (no ISA flags): called by the reference and by every
// engine outside its vector loops.
#include "cpu/gemm/gemm_output.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/ops/gemm.hpp"
#include "core/element.hpp"
#include "core/workspace.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/math/gelu_math.hpp"

namespace ampkit::cpu {
void gemm_store_rounded(void* base, std::int64_t i, DType t, double x, bool flush, ops::GemmCounters& counters) {
  float v = round_to_dtype(t, x);  // exact: representable in t
  if (t == DType::f16 && v != 0.0f && std::fabs(v) < 0x1p-14f) {
    ++counters.fp16_subnormal_outputs;
    if (flush) v = std::copysign(0.0f, v);
  }
  store_element(base, t, i, v);
}

void gemm_write_bias_grad(const ops::GemmProblem& problem, const double* sums, std::int64_t length) {
  const GemmEpilogue& e = problem.args.epilogue;
  for (std::int64_t i = 0; i < length; ++i) {
    double v = sums[i];
    if (e.accumulate_bias_grad) v += load_element(e.bias_grad, e.bias_dtype, i);
    // One rounding from double; never flushed: the reduction runs on the vector units.
    store_double(e.bias_grad, e.bias_dtype, i, v);
  }
}

namespace {

// Element idx of the summed operand widened to fp32 exactly, as given: the fp16 mode of the
// product does not apply to a bias-gradient reduction (docs/DESIGN.md, "Bias gradients").
template <DType T>
float operand_value(const void* base, std::int64_t idx) {
  if constexpr (T == DType::f32) {
    return static_cast<const float*>(base)[idx];
  } else if constexpr (T == DType::bf16) {
    return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[idx]);
  } else {
    return half_bits_to_float(static_cast<const std::uint16_t*>(base)[idx]);
  }
}

// sums[r] = sum over kk of element (r, kk): fp32 within blocks of kBlock k values in k order,
// the block sums added in double. Rows go kRows at a time with their chains interleaved (the same
// order per row, so the same bits; one dependent fp32 chain per row would stall on add latency).
template <DType T>
void operand_sums(const void* base, std::int64_t length, std::int64_t k, std::int64_t r_stride, std::int64_t k_stride,
                  double* sums) {
  constexpr std::int64_t kBlock = gemm_operand_sum_block, kRows = 8;
  const std::int64_t groups = (length + kRows - 1) / kRows;
  const auto sum_group = [&](std::int64_t g) {
    const std::int64_t r0 = g * kRows, rows = length - r0 < kRows ? length - r0 : kRows;
    double total[kRows] = {};
    for (std::int64_t k0 = 0; k0 < k; k0 += kBlock) {
      const std::int64_t k1 = k0 + kBlock < k ? k0 + kBlock : k;
      float block[kRows] = {};
      for (std::int64_t kk = k0; kk < k1; ++kk)
        for (std::int64_t j = 0; j < rows; ++j) block[j] += operand_value<T>(base, (r0 + j) * r_stride + kk * k_stride);
      for (std::int64_t j = 0; j < rows; ++j) total[j] += block[j];
    }
    for (std::int64_t j = 0; j < rows; ++j) sums[r0 + j] = total[j];
  };
  const int threads = ampkit::num_threads();
  if (threads > 1 && length * k > 65536) {  // no parallel region for one thread
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t g = 0; g < groups; ++g) sum_group(g);
  } else {
    for (std::int64_t g = 0; g < groups; ++g) sum_group(g);
  }
}

}  // namespace

void gemm_operand_sums(const ops::GemmProblem& problem, double* sums) {
  const GemmArgs& a = problem.args;
  const bool rows_of_a = problem.bias_grad == ops::GemmBiasGrad::rows_of_a;
  const std::int64_t length = rows_of_a ? a.m : a.n, k = a.k;
  const void* base = rows_of_a ? a.a : a.b;
  const DType t = rows_of_a ? a.a_dtype : a.b_dtype;
  const std::int64_t ld = rows_of_a ? a.lda : a.ldb;
  // Element (r, kk) of op(A) (r < m) or of op(B)^T (r < n), as (r * r_stride + kk * k_stride).
  const bool stored_by_k = rows_of_a ? a.op_a == Op::T : a.op_b == Op::N;
  const std::int64_t r_stride = stored_by_k ? ld : 1, k_stride = stored_by_k ? 1 : ld;
  visit_dtype(t, [&]<DType T>() { operand_sums<T>(base, length, k, r_stride, k_stride, sums); });
}

void gemm_write_bias_grad_only(const ops::GemmProblem& problem) {
  if (problem.bias_grad == ops::GemmBiasGrad::none) return;
  const std::int64_t length = problem.bias_grad == ops::GemmBiasGrad::cols_of_b ? problem.args.n : problem.args.m;
  auto* sums = static_cast<double*>(gemm_workspace(static_cast<std::size_t>(length) * sizeof(double)));
  if (problem.bias_grad == ops::GemmBiasGrad::rows_of_d) {
    for (std::int64_t i = 0; i < length; ++i) sums[i] = 0.0;  // D is empty: sums over no column
  } else {
    gemm_operand_sums(problem, sums);
  }
  gemm_write_bias_grad(problem, sums, length);
}

void* gemm_workspace(std::size_t bytes) {
  void* p = workspace(WorkspaceSlot::gemm, bytes);
  if (p == nullptr && bytes > 0)
    fail_with(ErrorKind::out_of_memory, "gemm", "could not allocate ", bytes,
              " bytes of workspace (packed operands and epilogue scratch)");
  return p;
}

}  // namespace ampkit::cpu

namespace ampkit {

void release_gemm_workspace() noexcept { release_workspace(WorkspaceSlot::gemm); }

std::size_t gemm_workspace_bytes() noexcept { return workspace_bytes(WorkspaceSlot::gemm); }

}  // namespace ampkit
