// The GEMM on TensorViews (ops layer, public): the same computation, epilogues, fp16 modes and
// kernels as gemm(const GemmArgs&), with the operands given as the library's one operand type in
// the row-major convention of TensorView, Linear, PyTorch and NumPy. docs/DESIGN.md section 4
// ("The view overload") has the mapping onto the column-major call.
#pragma once

#include <string>

#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/gemm.hpp"

namespace ampkit {

/// d = epilogue(alpha op(a) op(b) + beta c), every matrix a rank-2 row-major view:
///   op(a) [M, K] (a is [M, K] for Op::N, [K, M] for Op::T), op(b) [K, N], c and d [M, N];
///   last dim contiguous (stride 1), rows any stride >= the row length (>= 0), so a view may be
///   a column slice of a wider matrix. dtypes as for gemm: a, b, c, d each f32/bf16/f16.
/// The epilogue keeps its meaning, oriented the row-major way (bias along d's last dim, as in
/// F.linear):
///   bias      [N], d's dtype or f32: added to every row of d (BIAS, RELU_BIAS, GELU_BIAS, ...)
///   aux       [M, N], d's dtype or f32: the pre-activation (*_AUX*) or its input (DGELU, DRELU)
///   bias_grad d's dtype or f32: DGELU_BGRAD / DRELU_BGRAD [N], the sums over d's rows of the
///             activation gradient; BGRADA [M], the sums over k of op(a); BGRADB [N], the sums
///             over k of op(b)
/// Operands an epilogue does not use must be absent; c must be given when beta != 0. All views
/// in the memory of one device (cuda: docs/CUDA.md). Outputs must not overlap any other operand,
/// except c == d exactly (same data, dtype and row stride).
struct GemmViewArgs {
  Op op_a = Op::N, op_b = Op::N;
  float alpha = 1.0f, beta = 0.0f;
  TensorView a, b, c, d;
  Epilogue epilogue = Epilogue::DEFAULT;
  GeluVariant gelu = GeluVariant::tanh;
  TensorView bias, aux, bias_grad;
  bool accumulate_bias_grad = false;  // bias_grad += sums instead of =
  Fp16Mode fp16_mode = Fp16Mode::exact;
};

/// Runs the GEMM. Throws ampkit::Error naming the view (outputs untouched) on any invalid
/// argument, like gemm(const GemmArgs&).
void gemm(const GemmViewArgs& args, GemmReport* report = nullptr);

/// Empty when gemm(args) would run; otherwise the message it would throw. Never throws.
std::string gemm_check(const GemmViewArgs& args) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string gemm_descriptor_check(const GemmViewArgs& args) noexcept;

/// The kernel gemm(args) would use now. Throws like gemm.
const char* gemm_kernel_name(const GemmViewArgs& args);

/// The column-major GemmArgs that gemm(args) runs (d as dᵀ: the operands swap, M and N swap).
/// Throws like gemm.
GemmArgs to_gemm_args(const GemmViewArgs& args);

}  // namespace ampkit
